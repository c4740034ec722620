#include "kubelet/cpumanager/cpu_manager.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/testing/eventually.h"
#include "gtest/gtest.h"
#include "kubelet/cpumanager/testing/topologies.h"

namespace kubelet::cpumanager {
namespace {

using config::CPUSet;
using kubelet::testing::Eventually;
using testing::BestEffortContainer;
using testing::DualSocketHT;
using testing::GuaranteedContainer;
using testing::MakePod;
using testing::SingleSocketHT;
using testing::TwoCPUs;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/cpumanager-test-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string StateFile() const { return path_ + "/cpu_manager_state"; }
  std::string Read() const {
    std::ifstream in(StateFile());
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  void Write(const std::string& text) const { std::ofstream(StateFile()) << text; }

 private:
  std::string path_;
};

CPUManagerOptions StaticOptions(const TempDir& dir, topology::CPUTopology topo,
                                int64_t reserved_millicpu) {
  CPUManagerOptions o;
  o.policy = kPolicyStatic;
  o.state_dir = dir.path();
  o.topology = std::move(topo);
  o.reserved_millicpu = reserved_millicpu;
  return o;
}

std::string CheckpointText(const std::string& policy, const std::string& default_set,
                           std::map<std::string, std::map<std::string, std::string>> entries = {}) {
  return MarshalCheckpoint(CPUManagerCheckpoint{policy, default_set, std::move(entries), 0});
}

TEST(CPUManagerOptionsTest, FromConfig) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  config::FeatureGate gates;
  absl::StatusOr<CPUManagerOptions> o = CPUManagerOptionsFromConfig(c, gates);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->policy, "none");
  EXPECT_EQ(o->reconcile_period, absl::Seconds(10));
  EXPECT_FALSE(o->reserved_millicpu.has_value());
  EXPECT_TRUE(o->reserved_cpus.IsEmpty());
  EXPECT_FALSE(o->policy_alpha_options);
  EXPECT_TRUE(o->policy_beta_options);

  c.cpu_manager_policy = "static";
  c.cpu_manager_reconcile_period = absl::Seconds(5);
  c.kube_reserved = {{"cpu", "500m"}, {"memory", "1Gi"}};
  c.system_reserved = {{"cpu", "1"}};
  c.cpu_manager_policy_options = {{"full-pcpus-only", "true"}};
  ASSERT_TRUE(gates.Set("CPUManagerPolicyAlphaOptions=true").ok());
  o = CPUManagerOptionsFromConfig(c, gates);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->policy, "static");
  EXPECT_EQ(o->reconcile_period, absl::Seconds(5));
  EXPECT_EQ(o->reserved_millicpu, 1500);
  EXPECT_EQ(o->policy_options, (std::map<std::string, std::string>{{"full-pcpus-only", "true"}}));
  EXPECT_TRUE(o->policy_alpha_options);

  // reservedSystemCPUs replaces the cpu reservation.
  c.reserved_system_cpus = "0,4";
  o = CPUManagerOptionsFromConfig(c, gates);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->reserved_cpus.String(), "0,4");
  EXPECT_EQ(o->reserved_millicpu, 2000);

  c.reserved_system_cpus = "3-1";
  EXPECT_EQ(CPUManagerOptionsFromConfig(c, gates).status().message(),
            "unable to parse reserved-cpus list: invalid range \"3-1\" (3 > 1)");
  c.reserved_system_cpus = "";
  c.kube_reserved = {{"cpu", "lots"}};
  EXPECT_FALSE(CPUManagerOptionsFromConfig(c, gates).ok());

  c.kube_reserved = {};
  ASSERT_TRUE(gates.Set("CPUManagerPolicyOptions=false").ok());
  EXPECT_EQ(CPUManagerOptionsFromConfig(c, gates).status().message(),
            "CPU Manager policy options map[full-pcpus-only:true] require feature gates "
            "\"CPUManager\", \"CPUManagerPolicyOptions\" enabled");
  c.cpu_manager_policy_options.clear();
  EXPECT_TRUE(CPUManagerOptionsFromConfig(c, gates).ok());
}

TEST(CPUManagerTest, CreateErrors) {
  TempDir dir;
  FakeClock clock;
  auto create_error = [&](CPUManagerOptions o) {
    absl::StatusOr<std::unique_ptr<CPUManager>> m =
        CPUManager::Create(std::move(o), nullptr, &clock);
    return m.ok() ? std::string("ok") : std::string(m.status().message());
  };
  CPUManagerOptions o = StaticOptions(dir, SingleSocketHT(), 1000);
  o.policy = "dynamic";
  EXPECT_EQ(create_error(o), "unknown policy: \"dynamic\"");
  o.policy = kPolicyNone;
  o.policy_options = {{"full-pcpus-only", "true"}};
  EXPECT_EQ(create_error(o),
            "new none policy error: None policy: received unsupported options=map[full-pcpus-only:"
            "true]");

  o = StaticOptions(dir, SingleSocketHT(), 0);
  o.reserved_millicpu.reset();
  EXPECT_EQ(create_error(o),
            "[cpumanager] unable to determine reserved CPU resources for static policy");
  o.reserved_millicpu = 0;
  EXPECT_EQ(create_error(o),
            "[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be "
            "greater than zero");

  o = StaticOptions(dir, SingleSocketHT(), 1000);
  o.policy_options = {{"align-by-socket", "true"}};
  EXPECT_EQ(create_error(o),
            "new static policy error: CPU Manager Policy Alpha-level Options not enabled, but "
            "option \"align-by-socket\" provided");
  o.policy_alpha_options = true;
  o.topology_manager_policy = "single-numa-node";
  EXPECT_EQ(create_error(o),
            "new static policy error: Topolgy manager Single numa policy is incompatible with "
            "CPUManager Align  by socket policy option");
  o.policy_options = {{"foo", "true"}};
  EXPECT_EQ(create_error(o), "new static policy error: unknown CPU Manager Policy option: \"foo\"");
  o.policy_options.clear();
  o.reserved_millicpu = 9000;
  EXPECT_EQ(create_error(o),
            "new static policy error: [cpumanager] unable to reserve the required amount of CPUs "
            "(size of  did not equal 9)");
  // None of these got as far as the state file.
  EXPECT_FALSE(std::filesystem::exists(dir.StateFile()));
}

TEST(CPUManagerTest, NonePolicy) {
  TempDir dir;
  FakeClock clock;
  CPUManagerOptions o;
  o.state_dir = dir.path() + "/sub";
  o.topology = SingleSocketHT();
  absl::StatusOr<std::unique_ptr<CPUManager>> m = CPUManager::Create(o, nullptr, &clock);
  ASSERT_TRUE(m.ok()) << m.status();
  // The bytes upstream's kubelet writes for the none policy (checkpoint format V2; kubelets
  // before 1.18 wrote V1, whose checksum for the same state is 3242152201).
  std::ifstream in(o.state_dir + "/cpu_manager_state");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, R"({"policyName":"none","defaultCpuSet":"","checksum":1353318690})");

  api::Pod pod = MakePod("p", {GuaranteedContainer("app", "2")});
  EXPECT_TRUE((*m)->GetTopologyHints(pod, pod.spec.containers[0]).empty());
  EXPECT_TRUE((*m)->GetPodTopologyHints(pod).empty());
  ASSERT_TRUE((*m)->Allocate(pod, pod.spec.containers[0]).ok());
  EXPECT_TRUE((*m)->GetCPUAffinity("p", "app").IsEmpty());
  EXPECT_TRUE((*m)->GetExclusiveCPUs("p", "app").IsEmpty());
  EXPECT_TRUE((*m)->GetAllocatableCPUs().IsEmpty());
  EXPECT_TRUE((*m)->GetReservedCPUs().IsEmpty());
  EXPECT_EQ((*m)->GetAllCPUs().String(), "0-7");
  (*m)->Start({});
  (*m)->Stop();
}

TEST(CPUManagerTest, StateFileRoundTrip) {
  TempDir dir;
  FakeClock clock;
  {
    absl::StatusOr<std::unique_ptr<CPUManager>> m =
        CPUManager::Create(StaticOptions(dir, SingleSocketHT(), 1000), nullptr, &clock);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(dir.Read(), CheckpointText("static", "0-7"));
    api::Pod pod = MakePod("pod1", {GuaranteedContainer("app", "2")});
    ASSERT_TRUE((*m)->Allocate(pod, pod.spec.containers[0]).ok());
    EXPECT_EQ(dir.Read(), CheckpointText("static", "0,2-4,6-7", {{"pod1", {{"app", "1,5"}}}}));
  }
  absl::StatusOr<std::unique_ptr<CPUManager>> m =
      CPUManager::Create(StaticOptions(dir, SingleSocketHT(), 1000), nullptr, &clock);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->GetExclusiveCPUs("pod1", "app").String(), "1,5");
  EXPECT_EQ((*m)->GetCPUAffinity("pod1", "app").String(), "1,5");
  EXPECT_EQ((*m)->GetCPUAffinity("pod1", "other").String(), "0,2-4,6-7");
  EXPECT_EQ((*m)->GetReservedCPUs().String(), "0");
  EXPECT_EQ((*m)->GetAllocatableCPUs().String(), "1-7");
}

TEST(CPUManagerTest, ReadsUpstreamWrittenFiles) {
  // A file upstream's kubelet wrote on a 24-CPU machine (its checksum is verified on read).
  TempDir dir;
  dir.Write(
      R"({"policyName":"static","defaultCpuSet":"0,2-12,14-23","entries":{"235148fe-393f-47a8-a17d-bd55bc1a836b":{"cgroup1-0":"1,13"}},"checksum":1552716370})");
  std::map<int, topology::CPUInfo> details;
  for (int c = 0; c < 24; ++c) details[c] = {c % 2, c % 2, c % 12};
  FakeClock clock;
  absl::StatusOr<std::unique_ptr<CPUManager>> m = CPUManager::Create(
      StaticOptions(dir, topology::CPUTopology::FromDetails(details), 1000), nullptr, &clock);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->GetExclusiveCPUs("235148fe-393f-47a8-a17d-bd55bc1a836b", "cgroup1-0").String(),
            "1,13");
  EXPECT_EQ((*m)->GetDefaultCPUSet().String(), "0,2-12,14-23");
}

TEST(CPUManagerTest, RefusesOtherPoliciesFilesAndInvalidState) {
  TempDir dir;
  FakeClock clock;
  auto create_error = [&](CPUManagerOptions o) {
    absl::StatusOr<std::unique_ptr<CPUManager>> m =
        CPUManager::Create(std::move(o), nullptr, &clock);
    return m.ok() ? std::string("ok") : std::string(m.status().message());
  };
  dir.Write(CheckpointText("none", ""));
  EXPECT_EQ(create_error(StaticOptions(dir, SingleSocketHT(), 1000)),
            "could not restore state from checkpoint: configured policy \"static\" differs from "
            "state checkpoint policy \"none\", please drain this node and delete the CPU manager "
            "checkpoint file \"" +
                dir.StateFile() + "\" before restarting Kubelet");
  // The file is left alone.
  EXPECT_EQ(dir.Read(), CheckpointText("none", ""));

  dir.Write(R"({"policyName":"static","defaultCpuSet":"0-7","checksum":1})");
  EXPECT_EQ(create_error(StaticOptions(dir, SingleSocketHT(), 1000)),
            "could not restore state from checkpoint: checkpoint is corrupted, please drain this "
            "node and delete the CPU manager checkpoint file \"" +
                dir.StateFile() + "\" before restarting Kubelet");
  dir.Write(CheckpointText("static", "0-x"));
  EXPECT_EQ(create_error(StaticOptions(dir, SingleSocketHT(), 1000)),
            "could not restore state from checkpoint: could not parse default cpu set \"0-x\": "
            "strconv.Atoi: parsing \"x\": invalid syntax, please drain this node and delete the "
            "CPU manager checkpoint file \"" +
                dir.StateFile() + "\" before restarting Kubelet");

  // The static policy's checks of a restored state.
  dir.Write(CheckpointText("static", "1-7"));
  EXPECT_EQ(create_error(StaticOptions(dir, SingleSocketHT(), 1000)),
            "not all reserved cpus: \"0\" are present in defaultCpuSet: \"1-7\"");
  dir.Write(CheckpointText("static", "0-7", {{"p", {{"c", "3"}}}}));
  EXPECT_EQ(create_error(StaticOptions(dir, SingleSocketHT(), 1000)),
            "pod: p, container: c cpuset: \"3\" overlaps with default cpuset \"0-7\"");
  // A CPU went offline while the kubelet was down.
  dir.Write(CheckpointText("static", "0-7"));
  std::map<int, topology::CPUInfo> seven = SingleSocketHT().details;
  seven.erase(7);
  EXPECT_EQ(create_error(StaticOptions(dir, topology::CPUTopology::FromDetails(seven), 1000)),
            "current set of available CPUs \"0-6\" doesn't match with CPUs in state \"0-7\"");
  dir.Write(CheckpointText("static", "", {{"p", {{"c", "3"}}}}));
  EXPECT_EQ(create_error(StaticOptions(dir, SingleSocketHT(), 1000)),
            "default cpuset cannot be empty");
}

// The kubelet side of reconciling: pods, running containers, cpuset updates.
class FakeRuntime {
 public:
  CPUManager::Runtime Runtime() {
    CPUManager::Runtime r;
    r.active_pods = [this] {
      absl::MutexLock l(&mu_);
      return pods_;
    };
    r.running_container_id = [this](const std::string& uid,
                                    const std::string& name) -> std::optional<std::string> {
      absl::MutexLock l(&mu_);
      ++lookups_;
      auto it = running_.find(uid + "/" + name);
      if (it == running_.end()) return std::nullopt;
      return it->second;
    };
    r.update_container_cpuset = [this](const std::string& id, const CPUSet& cpus) {
      absl::MutexLock l(&mu_);
      if (fail_next_[id] > 0) {
        --fail_next_[id];
        return absl::UnavailableError("runtime down");
      }
      updates_.push_back(id + "=" + cpus.String());
      return absl::OkStatus();
    };
    return r;
  }
  void AddPod(const api::Pod& pod) {
    absl::MutexLock l(&mu_);
    pods_.push_back(std::make_shared<const api::Pod>(pod));
  }
  void RemovePod(const std::string& uid) {
    absl::MutexLock l(&mu_);
    std::erase_if(pods_, [&uid](const api::PodPtr& p) { return p->metadata.uid == uid; });
  }
  void Run(const std::string& uid, const std::string& name, const std::string& id) {
    absl::MutexLock l(&mu_);
    running_[uid + "/" + name] = id;
  }
  void FailNext(const std::string& id, int times) {
    absl::MutexLock l(&mu_);
    fail_next_[id] = times;
  }
  std::vector<std::string> updates() {
    absl::MutexLock l(&mu_);
    return updates_;
  }
  int lookups() {
    absl::MutexLock l(&mu_);
    return lookups_;
  }

 private:
  absl::Mutex mu_;
  std::vector<api::PodPtr> pods_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> running_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> fail_next_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> updates_ ABSL_GUARDED_BY(mu_);
  int lookups_ ABSL_GUARDED_BY(mu_) = 0;
};

using Updates = std::vector<std::string>;

// Lets the loop finish a pass (`lookups` container lookups more) and go back to waiting.
void AwaitPass(FakeRuntime& rt, FakeClock& clock, int lookups) {
  ASSERT_TRUE(Eventually([&] { return rt.lookups() >= lookups; }));
  ASSERT_TRUE(Eventually([&] { return clock.Waiters() > 0; }));
}

TEST(CPUManagerTest, TwoCPUMachineSharedPoolShrinksAndGrowsAtOnce) {
  TempDir dir;
  FakeClock clock;
  CPUManagerOptions o = StaticOptions(dir, TwoCPUs(), 1000);
  o.reserved_cpus = CPUSet{0};
  absl::StatusOr<std::unique_ptr<CPUManager>> created = CPUManager::Create(o, nullptr, &clock);
  ASSERT_TRUE(created.ok()) << created.status();
  CPUManager& m = **created;

  FakeRuntime rt;
  api::Pod be = MakePod("be", {BestEffortContainer("app")});
  rt.AddPod(be);
  m.AddContainer(be, be.spec.containers[0], "c-be");
  rt.Run("be", "app", "c-be");
  m.Start(rt.Runtime());
  ASSERT_TRUE(Eventually([&] { return rt.updates() == Updates{"c-be=0-1"}; }));
  AwaitPass(rt, clock, 1);

  // A period later nothing changed: no update.
  int lookups = rt.lookups();
  clock.Advance(absl::Seconds(10));
  AwaitPass(rt, clock, lookups + 1);
  EXPECT_EQ(rt.updates(), Updates{"c-be=0-1"});

  // A Guaranteed pod takes CPU 1: the BestEffort container shrinks to {0} without waiting for
  // the period.
  api::Pod gu = MakePod("gu", {GuaranteedContainer("app", "1")});
  rt.AddPod(gu);
  ASSERT_TRUE(m.Allocate(gu, gu.spec.containers[0]).ok());
  EXPECT_EQ(m.GetCPUAffinity("gu", "app").String(), "1");
  EXPECT_EQ(m.GetCPUAffinity("be", "app").String(), "0");
  ASSERT_TRUE(Eventually([&] { return rt.updates() == (Updates{"c-be=0-1", "c-be=0"}); }));
  ASSERT_TRUE(Eventually([&] { return clock.Waiters() > 0; }));
  m.AddContainer(gu, gu.spec.containers[0], "c-gu");
  rt.Run("gu", "app", "c-gu");

  // The Guaranteed container was created on its CPUs: no update for it.
  lookups = rt.lookups();
  clock.Advance(absl::Seconds(10));
  AwaitPass(rt, clock, lookups + 2);
  EXPECT_EQ(rt.updates(), (Updates{"c-be=0-1", "c-be=0"}));

  // The pod goes: CPU 1 returns to the shared pool at once.
  rt.RemovePod("gu");
  m.RemovePod("gu");
  EXPECT_EQ(m.GetDefaultCPUSet().String(), "0-1");
  ASSERT_TRUE(Eventually([&] {
    return rt.updates() == (Updates{"c-be=0-1", "c-be=0", "c-be=0-1"});
  }));
  EXPECT_EQ(dir.Read(), CheckpointText("static", "0-1"));
  m.Stop();
}

TEST(CPUManagerTest, StaleStateOfGonePodsIsDroppedBeforeAllocating) {
  TempDir dir;
  FakeClock clock;
  CPUManagerOptions o = StaticOptions(dir, TwoCPUs(), 1000);
  o.reserved_cpus = CPUSet{0};
  absl::StatusOr<std::unique_ptr<CPUManager>> created = CPUManager::Create(o, nullptr, &clock);
  ASSERT_TRUE(created.ok());
  CPUManager& m = **created;
  FakeRuntime rt;
  bool ready = false;
  CPUManager::Runtime runtime = rt.Runtime();
  runtime.sources_ready = [&ready] { return ready; };
  // Not started: the loop is not needed for this.
  api::Pod old = MakePod("old", {GuaranteedContainer("app", "1")});
  rt.AddPod(old);
  ASSERT_TRUE(m.Allocate(old, old.spec.containers[0]).ok());
  EXPECT_EQ(m.GetExclusiveCPUs("old", "app").String(), "1");

  api::Pod next = MakePod("next", {GuaranteedContainer("app", "1")});
  rt.RemovePod("old");
  rt.AddPod(next);
  // Before every source was seen the old pod's CPUs stay.
  m.Start(runtime);
  m.Stop();
  absl::Status st = m.Allocate(next, next.spec.containers[0]);
  EXPECT_EQ(st.message(), "not enough cpus available to satisfy request: requested=1, available=0");
  ready = true;
  ASSERT_TRUE(m.Allocate(next, next.spec.containers[0]).ok());
  EXPECT_TRUE(m.GetExclusiveCPUs("old", "app").IsEmpty());
  EXPECT_EQ(m.GetExclusiveCPUs("next", "app").String(), "1");
}

TEST(CPUManagerTest, ReconcileRetriesFailuresAndAdoptsRunningContainers) {
  TempDir dir;
  FakeClock clock;
  absl::StatusOr<std::unique_ptr<CPUManager>> created =
      CPUManager::Create(StaticOptions(dir, DualSocketHT(), 1000), nullptr, &clock);
  ASSERT_TRUE(created.ok());
  CPUManager& m = **created;
  FakeRuntime rt;
  // Running before the kubelet (re)started: never added.
  api::Pod pod = MakePod("p", {BestEffortContainer("app")}, {BestEffortContainer("init")});
  rt.AddPod(pod);
  rt.Run("p", "app", "c-app");
  rt.FailNext("c-app", 1);
  m.Start(rt.Runtime());
  AwaitPass(rt, clock, 2);
  EXPECT_EQ(rt.updates(), Updates{});  // failed, logged
  int lookups = rt.lookups();
  clock.Advance(absl::Seconds(10));
  ASSERT_TRUE(Eventually([&] { return rt.updates() == Updates{"c-app=0-11"}; }));
  AwaitPass(rt, clock, lookups + 2);

  // The container restarts under a new id: updated once; removing the old id changes nothing.
  rt.Run("p", "app", "c-app-2");
  lookups = rt.lookups();
  clock.Advance(absl::Seconds(10));
  ASSERT_TRUE(Eventually([&] { return rt.updates() == (Updates{"c-app=0-11", "c-app-2=0-11"}); }));
  AwaitPass(rt, clock, lookups + 2);
  ASSERT_TRUE(m.RemoveContainer("c-app").ok());
  EXPECT_EQ(m.GetDefaultCPUSet().String(), "0-11");
  m.Stop();
}

TEST(CPUManagerTest, RemoveContainerFreesExclusiveCPUsOfTheCurrentInstanceOnly) {
  TempDir dir;
  FakeClock clock;
  absl::StatusOr<std::unique_ptr<CPUManager>> created =
      CPUManager::Create(StaticOptions(dir, SingleSocketHT(), 1000), nullptr, &clock);
  ASSERT_TRUE(created.ok());
  CPUManager& m = **created;
  api::Pod pod =
      MakePod("p", {GuaranteedContainer("app", "2")}, {GuaranteedContainer("init", "4")});
  ASSERT_TRUE(m.Allocate(pod, pod.spec.init_containers[0]).ok());
  ASSERT_TRUE(m.Allocate(pod, pod.spec.containers[0]).ok());
  EXPECT_EQ(m.GetExclusiveCPUs("p", "init").String(), "1-2,5-6");
  EXPECT_EQ(m.GetExclusiveCPUs("p", "app").String(), "1,5");
  m.AddContainer(pod, pod.spec.init_containers[0], "c-init");
  m.AddContainer(pod, pod.spec.containers[0], "c-app-1");
  m.AddContainer(pod, pod.spec.containers[0], "c-app-2");  // restarted
  ASSERT_TRUE(m.RemoveContainer("unknown").ok());
  ASSERT_TRUE(m.RemoveContainer("c-app-1").ok());
  EXPECT_EQ(m.GetExclusiveCPUs("p", "app").String(), "1,5");
  // The finished init container: the CPUs the app container does not use return.
  ASSERT_TRUE(m.RemoveContainer("c-init").ok());
  EXPECT_EQ(m.GetDefaultCPUSet().String(), "0,2-4,6-7");
  ASSERT_TRUE(m.RemoveContainer("c-app-2").ok());
  EXPECT_EQ(m.GetDefaultCPUSet().String(), "0-7");
  EXPECT_EQ(dir.Read(), CheckpointText("static", "0-7"));
}

TEST(CPUManagerTest, HintsAndAllocationThroughTheManager) {
  TempDir dir;
  FakeClock clock;
  class Affinity : public topologymanager::AffinityStore {
   public:
    topologymanager::TopologyHint GetAffinity(const std::string&,
                                              const std::string&) const override {
      return {topologymanager::NUMAMask{1}, true};
    }
  } affinity;
  absl::StatusOr<std::unique_ptr<CPUManager>> created =
      CPUManager::Create(StaticOptions(dir, DualSocketHT(), 1000), &affinity, &clock);
  ASSERT_TRUE(created.ok());
  CPUManager& m = **created;
  api::Pod pod = MakePod("p", {GuaranteedContainer("app", "2")});
  topologymanager::TopologyHints hints = m.GetTopologyHints(pod, pod.spec.containers[0]);
  ASSERT_EQ(hints.count("cpu"), 1u);
  ASSERT_TRUE(hints["cpu"].has_value());
  EXPECT_EQ(hints["cpu"]->size(), 3u);
  ASSERT_TRUE(m.Allocate(pod, pod.spec.containers[0]).ok());
  EXPECT_EQ(m.GetExclusiveCPUs("p", "app").String(), "1,7");
  // Other allocation errors have no reason of their own (UnexpectedAdmissionError). The 4 free
  // CPUs of NUMA node 1 were taken first, the rest fell short.
  api::Pod huge = MakePod("huge", {GuaranteedContainer("app", "12")});
  absl::Status huge_st = m.Allocate(huge, huge.spec.containers[0]);
  EXPECT_EQ(huge_st.message(),
            "not enough cpus available to satisfy request: requested=8, available=5");
  EXPECT_EQ(topologymanager::AdmissionErrorReason(huge_st), "");
  EXPECT_FALSE(IsSMTAlignmentError(huge_st));

  // full-pcpus-only through the manager: the reason the admission reports.
  TempDir dir2;
  CPUManagerOptions o = StaticOptions(dir2, DualSocketHT(), 1000);
  o.policy_options = {{"full-pcpus-only", "true"}};
  created = CPUManager::Create(o, nullptr, &clock);
  ASSERT_TRUE(created.ok()) << created.status();
  api::Pod odd = MakePod("odd", {GuaranteedContainer("app", "3")});
  absl::Status st = (*created)->Allocate(odd, odd.spec.containers[0]);
  EXPECT_TRUE(IsSMTAlignmentError(st));
  EXPECT_EQ(topologymanager::AdmissionErrorReason(st), "SMTAlignmentError");
  EXPECT_EQ(st.message(), "SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2");
}

}  // namespace
}  // namespace kubelet::cpumanager
