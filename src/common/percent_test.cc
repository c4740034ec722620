#include "common/percent.h"

#include <string>

#include "gtest/gtest.h"

namespace kubelet {
namespace {

TEST(PercentDecode, EscapesAndPlus) {
  std::string out;
  ASSERT_TRUE(PercentDecode("a%20b%2Fc+d", false, &out));
  EXPECT_EQ(out, "a b/c+d");
  ASSERT_TRUE(PercentDecode("a%3db+c", true, &out));
  EXPECT_EQ(out, "a=b c");
  EXPECT_FALSE(PercentDecode("a%zz", true, &out));
  EXPECT_FALSE(PercentDecode("a%2", true, &out));
  ASSERT_TRUE(PercentDecode("", true, &out));
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace kubelet
