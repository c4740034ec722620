#include "kubelet/events/event_recorder.h"

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::events {
namespace {

class LoggingRecorder : public EventRecorder {
 public:
  explicit LoggingRecorder(int verbosity) : verbosity_(verbosity) {}
  void Record(const ObjectReference& o, std::string_view type, std::string_view reason,
              std::string_view message) override {
    LogEvent(verbosity_, o, type, reason, message);
  }

 private:
  const int verbosity_;
};

class Discarding : public EventRecorder {
 public:
  void Record(const ObjectReference&, std::string_view, std::string_view,
              std::string_view) override {}
};

}  // namespace

void LogEvent(int verbosity, const ObjectReference& o, std::string_view type,
              std::string_view reason, std::string_view message) {
  // klog.KRef: "namespace/name", or just the name for cluster-scoped objects.
  KLOG_V(verbosity, "Event occurred", "object",
         o.namespace_.empty() ? o.name : absl::StrCat(o.namespace_, "/", o.name), "fieldPath",
         o.field_path, "kind", o.kind, "apiVersion", o.api_version, "type", std::string(type),
         "reason", std::string(reason), "message", std::string(message));
}

ObjectReference PodRef(const api::Pod& pod) {
  ObjectReference r;
  r.namespace_ = pod.metadata.namespace_;
  r.name = pod.metadata.name;
  r.uid = pod.metadata.uid;
  r.resource_version = pod.metadata.resource_version;
  return r;
}

ObjectReference NodeRef(std::string_view node_name) {
  ObjectReference r;
  r.kind = "Node";
  r.api_version = "";
  r.name = std::string(node_name);
  r.uid = std::string(node_name);
  return r;
}

ObjectReference ContainerRef(const api::Pod& pod, std::string_view container) {
  ObjectReference r = PodRef(pod);
  for (const auto& c : pod.spec.containers) {
    if (c.name == container) {
      r.field_path = absl::StrCat("spec.containers{", AV(container), "}");
      return r;
    }
  }
  for (const auto& c : pod.spec.init_containers) {
    if (c.name == container) {
      r.field_path = absl::StrCat("spec.initContainers{", AV(container), "}");
      return r;
    }
  }
  for (const auto& c : pod.spec.ephemeral_containers) {
    if (c.common.name == container) {
      r.field_path = absl::StrCat("spec.ephemeralContainers{", AV(container), "}");
      return r;
    }
  }
  return r;
}

std::unique_ptr<EventRecorder> NewLoggingRecorder(int verbosity) {
  return std::make_unique<LoggingRecorder>(verbosity);
}

EventRecorder& DiscardingRecorder() {
  static Discarding* const discarding = new Discarding();
  return *discarding;
}

}  // namespace kubelet::events
