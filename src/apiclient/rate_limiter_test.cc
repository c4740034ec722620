// Token bucket arithmetic on a fake clock, and the blocking wait.
#include "apiclient/rate_limiter.h"

#include <memory>
#include <thread>

#include "common/cancellation.h"
#include "gtest/gtest.h"

namespace kubelet::apiclient {
namespace {

TEST(TokenBucketTest, BurstThenQps) {
  FakeClock clock;
  TokenBucket b(clock, /*qps=*/50, /*burst=*/100);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(b.TryAccept()) << i;
  EXPECT_FALSE(b.TryAccept());
  clock.Advance(absl::Milliseconds(19));
  EXPECT_FALSE(b.TryAccept());  // 0.95 tokens
  clock.Advance(absl::Milliseconds(1));
  EXPECT_TRUE(b.TryAccept());  // 1 token after 20 ms at 50 qps
  EXPECT_FALSE(b.TryAccept());
  // Refill stops at the burst.
  clock.Advance(absl::Hours(1));
  EXPECT_DOUBLE_EQ(b.Tokens(), 100);
}

TEST(TokenBucketTest, ReservationsQueueOnCredit) {
  FakeClock clock;
  TokenBucket b(clock, /*qps=*/10, /*burst=*/2);
  EXPECT_EQ(b.Reserve(), absl::ZeroDuration());
  EXPECT_EQ(b.Reserve(), absl::ZeroDuration());
  // Each further caller waits one more tenth of a second.
  EXPECT_EQ(b.Reserve(), absl::Milliseconds(100));
  EXPECT_EQ(b.Reserve(), absl::Milliseconds(200));
  EXPECT_EQ(b.Reserve(), absl::Milliseconds(300));
  EXPECT_DOUBLE_EQ(b.Tokens(), -3);
  clock.Advance(absl::Milliseconds(150));
  EXPECT_EQ(b.Reserve(), absl::Milliseconds(250));
  // A cancelled reservation gives its token back to later callers.
  b.Cancel();
  EXPECT_EQ(b.Reserve(), absl::Milliseconds(250));
  clock.Advance(absl::Seconds(10));
  EXPECT_DOUBLE_EQ(b.Tokens(), 2);
}

TEST(TokenBucketTest, DisabledWithoutQps) {
  FakeClock clock;
  TokenBucket b(clock, 0, 1);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(b.Reserve(), absl::ZeroDuration());
  EXPECT_TRUE(b.TryAccept());
}

TEST(TokenBucketTest, WaitSleepsTheDelay) {
  RealClock clock;
  TokenBucket b(clock, /*qps=*/20, /*burst=*/1);
  absl::Time start = absl::Now();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(b.Wait().ok());
  // One free token, then three at 50 ms each.
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(140));
}

TEST(TokenBucketTest, WaitIsCancellable) {
  RealClock clock;
  TokenBucket b(clock, /*qps=*/0.1, /*burst=*/1);
  ASSERT_TRUE(b.Wait().ok());
  auto cancel = std::make_shared<Cancellation>();
  absl::Status result;
  absl::Time start = absl::Now();
  std::thread waiter([&] {
    ScopedCancellation scope(cancel);
    result = b.Wait();  // would wait 10 s
  });
  absl::SleepFor(absl::Milliseconds(50));
  cancel->Cancel();
  waiter.join();
  EXPECT_EQ(result.code(), absl::StatusCode::kCancelled);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  // The token was given back: the next reservation waits one interval, not two.
  EXPECT_LE(b.Reserve(), absl::Seconds(10));
}

}  // namespace
}  // namespace kubelet::apiclient
