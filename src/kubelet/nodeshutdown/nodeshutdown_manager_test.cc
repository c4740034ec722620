// The node shutdown manager's logic on a fake logind and a fake clock: the groups from the
// configuration and gates, grouping by priority, grace periods, the pods' final status, start
// (inhibit delay override, lock, subscription) and its failures, a shutdown (node not ready,
// admission refused, groups killed in order, each waited for up to its period, the lock
// released, the state file and metrics), a cancelled shutdown, reconnecting after the bus went
// away, and Stop in the middle of a shutdown.
#include "kubelet/nodeshutdown/nodeshutdown_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "api/testing/pod_builder.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/testing/eventually.h"
#include "kubelet/events/testing/fake_recorder.h"
#include "kubelet/nodeshutdown/state.h"
#include "kubelet/nodeshutdown/testing/fake_logind.h"
#include "metrics/metrics.h"

namespace kubelet::nodeshutdown {
namespace {

using ::kubelet::testing::Eventually;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

GracePeriodByPriority Period(int32_t priority, int64_t seconds) {
  GracePeriodByPriority p;
  p.priority = priority;
  p.shutdown_grace_period_seconds = seconds;
  return p;
}

api::Pod MakePod(const std::string& name, std::optional<int32_t> priority,
                 std::optional<int64_t> grace = std::nullopt) {
  api::Pod pod = api::testing::PodBuilder(name).Container("main");
  pod.spec.priority = priority;
  pod.spec.termination_grace_period_seconds = grace;
  return pod;
}

std::vector<std::string> Names(const std::vector<api::Pod>& pods) {
  std::vector<std::string> out;
  for (const api::Pod& p : pods) out.push_back(p.metadata.name);
  return out;
}

double Gauge(prometheus::Family<prometheus::Gauge>& family) { return family.Add({}).Value(); }

TEST(MigrateConfigTest, TwoGroupsFromTheGracePeriods) {
  std::vector<GracePeriodByPriority> p = MigrateConfig(absl::Seconds(30), absl::Seconds(10));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0], Period(0, 20));
  EXPECT_EQ(p[1], Period(2000000000, 10));
  EXPECT_THAT(MigrateConfig(absl::ZeroDuration(), absl::ZeroDuration()), IsEmpty());
  EXPECT_THAT(MigrateConfig(absl::Seconds(10), absl::ZeroDuration()),
              ElementsAre(Period(0, 10), Period(2000000000, 0)));
  // Whole seconds, truncated, as Go's int64(d / time.Second).
  EXPECT_THAT(MigrateConfig(absl::Milliseconds(2500), absl::Milliseconds(1200)),
              ElementsAre(Period(0, 1), Period(2000000000, 1)));
  EXPECT_THAT(MigrateConfig(absl::Seconds(5), absl::Seconds(10)), IsEmpty());
}

TEST(ManagerOptionsFromConfigTest, GatesAndConfiguration) {
  config::KubeletConfiguration c;
  config::FeatureGate gates;
  ManagerOptions o = ManagerOptionsFromConfig(c, gates);
  EXPECT_THAT(o.shutdown_grace_period_by_pod_priority, IsEmpty());  // nothing configured
  EXPECT_TRUE(o.pod_disruption_conditions);
  EXPECT_TRUE(o.enable_metrics);

  c.shutdown_grace_period = absl::Seconds(30);
  c.shutdown_grace_period_critical_pods = absl::Seconds(10);
  o = ManagerOptionsFromConfig(c, gates);
  EXPECT_THAT(o.shutdown_grace_period_by_pod_priority,
              ElementsAre(Period(0, 20), Period(2000000000, 10)));
  EXPECT_EQ(o.shutdown_grace_period_requested, absl::Seconds(30));
  EXPECT_EQ(o.shutdown_grace_period_critical_pods, absl::Seconds(10));

  // By priority: sorted, lowest first.
  c.shutdown_grace_period = absl::ZeroDuration();
  c.shutdown_grace_period_critical_pods = absl::ZeroDuration();
  c.shutdown_grace_period_by_pod_priority = {Period(100000, 120), Period(0, 30),
                                             Period(2000000000, 10)};
  o = ManagerOptionsFromConfig(c, gates);
  EXPECT_THAT(o.shutdown_grace_period_by_pod_priority,
              ElementsAre(Period(0, 30), Period(100000, 120), Period(2000000000, 10)));

  // Without GracefulNodeShutdownBasedOnPodPriority the list is ignored (and no metrics).
  c.shutdown_grace_period = absl::Seconds(20);
  ASSERT_TRUE(gates.SetFromMap({{"GracefulNodeShutdownBasedOnPodPriority", false}}).ok());
  o = ManagerOptionsFromConfig(c, gates);
  EXPECT_THAT(o.shutdown_grace_period_by_pod_priority,
              ElementsAre(Period(0, 20), Period(2000000000, 0)));
  EXPECT_FALSE(o.enable_metrics);

  ASSERT_TRUE(gates.SetFromMap({{"GracefulNodeShutdown", false}}).ok());
  EXPECT_THAT(ManagerOptionsFromConfig(c, gates).shutdown_grace_period_by_pod_priority, IsEmpty());

  ASSERT_TRUE(gates.SetFromMap({{"PodDisruptionConditions", false}}).ok());
  EXPECT_FALSE(ManagerOptionsFromConfig(c, gates).pod_disruption_conditions);
}

TEST(GroupByPriorityTest, EachPodToTheHighestGroupNotAboveIt) {
  std::vector<GracePeriodByPriority> periods = {Period(0, 10), Period(100, 20), Period(1000, 30)};
  std::vector<api::Pod> pods = {
      MakePod("unset", std::nullopt), MakePod("negative", -5), MakePod("p50", 50),
      MakePod("p100", 100),           MakePod("p500", 500),    MakePod("p1000", 1000),
      MakePod("p5000", 5000)};
  std::vector<PodShutdownGroup> groups = GroupByPriority(periods, pods);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].period, Period(0, 10));
  EXPECT_THAT(Names(groups[0].pods), ElementsAre("unset", "negative", "p50"));
  EXPECT_THAT(Names(groups[1].pods), ElementsAre("p100", "p500"));
  EXPECT_THAT(Names(groups[2].pods), ElementsAre("p1000", "p5000"));

  // Pods below the lowest group go to it.
  groups = GroupByPriority({Period(10, 5), Period(20, 5)}, {MakePod("low", 1)});
  EXPECT_THAT(Names(groups[0].pods), ElementsAre("low"));
  EXPECT_THAT(GroupByPriority({}, {MakePod("x", 1)}), IsEmpty());
}

TEST(GracePeriodOverrideTest, TheShorterOfThePodsAndTheGroups) {
  EXPECT_EQ(GracePeriodOverride(MakePod("a", 0, 5), 30), 5);
  EXPECT_EQ(GracePeriodOverride(MakePod("a", 0, 30), 30), 30);
  EXPECT_EQ(GracePeriodOverride(MakePod("a", 0, 60), 30), 30);
  EXPECT_EQ(GracePeriodOverride(MakePod("a", 0, std::nullopt), 30), 30);
  EXPECT_EQ(GracePeriodOverride(MakePod("a", 0, 0), 30), 0);
}

TEST(PodTerminationTest, StatusAsUpstreamsStatusFunction) {
  const absl::Time now = absl::FromUnixSeconds(1700000100);
  PodTermination t;
  t.grace_period_seconds = 10;
  api::PodStatus s;
  s.phase = api::kPodRunning;
  api::PodCondition ready;
  ready.type = "Ready";
  ready.status = "True";
  s.conditions.push_back(ready);
  t.Apply(s, now);
  EXPECT_EQ(s.phase, api::kPodFailed);
  EXPECT_EQ(s.reason, "Terminated");
  EXPECT_EQ(s.message, "Pod was terminated in response to imminent node shutdown.");
  ASSERT_EQ(s.conditions.size(), 2u);
  const api::PodCondition& c = s.conditions[1];
  EXPECT_EQ(c.type, "DisruptionTarget");
  EXPECT_EQ(c.status, "True");
  EXPECT_EQ(c.reason, "TerminationByKubelet");
  EXPECT_EQ(c.message, "Pod was terminated in response to imminent node shutdown.");
  EXPECT_EQ(c.last_transition_time.seconds, 1700000100);

  // Applied again later: replaced, its transition time kept.
  t.Apply(s, now + absl::Seconds(50));
  ASSERT_EQ(s.conditions.size(), 2u);
  EXPECT_EQ(s.conditions[1].last_transition_time.seconds, 1700000100);

  // A pod that succeeded stays Succeeded; without the gate no condition.
  api::PodStatus done;
  done.phase = api::kPodSucceeded;
  t.disruption_target = false;
  t.Apply(done, now);
  EXPECT_EQ(done.phase, api::kPodSucceeded);
  EXPECT_EQ(done.reason, "Terminated");
  EXPECT_THAT(done.conditions, IsEmpty());
}

struct Kill {
  std::string pod;
  PodTermination termination;
};

class ManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nodeshutdown_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    ReleaseAll();
    manager_.reset();
    std::filesystem::remove_all(dir_);
  }

  ManagerOptions Options(std::vector<GracePeriodByPriority> periods) {
    ManagerOptions o;
    o.shutdown_grace_period_by_pod_priority = std::move(periods);
    o.state_directory = dir_;
    o.recorder = &recorder_;
    o.node_name = "node-1";
    o.logind = logind_.Factory();
    o.active_pods = [this] {
      absl::MutexLock l(&mu_);
      return pods_;
    };
    o.kill_pod = [this](const api::Pod& pod, const PodTermination& t) -> absl::Status {
      absl::Notification* gate = nullptr;
      {
        absl::MutexLock l(&mu_);
        kills_.push_back(Kill{pod.metadata.name, t});
        auto it = gates_.find(pod.metadata.name);
        if (it != gates_.end()) gate = it->second.get();
      }
      if (gate != nullptr) gate->WaitForNotification();
      if (pod.metadata.name == "fails") return absl::DeadlineExceededError("timeout");
      return absl::OkStatus();
    };
    o.sync_node_status = [this] { ++status_syncs_; };
    return o;
  }

  void StartManager(ManagerOptions o) {
    manager_ = std::make_unique<Manager>(std::move(o), clock_);
    ASSERT_TRUE(manager_->Start().ok());
  }

  void Block(const std::string& pod) {
    absl::MutexLock l(&mu_);
    gates_[pod] = std::make_unique<absl::Notification>();
  }
  void Release(const std::string& pod) {
    absl::MutexLock l(&mu_);
    if (!gates_[pod]->HasBeenNotified()) gates_[pod]->Notify();
  }
  void ReleaseAll() {
    absl::MutexLock l(&mu_);
    for (auto& [name, gate] : gates_) {
      if (!gate->HasBeenNotified()) gate->Notify();
    }
  }
  std::vector<std::string> Killed() {
    absl::MutexLock l(&mu_);
    std::vector<std::string> out;
    for (const Kill& k : kills_) out.push_back(k.pod);
    return out;
  }
  std::map<std::string, PodTermination> KillsByPod() {
    absl::MutexLock l(&mu_);
    std::map<std::string, PodTermination> out;
    for (const Kill& k : kills_) out[k.pod] = k.termination;
    return out;
  }
  void SetPods(std::vector<api::Pod> pods) {
    absl::MutexLock l(&mu_);
    pods_ = std::move(pods);
  }
  bool Admitted() { return manager_->Admit(MakePod("new", 0), {}).admit; }
  std::string StatePath() const { return dir_ + "/graceful_node_shutdown_state"; }

  FakeClock clock_;
  testing::FakeLogind logind_{absl::Seconds(5)};
  events::FakeRecorder recorder_;
  std::string dir_;
  std::atomic<int> status_syncs_{0};
  absl::Mutex mu_;
  std::vector<api::Pod> pods_ ABSL_GUARDED_BY(mu_);
  std::vector<Kill> kills_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::unique_ptr<absl::Notification>> gates_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Manager> manager_;
};

TEST_F(ManagerTest, StartRaisesTheInhibitDelayTakesTheLockAndSubscribes) {
  StartManager(Options({Period(0, 20), Period(2000000000, 10)}));
  EXPECT_THAT(
      logind_.Calls(),
      ElementsAre("Connect", "CurrentInhibitDelay", "OverrideInhibitDelay 30s", "ReloadLogindConf",
                  "CurrentInhibitDelay", "InhibitShutdown", "MonitorShutdown"));
  EXPECT_EQ(logind_.HeldLocks(), 1);
  EXPECT_TRUE(logind_.Monitoring());
  EXPECT_TRUE(manager_->ShutdownStatus().ok());
  EXPECT_TRUE(Admitted());
  EXPECT_EQ(manager_->PeriodRequested(), absl::Seconds(30));
}

TEST_F(ManagerTest, StartKeepsALongEnoughDelay) {
  logind_.set_inhibit_delay_max(absl::Seconds(30));
  StartManager(Options({Period(0, 20), Period(2000000000, 10)}));
  EXPECT_THAT(logind_.Calls(),
              ElementsAre("Connect", "CurrentInhibitDelay", "InhibitShutdown", "MonitorShutdown"));
}

TEST_F(ManagerTest, StartFailsWhenLogindKeepsAShorterDelay) {
  logind_.set_ignore_override(true);
  Manager m(Options({Period(0, 20), Period(2000000000, 10)}), clock_);
  absl::Status st = m.Start();
  EXPECT_EQ(st.message(),
            "node shutdown manager was unable to update logind InhibitDelayMaxSec to 30s "
            "(ShutdownGracePeriod), current value of InhibitDelayMaxSec (5s) is less than "
            "requested ShutdownGracePeriod");
  EXPECT_EQ(logind_.HeldLocks(), 0);
  // Nothing is retried after a failed start.
  clock_.Advance(absl::Seconds(5));
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(logind_.Connections(), 1);
}

TEST_F(ManagerTest, StartErrorsAsUpstream) {
  logind_.FailConnect(
      1, absl::UnavailableError("dial unix /var/run/dbus/system_bus_socket: connect: no such file "
                                "or directory"));
  {
    Manager m(Options({Period(0, 20)}), clock_);
    EXPECT_EQ(m.Start().message(),
              "dial unix /var/run/dbus/system_bus_socket: connect: no such file or directory");
  }
  logind_.FailNext("OverrideInhibitDelay", absl::InternalError("failed creating x directory"));
  {
    Manager m(Options({Period(0, 20)}), clock_);
    EXPECT_EQ(m.Start().message(),
              "unable to override inhibit delay by shutdown manager: failed creating x directory");
  }
  logind_.FailNext("MonitorShutdown", absl::UnavailableError("no match"));
  {
    Manager m(Options({Period(0, 2)}), clock_);
    EXPECT_EQ(m.Start().message(), "failed to monitor shutdown: no match");
    EXPECT_EQ(logind_.HeldLocks(), 0);
  }
  logind_.FailNext("InhibitShutdown",
                   absl::UnavailableError("failed creating systemd inhibitor: denied"));
  {
    Manager m(Options({Period(0, 2)}), clock_);
    EXPECT_EQ(m.Start().message(), "failed creating systemd inhibitor: denied");
  }
}

TEST_F(ManagerTest, DisabledManagerIsAStub) {
  manager_ = std::make_unique<Manager>(Options({}), clock_);
  EXPECT_FALSE(manager_->Enabled());
  EXPECT_TRUE(manager_->Start().ok());
  EXPECT_THAT(logind_.Calls(), IsEmpty());
  EXPECT_TRUE(Admitted());
  EXPECT_TRUE(manager_->ShutdownStatus().ok());
}

TEST_F(ManagerTest, ShutdownKillsGroupsInOrderThenReleasesTheLock) {
  SetPods({MakePod("low-quick", 0, 5), MakePod("low-slow", std::nullopt, 60),
           MakePod("critical", 2000000000), MakePod("fails", 10)});
  Block("low-slow");
  StartManager(Options({Period(0, 20), Period(2000000000, 10)}));
  ASSERT_EQ(logind_.HeldLocks(), 1);

  logind_.Emit(true);
  ASSERT_TRUE(Eventually([&] { return Killed().size() == 3; }));
  EXPECT_THAT(Killed(), UnorderedElementsAre("low-quick", "low-slow", "fails"));
  EXPECT_EQ(manager_->ShutdownStatus().message(), "node is shutting down");
  container::AdmitDecision d = manager_->Admit(MakePod("new", 0), {});
  EXPECT_FALSE(d.admit);
  EXPECT_EQ(d.reason, "NodeShutdown");
  EXPECT_EQ(d.message, "Pod was rejected as the node is shutting down.");
  EXPECT_TRUE(Eventually([&] { return status_syncs_.load() == 1; }));
  EXPECT_THAT(recorder_.Strings(), ElementsAre("Normal Shutdown Shutdown manager detected "
                                               "shutdown event"));
  EXPECT_EQ(recorder_.Events()[0].object.kind, "Node");
  EXPECT_EQ(recorder_.Events()[0].object.name, "node-1");

  // The first group waits up to its 20 s for low-slow; the critical pod is not touched yet.
  ASSERT_TRUE(Eventually([&] { return clock_.Waiters() > 0; }));
  clock_.Advance(absl::Seconds(19));
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(Killed().size(), 3u);
  EXPECT_EQ(logind_.HeldLocks(), 1);
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(Eventually([&] { return Killed().size() == 4; }));
  EXPECT_EQ(Killed()[3], "critical");
  // The critical pod is done at once: the lock goes.
  ASSERT_TRUE(Eventually([&] { return logind_.HeldLocks() == 0; }));

  std::map<std::string, PodTermination> kills = KillsByPod();
  EXPECT_EQ(kills["low-quick"].grace_period_seconds, 5);
  EXPECT_EQ(kills["low-slow"].grace_period_seconds, 20);
  EXPECT_EQ(kills["fails"].grace_period_seconds, 20);
  EXPECT_EQ(kills["critical"].grace_period_seconds, 10);
  EXPECT_EQ(kills["critical"].reason, "Terminated");
  EXPECT_EQ(kills["critical"].message, "Pod was terminated in response to imminent node shutdown.");
  EXPECT_TRUE(kills["critical"].disruption_target);

  // Still shutting down until cancelled.
  EXPECT_FALSE(Admitted());
  Release("low-slow");
}

TEST_F(ManagerTest, GroupsWithoutPodsAreNotWaitedFor) {
  SetPods({MakePod("critical", 2000000000)});
  Block("critical");
  StartManager(Options({Period(0, 20), Period(2000000000, 10)}));
  logind_.Emit(true);
  // No time passes: the empty low-priority group is skipped.
  ASSERT_TRUE(Eventually([&] { return Killed().size() == 1; }));
  EXPECT_EQ(logind_.HeldLocks(), 1);
  Release("critical");
  ASSERT_TRUE(Eventually([&] { return logind_.HeldLocks() == 0; }));
}

TEST_F(ManagerTest, TheLastGroupIsWaitedForUpToItsPeriod) {
  SetPods({MakePod("stuck", 0)});
  Block("stuck");
  StartManager(Options({Period(0, 15)}));
  logind_.Emit(true);
  ASSERT_TRUE(Eventually([&] { return Killed().size() == 1; }));
  ASSERT_TRUE(Eventually([&] { return clock_.Waiters() > 0; }));
  clock_.Advance(absl::Seconds(14));
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(logind_.HeldLocks(), 1);
  clock_.Advance(absl::Seconds(1));
  // Released although the pod's kill has not returned.
  ASSERT_TRUE(Eventually([&] { return logind_.HeldLocks() == 0; }));
  Release("stuck");
}

TEST_F(ManagerTest, WithoutPodDisruptionConditionsNoCondition) {
  SetPods({MakePod("a", 0)});
  ManagerOptions o = Options({Period(0, 5)});
  o.pod_disruption_conditions = false;
  StartManager(std::move(o));
  logind_.Emit(true);
  ASSERT_TRUE(Eventually([&] { return Killed().size() == 1; }));
  EXPECT_FALSE(KillsByPod()["a"].disruption_target);
}

TEST_F(ManagerTest, CancelledShutdownTakesTheLockAgainAndAdmits) {
  SetPods({MakePod("a", 0)});
  StartManager(Options({Period(0, 5)}));
  logind_.Emit(true);
  ASSERT_TRUE(Eventually([&] { return logind_.HeldLocks() == 0; }));
  EXPECT_FALSE(Admitted());

  logind_.Emit(false);
  ASSERT_TRUE(Eventually([&] { return logind_.HeldLocks() == 1; }));
  EXPECT_TRUE(Admitted());
  EXPECT_TRUE(manager_->ShutdownStatus().ok());
  EXPECT_THAT(recorder_.Strings(),
              ElementsAre("Normal Shutdown Shutdown manager detected shutdown event",
                          "Normal Shutdown Shutdown manager detected shutdown cancellation"));
}

TEST_F(ManagerTest, StateFileAndMetrics) {
  SetPods({MakePod("a", 0)});
  StartManager(Options({Period(0, 5)}));
  const absl::Time start = clock_.Now();
  logind_.Emit(true);
  ASSERT_TRUE(Eventually([&] { return logind_.HeldLocks() == 0; }));
  absl::StatusOr<ShutdownState> state = LoadShutdownState(StatePath());
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->start_time, start);
  EXPECT_EQ(state->end_time, start);
  // v1.28: the start gauge ends up holding the end time, the end gauge 0 until the next start.
  EXPECT_EQ(Gauge(metrics::Kubelet().graceful_shutdown_start_time),
            static_cast<double>(absl::ToUnixSeconds(start)));
  EXPECT_EQ(Gauge(metrics::Kubelet().graceful_shutdown_end_time), 0);

  // A restarted kubelet shows both from the state file.
  manager_.reset();
  ASSERT_TRUE(StoreShutdownState(StatePath(), ShutdownState{absl::FromUnixSeconds(1000),
                                                            absl::FromUnixSeconds(1030)})
                  .ok());
  StartManager(Options({Period(0, 5)}));
  EXPECT_EQ(Gauge(metrics::Kubelet().graceful_shutdown_start_time), 1000);
  EXPECT_EQ(Gauge(metrics::Kubelet().graceful_shutdown_end_time), 1030);
}

TEST_F(ManagerTest, WithoutTheMetricsGateNoStateFile) {
  SetPods({MakePod("a", 0)});
  ManagerOptions o = Options({Period(0, 5)});
  o.enable_metrics = false;
  StartManager(std::move(o));
  logind_.Emit(true);
  ASSERT_TRUE(Eventually([&] { return logind_.HeldLocks() == 0; }));
  EXPECT_FALSE(std::filesystem::exists(StatePath()));
}

TEST_F(ManagerTest, ABadStateFileIsLoggedNotFatal) {
  {
    std::FILE* f = std::fopen(StatePath().c_str(), "w");
    std::fputs("{not json", f);
    std::fclose(f);
  }
  StartManager(Options({Period(0, 5)}));
  EXPECT_EQ(logind_.HeldLocks(), 1);
}

TEST_F(ManagerTest, ReconnectsAfterTheBusWentAway) {
  StartManager(Options({Period(0, 5)}));
  ASSERT_EQ(logind_.Connections(), 1);
  logind_.FailConnect(1, absl::UnavailableError("no bus"));
  logind_.Disconnect();
  // One second later: a failed attempt; another second: connected again.
  ASSERT_TRUE(Eventually([&] { return clock_.Waiters() > 0; }));
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(Eventually([&] {
    std::vector<std::string> calls = logind_.Calls();
    return std::count(calls.begin(), calls.end(), "Connect") == 2;
  }));
  ASSERT_TRUE(Eventually([&] { return clock_.Waiters() > 0; }));
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(Eventually([&] { return logind_.Monitoring(); }));
  EXPECT_EQ(logind_.Connections(), 2);
  // The old lock was released for the new one.
  EXPECT_EQ(logind_.HeldLocks(), 1);

  SetPods({MakePod("a", 0)});
  logind_.Emit(true);
  ASSERT_TRUE(Eventually([&] { return Killed().size() == 1; }));
  ASSERT_TRUE(Eventually([&] { return logind_.HeldLocks() == 0; }));
}

TEST_F(ManagerTest, StopInTheMiddleOfAShutdown) {
  SetPods({MakePod("slow", 0), MakePod("critical", 2000000000)});
  Block("slow");
  StartManager(Options({Period(0, 20), Period(2000000000, 10)}));
  logind_.Emit(true);
  ASSERT_TRUE(Eventually([&] { return Killed().size() == 1; }));
  std::thread stopper([&] { manager_->Stop(); });
  // Stop has begun (it interrupts the bus wait once it marked the manager stopping); then the
  // slow pod's kill returns.
  ASSERT_TRUE(Eventually([&] { return logind_.Interrupts() > 0; }));
  Release("slow");
  stopper.join();
  // The remaining group is not killed; the lock is released.
  EXPECT_THAT(Killed(), ElementsAre("slow"));
  EXPECT_EQ(logind_.HeldLocks(), 0);
}

TEST_F(ManagerTest, StopReleasesTheLock) {
  StartManager(Options({Period(0, 5)}));
  EXPECT_EQ(logind_.HeldLocks(), 1);
  manager_->Stop();
  EXPECT_EQ(logind_.HeldLocks(), 0);
  manager_->Stop();  // idempotent
}

TEST_F(ManagerTest, CreationLogLine) {
  std::vector<std::string> lines;
  absl::Mutex lines_mu;
  log::Options lo;
  lo.sink = [&](std::string_view line) {
    absl::MutexLock l(&lines_mu);
    lines.emplace_back(line);
  };
  log::Configure(lo);
  ManagerOptions o = Options({Period(0, 20), Period(2000000000, 10)});
  o.shutdown_grace_period_requested = absl::Seconds(30);
  o.shutdown_grace_period_critical_pods = absl::Seconds(10);
  { Manager m(std::move(o), clock_); }
  log::Configure(log::Options{});
  absl::MutexLock l(&lines_mu);
  ASSERT_FALSE(lines.empty());
  EXPECT_THAT(lines[0],
              HasSubstr("\"Creating node shutdown manager\" shutdownGracePeriodRequested=\"30s\" "
                        "shutdownGracePeriodCriticalPods=\"10s\" "
                        "shutdownGracePeriodByPodPriority=[{Priority:0 "
                        "ShutdownGracePeriodSeconds:20} {Priority:2000000000 "
                        "ShutdownGracePeriodSeconds:10}]"));
}

}  // namespace
}  // namespace kubelet::nodeshutdown
