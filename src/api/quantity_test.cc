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
