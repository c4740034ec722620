// Mirror pods: the pod manager keeping them apart, the mirror object, and the Kubelet creating,
// recreating and deleting them against a fake API server (which also plays the watch: every
// change is delivered back through the "api" source, as the reflector would).
#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/pod_defaults.h"
#include "api/static_pod.h"
#include "cri/testing/fake_runtime.h"
#include "gtest/gtest.h"
#include "kubelet/container/testing/fake_container_runtime.h"
#include "kubelet/kubelet.h"
#include "kubelet/mirror_client.h"
#include "kubelet/pod_manager.h"
#include "kubelet/podsource/api_source.h"
#include "kubelet/status/testing/fake_pod_status_client.h"
#include "kubelet/testing/kubelet_test_util.h"

namespace kubelet {
namespace {

constexpr char kNode[] = "node1";
constexpr char kNodeUid[] = "node-uid-1";

using testing::Eventually;
using testing::RuntimeStatus;

api::Pod StaticPod(const std::string& base, const std::string& image = "busybox") {
  api::Pod pod;
  pod.metadata.name = base;
  api::Container c;
  c.name = "main";
  c.image = image;
  pod.spec.containers.push_back(c);
  api::SetDefaultsPod(&pod);
  absl::Status st = api::ApplyStaticPodDefaults(&pod, kNode, api::kFileSource,
                                                "/etc/kubernetes/manifests/" + base + ".yaml");
  EXPECT_TRUE(st.ok()) << st;
  return pod;
}

api::Pod MirrorOf(const api::Pod& static_pod, const std::string& uid) {
  api::Pod m = BuildMirrorPod(static_pod, kNode, kNodeUid);
  m.metadata.uid = uid;
  return m;
}

// ---------------------------------------------------------------------------------------------
// Pure parts.

TEST(MirrorPod, BuildIsWhatNodeRestrictionAccepts) {
  api::Pod s = StaticPod("web");
  s.metadata.resource_version = "12";
  api::Pod m = BuildMirrorPod(s, kNode, kNodeUid);
  EXPECT_TRUE(m.metadata.uid.empty());
  EXPECT_TRUE(m.metadata.resource_version.empty());
  EXPECT_EQ(m.metadata.name, "web-node1");
  EXPECT_EQ(m.metadata.namespace_, "default");
  EXPECT_EQ(m.spec.node_name, kNode);
  EXPECT_EQ(m.metadata.annotations.at(api::kConfigMirrorAnnotationKey), s.metadata.uid);
  EXPECT_EQ(m.metadata.annotations.at(api::kConfigHashAnnotationKey), s.metadata.uid);
  ASSERT_EQ(m.metadata.owner_references.size(), 1u);
  const api::OwnerReference& o = m.metadata.owner_references[0];
  EXPECT_EQ(o.api_version, "v1");
  EXPECT_EQ(o.kind, "Node");
  EXPECT_EQ(o.name, kNode);
  EXPECT_EQ(o.uid, kNodeUid);
  EXPECT_EQ(o.controller, std::optional<bool>(true));
  EXPECT_FALSE(o.block_owner_deletion.has_value());
  EXPECT_TRUE(m.spec.service_account_name.empty());
  EXPECT_TRUE(api::IsMirrorPod(m));

  EXPECT_TRUE(IsMirrorPodOf(m, s));
  EXPECT_TRUE(IsMirrorPodOwnedByNode(m, kNode, kNodeUid));
  EXPECT_FALSE(IsMirrorPodOwnedByNode(m, kNode, "other-uid"));
  EXPECT_FALSE(IsMirrorPodOf(m, StaticPod("web", "other-image")));  // another hash
  EXPECT_FALSE(IsMirrorPodOf(m, StaticPod("db")));
}

TEST(PodManagerMirror, MirrorPodsAreKeptApartAndTranslated) {
  PodManager pm;
  api::Pod s = StaticPod("web");
  api::Pod m = MirrorOf(s, "mirror-1");
  pm.AddOrUpdatePod(m);
  EXPECT_EQ(pm.Size(), 0u);
  EXPECT_TRUE(pm.GetPods().empty());
  EXPECT_EQ(pm.GetPodByUID("mirror-1"), nullptr);
  ASSERT_EQ(pm.GetOrphanedMirrorPods().size(), 1u);
  EXPECT_EQ(pm.GetPodByMirrorPod(m), nullptr);

  pm.AddOrUpdatePod(s);
  EXPECT_EQ(pm.Size(), 1u);
  EXPECT_TRUE(pm.GetOrphanedMirrorPods().empty());
  ASSERT_NE(pm.GetMirrorPodByPod(s), nullptr);
  EXPECT_EQ(pm.GetMirrorPodByPod(s)->metadata.uid, "mirror-1");
  ASSERT_NE(pm.GetPodByMirrorPod(m), nullptr);
  EXPECT_EQ(pm.GetPodByMirrorPod(m)->metadata.uid, s.metadata.uid);

  // A recreated mirror replaces the old one; removing the old UID later keeps the new one.
  pm.AddOrUpdatePod(MirrorOf(s, "mirror-2"));
  pm.RemovePod("mirror-1");
  ASSERT_NE(pm.GetMirrorPodByPod(s), nullptr);
  EXPECT_EQ(pm.GetMirrorPodByPod(s)->metadata.uid, "mirror-2");
  pm.RemovePod("mirror-2");
  EXPECT_EQ(pm.GetMirrorPodByPod(s), nullptr);
  EXPECT_EQ(pm.Size(), 1u);

  pm.AddOrUpdatePod(MirrorOf(s, "mirror-3"));
  pm.RemovePod(s.metadata.uid);
  ASSERT_EQ(pm.GetOrphanedMirrorPods().size(), 1u);
  EXPECT_EQ(pm.GetOrphanedMirrorPods()[0]->metadata.uid, "mirror-3");
}

// ---------------------------------------------------------------------------------------------
// The Kubelet against a fake API server.

// Pods by "<ns>/<name>"; creates and deletes are logged and delivered back to the "api" source.
// The status client's view of the API (status()) holds the same pods.
class FakeApi final : public MirrorClient {
 public:
  absl::Status CreateMirrorPod(const api::Pod& mirror) override {
    {
      absl::MutexLock lock(&mu_);
      creates_.push_back(mirror);
      const std::string key = mirror.metadata.namespace_ + "/" + mirror.metadata.name;
      if (pods_.count(key)) return absl::AlreadyExistsError("already exists");
      api::Pod stored = mirror;
      stored.metadata.uid = absl::StrCat("mirror-", ++next_uid_);
      pods_[key] = stored;
      status_.Put(stored.metadata.name, stored.metadata.uid, stored.metadata.namespace_);
    }
    Deliver();
    return absl::OkStatus();
  }
  absl::Status DeleteMirrorPod(const std::string& ns, const std::string& name,
                               const std::string& uid) override {
    {
      absl::MutexLock lock(&mu_);
      deletes_.push_back(name + " " + uid);
      auto it = pods_.find(ns + "/" + name);
      if (it == pods_.end()) return absl::NotFoundError("not found");
      if (!uid.empty() && it->second.metadata.uid != uid) return absl::AbortedError("conflict");
      pods_.erase(it);
      status_.Erase(name, ns);
    }
    Deliver();
    return absl::OkStatus();
  }
  // As an admin would: put an object (its uid given), delete one at once, or mark it deleting.
  void Put(const api::Pod& pod) {
    {
      absl::MutexLock lock(&mu_);
      pods_[pod.metadata.namespace_ + "/" + pod.metadata.name] = pod;
      status_.Put(pod.metadata.name, pod.metadata.uid, pod.metadata.namespace_);
    }
    Deliver();
  }
  void Remove(const std::string& name) {
    {
      absl::MutexLock lock(&mu_);
      pods_.erase("default/" + name);
      status_.Erase(name);
    }
    Deliver();
  }
  void MarkDeleting(const std::string& name) {
    {
      absl::MutexLock lock(&mu_);
      api::Pod& p = pods_.at("default/" + name);
      p.metadata.deletion_timestamp = api::Time::FromUnix(1700000000);
      p.metadata.deletion_grace_period_seconds = 30;
    }
    Deliver();
  }

  void SetConfig(podsource::PodConfig* config) {
    absl::MutexLock lock(&mu_);
    config_ = config;
  }
  void Deliver() {
    std::vector<api::Pod> pods;
    podsource::PodConfig* config;
    {
      absl::MutexLock lock(&mu_);
      config = config_;
      for (const auto& [key, pod] : pods_) pods.push_back(pod);
    }
    if (config != nullptr)
      config->SetSource(podsource::kApiSourceName, testing::SharedPods(std::move(pods)));
  }

  std::optional<api::Pod> Get(const std::string& name) {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find("default/" + name);
    if (it == pods_.end()) return std::nullopt;
    return it->second;
  }
  std::vector<api::Pod> creates() {
    absl::MutexLock lock(&mu_);
    return creates_;
  }
  // The mirror pods deleted ("<name> <uid>"), then the status client's DELETEs
  // ("status-syncer <name> <uid>").
  std::vector<std::string> deletes() {
    std::vector<std::string> out;
    {
      absl::MutexLock lock(&mu_);
      out = deletes_;
    }
    for (const std::string& call : status_.calls()) {
      if (call.rfind("DELETE ", 0) == 0) out.push_back("status-syncer " + call.substr(7));
    }
    return out;
  }
  std::vector<std::pair<std::string, nlohmann::json>> patches() { return status_.patches(); }
  status::testing::FakePodStatusClient& status() { return status_; }

 private:
  absl::Mutex mu_;
  podsource::PodConfig* config_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::map<std::string, api::Pod> pods_ ABSL_GUARDED_BY(mu_);
  int next_uid_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<api::Pod> creates_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> deletes_ ABSL_GUARDED_BY(mu_);
  status::testing::FakePodStatusClient status_;
};

class MirrorPodsTest : public ::testing::Test {
 protected:
  void SetUp() override { cri_.SetRuntimeStatus(RuntimeStatus()); }
  void TearDown() override {
    if (kubelet_) kubelet_->Stop();
  }

  void StartKubelet(bool with_mirror_client = true) {
    KubeletOptions o;
    o.node_name = kNode;
    o.root_dir = ::testing::TempDir() + "/mirror-kubelet-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name();
    o.sync_tick = absl::Milliseconds(20);
    o.housekeeping_period = absl::Milliseconds(50);
    o.pleg_relist_period = absl::Milliseconds(20);
    o.runtime_status_period = absl::Milliseconds(50);
    o.extra_sources.push_back({.name = api::kFileSource, .start = [this](podsource::PodConfig& c) {
                                 absl::MutexLock lock(&mu_);
                                 config_ = &c;
                                 return absl::OkStatus();
                               }});
    o.extra_sources.push_back(
        {.name = podsource::kApiSourceName, .start = [this](podsource::PodConfig& c) {
           api_.SetConfig(&c);
           return absl::OkStatus();
         }});
    o.status_client = &api_.status();
    if (with_mirror_client) {
      o.mirror_client = &api_;
      o.node_uid = [this]() -> std::optional<std::string> {
        if (!node_known_.load()) return std::nullopt;
        return std::string(kNodeUid);
      };
    }
    kubelet_ = std::make_unique<Kubelet>(std::move(o), cri_, runtime_, clock_);
    ASSERT_TRUE(kubelet_->Start().ok());
    api_.Deliver();
  }
  void SetStaticPods(std::vector<api::Pod> pods) {
    podsource::PodConfig* c;
    {
      absl::MutexLock lock(&mu_);
      c = config_;
    }
    ASSERT_NE(c, nullptr);
    c->SetSource(api::kFileSource, testing::SharedPods(std::move(pods)));
  }
  bool Called(const std::string& call) {
    for (const std::string& c : runtime_.Calls()) {
      if (c == call) return true;
    }
    return false;
  }
  bool RanOnly(const std::string& static_uid) {
    for (const std::string& c : runtime_.Calls()) {
      if (c.rfind("SyncPod:", 0) == 0 && c != "SyncPod:" + static_uid) return false;
    }
    return true;
  }
  std::string MirrorUid(const std::string& name) {
    auto p = api_.Get(name);
    return p ? p->metadata.uid : "";
  }

  cri::FakeRuntime cri_;
  container::FakeContainerRuntime runtime_;
  RealClock clock_;
  FakeApi api_;
  std::atomic<bool> node_known_{true};
  absl::Mutex mu_;
  podsource::PodConfig* config_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::unique_ptr<Kubelet> kubelet_;
};

TEST_F(MirrorPodsTest, MirrorPodIsCreatedNeverRunAndGetsTheStatus) {
  StartKubelet();
  api::Pod s = StaticPod("web");
  SetStaticPods({s});
  ASSERT_TRUE(Eventually([&] { return api_.Get("web-node1").has_value(); }));
  const api::Pod created = api_.creates().at(0);
  EXPECT_TRUE(created.metadata.uid.empty());
  EXPECT_EQ(created.metadata.annotations.at(api::kConfigMirrorAnnotationKey), s.metadata.uid);
  ASSERT_EQ(created.metadata.owner_references.size(), 1u);
  EXPECT_EQ(created.metadata.owner_references[0].uid, kNodeUid);

  // The mirror pod comes back through the API source: stored apart, never run.
  const std::string mirror_uid = MirrorUid("web-node1");
  ASSERT_TRUE(Eventually([&] {
    auto m = kubelet_->pod_manager().GetMirrorPodByPod(s);
    return m && m->metadata.uid == mirror_uid;
  }));
  // The mirror pod is created early in the static pod's sync, before the
  // runtime is asked to run it: wait for that call rather than assume it.
  ASSERT_TRUE(Eventually([&] { return Called("SyncPod:" + s.metadata.uid); }));
  EXPECT_TRUE(RanOnly(s.metadata.uid));
  EXPECT_EQ(kubelet_->pod_manager().Size(), 1u);
  ASSERT_EQ(kubelet_->GetPodsWithStatus().size(), 1u);  // /pods: the static pod only
  EXPECT_EQ(kubelet_->GetPodsWithStatus()[0].metadata.uid, s.metadata.uid);

  // The static pod's status goes to the mirror pod, with its UID as precondition.
  ASSERT_TRUE(Eventually([&] {
    for (const auto& [name, patch] : api_.patches()) {
      if (name == "web-node1" && patch["metadata"]["uid"] == mirror_uid) return true;
    }
    return false;
  }));
  // Nothing deleted, nothing created twice.
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_TRUE(api_.deletes().empty());
  EXPECT_EQ(api_.creates().size(), 1u);
}

TEST_F(MirrorPodsTest, DeletedMirrorPodIsRecreatedWithoutTouchingThePod) {
  StartKubelet();
  api::Pod s = StaticPod("web");
  SetStaticPods({s});
  ASSERT_TRUE(Eventually([&] { return !MirrorUid("web-node1").empty(); }));
  const std::string first = MirrorUid("web-node1");
  // The kubelet has seen it come back through its source (else it has nothing to react to
  // until its next periodic sync).
  ASSERT_TRUE(Eventually([&] {
    auto m = kubelet_->pod_manager().GetMirrorPodByPod(s);
    return m != nullptr && m->metadata.uid == first;
  }));

  // Deleted outright (grace 0): the REMOVE syncs the static pod, which creates it again.
  api_.Remove("web-node1");
  ASSERT_TRUE(Eventually([&] {
    std::string uid = MirrorUid("web-node1");
    return !uid.empty() && uid != first;
  }));
  const std::string second = MirrorUid("web-node1");
  ASSERT_TRUE(Eventually([&] {
    auto m = kubelet_->pod_manager().GetMirrorPodByPod(s);
    return m != nullptr && m->metadata.uid == second;
  }));

  // kubectl delete (graceful): the kubelet deletes it with the UID precondition, recreates it.
  api_.MarkDeleting("web-node1");
  ASSERT_TRUE(Eventually([&] {
    std::string uid = MirrorUid("web-node1");
    return !uid.empty() && uid != second;
  }));
  std::vector<std::string> deletes = api_.deletes();
  EXPECT_NE(std::find(deletes.begin(), deletes.end(), "web-node1 " + second), deletes.end());
  EXPECT_FALSE(Called("KillPod:" + s.metadata.uid));
  EXPECT_TRUE(RanOnly(s.metadata.uid));
}

TEST_F(MirrorPodsTest, OutdatedMirrorPodIsReplaced) {
  api::Pod old_static = StaticPod("web", "old-image");
  api::Pod stale = MirrorOf(old_static, "stale-uid");
  api_.Put(stale);
  // Not owned by this node either: another Node uid.
  api::Pod s = StaticPod("web");
  api::Pod db = StaticPod("db");
  api::Pod foreign = MirrorOf(db, "foreign-uid");
  foreign.metadata.owner_references[0].uid = "old-node-uid";
  api_.Put(foreign);
  StartKubelet();
  SetStaticPods({s, db});
  ASSERT_TRUE(Eventually([&] {
    auto web = api_.Get("web-node1");
    auto dbm = api_.Get("db-node1");
    return web && web->metadata.uid != "stale-uid" && dbm && dbm->metadata.uid != "foreign-uid";
  }));
  auto web = api_.Get("web-node1");
  EXPECT_EQ(web->metadata.annotations.at(api::kConfigMirrorAnnotationKey), s.metadata.uid);
  std::vector<std::string> deletes = api_.deletes();
  EXPECT_NE(std::find(deletes.begin(), deletes.end(), "web-node1 stale-uid"), deletes.end());
  EXPECT_NE(std::find(deletes.begin(), deletes.end(), "db-node1 foreign-uid"), deletes.end());
  for (const std::string& c : runtime_.Calls()) {
    EXPECT_NE(c, "SyncPod:stale-uid");
    EXPECT_NE(c, "SyncPod:foreign-uid");
  }
}

TEST_F(MirrorPodsTest, OrphanedMirrorPodsAreDeleted) {
  // A mirror pod whose static pod no longer exists (e.g. removed while the kubelet was down).
  api_.Put(MirrorOf(StaticPod("gone"), "orphan-uid"));
  StartKubelet();
  api::Pod s = StaticPod("web");
  SetStaticPods({s});
  ASSERT_TRUE(Eventually([&] { return !api_.Get("gone-node1").has_value(); }));
  ASSERT_TRUE(Eventually([&] { return api_.Get("web-node1").has_value(); }));
  std::vector<std::string> deletes = api_.deletes();
  EXPECT_NE(std::find(deletes.begin(), deletes.end(), "gone-node1 orphan-uid"), deletes.end());

  // The static pod's manifest is removed: it stops, then its mirror pod goes.
  SetStaticPods({});
  ASSERT_TRUE(Eventually([&] { return Called("KillPod:" + s.metadata.uid); }));
  ASSERT_TRUE(Eventually([&] { return !api_.Get("web-node1").has_value(); }));
  // The final DELETE of the status syncer never touched it.
  for (const std::string& d : api_.deletes())
    EXPECT_EQ(d.rfind("status-syncer", 0), std::string::npos);
}

TEST_F(MirrorPodsTest, CreatedOnceTheNodeIsKnown) {
  node_known_ = false;
  StartKubelet();
  api::Pod s = StaticPod("web");
  SetStaticPods({s});
  ASSERT_TRUE(Eventually([&] { return Called("SyncPod:" + s.metadata.uid); }));
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_TRUE(api_.creates().empty());
  // No event for the pod: housekeeping notices the Node became known.
  node_known_ = true;
  ASSERT_TRUE(Eventually([&] { return api_.Get("web-node1").has_value(); }));
}

TEST_F(MirrorPodsTest, WithoutMirrorClientMirrorPodsAreStillNeverRun) {
  api::Pod s = StaticPod("web");
  api_.Put(MirrorOf(s, "mirror-x"));
  StartKubelet(/*with_mirror_client=*/false);
  SetStaticPods({s});
  ASSERT_TRUE(Eventually([&] { return Called("SyncPod:" + s.metadata.uid); }));
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_TRUE(RanOnly(s.metadata.uid));
  EXPECT_TRUE(api_.creates().empty());
  EXPECT_TRUE(api_.deletes().empty());
  EXPECT_EQ(kubelet_->pod_manager().Size(), 1u);
}

}  // namespace
}  // namespace kubelet
