#include "apiclient/rate_limiter.h"

#include <algorithm>

#include "common/cancellation.h"

namespace kubelet::apiclient {

TokenBucket::TokenBucket(Clock& clock, double qps, int burst)
    : clock_(clock), qps_(qps), burst_(std::max(1, burst)), tokens_(burst_), last_(clock.Now()) {}

void TokenBucket::RefillLocked(absl::Time now) {
  if (now > last_) {
    tokens_ = std::min(burst_, tokens_ + absl::ToDoubleSeconds(now - last_) * qps_);
    last_ = now;
  }
}

bool TokenBucket::TryAccept() {
  if (qps_ <= 0) return true;
  absl::MutexLock lock(&mu_);
  RefillLocked(clock_.Now());
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

absl::Duration TokenBucket::Reserve() {
  if (qps_ <= 0) return absl::ZeroDuration();
  absl::MutexLock lock(&mu_);
  RefillLocked(clock_.Now());
  tokens_ -= 1;
  if (tokens_ >= 0) return absl::ZeroDuration();
  return absl::Seconds(-tokens_ / qps_);
}

void TokenBucket::Cancel() {
  if (qps_ <= 0) return;
  absl::MutexLock lock(&mu_);
  RefillLocked(clock_.Now());
  tokens_ = std::min(burst_, tokens_ + 1);
}

absl::Status TokenBucket::Wait() {
  absl::Duration delay = Reserve();
  if (delay <= absl::ZeroDuration()) return absl::OkStatus();
  absl::Mutex mu;
  absl::CondVar cv;
  bool cancelled = false;
  {
    OnCancel on_cancel([&] {
      absl::MutexLock l(&mu);
      cancelled = true;
      cv.Signal();
    });
    absl::Time deadline = absl::Now() + delay;
    absl::MutexLock l(&mu);
    cancelled = cancelled || on_cancel.cancelled();
    while (!cancelled && absl::Now() < deadline) cv.WaitWithDeadline(&mu, deadline);
  }
  if (cancelled) {
    Cancel();
    return absl::CancelledError("client rate limiter wait cancelled");
  }
  return absl::OkStatus();
}

double TokenBucket::Tokens() {
  absl::MutexLock lock(&mu_);
  if (qps_ > 0) RefillLocked(clock_.Now());
  return tokens_;
}

}  // namespace kubelet::apiclient
