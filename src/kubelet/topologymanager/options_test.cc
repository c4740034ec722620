#include "kubelet/topologymanager/options.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::topologymanager {
namespace {

using ::testing::ElementsAre;

config::KubeletConfiguration Config(const std::string& policy, const std::string& scope,
                                    std::map<std::string, std::string> options = {}) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.topology_manager_policy = policy;
  c.topology_manager_scope = scope;
  c.topology_manager_policy_options = std::move(options);
  return c;
}

std::string ErrorOf(const config::KubeletConfiguration& c, const config::FeatureGate& gates) {
  absl::StatusOr<TopologyManagerOptions> o = TopologyManagerOptionsFromConfig(c, gates);
  EXPECT_FALSE(o.ok());
  return o.ok() ? "" : std::string(o.status().message());
}

TEST(TopologyManagerOptionsFromConfig, Defaults) {
  absl::StatusOr<TopologyManagerOptions> o = TopologyManagerOptionsFromConfig(
      config::DefaultKubeletConfiguration(), config::FeatureGate());
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->policy, "none");
  EXPECT_EQ(o->scope, "container");
  EXPECT_FALSE(o->policy_options.prefer_closest_numa);
}

TEST(TopologyManagerOptionsFromConfig, ReadsPolicyScopeAndPreferClosest) {
  absl::StatusOr<TopologyManagerOptions> o = TopologyManagerOptionsFromConfig(
      Config("single-numa-node", "pod", {{"prefer-closest-numa-nodes", "true"}}),
      config::FeatureGate());
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->policy, "single-numa-node");
  EXPECT_EQ(o->scope, "pod");
  EXPECT_TRUE(o->policy_options.prefer_closest_numa);
}

TEST(TopologyManagerOptionsFromConfig, AcceptsGoBoolSpellings) {
  for (const char* v : {"1", "t", "T", "TRUE", "true", "True"}) {
    auto o = TopologyManagerOptionsFromConfig(
        Config("best-effort", "container", {{"prefer-closest-numa-nodes", v}}),
        config::FeatureGate());
    ASSERT_TRUE(o.ok()) << v;
    EXPECT_TRUE(o->policy_options.prefer_closest_numa) << v;
  }
  for (const char* v : {"0", "f", "F", "FALSE", "false", "False"}) {
    auto o = TopologyManagerOptionsFromConfig(
        Config("best-effort", "container", {{"prefer-closest-numa-nodes", v}}),
        config::FeatureGate());
    ASSERT_TRUE(o.ok()) << v;
    EXPECT_FALSE(o->policy_options.prefer_closest_numa) << v;
  }
}

TEST(TopologyManagerOptionsFromConfig, OptionsNeedTheTopologyManagerPolicyOptionsGate) {
  config::FeatureGate gates;
  ASSERT_TRUE(gates.SetFromMap({{"TopologyManagerPolicyOptions", false}}).ok());
  EXPECT_EQ(ErrorOf(Config("restricted", "container",
                           {{"prefer-closest-numa-nodes", "true"}, {"another", "x"}}),
                    gates),
            "topology manager policy options map[another:x prefer-closest-numa-nodes:true] "
            "require feature gates \"TopologyManagerPolicyOptions\" enabled");
  // Also with policy none: upstream checks the gate before creating the manager.
  EXPECT_EQ(ErrorOf(Config("none", "container", {{"prefer-closest-numa-nodes", "true"}}), gates),
            "topology manager policy options map[prefer-closest-numa-nodes:true] require "
            "feature gates \"TopologyManagerPolicyOptions\" enabled");
  // No options: nothing to check.
  EXPECT_TRUE(TopologyManagerOptionsFromConfig(Config("restricted", "container"), gates).ok());
}

TEST(TopologyManagerOptionsFromConfig, UnknownOption) {
  EXPECT_EQ(ErrorOf(Config("best-effort", "container", {{"align-by-socket", "true"}}),
                    config::FeatureGate()),
            "unknown Topology Manager Policy option: \"align-by-socket\"");
}

TEST(TopologyManagerOptionsFromConfig, BetaOptionNeedsTheBetaGate) {
  config::FeatureGate gates;
  ASSERT_TRUE(gates.SetFromMap({{"TopologyManagerPolicyBetaOptions", false}}).ok());
  EXPECT_EQ(
      ErrorOf(Config("best-effort", "container", {{"prefer-closest-numa-nodes", "true"}}), gates),
      "Topology Manager Policy Beta-level Options not enabled, but option "
      "\"prefer-closest-numa-nodes\" provided");
  // The alpha gate does not stand in for the beta one.
  ASSERT_TRUE(gates.SetFromMap({{"TopologyManagerPolicyAlphaOptions", true}}).ok());
  EXPECT_FALSE(
      TopologyManagerOptionsFromConfig(
          Config("best-effort", "container", {{"prefer-closest-numa-nodes", "true"}}), gates)
          .ok());
}

TEST(TopologyManagerOptionsFromConfig, BadValue) {
  EXPECT_EQ(ErrorOf(Config("restricted", "pod", {{"prefer-closest-numa-nodes", "maybe"}}),
                    config::FeatureGate()),
            "bad value for option \"prefer-closest-numa-nodes\": strconv.ParseBool: parsing "
            "\"maybe\": invalid syntax");
}

TEST(TopologyManagerOptionsFromConfig, PolicyNoneDoesNotParseOptions) {
  absl::StatusOr<TopologyManagerOptions> o = TopologyManagerOptionsFromConfig(
      Config("none", "container", {{"unknown-option", "x"}}), config::FeatureGate());
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->policy, "none");
  EXPECT_FALSE(o->policy_options.prefer_closest_numa);
}

TEST(TopologyManagerOptionsFromConfig, FirstBadOptionInNameOrder) {
  EXPECT_EQ(ErrorOf(Config("best-effort", "container",
                           {{"zzz", "1"}, {"prefer-closest-numa-nodes", "no"}, {"aaa", "1"}}),
                    config::FeatureGate()),
            "unknown Topology Manager Policy option: \"aaa\"");
}

TEST(CheckPolicyOptionAvailable, KnownBetaOption) {
  EXPECT_TRUE(CheckPolicyOptionAvailable("prefer-closest-numa-nodes", config::FeatureGate()).ok());
  EXPECT_FALSE(CheckPolicyOptionAvailable("", config::FeatureGate()).ok());
}

TEST(TopologyManagerConfigFields, NamesTheFieldsRead) {
  EXPECT_THAT(
      kTopologyManagerConfigFields,
      ElementsAre("topologyManagerPolicy", "topologyManagerScope", "topologyManagerPolicyOptions"));
}

}  // namespace
}  // namespace kubelet::topologymanager
