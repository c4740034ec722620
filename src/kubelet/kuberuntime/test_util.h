// Test helpers for the kuberuntime unit tests (header-only; included by *_test.cc only).
#ifndef KUBELET_KUBELET_KUBERUNTIME_TEST_UTIL_H_
#define KUBELET_KUBELET_KUBERUNTIME_TEST_UTIL_H_

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "api/pod.h"
#include "api/pod_defaults.h"
#include "api/testing/pod_builder.h"
#include "common/clock.h"
#include "cri/testing/fake_runtime.h"
#include "kubelet/container/runtime.h"
#include "kubelet/kuberuntime/helpers.h"
#include "kubelet/kuberuntime/kuberuntime_manager.h"

namespace kubelet::kuberuntime::testing {

inline api::Container MakeContainer(const std::string& name,
                                    const std::string& image = "busybox:1.36") {
  api::Container c;
  c.name = name;
  c.image = image;
  c.command = {"sleep", "3600"};
  return c;
}

// A defaulted pod (restartPolicy Always, ClusterFirst DNS, grace 30s...).
inline api::Pod MakePod(const std::string& name, std::vector<api::Container> containers,
                        std::vector<api::Container> init_containers = {},
                        const std::string& ns = "default", const std::string& uid = "") {
  api::testing::PodBuilder b(name);
  b.Namespace(ns);
  if (!uid.empty()) b.Uid(uid);
  for (api::Container& c : containers) b.Container(std::move(c));
  for (api::Container& c : init_containers) b.InitContainer(std::move(c));
  return b.Defaulted();
}

inline api::Container Sidecar(const std::string& name) {
  api::Container c = MakeContainer(name);
  c.restart_policy = api::kContainerRestartPolicyAlways;
  return c;
}

// Status builders for ComputePodActions tests.
inline container::SandboxStatus ReadySandbox(const std::string& id = "sb1", uint32_t attempt = 0,
                                             bool host_network = false) {
  container::SandboxStatus s;
  s.id = id;
  s.ready = true;
  s.attempt = attempt;
  s.host_network = host_network;
  if (!host_network) s.ips = {"10.88.0.2"};
  return s;
}

inline container::ContainerStatus Status(const api::Container& c, container::State state,
                                         const std::string& id, int exit_code = 0,
                                         int restart_count = 0) {
  container::ContainerStatus s;
  s.id = container::ContainerID{"fake", id};
  s.name = c.name;
  s.state = state;
  s.exit_code = exit_code;
  s.hash = HashContainerSpec(c);
  s.restart_count = restart_count;
  return s;
}

// Forwards to a FakeRuntime and records StopContainer calls (id, timeout) in order.
class RecordingRuntime final : public cri::RuntimeService {
 public:
  explicit RecordingRuntime(cri::FakeRuntime& f) : f_(f) {}
  struct Stop {
    std::string id;
    int64_t timeout;
  };
  std::vector<Stop> stops() const {
    absl::MutexLock lock(&mu_);
    return stops_;
  }
  void ClearStops() {
    absl::MutexLock lock(&mu_);
    stops_.clear();
  }

  absl::StatusOr<runtime::v1::VersionResponse> Version(const std::string& v) override {
    return f_.Version(v);
  }
  absl::StatusOr<std::string> RunPodSandbox(const runtime::v1::PodSandboxConfig& c,
                                            const std::string& h) override {
    return f_.RunPodSandbox(c, h);
  }
  absl::Status StopPodSandbox(const std::string& id) override { return f_.StopPodSandbox(id); }
  absl::Status RemovePodSandbox(const std::string& id) override { return f_.RemovePodSandbox(id); }
  absl::StatusOr<runtime::v1::PodSandboxStatusResponse> PodSandboxStatus(const std::string& id,
                                                                         bool v) override {
    return f_.PodSandboxStatus(id, v);
  }
  absl::StatusOr<std::vector<runtime::v1::PodSandbox>> ListPodSandbox(
      const runtime::v1::PodSandboxFilter* f) override {
    return f_.ListPodSandbox(f);
  }
  absl::StatusOr<runtime::v1::PortForwardResponse> PortForward(
      const runtime::v1::PortForwardRequest& r) override {
    return f_.PortForward(r);
  }
  absl::StatusOr<std::string> CreateContainer(const std::string& id,
                                              const runtime::v1::ContainerConfig& c,
                                              const runtime::v1::PodSandboxConfig& s) override {
    return f_.CreateContainer(id, c, s);
  }
  absl::Status StartContainer(const std::string& id) override { return f_.StartContainer(id); }
  absl::Status StopContainer(const std::string& id, int64_t timeout) override {
    {
      absl::MutexLock lock(&mu_);
      stops_.push_back({id, timeout});
    }
    return f_.StopContainer(id, timeout);
  }
  absl::Status RemoveContainer(const std::string& id) override { return f_.RemoveContainer(id); }
  absl::StatusOr<std::vector<runtime::v1::Container>> ListContainers(
      const runtime::v1::ContainerFilter* f) override {
    return f_.ListContainers(f);
  }
  absl::StatusOr<runtime::v1::ContainerStatusResponse> ContainerStatus(const std::string& id,
                                                                       bool v) override {
    return f_.ContainerStatus(id, v);
  }
  absl::Status UpdateContainerResources(const std::string& id,
                                        const runtime::v1::ContainerResources& r) override {
    return f_.UpdateContainerResources(id, r);
  }
  absl::Status ReopenContainerLog(const std::string& id) override {
    return f_.ReopenContainerLog(id);
  }
  absl::StatusOr<runtime::v1::ExecSyncResponse> ExecSync(const std::string& id,
                                                         const std::vector<std::string>& cmd,
                                                         absl::Duration t) override {
    return f_.ExecSync(id, cmd, t);
  }
  absl::StatusOr<runtime::v1::ExecResponse> Exec(const runtime::v1::ExecRequest& r) override {
    return f_.Exec(r);
  }
  absl::StatusOr<runtime::v1::AttachResponse> Attach(const runtime::v1::AttachRequest& r) override {
    return f_.Attach(r);
  }
  absl::Status CheckpointContainer(const runtime::v1::CheckpointContainerRequest& r) override {
    return f_.CheckpointContainer(r);
  }
  absl::Status GetContainerEvents(const cri::ContainerEventCallback& cb,
                                  cri::StreamCancellation& c) override {
    return f_.GetContainerEvents(cb, c);
  }
  absl::StatusOr<runtime::v1::ContainerStats> ContainerStats(const std::string& id) override {
    return f_.ContainerStats(id);
  }
  absl::StatusOr<std::vector<runtime::v1::ContainerStats>> ListContainerStats(
      const runtime::v1::ContainerStatsFilter* f) override {
    return f_.ListContainerStats(f);
  }
  absl::StatusOr<runtime::v1::PodSandboxStats> PodSandboxStats(const std::string& id) override {
    return f_.PodSandboxStats(id);
  }
  absl::StatusOr<std::vector<runtime::v1::PodSandboxStats>> ListPodSandboxStats(
      const runtime::v1::PodSandboxStatsFilter* f) override {
    return f_.ListPodSandboxStats(f);
  }
  absl::StatusOr<std::vector<runtime::v1::MetricDescriptor>> ListMetricDescriptors() override {
    return f_.ListMetricDescriptors();
  }
  absl::StatusOr<std::vector<runtime::v1::PodSandboxMetrics>> ListPodSandboxMetrics() override {
    return f_.ListPodSandboxMetrics();
  }
  absl::Status UpdateRuntimeConfig(const runtime::v1::RuntimeConfig& c) override {
    return f_.UpdateRuntimeConfig(c);
  }
  absl::StatusOr<runtime::v1::StatusResponse> Status(bool v) override { return f_.Status(v); }

 private:
  cri::FakeRuntime& f_;
  mutable absl::Mutex mu_;
  std::vector<Stop> stops_;
};

// A temporary directory removed on destruction.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/kuberuntime_test.XXXXXX";
    char* p = mkdtemp(tmpl);
    path_ = p != nullptr ? p : "/tmp/kuberuntime_test.fallback";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A manager over a FakeRuntime with a FakeClock and directories under a temp dir.
struct ManagerFixture {
  explicit ManagerFixture(Options opts = {}, const container::PodStateProvider* state = nullptr) {
    fake.SetClock([this] { return clock.Now(); });
    opts.root_dir = dir.path() + "/root";
    opts.pod_logs_dir = dir.path() + "/logs";
    opts.resolv_conf = "";
    opts.memory_capacity_bytes = int64_t{8} << 30;
    opts.cgroup2_unified = false;
    if (opts.node_ips.empty()) opts.node_ips = {"192.168.1.10"};
    options = opts;
    manager = std::make_unique<KubeGenericRuntimeManager>(runtime, fake, clock, opts, state);
  }

  // A second manager over the same runtime, as after a kubelet restart.
  std::unique_ptr<KubeGenericRuntimeManager> NewManager(
      const container::PodStateProvider* state = nullptr) {
    return std::make_unique<KubeGenericRuntimeManager>(runtime, fake, clock, options, state);
  }

  // Status as the PLEG would read it.
  container::PodStatus Status(const api::Pod& pod) {
    absl::StatusOr<container::PodStatus> s =
        manager->GetPodStatus(pod.metadata.uid, pod.metadata.name, pod.metadata.namespace_);
    return s.ok() ? *s : container::PodStatus{};
  }

  container::PodSyncResult Sync(const api::Pod& pod) { return manager->SyncPod(pod, Status(pod)); }

  TempDir dir;
  FakeClock clock;
  cri::FakeRuntime fake;
  RecordingRuntime runtime{fake};
  Options options;
  std::unique_ptr<KubeGenericRuntimeManager> manager;
};

}  // namespace kubelet::kuberuntime::testing

#endif  // KUBELET_KUBELET_KUBERUNTIME_TEST_UTIL_H_
