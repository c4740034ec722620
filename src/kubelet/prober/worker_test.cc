#include "kubelet/prober/worker.h"

#include <map>
#include <utility>

#include "gtest/gtest.h"

namespace kubelet::prober {
namespace {

class MapSink : public ResultsSink {
 public:
  void Set(const std::string& id, ProbeType, Result r) override { results[id] = r; }
  void Remove(const std::string& id, ProbeType) override { results.erase(id); }
  std::map<std::string, Result> results;
};

const absl::Time kT0 = absl::FromUnixSeconds(1700000000);

ContainerObservation Running(const std::string& id, absl::Time started = kT0) {
  ContainerObservation o;
  o.id = container::ContainerID{"containerd", id};
  o.state = container::State::kRunning;
  o.started_at = started;
  return o;
}

api::Probe MakeProbe(int success = 1, int failure = 3, int delay = 0) {
  api::Probe p;
  p.exec = api::ExecAction{{"true"}};
  p.success_threshold = success;
  p.failure_threshold = failure;
  p.initial_delay_seconds = delay;
  return p;
}

using Action = WorkerLogic::Action;

TEST(WorkerLogicTest, DefaultsApplied) {
  ProbeSpec s = NormalizeProbe(api::Probe{});
  EXPECT_EQ(s.period, absl::Seconds(10));
  EXPECT_EQ(s.timeout, absl::Seconds(1));
  EXPECT_EQ(s.success_threshold, 1);
  EXPECT_EQ(s.failure_threshold, 3);
}

TEST(WorkerLogicTest, InitialValuesPerType) {
  MapSink sink;
  WorkerLogic l(ProbeType::kLiveness, MakeProbe(), "Always");
  WorkerLogic r(ProbeType::kReadiness, MakeProbe(), "Always");
  WorkerLogic s(ProbeType::kStartup, MakeProbe(), "Always");
  MapSink ls, rs, ss;
  l.Observe(Running("a"), ls);
  r.Observe(Running("a"), rs);
  s.Observe(Running("a"), ss);
  EXPECT_EQ(ls.results["containerd://a"], Result::kSuccess);
  EXPECT_EQ(rs.results["containerd://a"], Result::kFailure);
  EXPECT_EQ(ss.results["containerd://a"], Result::kUnknown);
}

TEST(WorkerLogicTest, LivenessFailureThresholdThenHold) {
  MapSink sink;
  WorkerLogic w(ProbeType::kLiveness, MakeProbe(1, 3), "Always");
  ContainerObservation obs = Running("a");
  const std::string id = "containerd://a";
  ASSERT_EQ(w.Prepare(obs, kT0, true, sink), Action::kProbe);
  w.Apply(id, Result::kFailure, sink);
  w.Apply(id, Result::kFailure, sink);
  EXPECT_EQ(sink.results[id], Result::kSuccess);  // below the threshold
  w.Apply(id, Result::kFailure, sink);
  EXPECT_EQ(sink.results[id], Result::kFailure);
  EXPECT_TRUE(w.on_hold());
  EXPECT_EQ(w.Prepare(obs, kT0, true, sink), Action::kWait);
  // A new container resumes probing with a fresh result.
  ContainerObservation next = Running("b");
  EXPECT_EQ(w.Prepare(next, kT0, true, sink), Action::kProbe);
  EXPECT_EQ(sink.results.count(id), 0u);
  EXPECT_EQ(sink.results["containerd://b"], Result::kSuccess);
  EXPECT_FALSE(w.on_hold());
}

TEST(WorkerLogicTest, SuccessInBetweenResetsFailureRun) {
  MapSink sink;
  WorkerLogic w(ProbeType::kLiveness, MakeProbe(1, 2), "Always");
  const std::string id = "containerd://a";
  w.Observe(Running("a"), sink);
  w.Apply(id, Result::kFailure, sink);
  w.Apply(id, Result::kSuccess, sink);
  w.Apply(id, Result::kFailure, sink);
  EXPECT_EQ(sink.results[id], Result::kSuccess);
  w.Apply(id, Result::kFailure, sink);
  EXPECT_EQ(sink.results[id], Result::kFailure);
}

TEST(WorkerLogicTest, ReadinessNeedsSuccessThreshold) {
  MapSink sink;
  WorkerLogic w(ProbeType::kReadiness, MakeProbe(2, 1), "Always");
  const std::string id = "containerd://a";
  w.Observe(Running("a"), sink);
  EXPECT_EQ(sink.results[id], Result::kFailure);
  w.Apply(id, Result::kSuccess, sink);
  EXPECT_EQ(sink.results[id], Result::kFailure);
  w.Apply(id, Result::kSuccess, sink);
  EXPECT_EQ(sink.results[id], Result::kSuccess);
  w.Apply(id, Result::kFailure, sink);  // failureThreshold 1
  EXPECT_EQ(sink.results[id], Result::kFailure);
  EXPECT_FALSE(w.on_hold());  // readiness keeps probing
}

TEST(WorkerLogicTest, StaleResultsAreIgnored) {
  MapSink sink;
  WorkerLogic w(ProbeType::kReadiness, MakeProbe(), "Always");
  w.Observe(Running("a"), sink);
  w.Observe(Running("b"), sink);
  w.Apply("containerd://a", Result::kSuccess, sink);
  EXPECT_EQ(sink.results.count("containerd://a"), 0u);
  EXPECT_EQ(sink.results["containerd://b"], Result::kFailure);
}

TEST(WorkerLogicTest, InitialDelay) {
  MapSink sink;
  WorkerLogic w(ProbeType::kLiveness, MakeProbe(1, 3, 5), "Always");
  ContainerObservation obs = Running("a", kT0);
  EXPECT_EQ(w.Prepare(obs, kT0 + absl::Seconds(4), true, sink), Action::kWait);
  EXPECT_EQ(w.Prepare(obs, kT0 + absl::Seconds(5), true, sink), Action::kProbe);
}

TEST(WorkerLogicTest, StartupGatesOtherProbes) {
  MapSink sink;
  WorkerLogic live(ProbeType::kLiveness, MakeProbe(), "Always");
  WorkerLogic startup(ProbeType::kStartup, MakeProbe(), "Always");
  ContainerObservation obs = Running("a");
  EXPECT_EQ(live.Prepare(obs, kT0, /*started=*/false, sink), Action::kWait);
  EXPECT_EQ(startup.Prepare(obs, kT0, false, sink), Action::kProbe);
  EXPECT_EQ(live.Prepare(obs, kT0, true, sink), Action::kProbe);
  EXPECT_EQ(startup.Prepare(obs, kT0, true, sink), Action::kWait);  // done once started
}

TEST(WorkerLogicTest, StartupFailureHolds) {
  MapSink sink;
  WorkerLogic w(ProbeType::kStartup, MakeProbe(1, 2), "Always");
  const std::string id = "containerd://a";
  ASSERT_EQ(w.Prepare(Running("a"), kT0, false, sink), Action::kProbe);
  w.Apply(id, Result::kFailure, sink);
  EXPECT_EQ(sink.results[id], Result::kUnknown);
  w.Apply(id, Result::kFailure, sink);
  EXPECT_EQ(sink.results[id], Result::kFailure);
  EXPECT_TRUE(w.on_hold());
}

TEST(WorkerLogicTest, TerminatedContainer) {
  MapSink sink;
  ContainerObservation exited = Running("a");
  exited.state = container::State::kExited;
  exited.exit_code = 1;
  WorkerLogic always(ProbeType::kReadiness, MakeProbe(), "Always");
  EXPECT_EQ(always.Prepare(exited, kT0, true, sink), Action::kWait);
  EXPECT_EQ(sink.results["containerd://a"], Result::kFailure);
  WorkerLogic never(ProbeType::kReadiness, MakeProbe(), "Never");
  EXPECT_EQ(never.Prepare(exited, kT0, true, sink), Action::kStop);
  WorkerLogic on_failure(ProbeType::kLiveness, MakeProbe(), "OnFailure");
  EXPECT_EQ(on_failure.Prepare(exited, kT0, true, sink), Action::kWait);
  exited.exit_code = 0;
  EXPECT_EQ(on_failure.Prepare(exited, kT0, true, sink), Action::kStop);
}

TEST(WorkerLogicTest, NotCreatedYetWaits) {
  MapSink sink;
  WorkerLogic w(ProbeType::kLiveness, MakeProbe(), "Always");
  EXPECT_EQ(w.Prepare(ContainerObservation{}, kT0, true, sink), Action::kWait);
  EXPECT_TRUE(sink.results.empty());
}

}  // namespace
}  // namespace kubelet::prober
