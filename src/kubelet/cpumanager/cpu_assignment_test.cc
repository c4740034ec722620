#include "kubelet/cpumanager/cpu_assignment.h"

#include <string>

#include "gtest/gtest.h"
#include "kubelet/cpumanager/testing/topologies.h"

namespace kubelet::cpumanager {
namespace {

using config::CPUSet;
using testing::DualSocketHT;
using testing::DualSocketMultiNUMAHT;
using testing::DualSocketNoHT;
using testing::SingleSocketHT;

CPUSet Set(const std::string& s) { return *CPUSet::Parse(s); }

struct TakeCase {
  std::string name;
  topology::CPUTopology topo;
  std::string available;
  int num_cpus;
  std::string want;  // the CPU list, or the error message
  bool error = false;
};

void RunPacked(const TakeCase& tc) {
  SCOPED_TRACE(tc.name);
  absl::StatusOr<CPUSet> got = TakeByTopologyNUMAPacked(tc.topo, Set(tc.available), tc.num_cpus);
  if (tc.error) {
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().message(), tc.want);
    return;
  }
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->String(), tc.want);
}

TEST(TakeByTopologyNUMAPackedTest, SingleSocketWithSMT) {
  const topology::CPUTopology t = SingleSocketHT();
  for (const TakeCase& tc : std::vector<TakeCase>{
           {"more than available", t, "0,2,4,6", 5,
            "not enough cpus available to satisfy request: requested=5, available=4", true},
           {"zero", t, "0-7", 0, ""},
           {"one: the lowest CPU", t, "0-7", 1, "0"},
           // Core 2 has one free thread left: it is filled before whole cores are broken up.
           {"one, some taken: the partly used core", t, "1,3,5-7", 1, "6"},
           {"two: one whole core", t, "0-7", 2, "0,4"},
           {"two, only core 2 whole", t, "0-3,6", 2, "2,6"},
           {"three: a core and a thread of the next", t, "0-7", 3, "0-1,4"},
           {"all", t, "0-7", 8, "0-7"},
       }) {
    RunPacked(tc);
  }
}

TEST(TakeByTopologyNUMAPackedTest, DualSocket) {
  for (const TakeCase& tc : std::vector<TakeCase>{
           {"a socket's worth: socket 0", DualSocketHT(), "0-11", 6, "0,2,4,6,8,10"},
           {"a socket and a core", DualSocketHT(), "0-11", 8, "0-2,4,6-8,10"},
           {"socket 0 partly used: socket 1 whole", DualSocketHT(), "1-11", 6, "1,3,5,7,9,11"},
           // Without SMT a core is a CPU: the socket already in use is filled first.
           {"no SMT: the fragmented socket first", DualSocketNoHT(), "1-7", 2, "1-2"},
           {"no SMT: a whole socket", DualSocketNoHT(), "1-7", 4, "4-7"},
       }) {
    RunPacked(tc);
  }
}

TEST(TakeByTopologyNUMAPackedTest, SocketsHoldingSeveralNUMANodes) {
  const topology::CPUTopology t = DualSocketMultiNUMAHT();
  for (const TakeCase& tc : std::vector<TakeCase>{
           {"a socket", t, "0-79", 40, "0-19,40-59"},
           {"a NUMA node", t, "0-79", 20, "0-9,40-49"},
           // NUMA node 0 busy: its socket's other node is taken, socket 1 stays whole.
           {"a NUMA node with NUMA node 0 taken", t, "10-39,50-79", 20, "10-19,50-59"},
           {"a socket and a NUMA node", t, "0-79", 60, "0-29,40-69"},
           {"half a NUMA node", t, "0-79", 10, "0-4,40-44"},
           {"everything but one CPU", t, "1-79", 80,
            "not enough cpus available to satisfy request: requested=80, available=79", true},
       }) {
    RunPacked(tc);
  }
}

TEST(TakeByTopologyNUMADistributedTest, SpreadsEvenlyOverTheNUMANodesNeeded) {
  // 8 CPUs need both NUMA nodes: 4 from each instead of a full node and 2 more.
  absl::StatusOr<CPUSet> packed = TakeByTopologyNUMAPacked(DualSocketHT(), Set("0-11"), 8);
  ASSERT_TRUE(packed.ok());
  EXPECT_EQ(packed->String(), "0-2,4,6-8,10");
  absl::StatusOr<CPUSet> spread = TakeByTopologyNUMADistributed(DualSocketHT(), Set("0-11"), 8, 1);
  ASSERT_TRUE(spread.ok()) << spread.status();
  EXPECT_EQ(spread->String(), "0-3,6-9");

  // 30 CPUs on 20-CPU NUMA nodes: 15 on each of the first two instead of 20 + 10.
  const topology::CPUTopology multi = DualSocketMultiNUMAHT();
  packed = TakeByTopologyNUMAPacked(multi, Set("0-79"), 30);
  ASSERT_TRUE(packed.ok());
  EXPECT_EQ(packed->String(), "0-14,40-54");
  spread = TakeByTopologyNUMADistributed(multi, Set("0-79"), 30, 1);
  ASSERT_TRUE(spread.ok()) << spread.status();
  EXPECT_EQ(spread->String(), "0-7,10-17,40-46,50-56");
}

TEST(TakeByTopologyNUMADistributedTest, FitsOneNUMANodeLikePacking) {
  absl::StatusOr<CPUSet> got = TakeByTopologyNUMADistributed(DualSocketHT(), Set("0-11"), 4, 1);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->String(), "0,2,6,8");
  got = TakeByTopologyNUMADistributed(DualSocketHT(), Set("0-11"), 6, 2);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->String(), "0,2,4,6,8,10");
}

TEST(TakeByTopologyNUMADistributedTest, RemainderInWholeCoreGroups) {
  // 10 CPUs in groups of 2 over 2 NUMA nodes: 4 each, then one more core where the free CPUs
  // stay balanced.
  absl::StatusOr<CPUSet> got = TakeByTopologyNUMADistributed(DualSocketHT(), Set("0-11"), 10, 2);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->String(), "0-4,6-10");
  for (int cpu : got->List()) {
    // Whole cores only: every CPU's sibling is taken too.
    EXPECT_TRUE(got->Contains(cpu < 6 ? cpu + 6 : cpu - 6)) << cpu;
  }
}

TEST(TakeByTopologyNUMADistributedTest, OddRequestsAndShortagesFallBack) {
  // Not a multiple of the group size: packed.
  absl::StatusOr<CPUSet> got = TakeByTopologyNUMADistributed(DualSocketHT(), Set("0-11"), 3, 2);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->String(), TakeByTopologyNUMAPacked(DualSocketHT(), Set("0-11"), 3)->String());
  got = TakeByTopologyNUMADistributed(DualSocketHT(), Set("0-3"), 6, 1);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            "not enough cpus available to satisfy request: requested=6, available=4");
  got = TakeByTopologyNUMADistributed(DualSocketHT(), Set("0-11"), 0, 2);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->IsEmpty());
}

}  // namespace
}  // namespace kubelet::cpumanager
