// The Node object and its status (upstream initialNode, nodestatus setters, updateDefaultLabels,
// reconcileCMADAnnotationWithExistingNode, nodeStatusHasChanged).
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/pod.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/events/event_recorder.h"
#include "kubelet/nodestatus/node_status.h"

namespace kubelet::nodestatus {
namespace {

// Upstream maxNamesPerImageInNodeStatus.
constexpr size_t kMaxNamesPerImage = 5;

constexpr char kTaintNodeUnschedulable[] = "node.kubernetes.io/unschedulable";

api::Time ToTime(absl::Time t) { return api::Time::FromUnix(absl::ToUnixSeconds(t)); }

// A condition of `type` in `conditions`, or null.
api::NodeCondition* FindCondition(std::vector<api::NodeCondition>* conditions,
                                  const std::string& type) {
  for (api::NodeCondition& c : *conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

enum class Transition { kNone, kNew, kFlipped };

// Sets condition `type` to status/reason/message: heartbeat now, transition now when the status
// flips (or the condition is new), else kept.
Transition SetCondition(std::vector<api::NodeCondition>* conditions, const std::string& type,
                        const std::string& status, const std::string& reason,
                        const std::string& message, const api::Time& now) {
  Transition t = Transition::kNone;
  api::NodeCondition* c = FindCondition(conditions, type);
  if (c == nullptr) {
    conditions->push_back(api::NodeCondition{.type = type});
    c = &conditions->back();
    c->last_transition_time = now;
    t = Transition::kNew;
  } else if (c->status != status) {
    c->last_transition_time = now;
    t = Transition::kFlipped;
  }
  c->status = status;
  c->reason = reason;
  c->message = message;
  c->last_heartbeat_time = now;
  return t;
}

// recordNodeStatusEvent: "Node <name> status is now: <event>" about the Node.
void RecordNodeStatusEvent(const NodeStatusOptions& o, const std::string& event) {
  if (o.recorder == nullptr) return;
  o.recorder->Record(events::NodeRef(o.node_name), events::kNormal, event,
                     absl::StrCat("Node ", o.node_name, " status is now: ", event));
}

// errors.NewAggregate(errs).Error(): one message as is, several as "[a, b]" (duplicates once).
std::string AggregateMessage(const std::vector<std::string>& errs) {
  std::vector<std::string> unique;
  for (const std::string& e : errs) {
    if (std::find(unique.begin(), unique.end(), e) == unique.end()) unique.push_back(e);
  }
  if (unique.size() == 1) return unique[0];
  return absl::StrCat("[", absl::StrJoin(unique, ", "), "]");
}

}  // namespace

api::Node InitialNode(const NodeStatusOptions& o) {
  api::Node node;
  node.metadata.name = o.node_name;
  const std::string& hostname = o.hostname.empty() ? o.node_name : o.hostname;
  node.metadata.labels[kLabelHostname] = hostname;
  node.metadata.labels[kLabelOS] = o.operating_system;
  node.metadata.labels[kLabelArch] = o.architecture;
  node.metadata.labels[kLabelBetaOS] = o.operating_system;
  node.metadata.labels[kLabelBetaArch] = o.architecture;
  for (const auto& [k, v] : o.node_labels) node.metadata.labels[k] = v;
  if (o.enable_controller_attach_detach) node.metadata.annotations[kAnnotationCMAD] = "true";
  node.spec.unschedulable = !o.register_schedulable;
  node.spec.taints = o.register_with_taints;
  // As upstream (#63897): an unschedulable node is tainted from its creation on, so nothing
  // lands on it in the window before the taint controller would add the taint.
  if (node.spec.unschedulable) {
    bool present = false;
    for (const api::Taint& t : node.spec.taints) {
      present |= t.key == kTaintNodeUnschedulable && t.effect == api::kTaintNoSchedule;
    }
    if (!present) {
      node.spec.taints.push_back(
          api::Taint{.key = kTaintNodeUnschedulable, .effect = api::kTaintNoSchedule});
    }
  }
  node.spec.provider_id = o.provider_id;
  return node;
}

void SetNodeStatus(const NodeStatusOptions& o, const MachineFacts& machine,
                   const std::string& runtime_version, const std::vector<ImageInfo>& images,
                   const std::vector<std::string>& readiness_errors,
                   const std::vector<std::string>& volumes_in_use, absl::Time now_time,
                   api::Node* node) {
  api::NodeStatus& st = node->status;
  st.volumes_in_use = volumes_in_use;
  const api::Time now = ToTime(now_time);

  // NodeAddress.
  st.addresses.clear();
  if (!o.node_ip.empty()) st.addresses.push_back({api::kNodeInternalIP, o.node_ip});
  st.addresses.push_back({api::kNodeHostName, o.hostname.empty() ? o.node_name : o.hostname});

  // MachineInfo: capacity and allocatable (other entries, e.g. extended resources a device
  // plugin reported, are kept).
  for (const auto& [k, v] : machine.capacity) st.capacity[k] = v;
  for (const auto& [k, v] : machine.allocatable) st.allocatable[k] = v;
  st.node_info.machine_id = machine.machine_id;
  st.node_info.system_uuid = machine.system_uuid;
  st.node_info.boot_id = machine.boot_id;
  st.node_info.kernel_version = machine.kernel_version;
  st.node_info.os_image = machine.os_image;
  st.node_info.operating_system = o.operating_system;
  st.node_info.architecture = o.architecture;

  // VersionInfo.
  if (!runtime_version.empty()) st.node_info.container_runtime_version = runtime_version;
  st.node_info.kubelet_version = o.kubelet_version;
  st.node_info.kube_proxy_version = o.kubelet_version;

  // DaemonEndpoints.
  st.daemon_endpoints.kubelet_endpoint.port = o.kubelet_port;

  // Images: largest first, at most max_images (-1: all), at most 5 names each.
  std::vector<ImageInfo> sorted = images;
  std::stable_sort(sorted.begin(), sorted.end(), [](const ImageInfo& a, const ImageInfo& b) {
    return a.size_bytes > b.size_bytes;
  });
  if (o.max_images >= 0 && sorted.size() > static_cast<size_t>(o.max_images)) {
    sorted.resize(static_cast<size_t>(o.max_images));
  }
  st.images.clear();
  for (const ImageInfo& image : sorted) {
    api::ContainerImage ci;
    ci.names = image.repo_digests;
    ci.names.insert(ci.names.end(), image.repo_tags.begin(), image.repo_tags.end());
    if (ci.names.size() > kMaxNamesPerImage) ci.names.resize(kMaxNamesPerImage);
    if (ci.names.empty()) continue;
    ci.size_bytes = image.size_bytes;
    st.images.push_back(std::move(ci));
  }

  // Pressure conditions, as the eviction manager reports them (upstream MemoryPressureCondition
  // and its siblings). A new condition (Unknown before) or a flip records an event.
  const NodeStatusOptions::Pressure pressure =
      o.pressure ? o.pressure() : NodeStatusOptions::Pressure{};
  struct PressureCondition {
    const char* type;
    bool on;
    const char* on_reason;
    const char* on_message;
    const char* on_event;
    const char* off_reason;
    const char* off_message;
    const char* off_event;
  };
  const PressureCondition conditions[] = {
      {api::kNodeMemoryPressure, pressure.memory, "KubeletHasInsufficientMemory",
       "kubelet has insufficient memory available", "NodeHasInsufficientMemory",
       "KubeletHasSufficientMemory", "kubelet has sufficient memory available",
       "NodeHasSufficientMemory"},
      {api::kNodeDiskPressure, pressure.disk, "KubeletHasDiskPressure", "kubelet has disk pressure",
       "NodeHasDiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure",
       "NodeHasNoDiskPressure"},
      {api::kNodePIDPressure, pressure.pid, "KubeletHasInsufficientPID",
       "kubelet has insufficient PID available", "NodeHasInsufficientPID",
       "KubeletHasSufficientPID", "kubelet has sufficient PID available", "NodeHasSufficientPID"},
  };
  for (const PressureCondition& c : conditions) {
    if (SetCondition(&st.conditions, c.type, c.on ? api::kConditionTrue : api::kConditionFalse,
                     c.on ? c.on_reason : c.off_reason, c.on ? c.on_message : c.off_message,
                     now) != Transition::kNone) {
      RecordNodeStatusEvent(o, c.on ? c.on_event : c.off_event);
    }
  }

  // Ready.
  std::vector<std::string> errs = readiness_errors;
  std::vector<std::string> missing;
  for (const char* r : {api::kResourceCPU, api::kResourceMemory, "pods"}) {
    if (st.capacity.find(r) == st.capacity.end()) missing.push_back(r);
  }
  if (!missing.empty()) {
    errs.push_back(
        absl::StrCat("missing node capacity for resources: ", absl::StrJoin(missing, ", ")));
  }
  // A flip of an existing Ready condition records NodeReady / NodeNotReady, as upstream's.
  // Upstream registers before its first runtime check, so a node it starts always goes from
  // not ready to ready and shows NodeReady; ours may register ready, and records NodeReady
  // then too.
  if (errs.empty()) {
    if (SetCondition(&st.conditions, api::kNodeReady, api::kConditionTrue, "KubeletReady",
                     "kubelet is posting ready status", now) != Transition::kNone) {
      RecordNodeStatusEvent(o, events::kNodeReady);
    }
  } else {
    if (SetCondition(&st.conditions, api::kNodeReady, api::kConditionFalse, "KubeletNotReady",
                     AggregateMessage(errs), now) == Transition::kFlipped) {
      RecordNodeStatusEvent(o, events::kNodeNotReady);
      KLOG_INFO("Node became not ready", "node", o.node_name, "message", AggregateMessage(errs));
    }
  }
}

bool NodeStatusChanged(const api::NodeStatus& before, const api::NodeStatus& after) {
  api::NodeStatus a = before;
  api::NodeStatus b = after;
  for (api::NodeCondition& c : a.conditions) c.last_heartbeat_time = api::Time{};
  for (api::NodeCondition& c : b.conditions) c.last_heartbeat_time = api::Time{};
  return api::Encode(a) != api::Encode(b);
}

bool ReconcileExistingNode(const api::Node& initial, api::Node* existing) {
  bool changed = false;
  // updateDefaultLabels: the labels the kubelet owns follow what it would register.
  for (const char* label : {kLabelHostname, kLabelOS, kLabelArch, kLabelBetaOS, kLabelBetaArch}) {
    auto want = initial.metadata.labels.find(label);
    if (want == initial.metadata.labels.end()) continue;
    auto have = existing->metadata.labels.find(label);
    if (have == existing->metadata.labels.end() || have->second != want->second) {
      existing->metadata.labels[label] = want->second;
      changed = true;
    }
    if (existing->metadata.labels[label].empty()) existing->metadata.labels.erase(label);
  }
  // reconcileCMADAnnotationWithExistingNode.
  auto want = initial.metadata.annotations.find(kAnnotationCMAD);
  auto have = existing->metadata.annotations.find(kAnnotationCMAD);
  if (want != initial.metadata.annotations.end()) {
    if (have == existing->metadata.annotations.end() || have->second != want->second) {
      existing->metadata.annotations[kAnnotationCMAD] = want->second;
      changed = true;
    }
  } else if (have != existing->metadata.annotations.end()) {
    existing->metadata.annotations.erase(have);
    changed = true;
  }
  return changed;
}

}  // namespace kubelet::nodestatus

namespace kubelet::nodestatus {
namespace {

bool AllDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Dot-separated identifiers of [0-9A-Za-z-]+.
bool ValidIdentifiers(absl::string_view s) {
  if (s.empty()) return false;
  for (absl::string_view part : absl::StrSplit(s, '.')) {
    if (part.empty()) return false;
    for (char c : part) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
    }
  }
  return true;
}

// util/version's parse(): leading blanks and "v", numeric components, then the rest; semantic
// versions have three components and an optional "-pre" and "+build".
std::optional<std::string> ParseVersion(absl::string_view str, bool semver) {
  size_t i = 0;
  while (i < str.size() && std::isspace(static_cast<unsigned char>(str[i]))) ++i;
  if (i < str.size() && str[i] == 'v') ++i;
  std::vector<absl::string_view> components;
  for (;;) {
    size_t start = i;
    while (i < str.size() && std::isdigit(static_cast<unsigned char>(str[i]))) ++i;
    if (i == start) {
      if (components.empty()) return std::nullopt;
      i = start - 1;  // the dot belongs to the rest
      break;
    }
    components.push_back(str.substr(start, i - start));
    if (i < str.size() && str[i] == '.') {
      ++i;
      continue;
    }
    break;
  }
  absl::string_view extra = str.substr(i);
  if (semver ? components.size() != 3 : components.size() < 2) return std::nullopt;
  std::vector<std::string> out;
  for (size_t k = 0; k < components.size(); ++k) {
    absl::string_view c = components[k];
    if ((k == 0 || semver) && c.size() > 1 && c[0] == '0') return std::nullopt;
    uint64_t n = 0;
    if (!absl::SimpleAtoi(c, &n)) return std::nullopt;
    out.push_back(absl::StrCat(n));
  }
  std::string result = absl::StrJoin(out, ".");
  if (!semver) return result;
  while (!extra.empty() && std::isspace(static_cast<unsigned char>(extra.back()))) {
    extra.remove_suffix(1);
  }
  absl::string_view pre, build;
  if (size_t plus = extra.find('+'); plus != absl::string_view::npos) {
    build = extra.substr(plus + 1);
    if (!ValidIdentifiers(build)) return std::nullopt;
    extra = extra.substr(0, plus);
  }
  if (!extra.empty()) {
    if (extra[0] != '-') return std::nullopt;
    pre = extra.substr(1);
    if (!ValidIdentifiers(pre)) return std::nullopt;
    for (absl::string_view part : absl::StrSplit(pre, '.')) {
      if (AllDigits(part) && part.size() > 1 && part[0] == '0') return std::nullopt;
    }
  }
  if (!pre.empty()) absl::StrAppend(&result, "-", pre);
  if (!build.empty()) absl::StrAppend(&result, "+", build);
  return result;
}

}  // namespace

std::string RuntimeVersionString(std::string_view name, std::string_view version) {
  std::optional<std::string> v = ParseVersion(AV(version), true);
  if (!v) v = ParseVersion(AV(version), false);
  return absl::StrCat(AV(name), "://", v.value_or("Unknown"));
}

}  // namespace kubelet::nodestatus
