#include "common/duration.h"

#include "gtest/gtest.h"

namespace kubelet {
namespace {

TEST(GoDuration, ParsesGoForms) {
  EXPECT_EQ(*ParseGoDuration("1m30s"), absl::Seconds(90));
  EXPECT_EQ(*ParseGoDuration("300ms"), absl::Milliseconds(300));
  EXPECT_EQ(*ParseGoDuration("1.5h"), absl::Minutes(90));
  EXPECT_EQ(*ParseGoDuration("0"), absl::ZeroDuration());
  EXPECT_EQ(*ParseGoDuration("-2s"), absl::Seconds(-2));
  EXPECT_EQ(*ParseGoDuration("1h2m3s4ms5us6ns"), absl::Hours(1) + absl::Minutes(2) +
                                                     absl::Seconds(3) + absl::Milliseconds(4) +
                                                     absl::Microseconds(5) + absl::Nanoseconds(6));
}

TEST(GoDuration, RejectsBadInput) {
  EXPECT_EQ(ParseGoDuration("5x").status().message(),
            "time: unknown unit \"x\" in duration \"5x\"");
  EXPECT_EQ(ParseGoDuration("10").status().message(), "time: missing unit in duration \"10\"");
  EXPECT_FALSE(ParseGoDuration("").ok());
  EXPECT_FALSE(ParseGoDuration("s").ok());
  EXPECT_FALSE(ParseGoDuration("99999999999999h").ok());
}

TEST(GoDuration, FormatsLikeGo) {
  EXPECT_EQ(FormatGoDuration(absl::ZeroDuration()), "0s");
  EXPECT_EQ(FormatGoDuration(absl::Minutes(5)), "5m0s");
  EXPECT_EQ(FormatGoDuration(absl::Seconds(90)), "1m30s");
  EXPECT_EQ(FormatGoDuration(absl::Hours(4)), "4h0m0s");
  EXPECT_EQ(FormatGoDuration(absl::Milliseconds(100)), "100ms");
  EXPECT_EQ(FormatGoDuration(absl::Milliseconds(1500)), "1.5s");
  EXPECT_EQ(FormatGoDuration(absl::Nanoseconds(12)), "12ns");
  EXPECT_EQ(FormatGoDuration(absl::Microseconds(3)), "3\xc2\xb5s");
  EXPECT_EQ(FormatGoDuration(absl::Seconds(-20)), "-20s");
  for (const char* s : {"1m0s", "20s", "2h3m4.5s", "10ms"}) {
    EXPECT_EQ(FormatGoDuration(*ParseGoDuration(s)), s);
  }
}

}  // namespace
}  // namespace kubelet
