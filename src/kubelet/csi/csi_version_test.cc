#include "kubelet/csi/csi_version.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::csi {
namespace {

using ::testing::HasSubstr;

std::string Highest(std::vector<std::string> v) {
  absl::StatusOr<Version> h = HighestSupportedVersion(v);
  return h.ok() ? h->String() : std::string(h.status().message());
}

TEST(CsiVersionTest, ParsesGenericVersions) {
  EXPECT_EQ(ParseGenericVersion("1.0.0")->String(), "1.0.0");
  EXPECT_EQ(ParseGenericVersion("v1.2")->String(), "1.2");
  EXPECT_EQ(ParseGenericVersion(" 1.5.0-foo")->String(), "1.5.0");
  EXPECT_FALSE(ParseGenericVersion("1").ok());
  EXPECT_FALSE(ParseGenericVersion("1.").ok());
  EXPECT_FALSE(ParseGenericVersion("01.2").ok());
  EXPECT_FALSE(ParseGenericVersion("x1.2").ok());
  EXPECT_EQ(Compare(*ParseGenericVersion("1.0"), *ParseGenericVersion("1.0.0")), 0);
  EXPECT_EQ(Compare(*ParseGenericVersion("1.10"), *ParseGenericVersion("1.9.9")), 1);
}

TEST(CsiVersionTest, HighestSupportedIsTheHighestOneDotX) {
  EXPECT_EQ(Highest({"1.0.0"}), "1.0.0");
  EXPECT_EQ(Highest({"0.3.0", "1.2.0", "1.1.9", "2.0.0"}), "1.2.0");
  EXPECT_EQ(Highest({"0.3.0"}),
            "highest supported version reported by driver is 0.3.0, must be v1.x");
  EXPECT_THAT(Highest({"2.0.0"}),
              HasSubstr("could not find a highest supported version from versions (2.0.0)"));
  EXPECT_THAT(Highest({"junk"}), HasSubstr("could not parse \"junk\" as version"));
}

}  // namespace
}  // namespace kubelet::csi
