#include "kubelet/status/generate.h"

#include <gtest/gtest.h>

namespace kubelet::status {
namespace {

api::Container MakeContainer(const std::string& name) {
  api::Container c;
  c.name = name;
  c.image = "busybox";
  return c;
}

container::ContainerStatus Running(const std::string& name, const std::string& id) {
  container::ContainerStatus cs;
  cs.id = {"containerd", id};
  cs.name = name;
  cs.state = container::State::kRunning;
  cs.started_at = absl::FromUnixSeconds(1000);
  return cs;
}

container::ContainerStatus Exited(const std::string& name, const std::string& id, int code,
                                  std::string reason = "") {
  container::ContainerStatus cs = Running(name, id);
  cs.state = container::State::kExited;
  cs.exit_code = code;
  cs.finished_at = absl::FromUnixSeconds(1010);
  cs.reason = std::move(reason);
  return cs;
}

container::PodStatus WithSandbox() {
  container::PodStatus rs;
  container::SandboxStatus sb;
  sb.id = "sb";
  sb.ready = true;
  sb.ips = {"10.0.0.5"};
  rs.sandbox_statuses.push_back(sb);
  rs.ips = {"10.0.0.5"};
  return rs;
}

const api::PodCondition* Cond(const api::PodStatus& s, const std::string& type) {
  for (const auto& c : s.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

api::PodStatus Generate(const api::Pod& pod, const container::PodStatus& rs,
                        const ProbeState* probes = nullptr, const api::PodStatus* old = nullptr,
                        absl::Time now = absl::Now()) {
  GenerateInput in;
  in.pod = &pod;
  in.runtime_status = &rs;
  in.probes = probes;
  in.old_status = old;
  in.host_ip = "192.168.1.10";
  in.now = now;
  return GeneratePodStatus(in);
}

TEST(GenerateStatusTest, RunningPodWithoutProbesIsReadyWithUpstreamConditions) {
  api::Pod pod;
  pod.spec.restart_policy = "Always";
  pod.spec.containers = {MakeContainer("main")};
  container::PodStatus rs = WithSandbox();
  rs.container_statuses = {Running("main", "c1")};
  api::PodStatus s = Generate(pod, rs);
  EXPECT_EQ(s.phase, "Running");
  // v1.28 defaults: no PodReadyToStartContainers condition, no hostIPs (alpha gates).
  ASSERT_EQ(s.conditions.size(), 4u);
  EXPECT_EQ(s.conditions[0].type, "Initialized");
  EXPECT_EQ(s.conditions[1].type, "Ready");
  EXPECT_EQ(s.conditions[2].type, "ContainersReady");
  EXPECT_EQ(s.conditions[3].type, "PodScheduled");
  for (const auto& c : s.conditions) EXPECT_EQ(c.status, "True") << c.type;
  EXPECT_EQ(s.host_ip, "192.168.1.10");
  EXPECT_TRUE(s.host_ips.empty());
  // With both gates on.
  GenerateInput in;
  in.pod = &pod;
  in.runtime_status = &rs;
  in.host_ip = "192.168.1.10";
  in.ready_to_start_condition = true;
  in.host_ips = true;
  api::PodStatus gated = GeneratePodStatus(in);
  ASSERT_EQ(gated.conditions.size(), 5u);
  EXPECT_EQ(gated.conditions[0].type, "PodReadyToStartContainers");
  EXPECT_EQ(gated.conditions[0].status, "True");
  ASSERT_EQ(gated.host_ips.size(), 1u);
  EXPECT_EQ(gated.host_ips[0].ip, "192.168.1.10");
  EXPECT_TRUE(s.container_statuses[0].ready);
  EXPECT_EQ(s.container_statuses[0].started, true);
  EXPECT_EQ(s.pod_ip, "10.0.0.5");
  EXPECT_EQ(s.qos_class, "BestEffort");
}

TEST(GenerateStatusTest, ReadinessProbeGatesReadyUntilSuccess) {
  api::Pod pod;
  pod.spec.restart_policy = "Always";
  pod.spec.containers = {MakeContainer("main"), MakeContainer("side")};
  pod.spec.containers[0].readiness_probe = api::Probe();
  container::PodStatus rs = WithSandbox();
  rs.container_statuses = {Running("main", "c1"), Running("side", "c2")};

  api::PodStatus s = Generate(pod, rs);  // no prober result yet
  EXPECT_FALSE(s.container_statuses[0].ready);
  EXPECT_TRUE(s.container_statuses[1].ready);
  const api::PodCondition* ready = Cond(s, "Ready");
  ASSERT_NE(ready, nullptr);
  EXPECT_EQ(ready->status, "False");
  EXPECT_EQ(ready->reason, "ContainersNotReady");
  EXPECT_EQ(ready->message, "containers with unready status: [main]");

  bool main_ready = true;
  ProbeState probes;
  probes.ready = [&](const std::string& id) -> std::optional<bool> {
    if (id == "containerd://c1") return main_ready;
    return std::nullopt;
  };
  absl::Time t0 = absl::FromUnixSeconds(2000);
  api::PodStatus s2 = Generate(pod, rs, &probes, &s, t0);
  EXPECT_TRUE(s2.container_statuses[0].ready);
  EXPECT_EQ(Cond(s2, "Ready")->status, "True");
  EXPECT_EQ(Cond(s2, "Ready")->last_transition_time.seconds, 2000);
  // An unchanged condition keeps its transition time.
  api::PodStatus s3 = Generate(pod, rs, &probes, &s2, t0 + absl::Seconds(30));
  EXPECT_EQ(Cond(s3, "Ready")->last_transition_time.seconds, 2000);
  main_ready = false;
  api::PodStatus s4 = Generate(pod, rs, &probes, &s3, t0 + absl::Seconds(60));
  EXPECT_EQ(Cond(s4, "Ready")->status, "False");
  EXPECT_EQ(Cond(s4, "Ready")->last_transition_time.seconds, 2060);
}

TEST(GenerateStatusTest, StartupProbeMeansNotStartedAndNotReady) {
  api::Pod pod;
  pod.spec.restart_policy = "Always";
  pod.spec.containers = {MakeContainer("main")};
  pod.spec.containers[0].startup_probe = api::Probe();
  container::PodStatus rs = WithSandbox();
  rs.container_statuses = {Running("main", "c1")};
  api::PodStatus s = Generate(pod, rs);
  EXPECT_EQ(s.container_statuses[0].started, false);
  EXPECT_FALSE(s.container_statuses[0].ready);
  ProbeState probes;
  probes.started = [](const std::string&) -> std::optional<bool> { return true; };
  api::PodStatus s2 = Generate(pod, rs, &probes);
  EXPECT_EQ(s2.container_statuses[0].started, true);
  EXPECT_TRUE(s2.container_statuses[0].ready);
}

TEST(GenerateStatusTest, InitContainersPendingAndCompleted) {
  api::Pod pod;
  pod.spec.restart_policy = "Always";
  pod.spec.init_containers = {MakeContainer("init")};
  pod.spec.containers = {MakeContainer("main")};
  container::PodStatus rs = WithSandbox();
  rs.container_statuses = {Running("init", "i1")};
  api::PodStatus s = Generate(pod, rs);
  EXPECT_EQ(s.phase, "Pending");
  EXPECT_EQ(Cond(s, "Initialized")->status, "False");
  EXPECT_EQ(Cond(s, "Initialized")->reason, "ContainersNotInitialized");
  EXPECT_EQ(Cond(s, "Initialized")->message, "containers with incomplete status: [init]");
  EXPECT_EQ(s.container_statuses[0].state.waiting->reason, "PodInitializing");
  EXPECT_EQ(Cond(s, "ContainersReady")->message, "containers with unready status: [main]");

  rs.container_statuses = {Exited("init", "i1", 0), Running("main", "c1")};
  api::PodStatus s2 = Generate(pod, rs);
  EXPECT_EQ(s2.phase, "Running");
  EXPECT_EQ(Cond(s2, "Initialized")->status, "True");
  EXPECT_EQ(s2.init_container_statuses[0].state.terminated->reason, "Completed");
}

TEST(GenerateStatusTest, SucceededAndOOMKilled) {
  api::Pod pod;
  pod.spec.restart_policy = "Never";
  pod.spec.containers = {MakeContainer("main")};
  container::PodStatus rs = WithSandbox();
  rs.sandbox_statuses[0].ready = false;
  rs.container_statuses = {Exited("main", "c1", 0)};
  api::PodStatus s = Generate(pod, rs);
  EXPECT_EQ(s.phase, "Succeeded");
  EXPECT_EQ(Cond(s, "Ready")->reason, "PodCompleted");
  EXPECT_EQ(Cond(s, "Initialized")->reason, "PodCompleted");
  EXPECT_EQ(s.container_statuses[0].started, false);
  EXPECT_EQ(s.container_statuses[0].state.terminated->reason, "Completed");

  rs.container_statuses = {Exited("main", "c1", 137, "OOMKilled")};
  api::PodStatus s2 = Generate(pod, rs);
  EXPECT_EQ(s2.phase, "Failed");
  EXPECT_EQ(s2.container_statuses[0].state.terminated->reason, "OOMKilled");
  EXPECT_EQ(s2.container_statuses[0].state.terminated->exit_code, 137);
  EXPECT_EQ(Cond(s2, "Ready")->reason, "PodFailed");
  EXPECT_EQ(Cond(s2, "ContainersReady")->reason, "PodFailed");
  EXPECT_EQ(Cond(s2, "ContainersReady")->message, "");
}

// Upstream's prober: a regular init container that exited 0 is ready, whatever the pod's
// restart policy; running or failed, it is not; every init status has `started`.
TEST(GenerateStatusTest, CompletedInitContainersAreReady) {
  for (const char* policy : {"Always", "Never", "OnFailure"}) {
    api::Pod pod;
    pod.spec.restart_policy = policy;
    pod.spec.init_containers = {MakeContainer("init1"), MakeContainer("init2")};
    pod.spec.containers = {MakeContainer("main")};
    container::PodStatus rs = WithSandbox();
    rs.container_statuses = {Running("init2", "i2"), Exited("init1", "i1", 0)};
    api::PodStatus s = Generate(pod, rs);
    EXPECT_TRUE(s.init_container_statuses[0].ready) << policy;
    EXPECT_EQ(s.init_container_statuses[0].started, false) << policy;
    EXPECT_FALSE(s.init_container_statuses[1].ready) << policy;
    EXPECT_EQ(s.init_container_statuses[1].started, true) << policy;
    EXPECT_EQ(Cond(s, "Initialized")->message, "containers with incomplete status: [init2]");

    rs.container_statuses = {Exited("init2", "i2", 1), Exited("init1", "i1", 0)};
    api::PodStatus failed = Generate(pod, rs);
    EXPECT_TRUE(failed.init_container_statuses[0].ready) << policy;
    EXPECT_FALSE(failed.init_container_statuses[1].ready) << policy;

    rs.container_statuses = {Running("main", "c1"), Exited("init2", "i2", 0),
                             Exited("init1", "i1", 0)};
    api::PodStatus done = Generate(pod, rs);
    EXPECT_TRUE(done.init_container_statuses[0].ready) << policy;
    EXPECT_TRUE(done.init_container_statuses[1].ready) << policy;
    EXPECT_EQ(Cond(done, "Initialized")->status, "True") << policy;
    EXPECT_EQ(Cond(done, "Ready")->status, "True") << policy;
  }
}

// A sidecar (restartable init container) follows its probes, never its exit code.
TEST(GenerateStatusTest, SidecarReadinessFollowsProbes) {
  api::Pod pod;
  pod.spec.restart_policy = "Always";
  pod.spec.init_containers = {MakeContainer("sidecar")};
  pod.spec.init_containers[0].restart_policy = "Always";
  pod.spec.init_containers[0].readiness_probe = api::Probe();
  pod.spec.containers = {MakeContainer("main")};
  container::PodStatus rs = WithSandbox();
  rs.container_statuses = {Running("main", "c1"), Running("sidecar", "s1")};
  api::PodStatus s = Generate(pod, rs);
  EXPECT_FALSE(s.init_container_statuses[0].ready);
  EXPECT_EQ(Cond(s, "ContainersReady")->message, "containers with unready status: [sidecar]");
  ProbeState probes;
  probes.ready = [](const std::string& id) -> std::optional<bool> {
    return id == "containerd://s1" ? std::optional<bool>(true) : std::nullopt;
  };
  EXPECT_TRUE(Generate(pod, rs, &probes).init_container_statuses[0].ready);
  rs.container_statuses = {Running("main", "c1"), Exited("sidecar", "s1", 0)};
  EXPECT_FALSE(Generate(pod, rs, &probes).init_container_statuses[0].ready);
}

// Ephemeral containers are reported as upstream reports them: converted like app containers,
// never probed (no `started`, never ready), never restarted.
TEST(GenerateStatusTest, EphemeralContainerStatuses) {
  api::Pod pod;
  pod.spec.restart_policy = "Always";
  pod.spec.containers = {MakeContainer("main")};
  api::EphemeralContainer debugger;
  debugger.common = MakeContainer("debugger");
  debugger.target_container_name = "main";
  pod.spec.ephemeral_containers = {debugger};
  container::PodStatus rs = WithSandbox();
  rs.container_statuses = {Running("main", "c1")};
  api::PodStatus s = Generate(pod, rs);
  ASSERT_EQ(s.ephemeral_container_statuses.size(), 1u);
  const api::ContainerStatus& waiting = s.ephemeral_container_statuses[0];
  EXPECT_EQ(waiting.name, "debugger");
  EXPECT_EQ(waiting.state.waiting->reason, "ContainerCreating");
  EXPECT_FALSE(waiting.started.has_value());
  EXPECT_FALSE(waiting.ready);
  // The ephemeral container does not count for readiness or phase.
  EXPECT_EQ(Cond(s, "Ready")->status, "True");

  container::ContainerStatus dbg = Running("debugger", "d1");
  dbg.image_ref = "sha256:abc";
  rs.container_statuses = {dbg, Running("main", "c1")};
  api::PodStatus running = Generate(pod, rs);
  const api::ContainerStatus& r = running.ephemeral_container_statuses[0];
  ASSERT_TRUE(r.state.running.has_value());
  EXPECT_EQ(r.container_id, "containerd://d1");
  EXPECT_EQ(r.image_id, "sha256:abc");
  EXPECT_EQ(r.restart_count, 0);
  EXPECT_FALSE(r.started.has_value());
  EXPECT_FALSE(r.ready);

  // Exited under restartPolicy Always, with a stale failure reason: still terminated.
  rs.container_statuses = {Exited("debugger", "d1", 0), Running("main", "c1")};
  ReasonCache reasons = {{"debugger", {"CrashLoopBackOff", "back-off"}}};
  GenerateInput in;
  in.pod = &pod;
  in.runtime_status = &rs;
  in.reasons = &reasons;
  api::PodStatus exited = GeneratePodStatus(in);
  ASSERT_TRUE(exited.ephemeral_container_statuses[0].state.terminated.has_value());
  EXPECT_EQ(exited.ephemeral_container_statuses[0].state.terminated->reason, "Completed");
  EXPECT_EQ(exited.phase, "Running");
  // Not started yet and its image failed: waiting with the reason.
  rs.container_statuses = {Running("main", "c1")};
  reasons = {{"debugger", {"ErrImagePull", "not found"}}};
  EXPECT_EQ(GeneratePodStatus(in).ephemeral_container_statuses[0].state.waiting->reason,
            "ErrImagePull");
}

// The kubelet's own end of a pod (deadline, eviction) is applied before the conditions.
TEST(GenerateStatusTest, TerminalReasonBeforeConditions) {
  api::Pod pod;
  pod.spec.restart_policy = "Always";
  pod.spec.containers = {MakeContainer("main")};
  container::PodStatus rs = WithSandbox();
  rs.container_statuses = {Running("main", "c1")};
  TerminalReason deadline{kDeadlineExceededReason, kDeadlineExceededMessage, std::nullopt};
  GenerateInput in;
  in.pod = &pod;
  in.runtime_status = &rs;
  in.terminal = &deadline;
  api::PodStatus s = GeneratePodStatus(in);
  EXPECT_EQ(s.phase, "Failed");
  EXPECT_EQ(s.reason, "DeadlineExceeded");
  EXPECT_EQ(s.message, "Pod was active on the node longer than the specified deadline");
  EXPECT_EQ(Cond(s, "Ready")->reason, "PodFailed");
  EXPECT_EQ(Cond(s, "DisruptionTarget"), nullptr);
  // A later status without the reason keeps the phase, reason and message.
  in.terminal = nullptr;
  in.old_status = &s;
  api::PodStatus later = GeneratePodStatus(in);
  EXPECT_EQ(later.phase, "Failed");
  EXPECT_EQ(later.reason, "DeadlineExceeded");

  TerminalReason evicted{"Evicted", "low on memory", absl::FromUnixSeconds(3000)};
  in.terminal = &evicted;
  in.old_status = nullptr;
  in.now = absl::FromUnixSeconds(3010);
  api::PodStatus e = GeneratePodStatus(in);
  EXPECT_EQ(e.reason, "Evicted");
  ASSERT_EQ(e.conditions[0].type, "DisruptionTarget");
  EXPECT_EQ(e.conditions[0].reason, "TerminationByKubelet");
  EXPECT_EQ(e.conditions[0].message, "low on memory");
  EXPECT_EQ(e.conditions[0].last_transition_time.seconds, 3000);
}

TEST(GenerateStatusTest, PastActiveDeadline) {
  api::Pod pod;
  const absl::Time now = absl::FromUnixSeconds(10000);
  std::optional<api::Time> start = api::Time::FromUnix(9970);
  EXPECT_FALSE(PastActiveDeadline(pod, start, now));  // no deadline
  pod.spec.active_deadline_seconds = 60;
  EXPECT_FALSE(PastActiveDeadline(pod, start, now));
  pod.spec.active_deadline_seconds = 30;
  EXPECT_TRUE(PastActiveDeadline(pod, start, now));  // exactly the deadline
  pod.spec.active_deadline_seconds = 5;
  EXPECT_TRUE(PastActiveDeadline(pod, start, now));
  EXPECT_FALSE(PastActiveDeadline(pod, std::nullopt, now));  // not started
  EXPECT_FALSE(PastActiveDeadline(pod, api::Time{}, now));
}

TEST(GenerateStatusTest, WaitingReasonsFromTheLastSync) {
  api::Pod pod;
  pod.spec.restart_policy = "Always";
  pod.spec.containers = {MakeContainer("main")};
  container::PodStatus rs = WithSandbox();
  ReasonCache reasons = {{"main", {"ErrImageNeverPull", "Container image \"x\" is not present"}}};
  GenerateInput in;
  in.pod = &pod;
  in.runtime_status = &rs;
  in.reasons = &reasons;
  api::PodStatus s = GeneratePodStatus(in);
  EXPECT_EQ(s.phase, "Pending");
  ASSERT_TRUE(s.container_statuses[0].state.waiting.has_value());
  EXPECT_EQ(s.container_statuses[0].state.waiting->reason, "ErrImageNeverPull");

  rs.container_statuses = {Exited("main", "c1", 1)};
  reasons = {{"main", {"CrashLoopBackOff", "back-off 10s restarting failed container"}}};
  api::PodStatus s2 = GeneratePodStatus(in);
  EXPECT_EQ(s2.container_statuses[0].state.waiting->reason, "CrashLoopBackOff");
  ASSERT_TRUE(s2.container_statuses[0].last_state.terminated.has_value());
  EXPECT_EQ(s2.container_statuses[0].last_state.terminated->exit_code, 1);
  EXPECT_EQ(s2.phase, "Running");
}

TEST(GenerateStatusTest, StaleReasonsOnlyForContainersTheNextSyncRestarts) {
  api::Pod pod;
  pod.spec.containers = {MakeContainer("main")};
  container::PodStatus rs = WithSandbox();
  rs.container_statuses = {Exited("main", "c1", 2)};
  ReasonCache reasons = {{"main", {"CrashLoopBackOff", "back-off 10s"}}};
  GenerateInput in;
  in.pod = &pod;
  in.runtime_status = &rs;
  in.reasons = &reasons;
  // Never: the failed container stays terminated, whatever the last sync said.
  pod.spec.restart_policy = "Never";
  api::PodStatus never = GeneratePodStatus(in);
  ASSERT_TRUE(never.container_statuses[0].state.terminated.has_value());
  EXPECT_EQ(never.container_statuses[0].state.terminated->exit_code, 2);
  EXPECT_EQ(never.phase, "Failed");
  // OnFailure and a failure: restarted, so waiting with the reason.
  pod.spec.restart_policy = "OnFailure";
  api::PodStatus on_failure = GeneratePodStatus(in);
  ASSERT_TRUE(on_failure.container_statuses[0].state.waiting.has_value());
  EXPECT_EQ(on_failure.container_statuses[0].state.waiting->reason, "CrashLoopBackOff");
  // OnFailure and success: done, stays terminated.
  rs.container_statuses = {Exited("main", "c1", 0)};
  api::PodStatus done = GeneratePodStatus(in);
  ASSERT_TRUE(done.container_statuses[0].state.terminated.has_value());
  EXPECT_EQ(done.container_statuses[0].state.terminated->reason, "Completed");
  // A pod being deleted is never restarted.
  pod.spec.restart_policy = "Always";
  rs.container_statuses = {Exited("main", "c1", 1)};
  pod.metadata.deletion_timestamp = api::Time{};
  EXPECT_TRUE(GeneratePodStatus(in).container_statuses[0].state.terminated.has_value());
}

TEST(GenerateStatusTest, CreatedContainerWaitsWithoutReason) {
  api::Pod pod;
  pod.spec.restart_policy = "Always";
  pod.spec.containers = {MakeContainer("main")};
  container::PodStatus rs = WithSandbox();
  container::ContainerStatus created = Running("main", "c1");
  created.state = container::State::kCreated;
  rs.container_statuses = {created};
  api::PodStatus s = Generate(pod, rs);
  ASSERT_TRUE(s.container_statuses[0].state.waiting.has_value());
  EXPECT_EQ(s.container_statuses[0].state.waiting->reason, "");
  EXPECT_EQ(s.container_statuses[0].container_id, "containerd://c1");
  // No runtime status yet: ContainerCreating.
  rs.container_statuses.clear();
  EXPECT_EQ(Generate(pod, rs).container_statuses[0].state.waiting->reason, "ContainerCreating");
}

// ---- In-place resize (InPlacePodVerticalScaling) ------------------------------------------

api::Quantity Q(const char* v) { return *api::ParseQuantity(v); }

api::Pod ResizablePod() {
  api::Pod pod;
  pod.metadata.name = "p";
  pod.metadata.uid = "uid-p";
  pod.spec.restart_policy = "Always";
  api::Container c = MakeContainer("main");
  c.resources.requests = {{"cpu", Q("500m")}, {"memory", Q("128Mi")}};
  c.resources.limits = {{"cpu", Q("1")}, {"memory", Q("256Mi")}, {"ephemeral-storage", Q("1Gi")}};
  pod.spec.containers = {c};
  return pod;
}

api::PodStatus GenerateResize(const api::Pod& pod, const container::PodStatus& rs,
                              const api::PodStatus* old,
                              std::optional<api::ResourceList> allocation) {
  GenerateInput in;
  in.pod = &pod;
  in.runtime_status = &rs;
  in.old_status = old;
  in.in_place_vertical_scaling = true;
  in.allocation = [allocation](const std::string&) { return allocation; };
  return GeneratePodStatus(in);
}

TEST(GenerateStatusResizeTest, AllocatedResourcesAndRuntimeReportedResources) {
  const api::Pod pod = ResizablePod();
  container::PodStatus rs = WithSandbox();
  container::ContainerStatus running = Running("main", "c1");
  running.resources = container::ContainerResources{
      .cpu_request = Q("500m"), .cpu_limit = Q("1"), .memory_limit = Q("256Mi")};
  rs.container_statuses = {running};
  const api::ResourceList alloc = {{"cpu", Q("500m")}, {"memory", Q("128Mi")}};
  api::PodStatus s = GenerateResize(pod, rs, nullptr, alloc);
  ASSERT_EQ(s.container_statuses.size(), 1u);
  const api::ContainerStatus& cs = s.container_statuses[0];
  EXPECT_EQ(cs.allocated_resources, alloc);
  ASSERT_TRUE(cs.resources.has_value());
  EXPECT_EQ(cs.resources->limits,
            (api::ResourceList{
                {"cpu", Q("1")}, {"memory", Q("256Mi")}, {"ephemeral-storage", Q("1Gi")}}));
  EXPECT_EQ(cs.resources->requests, alloc);
  // The spec's resources are what the status reports: no resize pending.
  EXPECT_FALSE(PodResizeSpecStatusDiffer(pod, s));
  EXPECT_FALSE(IsPodResizeInProgress(pod, s));
  // Without the gate nothing of this is reported.
  api::PodStatus off = Generate(pod, rs);
  EXPECT_TRUE(off.container_statuses[0].allocated_resources.empty());
  EXPECT_FALSE(off.container_statuses[0].resources.has_value());
}

TEST(GenerateStatusResizeTest, WithoutRuntimeReportTheSpecOnStartThenTheLastStatus) {
  api::Pod pod = ResizablePod();
  container::PodStatus rs = WithSandbox();
  rs.container_statuses = {Running("main", "c1")};
  const api::ResourceList alloc = {{"cpu", Q("500m")}, {"memory", Q("128Mi")}};
  // The first status of a container that just started: nothing is known of its old state.
  api::PodStatus first = GenerateResize(pod, rs, nullptr, alloc);
  EXPECT_EQ(first.container_statuses[0].resources->limits,
            (api::ResourceList{{"ephemeral-storage", Q("1Gi")}}));
  // The previous status shows it waiting: the spec's values (the allocation's requests).
  api::PodStatus waiting;
  api::ContainerStatus w;
  w.name = "main";
  w.state.waiting = api::ContainerStateWaiting{"ContainerCreating", ""};
  waiting.container_statuses = {w};
  api::PodStatus started = GenerateResize(pod, rs, &waiting, alloc);
  const api::ContainerStatus& cs = started.container_statuses[0];
  EXPECT_EQ(cs.resources->limits, pod.spec.containers[0].resources.limits);
  EXPECT_EQ(cs.resources->requests, alloc);
  // Later the running container keeps the values of its last status, whatever the spec says.
  pod.spec.containers[0].resources.limits["cpu"] = Q("2");
  api::PodStatus later = GenerateResize(pod, rs, &started, alloc);
  EXPECT_EQ(later.container_statuses[0].resources->limits.at("cpu"), Q("1"));
  EXPECT_TRUE(PodResizeSpecStatusDiffer(pod, later));
  EXPECT_TRUE(IsPodResizeInProgress(pod, later));
  // No allocation recorded: the old status's allocatedResources are kept.
  api::PodStatus unrecorded = GenerateResize(pod, rs, &started, std::nullopt);
  EXPECT_EQ(unrecorded.container_statuses[0].allocated_resources, alloc);
}

TEST(GenerateStatusResizeTest, SpecStatusDifferIgnoresOtherResources) {
  api::Pod pod = ResizablePod();
  pod.spec.containers[0].resources.limits["example.com/gpu"] = Q("1");
  pod.spec.containers[0].resources.requests["example.com/gpu"] = Q("1");
  api::PodStatus s;
  api::ContainerStatus cs;
  cs.name = "main";
  cs.allocated_resources = {{"cpu", Q("500m")}, {"memory", Q("128Mi")}};
  cs.resources = api::ResourceRequirements{
      .limits = {{"cpu", Q("1")}, {"memory", Q("256Mi")}, {"ephemeral-storage", Q("1Gi")}},
      .requests = {{"cpu", Q("500m")}, {"memory", Q("128Mi")}}};
  s.container_statuses = {cs};
  EXPECT_FALSE(PodResizeSpecStatusDiffer(pod, s));
  s.container_statuses[0].resources->requests["cpu"] = Q("250m");
  EXPECT_TRUE(PodResizeSpecStatusDiffer(pod, s));
  // A container without status resources does not count.
  s.container_statuses[0].resources.reset();
  EXPECT_FALSE(PodResizeSpecStatusDiffer(pod, s));
  EXPECT_FALSE(IsPodResizeInProgress(pod, s));
}

}  // namespace
}  // namespace kubelet::status
