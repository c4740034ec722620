#include "common/backoff.h"

#include "gtest/gtest.h"

namespace kubelet {
namespace {

TEST(BackoffTest, DoublesUpToMax) {
  FakeClock clock;
  Backoff b(clock, absl::Seconds(10), absl::Minutes(5));
  EXPECT_EQ(b.Get("x"), absl::ZeroDuration());
  const absl::Duration want[] = {absl::Seconds(10),  absl::Seconds(20),  absl::Seconds(40),
                                 absl::Seconds(80),  absl::Seconds(160), absl::Seconds(300),
                                 absl::Seconds(300), absl::Seconds(300)};
  for (absl::Duration d : want) {
    b.Next("x", clock.Now());
    EXPECT_EQ(b.Get("x"), d);
    clock.Advance(absl::Seconds(1));
  }
}

TEST(BackoffTest, IsInBackOffSince) {
  FakeClock clock;
  Backoff b(clock, absl::Seconds(10), absl::Minutes(5));
  const absl::Time finished = clock.Now();
  EXPECT_FALSE(b.IsInBackOffSince("x", finished));  // no entry
  b.Next("x", finished);
  EXPECT_TRUE(b.IsInBackOffSince("x", finished));
  clock.Advance(absl::Seconds(9));
  EXPECT_TRUE(b.IsInBackOffSince("x", finished));
  clock.Advance(absl::Seconds(1));
  EXPECT_FALSE(b.IsInBackOffSince("x", finished));
}

TEST(BackoffTest, StaleEntryStartsOver) {
  FakeClock clock;
  Backoff b(clock, absl::Seconds(10), absl::Minutes(5));
  b.Next("x", clock.Now());
  b.Next("x", clock.Now());
  b.Next("x", clock.Now());
  EXPECT_EQ(b.Get("x"), absl::Seconds(40));
  // The container then ran cleanly for more than 2*max before failing again.
  clock.Advance(absl::Minutes(11));
  const absl::Time finished = clock.Now();
  EXPECT_FALSE(b.IsInBackOffSince("x", finished));
  b.Next("x", finished);
  EXPECT_EQ(b.Get("x"), absl::Seconds(10));
}

TEST(BackoffTest, IsInBackOffSinceUpdate) {
  FakeClock clock;
  Backoff b(clock, absl::Seconds(10), absl::Minutes(5));
  b.Next("img", clock.Now());
  EXPECT_TRUE(b.IsInBackOffSinceUpdate("img", clock.Now()));
  clock.Advance(absl::Seconds(10));
  EXPECT_FALSE(b.IsInBackOffSinceUpdate("img", clock.Now()));
  b.Next("img", clock.Now());
  clock.Advance(absl::Seconds(19));
  EXPECT_TRUE(b.IsInBackOffSinceUpdate("img", clock.Now()));
}

TEST(BackoffTest, ResetGCAndDeleteIf) {
  FakeClock clock;
  Backoff b(clock, absl::Seconds(10), absl::Minutes(5));
  b.Next("a", clock.Now());
  b.Next("b", clock.Now());
  b.Next("uid1_x", clock.Now());
  b.Reset("a");
  EXPECT_EQ(b.Get("a"), absl::ZeroDuration());
  EXPECT_EQ(b.size(), 2u);
  b.DeleteIf([](std::string_view id) { return id.substr(0, 5) == "uid1_"; });
  EXPECT_EQ(b.size(), 1u);
  clock.Advance(absl::Minutes(10));
  b.GC();  // exactly 2*max: kept
  EXPECT_EQ(b.size(), 1u);
  clock.Advance(absl::Seconds(1));
  b.GC();
  EXPECT_EQ(b.size(), 0u);
}

}  // namespace
}  // namespace kubelet
