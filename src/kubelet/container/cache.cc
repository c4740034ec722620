#include "kubelet/container/cache.h"

#include <atomic>

namespace kubelet::container {

Cache::Entry Cache::Get(const std::string& uid) const {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(uid);
  if (it != pods_.end()) return it->second;
  Entry e;
  e.status.id = uid;
  return e;
}

bool Cache::IsNewer(const std::string& uid, absl::Time min_time) const {
  auto it = pods_.find(uid);
  if (it != pods_.end() && (it->second.modified > min_time || it->second.after_sync)) return true;
  return global_timestamp_ > min_time;
}

Cache::Entry Cache::GetNewerThan(const std::string& uid, absl::Time min_time, const Clock& clock,
                                 absl::Duration timeout) const {
  {
    // A cancellation (a kill, the pod workers stopping) ends the wait: its callback releases the
    // lock, which has the condition evaluated again.
    std::atomic<bool> cancelled{false};
    OnCancel on_cancel([this, &cancelled] {
      cancelled = true;
      absl::MutexLock wake(&mu_);
    });
    absl::MutexLock lock(&mu_);
    auto cond = [this, &uid, min_time, &cancelled]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return cancelled.load() || IsNewer(uid, min_time);
    };
    if (!on_cancel.cancelled()) clock.AwaitWithTimeout(mu_, absl::Condition(&cond), timeout);
  }
  return Get(uid);
}

void Cache::Set(const std::string& uid, PodStatus status, absl::Status error, absl::Time timestamp,
                bool after_sync) {
  absl::MutexLock lock(&mu_);
  Entry& e = pods_[uid];
  if (e.modified > timestamp) return;
  e.status = std::move(status);
  e.error = std::move(error);
  e.modified = timestamp;
  e.after_sync = after_sync;
}

void Cache::BeginChange(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  if (auto it = pods_.find(uid); it != pods_.end()) it->second.after_sync = false;
}

void Cache::UpdateTime(absl::Time timestamp) {
  absl::MutexLock lock(&mu_);
  if (timestamp > global_timestamp_) global_timestamp_ = timestamp;
}

void Cache::Delete(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  pods_.erase(uid);
}

}  // namespace kubelet::container
