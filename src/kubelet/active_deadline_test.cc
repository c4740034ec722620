// activeDeadlineSeconds through the Kubelet (upstream's activeDeadlineHandler): a pod past its
// deadline ends Failed / DeadlineExceeded with its containers killed and a Normal event, on
// creation, on the sync tick, and when an UPDATE shortens the deadline of a running pod.
// The Kubelet runs on a FakeClock with its production periods: the test moves time forward.
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "api/pod_defaults.h"
#include "common/testing/eventually.h"
#include "cri/testing/fake_runtime.h"
#include "gtest/gtest.h"
#include "kubelet/container/testing/fake_container_runtime.h"
#include "kubelet/events/testing/fake_recorder.h"
#include "kubelet/kubelet.h"
#include "kubelet/podsource/api_source.h"
#include "kubelet/testing/kubelet_test_util.h"

namespace kubelet {
namespace {

using testing::Eventually;
using testing::RuntimeStatus;

api::Pod ApiPod(const std::string& name, std::optional<int64_t> deadline) {
  api::Pod pod;
  pod.metadata.name = name;
  pod.metadata.namespace_ = "default";
  pod.metadata.uid = "uid-" + name;
  pod.spec.node_name = "node1";
  api::Container c;
  c.name = "main";
  c.image = "busybox";
  pod.spec.containers.push_back(c);
  pod.spec.active_deadline_seconds = deadline;
  api::SetDefaultsPod(&pod);
  return pod;
}

container::PodStatus RunningStatus(const api::Pod& pod) {
  container::PodStatus rs;
  rs.id = pod.metadata.uid;
  rs.name = pod.metadata.name;
  rs.namespace_ = pod.metadata.namespace_;
  container::SandboxStatus sb;
  sb.id = "sb-" + pod.metadata.name;
  sb.ready = true;
  sb.ips = {"10.0.0.7"};
  rs.sandbox_statuses.push_back(sb);
  rs.ips = {"10.0.0.7"};
  container::ContainerStatus cs;
  cs.id = {"fake", "c-" + pod.metadata.name};
  cs.name = "main";
  cs.state = container::State::kRunning;
  cs.started_at = absl::FromUnixSeconds(1700000000);
  rs.container_statuses.push_back(cs);
  return rs;
}

class ActiveDeadlineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cri_.SetRuntimeStatus(RuntimeStatus());
    KubeletOptions o;
    o.node_name = "node1";
    o.root_dir = ::testing::TempDir() + "/deadline-kubelet-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name();
    o.recorder = &recorder_;
    o.extra_sources.push_back(
        {.name = podsource::kApiSourceName, .start = [this](podsource::PodConfig& c) {
           absl::MutexLock lock(&mu_);
           config_ = &c;
           return absl::OkStatus();
         }});
    kubelet_ = std::make_unique<Kubelet>(std::move(o), cri_, runtime_, clock_);
    ASSERT_TRUE(kubelet_->Start().ok());
  }
  void TearDown() override { kubelet_->Stop(); }

  // Moves the fake clock forward a tenth of a second at a time until `pred` holds (false after
  // ten minutes of virtual time): the Kubelet's loops see time pass as they would for real.
  template <typename Pred>
  bool AdvanceUntil(Pred pred) {
    const absl::Time limit = clock_.Now() + absl::Minutes(10);
    while (clock_.Now() < limit) {
      if (pred()) return true;
      clock_.Advance(absl::Milliseconds(100));
      absl::SleepFor(absl::Milliseconds(2));
    }
    return pred();
  }
  // Advances the fake clock by `d`, a tenth of a second at a time.
  void AdvanceBy(absl::Duration d) {
    const absl::Time until = clock_.Now() + d;
    AdvanceUntil([&] { return clock_.Now() >= until; });
  }
  bool Running(const std::string& uid) const {
    auto st = Status(uid);
    return st && st->phase == "Running";
  }

  void SetPods(std::vector<api::Pod> pods) {
    // The runtime lists and reports each pod with its container running (the PLEG's relist
    // puts that in the cache the pod workers read).
    std::vector<container::Pod> listed;
    for (const api::Pod& p : pods) {
      runtime_.SetStatus(p.metadata.uid, RunningStatus(p));
      container::Pod rp;
      rp.id = p.metadata.uid;
      rp.name = p.metadata.name;
      rp.namespace_ = p.metadata.namespace_;
      container::Container c;
      c.id = {"fake", "c-" + p.metadata.name};
      c.name = "main";
      c.state = container::State::kRunning;
      rp.containers.push_back(c);
      container::Container sb;
      sb.id = {"fake", "sb-" + p.metadata.name};
      sb.state = container::State::kRunning;
      rp.sandboxes.push_back(sb);
      listed.push_back(rp);
    }
    runtime_.SetPods(listed);
    podsource::PodConfig* c = nullptr;
    ASSERT_TRUE(Eventually([&] {
      absl::MutexLock lock(&mu_);
      c = config_;
      return c != nullptr;
    }));
    c->SetSource(podsource::kApiSourceName, testing::SharedPods(std::move(pods)));
  }
  std::optional<api::PodStatus> Status(const std::string& uid) const {
    auto st = kubelet_->status_manager().GetPodStatus(uid);
    if (!st) return std::nullopt;
    return st->status;
  }
  bool Killed(const std::string& uid) const {
    for (const std::string& c : runtime_.Calls()) {
      if (c == "KillPod:" + uid) return true;
    }
    return false;
  }
  bool Failed(const std::string& uid) const {
    auto st = Status(uid);
    return st && st->phase == "Failed";
  }

  cri::FakeRuntime cri_;
  container::FakeContainerRuntime runtime_;
  FakeClock clock_;
  events::FakeRecorder recorder_;
  absl::Mutex mu_;
  podsource::PodConfig* config_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::unique_ptr<Kubelet> kubelet_;
};

TEST_F(ActiveDeadlineTest, PodPastItsDeadlineFailsWithUpstreamReason) {
  api::Pod pod = ApiPod("short", 30);
  SetPods({pod});
  ASSERT_TRUE(AdvanceUntil([&] { return Running(pod.metadata.uid); }));
  const absl::Time start = absl::FromUnixSeconds(Status(pod.metadata.uid)->start_time->seconds);
  // Thirty seconds after its start time, and not before, the sync tick ends it.
  ASSERT_TRUE(AdvanceUntil([&] { return Failed(pod.metadata.uid); }));
  EXPECT_GE(clock_.Now() - start, absl::Seconds(30));
  api::PodStatus st = *Status(pod.metadata.uid);
  EXPECT_EQ(st.reason, "DeadlineExceeded");
  EXPECT_EQ(st.message, "Pod was active on the node longer than the specified deadline");
  for (const api::PodCondition& c : st.conditions) {
    EXPECT_NE(c.type, "DisruptionTarget");
    if (c.type == "Ready") EXPECT_EQ(c.reason, "PodFailed");
  }
  EXPECT_TRUE(AdvanceUntil([&] { return Killed(pod.metadata.uid); }));
  auto events = recorder_.WithReason("DeadlineExceeded");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].type, "Normal");
  EXPECT_EQ(events[0].message, "Pod was active on the node longer than the specified deadline");
  // The final status (after the kill) keeps the reason.
  AdvanceBy(absl::Seconds(5));
  EXPECT_EQ(Status(pod.metadata.uid)->reason, "DeadlineExceeded");
}

TEST_F(ActiveDeadlineTest, UpdateShorteningTheDeadlineEndsARunningPod) {
  api::Pod pod = ApiPod("long", 3600);
  api::Pod other = ApiPod("other", std::nullopt);
  SetPods({pod, other});
  ASSERT_TRUE(AdvanceUntil([&] { return Running(pod.metadata.uid); }));
  AdvanceBy(absl::Minutes(2));
  EXPECT_FALSE(Failed(pod.metadata.uid));
  EXPECT_FALSE(Killed(pod.metadata.uid));

  api::Pod updated = pod;
  updated.spec.active_deadline_seconds = 60;  // the pod has run for two minutes
  SetPods({updated, other});
  ASSERT_TRUE(AdvanceUntil([&] { return Failed(pod.metadata.uid); }));
  EXPECT_EQ(Status(pod.metadata.uid)->reason, "DeadlineExceeded");
  EXPECT_TRUE(AdvanceUntil([&] { return Killed(pod.metadata.uid); }));
  // The pod without a deadline is untouched.
  EXPECT_EQ(Status(other.metadata.uid)->phase, "Running");
  EXPECT_FALSE(Killed(other.metadata.uid));
}

TEST_F(ActiveDeadlineTest, DeadlineCountsFromTheStartTimeTheApiServerHolds) {
  // A pod the kubelet first sees (e.g. after a restart) with a start time long past.
  api::Pod pod = ApiPod("restarted", 60);
  pod.status.phase = "Running";
  pod.status.start_time = api::Time::FromUnix(absl::ToUnixSeconds(clock_.Now()) - 120);
  SetPods({pod});
  ASSERT_TRUE(AdvanceUntil([&] { return Failed(pod.metadata.uid); }));
  EXPECT_EQ(Status(pod.metadata.uid)->reason, "DeadlineExceeded");
  // The start time is kept from the API status.
  EXPECT_EQ(Status(pod.metadata.uid)->start_time->seconds, pod.status.start_time->seconds);
}

}  // namespace
}  // namespace kubelet
