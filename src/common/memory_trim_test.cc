#include "common/memory_trim.h"

#include <atomic>

#include "common/testing/eventually.h"
#include "gtest/gtest.h"

namespace kubelet {
namespace {

using testing::Eventually;

TEST(MemoryTrimmerTest, TrimsOncePerPeriodOfTheClock) {
  FakeClock clock;
  std::atomic<int> trims{0};
  {
    MemoryTrimmer trimmer(clock, absl::Minutes(1), [&] { ++trims; });
    ASSERT_TRUE(Eventually([&] { return clock.Waiters() == 1; }));
    clock.Advance(absl::Seconds(59));
    absl::SleepFor(absl::Milliseconds(20));
    EXPECT_EQ(trims.load(), 0);
    clock.Advance(absl::Seconds(1));
    ASSERT_TRUE(Eventually([&] { return trims.load() == 1; }));
    ASSERT_TRUE(Eventually([&] { return clock.Waiters() == 1; }));
    clock.Advance(absl::Minutes(1));
    ASSERT_TRUE(Eventually([&] { return trims.load() == 2; }));
  }  // stops without waiting for the next period
  EXPECT_EQ(trims.load(), 2);
}

}  // namespace
}  // namespace kubelet
