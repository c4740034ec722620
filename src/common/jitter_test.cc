#include "common/jitter.h"

#include "gtest/gtest.h"

namespace kubelet {
namespace {

TEST(Jitter, AddsUpToTheFactorOfThePeriod) {
  EXPECT_EQ(JitterWith(absl::Seconds(10), 0.04, 0), absl::Seconds(10));
  EXPECT_EQ(JitterWith(absl::Seconds(10), 0.04, 0.5), absl::Milliseconds(10200));
  EXPECT_LT(JitterWith(absl::Seconds(10), 0.04, 1.0), absl::Milliseconds(10400));
  // A factor of zero or less is 1.0, as apimachinery's wait.Jitter.
  EXPECT_EQ(JitterWith(absl::Seconds(10), 0, 0.5), absl::Seconds(15));
}

TEST(Jitter, RandomPeriodsStayInRangeAndSpread) {
  absl::Duration lo = absl::InfiniteDuration(), hi = absl::ZeroDuration();
  for (int i = 0; i < 1000; ++i) {
    const absl::Duration d = Jitter(absl::Seconds(10), 0.04);
    ASSERT_GE(d, absl::Seconds(10));
    ASSERT_LT(d, absl::Milliseconds(10400));
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  // A thousand draws cover most of the 400 ms range.
  EXPECT_GT(hi - lo, absl::Milliseconds(300));
}

}  // namespace
}  // namespace kubelet
