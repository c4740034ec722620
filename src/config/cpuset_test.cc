#include "config/cpuset.h"

#include "gtest/gtest.h"

namespace kubelet::config {
namespace {

TEST(CPUSetTest, ParseAndFormat) {
  struct Case {
    const char* in;
    const char* out;
    int size;
  } cases[] = {
      {"", "", 0},           {"0", "0", 1},         {"0-3,7", "0-3,7", 5},
      {"7,0-3", "0-3,7", 5}, {"1-1", "1", 1},       {"0,1,2,5,6,9", "0-2,5-6,9", 6},
      {"3,2,1", "1-3", 3},   {"0-2,1-4", "0-4", 5}, {"+3", "3", 1},
  };
  for (const Case& c : cases) {
    auto s = CPUSet::Parse(c.in);
    ASSERT_TRUE(s.ok()) << c.in << ": " << s.status();
    EXPECT_EQ(s->String(), c.out) << c.in;
    EXPECT_EQ(s->Size(), c.size) << c.in;
  }
}

TEST(CPUSetTest, ParseErrors) {
  EXPECT_EQ(CPUSet::Parse("a").status().message(), "strconv.Atoi: parsing \"a\": invalid syntax");
  EXPECT_EQ(CPUSet::Parse("0-3,").status().message(), "strconv.Atoi: parsing \"\": invalid syntax");
  EXPECT_EQ(CPUSet::Parse("5-3").status().message(), "invalid range \"5-3\" (5 > 3)");
  EXPECT_EQ(CPUSet::Parse("-1").status().message(), "strconv.Atoi: parsing \"\": invalid syntax");
  EXPECT_EQ(CPUSet::Parse("1-2-3").status().message(),
            "strconv.Atoi: parsing \"2-3\": invalid syntax");
  EXPECT_EQ(CPUSet::Parse(" 1").status().message(), "strconv.Atoi: parsing \" 1\": invalid syntax");
  EXPECT_EQ(CPUSet::Parse("99999999999999999999").status().message(),
            "strconv.Atoi: parsing \"99999999999999999999\": value out of range");
  EXPECT_FALSE(CPUSet::Parse("0-99999999").ok());
}

TEST(CPUSetTest, SetOps) {
  CPUSet a{0, 1, 2, 3};
  CPUSet b{2, 3, 4};
  EXPECT_EQ(a.Union(b).String(), "0-4");
  EXPECT_EQ(a.Intersection(b).String(), "2-3");
  EXPECT_EQ(a.Difference(b).String(), "0-1");
  EXPECT_TRUE(CPUSet({1, 2}).IsSubsetOf(a));
  EXPECT_FALSE(b.IsSubsetOf(a));
  EXPECT_TRUE(CPUSet().IsSubsetOf(a));
  EXPECT_EQ(CPUSet::Range(4), a);
}

TEST(CPUSetTest, ReservedCPUs) {
  EXPECT_TRUE(ValidateReservedSystemCPUs("", 4).ok());
  EXPECT_TRUE(ValidateReservedSystemCPUs("0,1", 4).ok());
  EXPECT_TRUE(ValidateReservedSystemCPUs("0-3", 4).ok());
  EXPECT_EQ(ValidateReservedSystemCPUs("0-4", 4).message(),
            "reserved-cpus: 0-4 is not a subset of online-cpus: 0-3");
  EXPECT_EQ(ValidateReservedSystemCPUs("x", 4).message(),
            "unable to parse reserved-cpus list: strconv.Atoi: parsing \"x\": invalid syntax");
  auto r = GetReservedCPUs("1,3", CPUSet{0, 1, 2, 3});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->Size(), 2);
}

}  // namespace
}  // namespace kubelet::config
