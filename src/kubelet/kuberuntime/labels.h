// Labels and annotations the kubelet puts on CRI sandboxes and containers, and their parsers
// (upstream pkg/kubelet/kuberuntime/labels.go, v1.28).
//
// They are the kubelet's only durable memory: after a restart, pod status, restart counts, spec
// hashes, grace periods and preStop handlers of orphaned containers are rebuilt from them. The
// names and encodings are upstream's, so sandboxes and containers created by an upstream kubelet
// are understood and vice versa.
//
//   sandbox labels:        the pod's labels + io.kubernetes.pod.{name,namespace,uid}
//   sandbox annotations:   the pod's annotations
//   container labels:      io.kubernetes.pod.{name,namespace,uid}, io.kubernetes.container.name
//   container annotations: io.kubernetes.container.{hash (hex), hashWithoutResources (hex, with
//                          InPlacePodVerticalScaling), restartCount,
//                          terminationMessagePath, terminationMessagePolicy, preStopHandler (JSON),
//                          ports (JSON)}, io.kubernetes.pod.{terminationGracePeriod,
//                          deletionGracePeriod} (when set) + extra annotations (device plugins)
//
// Parsers never fail: missing or malformed values yield zero values (and a log line at V(4)).
// Pure functions; thread-safe.
#ifndef KUBELET_KUBELET_KUBERUNTIME_LABELS_H_
#define KUBELET_KUBELET_KUBERUNTIME_LABELS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/pod.h"

namespace kubelet::kuberuntime {

inline constexpr char kPodNameLabel[] = "io.kubernetes.pod.name";
inline constexpr char kPodNamespaceLabel[] = "io.kubernetes.pod.namespace";
inline constexpr char kPodUIDLabel[] = "io.kubernetes.pod.uid";
inline constexpr char kContainerNameLabel[] = "io.kubernetes.container.name";

inline constexpr char kPodDeletionGracePeriodLabel[] = "io.kubernetes.pod.deletionGracePeriod";
inline constexpr char kPodTerminationGracePeriodLabel[] =
    "io.kubernetes.pod.terminationGracePeriod";
inline constexpr char kContainerHashLabel[] = "io.kubernetes.container.hash";
inline constexpr char kContainerHashWithoutResourcesLabel[] =
    "io.kubernetes.container.hashWithoutResources";
inline constexpr char kContainerRestartCountLabel[] = "io.kubernetes.container.restartCount";
inline constexpr char kContainerTerminationMessagePathLabel[] =
    "io.kubernetes.container.terminationMessagePath";
inline constexpr char kContainerTerminationMessagePolicyLabel[] =
    "io.kubernetes.container.terminationMessagePolicy";
inline constexpr char kContainerPreStopHandlerLabel[] = "io.kubernetes.container.preStopHandler";
inline constexpr char kContainerPortsLabel[] = "io.kubernetes.container.ports";

using StringMap = std::map<std::string, std::string>;

StringMap NewPodLabels(const api::Pod& pod);
StringMap NewPodAnnotations(const api::Pod& pod);
StringMap NewContainerLabels(const api::Container& container, const api::Pod& pod);
// `extra` (device plugin annotations) go in first and are overridden by the kubelet's own.
// `in_place_pod_vertical_scaling` adds the hash without resources.
StringMap NewContainerAnnotations(const api::Container& container, const api::Pod& pod,
                                  int restart_count, const StringMap& extra = {},
                                  bool in_place_pod_vertical_scaling = false);

struct LabeledPodSandboxInfo {
  StringMap labels;  // the pod's own labels (the three io.kubernetes.pod.* removed)
  std::string pod_name;
  std::string pod_namespace;
  std::string pod_uid;
};

struct LabeledContainerInfo {
  std::string container_name;
  std::string pod_name;
  std::string pod_namespace;
  std::string pod_uid;
};

struct AnnotatedContainerInfo {
  uint64_t hash = 0;
  uint64_t hash_without_resources = 0;
  int restart_count = 0;
  std::optional<int64_t> pod_deletion_grace_period;
  std::optional<int64_t> pod_termination_grace_period;
  std::string termination_message_path;
  std::string termination_message_policy;
  std::optional<api::LifecycleHandler> pre_stop_handler;
  std::vector<api::ContainerPort> container_ports;
};

LabeledPodSandboxInfo GetPodSandboxInfoFromLabels(const StringMap& labels);
LabeledContainerInfo GetContainerInfoFromLabels(const StringMap& labels);
AnnotatedContainerInfo GetContainerInfoFromAnnotations(const StringMap& annotations);

// Adapters for protobuf maps (or any map with begin()/end() over string pairs).
template <typename M>
StringMap ToStringMap(const M& m) {
  return StringMap(m.begin(), m.end());
}

// JSON encodings used in the annotations (Go's json.Marshal of the v1 types).
std::string EncodeLifecycleHandlerJson(const api::LifecycleHandler& handler);
std::string EncodeContainerPortsJson(const std::vector<api::ContainerPort>& ports);

}  // namespace kubelet::kuberuntime

#endif  // KUBELET_KUBELET_KUBERUNTIME_LABELS_H_
