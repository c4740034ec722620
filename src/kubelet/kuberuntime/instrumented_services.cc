#include "kubelet/kuberuntime/instrumented_services.h"

#include <chrono>
#include <string>
#include <vector>

#include "metrics/metrics.h"

namespace kubelet::kuberuntime {
namespace {

namespace v1 = runtime::v1;

template <typename F>
auto Record(const char* op, F&& call) {
  const auto start = std::chrono::steady_clock::now();
  auto result = call();
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  metrics::ObserveRuntimeOperation(op, secs, !result.ok());
  return result;
}

class InstrumentedRuntime final : public cri::RuntimeService {
 public:
  explicit InstrumentedRuntime(cri::RuntimeService& inner) : in_(inner) {}

  absl::StatusOr<v1::VersionResponse> Version(const std::string& api_version) override {
    return Record("version", [&] { return in_.Version(api_version); });
  }
  absl::StatusOr<std::string> RunPodSandbox(const v1::PodSandboxConfig& config,
                                            const std::string& handler) override {
    return Record("run_podsandbox", [&] { return in_.RunPodSandbox(config, handler); });
  }
  absl::Status StopPodSandbox(const std::string& id) override {
    return Record("stop_podsandbox", [&] { return in_.StopPodSandbox(id); });
  }
  absl::Status RemovePodSandbox(const std::string& id) override {
    return Record("remove_podsandbox", [&] { return in_.RemovePodSandbox(id); });
  }
  absl::StatusOr<v1::PodSandboxStatusResponse> PodSandboxStatus(const std::string& id,
                                                                bool verbose) override {
    return Record("podsandbox_status", [&] { return in_.PodSandboxStatus(id, verbose); });
  }
  absl::StatusOr<std::vector<v1::PodSandbox>> ListPodSandbox(
      const v1::PodSandboxFilter* filter) override {
    return Record("list_podsandbox", [&] { return in_.ListPodSandbox(filter); });
  }
  absl::StatusOr<v1::PortForwardResponse> PortForward(
      const v1::PortForwardRequest& request) override {
    return Record("port_forward", [&] { return in_.PortForward(request); });
  }
  absl::StatusOr<std::string> CreateContainer(const std::string& sandbox_id,
                                              const v1::ContainerConfig& config,
                                              const v1::PodSandboxConfig& sandbox_config) override {
    return Record("create_container",
                  [&] { return in_.CreateContainer(sandbox_id, config, sandbox_config); });
  }
  absl::Status StartContainer(const std::string& id) override {
    return Record("start_container", [&] { return in_.StartContainer(id); });
  }
  absl::Status StopContainer(const std::string& id, int64_t timeout_seconds) override {
    return Record("stop_container", [&] { return in_.StopContainer(id, timeout_seconds); });
  }
  absl::Status RemoveContainer(const std::string& id) override {
    return Record("remove_container", [&] { return in_.RemoveContainer(id); });
  }
  absl::StatusOr<std::vector<v1::Container>> ListContainers(
      const v1::ContainerFilter* filter) override {
    return Record("list_containers", [&] { return in_.ListContainers(filter); });
  }
  absl::StatusOr<v1::ContainerStatusResponse> ContainerStatus(const std::string& id,
                                                              bool verbose) override {
    return Record("container_status", [&] { return in_.ContainerStatus(id, verbose); });
  }
  absl::Status UpdateContainerResources(const std::string& id,
                                        const v1::ContainerResources& resources) override {
    return Record("update_container", [&] { return in_.UpdateContainerResources(id, resources); });
  }
  absl::Status ReopenContainerLog(const std::string& id) override {
    return Record("reopen_container_log", [&] { return in_.ReopenContainerLog(id); });
  }
  absl::StatusOr<v1::ExecSyncResponse> ExecSync(const std::string& id,
                                                const std::vector<std::string>& cmd,
                                                absl::Duration timeout) override {
    return Record("exec_sync", [&] { return in_.ExecSync(id, cmd, timeout); });
  }
  absl::StatusOr<v1::ExecResponse> Exec(const v1::ExecRequest& request) override {
    return Record("exec", [&] { return in_.Exec(request); });
  }
  absl::StatusOr<v1::AttachResponse> Attach(const v1::AttachRequest& request) override {
    return Record("attach", [&] { return in_.Attach(request); });
  }
  absl::Status CheckpointContainer(const v1::CheckpointContainerRequest& request) override {
    return Record("checkpoint_container", [&] { return in_.CheckpointContainer(request); });
  }
  absl::Status GetContainerEvents(const cri::ContainerEventCallback& on_event,
                                  cri::StreamCancellation& cancel) override {
    // A stream, not an operation: upstream does not time it either.
    return in_.GetContainerEvents(on_event, cancel);
  }
  absl::StatusOr<v1::ContainerStats> ContainerStats(const std::string& id) override {
    return Record("container_stats", [&] { return in_.ContainerStats(id); });
  }
  absl::StatusOr<std::vector<v1::ContainerStats>> ListContainerStats(
      const v1::ContainerStatsFilter* filter) override {
    return Record("list_container_stats", [&] { return in_.ListContainerStats(filter); });
  }
  absl::StatusOr<v1::PodSandboxStats> PodSandboxStats(const std::string& id) override {
    return Record("podsandbox_stats", [&] { return in_.PodSandboxStats(id); });
  }
  absl::StatusOr<std::vector<v1::PodSandboxStats>> ListPodSandboxStats(
      const v1::PodSandboxStatsFilter* filter) override {
    return Record("list_podsandbox_stats", [&] { return in_.ListPodSandboxStats(filter); });
  }
  absl::StatusOr<std::vector<v1::MetricDescriptor>> ListMetricDescriptors() override {
    return Record("list_metric_descriptors", [&] { return in_.ListMetricDescriptors(); });
  }
  absl::StatusOr<std::vector<v1::PodSandboxMetrics>> ListPodSandboxMetrics() override {
    return Record("list_podsandbox_metrics", [&] { return in_.ListPodSandboxMetrics(); });
  }
  absl::Status UpdateRuntimeConfig(const v1::RuntimeConfig& config) override {
    return Record("update_runtime_config", [&] { return in_.UpdateRuntimeConfig(config); });
  }
  absl::StatusOr<v1::StatusResponse> Status(bool verbose) override {
    return Record("status", [&] { return in_.Status(verbose); });
  }

 private:
  cri::RuntimeService& in_;
};

class InstrumentedImages final : public cri::ImageManagerService {
 public:
  explicit InstrumentedImages(cri::ImageManagerService& inner) : in_(inner) {}

  absl::StatusOr<std::vector<v1::Image>> ListImages(const v1::ImageFilter* filter) override {
    return Record("list_images", [&] { return in_.ListImages(filter); });
  }
  absl::StatusOr<v1::ImageStatusResponse> ImageStatus(const v1::ImageSpec& image,
                                                      bool verbose) override {
    return Record("image_status", [&] { return in_.ImageStatus(image, verbose); });
  }
  absl::StatusOr<std::string> PullImage(const v1::ImageSpec& image, const v1::AuthConfig* auth,
                                        const v1::PodSandboxConfig* sandbox_config) override {
    return Record("pull_image", [&] { return in_.PullImage(image, auth, sandbox_config); });
  }
  absl::Status RemoveImage(const v1::ImageSpec& image) override {
    return Record("remove_image", [&] { return in_.RemoveImage(image); });
  }
  absl::StatusOr<std::vector<v1::FilesystemUsage>> ImageFsInfo() override {
    return Record("image_fs_info", [&] { return in_.ImageFsInfo(); });
  }

 private:
  cri::ImageManagerService& in_;
};

}  // namespace

std::unique_ptr<cri::RuntimeService> NewInstrumentedRuntimeService(cri::RuntimeService& inner) {
  return std::make_unique<InstrumentedRuntime>(inner);
}

std::unique_ptr<cri::ImageManagerService> NewInstrumentedImageService(
    cri::ImageManagerService& inner) {
  return std::make_unique<InstrumentedImages>(inner);
}

}  // namespace kubelet::kuberuntime
