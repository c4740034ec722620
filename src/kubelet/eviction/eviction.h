// The eviction manager (upstream pkg/kubelet/eviction, v1.28 semantics):
//
// Thresholds (ParseThresholds): evictionHard / evictionSoft map a signal to a quantity ("100Mi")
// or a percentage of capacity ("10%"); a soft threshold needs its evictionSoftGracePeriod;
// evictionMinimumReclaim adds to what must be free before the pressure counts as relieved.
// With "pods" in enforceNodeAllocatable each memory.available threshold is copied to
// allocatableMemory.available, as upstream.
//
// Signals (Observe), from the same Summary as /stats/summary:
//   memory.available             node memory.availableBytes (capacity: available + workingSet)
//   allocatableMemory.available  the "pods" cgroup's availableBytes (its memory limit - its
//                                working set; absent without a limit)
//   nodefs.available / nodefs.inodesFree    node fs
//   imagefs.available / imagefs.inodesFree  the runtime's image fs
//   pid.available                rlimit maxpid - running processes
//
// Each Synchronize() (every 10 s once started):
//   1. observe (the node-level figures alone with node_summary set); a threshold is met when
//   available < its value (plus minimum reclaim while it was
//      met on the previous pass); a soft one only counts once met for its grace period;
//   2. node conditions: MemoryPressure (memory signals), DiskPressure (nodefs/imagefs), PIDPressure
//      (pid) are set while a threshold of theirs is met and kept for
//      evictionPressureTransitionPeriod after the last time it was;
//   3. with a threshold met past its grace period: the one to reclaim first (memory before the
//      rest); for disk signals node-level resources go first (dead containers, unused images),
//      and when that brings the signal back above the threshold no pod is evicted;
//   4. otherwise the active pods are ranked as upstream (memory: usage above requests first,
//      then lower priority, then usage - requests; disk: the same with ephemeral storage; pid:
//      priority, then process count) and the first that can be evicted is: critical pods (static,
//      mirror, system priority) never are. One pod per pass. Hard thresholds kill with a 1 s grace
//      period, soft ones with min(pod's, evictionMaxPodGracePeriod when > 0). The pod ends Failed
//      with reason Evicted and upstream's message ("The node was low on resource: memory.
//      Threshold quantity: 100Mi, available: 5Mi. Container hog was using 800Mi, request is 0,
//      has larger consumption of memory. ").
//
// Admission (Admit): under MemoryPressure only BestEffort pods are refused unless critical or
// tolerating node.kubernetes.io/memory-pressure:NoSchedule; under any other pressure every
// non-critical pod is; reason Evicted, message "The node had condition: [MemoryPressure]. ".
//
// kernelMemcgNotification (upstream's memory threshold notifier): each memory threshold also
// gets a kernel notification on its memory cgroup (the node's root for memory.available, the
// pods cgroup for allocatableMemory.available) at the usage that means the threshold is met
// (threshold_notifier.h), re-armed from the latest figures at most every 10 s; a crossing runs a
// pass at once instead of at the next interval. On cgroup v2 there is no such notification and
// memory is observed every 10 s, as upstream.
// Thread-safety: every method may be called from any thread. Ownership: the options' callbacks
// are called on the manager's thread (Synchronize) and must outlive it.
#ifndef KUBELET_KUBELET_EVICTION_EVICTION_H_
#define KUBELET_KUBELET_EVICTION_EVICTION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/pod.h"
#include "common/clock.h"
#include "config/kubelet_configuration.h"
#include "kubelet/container/pod_lifecycle.h"
#include "kubelet/eviction/threshold_notifier.h"
#include "kubelet/stats/summary.h"

namespace kubelet::eviction {

inline constexpr char kSignalMemoryAvailable[] = "memory.available";
inline constexpr char kSignalAllocatableMemoryAvailable[] = "allocatableMemory.available";
inline constexpr char kSignalNodeFsAvailable[] = "nodefs.available";
inline constexpr char kSignalNodeFsInodesFree[] = "nodefs.inodesFree";
inline constexpr char kSignalImageFsAvailable[] = "imagefs.available";
inline constexpr char kSignalImageFsInodesFree[] = "imagefs.inodesFree";
inline constexpr char kSignalPIDAvailable[] = "pid.available";

struct Threshold {
  std::string signal;
  // Either an absolute amount (bytes, inodes, pids) or a fraction of capacity.
  std::optional<int64_t> quantity;
  double percentage = 0;                               // 0..1, when quantity is unset
  absl::Duration grace_period = absl::ZeroDuration();  // zero: a hard threshold
  std::optional<int64_t> min_reclaim_quantity;
  double min_reclaim_percentage = 0;
  bool hard() const { return grace_period == absl::ZeroDuration(); }
  // The threshold's value for a capacity, and as upstream prints it ("100Mi", "10%").
  int64_t Value(int64_t capacity) const;
  int64_t MinReclaim(int64_t capacity) const;
  std::string String() const;
};

// Fails with upstream's messages on an unknown signal, a bad value, a soft threshold without a
// grace period, or a negative / over 100 % value.
absl::StatusOr<std::vector<Threshold>> ParseThresholds(
    const std::map<std::string, std::string>& hard, const std::map<std::string, std::string>& soft,
    const std::map<std::string, std::string>& soft_grace_periods,
    const std::map<std::string, std::string>& min_reclaim,
    const std::set<std::string>& enforce_node_allocatable);

struct Observation {
  int64_t available = 0;
  int64_t capacity = 0;
};
using Observations = std::map<std::string, Observation>;
// The signals the Summary gives.
Observations Observe(const stats::Summary& summary);

// Pods ranked for eviction under `signal`, first to go first.
std::vector<api::Pod> RankForEviction(const std::string& signal, std::vector<api::Pod> pods,
                                      const stats::Summary& summary);

struct ManagerOptions {
  std::vector<Threshold> thresholds;
  absl::Duration monitoring_interval = absl::Seconds(10);
  absl::Duration pressure_transition_period = absl::Minutes(5);
  int64_t max_pod_grace_period_seconds = 0;
  // The Summary (CPU and memory are enough for memory signals; fs figures for disk ones).
  std::function<absl::StatusOr<stats::Summary>()> summary;
  // The node-level part alone (node, system containers, fs, rlimit; no pods): when set, every
  // pass observes the signals from it, and `summary` (which walks every pod) is read only on a
  // pass where a threshold is met, to rank the pods. Unset: `summary` on every pass.
  std::function<absl::StatusOr<stats::Summary>()> node_summary;
  // Pods that may be evicted (admitted, not terminating).
  std::function<std::vector<api::Pod>()> active_pods;
  // Stops the pod with the grace period and marks it Failed / Evicted with the message; false
  // when it was not (a critical pod).
  std::function<bool(const api::Pod&, const std::string& message, int64_t grace_seconds)> evict;
  // Node-level reclaim for disk signals: dead containers, then unused images. Each returns
  // whether it ran (errors are logged by the callee).
  std::function<void()> delete_dead_containers;
  std::function<void()> delete_unused_images;
  // kernelMemcgNotification: the memory hierarchy's mount point (empty: none found, no
  // notifications), and the pods cgroup below it (allocatableMemory.available).
  bool kernel_memcg_notification = false;
  std::string memory_cgroup_root;
  std::string pods_cgroup;
  CgroupNotifierFactory notifier_factory;  // unset: NewCgroupNotifier
};

// Reads the thresholds (ParseThresholds: its errors), the pressure transition period, the max pod
// grace period and kernelMemcgNotification with its pods cgroup (stats::PodsCgroupPath).
absl::StatusOr<ManagerOptions> ManagerOptionsFromConfig(const config::KubeletConfiguration& c);
inline constexpr std::string_view kManagerConfigFields[] = {
    "evictionHard",
    "evictionSoft",
    "evictionSoftGracePeriod",
    "evictionMinimumReclaim",
    "enforceNodeAllocatable",
    "evictionPressureTransitionPeriod",
    "evictionMaxPodGracePeriod",
    "kernelMemcgNotification",
    "cgroupRoot",
    "cgroupsPerQOS",
    "cgroupDriver",
};

// Node conditions the manager reports.
struct Pressure {
  bool memory = false;
  bool disk = false;
  bool pid = false;
};

class Manager final : public container::PodLifecycleParticipant {
 public:
  Manager(ManagerOptions options, const Clock& clock);
  ~Manager() override;

  void Start();
  void Stop();
  // One monitoring pass (what the manager's thread runs every interval, or at once when a memcg
  // notification arrives). Returns the pod evicted, if any. One caller at a time.
  std::optional<api::Pod> Synchronize();

  Pressure GetPressure() const;

  std::string Name() const override { return "eviction"; }
  container::AdmitDecision Admit(const api::Pod& pod,
                                 const std::vector<api::PodPtr>& admitted) override;

 private:
  ManagerOptions options_;
  const Clock& clock_;
  mutable absl::Mutex mu_;
  // When each threshold (by index) was first seen met, for grace periods; erased when not met.
  std::map<size_t, absl::Time> first_observed_ ABSL_GUARDED_BY(mu_);
  std::set<size_t> met_last_pass_ ABSL_GUARDED_BY(mu_);
  // When each condition was last observed ("MemoryPressure", ...).
  std::map<std::string, absl::Time> condition_last_observed_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> conditions_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // A memcg notification arrived since the last pass began.
  bool crossed_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;

  // Memory threshold notifiers: set up by Start, re-armed by Synchronize, destroyed by Stop
  // once the manager's thread has ended (so only one thread touches them at a time).
  struct MemoryNotifier {
    size_t threshold = 0;
    std::string cgroup_path;
    std::string description;
    std::unique_ptr<CgroupNotifier> active;
  };
  void UpdateNotifiers(const stats::Summary& summary, absl::Time now);
  std::vector<MemoryNotifier> notifiers_;
  absl::Time notifiers_updated_ = absl::InfinitePast();
};

}  // namespace kubelet::eviction

#endif  // KUBELET_KUBELET_EVICTION_EVICTION_H_
