#include "kubelet/cpumanager/policy_static.h"

#include <map>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "kubelet/cpumanager/policy_options.h"
#include "kubelet/cpumanager/testing/topologies.h"
#include "metrics/metrics.h"

namespace kubelet::cpumanager {
namespace {

using config::CPUSet;
using testing::BestEffortContainer;
using testing::BurstableContainer;
using testing::DualSocketHT;
using testing::DualSocketMultiNUMAHT;
using testing::GuaranteedContainer;
using testing::MakePod;
using testing::SingleSocketHT;
using topologymanager::NUMAMask;
using topologymanager::TopologyHint;
using topologymanager::TopologyHints;

CPUSet Set(const std::string& s) { return *CPUSet::Parse(s); }

class FakeAffinity : public topologymanager::AffinityStore {
 public:
  TopologyHint GetAffinity(const std::string& pod_uid,
                           const std::string& container_name) const override {
    auto it = hints.find({pod_uid, container_name});
    return it == hints.end() ? TopologyHint{std::nullopt, true} : it->second;
  }
  std::map<std::pair<std::string, std::string>, TopologyHint> hints;
};

StaticPolicy NewPolicy(topology::CPUTopology topo, int num_reserved,
                       StaticPolicyOptions options = {}, CPUSet reserved = {}) {
  absl::StatusOr<StaticPolicy> p =
      StaticPolicy::Create(std::move(topo), num_reserved, reserved, options);
  EXPECT_TRUE(p.ok()) << p.status();
  return *std::move(p);
}

// A started state: every CPU shared.
CPUState Started(const StaticPolicy& p) {
  CPUState s;
  EXPECT_TRUE(p.Start(&s).ok());
  return s;
}

TEST(StaticPolicyTest, ReservesTheLowestCoresByTopology) {
  EXPECT_EQ(NewPolicy(SingleSocketHT(), 2).reserved().String(), "0,4");
  EXPECT_EQ(NewPolicy(SingleSocketHT(), 1).reserved().String(), "0");
  EXPECT_EQ(NewPolicy(DualSocketHT(), 2).reserved().String(), "0,6");
  EXPECT_EQ(NewPolicy(DualSocketHT(), 2, {}, Set("1,6")).reserved().String(), "1,6");
  EXPECT_EQ(NewPolicy(SingleSocketHT(), 1).GetAllocatableCPUs().String(), "1-7");

  absl::StatusOr<StaticPolicy> p = StaticPolicy::Create(SingleSocketHT(), 3, Set("0-1"), {});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "[cpumanager] unable to reserve the required amount of CPUs (size of 0-1 did not "
            "equal 3)");
  p = StaticPolicy::Create(SingleSocketHT(), 9, {}, {});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "[cpumanager] unable to reserve the required amount of CPUs (size of  did not equal "
            "9)");
  p = StaticPolicy::Create(SingleSocketHT(), 1, Set("9"), {});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "[cpumanager] unable to build the reserved physical CPUs from the reserved set: "
            "unknown CPU ID: 9");
}

TEST(StaticPolicyTest, StartChecksTheRestoredState) {
  StaticPolicy p = NewPolicy(SingleSocketHT(), 1);
  CPUState s;
  ASSERT_TRUE(p.Start(&s).ok());
  EXPECT_EQ(s.default_cpu_set.String(), "0-7");

  s = CPUState{};
  s.Set("pod", "c", Set("1"));
  EXPECT_EQ(p.Start(&s).message(), "default cpuset cannot be empty");

  s = CPUState{Set("1-7"), {}};
  EXPECT_EQ(p.Start(&s).message(),
            "not all reserved cpus: \"0\" are present in defaultCpuSet: \"1-7\"");

  s = CPUState{Set("0-7"), {}};
  s.Set("pod", "c", Set("1"));
  EXPECT_EQ(p.Start(&s).message(),
            "pod: pod, container: c cpuset: \"1\" overlaps with default cpuset \"0-7\"");

  s = CPUState{Set("0-6"), {}};
  EXPECT_EQ(p.Start(&s).message(),
            "current set of available CPUs \"0-7\" doesn't match with CPUs in state \"0-6\"");

  s = CPUState{Set("0,2-7"), {}};
  s.Set("pod", "c", Set("1"));
  EXPECT_TRUE(p.Start(&s).ok());
}

TEST(StaticPolicyTest, ExclusiveCPUsOnlyForIntegralGuaranteedContainers) {
  StaticPolicy p = NewPolicy(SingleSocketHT(), 1);
  CPUState s = Started(p);

  api::Pod gu = MakePod("gu", {GuaranteedContainer("app", "2")});
  ASSERT_TRUE(p.Allocate(&s, gu, gu.spec.containers[0], nullptr).ok());
  // Core 0 holds the reserved CPU: the first whole core is core 1.
  EXPECT_EQ(s.Get("gu", "app")->String(), "1,5");
  EXPECT_EQ(s.default_cpu_set.String(), "0,2-4,6-7");

  // Allocating again keeps what the container has.
  ASSERT_TRUE(p.Allocate(&s, gu, gu.spec.containers[0], nullptr).ok());
  EXPECT_EQ(s.Get("gu", "app")->String(), "1,5");

  // One CPU: the free thread of the core the reserved CPU is on.
  api::Pod one = MakePod("one", {GuaranteedContainer("app", "1")});
  ASSERT_TRUE(p.Allocate(&s, one, one.spec.containers[0], nullptr).ok());
  EXPECT_EQ(s.Get("one", "app")->String(), "4");

  for (const api::Pod& shared : {MakePod("be", {BestEffortContainer("app")}),
                                 MakePod("bu", {BurstableContainer("app", "2")}),
                                 MakePod("frac", {GuaranteedContainer("app", "1500m")})}) {
    ASSERT_TRUE(p.Allocate(&s, shared, shared.spec.containers[0], nullptr).ok());
    EXPECT_FALSE(s.Get(shared.metadata.uid, "app").has_value()) << shared.metadata.uid;
    EXPECT_EQ(s.GetOrDefault(shared.metadata.uid, "app").String(), "0,2-3,6-7");
  }

  api::Pod big = MakePod("big", {GuaranteedContainer("app", "5")});
  absl::Status st = p.Allocate(&s, big, big.spec.containers[0], nullptr);
  EXPECT_EQ(st.message(), "not enough cpus available to satisfy request: requested=5, available=4");
  EXPECT_FALSE(IsSMTAlignmentError(st));
  EXPECT_EQ(s.default_cpu_set.String(), "0,2-3,6-7");

  p.RemoveContainer(&s, "gu", "app");
  EXPECT_EQ(s.default_cpu_set.String(), "0-3,5-7");
  EXPECT_FALSE(s.Get("gu", "app").has_value());
  EXPECT_EQ(p.GetAvailableCPUs(s).String(), "1-3,5-7");
}

TEST(StaticPolicyTest, FullPCPUsOnly) {
  StaticPolicyOptions full{.full_physical_cpus_only = true};
  StaticPolicy p = NewPolicy(SingleSocketHT(), 1, full);
  CPUState s = Started(p);
  auto& requests = metrics::Kubelet().cpu_manager_pinning_requests.Add({});
  auto& errors = metrics::Kubelet().cpu_manager_pinning_errors.Add({});
  const double requests_before = requests.Value();
  const double errors_before = errors.Value();
  api::Pod odd = MakePod("odd", {GuaranteedContainer("app", "1")});
  absl::Status st = p.Allocate(&s, odd, odd.spec.containers[0], nullptr);
  EXPECT_EQ(st.message(), "SMT Alignment Error: requested 1 cpus not multiple cpus per core = 2");
  EXPECT_TRUE(IsSMTAlignmentError(st));
  EXPECT_EQ(requests.Value(), requests_before + 1);
  EXPECT_EQ(errors.Value(), errors_before + 1);
  // Shared-pool containers are not pinning requests.
  api::Pod be = MakePod("be", {BestEffortContainer("app")});
  ASSERT_TRUE(p.Allocate(&s, be, be.spec.containers[0], nullptr).ok());
  EXPECT_EQ(requests.Value(), requests_before + 1);
  api::Pod two = MakePod("two", {GuaranteedContainer("app", "2")});
  ASSERT_TRUE(p.Allocate(&s, two, two.spec.containers[0], nullptr).ok());
  EXPECT_EQ(s.Get("two", "app")->String(), "1,5");

  // Reserved CPUs that are not siblings (upstream issue 113537): their cores' other threads do
  // not count as free whole cores.
  StaticPolicy dual = NewPolicy(DualSocketHT(), 2, full, Set("1,6"));
  CPUState ds = Started(dual);
  api::Pod ten = MakePod("ten", {GuaranteedContainer("app", "10")});
  st = dual.Allocate(&ds, ten, ten.spec.containers[0], nullptr);
  EXPECT_EQ(st.message(),
            "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = 8, "
            "requested CPUs = 10, CPUs per core = 2");
  EXPECT_TRUE(IsSMTAlignmentError(st));
  api::Pod eight = MakePod("eight", {GuaranteedContainer("app", "8")});
  ASSERT_TRUE(dual.Allocate(&ds, eight, eight.spec.containers[0], nullptr).ok());
  EXPECT_EQ(ds.Get("eight", "app")->String(), "2-5,8-11");

  // A container already holding CPUs keeps them though no whole core is left.
  ASSERT_TRUE(dual.Allocate(&ds, eight, eight.spec.containers[0], nullptr).ok());
  EXPECT_EQ(ds.Get("eight", "app")->String(), "2-5,8-11");

  EXPECT_FALSE(IsSMTAlignmentError(absl::OkStatus()));
  EXPECT_FALSE(IsSMTAlignmentError(absl::InternalError("other")));
}

TEST(StaticPolicyTest, AppContainersReuseInitContainerCPUs) {
  StaticPolicy p = NewPolicy(SingleSocketHT(), 1);
  CPUState s = Started(p);
  api::Pod pod =
      MakePod("p", {GuaranteedContainer("app", "2")}, {GuaranteedContainer("init", "4")});
  ASSERT_TRUE(p.Allocate(&s, pod, pod.spec.init_containers[0], nullptr).ok());
  EXPECT_EQ(s.Get("p", "init")->String(), "1-2,5-6");
  ASSERT_TRUE(p.Allocate(&s, pod, pod.spec.containers[0], nullptr).ok());
  // The app container runs on CPUs the init container held; the shared pool is not touched.
  EXPECT_EQ(s.Get("p", "app")->String(), "1,5");
  EXPECT_EQ(s.default_cpu_set.String(), "0,3-4,7");
  // Removing the init container frees only what the app container does not use.
  p.RemoveContainer(&s, "p", "init");
  EXPECT_EQ(s.default_cpu_set.String(), "0,2-4,6-7");
  EXPECT_EQ(s.Get("p", "app")->String(), "1,5");
}

TEST(StaticPolicyTest, SidecarCPUsAreNotReused) {
  StaticPolicy p = NewPolicy(SingleSocketHT(), 1);
  CPUState s = Started(p);
  api::Container sidecar = GuaranteedContainer("sidecar", "2");
  sidecar.restart_policy = "Always";
  api::Pod pod = MakePod("p", {GuaranteedContainer("app", "2")}, {sidecar});
  ASSERT_TRUE(p.Allocate(&s, pod, pod.spec.init_containers[0], nullptr).ok());
  ASSERT_TRUE(p.Allocate(&s, pod, pod.spec.containers[0], nullptr).ok());
  EXPECT_EQ(s.Get("p", "sidecar")->String(), "1,5");
  EXPECT_EQ(s.Get("p", "app")->String(), "2,6");
  // Sidecars run beside the app containers: the pod needs both.
  EXPECT_EQ(PodGuaranteedCPUs(pod), 4);
  api::Pod plain = MakePod("q", {GuaranteedContainer("app", "2")}, {GuaranteedContainer("i", "3")});
  EXPECT_EQ(PodGuaranteedCPUs(plain), 3);
}

TEST(StaticPolicyTest, AllocationFollowsTheTopologyManagersAffinity) {
  StaticPolicy p = NewPolicy(DualSocketHT(), 1);
  CPUState s = Started(p);
  FakeAffinity affinity;
  api::Pod pod = MakePod("p", {GuaranteedContainer("a", "2"), GuaranteedContainer("b", "2")});
  affinity.hints[{"p", "a"}] = TopologyHint{NUMAMask{1}, true};
  ASSERT_TRUE(p.Allocate(&s, pod, pod.spec.containers[0], &affinity).ok());
  EXPECT_EQ(s.Get("p", "a")->String(), "1,7");
  // No affinity: packing goes on with the NUMA node that has fewer free CPUs (4 on node 1, 5 on
  // node 0 beside the reserved CPU).
  ASSERT_TRUE(p.Allocate(&s, pod, pod.spec.containers[1], &affinity).ok());
  EXPECT_EQ(s.Get("p", "b")->String(), "3,9");
}

TEST(StaticPolicyTest, AlignBySocketWidensTheAffinityToItsSocket) {
  FakeAffinity affinity;
  affinity.hints[{"p", "app"}] = TopologyHint{NUMAMask{1}, true};
  api::Pod pod = MakePod("p", {GuaranteedContainer("app", "10")});

  StaticPolicy numa = NewPolicy(DualSocketMultiNUMAHT(), 1);
  CPUState s = Started(numa);
  ASSERT_TRUE(numa.Allocate(&s, pod, pod.spec.containers[0], &affinity).ok());
  EXPECT_EQ(s.Get("p", "app")->String(), "10-14,50-54");

  // Socket 0 is NUMA nodes 0 and 1; node 0, partly used by the reserved CPU, is filled first.
  StaticPolicy socket = NewPolicy(DualSocketMultiNUMAHT(), 1, {.align_by_socket = true});
  s = Started(socket);
  ASSERT_TRUE(socket.Allocate(&s, pod, pod.spec.containers[0], &affinity).ok());
  EXPECT_EQ(s.Get("p", "app")->String(), "1-5,41-45");
}

std::vector<TopologyHint> CPUHints(const TopologyHints& hints) {
  auto it = hints.find("cpu");
  if (it == hints.end() || !it->second.has_value()) {
    ADD_FAILURE() << "no cpu hints";
    return {};
  }
  return *it->second;
}

TEST(StaticPolicyTest, TopologyHints) {
  StaticPolicy p = NewPolicy(DualSocketHT(), 1);  // reserves CPU 0, on NUMA node 0
  CPUState s = Started(p);
  auto hints_for = [&](const std::string& cpu) {
    api::Pod pod = MakePod("h" + cpu, {GuaranteedContainer("app", cpu)});
    return CPUHints(p.GetTopologyHints(s, pod, pod.spec.containers[0]));
  };
  EXPECT_EQ(hints_for("2"),
            (std::vector<TopologyHint>{
                {NUMAMask{0}, true}, {NUMAMask{1}, true}, {NUMAMask{0, 1}, false}}));
  // Node 0 has 5 CPUs left: 6 fit only node 1 (still preferred: one node could hold them).
  EXPECT_EQ(hints_for("6"),
            (std::vector<TopologyHint>{{NUMAMask{1}, true}, {NUMAMask{0, 1}, false}}));
  EXPECT_EQ(hints_for("7"), (std::vector<TopologyHint>{{NUMAMask{0, 1}, true}}));
  EXPECT_EQ(hints_for("12"), std::vector<TopologyHint>{});

  // No exclusive CPUs: no preference.
  api::Pod be = MakePod("be", {BestEffortContainer("app")});
  EXPECT_TRUE(p.GetTopologyHints(s, be, be.spec.containers[0]).empty());

  // Already allocated: hints regenerated from its CPUs; a different count cannot be satisfied.
  api::Pod pod = MakePod("a", {GuaranteedContainer("app", "2")});
  s.Set("a", "app", Set("1,7"));
  s.default_cpu_set = s.default_cpu_set.Difference(Set("1,7"));
  EXPECT_EQ(CPUHints(p.GetTopologyHints(s, pod, pod.spec.containers[0])),
            (std::vector<TopologyHint>{{NUMAMask{1}, true}, {NUMAMask{0, 1}, false}}));
  api::Pod grown = MakePod("a", {GuaranteedContainer("app", "3")});
  EXPECT_EQ(CPUHints(p.GetTopologyHints(s, grown, grown.spec.containers[0])),
            std::vector<TopologyHint>{});
}

TEST(StaticPolicyTest, PodTopologyHints) {
  StaticPolicy p = NewPolicy(DualSocketHT(), 1);
  CPUState s = Started(p);
  api::Pod pod = MakePod("p", {GuaranteedContainer("a", "3"), GuaranteedContainer("b", "3")});
  EXPECT_EQ(CPUHints(p.GetPodTopologyHints(s, pod)),
            (std::vector<TopologyHint>{{NUMAMask{1}, true}, {NUMAMask{0, 1}, false}}));
  // Every container allocated: regenerated from their CPUs.
  s.Set("p", "a", Set("1,3,5"));
  s.Set("p", "b", Set("7,9,11"));
  s.default_cpu_set = Set("0,2,4,6,8,10");
  EXPECT_EQ(CPUHints(p.GetPodTopologyHints(s, pod)),
            (std::vector<TopologyHint>{{NUMAMask{1}, true}, {NUMAMask{0, 1}, false}}));
  api::Pod be = MakePod("be", {BestEffortContainer("app")});
  EXPECT_TRUE(p.GetPodTopologyHints(s, be).empty());
}

TEST(StaticPolicyTest, AlignBySocketPrefersSocketAlignedHints) {
  api::Pod pod = MakePod("p", {GuaranteedContainer("app", "10")});
  StaticPolicy numa = NewPolicy(DualSocketMultiNUMAHT(), 1);
  CPUState s = Started(numa);
  std::map<uint64_t, bool> preferred;
  for (const TopologyHint& h : CPUHints(numa.GetTopologyHints(s, pod, pod.spec.containers[0]))) {
    preferred[h.numa_affinity->bits()] = h.preferred;
  }
  EXPECT_TRUE(preferred[(NUMAMask{1}.bits())]);
  EXPECT_FALSE(preferred[(NUMAMask{0, 1}.bits())]);
  EXPECT_FALSE(preferred[(NUMAMask{0, 2}.bits())]);

  StaticPolicy socket = NewPolicy(DualSocketMultiNUMAHT(), 1, {.align_by_socket = true});
  s = Started(socket);
  preferred.clear();
  for (const TopologyHint& h : CPUHints(socket.GetTopologyHints(s, pod, pod.spec.containers[0]))) {
    preferred[h.numa_affinity->bits()] = h.preferred;
  }
  EXPECT_TRUE(preferred[(NUMAMask{1}.bits())]);
  // Both NUMA nodes of one socket: aligned.
  EXPECT_TRUE(preferred[(NUMAMask{0, 1}.bits())]);
  EXPECT_TRUE(preferred[(NUMAMask{2, 3}.bits())]);
  EXPECT_FALSE(preferred[(NUMAMask{0, 2}.bits())]);
  EXPECT_FALSE(preferred[(NUMAMask{0, 1, 2}.bits())]);
}

TEST(PolicyOptionsTest, ParseAndValidate) {
  absl::StatusOr<StaticPolicyOptions> o =
      ParseStaticPolicyOptions({{"full-pcpus-only", "true"}}, false, true);
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->full_physical_cpus_only);
  o = ParseStaticPolicyOptions({{"distribute-cpus-across-numa", "1"}, {"align-by-socket", "F"}},
                               true, true);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(*o, (StaticPolicyOptions{false, true, false}));

  EXPECT_EQ(ParseStaticPolicyOptions({{"foo", "true"}}, true, true).status().message(),
            "unknown CPU Manager Policy option: \"foo\"");
  EXPECT_EQ(ParseStaticPolicyOptions({{"align-by-socket", "true"}}, false, true).status().message(),
            "CPU Manager Policy Alpha-level Options not enabled, but option \"align-by-socket\" "
            "provided");
  EXPECT_EQ(ParseStaticPolicyOptions({{"full-pcpus-only", "true"}}, true, false).status().message(),
            "CPU Manager Policy Beta-level Options not enabled, but option \"full-pcpus-only\" "
            "provided");
  EXPECT_EQ(ParseStaticPolicyOptions({{"full-pcpus-only", "yes"}}, true, true).status().message(),
            "bad value for option \"full-pcpus-only\": strconv.ParseBool: parsing \"yes\": "
            "invalid syntax");

  StaticPolicyOptions by_socket{.align_by_socket = true};
  EXPECT_TRUE(ValidateStaticPolicyOptions(by_socket, DualSocketMultiNUMAHT(), "none").ok());
  EXPECT_EQ(ValidateStaticPolicyOptions(by_socket, DualSocketHT(), "single-numa-node").message(),
            "Topolgy manager Single numa policy is incompatible with CPUManager Align  by socket "
            "policy option");
  // Two sockets sharing one NUMA node.
  topology::CPUTopology two_sockets_one_node =
      topology::CPUTopology::FromDetails({{0, {0, 0, 0}}, {1, {0, 1, 1}}});
  EXPECT_EQ(ValidateStaticPolicyOptions(by_socket, two_sockets_one_node, "none").message(),
            "Align by socket is not compatible with hardware where number of sockets are more "
            "than number of NUMA");
  EXPECT_TRUE(ValidateStaticPolicyOptions({}, two_sockets_one_node, "single-numa-node").ok());
}

}  // namespace
}  // namespace kubelet::cpumanager
