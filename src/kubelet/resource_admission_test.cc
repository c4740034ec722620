// What the resource managers see of the pods through the Kubelet: while a batch of pods is being
// admitted (a restarted kubelet receiving every pod of its node at once), the pods after the one
// being admitted already count (ActiveAndAdmittingPods), so no manager frees their CPUs or
// devices meanwhile; and the running container ids the CPU manager's reconcile asks for.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "api/pod_defaults.h"
#include "api/quantity.h"
#include "common/testing/eventually.h"
#include "cri/testing/fake_runtime.h"
#include "gtest/gtest.h"
#include "kubelet/container/testing/fake_container_runtime.h"
#include "kubelet/kubelet.h"
#include "kubelet/podsource/api_source.h"
#include "kubelet/testing/kubelet_test_util.h"

namespace kubelet {
namespace {

using testing::Eventually;
using testing::RuntimeStatus;

api::Pod ApiPod(const std::string& name) {
  api::Pod pod;
  pod.metadata.name = name;
  pod.metadata.namespace_ = "default";
  pod.metadata.uid = "uid-" + name;
  pod.spec.node_name = "node1";
  api::Container c;
  c.name = "main";
  c.image = "busybox";
  pod.spec.containers.push_back(c);
  api::SetDefaultsPod(&pod);
  return pod;
}

// Records, at each admission, which pods the Kubelet says the resource managers must keep.
class Recorder : public container::PodLifecycleParticipant {
 public:
  std::string Name() const override { return "recorder"; }
  container::AdmitDecision Admit(const api::Pod& pod,
                                 const std::vector<api::PodPtr>& admitted) override {
    std::set<std::string> kept;
    for (const api::PodPtr& p : kubelet->ActiveAndAdmittingPods()) kept.insert(p->metadata.uid);
    absl::MutexLock lock(&mu);
    seen[pod.metadata.uid] = kept;
    admitted_counts[pod.metadata.uid] = admitted.size();
    objects[pod.metadata.uid] = &pod;
    admitted_pods[pod.metadata.uid] = admitted;
    return {};
  }
  Kubelet* kubelet = nullptr;
  absl::Mutex mu;
  std::map<std::string, std::set<std::string>> seen ABSL_GUARDED_BY(mu);
  std::map<std::string, size_t> admitted_counts ABSL_GUARDED_BY(mu);
  std::map<std::string, const api::Pod*> objects ABSL_GUARDED_BY(mu);  // the pod admitted
  std::map<std::string, std::vector<api::PodPtr>> admitted_pods ABSL_GUARDED_BY(mu);
};

TEST(ResourceAdmission, PodsOfTheBatchBeingAdmittedAreKeptAndRunningIdsKnown) {
  cri::FakeRuntime cri;
  cri.SetRuntimeStatus(RuntimeStatus());
  container::FakeContainerRuntime runtime;
  RealClock clock;
  Recorder recorder;
  podsource::PodConfig* config = nullptr;
  absl::Mutex mu;
  KubeletOptions o;
  o.node_name = "node1";
  o.root_dir = ::testing::TempDir() + "/resource-admission-kubelet";
  o.participants.push_back(&recorder);
  o.extra_sources.push_back(
      {.name = podsource::kApiSourceName, .start = [&](podsource::PodConfig& c) {
         absl::MutexLock lock(&mu);
         config = &c;
         return absl::OkStatus();
       }});
  Kubelet k(std::move(o), cri, runtime, clock);
  recorder.kubelet = &k;

  // Pod a runs already (found by the relist, as after a restart).
  const container::Pod rp = testing::RuntimePod("uid-a", "a", "c-a", container::State::kRunning);
  runtime.SetPods({rp});
  runtime.SetStatus("uid-a", testing::RuntimePodStatus(rp, container::State::kRunning));

  ASSERT_TRUE(k.Start().ok());
  podsource::PodConfig* cfg = nullptr;
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock lock(&mu);
    cfg = config;
    return cfg != nullptr;
  }));
  cfg->SetSource(podsource::kApiSourceName,
                 testing::SharedPods({ApiPod("a"), ApiPod("b"), ApiPod("c")}));
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock lock(&recorder.mu);
    return recorder.seen.size() == 3;
  }));
  {
    absl::MutexLock lock(&recorder.mu);
    const std::set<std::string> all = {"uid-a", "uid-b", "uid-c"};
    // Every pod of the batch is kept while the first one is admitted...
    EXPECT_EQ(recorder.seen["uid-a"], all);
    EXPECT_EQ(recorder.seen["uid-c"], all);
    // ...while admission itself only counts the pods admitted before.
    EXPECT_EQ(recorder.admitted_counts["uid-a"], 0u);
    EXPECT_EQ(recorder.admitted_counts["uid-c"], 2u);
  }
  // After the batch: the active pods.
  std::set<std::string> after;
  for (const api::PodPtr& p : k.ActiveAndAdmittingPods()) after.insert(p->metadata.uid);
  EXPECT_EQ(after, (std::set<std::string>{"uid-a", "uid-b", "uid-c"}));

  EXPECT_TRUE(Eventually([&] { return k.RunningContainerID("uid-a", "main") == "c-a"; }));
  EXPECT_EQ(k.RunningContainerID("uid-a", "other"), std::nullopt);
  EXPECT_EQ(k.RunningContainerID("uid-x", "main"), std::nullopt);
  k.Stop();
}

// One object per pod version from PodConfig on: the pod admitted, the pods admission counts and
// the pod manager's pods are PodConfig's very objects (also with in-place resize, whose
// allocation equals the requests here, so nothing needs the allocated-requests copy).
TEST(ResourceAdmission, PodConfigsObjectsAreAdmittedAndStoredWithoutCopies) {
  for (const bool in_place : {false, true}) {
    SCOPED_TRACE(in_place ? "in-place resize" : "no in-place resize");
    cri::FakeRuntime cri;
    cri.SetRuntimeStatus(RuntimeStatus());
    container::FakeContainerRuntime runtime;
    RealClock clock;
    Recorder recorder;
    podsource::PodConfig* config = nullptr;
    absl::Mutex mu;
    KubeletOptions o;
    o.node_name = "node1";
    o.root_dir = ::testing::TempDir() + "/shared-objects-kubelet-" + (in_place ? "1" : "0");
    o.in_place_pod_vertical_scaling = in_place;
    o.allocatable = NodeAllocatable{.milli_cpu = 2000, .memory_bytes = int64_t{4} << 30};
    o.participants.push_back(&recorder);
    o.extra_sources.push_back(
        {.name = podsource::kApiSourceName, .start = [&](podsource::PodConfig& c) {
           absl::MutexLock lock(&mu);
           config = &c;
           return absl::OkStatus();
         }});
    Kubelet k(std::move(o), cri, runtime, clock);
    recorder.kubelet = &k;
    ASSERT_TRUE(k.Start().ok());
    podsource::PodConfig* cfg = nullptr;
    ASSERT_TRUE(Eventually([&] {
      absl::MutexLock lock(&mu);
      cfg = config;
      return cfg != nullptr;
    }));
    std::vector<api::Pod> pods = {ApiPod("a"), ApiPod("b")};
    for (api::Pod& p : pods) {
      p.spec.containers[0].resources.requests["cpu"] = *api::ParseQuantity("100m");
      p.spec.containers[0].resources.requests["memory"] = *api::ParseQuantity("64Mi");
    }
    cfg->SetSource(podsource::kApiSourceName, testing::SharedPods(std::move(pods)));
    ASSERT_TRUE(Eventually([&] {
      absl::MutexLock lock(&recorder.mu);
      return recorder.objects.size() == 2;
    }));
    std::map<std::string, api::PodPtr> merged;
    for (const api::PodPtr& p : cfg->MergedState()) merged[p->metadata.uid] = p;
    ASSERT_EQ(merged.size(), 2u);
    absl::MutexLock lock(&recorder.mu);
    for (const std::string uid : {"uid-a", "uid-b"}) {
      EXPECT_EQ(k.pod_manager().GetPodByUID(uid), merged[uid]) << uid;
      EXPECT_EQ(recorder.objects[uid], merged[uid].get()) << uid;
    }
    EXPECT_EQ(recorder.admitted_pods["uid-b"], std::vector<api::PodPtr>{merged["uid-a"]});
    k.Stop();
  }
}

// The kubelet's own terminations (graceful node shutdown): KillPodNow stops the pod, waits until
// it is down and leaves the reason, message and DisruptionTarget in its final status; an unknown
// pod is NotFound.
TEST(KillPodNow, StopsThePodWithTheKubeletsReason) {
  cri::FakeRuntime cri;
  cri.SetRuntimeStatus(RuntimeStatus());
  container::FakeContainerRuntime runtime;
  RealClock clock;
  podsource::PodConfig* config = nullptr;
  absl::Mutex mu;
  KubeletOptions o;
  o.node_name = "node1";
  o.root_dir = ::testing::TempDir() + "/kill-pod-now-kubelet";
  o.extra_sources.push_back(
      {.name = podsource::kApiSourceName, .start = [&](podsource::PodConfig& c) {
         absl::MutexLock lock(&mu);
         config = &c;
         return absl::OkStatus();
       }});
  Kubelet k(std::move(o), cri, runtime, clock);
  ASSERT_TRUE(k.Start().ok());
  podsource::PodConfig* cfg = nullptr;
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock lock(&mu);
    cfg = config;
    return cfg != nullptr;
  }));
  cfg->SetSource(podsource::kApiSourceName, testing::SharedPods({ApiPod("a")}));
  ASSERT_TRUE(Eventually([&] { return k.ActivePods().size() == 1; }));

  status::TerminalReason reason{"Terminated",
                                "Pod was terminated in response to imminent node "
                                "shutdown.",
                                clock.Now()};
  EXPECT_TRUE(k.KillPodNow("uid-a", reason, 3).ok());
  EXPECT_TRUE(k.IsPodTerminated("uid-a"));
  ASSERT_TRUE(Eventually([&] {
    auto st = k.status_manager().GetPodStatus("uid-a");
    return st.has_value() && st->status.phase == "Failed";
  }));
  const api::PodStatus st = k.status_manager().GetPodStatus("uid-a")->status;
  EXPECT_EQ(st.reason, "Terminated");
  EXPECT_EQ(st.message, "Pod was terminated in response to imminent node shutdown.");
  bool disruption = false;
  for (const api::PodCondition& c : st.conditions) {
    if (c.type == "DisruptionTarget") {
      disruption = true;
      EXPECT_EQ(c.status, "True");
      EXPECT_EQ(c.reason, "TerminationByKubelet");
    }
  }
  EXPECT_TRUE(disruption);
  EXPECT_TRUE(k.GetActivePods().empty());
  EXPECT_EQ(k.KillPodNow("uid-x", reason, 3).code(), absl::StatusCode::kNotFound);
  k.Stop();
}

}  // namespace
}  // namespace kubelet
