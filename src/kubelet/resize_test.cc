// In-place resize through the Kubelet (InPlacePodVerticalScaling): the resize admission's
// outcomes in status.resize (InProgress, Deferred, Infeasible), the allocation checkpoint, the
// pod handed to the runtime, and admission of a restarted kubelet with the allocations it had.
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "api/pod_defaults.h"
#include "common/testing/eventually.h"
#include "cri/testing/fake_runtime.h"
#include "gtest/gtest.h"
#include "kubelet/container/testing/fake_container_runtime.h"
#include "kubelet/kubelet.h"
#include "kubelet/podsource/api_source.h"
#include "kubelet/status/allocation_state.h"
#include "kubelet/testing/kubelet_test_util.h"

namespace kubelet {
namespace {

using testing::Eventually;
using testing::RuntimeStatus;

api::Quantity Q(const char* v) { return *api::ParseQuantity(v); }

api::Pod ApiPod(const std::string& name, const char* cpu, int64_t created) {
  api::Pod pod;
  pod.metadata.name = name;
  pod.metadata.namespace_ = "default";
  pod.metadata.uid = "uid-" + name;
  pod.metadata.creation_timestamp = api::Time::FromUnix(created);
  pod.spec.node_name = "node1";
  api::Container c;
  c.name = "main";
  c.image = "busybox";
  c.resources.limits = {{"cpu", Q(cpu)}, {"memory", Q("256Mi")}};
  c.resources.requests = c.resources.limits;
  pod.spec.containers.push_back(c);
  api::SetDefaultsPod(&pod);
  return pod;
}

api::Pod Resized(api::Pod pod, const char* cpu) {
  pod.spec.containers[0].resources.limits["cpu"] = Q(cpu);
  pod.spec.containers[0].resources.requests["cpu"] = Q(cpu);
  pod.status.resize = status::kResizeProposed;  // what the API server sets
  return pod;
}

// A Kubelet over a scriptable runtime in which the given pods run, fed by an API source.
struct Env {
  explicit Env(const std::string& root, bool in_place, const std::vector<std::string>& names) {
    cri.SetRuntimeStatus(RuntimeStatus());
    std::vector<container::Pod> pods;
    for (const std::string& name : names) {
      container::Pod rp;
      rp.id = "uid-" + name;
      rp.name = name;
      rp.namespace_ = "default";
      container::Container c;
      c.id = {"fake", "c-" + name};
      c.name = "main";
      c.state = container::State::kRunning;
      rp.containers.push_back(c);
      container::Container sb;
      sb.id = {"fake", "sb-" + name};
      sb.state = container::State::kRunning;
      rp.sandboxes.push_back(sb);
      pods.push_back(rp);
      container::PodStatus rs;
      rs.id = rp.id;
      rs.name = name;
      rs.namespace_ = "default";
      container::SandboxStatus sbs;
      sbs.id = "sb-" + name;
      sbs.ready = true;
      sbs.ips = {"10.0.0.2"};
      rs.sandbox_statuses.push_back(sbs);
      rs.ips = {"10.0.0.2"};
      container::ContainerStatus cs;
      cs.id = c.id;
      cs.name = "main";
      cs.state = container::State::kRunning;
      rs.container_statuses.push_back(cs);
      runtime.SetStatus(rp.id, rs);
    }
    runtime.SetPods(pods);
    KubeletOptions o;
    o.node_name = "node1";
    o.root_dir = root;
    o.in_place_pod_vertical_scaling = in_place;
    o.allocatable = NodeAllocatable{.milli_cpu = 2000, .memory_bytes = int64_t{4} << 30};
    o.sync_frequency = absl::Seconds(1);
    o.extra_sources.push_back(
        {.name = podsource::kApiSourceName, .start = [this](podsource::PodConfig& c) {
           absl::MutexLock lock(&mu);
           config = &c;
           return absl::OkStatus();
         }});
    k = std::make_unique<Kubelet>(std::move(o), cri, runtime, clock);
  }
  ~Env() {
    if (k) k->Stop();
  }
  bool Start() {
    if (!k->Start().ok()) return false;
    return Eventually([&] {
      absl::MutexLock lock(&mu);
      return config != nullptr;
    });
  }
  void Deliver(std::vector<api::Pod> pods) {
    podsource::PodConfig* c;
    {
      absl::MutexLock lock(&mu);
      c = config;
    }
    c->SetSource(podsource::kApiSourceName, testing::SharedPods(std::move(pods)));
  }
  std::string Resize(const std::string& uid) {
    auto st = k->status_manager().GetPodStatus(uid);
    return st ? st->status.resize : "<none>";
  }
  std::string Phase(const std::string& uid) {
    auto st = k->status_manager().GetPodStatus(uid);
    return st ? st->status.phase : "<none>";
  }
  std::optional<api::Quantity> AllocatedCPU(const std::string& uid) {
    const status::AllocationState* a = k->allocation_state();
    if (a == nullptr) return std::nullopt;
    std::optional<api::ResourceList> r = a->GetContainerResourceAllocation(uid, "main");
    if (!r || !r->count("cpu")) return std::nullopt;
    return r->at("cpu");
  }

  cri::FakeRuntime cri;
  container::FakeContainerRuntime runtime;
  RealClock clock;
  absl::Mutex mu;
  podsource::PodConfig* config ABSL_GUARDED_BY(mu) = nullptr;
  std::unique_ptr<Kubelet> k;
};

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  return dir;
}

TEST(InPlaceResize, AdmissionOutcomesInStatusResize) {
  const std::string root = FreshDir("inplace-resize-outcomes");
  Env env(root, true, {"a", "b"});
  ASSERT_TRUE(env.Start());
  const api::Pod a = ApiPod("a", "500m", 100);
  const api::Pod b = ApiPod("b", "1", 200);
  env.Deliver({a, b});
  ASSERT_TRUE(Eventually(
      [&] { return env.Phase("uid-a") == "Running" && env.Phase("uid-b") == "Running"; }));
  // Admission recorded what each pod was admitted with.
  EXPECT_EQ(env.AllocatedCPU("uid-a"), Q("500m"));
  EXPECT_EQ(env.AllocatedCPU("uid-b"), Q("1"));
  std::string file;
  {
    std::ifstream in(root + "/pod_status_manager_state");
    file.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  EXPECT_NE(file.find(R"(\"uid-a\":{\"main\":{\"cpu\":\"500m\",\"memory\":\"256Mi\"}})"),
            std::string::npos)
      << file;

  // 1 + 1 CPU fits the node's 2: accepted, the allocation follows.
  env.Deliver({Resized(a, "1"), b});
  ASSERT_TRUE(Eventually([&] { return env.Resize("uid-a") == status::kResizeInProgress; }))
      << env.Resize("uid-a");
  EXPECT_EQ(env.AllocatedCPU("uid-a"), Q("1"));
  // The runtime is given the pod with its accepted allocation.
  ASSERT_TRUE(Eventually([&] {
    std::optional<api::Pod> synced = env.runtime.LastSyncedPod("uid-a");
    return synced && synced->status.resize == status::kResizeInProgress &&
           !synced->status.container_statuses.empty() &&
           synced->status.container_statuses[0].allocated_resources.count("cpu") &&
           synced->status.container_statuses[0].allocated_resources.at("cpu") == Q("1");
  }));

  // 1.5 + 1 does not fit now: deferred, the allocation stays.
  env.Deliver({Resized(a, "1500m"), b});
  ASSERT_TRUE(Eventually([&] { return env.Resize("uid-a") == status::kResizeDeferred; }))
      << env.Resize("uid-a");
  EXPECT_EQ(env.AllocatedCPU("uid-a"), Q("1"));

  // More than the node has: infeasible.
  env.Deliver({Resized(a, "3"), b});
  ASSERT_TRUE(Eventually([&] { return env.Resize("uid-a") == status::kResizeInfeasible; }))
      << env.Resize("uid-a");
  EXPECT_EQ(env.AllocatedCPU("uid-a"), Q("1"));

  // Once the runtime reports what the spec asks, the resize status is cleared.
  api::Pod done = Resized(a, "1");
  done.status.resize.clear();
  env.Deliver({done, b});
  container::PodStatus rs = *env.runtime.GetPodStatus("uid-a", "a", "default");
  rs.container_statuses[0].resources = container::ContainerResources{
      .cpu_request = Q("1"), .cpu_limit = Q("1"), .memory_limit = Q("256Mi")};
  env.runtime.SetStatus("uid-a", rs);
  ASSERT_TRUE(Eventually([&] {
    env.k->TriggerPodSync("uid-a");
    return env.Resize("uid-a").empty();
  })) << env.Resize("uid-a");
  auto st = env.k->status_manager().GetPodStatus("uid-a");
  ASSERT_TRUE(st.has_value());
  const api::ContainerStatus& cs = st->status.container_statuses[0];
  EXPECT_EQ(cs.allocated_resources, (api::ResourceList{{"cpu", Q("1")}, {"memory", Q("256Mi")}}));
  ASSERT_TRUE(cs.resources.has_value());
  EXPECT_EQ(cs.resources->limits, (api::ResourceList{{"cpu", Q("1")}, {"memory", Q("256Mi")}}));
  EXPECT_EQ(env.k->allocation_state()->GetPodResizeStatus("uid-a"), std::nullopt);
}

// A pod resized while the kubelet was down is admitted again with what it was allocated, and
// asks for its resize afterwards.
TEST(InPlaceResize, RestartedKubeletAdmitsWithTheCheckpointedAllocation) {
  const std::string root = FreshDir("inplace-resize-restart");
  {
    status::PodResourceAllocationInfo info;
    info.allocation_entries["uid-a"]["main"] = {{"cpu", Q("500m")}, {"memory", Q("256Mi")}};
    std::ofstream out(root + "/pod_status_manager_state");
    out << status::MarshalAllocationCheckpoint(info);
  }
  Env env(root, true, {"a", "b"});
  ASSERT_TRUE(env.Start());
  ASSERT_EQ(env.AllocatedCPU("uid-a"), Q("500m"));
  env.Deliver({ApiPod("a", "1500m", 100), ApiPod("b", "1", 200)});
  ASSERT_TRUE(Eventually([&] { return env.Phase("uid-b") == "Running"; }))
      << env.Phase("uid-b") << " "
      << (env.k->status_manager().GetPodStatus("uid-b")
              ? env.k->status_manager().GetPodStatus("uid-b")->status.message
              : "");
  EXPECT_EQ(env.AllocatedCPU("uid-a"), Q("500m"));
  // Its resize does not fit next to b.
  ASSERT_TRUE(Eventually([&] { return env.Resize("uid-a") == status::kResizeDeferred; }))
      << env.Resize("uid-a");
  EXPECT_EQ(env.AllocatedCPU("uid-a"), Q("500m"));

  // Without the gate the spec counts: b no longer fits.
  const std::string off_root = FreshDir("inplace-resize-off");
  Env off(off_root, false, {"a", "b"});
  ASSERT_TRUE(off.Start());
  off.Deliver({ApiPod("a", "1500m", 100), ApiPod("b", "1", 200)});
  ASSERT_TRUE(Eventually([&] { return off.Phase("uid-b") == "Failed"; })) << off.Phase("uid-b");
  EXPECT_EQ(off.k->status_manager().GetPodStatus("uid-b")->status.reason, "OutOfcpu");
  EXPECT_EQ(off.k->allocation_state(), nullptr);
  EXPECT_FALSE(std::filesystem::exists(off_root + "/pod_status_manager_state"));
}

TEST(InPlaceResize, CorruptedCheckpointFailsStart) {
  const std::string root = FreshDir("inplace-resize-corrupt");
  {
    std::ofstream out(root + "/pod_status_manager_state");
    out << R"({"data":"{}","checksum":1})";
  }
  Env env(root, true, {});
  absl::Status st = env.k->Start();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("please drain this node and delete pod allocation checkpoint file"),
            std::string::npos)
      << st;
  env.k.reset();
}

}  // namespace
}  // namespace kubelet
