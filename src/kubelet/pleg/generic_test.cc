#include "kubelet/pleg/generic.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace kubelet::pleg {
namespace {

// A container::Runtime whose pod list the test sets directly.
class ListRuntime : public container::Runtime {
 public:
  std::string Type() const override { return "fake"; }
  // GetPods and GetPodStatus run on the PLEG's thread in the threaded test: `mu` guards what
  // they touch there (SetPods, AnyStatusCall); the other tests use the fields directly.
  absl::StatusOr<std::vector<container::Pod>> GetPods(bool) override {
    absl::MutexLock lock(&mu);
    return pods;
  }
  void SetPods(std::vector<container::Pod> p) {
    absl::MutexLock lock(&mu);
    pods = std::move(p);
  }
  bool AnyStatusCall() {
    absl::MutexLock lock(&mu);
    return !status_calls.empty();
  }
  container::PodSyncResult SyncPod(const api::Pod&, const container::PodStatus&) override {
    return {};
  }
  absl::Status KillPod(const api::Pod*, const container::Pod&, std::optional<int64_t>) override {
    return absl::OkStatus();
  }
  absl::StatusOr<container::PodStatus> GetPodStatus(const std::string& uid, const std::string& name,
                                                    const std::string& ns) override {
    {
      absl::MutexLock lock(&mu);
      ++status_calls[uid];
      if (!status_error.ok()) return status_error;
    }
    container::PodStatus s;
    s.id = uid;
    s.name = name;
    s.namespace_ = ns;
    return s;
  }
  absl::Status GarbageCollect(const container::GCPolicy&, bool) override {
    return absl::OkStatus();
  }
  void ForgetPod(const std::string&) override {}

  absl::Mutex mu;
  std::vector<container::Pod> pods;
  std::map<std::string, int> status_calls;
  absl::Status status_error;
};

container::Container C(const std::string& id, container::State s) {
  container::Container c;
  c.id = {"containerd", id};
  c.name = "c-" + id;
  c.state = s;
  return c;
}

container::Pod P(const std::string& uid, std::vector<container::Container> cs,
                 std::vector<container::Container> sandboxes = {}) {
  container::Pod p;
  p.id = uid;
  p.name = "pod-" + uid;
  p.namespace_ = "default";
  p.containers = std::move(cs);
  p.sandboxes = std::move(sandboxes);
  return p;
}

std::vector<std::string> Names(std::vector<PodLifecycleEvent> events) {
  std::vector<std::string> out;
  for (auto& e : events) out.push_back(e.pod_id + "/" + e.data + "/" + EventTypeName(e.type));
  std::sort(out.begin(), out.end());
  return out;
}

class GenericPLEGTest : public ::testing::Test {
 protected:
  GenericPLEGTest() : pleg_(GenericPLEGOptions{}, runtime_, cache_, clock_) {}
  ListRuntime runtime_;
  container::Cache cache_;
  FakeClock clock_;
  GenericPLEG pleg_;
};

TEST_F(GenericPLEGTest, EmitsStartedDiedRemoved) {
  runtime_.pods = {P("u1", {C("a", container::State::kRunning), C("b", container::State::kExited)},
                     {C("s1", container::State::kRunning)})};
  pleg_.Relist();
  EXPECT_EQ(Names(pleg_.Events().Drain()),
            (std::vector<std::string>{"u1/a/ContainerStarted", "u1/b/ContainerDied",
                                      "u1/s1/ContainerStarted"}));
  EXPECT_EQ(runtime_.status_calls["u1"], 1);
  EXPECT_EQ(cache_.Get("u1").status.name, "pod-u1");

  // Nothing changed: no events, no status call, but the global timestamp moves.
  clock_.Advance(absl::Seconds(1));
  pleg_.Relist();
  EXPECT_TRUE(pleg_.Events().Drain().empty());
  EXPECT_EQ(runtime_.status_calls["u1"], 1);
  EXPECT_EQ(
      cache_.GetNewerThan("u1", clock_.Now() - absl::Milliseconds(1), clock_, absl::ZeroDuration())
          .status.id,
      "u1");

  // a dies, b is removed, c appears created (ContainerChanged is not published).
  runtime_.pods = {P("u1", {C("a", container::State::kExited), C("c", container::State::kCreated)},
                     {C("s1", container::State::kRunning)})};
  pleg_.Relist();
  EXPECT_EQ(Names(pleg_.Events().Drain()),
            (std::vector<std::string>{"u1/a/ContainerDied", "u1/b/ContainerRemoved"}));
  EXPECT_EQ(runtime_.status_calls["u1"], 2);

  // The pod vanishes: a running-then-gone container reports died + removed.
  runtime_.pods = {P("u1", {C("c", container::State::kRunning)}, {})};
  pleg_.Relist();
  runtime_.pods = {};
  pleg_.Relist();
  auto names = Names(pleg_.Events().Drain());
  EXPECT_NE(std::find(names.begin(), names.end(), "u1/c/ContainerDied"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "u1/c/ContainerRemoved"), names.end());
}

TEST_F(GenericPLEGTest, FailedInspectionIsRetried) {
  runtime_.pods = {P("u2", {C("x", container::State::kRunning)})};
  runtime_.status_error = absl::UnavailableError("boom");
  pleg_.Relist();
  EXPECT_FALSE(cache_.Get("u2").error.ok());
  runtime_.status_error = absl::OkStatus();
  pleg_.Relist();  // no new events, but the pod is reinspected
  EXPECT_EQ(runtime_.status_calls["u2"], 2);
  EXPECT_TRUE(cache_.Get("u2").error.ok());
}

TEST_F(GenericPLEGTest, HealthFollowsRelistTime) {
  EXPECT_TRUE(pleg_.Healthy().ok());
  pleg_.Relist();
  clock_.Advance(absl::Minutes(2));
  EXPECT_TRUE(pleg_.Healthy().ok());
  clock_.Advance(absl::Minutes(2));
  EXPECT_FALSE(pleg_.Healthy().ok());
}

TEST_F(GenericPLEGTest, RunsOnItsThreadAndPokeTriggersRelist) {
  GenericPLEG fast(GenericPLEGOptions{.relist_period = absl::Hours(1)}, runtime_, cache_, clock_);
  fast.Start();
  // The first relist happens at start; a later change is seen only after a poke.
  for (int i = 0; i < 500 && !runtime_.AnyStatusCall(); ++i) absl::SleepFor(absl::Milliseconds(2));
  runtime_.SetPods({P("u3", {C("z", container::State::kRunning)})});
  fast.Poke();
  bool seen = false;
  for (int i = 0; i < 1000 && !seen; ++i) {
    for (auto& e : fast.Events().Drain()) seen |= e.pod_id == "u3";
    if (!seen) absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_TRUE(seen);
  fast.Stop();
}

// The status a pod worker reads after its changes: containers with their states, sandboxes.
container::PodStatus Observed(const std::string& uid,
                              std::vector<std::pair<std::string, container::State>> cs,
                              std::vector<std::pair<std::string, bool>> sandboxes) {
  container::PodStatus s;
  s.id = uid;
  s.name = "pod-" + uid;
  s.namespace_ = "default";
  for (auto& [id, state] : cs) {
    container::ContainerStatus c;
    c.id = {"containerd", id};
    c.name = "c-" + id;
    c.state = state;
    s.container_statuses.push_back(c);
  }
  for (auto& [id, ready] : sandboxes) {
    container::SandboxStatus sb;
    sb.id = id;
    sb.ready = ready;
    s.sandbox_statuses.push_back(sb);
  }
  return s;
}

TEST_F(GenericPLEGTest, SyncedPodIsLeftToItsWorkerAndReadOncePerChange) {
  runtime_.pods = {P("u1", {}, {C("s1", container::State::kRunning)})};
  pleg_.Relist();
  EXPECT_EQ(Names(pleg_.Events().Drain()), (std::vector<std::string>{"u1/s1/ContainerStarted"}));
  EXPECT_EQ(runtime_.status_calls["u1"], 1);

  // A worker starts containers: relists meanwhile leave the pod alone (no reads, no events).
  pleg_.BeginSync("u1");
  clock_.Advance(absl::Seconds(1));
  runtime_.pods = {
      P("u1", {C("a", container::State::kCreated)}, {C("s1", container::State::kRunning)})};
  pleg_.Relist();
  EXPECT_TRUE(pleg_.Events().Drain().empty());
  EXPECT_EQ(runtime_.status_calls["u1"], 1);

  // The worker's own read after its changes becomes the pod's state: its events are published
  // and the cache holds it, timestamped when it was read.
  clock_.Advance(absl::Seconds(1));
  runtime_.pods = {
      P("u1", {C("a", container::State::kRunning)}, {C("s1", container::State::kRunning)})};
  const absl::Time read_at = clock_.Now();
  container::PodStatus observed =
      Observed("u1", {{"a", container::State::kRunning}}, {{"s1", true}});
  pleg_.EndSync("u1", &observed, read_at);
  auto events = pleg_.Events().Drain();
  EXPECT_EQ(Names(events), (std::vector<std::string>{"u1/a/ContainerStarted"}));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].observed, read_at);
  EXPECT_EQ(cache_.Get("u1").modified, read_at);
  ASSERT_EQ(cache_.Get("u1").status.container_statuses.size(), 1u);

  // The next relist lists what the worker saw: nothing to read again.
  clock_.Advance(absl::Seconds(1));
  pleg_.Relist();
  EXPECT_TRUE(pleg_.Events().Drain().empty());
  EXPECT_EQ(runtime_.status_calls["u1"], 1);

  // A later change is the relist's again.
  clock_.Advance(absl::Seconds(1));
  runtime_.pods = {
      P("u1", {C("a", container::State::kExited)}, {C("s1", container::State::kRunning)})};
  pleg_.Relist();
  EXPECT_EQ(Names(pleg_.Events().Drain()), (std::vector<std::string>{"u1/a/ContainerDied"}));
  EXPECT_EQ(runtime_.status_calls["u1"], 2);
}

TEST_F(GenericPLEGTest, WorkersOwnReadSatisfiesItsNextWaitUntilItChangesThePodAgain) {
  container::PodStatus observed = Observed("u1", {{"a", container::State::kRunning}}, {});
  pleg_.BeginSync("u1");
  pleg_.EndSync("u1", &observed, clock_.Now());
  EXPECT_TRUE(cache_.Get("u1").after_sync);
  // The next step's wait (for a status newer than the end of the step) returns at once: a
  // fake clock that never advances would block it for the hour otherwise.
  container::Cache::Entry e =
      cache_.GetNewerThan("u1", clock_.Now() + absl::Seconds(1), clock_, absl::Hours(1));
  EXPECT_EQ(e.status.container_statuses.size(), 1u);
  // A new change ends it; a relist's inspection is never `after_sync`.
  pleg_.BeginSync("u1");
  EXPECT_FALSE(cache_.Get("u1").after_sync);
  pleg_.EndSync("u1", nullptr, absl::InfinitePast());
  clock_.Advance(absl::Seconds(1));
  runtime_.pods = {P("u1", {C("a", container::State::kExited)})};
  pleg_.Relist();
  EXPECT_FALSE(cache_.Get("u1").after_sync);
}

TEST_F(GenericPLEGTest, SyncWithoutObservationLeavesThePodToTheNextRelist) {
  pleg_.BeginSync("u1");
  runtime_.pods = {
      P("u1", {C("a", container::State::kRunning)}, {C("s1", container::State::kRunning)})};
  pleg_.Relist();
  EXPECT_TRUE(pleg_.Events().Drain().empty());
  pleg_.EndSync("u1", nullptr, absl::InfinitePast());
  clock_.Advance(absl::Seconds(1));
  pleg_.Relist();
  EXPECT_EQ(Names(pleg_.Events().Drain()),
            (std::vector<std::string>{"u1/a/ContainerStarted", "u1/s1/ContainerStarted"}));
  EXPECT_EQ(runtime_.status_calls["u1"], 1);
}

TEST_F(GenericPLEGTest, NestedSyncsEndWithTheLast) {
  pleg_.BeginSync("u1");
  pleg_.BeginSync("u1");
  pleg_.EndSync("u1", nullptr, absl::InfinitePast());
  runtime_.pods = {P("u1", {C("a", container::State::kRunning)})};
  pleg_.Relist();
  EXPECT_TRUE(pleg_.Events().Drain().empty());
  pleg_.EndSync("u1", nullptr, absl::InfinitePast());
  pleg_.Relist();
  EXPECT_EQ(Names(pleg_.Events().Drain()), (std::vector<std::string>{"u1/a/ContainerStarted"}));
}

TEST_F(GenericPLEGTest, LastSeenIsTheWorkersReadWhenItIsYoungerThanTheRelist) {
  runtime_.pods = {
      P("u1", {C("a", container::State::kRunning)}, {C("s1", container::State::kRunning)})};
  pleg_.Relist();
  ASSERT_TRUE(pleg_.LastSeen("u1").has_value());
  EXPECT_EQ(pleg_.LastSeen("u1")->containers.at(0).state, container::State::kRunning);
  EXPECT_FALSE(pleg_.LastSeen("u2").has_value());

  // A worker stops the pod: the relist's listing still shows it running, the PLEG's last view
  // of the pod is the worker's read after the kill.
  clock_.Advance(absl::Milliseconds(300));
  container::PodStatus stopped =
      Observed("u1", {{"a", container::State::kExited}}, {{"s1", false}});
  pleg_.BeginSync("u1");
  pleg_.EndSync("u1", &stopped, clock_.Now());
  EXPECT_EQ(pleg_.LastRelistPods()->at(0).containers.at(0).state, container::State::kRunning);
  std::optional<container::Pod> seen = pleg_.LastSeen("u1");
  ASSERT_TRUE(seen.has_value());
  ASSERT_EQ(seen->containers.size(), 1u);
  EXPECT_EQ(seen->containers[0].state, container::State::kExited);
  ASSERT_EQ(seen->sandboxes.size(), 1u);
  EXPECT_NE(seen->sandboxes[0].state, container::State::kRunning);

  // Once a relist no longer lists the pod, the PLEG has not seen it.
  clock_.Advance(absl::Seconds(1));
  runtime_.pods.clear();
  pleg_.Relist();
  EXPECT_FALSE(pleg_.LastSeen("u1").has_value());
}

TEST_F(GenericPLEGTest, NewerStateIsNeverOverwrittenByAnOlderOne) {
  // An observation made after a relist listed the runtime: that relist leaves the pod alone.
  runtime_.pods = {P("u1", {C("a", container::State::kRunning)})};
  container::PodStatus later = Observed("u1", {{"a", container::State::kExited}}, {});
  pleg_.BeginSync("u1");
  pleg_.EndSync("u1", &later, clock_.Now() + absl::Seconds(5));
  EXPECT_EQ(Names(pleg_.Events().Drain()), (std::vector<std::string>{"u1/a/ContainerDied"}));
  pleg_.Relist();  // lists at Now(), before the observation
  EXPECT_TRUE(pleg_.Events().Drain().empty());
  EXPECT_EQ(runtime_.status_calls["u1"], 0);
  EXPECT_EQ(cache_.Get("u1").status.container_statuses.at(0).state, container::State::kExited);

  // An observation older than the one applied is dropped.
  container::PodStatus older = Observed("u1", {{"a", container::State::kRunning}}, {});
  pleg_.BeginSync("u1");
  pleg_.EndSync("u1", &older, clock_.Now());
  EXPECT_TRUE(pleg_.Events().Drain().empty());
  EXPECT_EQ(cache_.Get("u1").status.container_statuses.at(0).state, container::State::kExited);

  // The cache keeps the newer of two writes whatever their order.
  container::PodStatus s;
  s.id = "u9";
  s.name = "new";
  cache_.Set("u9", s, absl::OkStatus(), clock_.Now() + absl::Seconds(2));
  s.name = "old";
  cache_.Set("u9", s, absl::OkStatus(), clock_.Now() + absl::Seconds(1));
  EXPECT_EQ(cache_.Get("u9").status.name, "new");
}

}  // namespace
}  // namespace kubelet::pleg
