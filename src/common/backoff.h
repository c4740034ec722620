// Per-id exponential back-off, a port of client-go's flowcontrol.Backoff (without jitter, which
// the kubelet does not use).
//
// Each id has an entry {backoff, last_update}. Next(id, t) starts an entry at `initial` or
// doubles it (capped at `max`); an entry is considered stale - and starts over at `initial` -
// once more than 2*max passed between its last update and the event time given to Next/IsIn*.
// This is how the kubelet resets a crash loop: a container that ran for over 10 minutes (with
// the default max of 5 minutes) before failing again restarts after the initial 10 s.
//
// Users in the kubelet:
//   crash-loop back-off  (10 s .. 5 min, key = pod name/namespace/uid/container/hash),
//   image pull back-off  (10 s .. 5 min, key = "<pod uid>_<image>").
//
// Thread-safety: all methods are thread-safe. Time comes from the injected Clock.
#ifndef KUBELET_COMMON_BACKOFF_H_
#define KUBELET_COMMON_BACKOFF_H_

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace kubelet {

class Backoff {
 public:
  // `clock` must outlive the Backoff.
  Backoff(Clock& clock, absl::Duration initial, absl::Duration max);

  Backoff(const Backoff&) = delete;
  Backoff& operator=(const Backoff&) = delete;

  // The current back-off of `id`, zero when there is no entry.
  absl::Duration Get(std::string_view id) const;

  // Moves `id` one step further: a new or stale (relative to `event_time`) entry starts at the
  // initial duration, otherwise the duration doubles up to the maximum. The entry's last update
  // becomes Clock::Now().
  void Next(std::string_view id, absl::Time event_time);

  // Forgets `id`.
  void Reset(std::string_view id);

  // True while less than the current back-off has passed since `event_time` (e.g. the time the
  // container last finished). False without an entry or when the entry is stale.
  bool IsInBackOffSince(std::string_view id, absl::Time event_time) const;

  // True while `event_time` is less than the current back-off after the entry's last update.
  bool IsInBackOffSinceUpdate(std::string_view id, absl::Time event_time) const;

  // Drops entries not updated for more than 2*max.
  void GC();

  // Drops every entry whose id satisfies `pred` (called under the lock: it must not call back
  // into this object).
  void DeleteIf(const std::function<bool(std::string_view id)>& pred);

  size_t size() const;

  absl::Duration initial() const { return initial_; }
  absl::Duration max() const { return max_; }

 private:
  struct Entry {
    absl::Duration backoff;
    absl::Time last_update;
  };

  bool HasExpired(absl::Time event_time, absl::Time last_update) const {
    return event_time - last_update > max_ * 2;
  }

  Clock& clock_;
  const absl::Duration initial_;
  const absl::Duration max_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry, std::less<>> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet

#endif  // KUBELET_COMMON_BACKOFF_H_
