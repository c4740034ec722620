#include "app/process.h"

#include <cstdlib>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace kubelet::app {
namespace {

// Two mutexes taken in both orders, one after the other: a lock-order checker reports a
// possible deadlock (and by default aborts); nothing can deadlock here.
void TakeInBothOrders() {
  absl::Mutex a;
  absl::Mutex b;
  a.Lock();
  b.Lock();
  b.Unlock();
  a.Unlock();
  b.Lock();
  a.Lock();
  a.Unlock();
  b.Unlock();
}

TEST(ProcessTest, LockOrderChecksOffLetTheProcessRunOnAnOrderNeverSeenBefore) {
  // In a child process: the setting is process-wide.
  EXPECT_EXIT(
      {
        DisableLockOrderChecks();
        TakeInBothOrders();
        std::exit(7);
      },
      testing::ExitedWithCode(7), "");
}

}  // namespace
}  // namespace kubelet::app
