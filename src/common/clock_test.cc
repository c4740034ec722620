#include "common/clock.h"

#include <poll.h>

#include <atomic>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/testing/eventually.h"
#include "gtest/gtest.h"

namespace kubelet {
namespace {

using testing::Eventually;

bool Readable(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

TEST(FakeClockTest, TimerFiresWhenTheClockReachesItsDeadline) {
  FakeClock clock;
  auto timer = clock.NewTimer();
  timer->Reset(clock.Now() + absl::Seconds(10));
  EXPECT_FALSE(Readable(timer->fd()));
  EXPECT_EQ(clock.Waiters(), 1);
  clock.Advance(absl::Seconds(9));
  EXPECT_FALSE(Readable(timer->fd()));
  clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(Readable(timer->fd()));
  EXPECT_EQ(clock.Waiters(), 0);  // one-shot
  timer->Clear();
  EXPECT_FALSE(Readable(timer->fd()));
  clock.Advance(absl::Hours(1));
  EXPECT_FALSE(Readable(timer->fd()));
}

TEST(FakeClockTest, ResetToAPastDeadlineFiresAtOnceAndStopDisarms) {
  FakeClock clock;
  auto timer = clock.NewTimer();
  timer->Reset(clock.Now() - absl::Seconds(1));
  EXPECT_TRUE(Readable(timer->fd()));
  timer->Reset(clock.Now() + absl::Seconds(1));  // clears the unconsumed firing
  EXPECT_FALSE(Readable(timer->fd()));
  timer->Stop();
  clock.Advance(absl::Seconds(5));
  EXPECT_FALSE(Readable(timer->fd()));
}

TEST(FakeClockTest, AwaitEndsByTheFakeDeadlineOrTheCondition) {
  FakeClock clock;
  absl::Mutex mu;
  bool flag = false;
  std::atomic<int> result{-1};
  std::thread waiter([&] {
    absl::MutexLock lock(&mu);
    result = clock.AwaitWithTimeout(mu, absl::Condition(&flag), absl::Minutes(10)) ? 1 : 0;
  });
  ASSERT_TRUE(Eventually([&] { return clock.Waiters() == 1; }));
  clock.Advance(absl::Minutes(9));
  EXPECT_EQ(result.load(), -1);
  clock.Advance(absl::Minutes(1));
  ASSERT_TRUE(Eventually([&] { return result.load() != -1; }));
  EXPECT_EQ(result.load(), 0);  // the deadline, not the condition
  waiter.join();

  result = -1;
  std::thread waiter2([&] {
    absl::MutexLock lock(&mu);
    result = clock.AwaitWithTimeout(mu, absl::Condition(&flag), absl::Minutes(10)) ? 1 : 0;
  });
  ASSERT_TRUE(Eventually([&] { return clock.Waiters() == 1; }));
  {
    absl::MutexLock lock(&mu);
    flag = true;
  }
  ASSERT_TRUE(Eventually([&] { return result.load() != -1; }));
  EXPECT_EQ(result.load(), 1);
  waiter2.join();
}

TEST(FakeClockTest, NotificationWaitFollowsTheFakeTime) {
  FakeClock clock;
  absl::Notification n;
  std::atomic<int> result{-1};
  std::thread waiter(
      [&] { result = clock.WaitForNotificationWithTimeout(n, absl::Seconds(30)) ? 1 : 0; });
  ASSERT_TRUE(Eventually([&] { return clock.Waiters() == 1; }));
  clock.Advance(absl::Seconds(30));
  ASSERT_TRUE(Eventually([&] { return result.load() != -1; }));
  EXPECT_EQ(result.load(), 0);
  waiter.join();
}

TEST(RealClockTest, TimerAndWaitsUseTheWallClock) {
  RealClock clock;
  auto timer = clock.NewTimer();
  timer->Reset(clock.Now() + absl::Milliseconds(20));
  struct pollfd p = {timer->fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 10000), 1);  // a liveness bound, not a timing assertion
  timer->Clear();
  EXPECT_FALSE(Readable(timer->fd()));
  timer->Reset(absl::UnixEpoch());
  ASSERT_EQ(::poll(&p, 1, 10000), 1);
  timer->Stop();
  EXPECT_FALSE(Readable(timer->fd()));

  absl::Mutex mu;
  bool never = false;
  absl::MutexLock lock(&mu);
  EXPECT_FALSE(clock.AwaitWithTimeout(mu, absl::Condition(&never), absl::Milliseconds(1)));
  absl::Notification n;
  n.Notify();
  EXPECT_TRUE(clock.WaitForNotificationWithTimeout(n, absl::Seconds(1)));
}

}  // namespace
}  // namespace kubelet
