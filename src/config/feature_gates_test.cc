#include "config/feature_gates.h"

#include <string>
#include <vector>

#include "common/log.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::config {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

class CapturedLog {
 public:
  CapturedLog() {
    log::Options o;
    o.sink = [this](std::string_view line) { lines.emplace_back(line); };
    log::Configure(std::move(o));
  }
  ~CapturedLog() { log::Configure(log::Options{}); }
  std::vector<std::string> lines;
};

TEST(FeatureGateTest, DefaultsOfKnownGates) {
  FeatureGate g;
  EXPECT_TRUE(g.Enabled("APIListChunking"));
  EXPECT_TRUE(g.Enabled("GracefulNodeShutdown"));
  EXPECT_FALSE(g.Enabled("NodeSwap"));
  EXPECT_FALSE(g.Enabled("SidecarContainers"));
  EXPECT_TRUE(g.Enabled("KubeletTracing"));
  EXPECT_TRUE(g.Enabled("LoggingBetaOptions"));
  EXPECT_FALSE(g.Enabled("LoggingAlphaOptions"));
  EXPECT_TRUE(g.Enabled("ComponentSLIs"));
  EXPECT_TRUE(g.Enabled("WindowsHostNetwork"));  // alpha, but on by default upstream
  EXPECT_FALSE(g.Enabled("AllAlpha"));
  EXPECT_FALSE(g.Enabled("NoSuchGate"));
  EXPECT_TRUE(g.Known("CustomCPUCFSQuotaPeriod"));
  EXPECT_TRUE(g.Known("ExperimentalHostUserNamespaceDefaulting"));
  EXPECT_FALSE(g.Known("CPUCFSQuotaPeriod"));  // Go constant name, not the gate name
}

TEST(FeatureGateTest, SetFromMapUnknown) {
  FeatureGate g;
  absl::Status st = g.SetFromMap({{"Foo", true}});
  EXPECT_EQ(st.message(), "unrecognized feature gate: Foo");
}

TEST(FeatureGateTest, SetFromMapLocked) {
  FeatureGate g;
  absl::Status st = g.SetFromMap({{"CPUManager", false}});
  EXPECT_EQ(st.message(), "cannot set feature gate CPUManager to false, feature is locked to true");
  st = g.SetFromMap({{"ExperimentalHostUserNamespaceDefaulting", true}});
  EXPECT_EQ(st.message(),
            "cannot set feature gate ExperimentalHostUserNamespaceDefaulting to true, feature is "
            "locked to false");
  // Setting a locked gate to its default is fine.
  EXPECT_TRUE(g.SetFromMap({{"CPUManager", true}}).ok());
}

TEST(FeatureGateTest, FailedSetLeavesStateUnchanged) {
  FeatureGate g;
  EXPECT_FALSE(g.SetFromMap({{"NodeSwap", true}, {"Zzz", true}}).ok());
  EXPECT_FALSE(g.Enabled("NodeSwap"));
}

TEST(FeatureGateTest, SetFromMapApplies) {
  FeatureGate g;
  ASSERT_TRUE(g.SetFromMap({{"NodeSwap", true}, {"GracefulNodeShutdown", false}}).ok());
  EXPECT_TRUE(g.Enabled("NodeSwap"));
  EXPECT_FALSE(g.Enabled("GracefulNodeShutdown"));
  EXPECT_EQ(g.Explicit().size(), 2u);
  EXPECT_TRUE(g.Effective().at("NodeSwap"));
  EXPECT_TRUE(g.Effective().at("APIListChunking"));
}

TEST(FeatureGateTest, WarnsForGAAndDeprecated) {
  CapturedLog log;
  FeatureGate g;
  ASSERT_TRUE(g.SetFromMap({{"CPUManager", true}, {"KMSv1", false}}).ok());
  ASSERT_EQ(log.lines.size(), 2u);
  EXPECT_THAT(log.lines[0],
              HasSubstr("Setting GA feature gate CPUManager=true. It will be removed in a future "
                        "release."));
  EXPECT_THAT(log.lines[1], HasSubstr("Setting deprecated feature gate KMSv1=false. It will be "
                                      "removed in a future release."));
  log.lines.clear();
  ASSERT_TRUE(g.SetFromMap({{"NodeSwap", true}}).ok());
  EXPECT_TRUE(log.lines.empty());
}

TEST(FeatureGateTest, AllAlphaAndAllBeta) {
  FeatureGate g;
  ASSERT_TRUE(g.SetFromMap({{"AllAlpha", true}, {"SidecarContainers", false}}).ok());
  EXPECT_TRUE(g.Enabled("EventedPLEG"));
  EXPECT_TRUE(g.Enabled("LoggingAlphaOptions"));
  EXPECT_FALSE(g.Enabled("SidecarContainers"));  // explicit wins
  EXPECT_FALSE(g.Enabled("NodeSwap"));           // beta untouched

  FeatureGate h;
  ASSERT_TRUE(h.SetFromMap({{"AllBeta", false}}).ok());
  EXPECT_FALSE(h.Enabled("APIListChunking"));
  EXPECT_FALSE(h.Enabled("GracefulNodeShutdown"));
  EXPECT_TRUE(h.Enabled("CPUManager"));  // GA untouched
}

TEST(FeatureGateTest, ParseFlagForm) {
  auto m = FeatureGate::Parse("A=true, B=false,,C=1");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->size(), 3u);
  EXPECT_TRUE(m->at("A"));
  EXPECT_FALSE(m->at("B"));
  EXPECT_TRUE(m->at("C"));

  EXPECT_EQ(FeatureGate::Parse("X").status().message(), "missing bool value for X");
  EXPECT_EQ(FeatureGate::Parse("X=maybe").status().message(),
            "invalid value of X=maybe, err: strconv.ParseBool: parsing \"maybe\": invalid syntax");
}

TEST(FeatureGateTest, SetString) {
  FeatureGate g;
  ASSERT_TRUE(g.Set("NodeSwap=true,SidecarContainers=true").ok());
  EXPECT_TRUE(g.Enabled("NodeSwap"));
  EXPECT_TRUE(g.Enabled("SidecarContainers"));
  EXPECT_EQ(g.Set("Bogus=true").message(), "unrecognized feature gate: Bogus");
}

TEST(FeatureGateTest, KnownFeaturesHidesGAAndDeprecated) {
  FeatureGate g;
  std::vector<std::string> lines = g.KnownFeatureList();
  EXPECT_TRUE(std::is_sorted(lines.begin(), lines.end()));
  EXPECT_THAT(lines, Contains("APIListChunking=true|false (BETA - default=true)"));
  EXPECT_THAT(lines, Contains("AllAlpha=true|false (ALPHA - default=false)"));
  EXPECT_THAT(lines, Contains("AllBeta=true|false (BETA - default=false)"));
  EXPECT_THAT(lines, Contains("NodeSwap=true|false (BETA - default=false)"));
  EXPECT_THAT(lines, Contains("CustomCPUCFSQuotaPeriod=true|false (ALPHA - default=false)"));
  for (const std::string& l : lines) {
    EXPECT_THAT(l, Not(HasSubstr("CPUManager=")));
    EXPECT_THAT(l, Not(HasSubstr("KMSv1=")));
  }
  // Go sort order: upper case before lower case.
  EXPECT_EQ(lines.front().substr(0, 15), "APIListChunking");
  EXPECT_EQ(g.KnownFeatures().find('\n') != std::string::npos, true);
}

TEST(FeatureGateTest, CopyIsIndependent) {
  FeatureGate g;
  FeatureGate copy = g;
  ASSERT_TRUE(copy.SetFromMap({{"NodeSwap", true}}).ok());
  EXPECT_TRUE(copy.Enabled("NodeSwap"));
  EXPECT_FALSE(g.Enabled("NodeSwap"));
}

TEST(FeatureGateTest, AddAndEmpty) {
  FeatureGate g = FeatureGate::Empty();
  EXPECT_FALSE(g.Known("NodeSwap"));
  ASSERT_TRUE(g.Add({{"MyGate", {true, FeatureStage::kBeta, false}}}).ok());
  EXPECT_TRUE(g.Enabled("MyGate"));
  EXPECT_TRUE(g.Add({{"MyGate", {true, FeatureStage::kBeta, false}}}).ok());
  EXPECT_EQ(g.Add({{"MyGate", {false, FeatureStage::kBeta, false}}}).message(),
            "feature gate \"MyGate\" with different spec already exists: {true false BETA}");
}

}  // namespace
}  // namespace kubelet::config
