// ContainerManager: the node's cgroup layout for pods (upstream pkg/kubelet/cm's
// containerManagerImpl with its QoS and pod container managers) and the node's capacity and
// allocatable.
//
// With cgroupsPerQOS (the default) the tree below cgroupRoot is
//   kubepods                 limited to capacity - kubeReserved - systemReserved when
//                            enforceNodeAllocatable has "pods" (else to capacity)
//   kubepods/pod<uid>        Guaranteed pods
//   kubepods/burstable       cpu shares = the sum of its pods' CPU requests
//   kubepods/burstable/pod<uid>
//   kubepods/besteffort      cpu shares = 2
//   kubepods/besteffort/pod<uid>
// spelled as slices with the systemd driver (kubepods-burstable-pod<uid_>.slice). A pod's
// cgroup gets its shares / CFS quota / memory limit / pids limit / hugepage limits before each
// sync (PodLifecycleParticipant::PrepareForSync), is removed once the pod has terminated
// (CleanupTerminatedPod), and pod cgroups whose pod is gone are removed by Housekeeping
// (nothing is killed: a cgroup with processes left is retried on a later pass).
// Without cgroupsPerQOS none of this exists and PodCgroupParent is "".
//
// enforceNodeAllocatable "system-reserved" / "kube-reserved": the cgroup named by
// systemReservedCgroup / kubeReservedCgroup (the driver's syntax) must already exist (it is never
// created, as upstream) and gets cpu shares from the reservation's cpu, a memory limit from its
// memory, pids.max from its pid and hugetlb limits from its hugepages-*; a missing cgroup fails
// Start() ("Failed to enforce System Reserved Cgroup Limits on ...").
//
// Thread-safety: every method is thread-safe; the participant methods may run concurrently for
// different pods. Owns its CgroupManagers.
#ifndef KUBELET_KUBELET_CM_CONTAINER_MANAGER_H_
#define KUBELET_KUBELET_CM_CONTAINER_MANAGER_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "api/pod.h"
#include "api/static_pod.h"
#include "config/feature_gates.h"
#include "config/kubelet_configuration.h"
#include "kubelet/cm/cgroup_manager.h"
#include "kubelet/cm/machine_info.h"
#include "kubelet/cm/node_allocatable.h"
#include "kubelet/container/pod_lifecycle.h"
#include "kubelet/events/event_recorder.h"

namespace kubelet::cm {

inline constexpr char kNodeAllocatableCgroupName[] = "kubepods";
inline constexpr char kBurstableCgroupName[] = "burstable";
inline constexpr char kBestEffortCgroupName[] = "besteffort";
inline constexpr char kPodCgroupNamePrefix[] = "pod";
inline constexpr char kNodeAllocatableEnforcementKey[] = "pods";
inline constexpr char kSystemReservedEnforcementKey[] = "system-reserved";
inline constexpr char kKubeReservedEnforcementKey[] = "kube-reserved";

struct NodeConfig {
  std::string cgroup_driver = kCgroupDriverCgroupfs;
  bool cgroups_per_qos = true;
  std::string cgroup_root = "/";  // cgroupfs syntax
  std::string kubelet_cgroups;    // created and the kubelet moved into it when set
  std::string system_cgroups;     // created when set
  std::string runtime_cgroups;    // only reported
  std::set<std::string> enforce_node_allocatable = {kNodeAllocatableEnforcementKey};
  api::ResourceList kube_reserved;
  api::ResourceList system_reserved;
  std::string kube_reserved_cgroup;    // the driver's syntax; enforced with "kube-reserved"
  std::string system_reserved_cgroup;  // the driver's syntax; enforced with "system-reserved"
  std::vector<EvictionThreshold> hard_eviction_thresholds;
  bool cpu_cfs_quota = true;
  int64_t cpu_cfs_quota_period_us = kQuotaPeriodUs;
  int64_t pod_pids_limit = -1;  // > 0: pids.max of every pod cgroup
  // InPlacePodVerticalScaling: an existing pod cgroup is not re-applied from the spec before a
  // sync (upstream's EnsureExists only creates it): its CPU and memory change only through the
  // runtime manager's resize, in upstream's order (Get/SetPodCgroupConfig below).
  bool in_place_pod_vertical_scaling = false;
  // Read by the wiring before the manager exists: failSwapOn (swap on fails start-up, CheckSwap)
  // and maxPods (the pods capacity, MachineCapacity).
  bool fail_swap_on = true;
  int64_t max_pods = 110;
  // FailedCreatePodContainer events when a pod's cgroup cannot be created; with `node_name`
  // also the node's NodeAllocatableEnforced ("Updated Node Allocatable limit across pods",
  // "Updated limits on system reserved cgroup <name>") and FailedNodeAllocatableEnforcement
  // events, as upstream. Unset: dropped. Borrowed; must outlive the manager.
  events::EventRecorder* recorder = nullptr;
  std::string node_name;
};

// Reads the cgroup settings (driver, default cgroupfs; cgroupRoot, "/" with cgroupsPerQOS), the
// enforcement keys, CFS quota (period only with CustomCPUCFSQuotaPeriod), pids, swap, maxPods
// and the InPlacePodVerticalScaling gate.
NodeConfig NodeConfigFromConfig(const config::KubeletConfiguration& c,
                                const config::FeatureGate& gates);
inline constexpr std::string_view kNodeConfigFields[] = {
    "cgroupDriver",  "cgroupsPerQOS",          "cgroupRoot",           "kubeletCgroups",
    "systemCgroups", "enforceNodeAllocatable", "systemReservedCgroup", "kubeReservedCgroup",
    "cpuCFSQuota",   "cpuCFSQuotaPeriod",      "podPidsLimit",         "failSwapOn",
    "maxPods",
};

// Reads cgroupsPerQOS and cgroupRoot: logs upstream's notice when NodeConfigFromConfig defaults
// the root to "/".
void LogCgroupRootDefault(const config::KubeletConfiguration& c);

// Reads kubeReserved / systemReserved (reservedSystemCPUs, CPUs of `machine`, replacing their cpu:
// logged) and evictionHard unless `ignore_eviction_thresholds`, into `nc`. A bad entry: an error.
absl::Status SetReservationsFromConfig(const config::KubeletConfiguration& c,
                                       const MachineInfo& machine, bool ignore_eviction_thresholds,
                                       NodeConfig* nc);
inline constexpr std::string_view kReservationConfigFields[] = {
    "kubeReserved", "systemReserved", "reservedSystemCPUs", "evictionHard"};

class ContainerManager final : public container::PodLifecycleParticipant {
 public:
  // `capacity` from MachineCapacity. `cgroups` names cgroups with the configured driver;
  // `cgroupfs` (cgroupfs driver, may be null: then `cgroups` is used) handles the literal
  // kubeletCgroups / systemCgroups paths.
  ContainerManager(NodeConfig config, MachineInfo machine, api::ResourceList capacity,
                   std::unique_ptr<CgroupManager> cgroups,
                   std::unique_ptr<CgroupManager> cgroupfs = nullptr);

  // Validates cgroupRoot, creates kubepods and the QoS cgroups (cgroupsPerQOS), enforces node
  // allocatable on kubepods and on the system-reserved / kube-reserved cgroups when their keys
  // are set, sets up kubeletCgroups / systemCgroups (best effort, logged).
  // An error is a start-up error ("invalid configuration: cgroup [...] has some missing paths",
  // "Failed to enforce Kube Reserved Cgroup Limits on ...").
  absl::Status Start();

  const NodeConfig& config() const { return config_; }
  const MachineInfo& machine_info() const { return machine_; }
  const api::ResourceList& Capacity() const { return capacity_; }
  // What admission and the node status use: capacity - reservation (+ hugepages off memory).
  const api::ResourceList& Allocatable() const { return allocatable_; }
  // kubeReserved + systemReserved + hard-eviction thresholds.
  const api::ResourceList& AllocatableReservation() const { return reservation_; }

  // cgroupRoot/kubepods.
  CgroupName NodeAllocatableCgroupName() const;
  // The pod's cgroup; nullopt without cgroupsPerQOS.
  std::optional<CgroupName> PodCgroupName(const api::Pod& pod) const;
  // The pod's cgroup in the driver's syntax, for the runtime (sandbox cgroup parent):
  // "/kubepods/burstable/pod<uid>" or "/kubepods.slice/kubepods-burstable.slice/
  // kubepods-burstable-pod<uid_>.slice"; "" without cgroupsPerQOS.
  std::string PodCgroupParent(const api::Pod& pod) const;
  // Pod cgroups that exist below the QoS cgroups, by pod UID.
  std::map<std::string, CgroupName> PodCgroups() const;
  // Re-applies the QoS cgroups' settings from the pods seen in PrepareForSync.
  absl::Status UpdateQOSCgroups();

  // In-place resize (upstream's pod container manager): the pod cgroup's current settings of
  // one resource ("cpu" or "memory"), writing them (only the fields set), its memory usage.
  // FailedPrecondition without cgroupsPerQOS.
  absl::StatusOr<ResourceConfig> GetPodCgroupConfig(const api::Pod& pod,
                                                    const std::string& resource) const;
  absl::Status SetPodCgroupConfig(const api::Pod& pod, const std::string& resource,
                                  const ResourceConfig& config);
  absl::StatusOr<int64_t> GetPodCgroupMemoryUsage(const api::Pod& pod) const;

  CgroupManager& cgroup_manager() { return *cgroups_; }

  // PodLifecycleParticipant.
  std::string Name() const override { return "container-manager"; }
  absl::Status PrepareForSync(const api::Pod& pod) override;
  absl::Status CleanupTerminatedPod(const api::Pod& pod) override;
  void Housekeeping(const std::set<std::string>& active) override;

 private:
  struct TrackedPod {
    api::QOSClass qos = api::QOSClass::kBestEffort;
    int64_t milli_cpu_request = 0;
    bool operator==(const TrackedPod&) const = default;
  };
  ResourceConfig NodeAllocatableConfig() const;
  CgroupName QOSCgroupName(api::QOSClass qos) const;
  absl::Status EnforceNodeAllocatable();
  // An event about the Node (needs recorder and node_name).
  void RecordNodeEvent(const char* type, const char* reason, const std::string& message) const;
  // The system-reserved / kube-reserved cgroups, for the keys present.
  absl::Status EnforceReservedCgroups();
  void SetupSystemCgroups();
  // Every hugepage size of the machine set to `value` unless present in `limits`.
  void FillHugePages(std::map<int64_t, int64_t>* limits, int64_t value) const;

  const NodeConfig config_;
  const MachineInfo machine_;
  const api::ResourceList capacity_;
  api::ResourceList reservation_;
  api::ResourceList allocatable_;
  const CgroupName root_;  // cgroupRoot
  const std::unique_ptr<CgroupManager> cgroups_;
  const std::unique_ptr<CgroupManager> cgroupfs_;

  absl::Mutex mu_;
  std::map<std::string, TrackedPod> pods_ ABSL_GUARDED_BY(mu_);
  bool node_allocatable_pending_ ABSL_GUARDED_BY(mu_) = false;
  // Serializes QoS cgroup writes so a stale snapshot never overwrites a newer one.
  absl::Mutex qos_mu_ ABSL_ACQUIRED_BEFORE(mu_);
};

}  // namespace kubelet::cm

#endif  // KUBELET_KUBELET_CM_CONTAINER_MANAGER_H_
