// GenericPLEG: the relisting PLEG (upstream pleg/generic.go).
//
// Every relist: GetPods(all=true); per container (sandboxes included) the state is compared
// with the previous relist's, producing ContainerStarted / ContainerDied / ContainerRemoved /
// ContainerChanged; for each pod that had events (or whose last inspection failed) the runtime's
// PodStatus is read and stored in the cache with the relist timestamp; finally the cache's
// global timestamp moves to the relist time. Events are then published (ContainerChanged is not
// published, as upstream).
//
// Inspected once per state change: a pod worker that changes a pod in the runtime brackets the
// change with BeginSync / EndSync. While a pod's sync is under way relists leave the pod alone
// (its record, its cache entry and its events), and EndSync hands over the status the worker
// read after its changes: the PLEG compares it with its record, publishes the events it shows,
// stores it in the cache and records it as the pod's last seen state, so the relists after it
// see no change and do not read the pod again. An observation older than the relist that
// compares (or the other way round) is never applied over a newer one.
//
// Healthy() fails when the last relist started more than `relist_threshold` ago (3 min).
// Thread-safety: Relist() runs on the PLEG thread (or the test's); the rest as the interface.
#ifndef KUBELET_KUBELET_PLEG_GENERIC_H_
#define KUBELET_KUBELET_PLEG_GENERIC_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/loops.h"
#include "kubelet/container/cache.h"
#include "kubelet/container/runtime.h"
#include "kubelet/pleg/pleg.h"

namespace kubelet::pleg {

struct GenericPLEGOptions {
  absl::Duration relist_period = absl::Seconds(1);
  absl::Duration relist_threshold = absl::Minutes(3);
  // Observes each relist's duration and the interval since the previous one (metrics hook).
  std::function<void(absl::Duration duration, absl::Duration interval)> on_relist;
  // Events() rings this doorbell (the consumer's, which must outlive the PLEG) instead of a
  // descriptor of its own.
  const Doorbell* events_bell = nullptr;
  // The runner of the relist loop; null: a thread of its own. Must outlive the PLEG.
  Loops* loops = nullptr;
};

class GenericPLEG final : public PodLifecycleEventGenerator {
 public:
  GenericPLEG(GenericPLEGOptions options, container::Runtime& runtime, container::Cache& cache,
              const Clock& clock);
  ~GenericPLEG() override;

  void Start() override;
  void Stop() override;
  EventQueue<PodLifecycleEvent>& Events() override { return events_; }
  absl::Status Healthy() const override;

  // One relist; exposed for tests and for an immediate relist on demand.
  void Relist();
  void UpdateRunningMetrics(const std::vector<container::Pod>& pods);
  // The runtime's pods as of the last successful relist (upstream's runtime cache): lets
  // housekeeping find orphans without listing the runtime a second time. Shared, immutable.
  std::shared_ptr<const std::vector<container::Pod>> LastRelistPods() const;
  // Pod `uid` as the PLEG last recorded it: the last relist's listing or a sync's
  // observation (EndSync), whichever it took last. Younger than LastRelistPods' listing when a
  // worker handed over what it read after its changes (e.g. after stopping the pod's
  // containers); older when a relist skipped the pod during a sync that ended without an
  // observation. nullopt when the PLEG holds no record of the pod (never listed, or no longer).
  std::optional<container::Pod> LastSeen(const std::string& uid) const;

  // A pod worker is about to change pod `uid` in the runtime: relists skip the pod until
  // EndSync. Calls nest per pod (a count). Thread-safe.
  void BeginSync(const std::string& uid);
  // Ends BeginSync. `observed`, when given, is the pod's status read after the changes, at
  // `observed_at`: it is compared with the pod's record (events published), stored in the
  // cache (as `after_sync`: the worker's next step need not wait for a relist) and becomes the
  // record. Without it the next relist compares the pod as usual.
  void EndSync(const std::string& uid, const container::PodStatus* observed,
               absl::Time observed_at);

  // Asks the PLEG thread to relist now instead of waiting for the period (e.g. right after a
  // pod worker started or stopped containers), cutting reaction latency.
  void Poke();

  // Reads one pod's status from the runtime and applies it as EndSync's observation does,
  // timestamped now (upstream UpdateCache: a pod worker refreshing a pod whose resize is in
  // progress, which no relist event would). Thread-safe; the runtime's error is returned.
  absl::Status UpdateCache(const std::string& uid, const std::string& name,
                           const std::string& namespace_);

 private:
  struct PodRecord {
    container::Pod old_pod;  // the last state seen (a relist's or an observation's)
    bool has_old = false;
    // When old_pod was read by an observation (EndSync); a relist that listed before it
    // leaves the record alone.
    absl::Time observed_at = absl::InfinitePast();
  };

  // Compares `old_pod` with `new_pod` (either may be null) and appends the events.
  static void Diff(const std::string& pod_id, const container::Pod* old_pod,
                   const container::Pod* new_pod, std::vector<PodLifecycleEvent>* out);
  void Publish(std::vector<PodLifecycleEvent>& events, absl::Time observed);

  GenericPLEGOptions options_;
  container::Runtime& runtime_;
  container::Cache& cache_;
  const Clock& clock_;
  EventQueue<PodLifecycleEvent> events_;
  mutable absl::Mutex mu_;
  std::map<std::string, PodRecord> records_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> needs_reinspection_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> in_flight_ ABSL_GUARDED_BY(mu_);  // uid -> BeginSync count
  std::atomic<int64_t> last_relist_unix_nanos_{0};
  mutable absl::Mutex pods_mu_;
  std::shared_ptr<const std::vector<container::Pod>> last_pods_ ABSL_GUARDED_BY(pods_mu_);
  absl::Time last_relist_start_ = absl::InfinitePast();  // PLEG thread only
  // The relist loop, on options_.loops or a runner of its own; set once by Start().
  std::unique_ptr<Loops> own_loops_;
  absl::Mutex loop_mu_;
  std::unique_ptr<Loop> loop_ ABSL_GUARDED_BY(loop_mu_);
  bool stopped_ ABSL_GUARDED_BY(loop_mu_) = false;
};

}  // namespace kubelet::pleg

#endif  // KUBELET_KUBELET_PLEG_GENERIC_H_
