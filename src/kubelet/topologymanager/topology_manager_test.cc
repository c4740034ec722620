#include "kubelet/topologymanager/topology_manager.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/metrics.h"

namespace kubelet::topologymanager {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TopologyHint H(std::initializer_list<int> nodes, bool preferred) {
  return TopologyHint{NUMAMask(nodes), preferred};
}
TopologyHint Any(bool preferred) { return TopologyHint{std::nullopt, preferred}; }
using V = std::vector<TopologyHint>;

// A resource manager of a test machine: fixed hints per container (or for the pod), a record of
// the calls, and the affinity it found in the store when asked to allocate.
class FakeProvider : public HintProvider {
 public:
  FakeProvider(std::string name, const AffinityStore* store)
      : name_(std::move(name)), store_(store) {}

  std::map<std::string, TopologyHints> container_hints;  // by container name
  TopologyHints pod_hints;
  std::map<std::string, absl::Status> allocate_errors;  // by container name

  std::vector<std::string>* calls = nullptr;  // shared log: "<provider>:<call>:<container>"
  std::map<std::string, TopologyHint> seen_affinity;
  int container_hint_calls = 0;
  int pod_hint_calls = 0;

  TopologyHints GetTopologyHints(const api::Pod& pod, const api::Container& c) override {
    (void)pod;
    ++container_hint_calls;
    Record("hints", c.name);
    auto it = container_hints.find(c.name);
    return it == container_hints.end() ? TopologyHints{} : it->second;
  }
  TopologyHints GetPodTopologyHints(const api::Pod& pod) override {
    (void)pod;
    ++pod_hint_calls;
    Record("podhints", "");
    return pod_hints;
  }
  absl::Status Allocate(const api::Pod& pod, const api::Container& c) override {
    Record("allocate", c.name);
    seen_affinity[c.name] = store_->GetAffinity(pod.metadata.uid, c.name);
    auto it = allocate_errors.find(c.name);
    return it == allocate_errors.end() ? absl::OkStatus() : it->second;
  }

 private:
  void Record(const std::string& call, const std::string& container) {
    if (calls != nullptr) calls->push_back(absl::StrCat(name_, ":", call, ":", container));
  }
  std::string name_;
  const AffinityStore* store_;
};

api::Pod MakePod(const std::string& uid, std::vector<std::string> init,
                 std::vector<std::string> app) {
  api::Pod pod;
  pod.metadata.uid = uid;
  pod.metadata.name = "pod-" + uid;
  pod.metadata.namespace_ = "default";
  for (const std::string& n : init) {
    api::Container c;
    c.name = n;
    pod.spec.init_containers.push_back(c);
  }
  for (const std::string& n : app) {
    api::Container c;
    c.name = n;
    pod.spec.containers.push_back(c);
  }
  return pod;
}

NUMAInfo Nodes(std::vector<int> ids) {
  NUMAInfo n;
  n.nodes = std::move(ids);
  return n;
}

NUMAInfo FourNodesWithDistances() {
  NUMAInfo n = Nodes({0, 1, 2, 3});
  n.distances = {
      {0, {10, 11, 12, 12}}, {1, {11, 10, 12, 12}}, {2, {12, 12, 10, 11}}, {3, {12, 12, 11, 10}}};
  return n;
}

std::unique_ptr<TopologyManager> NewManager(const std::string& policy, const std::string& scope,
                                            NUMAInfo numa, PolicyOptions opts = {}) {
  TopologyManagerOptions o;
  o.policy = policy;
  o.scope = scope;
  o.policy_options = opts;
  absl::StatusOr<std::unique_ptr<TopologyManager>> m = TopologyManager::Create(o, std::move(numa));
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

// A manager on a test machine with two providers: "cpu" and "dev".
class TopologyManagerTest : public ::testing::Test {
 protected:
  void Build(const std::string& policy, const std::string& scope, NUMAInfo numa,
             PolicyOptions opts = {}) {
    manager_ = NewManager(policy, scope, std::move(numa), opts);
    ASSERT_NE(manager_, nullptr);
    cpu_ = std::make_unique<FakeProvider>("cpu", manager_.get());
    dev_ = std::make_unique<FakeProvider>("dev", manager_.get());
    cpu_->calls = &calls_;
    dev_->calls = &calls_;
    manager_->AddHintProvider(cpu_.get());
    manager_->AddHintProvider(dev_.get());
  }
  container::AdmitDecision Admit(const api::Pod& pod) { return manager_->Admit(pod, {}); }

  std::unique_ptr<TopologyManager> manager_;
  std::unique_ptr<FakeProvider> cpu_;
  std::unique_ptr<FakeProvider> dev_;
  std::vector<std::string> calls_;
};

TEST_F(TopologyManagerTest, PolicyNoneOnlyAllocatesInitThenAppContainers) {
  Build("none", "container", Nodes({0, 1}));
  EXPECT_EQ(manager_->policy_name(), "none");
  EXPECT_EQ(manager_->scope_name(), "none");
  cpu_->container_hints["app"] = {{"cpu", V{H({1}, true)}}};
  container::AdmitDecision d = Admit(MakePod("u1", {"init"}, {"app", "sidecar"}));
  EXPECT_TRUE(d.admit);
  EXPECT_THAT(calls_,
              ElementsAre("cpu:allocate:init", "dev:allocate:init", "cpu:allocate:app",
                          "dev:allocate:app", "cpu:allocate:sidecar", "dev:allocate:sidecar"));
  EXPECT_EQ(manager_->GetAffinity("u1", "app"), Any(true));
  EXPECT_EQ(cpu_->seen_affinity["app"], Any(true));
  EXPECT_THAT(manager_->PodsWithAffinity(), IsEmpty());
}

TEST_F(TopologyManagerTest, PolicyNoneAllocateErrorIsUnexpected) {
  Build("none", "pod", Nodes({0, 1}));
  dev_->allocate_errors["app"] = absl::InternalError("no devices left");
  container::AdmitDecision d = Admit(MakePod("u1", {}, {"app", "other"}));
  EXPECT_FALSE(d.admit);
  EXPECT_EQ(d.reason, "UnexpectedAdmissionError");
  EXPECT_EQ(d.message, "Allocate failed due to no devices left, which is unexpected");
  EXPECT_THAT(calls_, ElementsAre("cpu:allocate:app", "dev:allocate:app"));
}

TEST_F(TopologyManagerTest, ContainerScopeStoresEachContainersHintBeforeAllocating) {
  Build("best-effort", "container", Nodes({0, 1}));
  cpu_->container_hints["init"] = {{"cpu", V{H({0}, true), H({1}, true)}}};
  dev_->container_hints["init"] = {{"example.com/nic", V{H({0}, true)}}};
  cpu_->container_hints["app"] = {{"cpu", V{H({0}, true), H({1}, true)}}};
  dev_->container_hints["app"] = {{"example.com/gpu", V{H({1}, true)}}};
  container::AdmitDecision d = Admit(MakePod("u1", {"init"}, {"app"}));
  ASSERT_TRUE(d.admit) << d.message;
  EXPECT_THAT(calls_, ElementsAre("cpu:hints:init", "dev:hints:init", "cpu:allocate:init",
                                  "dev:allocate:init", "cpu:hints:app", "dev:hints:app",
                                  "cpu:allocate:app", "dev:allocate:app"));
  EXPECT_EQ(manager_->GetAffinity("u1", "init"), H({0}, true));
  EXPECT_EQ(manager_->GetAffinity("u1", "app"), H({1}, true));
  // The providers read the affinity while allocating.
  EXPECT_EQ(cpu_->seen_affinity["init"], H({0}, true));
  EXPECT_EQ(dev_->seen_affinity["app"], H({1}, true));
  EXPECT_EQ(cpu_->pod_hint_calls, 0);
  // Unknown pods and containers: any.
  EXPECT_EQ(manager_->GetAffinity("u1", "nope"), Any(true));
  EXPECT_EQ(manager_->GetAffinity("u2", "app"), Any(true));
}

TEST_F(TopologyManagerTest, BestEffortAdmitsAnUnalignedPod) {
  Build("best-effort", "container", Nodes({0, 1}));
  cpu_->container_hints["app"] = {{"cpu", V{H({0}, true)}}};
  dev_->container_hints["app"] = {{"example.com/gpu", V{H({1}, true)}}};
  container::AdmitDecision d = Admit(MakePod("u1", {}, {"app"}));
  EXPECT_TRUE(d.admit);
  EXPECT_EQ(manager_->GetAffinity("u1", "app"), H({0, 1}, false));
  EXPECT_THAT(calls_, ElementsAre("cpu:hints:app", "dev:hints:app", "cpu:allocate:app",
                                  "dev:allocate:app"));
}

TEST_F(TopologyManagerTest, RestrictedRejectsAnUnalignedPod) {
  Build("restricted", "container", Nodes({0, 1}));
  cpu_->container_hints["first"] = {{"cpu", V{H({0}, true)}}};
  cpu_->container_hints["second"] = {{"cpu", V{H({0}, true)}}};
  dev_->container_hints["second"] = {{"example.com/gpu", V{H({1}, true)}}};
  container::AdmitDecision d = Admit(MakePod("u1", {}, {"first", "second"}));
  EXPECT_FALSE(d.admit);
  EXPECT_EQ(d.reason, "TopologyAffinityError");
  EXPECT_EQ(d.message, "Resources cannot be allocated with Topology locality");
  // The first container was admitted and allocated before the second was looked at; nothing
  // of the rejected pod stays stored.
  EXPECT_THAT(calls_, ElementsAre("cpu:hints:first", "dev:hints:first", "cpu:allocate:first",
                                  "dev:allocate:first", "cpu:hints:second", "dev:hints:second"));
  EXPECT_EQ(cpu_->seen_affinity["first"], H({0}, true));
  EXPECT_EQ(manager_->GetAffinity("u1", "first"), Any(true));
  EXPECT_THAT(manager_->PodsWithAffinity(), IsEmpty());
}

TEST_F(TopologyManagerTest, RestrictedAdmitsAWidePreferredHint) {
  Build("restricted", "container", Nodes({0, 1}));
  cpu_->container_hints["app"] = {{"cpu", V{H({0}, false), H({1}, false), H({0, 1}, true)}}};
  EXPECT_TRUE(Admit(MakePod("u1", {}, {"app"})).admit);
  EXPECT_EQ(manager_->GetAffinity("u1", "app"), H({0, 1}, true));
}

TEST_F(TopologyManagerTest, SingleNumaNodeRejectsAPodNeedingTwoNodes) {
  Build("single-numa-node", "container", Nodes({0, 1}));
  cpu_->container_hints["app"] = {{"cpu", V{H({0, 1}, true)}}};
  container::AdmitDecision d = Admit(MakePod("u1", {}, {"app"}));
  EXPECT_FALSE(d.admit);
  EXPECT_EQ(d.reason, "TopologyAffinityError");
  EXPECT_EQ(d.message, "Resources cannot be allocated with Topology locality");
  EXPECT_THAT(calls_, ElementsAre("cpu:hints:app", "dev:hints:app"));
}

TEST_F(TopologyManagerTest, SingleNumaNodeAlignsOnOneNode) {
  Build("single-numa-node", "container", Nodes({0, 1, 2, 3}));
  cpu_->container_hints["app"] = {
      {"cpu", V{H({0}, true), H({2}, true), H({3}, true), H({2, 3}, false)}},
      {"memory", V{H({2}, true), H({3}, true), H({2, 3}, false)}}};
  dev_->container_hints["app"] = {{"example.com/gpu", V{H({3}, true)}}};
  ASSERT_TRUE(Admit(MakePod("u1", {}, {"app"})).admit);
  EXPECT_EQ(manager_->GetAffinity("u1", "app"), H({3}, true));
}

TEST_F(TopologyManagerTest, SingleNumaNodeWithoutPreferencesStoresAny) {
  Build("single-numa-node", "container", Nodes({0, 1}));
  cpu_->container_hints["app"] = {{"cpu", std::nullopt}};
  ASSERT_TRUE(Admit(MakePod("u1", {}, {"app"})).admit);
  EXPECT_EQ(manager_->GetAffinity("u1", "app"), Any(true));
  EXPECT_THAT(manager_->PodsWithAffinity(), ElementsAre("u1"));
}

TEST_F(TopologyManagerTest, PodScopeMergesOnceAndStoresTheHintForEveryContainer) {
  Build("restricted", "pod", Nodes({0, 1, 2, 3}));
  cpu_->pod_hints = {{"cpu", V{H({1}, true), H({2}, true), H({1, 2}, false)}}};
  dev_->pod_hints = {{"example.com/gpu", V{H({2}, true), H({3}, true)}}};
  container::AdmitDecision d = Admit(MakePod("u1", {"init"}, {"a", "b"}));
  ASSERT_TRUE(d.admit) << d.message;
  EXPECT_THAT(calls_, ElementsAre("cpu:podhints:", "dev:podhints:", "cpu:allocate:init",
                                  "dev:allocate:init", "cpu:allocate:a", "dev:allocate:a",
                                  "cpu:allocate:b", "dev:allocate:b"));
  for (const char* c : {"init", "a", "b"}) {
    EXPECT_EQ(manager_->GetAffinity("u1", c), H({2}, true)) << c;
    EXPECT_EQ(dev_->seen_affinity[c], H({2}, true)) << c;
  }
  EXPECT_EQ(cpu_->container_hint_calls, 0);
  EXPECT_EQ(cpu_->pod_hint_calls, 1);
}

TEST_F(TopologyManagerTest, PodScopeRejectsBeforeAllocatingAnything) {
  Build("single-numa-node", "pod", Nodes({0, 1}));
  cpu_->pod_hints = {{"cpu", V{H({0}, true)}}};
  dev_->pod_hints = {{"example.com/gpu", V{H({1}, true)}}};
  container::AdmitDecision d = Admit(MakePod("u1", {"init"}, {"app"}));
  EXPECT_FALSE(d.admit);
  EXPECT_EQ(d.reason, "TopologyAffinityError");
  EXPECT_THAT(calls_, ElementsAre("cpu:podhints:", "dev:podhints:"));
}

TEST_F(TopologyManagerTest, AllocateErrorRejectsAndStopsAllocating) {
  Build("best-effort", "container", Nodes({0, 1}));
  cpu_->allocate_errors["app"] = absl::ResourceExhaustedError("not enough cpus available");
  container::AdmitDecision d = Admit(MakePod("u1", {"init"}, {"app", "last"}));
  EXPECT_FALSE(d.admit);
  EXPECT_EQ(d.reason, "UnexpectedAdmissionError");
  EXPECT_EQ(d.message, "Allocate failed due to not enough cpus available, which is unexpected");
  EXPECT_THAT(calls_, ElementsAre("cpu:hints:init", "dev:hints:init", "cpu:allocate:init",
                                  "dev:allocate:init", "cpu:hints:app", "dev:hints:app",
                                  "cpu:allocate:app"));
  EXPECT_THAT(manager_->PodsWithAffinity(), IsEmpty());
}

TEST_F(TopologyManagerTest, AllocateAdmissionErrorKeepsItsReason) {
  Build("restricted", "pod", Nodes({0, 1}));
  cpu_->allocate_errors["app"] = AdmissionError(
      "SMTAlignmentError", "SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2");
  container::AdmitDecision d = Admit(MakePod("u1", {}, {"app"}));
  EXPECT_FALSE(d.admit);
  EXPECT_EQ(d.reason, "SMTAlignmentError");
  EXPECT_EQ(d.message, "SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2");
}

TEST_F(TopologyManagerTest, PreferClosestNUMANodesOnFourNodes) {
  Build("best-effort", "container", FourNodesWithDistances(), {.prefer_closest_numa = true});
  cpu_->container_hints["app"] = {{"cpu", V{H({0, 2}, true), H({2, 3}, true)}}};
  dev_->container_hints["app"] = {{"example.com/gpu", V{H({0, 2}, true), H({2, 3}, true)}}};
  ASSERT_TRUE(Admit(MakePod("u1", {}, {"app"})).admit);
  EXPECT_EQ(manager_->GetAffinity("u1", "app"), H({2, 3}, true));
}

TEST_F(TopologyManagerTest, WithoutPreferClosestTheLowerMaskWins) {
  Build("best-effort", "container", Nodes({0, 1, 2, 3}));
  cpu_->container_hints["app"] = {{"cpu", V{H({0, 2}, true), H({2, 3}, true)}}};
  dev_->container_hints["app"] = {{"example.com/gpu", V{H({0, 2}, true), H({2, 3}, true)}}};
  ASSERT_TRUE(Admit(MakePod("u1", {}, {"app"})).admit);
  EXPECT_EQ(manager_->GetAffinity("u1", "app"), H({0, 2}, true));
}

TEST_F(TopologyManagerTest, CleanupAndHousekeepingDropAffinities) {
  Build("best-effort", "pod", Nodes({0, 1}));
  cpu_->pod_hints = {{"cpu", V{H({1}, true)}}};
  ASSERT_TRUE(Admit(MakePod("u1", {}, {"app"})).admit);
  ASSERT_TRUE(Admit(MakePod("u2", {}, {"app"})).admit);
  ASSERT_TRUE(Admit(MakePod("u3", {}, {"app"})).admit);
  EXPECT_THAT(manager_->PodsWithAffinity(), ElementsAre("u1", "u2", "u3"));

  EXPECT_TRUE(manager_->CleanupTerminatedPod(MakePod("u2", {}, {"app"})).ok());
  EXPECT_THAT(manager_->PodsWithAffinity(), ElementsAre("u1", "u3"));
  EXPECT_EQ(manager_->GetAffinity("u2", "app"), Any(true));

  manager_->Housekeeping({"u3", "u9"});
  EXPECT_THAT(manager_->PodsWithAffinity(), ElementsAre("u3"));
  EXPECT_EQ(manager_->GetAffinity("u1", "app"), Any(true));
  EXPECT_EQ(manager_->GetAffinity("u3", "app"), H({1}, true));
}

TEST_F(TopologyManagerTest, ReadmissionReplacesTheStoredHint) {
  Build("best-effort", "container", Nodes({0, 1}));
  cpu_->container_hints["app"] = {{"cpu", V{H({0}, true)}}};
  ASSERT_TRUE(Admit(MakePod("u1", {}, {"app"})).admit);
  EXPECT_EQ(manager_->GetAffinity("u1", "app"), H({0}, true));
  cpu_->container_hints["app"] = {{"cpu", V{H({1}, true)}}};
  ASSERT_TRUE(Admit(MakePod("u1", {}, {"app"})).admit);
  EXPECT_EQ(manager_->GetAffinity("u1", "app"), H({1}, true));
}

TEST_F(TopologyManagerTest, NoProvidersMeansAnyNodeForBestEffort) {
  manager_ = NewManager("best-effort", "container", Nodes({0, 1}));
  ASSERT_TRUE(manager_->Admit(MakePod("u1", {}, {"app"}), {}).admit);
  EXPECT_EQ(manager_->GetAffinity("u1", "app"), H({0, 1}, true));
}

TEST_F(TopologyManagerTest, CountsAdmissionsAndErrors) {
  auto& requests = metrics::Kubelet().topology_manager_admission_requests.Add({});
  auto& errors = metrics::Kubelet().topology_manager_admission_errors.Add({});
  const double requests_before = requests.Value();
  const double errors_before = errors.Value();
  Build("restricted", "container", Nodes({0, 1}));
  cpu_->container_hints["app"] = {{"cpu", V{H({0}, true)}}};
  dev_->container_hints["app"] = {{"example.com/gpu", V{H({1}, true)}}};
  EXPECT_FALSE(Admit(MakePod("u1", {}, {"app"})).admit);
  EXPECT_TRUE(Admit(MakePod("u2", {}, {})).admit);
  EXPECT_EQ(requests.Value() - requests_before, 2);
  EXPECT_EQ(errors.Value() - errors_before, 1);
}

TEST_F(TopologyManagerTest, LogsTheAdmissionAsUpstream) {
  std::string lines;
  log::Configure(log::Options{.verbosity = 0,
                              .sink = [&lines](std::string_view line) { lines.append(line); }});
  Build("best-effort", "container", Nodes({0, 1}));
  cpu_->container_hints["app"] = {{"cpu", V{H({1}, true)}}};
  ASSERT_TRUE(Admit(MakePod("u1", {}, {"app"})).admit);
  log::Configure(log::Options{});
  EXPECT_THAT(lines, HasSubstr("\"Topology Admit Handler\" podUID=\"u1\" "
                               "podNamespace=\"default\" podName=\"pod-u1\""));
  EXPECT_THAT(lines, HasSubstr("\"Best TopologyHint\" "
                               "bestHint=\"{\\\"NUMANodeAffinity\\\":\\\"10\\\",\\\"Preferred\\\":"
                               "true}\" pod=\"default/pod-u1\" containerName=\"app\""));
  EXPECT_THAT(lines,
              HasSubstr("\"Creating topology manager with policy per scope\" "
                        "topologyPolicyName=\"best-effort\" topologyScopeName=\"container\""));
}

TEST(TopologyManagerCreate, MoreThanEightNUMANodes) {
  TopologyManagerOptions o;
  o.policy = "best-effort";
  absl::StatusOr<std::unique_ptr<TopologyManager>> m =
      TopologyManager::Create(o, Nodes({0, 1, 2, 3, 4, 5, 6, 7, 8}));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "unsupported on machines with more than 8 NUMA Nodes");
  EXPECT_TRUE(TopologyManager::Create(o, Nodes({0, 1, 2, 3, 4, 5, 6, 7})).ok());
  // Policy none checks nothing.
  o.policy = "none";
  EXPECT_TRUE(TopologyManager::Create(o, Nodes({0, 1, 2, 3, 4, 5, 6, 7, 8})).ok());
}

TEST(TopologyManagerCreate, UnknownPolicyAndScope) {
  TopologyManagerOptions o;
  o.policy = "strict";
  EXPECT_EQ(TopologyManager::Create(o, Nodes({0})).status().message(),
            "unknown policy: \"strict\"");
  o.policy = "restricted";
  o.scope = "node";
  EXPECT_EQ(TopologyManager::Create(o, Nodes({0})).status().message(), "unknown scope: \"node\"");
  // With policy none the scope is not looked at.
  o.policy = "none";
  EXPECT_TRUE(TopologyManager::Create(o, Nodes({0})).ok());
}

TEST(TopologyManagerCreate, PreferClosestNeedsDistances) {
  TopologyManagerOptions o;
  o.policy = "restricted";
  o.policy_options.prefer_closest_numa = true;
  absl::StatusOr<std::unique_ptr<TopologyManager>> m = TopologyManager::Create(o, Nodes({0, 1}));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "cannot discover NUMA topology: no NUMA distances for node 0");
  EXPECT_TRUE(TopologyManager::Create(o, FourNodesWithDistances()).ok());
}

TEST(NewTopologyManager, ReadsDistancesFromSysfs) {
  char tmpl[] = "/tmp/topology-manager-test-XXXXXX";
  const std::string root = ::mkdtemp(tmpl);
  const std::vector<std::string> rows = {"10 11 12 12", "11 10 12 12", "12 12 10 11",
                                         "12 12 11 10"};
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::filesystem::path p = absl::StrCat(root, "/devices/system/node/node", i, "/distance");
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << rows[i] << "\n";
  }
  TopologyManagerOptions o;
  o.policy = "best-effort";
  o.policy_options.prefer_closest_numa = true;
  absl::StatusOr<std::unique_ptr<TopologyManager>> m = NewTopologyManager(o, {0, 1, 2, 3}, root);
  ASSERT_TRUE(m.ok()) << m.status();
  FakeProvider cpu("cpu", m->get());
  cpu.container_hints["app"] = {{"cpu", V{H({0, 2}, true), H({2, 3}, true)}}};
  (*m)->AddHintProvider(&cpu);
  ASSERT_TRUE((*m)->Admit(MakePod("u1", {}, {"app"}), {}).admit);
  EXPECT_EQ((*m)->GetAffinity("u1", "app"), H({2, 3}, true));

  // A node without a distance file.
  absl::StatusOr<std::unique_ptr<TopologyManager>> missing =
      NewTopologyManager(o, {0, 1, 2, 3, 4}, root);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr(absl::StrCat("cannot discover NUMA topology: error getting NUMA distances "
                                     "from sysfs: problem reading ",
                                     root, "/devices/system/node/node4/distance")));
  // Without the option nothing is read.
  o.policy_options.prefer_closest_numa = false;
  EXPECT_TRUE(NewTopologyManager(o, {0, 1, 2, 3, 4}, root).ok());
  std::filesystem::remove_all(root);
}

TEST(AdmissionErrorReason, OnlyForAdmissionErrors) {
  EXPECT_EQ(AdmissionErrorReason(AdmissionError("SMTAlignmentError", "msg")), "SMTAlignmentError");
  EXPECT_EQ(AdmissionError("SMTAlignmentError", "msg").message(), "msg");
  EXPECT_EQ(AdmissionErrorReason(absl::InternalError("msg")), "");
  EXPECT_EQ(AdmissionErrorReason(absl::OkStatus()), "");
}

}  // namespace
}  // namespace kubelet::topologymanager
