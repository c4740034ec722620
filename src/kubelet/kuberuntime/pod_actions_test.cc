#include "kubelet/kuberuntime/pod_actions.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/kuberuntime/test_util.h"

namespace kubelet::kuberuntime {
namespace {

using container::PodStatus;
using container::State;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::MakeContainer;
using testing::MakePod;
using testing::ReadySandbox;
using testing::Sidecar;
using testing::Status;

std::vector<std::string> KilledIDs(const PodActions& a) {
  std::vector<std::string> out;
  for (const auto& [id, k] : a.containers_to_kill) out.push_back(id);
  return out;
}

PodStatus RunningStatus(const api::Pod& pod) {
  PodStatus s;
  s.id = pod.metadata.uid;
  s.sandbox_statuses = {ReadySandbox()};
  s.ips = {"10.88.0.2"};
  int n = 0;
  for (const api::Container& c : pod.spec.containers) {
    s.container_statuses.push_back(Status(c, State::kRunning, "c" + std::to_string(n++)));
  }
  return s;
}

TEST(ComputePodActionsTest, NewPodCreatesSandboxAndAllContainers) {
  api::Pod pod = MakePod("p", {MakeContainer("a"), MakeContainer("b")});
  PodActions a = ComputePodActions(pod, PodStatus{});
  EXPECT_TRUE(a.kill_pod);
  EXPECT_TRUE(a.create_sandbox);
  EXPECT_EQ(a.attempt, 0u);
  EXPECT_EQ(a.sandbox_id, "");
  EXPECT_THAT(a.containers_to_start, ElementsAre(0, 1));
  EXPECT_THAT(a.init_containers_to_start, IsEmpty());
}

TEST(ComputePodActionsTest, NewPodWithInitContainersStartsFirstInit) {
  api::Pod pod = MakePod("p", {MakeContainer("a")}, {MakeContainer("i1"), MakeContainer("i2")});
  PodActions a = ComputePodActions(pod, PodStatus{});
  EXPECT_TRUE(a.create_sandbox);
  EXPECT_THAT(a.init_containers_to_start, ElementsAre(0));
  EXPECT_THAT(a.containers_to_start, IsEmpty());
}

TEST(ComputePodActionsTest, RunningUnchangedDoesNothing) {
  api::Pod pod = MakePod("p", {MakeContainer("a"), MakeContainer("b")});
  PodActions a = ComputePodActions(pod, RunningStatus(pod));
  EXPECT_EQ(a, (PodActions{false, false, "sb1", 0, {}, {}, {}, {}}));
}

TEST(ComputePodActionsTest, HashChangedKillsAndRestarts) {
  api::Pod pod = MakePod("p", {MakeContainer("a"), MakeContainer("b")});
  PodStatus status = RunningStatus(pod);
  pod.spec.containers[1].image = "busybox:1.37";
  PodActions a = ComputePodActions(pod, status);
  EXPECT_FALSE(a.kill_pod);
  EXPECT_THAT(a.containers_to_start, ElementsAre(1));
  ASSERT_EQ(a.containers_to_kill.size(), 1u);
  EXPECT_EQ(a.containers_to_kill.at("c1").message,
            "Container b definition changed, will be restarted");
  // Even with restartPolicy Never the changed container restarts.
  pod.spec.restart_policy = api::kRestartPolicyNever;
  a = ComputePodActions(pod, status);
  EXPECT_THAT(a.containers_to_start, ElementsAre(1));
}

TEST(ComputePodActionsTest, LivenessFailureRestartsPerPolicy) {
  api::Pod pod = MakePod("p", {MakeContainer("a")});
  PodStatus status = RunningStatus(pod);
  ProbeView probes;
  probes.liveness_failed = [](const container::ContainerID& id) { return id.id == "c0"; };
  PodActions a = ComputePodActions(pod, status, probes);
  EXPECT_THAT(a.containers_to_start, ElementsAre(0));
  EXPECT_EQ(a.containers_to_kill.at("c0").message,
            "Container a failed liveness probe, will be restarted");
  EXPECT_EQ(a.containers_to_kill.at("c0").reason, kReasonLivenessProbe);
  pod.spec.restart_policy = api::kRestartPolicyNever;
  a = ComputePodActions(pod, status, probes);
  EXPECT_THAT(a.containers_to_start, IsEmpty());
  EXPECT_EQ(a.containers_to_kill.at("c0").message, "Container a failed liveness probe");
  EXPECT_TRUE(a.kill_pod);  // nothing left to keep
}

TEST(ComputePodActionsTest, SandboxDiedRecreatesWithNextAttempt) {
  api::Pod pod = MakePod("p", {MakeContainer("a")});
  PodStatus status = RunningStatus(pod);
  status.sandbox_statuses[0].ready = false;
  status.sandbox_statuses[0].attempt = 2;
  status.container_statuses[0].state = State::kExited;
  PodActions a = ComputePodActions(pod, status);
  EXPECT_TRUE(a.kill_pod);
  EXPECT_TRUE(a.create_sandbox);
  EXPECT_EQ(a.attempt, 3u);
  EXPECT_EQ(a.sandbox_id, "sb1");
  EXPECT_THAT(a.containers_to_start, ElementsAre(0));
}

TEST(ComputePodActionsTest, SandboxWithoutIPRecreated) {
  api::Pod pod = MakePod("p", {MakeContainer("a")});
  PodStatus status = RunningStatus(pod);
  status.sandbox_statuses[0].ips.clear();
  PodActions a = ComputePodActions(pod, status);
  EXPECT_TRUE(a.create_sandbox);
  EXPECT_EQ(a.attempt, 1u);
}

TEST(ComputePodActionsTest, NetworkModeChangeRecreatesSandbox) {
  api::Pod pod = MakePod("p", {MakeContainer("a")});
  PodStatus status = RunningStatus(pod);
  pod.spec.host_network = true;
  PodActions a = ComputePodActions(pod, status);
  EXPECT_TRUE(a.kill_pod);
  EXPECT_TRUE(a.create_sandbox);
  EXPECT_EQ(a.sandbox_id, "");
  EXPECT_EQ(a.attempt, 1u);
}

TEST(ComputePodActionsTest, MultipleReadySandboxesReconciled) {
  api::Pod pod = MakePod("p", {MakeContainer("a")});
  PodStatus status = RunningStatus(pod);
  status.sandbox_statuses.push_back(ReadySandbox("sb0", 1));
  PodActions a = ComputePodActions(pod, status);
  EXPECT_TRUE(a.create_sandbox);
  EXPECT_EQ(a.attempt, 2u);
}

TEST(ComputePodActionsTest, NeverPodDoesNotGetNewSandboxAfterRunning) {
  api::Pod pod = MakePod("p", {MakeContainer("a")});
  pod.spec.restart_policy = api::kRestartPolicyNever;
  PodStatus status = RunningStatus(pod);
  status.sandbox_statuses[0].ready = false;
  status.container_statuses[0].state = State::kExited;
  PodActions a = ComputePodActions(pod, status);
  EXPECT_TRUE(a.kill_pod);
  EXPECT_FALSE(a.create_sandbox);
  EXPECT_THAT(a.containers_to_start, IsEmpty());
}

TEST(ComputePodActionsTest, OnFailurePodSucceededGetsNoNewSandbox) {
  api::Pod pod = MakePod("p", {MakeContainer("a")});
  pod.spec.restart_policy = api::kRestartPolicyOnFailure;
  PodStatus status = RunningStatus(pod);
  status.sandbox_statuses[0].ready = false;
  status.container_statuses[0].state = State::kExited;
  PodActions a = ComputePodActions(pod, status);
  EXPECT_FALSE(a.create_sandbox);
  // A failed one restarts in a new sandbox.
  status.container_statuses[0].exit_code = 1;
  a = ComputePodActions(pod, status);
  EXPECT_TRUE(a.create_sandbox);
  EXPECT_THAT(a.containers_to_start, ElementsAre(0));
}

TEST(ComputePodActionsTest, ExitedAppContainersPerRestartPolicy) {
  struct Case {
    const char* policy;
    int exit_code;
    bool restart;
  } cases[] = {
      {api::kRestartPolicyAlways, 0, true},     {api::kRestartPolicyAlways, 1, true},
      {api::kRestartPolicyOnFailure, 0, false}, {api::kRestartPolicyOnFailure, 2, true},
      {api::kRestartPolicyNever, 0, false},     {api::kRestartPolicyNever, 1, false},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(std::string(tc.policy) + " exit " + std::to_string(tc.exit_code));
    api::Pod pod = MakePod("p", {MakeContainer("a"), MakeContainer("b")});
    pod.spec.restart_policy = tc.policy;
    PodStatus status = RunningStatus(pod);
    status.container_statuses[0].state = State::kExited;
    status.container_statuses[0].exit_code = tc.exit_code;
    PodActions a = ComputePodActions(pod, status);
    EXPECT_FALSE(a.kill_pod);
    if (tc.restart) {
      EXPECT_THAT(a.containers_to_start, ElementsAre(0));
    } else {
      EXPECT_THAT(a.containers_to_start, IsEmpty());
    }
  }
}

TEST(ComputePodActionsTest, AllExitedNeverKillsPod) {
  api::Pod pod = MakePod("p", {MakeContainer("a")});
  pod.spec.restart_policy = api::kRestartPolicyNever;
  PodStatus status = RunningStatus(pod);
  status.container_statuses[0].state = State::kExited;
  PodActions a = ComputePodActions(pod, status);
  EXPECT_TRUE(a.kill_pod);
  EXPECT_FALSE(a.create_sandbox);
}

TEST(ComputePodActionsTest, UnknownStateContainerKilledBeforeRestart) {
  api::Pod pod = MakePod("p", {MakeContainer("a")});
  PodStatus status = RunningStatus(pod);
  status.container_statuses[0].state = State::kUnknown;
  PodActions a = ComputePodActions(pod, status);
  EXPECT_THAT(a.containers_to_start, ElementsAre(0));
  EXPECT_EQ(a.containers_to_kill.at("c0").message,
            "Container is in \"unknown\" state, try killing it before restart");
}

TEST(ComputePodActionsTest, DeletedPodDoesNotRestart) {
  api::Pod pod = MakePod("p", {MakeContainer("a")});
  pod.metadata.deletion_timestamp = api::Time::FromUnix(1);
  PodStatus status = RunningStatus(pod);
  status.container_statuses[0].state = State::kExited;
  EXPECT_THAT(ComputePodActions(pod, status).containers_to_start, IsEmpty());
}

// ---- Init containers ------------------------------------------------------------------------

PodStatus InitStatus(const api::Pod& pod) {
  PodStatus s;
  s.sandbox_statuses = {ReadySandbox()};
  s.ips = {"10.88.0.2"};
  return s;
}

TEST(ComputePodActionsTest, InitContainersRunInOrder) {
  api::Pod pod = MakePod("p", {MakeContainer("a")}, {MakeContainer("i1"), MakeContainer("i2")});
  PodStatus status = InitStatus(pod);
  // Nothing ran yet in this sandbox.
  EXPECT_THAT(ComputePodActions(pod, status).init_containers_to_start, ElementsAre(0));
  // i1 running: wait.
  status.container_statuses = {Status(pod.spec.init_containers[0], State::kRunning, "i1")};
  PodActions a = ComputePodActions(pod, status);
  EXPECT_THAT(a.init_containers_to_start, IsEmpty());
  EXPECT_THAT(a.containers_to_start, IsEmpty());
  EXPECT_FALSE(a.kill_pod);
  // i1 done: start i2.
  status.container_statuses = {Status(pod.spec.init_containers[0], State::kExited, "i1", 0)};
  EXPECT_THAT(ComputePodActions(pod, status).init_containers_to_start, ElementsAre(1));
  // i2 done: app containers.
  status.container_statuses.insert(status.container_statuses.begin(),
                                   Status(pod.spec.init_containers[1], State::kExited, "i2", 0));
  a = ComputePodActions(pod, status);
  EXPECT_THAT(a.init_containers_to_start, IsEmpty());
  EXPECT_THAT(a.containers_to_start, ElementsAre(0));
}

TEST(ComputePodActionsTest, FailedInitContainerPerRestartPolicy) {
  for (const char* policy :
       {api::kRestartPolicyAlways, api::kRestartPolicyOnFailure, api::kRestartPolicyNever}) {
    SCOPED_TRACE(policy);
    api::Pod pod = MakePod("p", {MakeContainer("a")}, {MakeContainer("i1"), MakeContainer("i2")});
    pod.spec.restart_policy = policy;
    PodStatus status = InitStatus(pod);
    status.container_statuses = {Status(pod.spec.init_containers[0], State::kExited, "i1", 1)};
    PodActions a = ComputePodActions(pod, status);
    if (std::string(policy) == api::kRestartPolicyNever) {
      EXPECT_TRUE(a.kill_pod);
      EXPECT_THAT(a.init_containers_to_start, IsEmpty());
    } else {
      EXPECT_FALSE(a.kill_pod);
      EXPECT_THAT(a.init_containers_to_start, ElementsAre(0));
    }
    EXPECT_THAT(a.containers_to_start, IsEmpty());
  }
}

TEST(ComputePodActionsTest, OOMKilledInitContainerIsFailed) {
  api::Pod pod = MakePod("p", {MakeContainer("a")}, {MakeContainer("i1")});
  PodStatus status = InitStatus(pod);
  container::ContainerStatus s = Status(pod.spec.init_containers[0], State::kExited, "i1", 0);
  s.reason = "OOMKilled";
  status.container_statuses = {s};
  EXPECT_THAT(ComputePodActions(pod, status).init_containers_to_start, ElementsAre(0));
}

TEST(ComputePodActionsTest, InitContainersNotRerunOnceAppContainersRun) {
  api::Pod pod = MakePod("p", {MakeContainer("a")}, {MakeContainer("i1")});
  PodStatus status = RunningStatus(pod);  // the init container was garbage collected
  PodActions a = ComputePodActions(pod, status);
  EXPECT_THAT(a.init_containers_to_start, IsEmpty());
  EXPECT_THAT(a.containers_to_start, IsEmpty());
  EXPECT_FALSE(a.kill_pod);
}

// ---- Sidecars ---------------------------------------------------------------------------------

TEST(ComputePodActionsTest, SidecarsStartInOrderAndStayRunning) {
  api::Pod pod =
      MakePod("p", {MakeContainer("a")}, {Sidecar("s1"), MakeContainer("i1"), Sidecar("s2")});
  PodStatus status = InitStatus(pod);
  EXPECT_THAT(ComputePodActions(pod, status).init_containers_to_start, ElementsAre(0));

  // s1 running -> the next init container starts, no app container yet.
  status.container_statuses = {Status(pod.spec.init_containers[0], State::kRunning, "s1")};
  PodActions a = ComputePodActions(pod, status);
  EXPECT_THAT(a.init_containers_to_start, ElementsAre(1));
  EXPECT_THAT(a.containers_to_start, IsEmpty());

  // i1 done -> s2.
  status.container_statuses.push_back(Status(pod.spec.init_containers[1], State::kExited, "i1"));
  EXPECT_THAT(ComputePodActions(pod, status).init_containers_to_start, ElementsAre(2));

  // s2 running -> app containers start, sidecars are kept.
  status.container_statuses.push_back(Status(pod.spec.init_containers[2], State::kRunning, "s2"));
  a = ComputePodActions(pod, status);
  EXPECT_THAT(a.init_containers_to_start, IsEmpty());
  EXPECT_THAT(a.containers_to_start, ElementsAre(0));

  // Everything running: nothing to do.
  status.container_statuses.push_back(Status(pod.spec.containers[0], State::kRunning, "a"));
  a = ComputePodActions(pod, status);
  EXPECT_THAT(a.init_containers_to_start, IsEmpty());
  EXPECT_THAT(a.containers_to_start, IsEmpty());
  EXPECT_THAT(a.containers_to_kill, IsEmpty());
  EXPECT_FALSE(a.kill_pod);

  // A sidecar that exits is restarted (even with restartPolicy Never).
  pod.spec.restart_policy = api::kRestartPolicyNever;
  status.container_statuses[0].state = State::kExited;
  a = ComputePodActions(pod, status);
  EXPECT_THAT(a.init_containers_to_start, ElementsAre(0));
  EXPECT_FALSE(a.kill_pod);
}

TEST(ComputePodActionsTest, SidecarSpecChangeRestartsIt) {
  api::Pod pod = MakePod("p", {MakeContainer("a")}, {Sidecar("s1")});
  PodStatus status = RunningStatus(pod);
  status.container_statuses.push_back(Status(pod.spec.init_containers[0], State::kRunning, "s1"));
  pod.spec.init_containers[0].image = "busybox:1.37";
  PodActions a = ComputePodActions(pod, status);
  EXPECT_THAT(a.init_containers_to_start, ElementsAre(0));
  EXPECT_EQ(a.containers_to_kill.at("s1").message, "Init container s1 definition changed");
}

TEST(ComputePodActionsTest, SidecarStartupGating) {
  api::Pod pod = MakePod("p", {MakeContainer("a")}, {Sidecar("s1")});
  pod.spec.init_containers[0].startup_probe = api::Probe{};
  PodStatus status = InitStatus(pod);
  status.container_statuses = {Status(pod.spec.init_containers[0], State::kRunning, "s1")};
  ProbeView probes;
  probes.startup_pending = [](const container::ContainerID&) { return true; };
  EXPECT_THAT(ComputePodActions(pod, status, probes).containers_to_start, IsEmpty());
  probes.startup_pending = nullptr;
  EXPECT_THAT(ComputePodActions(pod, status, probes).containers_to_start, ElementsAre(0));
  probes.startup_failed = [](const container::ContainerID&) { return true; };
  PodActions a = ComputePodActions(pod, status, probes);
  EXPECT_THAT(a.init_containers_to_start, ElementsAre(0));
  EXPECT_EQ(a.containers_to_kill.at("s1").reason, kReasonStartupProbe);
}

TEST(ComputePodActionsTest, SidecarsDoNotKeepFinishedPodAlive) {
  api::Pod pod = MakePod("p", {MakeContainer("a")}, {Sidecar("s1")});
  pod.spec.restart_policy = api::kRestartPolicyNever;
  PodStatus status = RunningStatus(pod);
  status.container_statuses[0].state = State::kExited;
  // The sidecar still runs, the only app container is done.
  status.container_statuses.push_back(Status(pod.spec.init_containers[0], State::kRunning, "s1"));
  PodActions a = ComputePodActions(pod, status);
  EXPECT_TRUE(a.kill_pod);
  EXPECT_THAT(a.init_containers_to_start, IsEmpty());
}

TEST(ComputePodActionsTest, NewestStatusPerNameWins) {
  api::Pod pod = MakePod("p", {MakeContainer("a")});
  PodStatus status = RunningStatus(pod);
  // An older exited instance after the running one is ignored.
  status.container_statuses.push_back(Status(pod.spec.containers[0], State::kExited, "old", 1));
  PodActions a = ComputePodActions(pod, status);
  EXPECT_THAT(a.containers_to_start, IsEmpty());
  EXPECT_THAT(KilledIDs(a), IsEmpty());
}

// ---- In-place resize (upstream computePodResizeAction) -------------------------------------

api::Quantity Q(const char* v) { return *api::ParseQuantity(v); }

api::Container Resizable(const std::string& name, const char* cpu_limit = "1",
                         const char* memory_limit = "256Mi", const char* cpu_request = "500m") {
  api::Container c = MakeContainer(name);
  c.resources.limits = {{"cpu", Q(cpu_limit)}, {"memory", Q(memory_limit)}};
  c.resources.requests = {{"cpu", Q(cpu_request)}, {"memory", Q("128Mi")}};
  return c;
}

// The runtime status of containers created from `created`, and the pod's API status as the
// kubelet wrote it for them (running, allocation = `pod`'s requests, resources as created).
struct Resize {
  api::Pod pod;
  PodStatus status;
};

Resize Running(const std::vector<api::Container>& created, std::vector<api::Container> now) {
  Resize r;
  r.pod = MakePod("p", std::move(now));
  // Defaulted as the spec they were created from.
  const api::Pod created_pod = MakePod("p", created);
  r.status.id = r.pod.metadata.uid;
  r.status.sandbox_statuses = {ReadySandbox()};
  r.status.ips = {"10.88.0.2"};
  for (size_t i = 0; i < created.size(); ++i) {
    const api::Container& c = created_pod.spec.containers[i];
    container::ContainerStatus cs = Status(c, State::kRunning, "c" + std::to_string(i));
    cs.hash_without_resources = HashContainerSpecWithoutResources(c);
    r.status.container_statuses.push_back(cs);
    api::ContainerStatus api;
    api.name = created[i].name;
    api.container_id = cs.id.String();
    api.state.running = api::ContainerStateRunning{};
    api.allocated_resources = r.pod.spec.containers[i].resources.requests;
    api.resources = c.resources;
    r.pod.status.container_statuses.push_back(api);
  }
  return r;
}

TEST(ComputePodResizeActionTest, ResourcesOnlyChangeIsAResizeNotARestart) {
  Resize r = Running({Resizable("main")}, {Resizable("main", "2")});
  // Without the gate the new hash restarts the container.
  PodActions off = ComputePodActions(r.pod, r.status);
  EXPECT_THAT(KilledIDs(off), ElementsAre("c0"));
  EXPECT_THAT(off.containers_to_start, ElementsAre(0));

  PodActions on = ComputePodActions(r.pod, r.status, {}, ResizeView{.allowed = true});
  EXPECT_THAT(KilledIDs(on), IsEmpty());
  EXPECT_THAT(on.containers_to_start, IsEmpty());
  EXPECT_FALSE(on.kill_pod);
  EXPECT_FALSE(on.update_pod_resources);
  ASSERT_EQ(on.containers_to_update.size(), 1u);
  const std::vector<ContainerToUpdate>& cpu = on.containers_to_update.at("cpu");
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(cpu[0].container_index, 0);
  EXPECT_EQ(cpu[0].id.id, "c0");
  EXPECT_EQ(cpu[0].desired, (ContainerResourceValues{268435456, 134217728, 2000, 500}));
  EXPECT_EQ(*cpu[0].current, (ContainerResourceValues{268435456, 134217728, 1000, 500}));
  EXPECT_NE(on.String().find("ContainersToUpdate: map[cpu:[fake://c0]]"), std::string::npos)
      << on.String();

  // Another change than resources still restarts it.
  Resize other = Running({Resizable("main")}, {Resizable("main", "2")});
  other.pod.spec.containers[0].command = {"sleep", "1"};
  PodActions changed = ComputePodActions(other.pod, other.status, {}, ResizeView{.allowed = true});
  EXPECT_THAT(KilledIDs(changed), ElementsAre("c0"));
  EXPECT_EQ(changed.containers_to_kill.at("c0").message,
            "Container main definition changed, will be restarted");
}

TEST(ComputePodResizeActionTest, RestartContainerPolicyRestartsOnlyThatContainer) {
  api::Container restart = Resizable("restart", "1", "512Mi");
  restart.resize_policy = {{"cpu", "NotRequired"}, {"memory", "RestartContainer"}};
  Resize r = Running({Resizable("restart"), Resizable("stay")}, {restart, Resizable("stay", "2")});
  r.pod.spec.containers[0].resize_policy = restart.resize_policy;
  r.status.container_statuses[0].hash_without_resources =
      HashContainerSpecWithoutResources(r.pod.spec.containers[0]);
  PodActions a = ComputePodActions(r.pod, r.status, {}, ResizeView{.allowed = true});
  EXPECT_THAT(KilledIDs(a), ElementsAre("c0"));
  EXPECT_EQ(a.containers_to_kill.at("c0").message, "Container restart resize requires restart");
  EXPECT_EQ(a.containers_to_kill.at("c0").reason, "");
  EXPECT_THAT(a.containers_to_start, ElementsAre(0));
  EXPECT_TRUE(a.update_pod_resources);
  EXPECT_FALSE(a.kill_pod);
  // The other container is resized in place.
  ASSERT_EQ(a.containers_to_update.count("cpu"), 1u);
  EXPECT_EQ(a.containers_to_update.at("cpu")[0].id.id, "c1");
  EXPECT_EQ(a.containers_to_update.count("memory"), 0u);
}

TEST(ComputePodResizeActionTest, DecreasesAreUpdatedBeforeIncreases) {
  Resize r = Running({Resizable("up"), Resizable("down", "1", "256Mi")},
                     {Resizable("up", "2", "512Mi"), Resizable("down", "500m", "128Mi")});
  PodActions a = ComputePodActions(r.pod, r.status, {}, ResizeView{.allowed = true});
  ASSERT_EQ(a.containers_to_update.at("cpu").size(), 2u);
  EXPECT_EQ(a.containers_to_update.at("cpu")[0].id.id, "c1");
  EXPECT_EQ(a.containers_to_update.at("cpu")[1].id.id, "c0");
  ASSERT_EQ(a.containers_to_update.at("memory").size(), 2u);
  EXPECT_EQ(a.containers_to_update.at("memory")[0].id.id, "c1");
  // One container's memory and CPU entries share its current resources.
  EXPECT_EQ(a.containers_to_update.at("memory")[1].current.get(),
            a.containers_to_update.at("cpu")[1].current.get());
}

TEST(ComputePodResizeActionTest, NothingUntilAcceptedOrWhenAlreadyApplied) {
  // Requests not yet allocated (resize not accepted): wait.
  Resize pending = Running({Resizable("main")}, {Resizable("main", "2", "256Mi", "1")});
  pending.pod.status.container_statuses[0].allocated_resources = {{"cpu", Q("500m")},
                                                                  {"memory", Q("128Mi")}};
  PodActions a = ComputePodActions(pending.pod, pending.status, {}, ResizeView{.allowed = true});
  EXPECT_TRUE(a.containers_to_update.empty());
  EXPECT_THAT(KilledIDs(a), IsEmpty());
  // The runtime already reports the new limit: nothing to do.
  Resize done = Running({Resizable("main")}, {Resizable("main", "2")});
  done.status.container_statuses[0].resources =
      container::ContainerResources{.cpu_request = Q("500m"), .cpu_limit = Q("2")};
  PodActions b = ComputePodActions(done.pod, done.status, {}, ResizeView{.allowed = true});
  EXPECT_TRUE(b.containers_to_update.empty());
  // The freshest status is the one looked at.
  Resize stale = Running({Resizable("main")}, {Resizable("main", "2")});
  PodStatus latest = stale.status;
  latest.container_statuses[0].resources =
      container::ContainerResources{.cpu_request = Q("500m"), .cpu_limit = Q("2")};
  PodActions c = ComputePodActions(stale.pod, stale.status, {},
                                   ResizeView{.allowed = true, .latest = &latest});
  EXPECT_TRUE(c.containers_to_update.empty());
  // A container without limits is not resized.
  api::Container unlimited = Resizable("main");
  unlimited.resources.limits.clear();
  Resize none = Running({unlimited}, {unlimited});
  none.pod.spec.containers[0].resources.requests["cpu"] = Q("1");
  none.pod.status.container_statuses[0].allocated_resources["cpu"] = Q("1");
  PodActions d = ComputePodActions(none.pod, none.status, {}, ResizeView{.allowed = true});
  EXPECT_TRUE(d.containers_to_update.empty());
  EXPECT_THAT(KilledIDs(d), IsEmpty());
}

}  // namespace
}  // namespace kubelet::kuberuntime
