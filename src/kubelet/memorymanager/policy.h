// The memory manager's policies (upstream pkg/kubelet/cm/memorymanager policy*.go, v1.28), used
// by MemoryManager (memory_manager.h), which owns the state, locks and persists it.
//
// None: no hints, nothing allocated, nothing reported allocatable.
//
// Static: Guaranteed pods' memory and hugepages-<size> requests are pinned to NUMA nodes.
//   - Machine state: per NUMA node and memory type, total / systemReserved (reservedMemory) /
//     allocatable (total - systemReserved, minus the node's hugepages for memory) / reserved /
//     free, the number of assignments and the node's group ("cells").
//   - Hints: every set of NUMA nodes whose allocatable memory covers the request, unless a node
//     of a single-node hint is part of a group, or a node of a multi-node hint already holds a
//     single-node allocation or one with another group, or the free memory (plus the pod's
//     reusable init container memory) is short; preferred are the hints with the fewest nodes
//     that could hold the request at all. A container (or, pod scope, any container of the pod)
//     that already has memory gets its allocation back as the only, preferred hint. Nothing fits:
//     no hints (no preference; Allocate then fails).
//   - Allocate: the topology manager's affinity (or, when it has none, the best hint of our own),
//     extended to the best hint containing it when its nodes lack free memory; the request is
//     taken node after node in ascending order. Memory an init container held is reused by the
//     containers after it in the same NUMA nodes (the init containers' blocks shrink by what was
//     reused).
//   - RemoveContainer gives the blocks back node after node; a node without assignments leaves
//     its group.
//   - Start rebuilds the machine state the assignments imply and compares it with the stored
//     one.
// Errors carry upstream's texts ("[memorymanager] ...").
//
// Not thread-safe: MemoryManager serializes every call.
#ifndef KUBELET_KUBELET_MEMORYMANAGER_POLICY_H_
#define KUBELET_KUBELET_MEMORYMANAGER_POLICY_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/pod.h"
#include "kubelet/memorymanager/machine_memory.h"
#include "kubelet/memorymanager/state.h"
#include "kubelet/topologymanager/hint_provider.h"

namespace kubelet::memorymanager {

inline constexpr char kPolicyNone[] = "None";
inline constexpr char kPolicyStatic[] = "Static";

// The in-memory state (upstream state.State without its locking and checkpointing).
struct MemoryState {
  NUMANodeMap machine_state;
  ContainerMemoryAssignments assignments;

  // The container's blocks; nullptr when it has no entry (an entry may hold no blocks).
  const std::vector<Block>* GetBlocks(const std::string& pod_uid,
                                      const std::string& container_name) const;
  void SetBlocks(const std::string& pod_uid, const std::string& container_name,
                 std::vector<Block> blocks);
  // Drops the container's entry, and the pod's when it was its last.
  void Delete(const std::string& pod_uid, const std::string& container_name);
};

// NUMA node -> resource name -> bytes reserved for the system (reservedMemory).
using SystemReservedMemory = std::map<int, std::map<std::string, uint64_t>>;

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view Name() const = 0;
  // Validates (and, when empty, initializes) the restored state.
  virtual absl::Status Start(MemoryState* s) = 0;
  virtual absl::Status Allocate(MemoryState* s, const api::Pod& pod,
                                const api::Container& container) = 0;
  virtual void RemoveContainer(MemoryState* s, const std::string& pod_uid,
                               const std::string& container_name) = 0;
  virtual topologymanager::TopologyHints GetTopologyHints(const MemoryState& s, const api::Pod& pod,
                                                          const api::Container& container) = 0;
  virtual topologymanager::TopologyHints GetPodTopologyHints(const MemoryState& s,
                                                             const api::Pod& pod) = 0;
  // One block per NUMA node and memory type with allocatable memory.
  virtual std::vector<Block> GetAllocatableMemory(const MemoryState& s) const = 0;
};

std::unique_ptr<Policy> NewNonePolicy();

// Error: "[memorymanager] you should specify the system reserved memory" when `reserved` holds
// no memory (type "memory") at all. `affinity` may be null (every container then gets "any").
absl::StatusOr<std::unique_ptr<Policy>> NewStaticPolicy(
    MachineMemory machine, SystemReservedMemory reserved,
    const topologymanager::AffinityStore* affinity);

// The memory and hugepages-<size> requests of a container, in bytes. Error (a request that is
// not a whole number of bytes): "[memorymanager] failed to represent quantity as int64".
absl::StatusOr<std::map<std::string, uint64_t>> ContainerMemoryRequests(
    const api::Container& container);

// The pod's: per memory type, the largest of the init containers' requests and the sum of the
// app containers' (types only init containers request are left out, as upstream).
absl::StatusOr<std::map<std::string, uint64_t>> PodMemoryRequests(const api::Pod& pod);

}  // namespace kubelet::memorymanager

#endif  // KUBELET_KUBELET_MEMORYMANAGER_POLICY_H_
