#include "kubelet/status/api_status_syncer.h"

#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "api/testing/pod_builder.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "kubelet/status/testing/fake_pod_status_client.h"

namespace kubelet::status {
namespace {

using testing::FakePodStatusClient;

api::Pod MakePod(const std::string& name, const std::string& uid) {
  return api::testing::PodBuilder(name).Uid(uid);
}

api::PodStatus WithPhase(const std::string& phase) {
  api::PodStatus st;
  st.phase = phase;
  st.host_ip = "127.0.0.1";
  st.qos_class = "BestEffort";
  return st;
}

api::PodStatus Running() {
  api::PodStatus st = WithPhase("Running");
  api::PodCondition ready;
  ready.type = "Ready";
  ready.status = "True";
  ready.last_transition_time = api::Time::FromUnix(1700000000);
  api::PodCondition scheduled;
  scheduled.type = "PodScheduled";
  scheduled.status = "True";
  st.conditions = {ready, scheduled};
  return st;
}

// What a pod's first sync reports before its containers run.
api::PodStatus Starting() {
  api::PodStatus st = WithPhase("Pending");
  api::ContainerStatus c;
  c.name = "c";
  c.image = "busybox";
  c.state.waiting = api::ContainerStateWaiting{};
  c.state.waiting->reason = "ContainerCreating";
  st.container_statuses = {c};
  return st;
}

class ApiStatusSyncerTest : public ::testing::Test {
 protected:
  ApiStatusSyncerTest() { Make(ApiStatusSyncerOptions{}); }
  void Make(ApiStatusSyncerOptions options) {
    syncer_.reset();
    ApiStatusSyncerDelegate d;
    d.pods = [this] {
      absl::MutexLock lock(&mu_);
      return pods_;
    };
    d.terminated = [this](const api::Pod&) {
      absl::MutexLock lock(&mu_);
      return terminated_;
    };
    d.static_pods = [this] {
      absl::MutexLock lock(&mu_);
      return static_pods_;
    };
    d.first_sync_hold_until = [this](const std::string& uid) {
      absl::MutexLock lock(&mu_);
      auto it = hold_until_.find(uid);
      return it == hold_until_.end() ? absl::InfinitePast() : it->second;
    };
    syncer_ = std::make_unique<ApiStatusSyncer>(client_, statuses_, std::move(d), options, clock_);
  }
  void SetPods(std::vector<api::Pod> pods) {
    absl::MutexLock lock(&mu_);
    pods_.clear();
    for (api::Pod& p : pods) pods_.push_back(std::make_shared<const api::Pod>(std::move(p)));
  }
  void SetStaticPods(std::vector<std::pair<api::Pod, std::string>> pods) {
    absl::MutexLock lock(&mu_);
    static_pods_.clear();
    for (auto& [pod, mirror_uid] : pods) {
      static_pods_.push_back({std::make_shared<const api::Pod>(std::move(pod)), mirror_uid});
    }
  }
  // The pod's first sync starting its containers (true), or over (false).
  void SetFirstSyncPending(const std::string& uid, bool pending) {
    SetHoldUntil(uid, pending ? absl::InfiniteFuture() : absl::InfinitePast());
  }
  void SetHoldUntil(const std::string& uid, absl::Time t) {
    absl::MutexLock lock(&mu_);
    hold_until_[uid] = t;
  }
  // A syncer holding first statuses (2 s at most) and pod "a" in its first sync, starting.
  void StartHeldPod() {
    ApiStatusSyncerOptions o;
    o.first_status_hold = absl::Seconds(2);
    Make(o);
    client_.Put("a", "uid-a");
    SetPods({MakePod("a", "uid-a")});
    SetFirstSyncPending("uid-a", true);
    statuses_.SetPodStatus("uid-a", Starting());
  }
  void SetTerminated(bool t) {
    absl::MutexLock lock(&mu_);
    terminated_ = t;
  }

  FakeClock clock_;
  FakePodStatusClient client_;
  StatusManager statuses_;
  absl::Mutex mu_;
  std::vector<api::PodPtr> pods_ ABSL_GUARDED_BY(mu_);
  std::vector<MirroredPod> static_pods_ ABSL_GUARDED_BY(mu_);
  bool terminated_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, absl::Time> hold_until_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<ApiStatusSyncer> syncer_;
};

TEST_F(ApiStatusSyncerTest, StaticPodStatusGoesToItsMirrorPod) {
  // The static pod's status is kept under its own UID; the API object is the mirror pod.
  statuses_.SetPodStatus("static-uid", Running());
  SetStaticPods({{MakePod("s", "static-uid"), ""}});
  syncer_->SyncBatch();
  EXPECT_TRUE(client_.TakeCalls().empty());  // no mirror pod yet: skipped, not forgotten

  client_.Put("s", "mirror-1");
  SetStaticPods({{MakePod("s", "static-uid"), "mirror-1"}});
  syncer_->SyncBatch();
  EXPECT_EQ(client_.TakeCalls(), (std::vector<std::string>{"GET s", "PATCH s"}));
  EXPECT_EQ(client_.patches().back().second["metadata"]["uid"], "mirror-1");
  EXPECT_EQ(client_.patches().back().second["status"]["phase"], "Running");
  syncer_->SyncBatch();
  EXPECT_TRUE(client_.TakeCalls().empty());

  // A recreated mirror pod (new UID) gets the status again, with its own UID.
  client_.Put("s", "mirror-2");
  SetStaticPods({{MakePod("s", "static-uid"), "mirror-2"}});
  syncer_->SyncBatch();
  EXPECT_EQ(client_.TakeCalls(), (std::vector<std::string>{"GET s", "PATCH s"}));
  EXPECT_EQ(client_.patches().back().second["metadata"]["uid"], "mirror-2");
}

TEST_F(ApiStatusSyncerTest, StaleMirrorUidIsSkippedAndMirrorPodsAreNeverDeleted) {
  statuses_.SetPodStatus("static-uid", Running());
  client_.Put("s", "mirror-new");
  SetStaticPods({{MakePod("s", "static-uid"), "mirror-old"}});
  syncer_->SyncBatch();
  EXPECT_EQ(client_.TakeCalls(), (std::vector<std::string>{"GET s"}));

  // A mirror pod among the API pods, deleted and "terminated": never deleted by the syncer.
  api::Pod mirror = MakePod("m", "mirror-uid");
  mirror.metadata.annotations["kubernetes.io/config.mirror"] = "hash";
  mirror.metadata.deletion_timestamp = api::Time::FromUnix(1700000000);
  client_.Put("m", "mirror-uid");
  SetPods({mirror});
  SetTerminated(true);
  syncer_->SyncBatch();
  for (const std::string& call : client_.TakeCalls())
    EXPECT_EQ(call.rfind("DELETE", 0), std::string::npos) << call;
}

TEST_F(ApiStatusSyncerTest, PatchCarriesUidOrderAndStatusAsPodsShowsIt) {
  client_.Put("a", "uid-a");
  SetPods({MakePod("a", "uid-a")});
  statuses_.SetPodStatus("uid-a", Running());
  syncer_->SyncBatch();
  EXPECT_EQ(client_.TakeCalls(), (std::vector<std::string>{"GET a", "PATCH a"}));
  ASSERT_EQ(client_.patches().size(), 1u);
  nlohmann::json p = client_.patches()[0].second;
  EXPECT_EQ(p["metadata"]["uid"], "uid-a");
  EXPECT_EQ(p["status"]["$setElementOrder/conditions"],
            nlohmann::json::parse(R"([{"type":"Ready"},{"type":"PodScheduled"}])"));
  nlohmann::json want = ApiStatusSyncer::EncodeStatus(Running());
  EXPECT_EQ(p["status"]["phase"], "Running");
  EXPECT_EQ(p["status"]["conditions"], want["conditions"]);
  EXPECT_EQ(p["status"]["hostIP"], "127.0.0.1");
  EXPECT_EQ(p["status"]["qosClass"], "BestEffort");
}

TEST_F(ApiStatusSyncerTest, OnlyWhenTheVersionChanged) {
  client_.Put("a", "uid-a");
  SetPods({MakePod("a", "uid-a")});
  statuses_.SetPodStatus("uid-a", Running());
  syncer_->SyncBatch();
  client_.TakeCalls();
  syncer_->SyncBatch();
  EXPECT_TRUE(client_.TakeCalls().empty());
  // The same status again keeps its version: nothing to send.
  statuses_.SetPodStatus("uid-a", Running());
  syncer_->SyncBatch();
  EXPECT_TRUE(client_.TakeCalls().empty());
  // A change: only the changed fields and the changed condition go out.
  api::PodStatus st = Running();
  st.conditions[0].status = "False";
  st.conditions[0].reason = "ContainersNotReady";
  st.message = "";
  statuses_.SetPodStatus("uid-a", st);
  syncer_->SyncBatch();
  EXPECT_EQ(client_.TakeCalls(), (std::vector<std::string>{"GET a", "PATCH a"}));
  nlohmann::json p = client_.patches().back().second;
  EXPECT_FALSE(p["status"].contains("phase"));
  ASSERT_EQ(p["status"]["conditions"].size(), 1u);
  EXPECT_EQ(p["status"]["conditions"][0]["type"], "Ready");
  EXPECT_EQ(p["status"]["conditions"][0]["status"], "False");
}

TEST_F(ApiStatusSyncerTest, UnchangedOnServerSendsNoPatch) {
  EXPECT_FALSE(ApiStatusSyncer::StatusPatch("u", ApiStatusSyncer::EncodeStatus(Running()),
                                            ApiStatusSyncer::EncodeStatus(Running()))
                   .has_value());
  // A field the kubelet owns that the new status drops is cleared.
  nlohmann::json old_s = ApiStatusSyncer::EncodeStatus(Running());
  old_s["podIP"] = "10.0.0.1";
  auto patch = ApiStatusSyncer::StatusPatch("u", old_s, ApiStatusSyncer::EncodeStatus(Running()));
  ASSERT_TRUE(patch.has_value());
  EXPECT_TRUE(nlohmann::json::parse(*patch)["status"]["podIP"].is_null());
}

TEST_F(ApiStatusSyncerTest, NotFoundDropsThePod) {
  SetPods({MakePod("gone", "uid-g")});
  statuses_.SetPodStatus("uid-g", Running());
  syncer_->SyncBatch();
  EXPECT_EQ(client_.TakeCalls(), std::vector<std::string>{"GET gone"});
  statuses_.SetPodStatus("uid-g", api::PodStatus{.phase = "Failed"});
  syncer_->SyncBatch();
  EXPECT_TRUE(client_.TakeCalls().empty());
}

TEST_F(ApiStatusSyncerTest, PatchNotFoundDropsThePod) {
  client_.Put("a", "uid-a");
  client_.Fail("PATCH", absl::NotFoundError("404"));
  SetPods({MakePod("a", "uid-a")});
  statuses_.SetPodStatus("uid-a", Running());
  syncer_->SyncBatch();
  client_.TakeCalls();
  statuses_.SetPodStatus("uid-a", api::PodStatus{.phase = "Failed"});
  syncer_->SyncBatch();
  EXPECT_TRUE(client_.TakeCalls().empty());
}

TEST_F(ApiStatusSyncerTest, ConflictRereadsAndRetries) {
  client_.Put("a", "uid-a");
  client_.Fail("PATCH", absl::AbortedError("409 Conflict"));
  SetPods({MakePod("a", "uid-a")});
  statuses_.SetPodStatus("uid-a", Running());
  syncer_->SyncBatch();
  EXPECT_EQ(client_.TakeCalls(),
            (std::vector<std::string>{"GET a", "PATCH a", "GET a", "PATCH a"}));
  syncer_->SyncBatch();
  EXPECT_TRUE(client_.TakeCalls().empty());
}

TEST_F(ApiStatusSyncerTest, OtherErrorsRetryNextRound) {
  client_.Put("a", "uid-a");
  client_.Fail("GET", absl::UnavailableError("connection refused"));
  SetPods({MakePod("a", "uid-a")});
  statuses_.SetPodStatus("uid-a", Running());
  syncer_->SyncBatch();
  EXPECT_EQ(client_.TakeCalls(), std::vector<std::string>{"GET a"});
  syncer_->SyncBatch();
  EXPECT_EQ(client_.TakeCalls(), (std::vector<std::string>{"GET a", "PATCH a"}));
}

TEST_F(ApiStatusSyncerTest, DifferentUidIsSkipped) {
  client_.Put("a", "uid-new");
  SetPods({MakePod("a", "uid-old")});
  statuses_.SetPodStatus("uid-old", Running());
  syncer_->SyncBatch();
  EXPECT_EQ(client_.TakeCalls(), std::vector<std::string>{"GET a"});
}

TEST_F(ApiStatusSyncerTest, FinalDeleteOnceTerminatedWithUidPrecondition) {
  client_.Put("a", "uid-a");
  api::Pod pod = MakePod("a", "uid-a");
  pod.metadata.deletion_timestamp = api::Time::FromUnix(1700000000);
  pod.metadata.deletion_grace_period_seconds = 30;
  SetPods({pod});
  statuses_.SetPodStatus("uid-a", Running());
  syncer_->SyncBatch();
  EXPECT_EQ(client_.TakeCalls(), (std::vector<std::string>{"GET a", "PATCH a"}));
  // Terminated: the final status, then the delete.
  statuses_.SetPodStatus("uid-a", api::PodStatus{.phase = "Succeeded"});
  SetTerminated(true);
  syncer_->SyncBatch();
  EXPECT_EQ(client_.TakeCalls(), (std::vector<std::string>{"GET a", "PATCH a", "DELETE a uid-a"}));
  EXPECT_EQ(client_.patches().back().second["status"]["phase"], "Succeeded");
  // Done: no more calls for it.
  syncer_->SyncBatch();
  EXPECT_TRUE(client_.TakeCalls().empty());
}

TEST_F(ApiStatusSyncerTest, NotDeletedBeforeTerminated) {
  client_.Put("a", "uid-a");
  api::Pod pod = MakePod("a", "uid-a");
  pod.metadata.deletion_timestamp = api::Time::FromUnix(1700000000);
  SetPods({pod});
  syncer_->SyncBatch();
  EXPECT_TRUE(client_.TakeCalls().empty());
}

TEST_F(ApiStatusSyncerTest, NotifyRunsARound) {
  client_.Put("a", "uid-a");
  SetPods({MakePod("a", "uid-a")});
  syncer_->Start();
  statuses_.SetPodStatus("uid-a", Running());
  syncer_->Notify();
  absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (client_.patches().empty() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  syncer_->Stop();
  EXPECT_EQ(client_.patches().size(), 1u);
}

ApiStatusSyncerOptions WithHold() {
  ApiStatusSyncerOptions o;
  o.first_status_hold = absl::Seconds(2);
  return o;
}

TEST_F(ApiStatusSyncerTest, StartingStatusIsHeldUntilTheContainersRun) {
  StartHeldPod();
  syncer_->SyncBatch();
  EXPECT_TRUE(client_.TakeCalls().empty());
  clock_.Advance(absl::Seconds(1));
  statuses_.SetPodStatus("uid-a", Running());
  syncer_->SyncBatch();
  // One patch: the pod's first status is already Running.
  EXPECT_EQ(client_.TakeCalls(), (std::vector<std::string>{"GET a", "PATCH a"}));
  EXPECT_EQ(client_.patches().back().second["status"]["phase"], "Running");
}

TEST_F(ApiStatusSyncerTest, StartingStatusGoesWhenTheHoldEnds) {
  StartHeldPod();
  syncer_->SyncBatch();
  clock_.Advance(absl::Milliseconds(1500));
  // A newer starting status keeps the hold's start.
  api::PodStatus later = Starting();
  later.pod_ip = "10.0.0.5";
  statuses_.SetPodStatus("uid-a", later);
  syncer_->SyncBatch();
  EXPECT_TRUE(client_.TakeCalls().empty());
  clock_.Advance(absl::Milliseconds(500));
  syncer_->SyncBatch();
  EXPECT_EQ(client_.TakeCalls(), (std::vector<std::string>{"GET a", "PATCH a"}));
  EXPECT_EQ(client_.patches().back().second["status"]["containerStatuses"][0]["state"]["waiting"]
                                           ["reason"],
            "ContainerCreating");
  EXPECT_EQ(client_.patches().back().second["status"]["podIP"], "10.0.0.5");
  // Only a pod's first status is held.
  statuses_.SetPodStatus("uid-a", Starting());
  syncer_->SyncBatch();
  EXPECT_EQ(client_.TakeCalls(), (std::vector<std::string>{"GET a", "PATCH a"}));
}

TEST_F(ApiStatusSyncerTest, OtherFirstStatusesAreNotHeld) {
  Make(WithHold());
  client_.Put("a", "uid-a");
  client_.Put("b", "uid-b");
  api::Pod b = MakePod("b", "uid-b");
  b.metadata.deletion_timestamp = api::Time::FromUnix(1700000000);
  SetPods({MakePod("a", "uid-a"), b});
  api::PodStatus pull_error = Starting();
  pull_error.container_statuses[0].state.waiting->reason = "ErrImagePull";
  statuses_.SetPodStatus("uid-a", pull_error);
  statuses_.SetPodStatus("uid-b", Starting());
  SetFirstSyncPending("uid-a", true);
  SetFirstSyncPending("uid-b", true);
  SetTerminated(true);
  syncer_->SyncBatch();
  // The pull error goes at once; so does the deleted pod's status, before its DELETE.
  EXPECT_EQ(client_.TakeCalls(),
            (std::vector<std::string>{"GET a", "PATCH a", "GET b", "PATCH b", "DELETE b uid-b"}));
}

TEST_F(ApiStatusSyncerTest, StartingStatusGoesWhenTheFirstSyncEnds) {
  Make(WithHold());
  client_.Put("a", "uid-a");
  client_.Put("b", "uid-b");
  SetPods({MakePod("a", "uid-a"), MakePod("b", "uid-b")});
  SetFirstSyncPending("uid-a", true);
  statuses_.SetPodStatus("uid-a", Starting());
  // b's first sync is over (its containers wait for something): nothing to hold.
  statuses_.SetPodStatus("uid-b", Starting());
  syncer_->SyncBatch();
  EXPECT_EQ(client_.TakeCalls(), (std::vector<std::string>{"GET b", "PATCH b"}));
  // a's first sync ends with its containers still waiting: its status goes at once.
  SetFirstSyncPending("uid-a", false);
  syncer_->SyncBatch();
  EXPECT_EQ(client_.TakeCalls(), (std::vector<std::string>{"GET a", "PATCH a"}));
}

TEST_F(ApiStatusSyncerTest, APreparingFirstSyncHoldsOnlyUntilItsGraceEnds) {
  StartHeldPod();
  // Still preparing (a volume that does not mount): held only until the kubelet's grace.
  SetHoldUntil("uid-a", clock_.Now() + absl::Milliseconds(100));
  syncer_->SyncBatch();
  EXPECT_TRUE(client_.TakeCalls().empty());
  clock_.Advance(absl::Milliseconds(100));
  syncer_->SyncBatch();
  EXPECT_EQ(client_.TakeCalls(), (std::vector<std::string>{"GET a", "PATCH a"}));
}

TEST_F(ApiStatusSyncerTest, TheSyncerThreadWakesWhenAHoldEnds) {
  StartHeldPod();
  syncer_->Start();
  syncer_->Notify();
  absl::Time deadline = absl::Now() + absl::Seconds(10);
  // Advance the fake clock in small steps until the held status is pushed (well before the
  // 10 s sync period).
  absl::Duration advanced;
  while (client_.patches().empty() && absl::Now() < deadline) {
    clock_.Advance(absl::Milliseconds(100));
    advanced += absl::Milliseconds(100);
    absl::SleepFor(absl::Milliseconds(5));
  }
  syncer_->Stop();
  ASSERT_EQ(client_.patches().size(), 1u);
  EXPECT_EQ(client_.patches().back().second["status"]["containerStatuses"][0]["state"]["waiting"]
                                           ["reason"],
            "ContainerCreating");
  EXPECT_LT(advanced, absl::Seconds(10));
}

}  // namespace
}  // namespace kubelet::status

namespace kubelet::status {
namespace {

// A condition that loses its reason and message (Ready turning True) has them deleted with
// null: the API server's merge by type would keep them otherwise.
TEST(ApiStatusSyncerPatch, ConditionKeysThatWentAwayAreNulled) {
  nlohmann::json old_s = {{"phase", "Running"},
                          {"conditions",
                           {{{"type", "Ready"},
                             {"status", "False"},
                             {"reason", "ContainersNotReady"},
                             {"message", "containers with unready status: [main]"}}}}};
  nlohmann::json new_s = {{"phase", "Running"},
                          {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}};
  auto patch = ApiStatusSyncer::StatusPatch("u", old_s, new_s);
  ASSERT_TRUE(patch.has_value());
  nlohmann::json p = nlohmann::json::parse(*patch);
  ASSERT_EQ(p["status"]["conditions"].size(), 1u);
  const nlohmann::json& c = p["status"]["conditions"][0];
  EXPECT_EQ(c["status"], "True");
  EXPECT_TRUE(c.contains("reason") && c["reason"].is_null()) << c.dump();
  EXPECT_TRUE(c.contains("message") && c["message"].is_null()) << c.dump();
  // A new condition carries no nulls.
  auto added = ApiStatusSyncer::StatusPatch("u", nlohmann::json::object(), new_s);
  ASSERT_TRUE(added.has_value());
  EXPECT_EQ(nlohmann::json::parse(*added)["status"]["conditions"][0].size(), 2u);
}

TEST(ApiStatusSyncerPatchTest, ResizeStatusIsTheKubeletsWithInPlaceResize) {
  const nlohmann::json old_status = {{"phase", "Running"}, {"resize", "InProgress"}};
  const nlohmann::json new_status = {{"phase", "Running"}};
  // Without the gate the API's resize status is left alone.
  EXPECT_EQ(ApiStatusSyncer::StatusPatch("uid-1", old_status, new_status), std::nullopt);
  std::optional<std::string> patch =
      ApiStatusSyncer::StatusPatch("uid-1", old_status, new_status, /*owns_resize=*/true);
  ASSERT_TRUE(patch.has_value());
  EXPECT_NE(patch->find(R"("resize":null)"), std::string::npos) << *patch;
  // A decision of ours goes out as any field.
  patch = ApiStatusSyncer::StatusPatch("uid-1", new_status,
                                       {{"phase", "Running"}, {"resize", "Deferred"}}, true);
  ASSERT_TRUE(patch.has_value());
  EXPECT_NE(patch->find(R"("resize":"Deferred")"), std::string::npos) << *patch;
}

}  // namespace
}  // namespace kubelet::status
