// Eventually(pred): polls `pred` until it holds or `timeout` of real time has passed; whether it
// held. The one wait-for-a-condition helper of the unit tests. The timeout is a liveness bound
// for code running on other threads, never a timing assertion: budgets are generous because the
// machines are shared. Code under a FakeClock is advanced by the test and checked with
// Eventually, never slept through.
#ifndef KUBELET_COMMON_TESTING_EVENTUALLY_H_
#define KUBELET_COMMON_TESTING_EVENTUALLY_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kubelet::testing {

inline constexpr absl::Duration kEventuallyTimeout = absl::Seconds(20);

template <typename Pred>
bool Eventually(Pred&& pred, absl::Duration timeout = kEventuallyTimeout,
                absl::Duration poll = absl::Milliseconds(5)) {
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    if (pred()) return true;
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(poll);
  }
}

}  // namespace kubelet::testing

#endif  // KUBELET_COMMON_TESTING_EVENTUALLY_H_
