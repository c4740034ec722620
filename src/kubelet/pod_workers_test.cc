#include "kubelet/pod_workers.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <vector>

#include "absl/synchronization/notification.h"
#include "api/static_pod.h"
#include "api/testing/pod_builder.h"
#include "common/testing/eventually.h"
#include "gtest/gtest.h"
#include "metrics/metrics.h"

namespace kubelet {
namespace {

using testing::Eventually;

api::PodPtr Share(const api::Pod& p) { return std::make_shared<const api::Pod>(p); }

api::Pod MakePod(const std::string& uid) { return api::testing::PodBuilder("p-" + uid).Uid(uid); }

// A static pod (from a manifest) of UID `uid`; every version has the same name.
api::Pod MakeStaticPod(const std::string& uid) {
  return api::testing::PodBuilder("etcd").Namespace("kube-system").Uid(uid).Static();
}

bool Contains(const std::vector<std::string>& calls, const std::string& call) {
  return std::find(calls.begin(), calls.end(), call) != calls.end();
}

// Records every call; SyncPod can be made to block, fail or report terminal.
class RecordingSyncer : public PodSyncer {
 public:
  absl::StatusOr<bool> SyncPod(SyncPodType type, const api::Pod& pod,
                               const container::PodStatus&) override {
    Record("sync:" + std::string(SyncPodTypeName(type)) + ":" + pod.metadata.uid);
    if (throws > 0) {
      --throws;
      throw std::out_of_range("basic_string::substr");
    }
    if (hang_until_cancelled) {
      // As a hook that never returns: only the sync's cancellation ends the wait.
      absl::Notification cancelled;
      OnCancel on([&cancelled] { cancelled.Notify(); });
      if (!on.cancelled()) cancelled.WaitForNotification();
      Record("cancelled:" + pod.metadata.uid);
      return absl::CancelledError("context canceled");
    }
    {
      absl::MutexLock lock(&mu);
      auto unblocked = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return !block; };
      mu.Await(absl::Condition(&unblocked));
    }
    if (!fail.ok()) return fail;
    return terminal.load();
  }
  absl::Status SyncTerminatingPod(const api::Pod& pod, const container::PodStatus&,
                                  std::optional<int64_t> grace) override {
    Record("terminating:" + pod.metadata.uid + ":" + (grace ? std::to_string(*grace) : "none"));
    if (terminating_hangs > 0) {
      // As a StopContainer waiting out a long grace period: only a cancellation ends it.
      --terminating_hangs;
      absl::Notification cancelled;
      OnCancel on([&cancelled] { cancelled.Notify(); });
      if (!on.cancelled()) cancelled.WaitForNotification();
      Record("terminating-cancelled:" + pod.metadata.uid);
      return absl::CancelledError("context canceled");
    }
    return absl::OkStatus();
  }
  absl::Status SyncTerminatingRuntimePod(const container::Pod& running) override {
    Record("orphan:" + running.id);
    return absl::OkStatus();
  }
  absl::Status SyncTerminatedPod(const api::Pod& pod, const container::PodStatus&) override {
    Record("terminated:" + pod.metadata.uid);
    return absl::OkStatus();
  }
  void Record(std::string s) {
    absl::MutexLock lock(&mu);
    calls.push_back(std::move(s));
  }
  std::vector<std::string> Calls() {
    absl::MutexLock lock(&mu);
    return calls;
  }
  void SetBlock(bool b) {
    absl::MutexLock lock(&mu);
    block = b;
  }

  absl::Mutex mu;
  std::vector<std::string> calls ABSL_GUARDED_BY(mu);
  bool block ABSL_GUARDED_BY(mu) = false;
  absl::Status fail;
  std::atomic<bool> terminal{false};
  std::atomic<bool> hang_until_cancelled{false};
  std::atomic<int> throws{0};             // the next this many SyncPod calls throw
  std::atomic<int> terminating_hangs{0};  // the next this many terminations wait to be cancelled
};

class PodWorkersTest : public ::testing::Test {
 protected:
  PodWorkersTest() {
    cache_.UpdateTime(clock_.Now());  // as after PLEG's first relist
    workers_ = std::make_unique<PodWorkers>(
        PodWorkersOptions{.threads = 4, .cache_wait = absl::ZeroDuration()}, syncer_, cache_,
        clock_);
  }
  bool Idle(const std::string& uid) {
    return Eventually([&] { return !workers_->IsKnown(uid) || CallsSettled(); });
  }
  bool CallsSettled() {
    auto n = syncer_.Calls().size();
    absl::SleepFor(absl::Milliseconds(20));
    return syncer_.Calls().size() == n;
  }

  FakeClock clock_;
  container::Cache cache_;
  RecordingSyncer syncer_;
  std::unique_ptr<PodWorkers> workers_;
};

TEST_F(PodWorkersTest, CreateSyncsThenKillTerminates) {
  workers_->UpdatePod({SyncPodType::kCreate, Share(MakePod("a")), std::nullopt, std::nullopt});
  ASSERT_TRUE(Eventually([&] { return syncer_.Calls().size() == 1; }));
  EXPECT_EQ(syncer_.Calls()[0], "sync:create:a");
  EXPECT_FALSE(workers_->IsPodTerminationRequested("a"));
  workers_->UpdatePod({SyncPodType::kKill, Share(MakePod("a")), std::nullopt, 5});
  ASSERT_TRUE(Eventually([&] { return workers_->IsFinished("a"); }));
  EXPECT_EQ(syncer_.Calls(),
            (std::vector<std::string>{"sync:create:a", "terminating:a:5", "terminated:a"}));
  EXPECT_FALSE(workers_->CouldHaveRunningContainers("a"));
  workers_->SyncKnownPods({});
  EXPECT_FALSE(workers_->IsKnown("a"));
}

TEST_F(PodWorkersTest, WorkersWithoutIdleThreadsStillRunEveryStep) {
  // As hollow nodes run them: no thread while idle, up to two while work is queued.
  workers_ = std::make_unique<PodWorkers>(
      PodWorkersOptions{.threads = 2, .idle_threads = 0, .cache_wait = absl::ZeroDuration()},
      syncer_, cache_, clock_);
  for (const char* uid : {"a", "b", "c"}) {
    workers_->UpdatePod({SyncPodType::kCreate, Share(MakePod(uid)), std::nullopt, std::nullopt});
  }
  ASSERT_TRUE(Eventually([&] { return syncer_.Calls().size() == 3; }));
  workers_->UpdatePod({SyncPodType::kKill, Share(MakePod("b")), std::nullopt, 5});
  ASSERT_TRUE(Eventually([&] { return workers_->IsFinished("b"); }));
  EXPECT_FALSE(workers_->CouldHaveRunningContainers("b"));
}

// kubelet_pleg_event_to_pod_worker_seconds: from the earliest PLEG relist of the updates a
// SyncPod handles to its start.
double PlegToWorkerSeries(const std::string& suffix) {
  const std::string text = metrics::Serialize(metrics::KubeletRegistry());
  const std::string key = "kubelet_pleg_event_to_pod_worker_seconds" + suffix + " ";
  size_t at = text.find("\n" + key);
  if (at == std::string::npos) return 0;
  return std::stod(text.substr(at + 1 + key.size()));
}

TEST_F(PodWorkersTest, PlegEventDelayIsObservedFromTheEarliestMergedEvent) {
  const double count0 = PlegToWorkerSeries("_count"), sum0 = PlegToWorkerSeries("_sum");
  syncer_.SetBlock(true);
  workers_->UpdatePod({SyncPodType::kCreate, Share(MakePod("w")), std::nullopt, std::nullopt});
  ASSERT_TRUE(Eventually([&] { return syncer_.Calls().size() == 1; }));
  EXPECT_EQ(PlegToWorkerSeries("_count"), count0);  // not from a PLEG event: not observed
  // Two PLEG events wait behind the running sync and coalesce: the earlier one's relist counts.
  const absl::Time now = clock_.Now();
  workers_->UpdatePod({SyncPodType::kSync, Share(MakePod("w")), std::nullopt, std::nullopt,
                       now - absl::Seconds(3)});
  workers_->UpdatePod({SyncPodType::kSync, Share(MakePod("w")), std::nullopt, std::nullopt,
                       now - absl::Seconds(1)});
  syncer_.SetBlock(false);
  ASSERT_TRUE(Eventually([&] { return syncer_.Calls().size() == 2; }));
  ASSERT_TRUE(Eventually([&] { return PlegToWorkerSeries("_count") == count0 + 1; }));
  EXPECT_DOUBLE_EQ(PlegToWorkerSeries("_sum") - sum0, 3.0);  // the fake clock did not move
}

TEST_F(PodWorkersTest, ASyncThatThrowsFailsThatStepAndThePodWorkerGoesOn) {
  syncer_.throws = 1;
  workers_->UpdatePod({SyncPodType::kCreate, Share(MakePod("t")), std::nullopt, std::nullopt});
  ASSERT_TRUE(Eventually([&] { return syncer_.Calls().size() == 1; }));
  // The worker is not left marked as working: the next update syncs, and a kill terminates.
  workers_->UpdatePod({SyncPodType::kUpdate, Share(MakePod("t")), std::nullopt, std::nullopt});
  ASSERT_TRUE(Eventually([&] { return syncer_.Calls().size() == 2; }));
  workers_->UpdatePod({SyncPodType::kKill, Share(MakePod("t")), std::nullopt, 1});
  ASSERT_TRUE(Eventually([&] { return workers_->IsFinished("t"); }));
  EXPECT_EQ(syncer_.Calls(), (std::vector<std::string>{"sync:create:t", "sync:update:t",
                                                       "terminating:t:1", "terminated:t"}));
}

TEST_F(PodWorkersTest, UpdatesCoalesceAndKillIsNeverOverwritten) {
  syncer_.SetBlock(true);
  workers_->UpdatePod({SyncPodType::kCreate, Share(MakePod("b")), std::nullopt, std::nullopt});
  ASSERT_TRUE(Eventually([&] { return syncer_.Calls().size() == 1; }));
  // While the first sync is running: two updates coalesce into one; then a kill; then an update
  // that must not replace the kill.
  workers_->UpdatePod({SyncPodType::kUpdate, Share(MakePod("b")), std::nullopt, std::nullopt});
  workers_->UpdatePod({SyncPodType::kUpdate, Share(MakePod("b")), std::nullopt, std::nullopt});
  workers_->UpdatePod({SyncPodType::kKill, Share(MakePod("b")), std::nullopt, 30});
  workers_->UpdatePod({SyncPodType::kKill, Share(MakePod("b")), std::nullopt, 10});  // shorter wins
  workers_->UpdatePod({SyncPodType::kUpdate, Share(MakePod("b")), std::nullopt, std::nullopt});
  EXPECT_TRUE(workers_->IsPodTerminationRequested("b"));
  syncer_.SetBlock(false);
  ASSERT_TRUE(Eventually([&] { return workers_->IsFinished("b"); }));
  EXPECT_EQ(syncer_.Calls(),
            (std::vector<std::string>{"sync:create:b", "terminating:b:10", "terminated:b"}));
}

TEST_F(PodWorkersTest, KillCancelsAnInFlightSync) {
  syncer_.hang_until_cancelled = true;
  workers_->UpdatePod({SyncPodType::kCreate, Share(MakePod("h")), std::nullopt, std::nullopt});
  ASSERT_TRUE(Eventually([&] { return syncer_.Calls().size() == 1; }));
  // The sync hangs; a later update does not cancel it, a kill does, and termination follows.
  workers_->UpdatePod({SyncPodType::kUpdate, Share(MakePod("h")), std::nullopt, std::nullopt});
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(syncer_.Calls(), (std::vector<std::string>{"sync:create:h"}));
  workers_->UpdatePod({SyncPodType::kKill, Share(MakePod("h")), std::nullopt, 3});
  ASSERT_TRUE(Eventually([&] { return workers_->IsFinished("h"); })) << syncer_.Calls().size();
  EXPECT_EQ(syncer_.Calls(), (std::vector<std::string>{"sync:create:h", "cancelled:h",
                                                       "terminating:h:3", "terminated:h"}));
}

TEST_F(PodWorkersTest, StopCancelsInFlightSyncs) {
  syncer_.hang_until_cancelled = true;
  workers_->UpdatePod({SyncPodType::kCreate, Share(MakePod("s")), std::nullopt, std::nullopt});
  ASSERT_TRUE(Eventually([&] { return syncer_.Calls().size() == 1; }));
  workers_->Stop();  // returns: the hanging sync was cancelled
  EXPECT_EQ(syncer_.Calls(), (std::vector<std::string>{"sync:create:s", "cancelled:s"}));
}

TEST_F(PodWorkersTest, TerminalPodIsTornDown) {
  syncer_.terminal = true;
  workers_->UpdatePod({SyncPodType::kCreate, Share(MakePod("c")), std::nullopt, std::nullopt});
  ASSERT_TRUE(Eventually([&] { return workers_->IsFinished("c"); }));
  EXPECT_EQ(syncer_.Calls(),
            (std::vector<std::string>{"sync:create:c", "terminating:c:none", "terminated:c"}));
}

TEST_F(PodWorkersTest, OrphansAreKilledFromTheRuntimeView) {
  container::Pod running;
  running.id = "o1";
  running.name = "ghost";
  workers_->UpdatePod({SyncPodType::kKill, nullptr, running, std::nullopt});
  ASSERT_TRUE(Eventually([&] { return syncer_.Calls().size() == 1; }));
  EXPECT_EQ(syncer_.Calls()[0], "orphan:o1");
  // A plain sync for an unknown pod with no spec is ignored.
  workers_->UpdatePod({SyncPodType::kSync, nullptr, running, std::nullopt});
  EXPECT_TRUE(CallsSettled());
  EXPECT_EQ(syncer_.Calls().size(), 1u);
}

TEST_F(PodWorkersTest, ResyncAfterIntervalAndBackoffAfterError) {
  workers_->UpdatePod({SyncPodType::kCreate, Share(MakePod("d")), std::nullopt, std::nullopt});
  ASSERT_TRUE(Eventually([&] { return syncer_.Calls().size() == 1; }));
  ASSERT_TRUE(CallsSettled());
  workers_->SyncDue();  // nothing due yet
  EXPECT_TRUE(CallsSettled());
  EXPECT_EQ(syncer_.Calls().size(), 1u);
  clock_.Advance(absl::Seconds(91));  // past resync (1m + up to 50% jitter)
  cache_.UpdateTime(clock_.Now());
  syncer_.fail = absl::UnavailableError("back-off");
  workers_->SyncDue();
  ASSERT_TRUE(Eventually([&] { return syncer_.Calls().size() == 2; }));
  EXPECT_EQ(syncer_.Calls()[1], "sync:sync:d");
  ASSERT_TRUE(CallsSettled());
  clock_.Advance(absl::Seconds(16));  // past the 10 s (+50%) error back-off
  cache_.UpdateTime(clock_.Now());
  syncer_.fail = absl::OkStatus();
  workers_->SyncDue();
  EXPECT_TRUE(Eventually([&] { return syncer_.Calls().size() == 3; }));
}

TEST_F(PodWorkersTest, FinishedPodCanStartAgain) {
  workers_->UpdatePod({SyncPodType::kCreate, Share(MakePod("e")), std::nullopt, std::nullopt});
  workers_->UpdatePod({SyncPodType::kKill, Share(MakePod("e")), std::nullopt, 1});
  ASSERT_TRUE(Eventually([&] { return workers_->IsFinished("e"); }));
  workers_->UpdatePod({SyncPodType::kCreate, Share(MakePod("e")), std::nullopt, std::nullopt});
  ASSERT_TRUE(Eventually([&] { return syncer_.Calls().back() == "sync:create:e"; }));
  EXPECT_FALSE(workers_->IsPodTerminationRequested("e"));
}

TEST_F(PodWorkersTest, ShorterGracePeriodRestartsTheTerminationInFlight) {
  workers_->UpdatePod({SyncPodType::kCreate, Share(MakePod("g")), std::nullopt, std::nullopt});
  ASSERT_TRUE(Eventually([&] { return syncer_.Calls().size() == 1; }));
  syncer_.terminating_hangs = 1;
  workers_->UpdatePod({SyncPodType::kKill, Share(MakePod("g")), std::nullopt, 60});
  ASSERT_TRUE(Eventually([&] { return syncer_.Calls().size() == 2; }));
  // The same grace again (a re-delivered update) leaves the termination alone.
  workers_->UpdatePod({SyncPodType::kKill, Share(MakePod("g")), std::nullopt, 60});
  EXPECT_TRUE(CallsSettled());
  EXPECT_EQ(syncer_.Calls().size(), 2u);
  // A second delete with a shorter grace period cancels it; it starts over with the shorter one.
  workers_->UpdatePod({SyncPodType::kKill, Share(MakePod("g")), std::nullopt, 2});
  ASSERT_TRUE(Eventually([&] { return workers_->IsFinished("g"); }));
  EXPECT_EQ(syncer_.Calls(), (std::vector<std::string>{"sync:create:g", "terminating:g:60",
                                                       "terminating-cancelled:g", "terminating:g:2",
                                                       "terminated:g"}));
}

TEST_F(PodWorkersTest, LongerGracePeriodNeverExtendsATermination) {
  workers_->UpdatePod({SyncPodType::kCreate, Share(MakePod("h")), std::nullopt, std::nullopt});
  ASSERT_TRUE(Eventually([&] { return syncer_.Calls().size() == 1; }));
  syncer_.SetBlock(false);
  syncer_.terminating_hangs = 1;
  workers_->UpdatePod({SyncPodType::kKill, Share(MakePod("h")), std::nullopt, 5});
  ASSERT_TRUE(Eventually([&] { return syncer_.Calls().size() == 2; }));
  workers_->UpdatePod({SyncPodType::kKill, Share(MakePod("h")), std::nullopt, 50});
  EXPECT_TRUE(CallsSettled());
  EXPECT_EQ(syncer_.Calls().back(), "terminating:h:5");
  workers_->UpdatePod({SyncPodType::kKill, Share(MakePod("h")), std::nullopt, 1});
  ASSERT_TRUE(Eventually([&] { return workers_->IsFinished("h"); }));
  EXPECT_EQ(syncer_.Calls()[3], "terminating:h:1");
}

// A changed manifest: the new version of a static pod (another UID, the same full name) starts
// only once the previous one has stopped, as upstream's allowStaticPodStart (two etcds on one
// data dir, two API servers on one port).
TEST_F(PodWorkersTest, StaticPodStartsOnlyAfterItsPreviousVersionStopped) {
  workers_->UpdatePod(
      {SyncPodType::kCreate, Share(MakeStaticPod("v1")), std::nullopt, std::nullopt});
  ASSERT_TRUE(Eventually([&] { return Contains(syncer_.Calls(), "sync:create:v1"); }));
  syncer_.terminating_hangs = 1;
  workers_->UpdatePod({SyncPodType::kKill, Share(MakeStaticPod("v1")), std::nullopt, 30});
  ASSERT_TRUE(Eventually([&] { return Contains(syncer_.Calls(), "terminating:v1:30"); }));
  workers_->UpdatePod(
      {SyncPodType::kCreate, Share(MakeStaticPod("v2")), std::nullopt, std::nullopt});
  EXPECT_TRUE(CallsSettled());
  clock_.Advance(absl::Seconds(2));
  workers_->SyncDue();
  EXPECT_TRUE(CallsSettled());
  EXPECT_FALSE(Contains(syncer_.Calls(), "sync:create:v2"));
  // The previous version stops; the new one starts at the next retry, with its create.
  workers_->UpdatePod({SyncPodType::kKill, Share(MakeStaticPod("v1")), std::nullopt, 1});
  ASSERT_TRUE(Eventually([&] { return workers_->IsFinished("v1"); }));
  clock_.Advance(absl::Seconds(2));
  workers_->SyncDue();
  ASSERT_TRUE(Eventually([&] { return Contains(syncer_.Calls(), "sync:create:v2"); }));
  const std::vector<std::string> calls = syncer_.Calls();
  EXPECT_LT(std::find(calls.begin(), calls.end(), "terminated:v1"),
            std::find(calls.begin(), calls.end(), "sync:create:v2"));
}

// Pods from the API server are not held back (their names are unique while they exist).
TEST_F(PodWorkersTest, NonStaticPodOfTheSameNameDoesNotWait) {
  api::Pod a = MakePod("n1"), b = MakePod("n2");
  b.metadata.name = a.metadata.name;
  workers_->UpdatePod({SyncPodType::kCreate, Share(a), std::nullopt, std::nullopt});
  ASSERT_TRUE(Eventually([&] { return Contains(syncer_.Calls(), "sync:create:n1"); }));
  syncer_.terminating_hangs = 1;
  workers_->UpdatePod({SyncPodType::kKill, Share(a), std::nullopt, 30});
  // The hanging termination must have begun, or the shorter grace below would merge into it and
  // hang in its place.
  ASSERT_TRUE(Eventually([&] { return Contains(syncer_.Calls(), "terminating:n1:30"); }));
  workers_->UpdatePod({SyncPodType::kCreate, Share(b), std::nullopt, std::nullopt});
  ASSERT_TRUE(Eventually([&] { return Contains(syncer_.Calls(), "sync:create:n2"); }));
  workers_->UpdatePod({SyncPodType::kKill, Share(a), std::nullopt, 1});
  ASSERT_TRUE(Eventually([&] { return workers_->IsFinished("n1"); }));
}

}  // namespace
}  // namespace kubelet
