#include "api/quantity.h"

#include "gtest/gtest.h"

namespace kubelet::api {
namespace {

Quantity Q(std::string_view s) {
  auto q = Quantity::Parse(s);
  EXPECT_TRUE(q.ok()) << s << ": " << q.status();
  return q.ok() ? *q : Quantity();
}

TEST(Quantity, ParsesAllSuffixForms) {
  EXPECT_EQ(Q("100Mi").Value(), 100 * 1024 * 1024);
  EXPECT_EQ(Q("1Gi").Value(), 1024LL * 1024 * 1024);
  EXPECT_EQ(Q("500m").MilliValue(), 500);
  EXPECT_EQ(Q("1.5").MilliValue(), 1500);
  EXPECT_EQ(Q("2e3").Value(), 2000);
  EXPECT_EQ(Q("1k").Value(), 1000);
  EXPECT_EQ(Q("1G").Value(), 1000000000);
  EXPECT_EQ(Q("100m").Value(), 1);  // rounds up
  EXPECT_EQ(Q("-1").Value(), -1);
  EXPECT_EQ(Q("+5").Value(), 5);
  EXPECT_EQ(Q(".5").MilliValue(), 500);
}

TEST(Quantity, RejectsGarbage) {
  for (const char* s : {"", "abc", "1Mb", "1.2.3", "--1", "1e", "Mi"}) {
    EXPECT_FALSE(Quantity::Parse(s).ok()) << s;
  }
}

// Found by fuzz/quantity_fuzzer.cc: digits times a large multiplier ("...Ei") overflowed int128
// while checking the bound, values near 1e30 overflowed it when scaled to nano units, and the
// canonical form of a large value with a fraction ("...n") was refused as too large.
TEST(Quantity, TooLargeIsAnErrorWithoutOverflow) {
  for (const char* s : {"55555555555555555551.3Ei", "1000000000000000000000000000000",
                        "100000000000000000000000000000.1", "99999999999999999999.999999999999Ei",
                        "-170141183460469231731687303715884105727"}) {
    absl::StatusOr<Quantity> q = Quantity::Parse(s);
    ASSERT_FALSE(q.ok()) << s;
    EXPECT_EQ(q.status().message(), "quantity too large") << s;
  }
  // Large accepted values round-trip through their canonical form.
  for (const char* s : {"100000000000000000000000000000", "86000000000Ei", "1e18", "2332.1276212Ei",
                        "99999999999999999999999999999.999999999"}) {
    absl::StatusOr<Quantity> q = Quantity::Parse(s);
    ASSERT_TRUE(q.ok()) << s << ": " << q.status();
    absl::StatusOr<Quantity> again = Quantity::Parse(q->String());
    ASSERT_TRUE(again.ok()) << q->String() << ": " << again.status();
    EXPECT_EQ(*again, *q) << s;
  }
  EXPECT_EQ(Q("2332.1276212Ei").String(), "2688760085969090879371293491200n");
  // Trailing zeros of a fraction do not count against the bound.
  EXPECT_EQ(Q("1000000000000.000000000000000000"), Q("1T"));
}

TEST(Quantity, CanonicalString) {
  EXPECT_EQ(Q("1536Mi").String(), "1536Mi");
  EXPECT_EQ(Q("1024Mi").String(), "1Gi");
  EXPECT_EQ(Q("2000m").String(), "2");
  EXPECT_EQ(Q("1500m").String(), "1500m");
  EXPECT_EQ(Q("0.1").String(), "100m");
  EXPECT_EQ(Q("1000").String(), "1k");
  EXPECT_EQ(Q("0").String(), "0");
  EXPECT_EQ(Q("100").String(), "100");
}

TEST(Quantity, Arithmetic) {
  EXPECT_EQ((Q("1") + Q("500m")).MilliValue(), 1500);
  EXPECT_TRUE(Q("1Gi") > Q("1G"));
  EXPECT_EQ(Q("1k"), Q("1000"));
  EXPECT_EQ((Q("1") - Q("2")).Sign(), -1);
}

}  // namespace
}  // namespace kubelet::api
