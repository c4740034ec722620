// Pod admission before start (upstream lifecycle.PredicateAdmitHandler with the scheduler's
// generic predicates, v1.28), checked in upstream's order against the node as the kubelet knows
// it (its Node object in API-server mode, else the Node it would register):
//   1. the pod's kubernetes.io/os label against the node's (PodOSSelectorNodeLabelDoesNotMatch)
//      and spec.os against linux (PodOSNotSupported);
//   2. room: pod count against maxPods, CPU / memory / ephemeral-storage requests against
//      allocatable, given the pods already admitted (OutOfpods, OutOfcpu, OutOfmemory,
//      OutOfephemeral-storage);
//   3. node selector and required node affinity (NodeAffinity), spec.nodeName (NodeName), host
//      ports (NodePorts);
//   4. NoExecute taints the pod does not tolerate (TaintToleration; not for static pods).
// The first failure found is the result. A rejected pod is marked Failed with the reason and
// message upstream uses. Before them (upstream's handler order) the pod's sysctls are checked
// against the SysctlAllowlist. Pure functions and immutable objects; thread-safe.
#ifndef KUBELET_KUBELET_ADMISSION_H_
#define KUBELET_KUBELET_ADMISSION_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/node.h"
#include "api/pod.h"
#include "api/sysctl.h"

namespace kubelet {

struct NodeAllocatable {
  int64_t milli_cpu = 0;
  int64_t memory_bytes = 0;
  int64_t pods = 110;
  int64_t ephemeral_storage_bytes = 0;  // 0: unknown, not checked
};

struct AdmitResult {
  bool admit = true;
  std::string reason;
  std::string message;
};

// Effective requests of a pod as the scheduler computes them: the larger of the sum over app
// containers (plus restartable init containers) and the largest init container, plus overhead.
struct PodRequests {
  int64_t milli_cpu = 0;
  int64_t memory_bytes = 0;
};
PodRequests ComputePodRequests(const api::Pod& pod, bool in_place_pod_vertical_scaling = false);

// The predicates above. A predicate failure has reason <Name> and message "Predicate <Name>
// failed"; a resource shortage reason OutOf<resource> and message "Node didn't have enough
// resource: <res>, requested: n, used: n, capacity: n". A critical pod
// (api::IsCriticalPod) short of resources is not rejected for that: the preemption attempt upstream
// makes follows, and when no set of non-critical pods can free enough the pod fails with
// UnexpectedAdmissionError and "Unexpected error while attempting to recover from admission
// failure: preemption: ...".
// `in_place_pod_vertical_scaling`: the admitted pods' requests count as the scheduler's node
// info counts them with that gate (api::PodResourcesOptions: the larger of spec and
// status.allocatedResources, or the allocation alone while a resize is Infeasible).
AdmitResult AdmitPod(const api::Pod& pod, const std::vector<api::PodPtr>& admitted,
                     const NodeAllocatable& allocatable, const api::Node& node,
                     bool in_place_pod_vertical_scaling = false);

// Whether the node's labels (and metadata.name for matchFields) satisfy the pod's nodeSelector
// and requiredDuringSchedulingIgnoredDuringExecution node affinity (component-helpers'
// GetRequiredNodeAffinity(pod).Match(node)). An unparsable affinity matches nothing.
bool MatchesRequiredNodeAffinity(const api::Pod& pod, const api::Node& node);

// Whether `tolerations` tolerate `taint` (core/v1 Toleration.ToleratesTaint).
bool ToleratesTaint(const api::Toleration& toleration, const api::Taint& taint);

// The sysctls a pod may set (upstream sysctl.patternAllowlist, a pod admit handler): the safe
// set, which is namespaced and isolated from other pods (kernel.shm_rmid_forced,
// net.ipv4.ip_local_port_range, net.ipv4.tcp_syncookies, net.ipv4.ping_group_range,
// net.ipv4.ip_unprivileged_port_start, net.ipv4.ip_local_reserved_ports from kernel 3.16,
// net.ipv4.tcp_keepalive_time from kernel 4.5), plus the names and patterns (ending in '*') of
// allowedUnsafeSysctls. A pod with any other sysctl is rejected with reason SysctlForbidden and
// message `forbidden sysctl: "<name>" not allowlisted`; a net sysctl with hostNetwork or an ipc
// one with hostIPC gives `forbidden sysctl: "<name>" not allowed with host net enabled`.
class SysctlAllowlist {
 public:
  // The safe set only, whatever the kernel.
  SysctlAllowlist();
  // The safe set for a kernel release as uname -r prints it ("6.1.0-13-amd64"; entries needing a
  // newer kernel are left out; an unparsable release leaves them out too) plus
  // `allowed_unsafe`. Fails with upstream's messages when an entry is not a valid sysctl
  // pattern or not known to be namespaced.
  static absl::StatusOr<SysctlAllowlist> Create(std::string_view kernel_release,
                                                const std::vector<std::string>& allowed_unsafe);
  // The safe sysctls for `kernel_release`.
  static std::vector<std::string> SafeSysctls(std::string_view kernel_release);

  AdmitResult Admit(const api::Pod& pod) const;

 private:
  absl::Status Add(const std::string& pattern);
  std::map<std::string, api::SysctlNamespace> names_;
  std::map<std::string, api::SysctlNamespace> prefixes_;
};

// Machine capacity (online CPUs, MemTotal) minus reservations: what admission checks against.
NodeAllocatable MachineAllocatable(int64_t max_pods, int64_t reserved_milli_cpu,
                                   int64_t reserved_memory_bytes);

}  // namespace kubelet

#endif  // KUBELET_KUBELET_ADMISSION_H_
