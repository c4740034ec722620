// The memory manager (upstream pkg/kubelet/cm/memorymanager, v1.28): a topology manager hint
// provider that, with the Static policy, pins the memory and hugepages of Guaranteed pods'
// containers to NUMA nodes (their cgroup's cpuset.mems, GetMemoryNUMANodes) and keeps the
// bookkeeping in <state dir>/memory_manager_state (state.h), byte-compatible with upstream's.
// Policies: policy.h.
//
// Life cycle, as upstream's container manager drives it:
//   Create   (NewManager) the policy; for Static the reservedMemory is checked against the node
//            allocatable reservation (kubeReserved + systemReserved + hard eviction, per memory
//            type), with upstream's errors:
//              the reserved memory configuration references a NUMA node 2 that does not exist
//                on this machine
//              the total amount "1Gi" of type "memory" is not equal to the value "1124Mi"
//                determined by Node Allocatable feature
//              [memorymanager] you should specify the system reserved memory
//              unknown policy: "Foo"
//   Start    restores the state file (written fresh when absent) and validates it:
//              could not restore state from checkpoint: <error>, please drain this node and
//                delete the memory manager checkpoint file "<path>" before restarting Kubelet
//              (<error>: checkpoint is corrupted / [memorymanager] configured policy "Static"
//                differs from state checkpoint policy "None" / a malformed file)
//              [memorymanager] the expected machine state is different from the real one
//              [memorymanager] machine state can not be empty when it has memory assignments
//            (the container manager reports these as "start memory manager error: <error>").
//   admission: GetTopologyHints / GetPodTopologyHints, then Allocate (the topology manager's
//            affinity read from the AffinityStore); each first drops the state of containers
//            whose pod is no longer active (the pod being admitted counts as active).
//   AddContainer when a container starts: the memory of the pod's init containers before it is
//            released (an init container has finished when the next container starts).
//   RemoveContainer when a container is removed, RemovePod (HintProvider) when all of a pod's
//            containers have stopped: their memory is released.
// Calls before Start give no hints and allocate nothing (Allocate: FailedPrecondition).
//
// Every state change is written to the file at once (write errors are logged, as upstream).
// Thread-safety: all methods are thread-safe (one mutex). `active_pods` and `sources_ready` are
// called with it held and must not call back into the manager.
#ifndef KUBELET_KUBELET_MEMORYMANAGER_MEMORY_MANAGER_H_
#define KUBELET_KUBELET_MEMORYMANAGER_MEMORY_MANAGER_H_

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "api/pod.h"
#include "config/feature_gates.h"
#include "config/kubelet_configuration.h"
#include "kubelet/memorymanager/machine_memory.h"
#include "kubelet/memorymanager/policy.h"
#include "kubelet/memorymanager/state.h"
#include "kubelet/topologymanager/hint_provider.h"

namespace kubelet::memorymanager {

struct MemoryManagerOptions {
  // The MemoryManager feature gate (beta, on by default): when off, upstream builds no memory
  // manager at all; the wiring does the same.
  bool enabled = true;
  std::string policy_name = kPolicyNone;  // memoryManagerPolicy: "None" or "Static"
  std::vector<config::MemoryReservation> reserved_memory;
  // Set by the wiring:
  // --root-dir (/var/lib/kubelet): the file is <state_dir>/memory_manager_state.
  std::string state_dir;
  // The node allocatable reservation (upstream GetNodeAllocatableReservation: kubeReserved +
  // systemReserved + hard eviction thresholds, per resource of the capacity, zero entries left
  // out). Only memory and hugepages-* are read.
  api::ResourceList node_allocatable_reservation;
};

// Reads memoryManagerPolicy (empty: "None"), reservedMemory and the MemoryManager gate.
MemoryManagerOptions MemoryManagerOptionsFromConfig(const config::KubeletConfiguration& c,
                                                    const config::FeatureGate& gates);
inline constexpr std::string_view kMemoryManagerConfigFields[] = {"memoryManagerPolicy",
                                                                  "reservedMemory"};

// upstream getSystemReservedMemory: validates `reserved_memory` against the machine and the node
// allocatable reservation (errors above) and returns it per NUMA node in bytes (every node of the
// machine present).
absl::StatusOr<SystemReservedMemory> GetSystemReservedMemory(
    const MachineMemory& machine, const api::ResourceList& node_allocatable_reservation,
    const std::vector<config::MemoryReservation>& reserved_memory);

using ActivePodsFunc = std::function<std::vector<api::PodPtr>()>;

class MemoryManager final : public topologymanager::HintProvider {
 public:
  // `affinity` (the topology manager) must outlive the manager; null: every container's affinity
  // is "any".
  static absl::StatusOr<std::unique_ptr<MemoryManager>> Create(
      MemoryManagerOptions options, MachineMemory machine,
      const topologymanager::AffinityStore* affinity);

  // Restores and validates the state (errors above). `active_pods` lists the pods whose state is
  // kept; `sources_ready` (null: always) gates that clean-up until every pod source has been
  // seen, as upstream.
  absl::Status Start(ActivePodsFunc active_pods, std::function<bool()> sources_ready = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);

  std::string_view policy_name() const { return policy_->Name(); }
  std::string StateFilePath() const;

  // topologymanager::HintProvider. Hints for memory and hugepages-* of Guaranteed pods (Static).
  topologymanager::TopologyHints GetTopologyHints(const api::Pod& pod,
                                                  const api::Container& container) override
      ABSL_LOCKS_EXCLUDED(mu_);
  topologymanager::TopologyHints GetPodTopologyHints(const api::Pod& pod) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Allocate(const api::Pod& pod, const api::Container& container) override
      ABSL_LOCKS_EXCLUDED(mu_);

  // The container is starting: releases the memory of the init containers listed before it.
  void AddContainer(const api::Pod& pod, const std::string& container_name)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Releases the container's memory; unknown containers are ignored.
  void RemoveContainer(const std::string& pod_uid, const std::string& container_name)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Releases the memory of every container of the pod (the topology manager calls it once the
  // pod's containers have all stopped).
  void RemovePod(const std::string& pod_uid) override ABSL_LOCKS_EXCLUDED(mu_);

  // The NUMA nodes of the container's memory, for its cpuset.mems ("0,1"); empty: no
  // allocation, leave cpuset.mems alone.
  std::set<int> GetMemoryNUMANodes(const std::string& pod_uid,
                                   const std::string& container_name) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // For the pod resources API: the container's blocks ({type, size, NUMA ids}), and the
  // allocatable memory per NUMA node and type as computed at Start (Static; None: empty).
  std::vector<Block> GetMemory(const std::string& pod_uid, const std::string& container_name) const
      ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<Block> GetAllocatableMemory() const ABSL_LOCKS_EXCLUDED(mu_);

  // Snapshots of the state (what the file holds).
  NUMANodeMap GetMachineState() const ABSL_LOCKS_EXCLUDED(mu_);
  ContainerMemoryAssignments GetMemoryAssignments() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  MemoryManager(MemoryManagerOptions options, std::unique_ptr<Policy> policy);

  // Reads the state file (writes a fresh one when there is none).
  absl::Status RestoreLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops the state of containers of pods neither active nor being admitted.
  void RemoveStaleStateLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SetPendingAdmissionLocked(const api::Pod& pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveContainerLocked(const std::string& pod_uid, const std::string& container_name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status StoreLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes the file when the state changed since the last write (errors logged).
  void PersistLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const MemoryManagerOptions options_;
  const std::unique_ptr<Policy> policy_;

  mutable absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  MemoryState state_ ABSL_GUARDED_BY(mu_);
  MemoryManagerCheckpoint stored_ ABSL_GUARDED_BY(mu_);  // what the file holds
  std::vector<Block> allocatable_ ABSL_GUARDED_BY(mu_);
  ActivePodsFunc active_pods_ ABSL_GUARDED_BY(mu_);
  std::function<bool()> sources_ready_ ABSL_GUARDED_BY(mu_);
  // The pod in admission (upstream pendingAdmissionPod): its UID and container names.
  std::optional<std::pair<std::string, std::set<std::string>>> pending_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet::memorymanager

#endif  // KUBELET_KUBELET_MEMORYMANAGER_MEMORY_MANAGER_H_
