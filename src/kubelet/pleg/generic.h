// GenericPLEG: the relisting PLEG (upstream pleg/generic.go).
//
// Every relist: GetPods(all=true); per container (sandboxes included) the state is compared
// with the previous relist's, producing ContainerStarted / ContainerDied / ContainerRemoved /
// ContainerChanged; for each pod that had events (or whose last inspection failed) the runtime's
// PodStatus is read and stored in the cache with the relist timestamp; finally the cache's
// global timestamp moves to the relist time. Events are then published (ContainerChanged is not
// published, as upstream).
//
// Healthy() fails when the last relist started more than `relist_threshold` ago (3 min).
// Thread-safety: Relist() runs on the PLEG thread (or the test's); the rest as the interface.
#ifndef KUBELET_KUBELET_PLEG_GENERIC_H_
#define KUBELET_KUBELET_PLEG_GENERIC_H_

#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "kubelet/container/cache.h"
#include "kubelet/container/runtime.h"
#include "kubelet/pleg/pleg.h"

namespace kubelet::pleg {

struct GenericPLEGOptions {
  absl::Duration relist_period = absl::Seconds(1);
  absl::Duration relist_threshold = absl::Minutes(3);
  // Observes each relist's duration and the interval since the previous one (metrics hook).
  std::function<void(absl::Duration duration, absl::Duration interval)> on_relist;
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
  // housekeeping find orphans without listing the runtime a second time.
  std::vector<container::Pod> LastRelistPods() const;

  // Asks the PLEG thread to relist now instead of waiting for the period (e.g. right after a
  // pod worker started or stopped containers), cutting reaction latency.
  void Poke();

  // Reads one pod's status from the runtime and stores it in the cache, timestamped now
  // (upstream UpdateCache: a pod worker refreshing a pod whose resize is in progress, which
  // no relist event would). Thread-safe; the runtime's error is returned.
  absl::Status UpdateCache(const std::string& uid, const std::string& name,
                           const std::string& namespace_);

 private:
  struct PodRecord {
    container::Pod old_pod;
    container::Pod current;
    bool has_old = false;
    bool has_current = false;
  };

  GenericPLEGOptions options_;
  container::Runtime& runtime_;
  container::Cache& cache_;
  const Clock& clock_;
  EventQueue<PodLifecycleEvent> events_;
  std::map<std::string, PodRecord> records_;  // PLEG thread only
  std::set<std::string> needs_reinspection_;  // PLEG thread only
  std::atomic<int64_t> last_relist_unix_nanos_{0};
  mutable absl::Mutex pods_mu_;
  std::vector<container::Pod> last_pods_ ABSL_GUARDED_BY(pods_mu_);
  absl::Time last_relist_start_ = absl::InfinitePast();  // PLEG thread only
  int poke_fd_ = -1;
  int stop_fd_ = -1;
  std::thread thread_;
};

}  // namespace kubelet::pleg

#endif  // KUBELET_KUBELET_PLEG_GENERIC_H_
