#include "kubelet/kuberuntime/labels.h"

#include <exception>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/codec.h"
#include "api/pod_codec.h"
#include "common/log.h"
#include "kubelet/kuberuntime/helpers.h"
#include "nlohmann/json.hpp"

namespace kubelet::kuberuntime {
namespace {

using OrderedJson = nlohmann::ordered_json;

std::string Get(const StringMap& m, const char* key) {
  auto it = m.find(key);
  return it == m.end() ? "" : it->second;
}

// The JSON of one member of a container (as the codec encodes it), or "" when absent.
std::string ContainerMemberJson(const api::Container& c, const char* member, const char* sub) {
  absl::StatusOr<api::Json> j = api::ParseJson(api::EncodeContainerJson(c));
  if (!j.ok()) {
    KLOG_V(4, "Unable to encode container member", "member", member, "err",
           std::string(j.status().message()));
    return "";
  }
  auto it = j->find(member);
  if (it == j->end()) return "";
  const api::Json* v = &*it;
  if (sub != nullptr) {
    if (!v->is_object()) return "";
    auto sub_it = v->find(sub);
    if (sub_it == v->end()) return "";
    v = &*sub_it;
  }
  // Go's json.Marshal text (HTML-safe escaping, Go's number forms), as upstream writes it.
  return api::SerializeJson(*v);
}

// Decodes `member_json` as the given member of a container through the pod codec, so the
// annotation is read with exactly the API's typing rules.
absl::StatusOr<api::Container> DecodeContainerMember(const std::string& member_json,
                                                     const std::string& wrapper_prefix,
                                                     const std::string& wrapper_suffix) {
  // The annotation comes back from the runtime and may be anything: a value nested deeper than
  // any container member is dropped while parsing, since serializing it would recurse once per
  // level (a stack overflow for "[[[[...").
  constexpr int kMaxMemberDepth = 32;
  bool too_deep = false;
  std::string canonical;
  try {
    OrderedJson j = OrderedJson::parse(
        member_json, [&too_deep](int depth, OrderedJson::parse_event_t, OrderedJson&) {
          if (depth > kMaxMemberDepth) too_deep = true;
          return !too_deep;
        });
    if (too_deep) return absl::InvalidArgumentError("annotation nested too deeply");
    canonical = j.dump();
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(e.what());
  }
  const std::string doc = absl::StrCat(
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"x"},"spec":{)",
      R"("containers":[{"name":"x",)", wrapper_prefix, canonical, wrapper_suffix, "}]}}");
  absl::StatusOr<api::Pod> pod = api::DecodePod(doc);
  if (!pod.ok()) return pod.status();
  if (pod->spec.containers.size() != 1) return absl::InvalidArgumentError("no container");
  return pod->spec.containers[0];
}

std::optional<int64_t> ParseInt64(const StringMap& m, const char* key) {
  auto it = m.find(key);
  if (it == m.end()) return std::nullopt;
  int64_t v = 0;
  if (!absl::SimpleAtoi(it->second, &v)) {
    KLOG_V(4, "Unable to parse annotation value", "key", key, "value", it->second);
    return std::nullopt;
  }
  return v;
}

}  // namespace

StringMap NewPodLabels(const api::Pod& pod) {
  StringMap labels = pod.metadata.labels;
  labels[kPodNameLabel] = pod.metadata.name;
  labels[kPodNamespaceLabel] = pod.metadata.namespace_;
  labels[kPodUIDLabel] = pod.metadata.uid;
  return labels;
}

StringMap NewPodAnnotations(const api::Pod& pod) { return pod.metadata.annotations; }

StringMap NewContainerLabels(const api::Container& container, const api::Pod& pod) {
  return StringMap{{kPodNameLabel, pod.metadata.name},
                   {kPodNamespaceLabel, pod.metadata.namespace_},
                   {kPodUIDLabel, pod.metadata.uid},
                   {kContainerNameLabel, container.name}};
}

StringMap NewContainerAnnotations(const api::Container& container, const api::Pod& pod,
                                  int restart_count, const StringMap& extra,
                                  bool in_place_pod_vertical_scaling) {
  StringMap a = extra;
  a[kContainerHashLabel] = HashToString(HashContainerSpec(container));
  if (in_place_pod_vertical_scaling) {
    a[kContainerHashWithoutResourcesLabel] =
        HashToString(HashContainerSpecWithoutResources(container));
  }
  a[kContainerRestartCountLabel] = std::to_string(restart_count);
  a[kContainerTerminationMessagePathLabel] = container.termination_message_path;
  a[kContainerTerminationMessagePolicyLabel] = container.termination_message_policy;
  if (pod.metadata.deletion_grace_period_seconds.has_value()) {
    a[kPodDeletionGracePeriodLabel] = std::to_string(*pod.metadata.deletion_grace_period_seconds);
  }
  if (pod.spec.termination_grace_period_seconds.has_value()) {
    a[kPodTerminationGracePeriodLabel] = std::to_string(*pod.spec.termination_grace_period_seconds);
  }
  if (container.lifecycle.has_value() && container.lifecycle->pre_stop.has_value()) {
    std::string json = EncodeLifecycleHandlerJson(*container.lifecycle->pre_stop);
    if (!json.empty()) a[kContainerPreStopHandlerLabel] = std::move(json);
  }
  if (!container.ports.empty()) {
    std::string json = EncodeContainerPortsJson(container.ports);
    if (!json.empty()) a[kContainerPortsLabel] = std::move(json);
  }
  return a;
}

std::string EncodeLifecycleHandlerJson(const api::LifecycleHandler& handler) {
  api::Container c;
  c.lifecycle = api::Lifecycle{};
  c.lifecycle->pre_stop = handler;
  return ContainerMemberJson(c, "lifecycle", "preStop");
}

std::string EncodeContainerPortsJson(const std::vector<api::ContainerPort>& ports) {
  api::Container c;
  c.ports = ports;
  return ContainerMemberJson(c, "ports", nullptr);
}

LabeledPodSandboxInfo GetPodSandboxInfoFromLabels(const StringMap& labels) {
  LabeledPodSandboxInfo info;
  info.pod_name = Get(labels, kPodNameLabel);
  info.pod_namespace = Get(labels, kPodNamespaceLabel);
  info.pod_uid = Get(labels, kPodUIDLabel);
  for (const auto& [k, v] : labels) {
    if (k != kPodNameLabel && k != kPodNamespaceLabel && k != kPodUIDLabel) info.labels[k] = v;
  }
  return info;
}

LabeledContainerInfo GetContainerInfoFromLabels(const StringMap& labels) {
  return LabeledContainerInfo{Get(labels, kContainerNameLabel), Get(labels, kPodNameLabel),
                              Get(labels, kPodNamespaceLabel), Get(labels, kPodUIDLabel)};
}

AnnotatedContainerInfo GetContainerInfoFromAnnotations(const StringMap& annotations) {
  AnnotatedContainerInfo info;
  if (auto it = annotations.find(kContainerHashLabel); it != annotations.end()) {
    uint64_t hash = 0;
    if (absl::SimpleHexAtoi(it->second, &hash)) {
      info.hash = hash;
    } else {
      KLOG_V(4, "Unable to parse container hash annotation", "value", it->second);
    }
  }
  if (auto it = annotations.find(kContainerHashWithoutResourcesLabel); it != annotations.end()) {
    uint64_t hash = 0;
    if (absl::SimpleHexAtoi(it->second, &hash)) {
      info.hash_without_resources = hash;
    } else {
      KLOG_V(4, "Unable to parse container hash annotation", "value", it->second);
    }
  }
  if (std::optional<int64_t> rc = ParseInt64(annotations, kContainerRestartCountLabel);
      rc.has_value() && *rc >= 0 && *rc <= INT32_MAX) {
    info.restart_count = static_cast<int>(*rc);
  }
  info.pod_deletion_grace_period = ParseInt64(annotations, kPodDeletionGracePeriodLabel);
  info.pod_termination_grace_period = ParseInt64(annotations, kPodTerminationGracePeriodLabel);
  info.termination_message_path = Get(annotations, kContainerTerminationMessagePathLabel);
  info.termination_message_policy = Get(annotations, kContainerTerminationMessagePolicyLabel);
  if (auto it = annotations.find(kContainerPreStopHandlerLabel); it != annotations.end()) {
    absl::StatusOr<api::Container> c =
        DecodeContainerMember(it->second, R"("lifecycle":{"preStop":)", "}");
    if (c.ok() && c->lifecycle.has_value() && c->lifecycle->pre_stop.has_value()) {
      info.pre_stop_handler = c->lifecycle->pre_stop;
    } else {
      KLOG_V(4, "Unable to parse preStop handler annotation", "value", it->second);
    }
  }
  if (auto it = annotations.find(kContainerPortsLabel); it != annotations.end()) {
    absl::StatusOr<api::Container> c = DecodeContainerMember(it->second, R"("ports":)", "");
    if (c.ok()) {
      info.container_ports = c->ports;
    } else {
      KLOG_V(4, "Unable to parse container ports annotation", "value", it->second);
    }
  }
  return info;
}

}  // namespace kubelet::kuberuntime
