// Pod admission before start (upstream lifecycle.PredicateAdmitHandler with the scheduler's
// generic predicates): a pod is admitted only if the node has room for it — pod count against
// maxPods, and CPU / memory requests against allocatable, given the pods already admitted.
// A rejected pod is marked Failed with the reason ("OutOfpods", "OutOfcpu", "OutOfmemory") and
// message upstream uses. Pure functions; thread-safe.
#ifndef KUBELET_KUBELET_ADMISSION_H_
#define KUBELET_KUBELET_ADMISSION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "api/pod.h"

namespace kubelet {

struct NodeAllocatable {
  int64_t milli_cpu = 0;
  int64_t memory_bytes = 0;
  int64_t pods = 110;
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
PodRequests ComputePodRequests(const api::Pod& pod);

// Resource fit (reasons OutOfpods / OutOfcpu / OutOfmemory with upstream messages) and host
// port conflicts (reason "NodePorts", message "Predicate NodePorts failed"). A critical pod
// (api::IsCriticalPod) short of resources is not rejected for that: the preemption attempt upstream
// makes follows, and when no set of non-critical pods can free enough the pod fails with
// UnexpectedAdmissionError and "Unexpected error while attempting to recover from admission
// failure: preemption: ...".
AdmitResult AdmitPod(const api::Pod& pod, const std::vector<api::Pod>& admitted,
                     const NodeAllocatable& allocatable);

// Machine capacity (online CPUs, MemTotal) minus reservations: what admission checks against.
NodeAllocatable MachineAllocatable(int64_t max_pods, int64_t reserved_milli_cpu,
                                   int64_t reserved_memory_bytes);

}  // namespace kubelet

#endif  // KUBELET_KUBELET_ADMISSION_H_
