// PodConfig merges the pod configuration of every source (file, http, api) into one stream of
// incremental updates for the sync loop: upstream pkg/kubelet/config/config.go (PodConfig and
// podStorage in PodConfigNotificationIncremental mode).
//
// Merge semantics (podStorage.merge / checkAndUpdatePod, per source, pods keyed by UID):
//   * Every incoming pod is stamped kubernetes.io/config.source=<source> before comparison.
//   * Within one update, a pod whose full name (<name>_<namespace>) or UID already appeared is
//     dropped with "Pod failed validation due to duplicate pod name, ignoring" (upstream
//     filterInvalidPods; the UID check guards against two manifests with the same explicit
//     metadata.uid). Pods of different sources are not checked against each other (nor are
//     they upstream).
//   * A pod new to the source is an ADD; kubernetes.io/config.seen is stamped with the clock.
//   * A known pod whose spec, labels, deletionTimestamp, deletionGracePeriodSeconds or
//     annotations changed is an UPDATE (a DELETE when the new version has a deletionTimestamp).
//     The local annotations kubernetes.io/config.source, config.mirror and config.seen are
//     ignored by the comparison and keep their stored values, so a re-read manifest with a new
//     config.seen is not a change. Other metadata (resourceVersion, ...) keeps its first value.
//   * A known pod whose only difference is its status is a RECONCILE.
//   * SET: stored pods missing from the snapshot are a REMOVE. REMOVE drops the listed pods.
//     ADD/UPDATE/DELETE merge the listed pods as above without removing anything.
// Sharing: pods arrive and leave as api::PodPtr and are never modified in place. An ADD stores
// (and emits) one new object: the source's pod with config.source and config.seen stamped. An
// UPDATE, DELETE or RECONCILE builds the merged version once (the stored metadata with the new
// spec, labels, deletion fields, annotations and status; or the stored pod with the new status)
// and stores and emits that object; REMOVE emits the stored object. A pod handed in again as the
// very object last merged (the source kept it, e.g. an unchanged manifest or an API pod whose
// event concerned another pod) is known to be unchanged without comparing it.
// Each Merge emits, in this order and only when non-empty: REMOVE, ADD, UPDATE, DELETE,
// RECONCILE; the first SET of a source that yields no ADD/UPDATE/DELETE emits an empty ADD so the
// consumer learns the source is ready. An unchanged snapshot emits nothing.
//
// Delivery: a bounded FIFO (capacity 50 updates, like upstream's channel). Producers block while
// it is full or another producer is mid-merge (SetSource/Merge return false if Shutdown() or
// their `cancel` flag ends the wait: that update is then lost, which only happens while
// stopping). The consumer either polls fd()
// (an eventfd readable exactly while updates are pending) and calls Drain(), or calls Next().
// The consumer must never call Merge/SetSource/Sync from its own thread while the queue could be
// full (it would wait for itself).
//
// Thread-safety: every method may be called from any thread; updates from concurrent producers
// are serialized, and each Merge's updates are enqueued contiguously and in order.
// Ownership: the Clock is borrowed and must outlive the PodConfig.
#ifndef KUBELET_KUBELET_PODSOURCE_POD_CONFIG_H_
#define KUBELET_KUBELET_PODSOURCE_POD_CONFIG_H_

#include <atomic>
#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/pod.h"
#include "common/clock.h"
#include "common/event_queue.h"
#include "kubelet/podsource/pod_update.h"

namespace kubelet::podsource {

struct PodConfigOptions {
  size_t queue_capacity = 50;
  // Pushes ring this doorbell, and fd() is its (the consumer clears it before Drain; -1 for a
  // doorbell that calls back), not a descriptor of the PodConfig's own; must outlive the
  // PodConfig.
  const Doorbell* bell = nullptr;
};

class PodConfig {
 public:
  explicit PodConfig(Clock& clock, PodConfigOptions options = {});
  ~PodConfig();
  PodConfig(const PodConfig&) = delete;
  PodConfig& operator=(const PodConfig&) = delete;

  // Registers a configured source (upstream PodConfig.Channel). SeenAllSources is true only once
  // every registered source has delivered a SET. The file and http sources register themselves
  // when constructed; the API source must be registered by whoever feeds it.
  void AddSource(std::string_view source);
  std::vector<std::string> Sources() const;

  // A full snapshot of `source` (a SET). Null pods are ignored (here and in Merge). Blocks while
  // the queue is full; returns false when the wait ended because of Shutdown() or *cancel (checked
  // at least every 50 ms).
  bool SetSource(std::string_view source, std::vector<api::PodPtr> pods,
                 const std::atomic<bool>* cancel = nullptr);
  // Any operation from a source: SET, ADD, UPDATE, DELETE or REMOVE (RECONCILE is ignored with a
  // log line, as upstream). Same blocking contract as SetSource.
  bool Merge(PodUpdate update, const std::atomic<bool>* cancel = nullptr);

  // Upstream SeenAllSources: `seen_by_consumer` (the sources the sync loop has received updates
  // from) contains every registered source, and each registered source has delivered a SET.
  bool SeenAllSources(const std::set<std::string>& seen_by_consumer) const;

  // Enqueues a SET of the merged state of all sources with source "*" (upstream Sync).
  bool Sync(const std::atomic<bool>* cancel = nullptr);
  // Every stored pod (shared), ordered by source name, then UID.
  std::vector<api::PodPtr> MergedState() const;

  // --- Consumer side.
  // Readable (POLLIN) exactly while at least one update is pending. Valid for the lifetime.
  int fd() const { return event_fd_; }
  // Takes every pending update, oldest first (possibly none).
  std::vector<PodUpdate> Drain();
  // Waits up to `timeout` for the next update.
  std::optional<PodUpdate> Next(absl::Duration timeout);
  size_t Pending() const;

  // Wakes and fails blocked producers; later producer calls return false at once. Pending
  // updates stay available to the consumer.
  void Shutdown();

 private:
  struct StoredPod {
    api::PodPtr pod;  // the merged version, as emitted
    // The source's object last merged into `pod`, kept only while the source holds it too (so
    // keeping it costs nothing); null otherwise.
    api::PodPtr ref;
  };
  using PodMap = std::map<std::string, StoredPod>;  // UID -> pod

  struct MergeResult {
    std::vector<api::PodPtr> adds, updates, deletes, removes, reconciles;
  };

  MergeResult MergeLocked(const std::string& source, PodUpdate& update)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpdatePods(const std::string& source, const std::vector<api::PodPtr>& new_pods,
                  PodMap& old_pods, PodMap& pods, MergeResult& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<api::PodPtr> MergedStateLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Waits until no other producer is merging (so each Merge's updates are enqueued in order and
  // contiguously) and claims the producer role. False when shut down / cancelled.
  bool AcquireProducerLocked(const std::atomic<bool>* cancel) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits for queue space, then appends. False when shut down / cancelled.
  bool PushLocked(PodUpdate update, const std::atomic<bool>* cancel)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ResetFdIfEmptyLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock& clock_;
  const PodConfigOptions options_;
  const Doorbell* const bell_;
  const bool own_fd_;
  const int event_fd_;

  mutable absl::Mutex mu_;
  bool producing_ ABSL_GUARDED_BY(mu_) = false;  // a Merge/Sync is in progress
  std::set<std::string> sources_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> sources_seen_ ABSL_GUARDED_BY(mu_);  // delivered at least one SET
  std::map<std::string, PodMap> pods_ ABSL_GUARDED_BY(mu_);  // source -> pods
  std::deque<PodUpdate> queue_ ABSL_GUARDED_BY(mu_);
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace kubelet::podsource

#endif  // KUBELET_KUBELET_PODSOURCE_POD_CONFIG_H_
