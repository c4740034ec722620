// A client-side token bucket (client-go's flowcontrol.NewTokenBucketRateLimiter, which is
// golang.org/x/time/rate underneath): `qps` tokens a second refill a bucket of `burst` tokens,
// the bucket starts full, and every request takes one token, waiting for it when the bucket is
// empty. Waiting callers queue by reservation: each Reserve() takes its token at once (the
// count may go negative) and is told how long to wait, so throughput stays exactly qps under
// contention without a thread per waiter.
//
// Thread-safety: all methods are thread-safe. Time comes from the injected Clock (Reserve's
// arithmetic); Wait() sleeps in real time on the calling thread.
#ifndef KUBELET_APICLIENT_RATE_LIMITER_H_
#define KUBELET_APICLIENT_RATE_LIMITER_H_

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace kubelet::apiclient {

class TokenBucket {
 public:
  // `clock` must outlive the bucket. qps <= 0 disables limiting (every call passes at once).
  TokenBucket(Clock& clock, double qps, int burst);

  TokenBucket(const TokenBucket&) = delete;
  TokenBucket& operator=(const TokenBucket&) = delete;

  // Takes a token if one is available now.
  bool TryAccept();

  // Takes a token now (possibly on credit) and returns how long the caller must wait before it
  // is its turn: zero when the bucket had one.
  absl::Duration Reserve();

  // Returns a token reserved but not used (a cancelled wait), so later callers are not delayed
  // by it.
  void Cancel();

  // Reserve() then sleeps the delay. Returns CancelledError early (and gives the token back)
  // when the calling thread's Cancellation (common/cancellation.h) is cancelled.
  absl::Status Wait();

  // Tokens available now (negative while callers wait on credit); for tests and metrics.
  double Tokens();

 private:
  void RefillLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock& clock_;
  const double qps_;
  const double burst_;
  absl::Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_);
  absl::Time last_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet::apiclient

#endif  // KUBELET_APICLIENT_RATE_LIMITER_H_
