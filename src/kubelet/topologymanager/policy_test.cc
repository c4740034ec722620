#include "kubelet/topologymanager/policy.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::topologymanager {
namespace {

using ::testing::ElementsAre;

TopologyHint H(std::initializer_list<int> nodes, bool preferred) {
  return TopologyHint{NUMAMask(nodes), preferred};
}
TopologyHint Any(bool preferred) { return TopologyHint{std::nullopt, preferred}; }

NUMAInfo TwoNodes() {
  NUMAInfo n;
  n.nodes = {0, 1};
  n.distances = {{0, {10, 11}}, {1, {11, 10}}};
  return n;
}

// Two packages of two nodes each: 0-1 and 2-3 are close.
NUMAInfo FourNodes() {
  NUMAInfo n;
  n.nodes = {0, 1, 2, 3};
  n.distances = {
      {0, {10, 11, 12, 12}}, {1, {11, 10, 12, 12}}, {2, {12, 12, 10, 11}}, {3, {12, 12, 11, 10}}};
  return n;
}

Policy::Result Merge(std::string_view policy, const NUMAInfo& numa,
                     const std::vector<TopologyHints>& providers, PolicyOptions opts = {}) {
  absl::StatusOr<Policy> p = Policy::New(policy, numa, opts);
  EXPECT_TRUE(p.ok()) << p.status();
  return p->Merge(providers);
}

TEST(FilterProvidersHints, OneListPerResource) {
  std::vector<TopologyHints> providers = {
      {},
      {{"memory", std::vector<TopologyHint>{H({0}, true), H({0, 1}, false)}},
       {"cpu", std::nullopt},
       {"example.com/gpu", std::vector<TopologyHint>{}}},
  };
  HintLists lists = FilterProvidersHints(providers);
  ASSERT_EQ(lists.size(), 4u);
  EXPECT_THAT(lists[0], ElementsAre(Any(true)));   // the provider without hints
  EXPECT_THAT(lists[1], ElementsAre(Any(true)));   // cpu: no preference
  EXPECT_THAT(lists[2], ElementsAre(Any(false)));  // gpu: cannot be satisfied
  EXPECT_THAT(lists[3], ElementsAre(H({0}, true), H({0, 1}, false)));
  EXPECT_TRUE(FilterProvidersHints({}).empty());
}

TEST(FilterSingleNumaHints, KeepsPreferredAnyAndSingleNodeHints) {
  HintLists lists = FilterSingleNumaHints({
      {Any(true), Any(false), H({0}, true), H({1}, false), H({0, 1}, true)},
      {H({0, 1}, true)},
  });
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_THAT(lists[0], ElementsAre(Any(true), H({0}, true)));
  EXPECT_TRUE(lists[1].empty());
}

TEST(MergePermutation, AndOfMasksPreferredOnlyWhenAlignedAndAllPreferred) {
  const NUMAMask all({0, 1, 2, 3});
  EXPECT_EQ(MergePermutation(all, {H({0}, true), H({0}, true)}), H({0}, true));
  // Both preferred, but the masks differ: the resources would not be aligned.
  EXPECT_EQ(MergePermutation(all, {H({0, 1}, true), H({0, 2}, true)}), H({0}, false));
  EXPECT_EQ(MergePermutation(all, {H({0, 1, 2}, true), H({0, 1}, true)}), H({0, 1}, false));
  // "Any" masks nothing and does not break the alignment.
  EXPECT_EQ(MergePermutation(all, {Any(true), H({1}, true)}), H({1}, true));
  EXPECT_EQ(MergePermutation(all, {Any(false), H({1}, true)}), H({1}, false));
  EXPECT_EQ(MergePermutation(all, {H({2}, true), H({2}, false)}), H({2}, false));
  EXPECT_EQ(MergePermutation(all, {H({0}, true), H({1}, true)}), H({}, false));
  // Only the machine's nodes survive.
  EXPECT_EQ(MergePermutation(NUMAMask({0, 1}), {H({1, 2}, true)}), H({1}, true));
  EXPECT_EQ(MergePermutation(all, {}), H({0, 1, 2, 3}, true));
}

TEST(IterateAllProviderTopologyHints, EveryCombinationFirstListSlowest) {
  const TopologyHint a = H({0}, true), b = H({1}, true), c = H({0, 1}, false), d = Any(true),
                     e = Any(false);
  std::vector<std::vector<TopologyHint>> seen;
  IterateAllProviderTopologyHints({{a, b}, {c}, {d, e}},
                                  [&](const std::vector<TopologyHint>& p) { seen.push_back(p); });
  EXPECT_THAT(seen, ElementsAre(ElementsAre(a, c, d), ElementsAre(a, c, e), ElementsAre(b, c, d),
                                ElementsAre(b, c, e)));

  int calls = 0;
  IterateAllProviderTopologyHints({{a}, {}}, [&](const std::vector<TopologyHint>&) { ++calls; });
  EXPECT_EQ(calls, 0);
  IterateAllProviderTopologyHints({}, [&](const std::vector<TopologyHint>& p) {
    ++calls;
    EXPECT_TRUE(p.empty());
  });
  EXPECT_EQ(calls, 1);
}

// Cases every merging policy resolves to the same preferred hint (2 NUMA nodes).
struct CommonCase {
  std::string name;
  std::vector<TopologyHints> providers;
  TopologyHint expected;
};

std::vector<CommonCase> CommonCases() {
  using V = std::vector<TopologyHint>;
  return {
      {"same mask from two providers, node 0",
       {{{"r1", V{H({0}, true)}}}, {{"r2", V{H({0}, true)}}}},
       H({0}, true)},
      {"same mask from two providers, node 1",
       {{{"r1", V{H({1}, true)}}}, {{"r2", V{H({1}, true)}}}},
       H({1}, true)},
      {"one provider without hints", {{}, {{"r", V{H({1}, true)}}}}, H({1}, true)},
      {"two hints against one matching",
       {{{"r1", V{H({0}, true), H({1}, true)}}}, {{"r2", V{H({1}, true)}}}},
       H({1}, true)},
      {"narrower preferred hint from both",
       {{{"r1", V{H({0}, true), H({1}, true)}}}, {{"r2", V{H({0}, true), H({0, 1}, false)}}}},
       H({0}, true)},
      {"preferred over narrower non-preferred",
       {{{"r1", V{H({1}, true), H({0, 1}, false)}}},
        {{"r2", V{H({0}, true), H({1}, true), H({0, 1}, false)}}}},
       H({1}, true)},
      {"several resources of one provider",
       {{{"r1", V{H({1}, true), H({0, 1}, false)}},
         {"r2", V{H({0}, true), H({1}, true), H({0, 1}, false)}}}},
       H({1}, true)},
  };
}

TEST(PolicyMerge, CommonCasesForEveryMergingPolicy) {
  for (std::string_view policy : {kPolicyBestEffort, kPolicyRestricted, kPolicySingleNumaNode}) {
    for (const CommonCase& c : CommonCases()) {
      Policy::Result r = Merge(policy, TwoNodes(), c.providers);
      EXPECT_EQ(r.hint, c.expected) << policy << ": " << c.name;
      EXPECT_TRUE(r.admit) << policy << ": " << c.name;
    }
  }
}

struct PolicyCase {
  std::string name;
  std::vector<TopologyHints> providers;
  TopologyHint best_effort;       // also restricted's hint
  TopologyHint single_numa_node;  // single-numa-node's hint
};

std::vector<PolicyCase> TwoNodeCases() {
  using V = std::vector<TopologyHint>;
  const TopologyHint all_preferred = H({0, 1}, true);
  const TopologyHint all_not_preferred = H({0, 1}, false);
  return {
      {"no providers", {}, all_preferred, Any(true)},
      {"provider without hints", {{}}, all_preferred, Any(true)},
      {"resource without preference", {{{"r", std::nullopt}}}, all_preferred, Any(true)},
      {"resource that cannot be satisfied", {{{"r", V{}}}}, all_not_preferred, Any(false)},
      {"preferred any hint", {{{"r", V{Any(true)}}}}, all_preferred, Any(true)},
      {"non-preferred any hint", {{{"r", V{Any(false)}}}}, all_not_preferred, Any(false)},
      {"no common mask",
       {{{"r1", V{H({0}, true)}}}, {{"r2", V{H({1}, true)}}}},
       all_not_preferred,
       Any(false)},
      {"same mask, one not preferred",
       {{{"r1", V{H({1}, true)}}}, {{"r2", V{H({1}, false)}}}},
       H({1}, false),
       Any(false)},
      {"one wider mask, both preferred",
       {{{"r1", V{H({0}, true)}}}, {{"r2", V{H({0, 1}, true)}}}},
       H({0}, false),
       Any(false)},
      {"two hints against one non-preferred wide hint",
       {{{"r1", V{H({0}, true), H({1}, true)}}}, {{"r2", V{H({0, 1}, false)}}}},
       H({0}, false),
       Any(false)},
      {"wide preferred hint from both",
       {{{"r1", V{H({0, 1}, true)}}}, {{"r2", V{H({0, 1}, true)}}}},
       H({0, 1}, true),
       Any(false)},
  };
}

TEST(PolicyMerge, BestEffortAdmitsEveryHint) {
  for (const PolicyCase& c : TwoNodeCases()) {
    Policy::Result r = Merge(kPolicyBestEffort, TwoNodes(), c.providers);
    EXPECT_EQ(r.hint, c.best_effort) << c.name;
    EXPECT_TRUE(r.admit) << c.name;
  }
}

TEST(PolicyMerge, RestrictedAdmitsPreferredHintsOnly) {
  for (const PolicyCase& c : TwoNodeCases()) {
    Policy::Result r = Merge(kPolicyRestricted, TwoNodes(), c.providers);
    EXPECT_EQ(r.hint, c.best_effort) << c.name;
    EXPECT_EQ(r.admit, c.best_effort.preferred) << c.name;
  }
}

TEST(PolicyMerge, SingleNumaNodeAdmitsPreferredSingleNodeOrAny) {
  for (const PolicyCase& c : TwoNodeCases()) {
    Policy::Result r = Merge(kPolicySingleNumaNode, TwoNodes(), c.providers);
    EXPECT_EQ(r.hint, c.single_numa_node) << c.name;
    EXPECT_EQ(r.admit, c.single_numa_node.preferred) << c.name;
  }
}

TEST(PolicyMerge, SingleNumaNodeOnOneNodeMachineReportsAny) {
  NUMAInfo one;
  one.nodes = {0};
  Policy::Result r =
      Merge(kPolicySingleNumaNode, one, {{{"cpu", std::vector<TopologyHint>{H({0}, true)}}}});
  EXPECT_EQ(r.hint, Any(true));
  EXPECT_TRUE(r.admit);
}

TEST(PolicyMerge, SingleNumaNodePicksASingleNodeAmongWiderOnes) {
  using V = std::vector<TopologyHint>;
  Policy::Result r =
      Merge(kPolicySingleNumaNode, FourNodes(),
            {{{"cpu", V{H({0, 1}, true), H({2}, true), H({3}, true), H({2, 3}, false)}}},
             {{"gpu", V{H({3}, true), H({2, 3}, true)}}}});
  EXPECT_EQ(r.hint, H({3}, true));
  EXPECT_TRUE(r.admit);
}

TEST(PolicyMerge, NoneMergesNothingAndAdmits) {
  Policy::Result r =
      Merge(kPolicyNone, TwoNodes(), {{{"cpu", std::vector<TopologyHint>{H({0}, true)}}}});
  EXPECT_EQ(r.hint, Any(false));
  EXPECT_TRUE(r.admit);
}

TEST(PolicyNew, UnknownPolicy) {
  absl::StatusOr<Policy> p = Policy::New("strict", TwoNodes(), {});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "unknown policy: \"strict\"");
  EXPECT_EQ(Policy::New("restricted", TwoNodes(), {})->name(), "restricted");
}

// The non-preferred choice aims at the widest of the resources' narrowest masks (4 NUMA nodes).
TEST(HintMerger, BestNonPreferredAffinityCount) {
  using L = std::vector<TopologyHint>;
  const NUMAInfo numa = FourNodes();
  struct Case {
    HintLists lists;
    int count;
    TopologyHint expected;
  } cases[] = {
      {{L{H({0, 1, 2, 3}, false), H({0, 1}, false)}, L{H({0, 1}, false)}}, 2, H({0, 1}, false)},
      {{L{H({0, 1, 2, 3}, false), H({0, 1}, false)}, L{H({0, 3}, false)}}, 2, H({0, 3}, false)},
      {{L{H({0, 1, 2, 3}, false), H({0, 1}, false)}, L{H({1, 2}, false)}}, 2, H({1, 2}, false)},
      // Both below the target: the wider one, closer to it.
      {{L{H({0, 1, 2}, false)}, L{H({0}, false), H({0, 1}, false)}}, 3, H({0, 1}, false)},
      // Above the target: a narrower merged hint replaces a wider one.
      {{L{H({0, 1, 2, 3}, false), H({1}, false)}, L{Any(true)}}, 1, H({1}, false)},
      // A preferred hint beats any non-preferred one.
      {{L{H({0}, false), H({2, 3}, true)}}, 1, H({2, 3}, true)},
      // Nothing but empty merges: every node, not preferred.
      {{L{H({0}, true)}, L{H({1}, true)}}, 1, H({0, 1, 2, 3}, false)},
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    HintMerger merger(numa, cases[i].lists, kPolicyBestEffort, PolicyOptions{});
    EXPECT_EQ(merger.best_non_preferred_affinity_count(), cases[i].count) << "case " << i;
    EXPECT_EQ(merger.Merge(), cases[i].expected) << "case " << i;
  }
}

TEST(HintMerger, PreferClosestNUMANodes) {
  using L = std::vector<TopologyHint>;
  const NUMAInfo numa = FourNodes();
  // Two equally wide preferred placements: 0+2 spans both packages, 2+3 stays in one.
  const HintLists preferred = {L{H({0, 2}, true), H({2, 3}, true)},
                               L{H({0, 2}, true), H({2, 3}, true)}};
  EXPECT_EQ(HintMerger(numa, preferred, kPolicyBestEffort, {}).Merge(), H({0, 2}, true));
  EXPECT_EQ(HintMerger(numa, preferred, kPolicyBestEffort, {.prefer_closest_numa = true}).Merge(),
            H({2, 3}, true));
  EXPECT_EQ(HintMerger(numa, preferred, kPolicyRestricted, {.prefer_closest_numa = true}).Merge(),
            H({2, 3}, true));
  // single-numa-node ignores the option.
  EXPECT_EQ(
      HintMerger(numa, preferred, kPolicySingleNumaNode, {.prefer_closest_numa = true}).Merge(),
      H({0, 2}, true));
  // Non-preferred hints of the target width are compared the same way.
  const HintLists not_preferred = {L{H({0, 2}, false), H({2, 3}, false)}};
  EXPECT_EQ(HintMerger(numa, not_preferred, kPolicyBestEffort, {}).Merge(), H({0, 2}, false));
  EXPECT_EQ(
      HintMerger(numa, not_preferred, kPolicyBestEffort, {.prefer_closest_numa = true}).Merge(),
      H({2, 3}, false));
  // A narrower mask still wins over a closer wider one.
  const HintLists narrower = {L{H({2, 3}, true), H({1}, true)}};
  EXPECT_EQ(HintMerger(numa, narrower, kPolicyBestEffort, {.prefer_closest_numa = true}).Merge(),
            H({1}, true));
}

TEST(PolicyMerge, PreferClosestThroughThePolicy) {
  using V = std::vector<TopologyHint>;
  const std::vector<TopologyHints> providers = {
      {{"cpu", V{H({0, 2}, true), H({2, 3}, true), H({0, 1, 2, 3}, false)}}},
      {{"memory", V{H({0, 2}, true), H({2, 3}, true)}}},
  };
  EXPECT_EQ(Merge(kPolicyRestricted, FourNodes(), providers).hint, H({0, 2}, true));
  Policy::Result closest = Merge(kPolicyRestricted, FourNodes(), providers, {true});
  EXPECT_EQ(closest.hint, H({2, 3}, true));
  EXPECT_TRUE(closest.admit);
}

TEST(Rendering, UpstreamBitMaskAndHintStrings) {
  EXPECT_EQ(BitMaskString(NUMAMask{0}), "01");
  EXPECT_EQ(BitMaskString(NUMAMask{1}), "10");
  EXPECT_EQ(BitMaskString(NUMAMask({0, 1})), "11");
  EXPECT_EQ(BitMaskString(NUMAMask{2}), "100");
  EXPECT_EQ(BitMaskString(NUMAMask({0, 2})), "0101");
  EXPECT_EQ(BitMaskString(NUMAMask({0, 1, 2, 3})), "1111");
  EXPECT_EQ(BitMaskString(NUMAMask{4}), "10000");
  EXPECT_EQ(BitMaskString(NUMAMask()), "00");
  EXPECT_EQ(HintString(H({1}, true)), R"({"NUMANodeAffinity":"10","Preferred":true})");
  EXPECT_EQ(HintString(Any(false)), R"({"NUMANodeAffinity":null,"Preferred":false})");
}

}  // namespace
}  // namespace kubelet::topologymanager
