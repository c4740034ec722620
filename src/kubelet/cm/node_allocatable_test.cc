#include "kubelet/cm/node_allocatable.h"

#include "api/quantity.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::cm {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kGi = 1024LL * 1024 * 1024;
constexpr int64_t kMi = 1024LL * 1024;

MachineInfo Machine() {
  MachineInfo m;
  m.num_cores = 4;
  m.memory_capacity_bytes = 8 * kGi;
  m.hugepages = {{2 * kMi, 0}, {kGi, 0}};
  return m;
}

int64_t Val(const api::ResourceList& l, const std::string& n) {
  auto it = l.find(n);
  return it == l.end() ? -12345 : it->second.Value();
}
int64_t Milli(const api::ResourceList& l, const std::string& n) {
  auto it = l.find(n);
  return it == l.end() ? -12345 : it->second.MilliValue();
}

TEST(NodeAllocatableTest, Capacity) {
  MachineInfo m = Machine();
  m.hugepages[0].num_pages = 10;
  api::ResourceList cap = MachineCapacity(m, 110, 100 * kGi);
  EXPECT_EQ(Milli(cap, "cpu"), 4000);
  EXPECT_EQ(Val(cap, "memory"), 8 * kGi);
  EXPECT_EQ(Val(cap, "pods"), 110);
  EXPECT_EQ(Val(cap, "ephemeral-storage"), 100 * kGi);
  EXPECT_EQ(Val(cap, "hugepages-2Mi"), 20 * kMi);
  EXPECT_EQ(Val(cap, "hugepages-1Gi"), 0);
}

TEST(NodeAllocatableTest, ReservedAndDefaultEvictionThresholds) {
  api::ResourceList cap = MachineCapacity(Machine(), 110, 100 * kGi);
  auto kube = ParseReservation({{"cpu", "200m"}, {"memory", "512Mi"}});
  auto sys = ParseReservation({{"cpu", "300m"}, {"memory", "256Mi"}, {"ephemeral-storage", "1Gi"}});
  ASSERT_TRUE(kube.ok() && sys.ok());
  auto hard = ParseEvictionThresholds({{"memory.available", "100Mi"},
                                       {"nodefs.available", "10%"},
                                       {"nodefs.inodesFree", "5%"},
                                       {"imagefs.available", "15%"}});
  ASSERT_TRUE(hard.ok()) << hard.status();
  api::ResourceList res = NodeAllocatableReservation(cap, *kube, *sys, *hard);
  EXPECT_EQ(Milli(res, "cpu"), 500);
  EXPECT_EQ(Val(res, "memory"), 768 * kMi + 100 * kMi);
  // 10% of 100Gi in float32 arithmetic, as upstream, plus systemReserved.
  EXPECT_EQ(Val(res, "ephemeral-storage"),
            kGi + static_cast<int64_t>(100.0 * kGi * static_cast<double>(10.0f / 100.0f)));
  EXPECT_EQ(res.count("pods"), 0u);
  api::ResourceList alloc = Allocatable(cap, res);
  EXPECT_EQ(Milli(alloc, "cpu"), 3500);
  EXPECT_EQ(Val(alloc, "memory"), 8 * kGi - 868 * kMi);
  EXPECT_EQ(Val(alloc, "pods"), 110);

  // kubepods: capacity - reserved, no eviction threshold.
  api::ResourceList abs = AllocatableAbsolute(cap, *kube, *sys);
  EXPECT_EQ(Val(abs, "memory"), 8 * kGi - 768 * kMi);
  EXPECT_EQ(Milli(abs, "cpu"), 3500);
}

TEST(NodeAllocatableTest, MemoryPercentageThreshold) {
  api::ResourceList cap = MachineCapacity(Machine(), 110, std::nullopt);
  auto hard = ParseEvictionThresholds({{"memory.available", "5%"}});
  ASSERT_TRUE(hard.ok());
  api::ResourceList res = NodeAllocatableReservation(cap, {}, {}, *hard);
  EXPECT_EQ(Val(res, "memory"),
            static_cast<int64_t>(8.0 * kGi * static_cast<double>(5.0f / 100.0f)));
}

TEST(NodeAllocatableTest, HugePagesComeOffMemory) {
  MachineInfo m = Machine();
  m.hugepages[1].num_pages = 2;
  api::ResourceList cap = MachineCapacity(m, 110, std::nullopt);
  api::ResourceList alloc = Allocatable(cap, {});
  EXPECT_EQ(Val(alloc, "memory"), 6 * kGi);
  EXPECT_EQ(Val(alloc, "hugepages-1Gi"), 2 * kGi);
}

TEST(NodeAllocatableTest, NeverNegative) {
  api::ResourceList cap = MachineCapacity(Machine(), 110, std::nullopt);
  auto kube = ParseReservation({{"cpu", "10"}});
  api::ResourceList alloc = Allocatable(cap, NodeAllocatableReservation(cap, *kube, {}, {}));
  EXPECT_EQ(Milli(alloc, "cpu"), 0);
}

TEST(NodeAllocatableTest, ThresholdErrors) {
  EXPECT_THAT(ParseEvictionThresholds({{"memory.free", "1Gi"}}).status().message(),
              HasSubstr("unsupported eviction signal memory.free"));
  EXPECT_THAT(ParseEvictionThresholds({{"memory.available", "-5%"}}).status().message(),
              HasSubstr("must be positive"));
  EXPECT_THAT(ParseEvictionThresholds({{"memory.available", "120%"}}).status().message(),
              HasSubstr("must not be greater than 100%"));
  EXPECT_THAT(ParseEvictionThresholds({{"memory.available", "0"}}).status().message(),
              HasSubstr("eviction threshold memory.available must be positive"));
  auto dropped =
      ParseEvictionThresholds({{"memory.available", "0%"}, {"nodefs.available", "100%"}});
  ASSERT_TRUE(dropped.ok());
  EXPECT_TRUE(dropped->empty());
  EXPECT_FALSE(ParseReservation({{"memory", "lots"}}).ok());
}

TEST(NodeAllocatableTest, ReservedSystemCPUsOverride) {
  std::map<std::string, std::string> kube = {{"cpu", "500m"}, {"memory", "1Gi"}};
  std::map<std::string, std::string> sys = {{"cpu", "1"}};
  OverrideReservedCPUs(2, &kube, &sys);
  EXPECT_EQ(kube, (std::map<std::string, std::string>{{"memory", "1Gi"}}));
  EXPECT_EQ(sys, (std::map<std::string, std::string>{{"cpu", "2"}}));
  api::ResourceList cap = MachineCapacity(Machine(), 110, std::nullopt);
  api::ResourceList alloc = Allocatable(
      cap, NodeAllocatableReservation(cap, *ParseReservation(kube), *ParseReservation(sys), {}));
  EXPECT_EQ(Milli(alloc, "cpu"), 2000);
  // No reserved CPUs: nothing changes.
  std::map<std::string, std::string> kube2 = {{"cpu", "500m"}}, sys2;
  OverrideReservedCPUs(0, &kube2, &sys2);
  EXPECT_EQ(kube2.size(), 1u);
  EXPECT_TRUE(sys2.empty());
}

TEST(NodeAllocatableTest, Swap) {
  EXPECT_TRUE(CheckSwap({"Filename\tType\tSize\tUsed\tPriority"}).ok());
  EXPECT_TRUE(CheckSwap({}).ok());
  absl::Status st = CheckSwap({"Filename Type", "/swapfile file 1024 0 -2"});
  EXPECT_EQ(st.message(),
            "running with swap on is not supported, please disable swap! or set --fail-swap-on "
            "flag to false. /proc/swaps contained: [Filename Type /swapfile file 1024 0 -2]");
}

}  // namespace
}  // namespace kubelet::cm
