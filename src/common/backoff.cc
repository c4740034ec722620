#include "common/backoff.h"

#include <algorithm>
#include <iterator>

namespace kubelet {

Backoff::Backoff(Clock& clock, absl::Duration initial, absl::Duration max)
    : clock_(clock), initial_(initial), max_(max) {}

absl::Duration Backoff::Get(std::string_view id) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(id);
  return it == entries_.end() ? absl::ZeroDuration() : it->second.backoff;
}

void Backoff::Next(std::string_view id, absl::Time event_time) {
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(id);
  if (it == entries_.end() || HasExpired(event_time, it->second.last_update)) {
    entries_[std::string(id)] = Entry{initial_, now};
    return;
  }
  it->second.backoff = std::min(it->second.backoff * 2, max_);
  it->second.last_update = now;
}

void Backoff::Reset(std::string_view id) {
  absl::MutexLock lock(&mu_);
  if (auto it = entries_.find(id); it != entries_.end()) entries_.erase(it);
}

bool Backoff::IsInBackOffSince(std::string_view id, absl::Time event_time) const {
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  if (HasExpired(event_time, it->second.last_update)) return false;
  return now - event_time < it->second.backoff;
}

bool Backoff::IsInBackOffSinceUpdate(std::string_view id, absl::Time event_time) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  if (HasExpired(event_time, it->second.last_update)) return false;
  return event_time - it->second.last_update < it->second.backoff;
}

void Backoff::GC() {
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = now - it->second.last_update > max_ * 2 ? entries_.erase(it) : std::next(it);
  }
}

void Backoff::DeleteIf(const std::function<bool(std::string_view id)>& pred) {
  absl::MutexLock lock(&mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = pred(it->first) ? entries_.erase(it) : std::next(it);
  }
}

size_t Backoff::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace kubelet
