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
  ASSERT_EQ(s.conditions.size(), 5u);
  EXPECT_EQ(s.conditions[0].type, "PodReadyToStartContainers");
  EXPECT_EQ(s.conditions[1].type, "Initialized");
  EXPECT_EQ(s.conditions[2].type, "Ready");
  EXPECT_EQ(s.conditions[3].type, "ContainersReady");
  EXPECT_EQ(s.conditions[4].type, "PodScheduled");
  for (const auto& c : s.conditions) EXPECT_EQ(c.status, "True") << c.type;
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
  EXPECT_EQ(Cond(s, "PodReadyToStartContainers")->status, "False");
  EXPECT_EQ(s.container_statuses[0].state.terminated->reason, "Completed");

  rs.container_statuses = {Exited("main", "c1", 137, "OOMKilled")};
  api::PodStatus s2 = Generate(pod, rs);
  EXPECT_EQ(s2.phase, "Failed");
  EXPECT_EQ(s2.container_statuses[0].state.terminated->reason, "OOMKilled");
  EXPECT_EQ(s2.container_statuses[0].state.terminated->exit_code, 137);
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

}  // namespace
}  // namespace kubelet::status
