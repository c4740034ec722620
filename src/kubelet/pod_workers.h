// Pod workers (upstream pkg/kubelet/pod_workers.go): one serialized queue of work per pod UID,
// run on a shared thread pool, driving each pod through the upstream phases
//   SyncPod (repeatedly) -> SyncTerminatingPod (once it must stop) -> SyncTerminatedPod -> done.
//
// Contract:
// - UpdatePod never blocks on the runtime. Updates for a busy pod are coalesced: only the latest
//   pending update is kept, except that a kill request is never overwritten by a later
//   non-kill update (the grace period of a kill can only shorten).
// - Before each step the worker waits (bounded) for the status cache to hold data newer than its
//   previous step, so it never acts twice on the same stale status.
// - After a successful SyncPod the pod is re-synced after `resync_interval`; after an error after
//   `backoff_period` (both with jitter); SyncDue() dispatches the due re-syncs and is called by
//   the sync loop's 1 s tick.
// - A terminal SyncPod result (phase Succeeded/Failed) moves the pod to terminating.
// - A kill request (or Stop) for a pod whose SyncPod is in flight cancels that SyncPod (the
//   thread's CurrentCancellation(), common/cancellation.h): its blocking CRI calls and hook
//   requests end at once, so a hung postStart hook or a long image pull cannot delay the
//   termination (upstream cancels the sync's context the same way).
// - Orphans (running in the runtime, unknown to every source) are killed through
//   UpdatePod(kKill) with `running_pod` set and no `pod`.
// - After a pod has finished, only a new kCreate for the same UID starts it afresh (a manifest
//   removed then restored); syncs and updates of a finished pod are ignored.
// - A static pod starts only once no other pod of its full name (another UID: the previous
//   version of a changed manifest) runs or is still being stopped, as upstream's
//   allowStaticPodStart: until then its first SyncPod waits, retried by SyncDue() every second.
//   Two versions of a control-plane pod never run at once (one etcd on its data dir).
// Thread-safety: all public methods are thread-safe. The PodSyncer is called from pool threads,
// never two calls for the same UID at once.
#ifndef KUBELET_KUBELET_POD_WORKERS_H_
#define KUBELET_KUBELET_POD_WORKERS_H_

#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "api/pod.h"
#include "common/cancellation.h"
#include "common/clock.h"
#include "common/thread_pool.h"
#include "kubelet/container/cache.h"
#include "kubelet/container/runtime.h"

namespace kubelet {

enum class SyncPodType { kSync, kUpdate, kCreate, kKill };
const char* SyncPodTypeName(SyncPodType t);  // "sync", "update", "create", "kill"

struct UpdatePodOptions {
  SyncPodType type = SyncPodType::kSync;
  api::PodPtr pod;                            // the desired pod; null for orphans
  std::optional<container::Pod> running_pod;  // for orphans: what the runtime runs
  std::optional<int64_t> kill_grace_period_seconds;
  // For an update asked for by a PLEG event: the start of the relist that found the change.
  // kubelet_pleg_event_to_pod_worker_seconds observes from then (the earliest of merged
  // updates) to the start of the SyncPod that handles it. InfinitePast: none.
  absl::Time pleg_observed = absl::InfinitePast();
};

// The work itself, implemented by the Kubelet.
class PodSyncer {
 public:
  virtual ~PodSyncer() = default;
  // Makes the pod run as specified. Returns true when the pod reached a terminal phase and must
  // be torn down.
  virtual absl::StatusOr<bool> SyncPod(SyncPodType type, const api::Pod& pod,
                                       const container::PodStatus& status) = 0;
  // Stops every container of the pod within the grace period.
  virtual absl::Status SyncTerminatingPod(const api::Pod& pod, const container::PodStatus& status,
                                          std::optional<int64_t> grace_period_seconds) = 0;
  // Stops an orphan known only from the runtime.
  virtual absl::Status SyncTerminatingRuntimePod(const container::Pod& running) = 0;
  // Releases what the pod held once nothing runs (volumes, cgroups, status finalization).
  virtual absl::Status SyncTerminatedPod(const api::Pod& pod,
                                         const container::PodStatus& status) = 0;
};

struct PodWorkersOptions {
  int threads = 16;
  // Threads kept while no work is queued (at most `threads`); the others exit after 30 s idle.
  int idle_threads = std::numeric_limits<int>::max();
  absl::Duration resync_interval = absl::Minutes(1);
  absl::Duration backoff_period = absl::Seconds(10);
  // Upper bound on waiting for a status newer than the previous step.
  absl::Duration cache_wait = absl::Seconds(10);
};

class PodWorkers {
 public:
  PodWorkers(PodWorkersOptions options, PodSyncer& syncer, container::Cache& cache,
             const Clock& clock);
  ~PodWorkers();

  void UpdatePod(UpdatePodOptions options);
  // Dispatches re-syncs whose time has come.
  void SyncDue();

  // Pod state queries (upstream PodStateProvider / PodWorkers interface).
  bool IsKnown(const std::string& uid) const;
  bool IsPodTerminationRequested(const std::string& uid) const;
  // True once SyncTerminatingPod succeeded (no container can be running any more).
  bool IsPodKnownTerminated(const std::string& uid) const;
  bool CouldHaveRunningContainers(const std::string& uid) const;
  bool IsFinished(const std::string& uid) const;
  // Whether a pod of full name `full_name` (<name>_<namespace>) is being stopped: termination
  // requested, not finished yet (upstream IsPodForMirrorPodTerminatingByFullName).
  bool IsPodTerminatingByFullName(const std::string& full_name) const;
  // Forgets finished workers whose UID is not in `desired` (the pod manager's pods).
  void SyncKnownPods(const std::set<std::string>& desired);
  size_t ActiveCount() const;
  // UIDs of every pod the workers know (any phase).
  std::vector<std::string> KnownUIDs() const;

  void Stop();

 private:
  enum class Phase { kSyncing, kTerminating, kTerminated, kFinished };
  struct State {
    Phase phase = Phase::kSyncing;
    api::PodPtr pod;
    std::optional<container::Pod> running_pod;
    std::optional<UpdatePodOptions> pending;
    bool working = false;
    std::optional<int64_t> grace_period_seconds;
    absl::Time last_sync = absl::InfinitePast();
    std::optional<absl::Time> requeue_at;
    // The in-flight SyncPod's or SyncTerminatingPod's cancellation (set only while one runs).
    std::shared_ptr<Cancellation> sync_cancel;
    // The status wait of a step without sync_cancel (Stop() cancels it).
    std::shared_ptr<Cancellation> wait_cancel;
    // A SyncPod was let run (a static pod waiting for its previous version is not started).
    bool started = false;
  };

  // <name>_<namespace> of the pod (or of the orphan) `st` is about; "" when unknown.
  static std::string FullName(const State& st);
  // Whether static pod `uid` must wait before its first SyncPod: another UID of the same full
  // name started or is being stopped (upstream allowStaticPodStart).
  bool StaticPodMustWait(const std::string& uid, const State& st) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  void Run(const std::string& uid);
  // Applies `update` to `st`; returns true when there is something to do.
  void Merge(State& st, UpdatePodOptions update) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The grace period a termination of the pod uses now: the kill override, else the pod's.
  static int64_t EffectiveGrace(const State& st);

  PodWorkersOptions options_;
  PodSyncer& syncer_;
  container::Cache& cache_;
  const Clock& clock_;
  mutable absl::Mutex mu_;
  std::map<std::string, State> states_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace kubelet

#endif  // KUBELET_KUBELET_POD_WORKERS_H_
