#include "kubelet/prober/prober_manager.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "api/testing/pod_builder.h"
#include "cri/testing/fake_runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/events/testing/fake_recorder.h"

namespace kubelet::prober {
namespace {

using lifecycle::ProbeOutcome;
using lifecycle::ProbeResult;

api::Probe ExecProbeSpec(int failure_threshold = 3, int period = 10) {
  api::Probe p;
  p.exec = api::ExecAction{{"check"}};
  p.failure_threshold = failure_threshold;
  p.period_seconds = period;
  return p;
}

api::Pod MakePod(const std::string& uid, api::Container c) {
  return api::testing::PodBuilder("pod-" + uid)
      .Uid(uid)
      .RestartPolicy("Always")
      .Container(std::move(c));
}

container::PodStatus RunningStatus(const api::Pod& pod, const std::string& id, absl::Time started) {
  container::PodStatus st;
  st.id = pod.metadata.uid;
  st.name = pod.metadata.name;
  st.namespace_ = pod.metadata.namespace_;
  st.ips = {"127.0.0.1"};
  container::ContainerStatus cs;
  cs.id = container::ContainerID{"containerd", id};
  cs.name = pod.spec.containers[0].name;
  cs.state = container::State::kRunning;
  cs.started_at = started;
  st.container_statuses.push_back(cs);
  return st;
}

container::ContainerID CID(const std::string& id) { return {"containerd", id}; }

// Scripted probe results per probe type, recording every call.
class FakeProber {
 public:
  ProberManager::ProbeFn Fn() {
    return [this](ProbeType t, const api::Pod&, const api::Container&, const api::Probe&,
                  const container::ContainerID& id, const std::string&) {
      absl::MutexLock lock(&mu_);
      calls_.push_back({t, id.id});
      ProbeOutcome out;
      out.result = next_[t];
      out.output = "scripted";
      return out;
    };
  }
  void Set(ProbeType t, ProbeResult r) {
    absl::MutexLock lock(&mu_);
    next_[t] = r;
  }
  int Calls(ProbeType t) {
    absl::MutexLock lock(&mu_);
    int n = 0;
    for (const auto& c : calls_) n += c.first == t;
    return n;
  }

 private:
  absl::Mutex mu_;
  std::map<ProbeType, ProbeResult> next_ ABSL_GUARDED_BY(mu_) = {
      {ProbeType::kLiveness, ProbeResult::kSuccess},
      {ProbeType::kReadiness, ProbeResult::kSuccess},
      {ProbeType::kStartup, ProbeResult::kSuccess}};
  std::vector<std::pair<ProbeType, std::string>> calls_ ABSL_GUARDED_BY(mu_);
};

class ProberManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ProberManager::Options opts;
    opts.start_scheduler = false;
    opts.probe = prober_.Fn();
    opts.recorder = &recorder_;
    manager_ = std::make_unique<ProberManager>(runtime_, clock_, opts);
    manager_->SetOnChange([this](const std::string& uid) {
      absl::MutexLock lock(&mu_);
      changes_.push_back(uid);
    });
  }
  // Advances the clock by one period and runs what is due.
  void Tick(absl::Duration d = absl::Seconds(10)) {
    clock_.Advance(d);
    manager_->RunDueProbes();
  }
  size_t Changes() {
    absl::MutexLock lock(&mu_);
    return changes_.size();
  }

  cri::FakeRuntime runtime_;
  FakeClock clock_;
  FakeProber prober_;
  events::FakeRecorder recorder_;
  std::unique_ptr<ProberManager> manager_;
  absl::Mutex mu_;
  std::vector<std::string> changes_ ABSL_GUARDED_BY(mu_);
};

TEST_F(ProberManagerTest, LivenessFailureAfterThresholdHoldsAndNotifies) {
  api::Container c;
  c.name = "main";
  c.liveness_probe = ExecProbeSpec(/*failure_threshold=*/2);
  api::Pod pod = MakePod("u1", c);
  manager_->AfterSync(pod, RunningStatus(pod, "c1", clock_.Now()));
  EXPECT_EQ(manager_->NumWorkers(), 1u);
  EXPECT_FALSE(manager_->LivenessFailed(CID("c1")));

  prober_.Set(ProbeType::kLiveness, ProbeResult::kFailure);
  manager_->RunDueProbes();
  EXPECT_FALSE(manager_->LivenessFailed(CID("c1")));
  EXPECT_EQ(Changes(), 0u);
  Tick();
  EXPECT_TRUE(manager_->LivenessFailed(CID("c1")));
  EXPECT_EQ(Changes(), 1u);
  // On hold until a new container appears.
  Tick();
  Tick();
  EXPECT_EQ(prober_.Calls(ProbeType::kLiveness), 2);

  // The restarted container starts with a clean result; the old one is forgotten.
  prober_.Set(ProbeType::kLiveness, ProbeResult::kSuccess);
  manager_->AfterSync(pod, RunningStatus(pod, "c2", clock_.Now()));
  EXPECT_FALSE(manager_->LivenessFailed(CID("c2")));
  EXPECT_FALSE(manager_->LivenessFailed(CID("c1")));
  manager_->RunDueProbes();
  EXPECT_EQ(prober_.Calls(ProbeType::kLiveness), 3);
}

TEST_F(ProberManagerTest, WarningCountsAsSuccessAndErrorsAreDiscarded) {
  api::Container c;
  c.name = "main";
  c.readiness_probe = ExecProbeSpec(1);
  api::Pod pod = MakePod("u1", c);
  manager_->AfterSync(pod, RunningStatus(pod, "c1", clock_.Now()));
  prober_.Set(ProbeType::kReadiness, ProbeResult::kUnknown);
  manager_->RunDueProbes();
  EXPECT_EQ(manager_->Ready("containerd://c1"), false);
  EXPECT_EQ(prober_.Calls(ProbeType::kReadiness), 3);  // retried
  prober_.Set(ProbeType::kReadiness, ProbeResult::kWarning);
  Tick();
  EXPECT_EQ(manager_->Ready("containerd://c1"), true);
}

TEST(ProberManagerThrowTest, AProbeThatThrowsErrorsAndIsRunAgainNextPeriod) {
  cri::FakeRuntime runtime;
  FakeClock clock;
  std::atomic<int> calls{0};
  ProberManager::Options opts;
  opts.start_scheduler = false;
  opts.probe = [&calls](ProbeType, const api::Pod&, const api::Container&, const api::Probe&,
                        const container::ContainerID&, const std::string&) {
    // What Beast throws for a header field over 64 KiB.
    if (++calls == 1) throw std::length_error("field value too large");
    ProbeOutcome out;
    out.result = ProbeResult::kSuccess;
    return out;
  };
  ProberManager manager(runtime, clock, opts);
  api::Container c;
  c.name = "main";
  c.readiness_probe = ExecProbeSpec(1);
  api::Pod pod = MakePod("u1", c);
  manager.AfterSync(pod, RunningStatus(pod, "c1", clock.Now()));
  manager.RunDueProbes();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(manager.Ready("containerd://c1"), false);
  // Not left in flight: the next period probes again.
  clock.Advance(absl::Seconds(10));
  manager.RunDueProbes();
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(manager.Ready("containerd://c1"), true);
}

TEST_F(ProberManagerTest, FailuresAndWarningsAreRecordedAsEvents) {
  api::Container c;
  c.name = "main";
  c.liveness_probe = ExecProbeSpec(/*failure_threshold=*/3);
  c.readiness_probe = ExecProbeSpec(1);
  api::Pod pod = MakePod("u1", c);
  manager_->AfterSync(pod, RunningStatus(pod, "c1", clock_.Now()));
  prober_.Set(ProbeType::kLiveness, ProbeResult::kFailure);
  prober_.Set(ProbeType::kReadiness, ProbeResult::kWarning);
  manager_->RunDueProbes();
  // Every failed probe is an event, before the threshold is reached too (as upstream).
  std::vector<std::string> got = recorder_.Strings();
  EXPECT_THAT(got, ::testing::Contains("Warning Unhealthy Liveness probe failed: scripted"));
  EXPECT_THAT(got, ::testing::Contains("Warning ProbeWarning Readiness probe warning: scripted"));
  for (const auto& e : recorder_.Events()) {
    EXPECT_EQ(e.object.field_path, "spec.containers{main}");
    EXPECT_EQ(e.object.uid, pod.metadata.uid);
  }
  // A probe that succeeds records nothing.
  const size_t before = recorder_.Events().size();
  prober_.Set(ProbeType::kLiveness, ProbeResult::kSuccess);
  prober_.Set(ProbeType::kReadiness, ProbeResult::kSuccess);
  Tick();
  EXPECT_EQ(recorder_.Events().size(), before);
}

TEST_F(ProberManagerTest, ReadinessFalseUntilFirstSuccess) {
  api::Container c;
  c.name = "main";
  c.readiness_probe = ExecProbeSpec(1);
  api::Pod pod = MakePod("u1", c);
  EXPECT_EQ(manager_->Ready("containerd://c1"), std::nullopt);
  manager_->AfterSync(pod, RunningStatus(pod, "c1", clock_.Now()));
  EXPECT_EQ(manager_->Ready("containerd://c1"), false);
  EXPECT_EQ(manager_->Started("containerd://c1"), std::nullopt);  // no startup probe
  manager_->RunDueProbes();
  EXPECT_EQ(manager_->Ready("containerd://c1"), true);
  EXPECT_EQ(Changes(), 1u);
  prober_.Set(ProbeType::kReadiness, ProbeResult::kFailure);
  Tick();
  EXPECT_EQ(manager_->Ready("containerd://c1"), false);
  EXPECT_EQ(Changes(), 2u);
  Tick();  // readiness is never put on hold
  EXPECT_EQ(prober_.Calls(ProbeType::kReadiness), 3);
}

TEST_F(ProberManagerTest, StartupProbeGatesLivenessAndReadiness) {
  api::Container c;
  c.name = "main";
  c.startup_probe = ExecProbeSpec(/*failure_threshold=*/3);
  c.liveness_probe = ExecProbeSpec(1);
  c.readiness_probe = ExecProbeSpec(1);
  api::Pod pod = MakePod("u1", c);
  manager_->AfterSync(pod, RunningStatus(pod, "c1", clock_.Now()));
  EXPECT_EQ(manager_->NumWorkers(), 3u);
  EXPECT_TRUE(manager_->StartupPending(CID("c1")));
  EXPECT_EQ(manager_->Started("containerd://c1"), false);

  prober_.Set(ProbeType::kStartup, ProbeResult::kFailure);
  manager_->RunDueProbes();
  Tick();
  EXPECT_EQ(prober_.Calls(ProbeType::kStartup), 2);
  EXPECT_EQ(prober_.Calls(ProbeType::kLiveness), 0);
  EXPECT_EQ(prober_.Calls(ProbeType::kReadiness), 0);
  EXPECT_FALSE(manager_->StartupFailed(CID("c1")));

  prober_.Set(ProbeType::kStartup, ProbeResult::kSuccess);
  Tick();
  EXPECT_FALSE(manager_->StartupPending(CID("c1")));
  EXPECT_EQ(manager_->Started("containerd://c1"), true);
  EXPECT_EQ(Changes(), 1u);
  Tick();
  EXPECT_EQ(prober_.Calls(ProbeType::kStartup), 3);  // done once started
  EXPECT_EQ(prober_.Calls(ProbeType::kLiveness), 1);
  EXPECT_EQ(prober_.Calls(ProbeType::kReadiness), 1);
  EXPECT_EQ(manager_->Ready("containerd://c1"), true);
}

TEST_F(ProberManagerTest, StartupFailureKillsViaStartupFailed) {
  api::Container c;
  c.name = "main";
  c.startup_probe = ExecProbeSpec(/*failure_threshold=*/2);
  c.liveness_probe = ExecProbeSpec(1);
  api::Pod pod = MakePod("u1", c);
  manager_->AfterSync(pod, RunningStatus(pod, "c1", clock_.Now()));
  prober_.Set(ProbeType::kStartup, ProbeResult::kFailure);
  prober_.Set(ProbeType::kLiveness, ProbeResult::kFailure);
  manager_->RunDueProbes();
  Tick();
  EXPECT_TRUE(manager_->StartupFailed(CID("c1")));
  EXPECT_FALSE(manager_->LivenessFailed(CID("c1")));
  EXPECT_EQ(prober_.Calls(ProbeType::kLiveness), 0);
  EXPECT_EQ(Changes(), 1u);
}

TEST_F(ProberManagerTest, InitialDelayHonoured) {
  api::Container c;
  c.name = "main";
  c.liveness_probe = ExecProbeSpec(1, /*period=*/1);
  c.liveness_probe->initial_delay_seconds = 5;
  api::Pod pod = MakePod("u1", c);
  manager_->AfterSync(pod, RunningStatus(pod, "c1", clock_.Now()));
  for (int i = 0; i < 4; ++i) Tick(absl::Seconds(1));
  EXPECT_EQ(prober_.Calls(ProbeType::kLiveness), 0);
  Tick(absl::Seconds(1));
  EXPECT_EQ(prober_.Calls(ProbeType::kLiveness), 1);
}

TEST_F(ProberManagerTest, TerminatingAndHousekeeping) {
  api::Container c;
  c.name = "main";
  c.liveness_probe = ExecProbeSpec();
  c.readiness_probe = ExecProbeSpec();
  api::Pod pod = MakePod("u1", c);
  api::Pod other = MakePod("u2", c);
  manager_->AfterSync(pod, RunningStatus(pod, "c1", clock_.Now()));
  manager_->AfterSync(other, RunningStatus(other, "c2", clock_.Now()));
  EXPECT_EQ(manager_->NumWorkers(), 4u);
  manager_->PodTerminating(pod);
  EXPECT_EQ(manager_->NumWorkers(), 3u);  // readiness keeps running
  manager_->AfterSync(pod, RunningStatus(pod, "c1", clock_.Now()));
  EXPECT_EQ(manager_->NumWorkers(), 3u);  // no liveness for a terminating pod
  EXPECT_TRUE(manager_->CleanupTerminatedPod(pod).ok());
  EXPECT_EQ(manager_->NumWorkers(), 2u);
  EXPECT_EQ(manager_->Ready("containerd://c1"), std::nullopt);
  manager_->Housekeeping({});
  EXPECT_EQ(manager_->NumWorkers(), 0u);
  EXPECT_EQ(manager_->Ready("containerd://c2"), std::nullopt);
}

TEST_F(ProberManagerTest, ExitedContainerWithRestartNeverStops) {
  api::Container c;
  c.name = "main";
  c.readiness_probe = ExecProbeSpec();
  api::Pod pod = MakePod("u1", c);
  pod.spec.restart_policy = "Never";
  container::PodStatus st = RunningStatus(pod, "c1", clock_.Now());
  manager_->AfterSync(pod, st);
  manager_->RunDueProbes();
  EXPECT_EQ(prober_.Calls(ProbeType::kReadiness), 1);
  st.container_statuses[0].state = container::State::kExited;
  manager_->AfterSync(pod, st);
  Tick();
  Tick();
  EXPECT_EQ(prober_.Calls(ProbeType::kReadiness), 1);
  EXPECT_EQ(manager_->Ready("containerd://c1"), std::nullopt);
}

TEST_F(ProberManagerTest, SidecarStartupProbe) {
  api::Container sidecar;
  sidecar.name = "proxy";
  sidecar.restart_policy = "Always";
  sidecar.startup_probe = ExecProbeSpec(3);
  api::Container init;
  init.name = "setup";  // a regular init container has no probes
  api::Container main;
  main.name = "main";
  api::Pod pod = MakePod("u1", main);
  pod.spec.init_containers = {init, sidecar};
  container::PodStatus st = RunningStatus(pod, "m1", clock_.Now());
  container::ContainerStatus cs = st.container_statuses[0];
  cs.name = "proxy";
  cs.id = CID("s1");
  st.container_statuses.push_back(cs);
  // Unknown IDs count as pending (the runtime manager only asks for startup-probed ones).
  EXPECT_TRUE(manager_->StartupPending(CID("s1")));
  manager_->AfterSync(pod, st);
  EXPECT_EQ(manager_->NumWorkers(), 1u);
  EXPECT_TRUE(manager_->StartupPending(CID("s1")));
  manager_->RunDueProbes();
  EXPECT_FALSE(manager_->StartupPending(CID("s1")));
  EXPECT_EQ(manager_->Started("containerd://s1"), true);
}

// --- The real probes and the scheduler thread ---------------------------------------------------

TEST(ProberManagerRealTest, ExecLivenessThroughCriWithScheduler) {
  cri::FakeRuntime rt;
  runtime::v1::PodSandboxConfig sc;
  sc.mutable_metadata()->set_name("p");
  sc.mutable_metadata()->set_uid("u1");
  sc.mutable_metadata()->set_namespace_("default");
  auto sb = rt.RunPodSandbox(sc, "");
  ASSERT_TRUE(sb.ok());
  runtime::v1::ContainerConfig cc;
  cc.mutable_metadata()->set_name("main");
  cc.mutable_image()->set_image("busybox");
  auto id = rt.CreateContainer(*sb, cc, sc);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(rt.StartContainer(*id).ok());
  rt.SetExecSyncHandler([](const std::string&, const std::vector<std::string>&,
                           absl::Duration) -> absl::StatusOr<runtime::v1::ExecSyncResponse> {
    runtime::v1::ExecSyncResponse r;
    r.set_exit_code(1);
    r.set_stdout("unhealthy");
    return r;
  });
  RealClock clock;
  ProberManager manager(rt, clock, {});
  absl::Mutex mu;
  std::vector<std::string> changed;
  manager.SetOnChange([&](const std::string& uid) {
    absl::MutexLock lock(&mu);
    changed.push_back(uid);
  });
  api::Container c;
  c.name = "main";
  c.liveness_probe = ExecProbeSpec(/*failure_threshold=*/1, /*period=*/1);
  api::Pod pod = MakePod("u1", c);
  container::PodStatus st = RunningStatus(pod, *id, clock.Now());
  manager.AfterSync(pod, st);
  const container::ContainerID cid{"containerd", *id};
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!manager.LivenessFailed(cid) && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_TRUE(manager.LivenessFailed(cid));
  manager.Stop();
  absl::MutexLock lock(&mu);
  EXPECT_EQ(changed, std::vector<std::string>{"u1"});
}

TEST(ProberManagerRealTest, HttpAndTcpReadinessAgainstLocalListener) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 8), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);
  std::thread server([fd] {
    for (;;) {
      int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      char buf[2048];
      (void)!::read(c, buf, sizeof(buf));
      const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
      (void)!::write(c, resp, sizeof(resp) - 1);
      ::close(c);
    }
  });
  cri::FakeRuntime rt;
  FakeClock clock;
  ProberManager::Options opts;
  opts.start_scheduler = false;
  ProberManager manager(rt, clock, opts);
  api::Container c;
  c.name = "main";
  c.ports.push_back({"http", 0, port, "TCP", ""});
  api::Probe http;
  http.http_get = api::HTTPGetAction{"/ready", api::IntOrString::FromString("http"), "", "", {}};
  c.readiness_probe = http;
  api::Probe tcp;
  tcp.tcp_socket = api::TCPSocketAction{api::IntOrString::FromInt(port), ""};
  c.liveness_probe = tcp;
  api::Pod pod = MakePod("u1", c);
  manager.AfterSync(pod, RunningStatus(pod, "c1", clock.Now()));
  manager.RunDueProbes();
  EXPECT_EQ(manager.Ready("containerd://c1"), true);
  EXPECT_FALSE(manager.LivenessFailed(CID("c1")));
  manager.Stop();
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
  server.join();
}

TEST(ProberManagerSchedulerTest, TheSchedulerThreadStartsWithTheFirstWorker) {
  cri::FakeRuntime rt;
  FakeClock clock;
  ProberManager manager(rt, clock, ProberManager::Options{});
  api::Container plain;
  plain.name = "plain";
  api::Pod unprobed = MakePod("u0", plain);
  manager.AfterSync(unprobed, RunningStatus(unprobed, "c0", clock.Now()));
  EXPECT_FALSE(manager.SchedulerStarted());  // nothing to probe: no thread
  api::Container c;
  c.name = "main";
  api::Probe tcp;
  tcp.tcp_socket = api::TCPSocketAction{api::IntOrString::FromInt(1), ""};
  tcp.initial_delay_seconds = 3600;
  c.readiness_probe = tcp;
  api::Pod pod = MakePod("u1", c);
  manager.AfterSync(pod, RunningStatus(pod, "c1", clock.Now()));
  EXPECT_EQ(manager.NumWorkers(), 1u);
  EXPECT_TRUE(manager.SchedulerStarted());
  manager.Stop();
  manager.AfterSync(pod, RunningStatus(pod, "c1", clock.Now()));  // after Stop: nothing starts
}

}  // namespace
}  // namespace kubelet::prober
