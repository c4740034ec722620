// In-place resize through the runtime manager (upstream doPodResizeAction): the order of pod
// cgroup and container updates, the memory usage check, RestartContainer, and the resources the
// runtime reports back in container statuses.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/kuberuntime/kuberuntime_manager.h"
#include "kubelet/kuberuntime/labels.h"
#include "kubelet/kuberuntime/test_util.h"

namespace kubelet::kuberuntime {
namespace {

namespace v1 = ::runtime::v1;
using ::testing::ElementsAre;
using testing::MakeContainer;
using testing::MakePod;
using testing::ManagerFixture;

api::Quantity Q(const char* v) { return *api::ParseQuantity(v); }

// A pod cgroup in memory; every write is logged with the number of container updates made
// before it.
struct FakePodCgroup {
  absl::Mutex mu;
  PodCgroupConfig config;
  int64_t usage = 0;
  std::vector<std::string> log;
  cri::FakeRuntime* fake = nullptr;

  void Install(Options* o) {
    o->in_place_pod_vertical_scaling = true;
    o->pod_cgroup_desired = [](const api::Pod& pod) {
      // Guaranteed: the sums of the limits.
      int64_t milli = 0, memory = 0;
      for (const api::Container& c : pod.spec.containers) {
        milli += c.resources.limits.at("cpu").MilliValue();
        memory += c.resources.limits.at("memory").Value();
      }
      PodCgroupConfig d;
      d.cpu_shares = milli * 1024 / 1000;
      d.cpu_quota = milli * 100;
      d.cpu_period = 100000;
      d.memory = memory;
      return d;
    };
    o->get_pod_cgroup_config = [this](const api::Pod&, const std::string&) {
      absl::MutexLock lock(&mu);
      return absl::StatusOr<PodCgroupConfig>(config);
    };
    o->set_pod_cgroup_config = [this](const api::Pod&, const std::string& resource,
                                      const PodCgroupConfig& c) {
      absl::MutexLock lock(&mu);
      const int updates = fake->CallCount("UpdateContainerResources");
      if (c.memory) {
        config.memory = c.memory;
        log.push_back(absl::StrCat(resource, " memory=", *c.memory, " after ", updates));
      }
      if (c.cpu_quota) {
        config.cpu_quota = c.cpu_quota;
        log.push_back(absl::StrCat(resource, " quota=", *c.cpu_quota, " after ", updates));
      }
      if (c.cpu_shares) {
        config.cpu_shares = c.cpu_shares;
        log.push_back(absl::StrCat(resource, " shares=", *c.cpu_shares, " after ", updates));
      }
      return absl::OkStatus();
    };
    o->pod_cgroup_memory_usage = [this](const api::Pod&) {
      absl::MutexLock lock(&mu);
      return absl::StatusOr<int64_t>(usage);
    };
  }
  std::vector<std::string> TakeLog() {
    absl::MutexLock lock(&mu);
    return std::exchange(log, {});
  }
};

api::Container Sized(const std::string& name, const char* cpu, const char* memory) {
  api::Container c = MakeContainer(name);
  c.resources.limits = {{"cpu", Q(cpu)}, {"memory", Q(memory)}};
  c.resources.requests = c.resources.limits;
  return c;
}

// `pod` as the kubelet hands it to the runtime after accepting its resources: running
// containers with their allocation (the spec's requests) and the resources last seen.
api::Pod WithApiStatus(api::Pod pod, const container::PodStatus& rs,
                       const std::vector<api::ResourceRequirements>& seen) {
  pod.status.phase = "Running";
  for (size_t i = 0; i < pod.spec.containers.size(); ++i) {
    const container::ContainerStatus* cs =
        rs.FindContainerStatusByName(pod.spec.containers[i].name);
    if (cs == nullptr) continue;
    api::ContainerStatus s;
    s.name = cs->name;
    s.container_id = cs->id.String();
    s.state.running = api::ContainerStateRunning{};
    s.allocated_resources = pod.spec.containers[i].resources.requests;
    s.resources = seen[i];
    pod.status.container_statuses.push_back(s);
  }
  return pod;
}

struct ResizeFixture {
  ResizeFixture() {
    cgroup.fake = nullptr;
    Options o;
    cgroup.Install(&o);
    f = std::make_unique<ManagerFixture>(o);
    cgroup.fake = &f->fake;
  }
  FakePodCgroup cgroup;
  std::unique_ptr<ManagerFixture> f;
};

TEST(InPlaceResizeTest, GrowsThePodCgroupBeforeAndShrinksItAfterTheContainers) {
  ResizeFixture rf;
  ManagerFixture& f = *rf.f;
  api::Pod pod = MakePod("web", {Sized("app", "1", "256Mi")}, {}, "default", "uid-web");
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  container::PodStatus rs = f.Status(pod);
  const container::ContainerStatus* app = rs.FindContainerStatusByName("app");
  ASSERT_NE(app, nullptr);
  // The runtime reports what the container was created with; the annotation says which part of
  // the spec is not resources.
  ASSERT_TRUE(app->resources.has_value());
  EXPECT_EQ(app->resources->cpu_limit, Q("1"));
  EXPECT_EQ(app->resources->cpu_request, Q("1"));
  EXPECT_EQ(app->resources->memory_limit, Q("256Mi"));
  EXPECT_EQ(app->hash_without_resources, HashContainerSpecWithoutResources(pod.spec.containers[0]));
  const std::string id = app->id.id;
  {
    absl::MutexLock lock(&rf.cgroup.mu);
    rf.cgroup.config = {1024, 100000, 100000, 256 << 20};
  }
  const api::ResourceRequirements created = pod.spec.containers[0].resources;

  // Grow CPU and memory.
  api::Pod bigger = MakePod("web", {Sized("app", "2", "512Mi")}, {}, "default", "uid-web");
  f.fake.ClearCalls();
  ASSERT_TRUE(f.manager->SyncPod(WithApiStatus(bigger, rs, {created}), rs).Error().ok());
  EXPECT_THAT(rf.cgroup.TakeLog(),
              ElementsAre("memory memory=536870912 after 0", "cpu quota=200000 after 1",
                          "cpu shares=2048 after 1"));
  EXPECT_EQ(f.fake.CallCount("UpdateContainerResources"), 2);
  EXPECT_EQ(f.fake.CallCount("StopContainer"), 0);
  std::optional<v1::ContainerStatus> st = f.fake.GetContainer(id);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->state(), v1::CONTAINER_RUNNING);
  // Each update carries the Linux resources of creation, the other resource as last updated.
  const v1::LinuxContainerResources& r = st->resources().linux();
  EXPECT_EQ(r.cpu_quota(), 200000);
  EXPECT_EQ(r.cpu_period(), 100000);
  EXPECT_EQ(r.cpu_shares(), 2048);
  EXPECT_EQ(r.memory_limit_in_bytes(), 512 << 20);
  EXPECT_EQ(r.oom_score_adj(), -997);

  // Nothing more once the runtime reports the new resources.
  rs = f.Status(bigger);
  EXPECT_EQ(rs.FindContainerStatusByName("app")->resources->cpu_limit, Q("2"));
  f.fake.ClearCalls();
  ASSERT_TRUE(
      f.manager->SyncPod(WithApiStatus(bigger, rs, {bigger.spec.containers[0].resources}), rs)
          .Error()
          .ok());
  EXPECT_EQ(f.fake.CallCount("UpdateContainerResources"), 0);
  EXPECT_TRUE(rf.cgroup.TakeLog().empty());

  // Shrink CPU: the containers first, then the pod cgroup.
  api::Pod smaller = MakePod("web", {Sized("app", "500m", "512Mi")}, {}, "default", "uid-web");
  ASSERT_TRUE(
      f.manager->SyncPod(WithApiStatus(smaller, rs, {bigger.spec.containers[0].resources}), rs)
          .Error()
          .ok());
  EXPECT_THAT(rf.cgroup.TakeLog(),
              ElementsAre("cpu quota=50000 after 1", "cpu shares=512 after 1"));
  EXPECT_EQ(f.fake.GetContainer(id)->resources().linux().cpu_quota(), 50000);
}

TEST(InPlaceResizeTest, MemoryLimitBelowUsageIsRefused) {
  ResizeFixture rf;
  ManagerFixture& f = *rf.f;
  api::Pod pod = MakePod("web", {Sized("app", "1", "512Mi")}, {}, "default", "uid-web");
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  container::PodStatus rs = f.Status(pod);
  {
    absl::MutexLock lock(&rf.cgroup.mu);
    rf.cgroup.config = {1024, 100000, 100000, 512 << 20};
    rf.cgroup.usage = 300 << 20;
  }
  api::Pod smaller = MakePod("web", {Sized("app", "1", "256Mi")}, {}, "default", "uid-web");
  f.fake.ClearCalls();
  // The sync itself goes on (upstream does not report the resize's failure in the result).
  EXPECT_TRUE(f.manager->SyncPod(WithApiStatus(smaller, rs, {pod.spec.containers[0].resources}), rs)
                  .Error()
                  .ok());
  EXPECT_EQ(f.fake.CallCount("UpdateContainerResources"), 0);
  EXPECT_TRUE(rf.cgroup.TakeLog().empty());
  // Below the usage limit it goes through.
  {
    absl::MutexLock lock(&rf.cgroup.mu);
    rf.cgroup.usage = 100 << 20;
  }
  EXPECT_TRUE(f.manager->SyncPod(WithApiStatus(smaller, rs, {pod.spec.containers[0].resources}), rs)
                  .Error()
                  .ok());
  EXPECT_EQ(f.fake.CallCount("UpdateContainerResources"), 1);
  EXPECT_THAT(rf.cgroup.TakeLog(), ElementsAre("memory memory=268435456 after 1"));
}

TEST(InPlaceResizeTest, RestartContainerPolicyRestartsOnlyThatContainer) {
  ResizeFixture rf;
  ManagerFixture& f = *rf.f;
  api::Container restart = Sized("restart", "1", "256Mi");
  restart.resize_policy = {{"cpu", "NotRequired"}, {"memory", "RestartContainer"}};
  api::Pod pod = MakePod("web", {restart, Sized("stay", "1", "256Mi")}, {}, "default", "uid-web");
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  container::PodStatus rs = f.Status(pod);
  const std::string restart_id = rs.FindContainerStatusByName("restart")->id.id;
  const std::string stay_id = rs.FindContainerStatusByName("stay")->id.id;
  {
    absl::MutexLock lock(&rf.cgroup.mu);
    rf.cgroup.config = {2048, 200000, 100000, 512 << 20};
  }
  api::Container restart_bigger = Sized("restart", "1", "512Mi");
  restart_bigger.resize_policy = restart.resize_policy;
  api::Pod resized =
      MakePod("web", {restart_bigger, Sized("stay", "1", "512Mi")}, {}, "default", "uid-web");
  const std::vector<api::ResourceRequirements> seen = {pod.spec.containers[0].resources,
                                                       pod.spec.containers[1].resources};
  ASSERT_TRUE(f.manager->SyncPod(WithApiStatus(resized, rs, seen), rs).Error().ok());
  // "restart" was stopped and started again; "stay" was updated in place.
  EXPECT_EQ(f.fake.GetContainer(restart_id)->state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(f.fake.GetContainer(stay_id)->state(), v1::CONTAINER_RUNNING);
  EXPECT_EQ(f.fake.GetContainer(stay_id)->resources().linux().memory_limit_in_bytes(), 512 << 20);
  container::PodStatus after = f.Status(resized);
  const container::ContainerStatus* again = after.FindContainerStatusByName("restart");
  ASSERT_NE(again, nullptr);
  EXPECT_NE(again->id.id, restart_id);
  EXPECT_EQ(again->state, container::State::kRunning);
  EXPECT_EQ(again->restart_count, 1);
  EXPECT_EQ(again->resources->memory_limit, Q("512Mi"));
  EXPECT_EQ(after.FindContainerStatusByName("stay")->id.id, stay_id);
  // The pod cgroup grew before "stay" was updated.
  EXPECT_THAT(rf.cgroup.TakeLog(), ElementsAre("memory memory=1073741824 after 0"));
}

TEST(InPlaceResizeTest, StaticPodsAndTheGateOffAreNotResized) {
  ResizeFixture rf;
  ManagerFixture& f = *rf.f;
  api::Pod pod = MakePod("web", {Sized("app", "1", "256Mi")}, {}, "default", "uid-web");
  pod.metadata.annotations["kubernetes.io/config.source"] = "file";
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  container::PodStatus rs = f.Status(pod);
  const std::string id = rs.FindContainerStatusByName("app")->id.id;
  api::Pod bigger = MakePod("web", {Sized("app", "2", "256Mi")}, {}, "default", "uid-web");
  bigger.metadata.annotations = pod.metadata.annotations;
  ASSERT_TRUE(f.manager->SyncPod(WithApiStatus(bigger, rs, {pod.spec.containers[0].resources}), rs)
                  .Error()
                  .ok());
  // A static pod's spec change restarts the container as before.
  EXPECT_EQ(f.fake.GetContainer(id)->state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(f.fake.CallCount("UpdateContainerResources"), 0);
}

}  // namespace
}  // namespace kubelet::kuberuntime
