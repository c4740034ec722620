// The pod status cache (upstream kubecontainer.Cache): the latest runtime PodStatus per pod UID,
// written by PLEG after each relist and read by pod workers. Each entry records when it was
// observed; a global timestamp records the last full relist, so "nothing changed for this pod
// since T" is also knowable.
//
// GetNewerThan blocks until the cache holds data for the pod observed after `min_time` (the pod
// worker's last sync), so a worker never acts on a status older than its own previous action.
//
// Thread-safety: all methods are thread-safe.
#ifndef KUBELET_KUBELET_CONTAINER_CACHE_H_
#define KUBELET_KUBELET_CONTAINER_CACHE_H_

#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/cancellation.h"
#include "common/clock.h"
#include "kubelet/container/runtime.h"

namespace kubelet::container {

class Cache {
 public:
  struct Entry {
    PodStatus status;
    absl::Status error;
    absl::Time modified = absl::InfinitePast();
    // The status was read by the pod's worker after its last changes to the runtime (and no
    // change has begun since): it satisfies GetNewerThan whatever the time.
    bool after_sync = false;
  };

  // The cached entry, or an empty status (id = uid) when the pod is unknown.
  Entry Get(const std::string& uid) const;
  // Blocks until an entry for `uid` newer than `min_time` exists (or the global timestamp passes
  // `min_time`, meaning the pod had no changes, or the entry is `after_sync`), or until
  // `timeout` of `clock`'s time elapses,
  // or until the calling thread's cancellation (common/cancellation.h) is cancelled; then
  // returns Get().
  Entry GetNewerThan(const std::string& uid, absl::Time min_time, const Clock& clock,
                     absl::Duration timeout) const;

  // Stores the pod's status observed at `timestamp`, unless the entry holds a newer one (a
  // relist's inspection that finishes after a pod worker's own observation).
  void Set(const std::string& uid, PodStatus status, absl::Status error, absl::Time timestamp,
           bool after_sync = false);
  // The pod's worker begins to change the runtime: the entry is no longer `after_sync`.
  void BeginChange(const std::string& uid);
  // Advances the global timestamp: every pod's data is known to be current as of `timestamp`.
  void UpdateTime(absl::Time timestamp);
  void Delete(const std::string& uid);

 private:
  bool IsNewer(const std::string& uid, absl::Time min_time) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, Entry> pods_ ABSL_GUARDED_BY(mu_);
  absl::Time global_timestamp_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace kubelet::container

#endif  // KUBELET_KUBELET_CONTAINER_CACHE_H_
