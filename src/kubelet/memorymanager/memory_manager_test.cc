#include "kubelet/memorymanager/memory_manager.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/quantity.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::memorymanager {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using topologymanager::NUMAMask;
using topologymanager::TopologyHint;
using topologymanager::TopologyHints;

constexpr uint64_t kMi = uint64_t{1} << 20;
constexpr uint64_t kGi = uint64_t{1} << 30;

api::Quantity Q(std::string_view s) { return *api::ParseQuantity(s); }
api::Quantity Bytes(uint64_t b) {
  return api::Quantity::FromValue(static_cast<int64_t>(b), api::Quantity::Format::kBinarySI);
}

// A Guaranteed container: requests == limits for cpu, memory and the given hugepages.
api::Container Ctr(const std::string& name, uint64_t memory,
                   std::map<std::string, uint64_t> hugepages = {}) {
  api::Container c;
  c.name = name;
  c.resources.requests = {{"cpu", Q("1")}, {"memory", Bytes(memory)}};
  for (const auto& [res, size] : hugepages) c.resources.requests[res] = Bytes(size);
  c.resources.limits = c.resources.requests;
  return c;
}

api::Pod MakePod(const std::string& uid, std::vector<api::Container> containers,
                 std::vector<api::Container> init = {}) {
  api::Pod pod;
  pod.metadata.name = "pod-" + uid;
  pod.metadata.namespace_ = "default";
  pod.metadata.uid = uid;
  pod.spec.containers = std::move(containers);
  pod.spec.init_containers = std::move(init);
  return pod;
}

MachineMemory Machine(const std::vector<uint64_t>& node_bytes,
                      const std::vector<HugePages>& hugepages = {}) {
  MachineMemory m;
  for (size_t i = 0; i < node_bytes.size(); ++i) {
    m.nodes.push_back(NUMANodeMemory{static_cast<int>(i), node_bytes[i], hugepages});
  }
  return m;
}

TopologyHint Hint(std::initializer_list<int> nodes, bool preferred) {
  return TopologyHint{NUMAMask(nodes), preferred};
}

class FakeAffinity : public topologymanager::AffinityStore {
 public:
  void Set(const std::string& uid, const std::string& name, TopologyHint hint) {
    hints_[{uid, name}] = hint;
  }
  TopologyHint GetAffinity(const std::string& uid, const std::string& name) const override {
    auto it = hints_.find({uid, name});
    return it == hints_.end() ? TopologyHint{std::nullopt, true} : it->second;
  }

 private:
  std::map<std::pair<std::string, std::string>, TopologyHint> hints_;
};

class MemoryManagerTest : public ::testing::Test {
 protected:
  MemoryManagerTest() {
    char tmpl[] = "/tmp/memorymanager-test-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  ~MemoryManagerTest() override { std::filesystem::remove_all(dir_); }

  // Static, with `reserved[i]` bytes of memory reserved on NUMA node i (and the node allocatable
  // reservation their sum).
  MemoryManagerOptions StaticOptions(const std::vector<uint64_t>& reserved) {
    MemoryManagerOptions o;
    o.policy_name = "Static";
    o.state_dir = dir_;
    uint64_t total = 0;
    for (size_t i = 0; i < reserved.size(); ++i) {
      if (reserved[i] == 0) continue;
      config::MemoryReservation r;
      r.numa_node = static_cast<int32_t>(i);
      r.limits["memory"] = Bytes(reserved[i]);
      o.reserved_memory.push_back(r);
      total += reserved[i];
    }
    if (total > 0) o.node_allocatable_reservation["memory"] = Bytes(total);
    return o;
  }

  absl::StatusOr<std::unique_ptr<MemoryManager>> Start(MemoryManagerOptions o,
                                                       MachineMemory machine) {
    absl::StatusOr<std::unique_ptr<MemoryManager>> mm =
        MemoryManager::Create(std::move(o), std::move(machine), &affinity_);
    if (!mm.ok()) return mm.status();
    absl::Status st = (*mm)->Start([this] { return active_; }, [this] { return sources_ready_; });
    if (!st.ok()) return st;
    return mm;
  }

  // Two NUMA nodes of 4Gi with 1Gi reserved on each: 3Gi allocatable per node.
  std::unique_ptr<MemoryManager> TwoNodes() {
    absl::StatusOr<std::unique_ptr<MemoryManager>> mm =
        Start(StaticOptions({kGi, kGi}), Machine({4 * kGi, 4 * kGi}));
    EXPECT_TRUE(mm.ok()) << mm.status();
    return mm.ok() ? std::move(*mm) : nullptr;
  }

  std::string StateFile() const { return dir_ + "/memory_manager_state"; }
  std::string ReadState() const { return ReadFileToString(StateFile()).value_or("<none>"); }
  void WriteState(const std::string& text) { std::ofstream(StateFile()) << text; }

  std::string dir_;
  FakeAffinity affinity_;
  std::vector<api::PodPtr> active_;
  // Off by default: most tests admit several pods that are never "active"; the stale-state
  // test turns the clean-up on.
  bool sources_ready_ = false;
};

TEST_F(MemoryManagerTest, OptionsFromConfig) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  MemoryManagerOptions o = MemoryManagerOptionsFromConfig(c, config::FeatureGate());
  EXPECT_TRUE(o.enabled);  // beta, on by default in v1.28
  EXPECT_EQ(o.policy_name, "None");
  EXPECT_THAT(o.reserved_memory, IsEmpty());

  c.memory_manager_policy = "Static";
  config::MemoryReservation r;
  r.numa_node = 1;
  r.limits["memory"] = Q("1Gi");
  c.reserved_memory = {r};
  config::FeatureGate gates;
  ASSERT_TRUE(gates.Set("MemoryManager=false").ok());
  o = MemoryManagerOptionsFromConfig(c, gates);
  EXPECT_FALSE(o.enabled);
  EXPECT_EQ(o.policy_name, "Static");
  EXPECT_EQ(o.reserved_memory, c.reserved_memory);
  EXPECT_THAT(kMemoryManagerConfigFields, ElementsAre("memoryManagerPolicy", "reservedMemory"));
}

TEST_F(MemoryManagerTest, StaticValidatesReservedMemoryAgainstNodeAllocatable) {
  const MachineMemory two = Machine({4 * kGi, 4 * kGi});
  auto create = [&](MemoryManagerOptions o) {
    return MemoryManager::Create(std::move(o), two, &affinity_).status();
  };

  MemoryManagerOptions o = StaticOptions({kGi, kGi});
  EXPECT_TRUE(create(o).ok());

  o.reserved_memory[1].numa_node = 2;
  EXPECT_EQ(create(o).message(),
            "the reserved memory configuration references a NUMA node 2 that does not exist on "
            "this machine");

  o = StaticOptions({kGi});
  o.node_allocatable_reservation["memory"] = Q("1124Mi");  // kube + system reserved + eviction
  o.node_allocatable_reservation["cpu"] = Q("500m");       // not a memory type: ignored
  EXPECT_EQ(create(o).message(),
            "the total amount \"1Gi\" of type \"memory\" is not equal to the value \"1124Mi\" "
            "determined by Node Allocatable feature");

  o = StaticOptions({});
  o.node_allocatable_reservation["memory"] = Q("100Mi");
  EXPECT_EQ(create(o).message(),
            "the total amount \"0\" of type \"memory\" is not equal to the value \"100Mi\" "
            "determined by Node Allocatable feature");

  o = StaticOptions({});
  EXPECT_EQ(create(o).message(), "[memorymanager] you should specify the system reserved memory");

  // Hugepages reservations are checked per size too, and alone do not reserve memory.
  o = StaticOptions({512 * kMi, 512 * kMi});
  o.reserved_memory[0].limits["hugepages-2Mi"] = Q("4Mi");
  EXPECT_EQ(create(o).message(),
            "the total amount \"4Mi\" of type \"hugepages-2Mi\" is not equal to the value \"0\" "
            "determined by Node Allocatable feature");
  o.node_allocatable_reservation["hugepages-2Mi"] = Q("4Mi");
  EXPECT_TRUE(create(o).ok());

  o = StaticOptions({});
  config::MemoryReservation r;
  r.numa_node = 0;
  r.limits["hugepages-2Mi"] = Q("4Mi");
  o.reserved_memory = {r};
  o.node_allocatable_reservation["hugepages-2Mi"] = Q("4Mi");
  EXPECT_EQ(create(o).message(), "[memorymanager] you should specify the system reserved memory");

  o = StaticOptions({});
  r.limits = {{"memory", Q("1500m")}};
  o.reserved_memory = {r};
  o.node_allocatable_reservation["memory"] = Q("1500m");
  EXPECT_EQ(create(o).message(), "could not covert a variable of type Quantity to int64");

  o = StaticOptions({kGi});
  o.policy_name = "Foo";
  EXPECT_EQ(create(o).message(), "unknown policy: \"Foo\"");

  // The None policy ignores reservations.
  o.policy_name = "None";
  o.node_allocatable_reservation["memory"] = Q("3Gi");
  EXPECT_TRUE(create(o).ok());
}

TEST_F(MemoryManagerTest, SystemReservedMemoryPerNode) {
  MemoryManagerOptions o = StaticOptions({512 * kMi, 0, 512 * kMi});
  absl::StatusOr<SystemReservedMemory> r = GetSystemReservedMemory(
      Machine({kGi, kGi, kGi}), o.node_allocatable_reservation, o.reserved_memory);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, (SystemReservedMemory{
                    {0, {{"memory", 512 * kMi}}}, {1, {}}, {2, {{"memory", 512 * kMi}}}}));
}

TEST_F(MemoryManagerTest, NonePolicyAllocatesNothing) {
  MemoryManagerOptions o;
  o.state_dir = dir_;
  absl::StatusOr<std::unique_ptr<MemoryManager>> mm = Start(o, Machine({4 * kGi}));
  ASSERT_TRUE(mm.ok()) << mm.status();
  MemoryManager& m = **mm;
  EXPECT_EQ(m.policy_name(), "None");
  EXPECT_EQ(ReadState(), R"({"policyName":"None","machineState":{},"checksum":4236770233})");

  const api::Pod pod = MakePod("p", {Ctr("c", kGi)});
  EXPECT_THAT(m.GetTopologyHints(pod, pod.spec.containers[0]), IsEmpty());
  EXPECT_THAT(m.GetPodTopologyHints(pod), IsEmpty());
  EXPECT_TRUE(m.Allocate(pod, pod.spec.containers[0]).ok());
  EXPECT_THAT(m.GetMemoryNUMANodes("p", "c"), IsEmpty());
  EXPECT_THAT(m.GetMemory("p", "c"), IsEmpty());
  EXPECT_THAT(m.GetAllocatableMemory(), IsEmpty());
  EXPECT_THAT(m.GetMemoryAssignments(), IsEmpty());
}

TEST_F(MemoryManagerTest, OneNodeStateFileIsUpstreamsText) {
  absl::StatusOr<std::unique_ptr<MemoryManager>> mm = Start(StaticOptions({512}), Machine({2048}));
  ASSERT_TRUE(mm.ok()) << mm.status();
  MemoryManager& m = **mm;
  const std::string fresh =
      R"({"policyName":"Static","machineState":{"0":{"numberOfAssignments":0,"memoryMap":{"memory":{"total":2048,"systemReserved":512,"allocatable":1536,"reserved":0,"free":1536}},"cells":[0]}},"checksum":111932049})";
  EXPECT_EQ(ReadState(), fresh);
  EXPECT_EQ(std::filesystem::status(StateFile()).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_EQ(m.GetAllocatableMemory(), (std::vector<Block>{{{0}, "memory", 1536}}));

  const api::Pod pod = MakePod("pod", {Ctr("container1", 512)});
  EXPECT_EQ(m.GetTopologyHints(pod, pod.spec.containers[0]),
            (TopologyHints{{"memory", std::vector<TopologyHint>{Hint({0}, true)}}}));
  ASSERT_TRUE(m.Allocate(pod, pod.spec.containers[0]).ok());
  EXPECT_EQ(
      ReadState(),
      R"({"policyName":"Static","machineState":{"0":{"numberOfAssignments":1,"memoryMap":{"memory":{"total":2048,"systemReserved":512,"allocatable":1536,"reserved":512,"free":1024}},"cells":[0]}},"entries":{"pod":{"container1":[{"numaAffinity":[0],"type":"memory","size":512}]}},"checksum":2246920186})");
  EXPECT_EQ(m.GetMemoryNUMANodes("pod", "container1"), (std::set<int>{0}));
  EXPECT_EQ(m.GetMemory("pod", "container1"), (std::vector<Block>{{{0}, "memory", 512}}));
  // Allocate is idempotent.
  ASSERT_TRUE(m.Allocate(pod, pod.spec.containers[0]).ok());
  EXPECT_EQ(m.GetMachineState().at(0).number_of_assignments, 1);

  m.RemoveContainer("pod", "container1");
  EXPECT_EQ(ReadState(), fresh);
  EXPECT_THAT(m.GetMemoryNUMANodes("pod", "container1"), IsEmpty());
  m.RemoveContainer("pod", "container1");  // unknown: ignored
  EXPECT_EQ(ReadState(), fresh);
}

TEST_F(MemoryManagerTest, NonGuaranteedPodsAreIgnored) {
  std::unique_ptr<MemoryManager> m = TwoNodes();
  ASSERT_NE(m, nullptr);
  api::Pod burstable = MakePod("b", {Ctr("c", kGi)});
  burstable.spec.containers[0].resources.limits["memory"] = Bytes(2 * kGi);
  EXPECT_THAT(m->GetTopologyHints(burstable, burstable.spec.containers[0]), IsEmpty());
  EXPECT_THAT(m->GetPodTopologyHints(burstable), IsEmpty());
  EXPECT_TRUE(m->Allocate(burstable, burstable.spec.containers[0]).ok());
  api::Pod best_effort = MakePod("be", {api::Container{}});
  best_effort.spec.containers[0].name = "c";
  EXPECT_TRUE(m->Allocate(best_effort, best_effort.spec.containers[0]).ok());
  EXPECT_THAT(m->GetMemoryAssignments(), IsEmpty());
}

TEST_F(MemoryManagerTest, TwoNodeHints) {
  std::unique_ptr<MemoryManager> m = TwoNodes();
  ASSERT_NE(m, nullptr);
  const api::Pod small = MakePod("s", {Ctr("c", 2 * kGi)});
  EXPECT_EQ(m->GetTopologyHints(small, small.spec.containers[0]),
            (TopologyHints{{"memory", std::vector<TopologyHint>{Hint({0}, true), Hint({1}, true),
                                                                Hint({0, 1}, false)}}}));
  // Only both nodes together can hold 5Gi: that is the preferred (narrowest possible) hint.
  const api::Pod big = MakePod("b", {Ctr("c", 5 * kGi)});
  EXPECT_EQ(m->GetTopologyHints(big, big.spec.containers[0]),
            (TopologyHints{{"memory", std::vector<TopologyHint>{Hint({0, 1}, true)}}}));
  // Nothing can: no hints at all (no preference), and Allocate fails.
  const api::Pod huge = MakePod("h", {Ctr("c", 7 * kGi)});
  EXPECT_THAT(m->GetTopologyHints(huge, huge.spec.containers[0]), IsEmpty());
  EXPECT_EQ(m->Allocate(huge, huge.spec.containers[0]).message(),
            "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough "
            "memory is available");

  // A node holding a single-node allocation takes no part in multi-node ones.
  affinity_.Set("s", "c", Hint({0}, true));
  ASSERT_TRUE(m->Allocate(small, small.spec.containers[0]).ok());
  EXPECT_EQ(m->GetMemory("s", "c"), (std::vector<Block>{{{0}, "memory", 2 * kGi}}));
  const api::Pod next = MakePod("n", {Ctr("c", 2 * kGi)});
  EXPECT_EQ(m->GetTopologyHints(next, next.spec.containers[0]),
            (TopologyHints{{"memory", std::vector<TopologyHint>{Hint({1}, true)}}}));
  EXPECT_THAT(m->GetTopologyHints(big, big.spec.containers[0]), IsEmpty());
}

TEST_F(MemoryManagerTest, CrossNUMAAllocationFormsAGroup) {
  std::unique_ptr<MemoryManager> m = TwoNodes();
  ASSERT_NE(m, nullptr);
  const api::Pod big = MakePod("big", {Ctr("c", 5 * kGi)});
  affinity_.Set("big", "c", Hint({0, 1}, true));
  ASSERT_TRUE(m->Allocate(big, big.spec.containers[0]).ok());
  NUMANodeMap ms = m->GetMachineState();
  // Taken node after node: node 0 is full, node 1 gives the rest.
  EXPECT_EQ(ms.at(0),
            (NUMANodeState{1, {{"memory", {4 * kGi, kGi, 3 * kGi, 3 * kGi, 0}}}, {0, 1}}));
  EXPECT_EQ(ms.at(1),
            (NUMANodeState{1, {{"memory", {4 * kGi, kGi, 3 * kGi, 2 * kGi, kGi}}}, {0, 1}}));
  EXPECT_EQ(m->GetMemoryNUMANodes("big", "c"), (std::set<int>{0, 1}));

  // Grouped nodes serve no single-node allocation, only the group itself (not preferred: a
  // single node could have held the request).
  const api::Pod small = MakePod("small", {Ctr("c", kGi)});
  EXPECT_EQ(m->GetTopologyHints(small, small.spec.containers[0]),
            (TopologyHints{{"memory", std::vector<TopologyHint>{Hint({0, 1}, false)}}}));
  affinity_.Set("small", "c", Hint({0, 1}, false));
  ASSERT_TRUE(m->Allocate(small, small.spec.containers[0]).ok());
  ms = m->GetMachineState();
  EXPECT_EQ(ms.at(0).number_of_assignments, 2);
  EXPECT_EQ(ms.at(1).memory_map.at("memory").free, 0u);

  m->RemovePod("big");
  ms = m->GetMachineState();
  EXPECT_EQ(ms.at(0),
            (NUMANodeState{1, {{"memory", {4 * kGi, kGi, 3 * kGi, 0, 3 * kGi}}}, {0, 1}}));
  EXPECT_EQ(ms.at(1),
            (NUMANodeState{1, {{"memory", {4 * kGi, kGi, 3 * kGi, kGi, 2 * kGi}}}, {0, 1}}));
  m->RemovePod("small");
  ms = m->GetMachineState();
  // Without assignments a node leaves its group.
  EXPECT_EQ(ms.at(0), (NUMANodeState{0, {{"memory", {4 * kGi, kGi, 3 * kGi, 0, 3 * kGi}}}, {0}}));
  EXPECT_EQ(ms.at(1), (NUMANodeState{0, {{"memory", {4 * kGi, kGi, 3 * kGi, 0, 3 * kGi}}}, {1}}));
  EXPECT_THAT(m->GetMemoryAssignments(), IsEmpty());
}

TEST_F(MemoryManagerTest, TopologyManagerAffinityIsExtendedWhenShort) {
  std::unique_ptr<MemoryManager> m = TwoNodes();
  ASSERT_NE(m, nullptr);
  // The topology manager's merge may narrow our {0,1} to {0}; 5Gi does not fit there.
  const api::Pod pod = MakePod("p", {Ctr("c", 5 * kGi)});
  affinity_.Set("p", "c", Hint({0}, true));
  ASSERT_TRUE(m->Allocate(pod, pod.spec.containers[0]).ok());
  EXPECT_EQ(m->GetMemory("p", "c"), (std::vector<Block>{{{0, 1}, "memory", 5 * kGi}}));

  // No hint contains node 1 any more (it is grouped with 0 and they are full enough).
  const api::Pod other = MakePod("o", {Ctr("c", 2 * kGi)});
  affinity_.Set("o", "c", Hint({1}, true));
  EXPECT_EQ(m->Allocate(other, other.spec.containers[0]).message(),
            "[memorymanager] failed to find NUMA nodes to extend the current topology hint");
  EXPECT_THAT(m->GetMemory("o", "c"), IsEmpty());
}

TEST_F(MemoryManagerTest, PreferredHintErrors) {
  {
    // Uneven nodes: node 1 alone could hold 5Gi, so {0,1} is not preferred; a preferred {0}
    // from the topology manager cannot be extended to a preferred hint.
    absl::StatusOr<std::unique_ptr<MemoryManager>> mm =
        Start(StaticOptions({kGi, kGi}), Machine({4 * kGi, 11 * kGi}));
    ASSERT_TRUE(mm.ok()) << mm.status();
    const api::Pod pod = MakePod("p", {Ctr("c", 5 * kGi)});
    affinity_.Set("p", "c", Hint({0}, true));
    EXPECT_EQ((*mm)->Allocate(pod, pod.spec.containers[0]).message(),
              "[memorymanager] failed to find the extended preferred hint");
    EXPECT_THAT((*mm)->GetMemoryAssignments(), IsEmpty());
  }
  std::filesystem::remove(StateFile());
  std::unique_ptr<MemoryManager> m = TwoNodes();
  ASSERT_NE(m, nullptr);
  const api::Pod big = MakePod("big", {Ctr("c", 4 * kGi)});
  affinity_.Set("big", "c", Hint({0, 1}, true));
  ASSERT_TRUE(m->Allocate(big, big.spec.containers[0]).ok());
  // Only the group {0,1} is left, and it is not preferred: without an affinity from the
  // topology manager ("any", preferred) there is no preferred default.
  const api::Pod pod = MakePod("q", {Ctr("c", 2 * kGi)});
  EXPECT_EQ(m->Allocate(pod, pod.spec.containers[0]).message(),
            "[memorymanager] failed to find the default preferred hint");
  affinity_.Set("q", "c", Hint({0, 1}, false));
  ASSERT_TRUE(m->Allocate(pod, pod.spec.containers[0]).ok());
  EXPECT_EQ(m->GetMemory("q", "c"), (std::vector<Block>{{{0, 1}, "memory", 2 * kGi}}));
}

TEST_F(MemoryManagerTest, FourNodeHints) {
  absl::StatusOr<std::unique_ptr<MemoryManager>> mm =
      Start(StaticOptions({kGi, kGi, kGi, kGi}), Machine({4 * kGi, 4 * kGi, 4 * kGi, 4 * kGi}));
  ASSERT_TRUE(mm.ok()) << mm.status();
  MemoryManager& m = **mm;
  EXPECT_EQ(m.GetAllocatableMemory().size(), 4u);
  const api::Pod pod = MakePod("p", {Ctr("c", 7 * kGi)});
  EXPECT_EQ(m.GetTopologyHints(pod, pod.spec.containers[0]),
            (TopologyHints{
                {"memory", std::vector<TopologyHint>{Hint({0, 1, 2}, true), Hint({0, 1, 3}, true),
                                                     Hint({0, 2, 3}, true), Hint({1, 2, 3}, true),
                                                     Hint({0, 1, 2, 3}, false)}}}));
  affinity_.Set("p", "c", Hint({0, 1, 2}, true));
  ASSERT_TRUE(m.Allocate(pod, pod.spec.containers[0]).ok());
  EXPECT_EQ(m.GetMemoryNUMANodes("p", "c"), (std::set<int>{0, 1, 2}));
  NUMANodeMap ms = m.GetMachineState();
  EXPECT_EQ(ms.at(2).memory_map.at("memory").reserved, kGi);
  EXPECT_EQ(ms.at(2).cells, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(ms.at(3).cells, (std::vector<int>{3}));

  // The group can take more (2Gi are free in it), node 3 is free; other mixes are not allowed.
  const api::Pod small = MakePod("s", {Ctr("c", kGi)});
  EXPECT_EQ(m.GetTopologyHints(small, small.spec.containers[0]),
            (TopologyHints{
                {"memory", std::vector<TopologyHint>{Hint({3}, true), Hint({0, 1, 2}, false)}}}));
}

TEST_F(MemoryManagerTest, HugePages) {
  // Two nodes of 4Gi with 512 2Mi pages each; 1Gi memory reserved per node and 4Mi of hugepages
  // on node 0.
  MemoryManagerOptions o = StaticOptions({kGi, kGi});
  o.reserved_memory[0].limits["hugepages-2Mi"] = Q("4Mi");
  o.node_allocatable_reservation["hugepages-2Mi"] = Q("4Mi");
  absl::StatusOr<std::unique_ptr<MemoryManager>> mm =
      Start(o, Machine({4 * kGi, 4 * kGi}, {{2048, 512}}));
  ASSERT_TRUE(mm.ok()) << mm.status();
  MemoryManager& m = **mm;
  NUMANodeMap ms = m.GetMachineState();
  EXPECT_EQ(ms.at(0).memory_map.at("hugepages-2Mi"),
            (MemoryTable{kGi, 4 * kMi, kGi - 4 * kMi, 0, kGi - 4 * kMi}));
  // Memory's allocatable leaves out the hugepages.
  EXPECT_EQ(ms.at(0).memory_map.at("memory"), (MemoryTable{4 * kGi, kGi, 2 * kGi, 0, 2 * kGi}));
  EXPECT_EQ(ms.at(1).memory_map.at("hugepages-2Mi"), (MemoryTable{kGi, 0, kGi, 0, kGi}));
  EXPECT_EQ(m.GetAllocatableMemory(), (std::vector<Block>{{{0}, "hugepages-2Mi", kGi - 4 * kMi},
                                                          {{0}, "memory", 2 * kGi},
                                                          {{1}, "hugepages-2Mi", kGi},
                                                          {{1}, "memory", 2 * kGi}}));

  // 1Gi of hugepages fit only node 1 alone.
  const api::Pod pod = MakePod("p", {Ctr("c", kGi, {{"hugepages-2Mi", kGi}})});
  const std::vector<TopologyHint> want{Hint({1}, true), Hint({0, 1}, false)};
  EXPECT_EQ(m.GetTopologyHints(pod, pod.spec.containers[0]),
            (TopologyHints{{"hugepages-2Mi", want}, {"memory", want}}));
  affinity_.Set("p", "c", Hint({1}, true));
  ASSERT_TRUE(m.Allocate(pod, pod.spec.containers[0]).ok());
  EXPECT_EQ(m.GetMemory("p", "c"),
            (std::vector<Block>{{{1}, "hugepages-2Mi", kGi}, {{1}, "memory", kGi}}));
  ms = m.GetMachineState();
  EXPECT_EQ(ms.at(1).number_of_assignments, 2);  // one per memory type
  EXPECT_EQ(ms.at(1).memory_map.at("hugepages-2Mi").free, 0u);
  EXPECT_EQ(ms.at(1).memory_map.at("memory").free, kGi);
  // Regenerated for both types after the allocation.
  const std::vector<TopologyHint> again{Hint({1}, true)};
  EXPECT_EQ(m.GetTopologyHints(pod, pod.spec.containers[0]),
            (TopologyHints{{"hugepages-2Mi", again}, {"memory", again}}));

  m.RemovePod("p");
  ms = m.GetMachineState();
  EXPECT_EQ(ms.at(1).number_of_assignments, 0);
  EXPECT_EQ(ms.at(1).memory_map.at("hugepages-2Mi"), (MemoryTable{kGi, 0, kGi, 0, kGi}));
}

TEST_F(MemoryManagerTest, InitContainerMemoryIsReused) {
  std::unique_ptr<MemoryManager> m = TwoNodes();
  ASSERT_NE(m, nullptr);
  const api::Pod pod = MakePod("p", {Ctr("app", kGi)}, {Ctr("init", 2 * kGi)});
  affinity_.Set("p", "init", Hint({0}, true));
  affinity_.Set("p", "app", Hint({0}, true));
  active_ = {std::make_shared<const api::Pod>(pod)};

  ASSERT_TRUE(m->Allocate(pod, pod.spec.init_containers[0]).ok());
  EXPECT_EQ(m->GetMachineState().at(0).memory_map.at("memory").reserved, 2 * kGi);
  // The app container's hints count the init container's memory as available to it (node 0
  // holds a single-node allocation now: no {0,1}).
  EXPECT_EQ(
      m->GetTopologyHints(pod, pod.spec.containers[0]),
      (TopologyHints{{"memory", std::vector<TopologyHint>{Hint({0}, true), Hint({1}, true)}}}));
  ASSERT_TRUE(m->Allocate(pod, pod.spec.containers[0]).ok());
  NUMANodeMap ms = m->GetMachineState();
  EXPECT_EQ(ms.at(0).memory_map.at("memory").reserved, 2 * kGi);  // nothing more taken
  EXPECT_EQ(ms.at(0).number_of_assignments, 2);
  // The init container's block gives up what the app container reused.
  EXPECT_EQ(m->GetMemory("p", "init"), (std::vector<Block>{{{0}, "memory", kGi}}));
  EXPECT_EQ(m->GetMemory("p", "app"), (std::vector<Block>{{{0}, "memory", kGi}}));

  // The state survives a restart as it is.
  {
    absl::StatusOr<std::unique_ptr<MemoryManager>> again =
        Start(StaticOptions({kGi, kGi}), Machine({4 * kGi, 4 * kGi}));
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ((*again)->GetMachineState(), ms);
  }

  // The app container starts: the init container has finished, its memory goes back.
  m->AddContainer(pod, "app");
  ms = m->GetMachineState();
  EXPECT_EQ(ms.at(0), (NUMANodeState{1, {{"memory", {4 * kGi, kGi, 3 * kGi, kGi, 2 * kGi}}}, {0}}));
  EXPECT_THAT(m->GetMemory("p", "init"), IsEmpty());
  EXPECT_EQ(m->GetMemoryAssignments().at("p").size(), 1u);
}

TEST_F(MemoryManagerTest, InitContainersBeforeTheStartingOneAreReleased) {
  std::unique_ptr<MemoryManager> m = TwoNodes();
  ASSERT_NE(m, nullptr);
  const api::Pod pod = MakePod("p", {Ctr("app", kGi)}, {Ctr("init1", kGi), Ctr("init2", 2 * kGi)});
  for (const char* c : {"init1", "init2", "app"}) affinity_.Set("p", c, Hint({1}, true));
  ASSERT_TRUE(m->Allocate(pod, pod.spec.init_containers[0]).ok());
  ASSERT_TRUE(m->Allocate(pod, pod.spec.init_containers[1]).ok());
  // init2 reused init1's 1Gi and took 1Gi more; init1's block dropped to 0.
  EXPECT_EQ(m->GetMemory("p", "init1"), (std::vector<Block>{{{1}, "memory", 0}}));
  EXPECT_EQ(m->GetMachineState().at(1).memory_map.at("memory").reserved, 2 * kGi);

  m->AddContainer(pod, "init1");  // nothing before it
  EXPECT_EQ(m->GetMemoryAssignments().at("p").size(), 2u);
  m->AddContainer(pod, "init2");
  EXPECT_THAT(m->GetMemory("p", "init1"), IsEmpty());
  EXPECT_EQ(m->GetMemory("p", "init2"), (std::vector<Block>{{{1}, "memory", 2 * kGi}}));
  EXPECT_EQ(m->GetMachineState().at(1).number_of_assignments, 1);
}

TEST_F(MemoryManagerTest, PodScopeHints) {
  std::unique_ptr<MemoryManager> m = TwoNodes();
  ASSERT_NE(m, nullptr);
  // max(largest init container, sum of app containers) = 3Gi.
  const api::Pod pod =
      MakePod("p", {Ctr("a", kGi), Ctr("b", kGi)}, {Ctr("i1", 3 * kGi), Ctr("i2", kGi)});
  EXPECT_EQ(m->GetPodTopologyHints(pod),
            (TopologyHints{{"memory", std::vector<TopologyHint>{Hint({0}, true), Hint({1}, true),
                                                                Hint({0, 1}, false)}}}));
  const api::Pod wide = MakePod("w", {Ctr("a", 2 * kGi), Ctr("b", 2 * kGi)}, {Ctr("i", kGi)});
  EXPECT_EQ(m->GetPodTopologyHints(wide),
            (TopologyHints{{"memory", std::vector<TopologyHint>{Hint({0, 1}, true)}}}));

  absl::StatusOr<std::map<std::string, uint64_t>> req = PodMemoryRequests(pod);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(*req, (std::map<std::string, uint64_t>{{"memory", 3 * kGi}}));

  // Once the pod has memory, its allocation is the only hint (when the sizes agree).
  const api::Pod single = MakePod("s", {Ctr("c", 2 * kGi)});
  affinity_.Set("s", "c", Hint({1}, true));
  ASSERT_TRUE(m->Allocate(single, single.spec.containers[0]).ok());
  EXPECT_EQ(m->GetPodTopologyHints(single),
            (TopologyHints{{"memory", std::vector<TopologyHint>{Hint({1}, true)}}}));
}

TEST_F(MemoryManagerTest, HintsAfterRestartRegenerateTheAllocation) {
  {
    std::unique_ptr<MemoryManager> m = TwoNodes();
    ASSERT_NE(m, nullptr);
    const api::Pod pod = MakePod("p", {Ctr("c", 2 * kGi)});
    affinity_.Set("p", "c", Hint({1}, true));
    ASSERT_TRUE(m->Allocate(pod, pod.spec.containers[0]).ok());
  }
  const std::string before = ReadState();
  affinity_ = FakeAffinity();
  std::unique_ptr<MemoryManager> m = TwoNodes();
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ReadState(), before);
  const api::Pod pod = MakePod("p", {Ctr("c", 2 * kGi)});
  EXPECT_EQ(m->GetTopologyHints(pod, pod.spec.containers[0]),
            (TopologyHints{{"memory", std::vector<TopologyHint>{Hint({1}, true)}}}));
  EXPECT_TRUE(m->Allocate(pod, pod.spec.containers[0]).ok());  // already there
  EXPECT_EQ(m->GetMemoryNUMANodes("p", "c"), (std::set<int>{1}));
  // A different request than what was allocated: no preference.
  const api::Pod changed = MakePod("p", {Ctr("c", 3 * kGi)});
  EXPECT_THAT(m->GetTopologyHints(changed, changed.spec.containers[0]), IsEmpty());
  EXPECT_EQ(ReadState(), before);
}

TEST_F(MemoryManagerTest, StaleStateOfInactivePodsIsRemoved) {
  std::unique_ptr<MemoryManager> m = TwoNodes();
  ASSERT_NE(m, nullptr);
  const api::Pod a = MakePod("a", {Ctr("c1", kGi), Ctr("c2", kGi)});
  const api::Pod b = MakePod("b", {Ctr("c", kGi)});
  sources_ready_ = true;
  // The pod in admission is not active yet, but keeps its state.
  ASSERT_TRUE(m->Allocate(a, a.spec.containers[0]).ok());
  ASSERT_TRUE(m->Allocate(a, a.spec.containers[1]).ok());
  EXPECT_EQ(m->GetMemoryAssignments().at("a").size(), 2u);

  // Sources not ready: the active pod list may be incomplete, nothing is removed.
  sources_ready_ = false;
  m->GetTopologyHints(b, b.spec.containers[0]);
  EXPECT_EQ(m->GetMemoryAssignments().count("a"), 1u);
  sources_ready_ = true;

  active_ = {std::make_shared<const api::Pod>(a)};
  m->GetTopologyHints(b, b.spec.containers[0]);
  EXPECT_EQ(m->GetMemoryAssignments().count("a"), 1u);

  active_.clear();
  m->GetPodTopologyHints(b);
  EXPECT_EQ(m->GetMemoryAssignments().count("a"), 0u);
  for (const auto& [id, node] : m->GetMachineState()) {
    EXPECT_EQ(node.number_of_assignments, 0) << id;
    EXPECT_EQ(node.memory_map.at("memory").reserved, 0u) << id;
  }
  absl::StatusOr<MemoryManagerCheckpoint> file = UnmarshalCheckpoint(ReadState());
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(file->entries, IsEmpty());
}

TEST_F(MemoryManagerTest, StateFileRoundTrip) {
  std::unique_ptr<MemoryManager> m = TwoNodes();
  ASSERT_NE(m, nullptr);
  const api::Pod a = MakePod("a", {Ctr("c", 2 * kGi)});
  const api::Pod b = MakePod("b", {Ctr("x", kGi), Ctr("y", 512 * kMi)});
  ASSERT_TRUE(m->Allocate(a, a.spec.containers[0]).ok());
  ASSERT_TRUE(m->Allocate(b, b.spec.containers[0]).ok());
  ASSERT_TRUE(m->Allocate(b, b.spec.containers[1]).ok());
  absl::StatusOr<MemoryManagerCheckpoint> file = UnmarshalCheckpoint(ReadState());
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->policy_name, "Static");
  EXPECT_EQ(file->machine_state, m->GetMachineState());
  EXPECT_EQ(file->entries, m->GetMemoryAssignments());
  EXPECT_EQ(file->checksum, Checksum(*file));
  EXPECT_EQ(MarshalCheckpoint(*file), ReadState());
}

TEST_F(MemoryManagerTest, RestoreRefusesAMismatchingPolicyOrACorruptFile) {
  // A file written by upstream's tests with its lowercase "static".
  WriteState(
      R"({"policyName":"static","machineState":{"0":{"numberOfAssignments":0,"memoryMap":{"memory":{"total":2048,"systemReserved":512,"allocatable":1536,"reserved":512,"free":1024}},"cells":[]}},"entries":{"pod":{"container1":[{"numaAffinity":[0],"type":"memory","size":512}]}},"checksum":4215593881})");
  absl::StatusOr<std::unique_ptr<MemoryManager>> mm = Start(StaticOptions({512}), Machine({2048}));
  EXPECT_EQ(mm.status().message(),
            absl::StrCat("could not restore state from checkpoint: [memorymanager] configured "
                         "policy \"Static\" differs from state checkpoint policy \"static\", "
                         "please drain this node and delete the memory manager checkpoint file \"",
                         StateFile(), "\" before restarting Kubelet"));

  WriteState(R"({"policyName":"Static","machineState":{},"checksum":1})");
  mm = Start(StaticOptions({512}), Machine({2048}));
  EXPECT_EQ(mm.status().message(),
            absl::StrCat("could not restore state from checkpoint: checkpoint is corrupted, "
                         "please drain this node and delete the memory manager checkpoint file \"",
                         StateFile(), "\" before restarting Kubelet"));

  // A Static file under the None policy.
  std::filesystem::remove(StateFile());
  ASSERT_TRUE(Start(StaticOptions({512}), Machine({2048})).ok());
  MemoryManagerOptions none;
  none.state_dir = dir_;
  mm = Start(none, Machine({2048}));
  EXPECT_THAT(std::string(mm.status().message()),
              ::testing::HasSubstr("[memorymanager] configured policy \"None\" differs from state "
                                   "checkpoint policy \"Static\""));
}

TEST_F(MemoryManagerTest, RestoreRefusesAChangedMachine) {
  {
    std::unique_ptr<MemoryManager> m = TwoNodes();
    ASSERT_NE(m, nullptr);
    const api::Pod pod = MakePod("p", {Ctr("c", 2 * kGi)});
    ASSERT_TRUE(m->Allocate(pod, pod.spec.containers[0]).ok());
  }
  const std::string saved = ReadState();
  // More memory on node 0.
  absl::StatusOr<std::unique_ptr<MemoryManager>> mm =
      Start(StaticOptions({kGi, kGi}), Machine({5 * kGi, 4 * kGi}));
  EXPECT_EQ(mm.status().message(),
            "[memorymanager] the expected machine state is different from the real one");
  // Another reservation.
  mm = Start(StaticOptions({2 * kGi, kGi}), Machine({4 * kGi, 4 * kGi}));
  EXPECT_EQ(mm.status().message(),
            "[memorymanager] the expected machine state is different from the real one");
  // A NUMA node less.
  mm = Start(StaticOptions({kGi}), Machine({4 * kGi}));
  EXPECT_FALSE(mm.ok());
  EXPECT_EQ(ReadState(), saved);  // left alone
  // The same machine starts.
  EXPECT_TRUE(Start(StaticOptions({kGi, kGi}), Machine({4 * kGi, 4 * kGi})).ok());
}

TEST_F(MemoryManagerTest, RestoreRefusesInconsistentAssignments) {
  MemoryManagerCheckpoint cp;
  cp.policy_name = "Static";
  cp.entries["p"]["c"] = {Block{{0}, "memory", 512}};
  WriteState(MarshalCheckpoint(cp));
  absl::StatusOr<std::unique_ptr<MemoryManager>> mm = Start(StaticOptions({512}), Machine({2048}));
  EXPECT_EQ(mm.status().message(),
            "[memorymanager] machine state can not be empty when it has memory assignments");

  cp.machine_state[0].memory_map["memory"] = MemoryTable{2048, 512, 1536, 512, 1024};
  cp.machine_state[0].number_of_assignments = 1;
  cp.machine_state[0].cells = {0};
  cp.entries["p"]["c"] = {Block{{5}, "memory", 512}};
  WriteState(MarshalCheckpoint(cp));
  mm = Start(StaticOptions({512}), Machine({2048}));
  EXPECT_EQ(mm.status().message(),
            "[memorymanager] (pod: p, container: c) the memory assignment uses the NUMA that does "
            "not exist");

  cp.entries["p"]["c"] = {Block{{0}, "hugepages-1Gi", 512}};
  WriteState(MarshalCheckpoint(cp));
  mm = Start(StaticOptions({512}), Machine({2048}));
  EXPECT_EQ(mm.status().message(),
            "[memorymanager] (pod: p, container: c) the memory assignment uses memory resource "
            "that does not exist");

  cp.entries["p"]["c"] = {Block{{0}, "memory", 512}};
  WriteState(MarshalCheckpoint(cp));
  mm = Start(StaticOptions({512}), Machine({2048}));
  ASSERT_TRUE(mm.ok()) << mm.status();
  EXPECT_EQ((*mm)->GetMemoryNUMANodes("p", "c"), (std::set<int>{0}));
}

TEST_F(MemoryManagerTest, NothingHappensBeforeStart) {
  absl::StatusOr<std::unique_ptr<MemoryManager>> mm =
      MemoryManager::Create(StaticOptions({kGi}), Machine({4 * kGi}), &affinity_);
  ASSERT_TRUE(mm.ok()) << mm.status();
  const api::Pod pod = MakePod("p", {Ctr("c", kGi)});
  EXPECT_THAT((*mm)->GetTopologyHints(pod, pod.spec.containers[0]), IsEmpty());
  EXPECT_EQ((*mm)->Allocate(pod, pod.spec.containers[0]).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(std::filesystem::exists(StateFile()));
}

TEST_F(MemoryManagerTest, FractionalRequestsAreRefused) {
  std::unique_ptr<MemoryManager> m = TwoNodes();
  ASSERT_NE(m, nullptr);
  api::Pod pod = MakePod("p", {Ctr("c", kGi)});
  pod.spec.containers[0].resources.requests["memory"] = Q("1500m");
  pod.spec.containers[0].resources.limits["memory"] = Q("1500m");
  EXPECT_EQ(m->Allocate(pod, pod.spec.containers[0]).message(),
            "[memorymanager] failed to represent quantity as int64");
  EXPECT_THAT(m->GetTopologyHints(pod, pod.spec.containers[0]), IsEmpty());
}

TEST_F(MemoryManagerTest, ConcurrentAllocationsAreConsistent) {
  absl::StatusOr<std::unique_ptr<MemoryManager>> mm =
      Start(StaticOptions({kGi, kGi}), Machine({64 * kGi, 64 * kGi}));
  ASSERT_TRUE(mm.ok()) << mm.status();
  MemoryManager& m = **mm;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&m, t] {
      for (int i = 0; i < 10; ++i) {
        const api::Pod pod = MakePod(absl::StrCat("p", t, "-", i), {Ctr("c", kGi)});
        m.GetTopologyHints(pod, pod.spec.containers[0]);
        EXPECT_TRUE(m.Allocate(pod, pod.spec.containers[0]).ok());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  uint64_t reserved = 0;
  int assignments = 0;
  for (const auto& [id, node] : m.GetMachineState()) {
    reserved += node.memory_map.at("memory").reserved;
    assignments += node.number_of_assignments;
  }
  EXPECT_EQ(reserved, 40 * kGi);
  EXPECT_EQ(assignments, 40);
  absl::StatusOr<MemoryManagerCheckpoint> file = UnmarshalCheckpoint(ReadState());
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->entries.size(), 40u);
}

}  // namespace
}  // namespace kubelet::memorymanager
