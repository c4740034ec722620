// Node capacity and allocatable, as upstream computes them (pkg/kubelet/cm
// node_container_manager_linux.go and the node status setters):
//
//   capacity     cpu (online cores), memory (MemTotal), pods (maxPods), ephemeral-storage (the
//                root dir's filesystem), hugepages-<size> (pool sizes)
//   reservation  kubeReserved + systemReserved + hard-eviction thresholds (memory.available ->
//                memory, nodefs.available -> ephemeral-storage; quantities or percentages of
//                capacity)
//   allocatable  capacity - reservation (never negative); memory also minus hugepage pools
//   kubepods     capacity - kubeReserved - systemReserved (+ pid): what the kubepods cgroup is
//                limited to when enforceNodeAllocatable contains "pods" (evictions, not the
//                cgroup, keep the eviction threshold free)
//
// Also the start-up checks that go with it: reservedSystemCPUs overriding the CPU reservation
// and the failSwapOn check. Pure functions; thread-safe.
#ifndef KUBELET_KUBELET_CM_NODE_ALLOCATABLE_H_
#define KUBELET_KUBELET_CM_NODE_ALLOCATABLE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/pod.h"
#include "kubelet/cm/machine_info.h"

namespace kubelet::cm {

inline constexpr char kResourcePods[] = "pods";
inline constexpr char kResourcePID[] = "pid";  // internal: pids of the kubepods cgroup

// A hard eviction threshold "<signal> < <value>".
struct EvictionThreshold {
  std::string signal;                     // memory.available, nodefs.available, ...
  std::optional<api::Quantity> quantity;  // absolute value, or
  float percentage = 0;                   // fraction of capacity (0.1 for "10%")
  bool operator==(const EvictionThreshold&) const = default;
};

// evictionHard map -> thresholds, with upstream's checks and messages ("unsupported eviction
// signal ...", "eviction percentage threshold ... must be positive", ...). "0%" and "100%"
// entries are dropped, as upstream does.
absl::StatusOr<std::vector<EvictionThreshold>> ParseEvictionThresholds(
    const std::map<std::string, std::string>& hard);
// The quantity a threshold stands for given the capacity of its resource.
int64_t ThresholdValue(const EvictionThreshold& t, int64_t capacity);

// kubeReserved / systemReserved map -> resource list (cpu, memory, ephemeral-storage, pid);
// an unparsable quantity is an error naming it.
absl::StatusOr<api::ResourceList> ParseReservation(const std::map<std::string, std::string>& m);

// reservedSystemCPUs: the CPU part of kubeReserved is dropped and systemReserved's cpu becomes
// the number of reserved CPUs (upstream server.go).
void OverrideReservedCPUs(int reserved_cpu_count, std::map<std::string, std::string>* kube,
                          std::map<std::string, std::string>* system);

// Machine capacity. `ephemeral_storage_bytes` is omitted when nullopt.
api::ResourceList MachineCapacity(const MachineInfo& info, int64_t max_pods,
                                  std::optional<int64_t> ephemeral_storage_bytes);

// kubeReserved + systemReserved + hard-eviction reservation, for each resource of `capacity`
// (zero entries left out).
api::ResourceList NodeAllocatableReservation(const api::ResourceList& capacity,
                                             const api::ResourceList& kube_reserved,
                                             const api::ResourceList& system_reserved,
                                             const std::vector<EvictionThreshold>& hard);
// capacity - reservation, clamped at 0; memory also minus every hugepages-* capacity.
api::ResourceList Allocatable(const api::ResourceList& capacity,
                              const api::ResourceList& reservation);
// capacity - kubeReserved - systemReserved, clamped at 0 (the kubepods cgroup's limits).
api::ResourceList AllocatableAbsolute(const api::ResourceList& capacity,
                                      const api::ResourceList& kube_reserved,
                                      const api::ResourceList& system_reserved);

// failSwapOn: an error with upstream's message when `swap_lines` (ReadSwapLines) has more than
// the header line.
absl::Status CheckSwap(const std::vector<std::string>& swap_lines);

}  // namespace kubelet::cm

#endif  // KUBELET_KUBELET_CM_NODE_ALLOCATABLE_H_
