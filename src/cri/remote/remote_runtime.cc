#include "cri/remote/remote_runtime.h"

#include <grpcpp/client_context.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/guarded.h"
#include "cri/proto/api.grpc.pb.h"
#include "cri/remote/grpc_util.h"

namespace kubelet::cri {
namespace {

namespace v1 = ::runtime::v1;
using Stub = v1::RuntimeService::Stub;
using internal::CallUnary;
using internal::ContractError;

template <typename T>
std::vector<T> ToVector(const google::protobuf::RepeatedPtrField<T>& items) {
  return std::vector<T>(items.begin(), items.end());
}

// Upstream's verifySandboxStatus: the fields the kubelet relies on must be set.
absl::Status VerifySandboxStatus(const v1::PodSandboxStatus& status) {
  constexpr absl::string_view kMethod = "PodSandboxStatus";
  if (status.id().empty()) return ContractError(kMethod, "status.Id is not set");
  if (!status.has_metadata()) return ContractError(kMethod, "status.Metadata is not set");
  const v1::PodSandboxMetadata& md = status.metadata();
  if (md.name().empty() || md.namespace_().empty() || md.uid().empty()) {
    return ContractError(kMethod, absl::StrFormat("metadata.Name, metadata.Namespace or "
                                                  "metadata.Uid is not in metadata \"%s\"",
                                                  md.ShortDebugString()));
  }
  if (status.created_at() == 0) return ContractError(kMethod, "status.CreatedAt is not set");
  return absl::OkStatus();
}

// Upstream's verifyContainerStatus.
absl::Status VerifyContainerStatus(const v1::ContainerStatus& status) {
  constexpr absl::string_view kMethod = "ContainerStatus";
  if (status.id().empty()) return ContractError(kMethod, "status.Id is not set");
  if (!status.has_metadata()) return ContractError(kMethod, "status.Metadata is not set");
  if (status.metadata().name().empty()) {
    return ContractError(kMethod, absl::StrFormat("metadata.Name is not in metadata \"%s\"",
                                                  status.metadata().ShortDebugString()));
  }
  if (status.created_at() == 0) return ContractError(kMethod, "status.CreatedAt is not set");
  if (!status.has_image() || status.image().image().empty()) {
    return ContractError(kMethod, "status.Image is not set");
  }
  if (status.image_ref().empty()) return ContractError(kMethod, "status.ImageRef is not set");
  return absl::OkStatus();
}

class RemoteRuntimeService final : public RuntimeService {
 public:
  RemoteRuntimeService(std::shared_ptr<grpc::Channel> channel, absl::Duration timeout)
      : channel_(std::move(channel)),
        stub_(v1::RuntimeService::NewStub(channel_)),
        timeout_(timeout) {}

  absl::StatusOr<v1::VersionResponse> Version(const std::string& api_version) override {
    v1::VersionRequest req;
    req.set_version(api_version);
    auto resp = CallUnary(*stub_, &Stub::Version, "Version", req, timeout_);
    if (!resp.ok()) return resp.status();
    if (resp->version().empty() || resp->runtime_name().empty() ||
        resp->runtime_api_version().empty() || resp->runtime_version().empty()) {
      return ContractError("Version", absl::StrFormat("not all fields are set in VersionResponse "
                                                      "(\"%s\")",
                                                      resp->ShortDebugString()));
    }
    return resp;
  }

  // Checks the runtime serves runtime.v1 at all; unlike Version() it accepts sparse answers.
  absl::Status Validate(const std::string& endpoint) {
    auto resp = CallUnary(*stub_, &Stub::Version, "Version", v1::VersionRequest(), timeout_);
    if (!resp.ok()) {
      return absl::Status(resp.status().code(),
                          absl::StrFormat("validate CRI v1 runtime API for endpoint \"%s\": %s",
                                          endpoint, resp.status().message()));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> RunPodSandbox(const v1::PodSandboxConfig& config,
                                            const std::string& runtime_handler) override {
    v1::RunPodSandboxRequest req;
    *req.mutable_config() = config;
    req.set_runtime_handler(runtime_handler);
    // Sandbox creation includes networking and image pulls of the pause image: upstream gives
    // it twice the request timeout.
    auto resp = CallUnary(*stub_, &Stub::RunPodSandbox, "RunPodSandbox", req, timeout_ * 2);
    if (!resp.ok()) return resp.status();
    if (resp->pod_sandbox_id().empty()) {
      return ContractError("RunPodSandbox",
                           absl::StrFormat("PodSandboxId is not set for sandbox \"%s\"",
                                           config.metadata().ShortDebugString()));
    }
    return std::move(*resp->mutable_pod_sandbox_id());
  }

  absl::Status StopPodSandbox(const std::string& pod_sandbox_id) override {
    v1::StopPodSandboxRequest req;
    req.set_pod_sandbox_id(pod_sandbox_id);
    return CallUnary(*stub_, &Stub::StopPodSandbox, "StopPodSandbox", req, timeout_).status();
  }

  absl::Status RemovePodSandbox(const std::string& pod_sandbox_id) override {
    v1::RemovePodSandboxRequest req;
    req.set_pod_sandbox_id(pod_sandbox_id);
    return CallUnary(*stub_, &Stub::RemovePodSandbox, "RemovePodSandbox", req, timeout_).status();
  }

  absl::StatusOr<v1::PodSandboxStatusResponse> PodSandboxStatus(const std::string& pod_sandbox_id,
                                                                bool verbose) override {
    v1::PodSandboxStatusRequest req;
    req.set_pod_sandbox_id(pod_sandbox_id);
    req.set_verbose(verbose);
    auto resp = CallUnary(*stub_, &Stub::PodSandboxStatus, "PodSandboxStatus", req, timeout_);
    if (!resp.ok()) return resp.status();
    if (resp->has_status()) {
      if (absl::Status s = VerifySandboxStatus(resp->status()); !s.ok()) return s;
    }
    return resp;
  }

  absl::StatusOr<std::vector<v1::PodSandbox>> ListPodSandbox(
      const v1::PodSandboxFilter* filter) override {
    v1::ListPodSandboxRequest req;
    if (filter != nullptr) *req.mutable_filter() = *filter;
    auto resp = CallUnary(*stub_, &Stub::ListPodSandbox, "ListPodSandbox", req, timeout_);
    if (!resp.ok()) return resp.status();
    return ToVector(resp->items());
  }

  absl::StatusOr<v1::PortForwardResponse> PortForward(const v1::PortForwardRequest& req) override {
    auto resp = CallUnary(*stub_, &Stub::PortForward, "PortForward", req, timeout_);
    if (resp.ok() && resp->url().empty()) return ContractError("PortForward", "URL is not set");
    return resp;
  }

  absl::StatusOr<std::string> CreateContainer(const std::string& pod_sandbox_id,
                                              const v1::ContainerConfig& config,
                                              const v1::PodSandboxConfig& sandbox_config) override {
    v1::CreateContainerRequest req;
    req.set_pod_sandbox_id(pod_sandbox_id);
    *req.mutable_config() = config;
    *req.mutable_sandbox_config() = sandbox_config;
    auto resp = CallUnary(*stub_, &Stub::CreateContainer, "CreateContainer", req, timeout_);
    if (!resp.ok()) return resp.status();
    if (resp->container_id().empty()) {
      return ContractError("CreateContainer",
                           absl::StrFormat("ContainerId is not set for container \"%s\"",
                                           config.metadata().ShortDebugString()));
    }
    return std::move(*resp->mutable_container_id());
  }

  absl::Status StartContainer(const std::string& container_id) override {
    v1::StartContainerRequest req;
    req.set_container_id(container_id);
    return CallUnary(*stub_, &Stub::StartContainer, "StartContainer", req, timeout_).status();
  }

  absl::Status StopContainer(const std::string& container_id, int64_t timeout_seconds) override {
    v1::StopContainerRequest req;
    req.set_container_id(container_id);
    req.set_timeout(timeout_seconds);
    // Leave the runtime time to kill the container after the grace period.
    const absl::Duration deadline = timeout_ + absl::Seconds(std::max<int64_t>(timeout_seconds, 0));
    return CallUnary(*stub_, &Stub::StopContainer, "StopContainer", req, deadline).status();
  }

  absl::Status RemoveContainer(const std::string& container_id) override {
    v1::RemoveContainerRequest req;
    req.set_container_id(container_id);
    return CallUnary(*stub_, &Stub::RemoveContainer, "RemoveContainer", req, timeout_).status();
  }

  absl::StatusOr<std::vector<v1::Container>> ListContainers(
      const v1::ContainerFilter* filter) override {
    v1::ListContainersRequest req;
    if (filter != nullptr) *req.mutable_filter() = *filter;
    auto resp = CallUnary(*stub_, &Stub::ListContainers, "ListContainers", req, timeout_);
    if (!resp.ok()) return resp.status();
    return ToVector(resp->containers());
  }

  absl::StatusOr<v1::ContainerStatusResponse> ContainerStatus(const std::string& container_id,
                                                              bool verbose) override {
    v1::ContainerStatusRequest req;
    req.set_container_id(container_id);
    req.set_verbose(verbose);
    auto resp = CallUnary(*stub_, &Stub::ContainerStatus, "ContainerStatus", req, timeout_);
    if (!resp.ok()) return resp.status();
    if (resp->has_status()) {
      if (absl::Status s = VerifyContainerStatus(resp->status()); !s.ok()) return s;
    }
    return resp;
  }

  absl::Status UpdateContainerResources(const std::string& container_id,
                                        const v1::ContainerResources& resources) override {
    v1::UpdateContainerResourcesRequest req;
    req.set_container_id(container_id);
    if (resources.has_linux()) *req.mutable_linux() = resources.linux();
    if (resources.has_windows()) *req.mutable_windows() = resources.windows();
    return CallUnary(*stub_, &Stub::UpdateContainerResources, "UpdateContainerResources", req,
                     timeout_)
        .status();
  }

  absl::Status ReopenContainerLog(const std::string& container_id) override {
    v1::ReopenContainerLogRequest req;
    req.set_container_id(container_id);
    return CallUnary(*stub_, &Stub::ReopenContainerLog, "ReopenContainerLog", req, timeout_)
        .status();
  }

  absl::StatusOr<v1::ExecSyncResponse> ExecSync(const std::string& container_id,
                                                const std::vector<std::string>& cmd,
                                                absl::Duration timeout) override {
    v1::ExecSyncRequest req;
    req.set_container_id(container_id);
    for (const std::string& arg : cmd) req.add_cmd(arg);
    req.set_timeout(absl::ToInt64Seconds(timeout));
    // A zero command timeout means "no limit": no deadline then. Otherwise leave the runtime
    // the request timeout on top of the command's for clean-up.
    const absl::Duration deadline =
        timeout == absl::ZeroDuration() ? absl::InfiniteDuration() : timeout_ + timeout;
    auto resp = CallUnary(*stub_, &Stub::ExecSync, "ExecSync", req, deadline);
    if (!resp.ok() && resp.status().code() == absl::StatusCode::kDeadlineExceeded) {
      return absl::DeadlineExceededError(
          absl::StrFormat("ExecSync: command '%s' timed out after %s", absl::StrJoin(cmd, " "),
                          absl::FormatDuration(timeout)));
    }
    return resp;
  }

  absl::StatusOr<v1::ExecResponse> Exec(const v1::ExecRequest& req) override {
    auto resp = CallUnary(*stub_, &Stub::Exec, "Exec", req, timeout_);
    if (resp.ok() && resp->url().empty()) return ContractError("Exec", "URL is not set");
    return resp;
  }

  absl::StatusOr<v1::AttachResponse> Attach(const v1::AttachRequest& req) override {
    auto resp = CallUnary(*stub_, &Stub::Attach, "Attach", req, timeout_);
    if (resp.ok() && resp->url().empty()) return ContractError("Attach", "URL is not set");
    return resp;
  }

  absl::Status CheckpointContainer(const v1::CheckpointContainerRequest& request) override {
    if (request.timeout() < 0) {
      return absl::InvalidArgumentError("CheckpointContainer: the timeout must not be negative");
    }
    v1::CheckpointContainerRequest req = request;
    // Upstream: a timeout longer than the request timeout is honoured, a shorter one is raised
    // to the request timeout (and sent as such).
    absl::Duration deadline = timeout_;
    const int64_t default_seconds = absl::ToInt64Seconds(timeout_);
    if (req.timeout() > default_seconds) {
      deadline = absl::Seconds(req.timeout());
    } else {
      req.set_timeout(default_seconds);
    }
    return CallUnary(*stub_, &Stub::CheckpointContainer, "CheckpointContainer", req, deadline)
        .status();
  }

  absl::Status GetContainerEvents(const ContainerEventCallback& on_event,
                                  StreamCancellation& cancel) override {
    grpc::ClientContext context;
    cancel.SetCancelHook([&context] { context.TryCancel(); });
    std::unique_ptr<grpc::ClientReader<v1::ContainerEventResponse>> reader =
        stub_->GetContainerEvents(&context, v1::GetEventsRequest());
    v1::ContainerEventResponse event;
    while (reader->Read(&event)) {
      // The callback runs on this stream's thread; a throw must not leave the cancel hook
      // pointing at a dead context.
      RunGuarded("container event callback", [&] { on_event(event); });
      event.Clear();
    }
    const grpc::Status status = reader->Finish();
    cancel.ClearCancelHook();
    if (cancel.IsCancelled()) return absl::CancelledError("GetContainerEvents: cancelled");
    return internal::FromGrpc("GetContainerEvents", status);
  }

  absl::StatusOr<v1::ContainerStats> ContainerStats(const std::string& container_id) override {
    v1::ContainerStatsRequest req;
    req.set_container_id(container_id);
    auto resp = CallUnary(*stub_, &Stub::ContainerStats, "ContainerStats", req, timeout_);
    if (!resp.ok()) return resp.status();
    return std::move(*resp->mutable_stats());
  }

  absl::StatusOr<std::vector<v1::ContainerStats>> ListContainerStats(
      const v1::ContainerStatsFilter* filter) override {
    v1::ListContainerStatsRequest req;
    if (filter != nullptr) *req.mutable_filter() = *filter;
    auto resp = CallUnary(*stub_, &Stub::ListContainerStats, "ListContainerStats", req, timeout_);
    if (!resp.ok()) return resp.status();
    return ToVector(resp->stats());
  }

  absl::StatusOr<v1::PodSandboxStats> PodSandboxStats(const std::string& pod_sandbox_id) override {
    v1::PodSandboxStatsRequest req;
    req.set_pod_sandbox_id(pod_sandbox_id);
    auto resp = CallUnary(*stub_, &Stub::PodSandboxStats, "PodSandboxStats", req, timeout_);
    if (!resp.ok()) return resp.status();
    return std::move(*resp->mutable_stats());
  }

  absl::StatusOr<std::vector<v1::PodSandboxStats>> ListPodSandboxStats(
      const v1::PodSandboxStatsFilter* filter) override {
    v1::ListPodSandboxStatsRequest req;
    if (filter != nullptr) *req.mutable_filter() = *filter;
    auto resp = CallUnary(*stub_, &Stub::ListPodSandboxStats, "ListPodSandboxStats", req, timeout_);
    if (!resp.ok()) return resp.status();
    return ToVector(resp->stats());
  }

  absl::StatusOr<std::vector<v1::MetricDescriptor>> ListMetricDescriptors() override {
    auto resp = CallUnary(*stub_, &Stub::ListMetricDescriptors, "ListMetricDescriptors",
                          v1::ListMetricDescriptorsRequest(), timeout_);
    if (!resp.ok()) return resp.status();
    return ToVector(resp->descriptors());
  }

  absl::StatusOr<std::vector<v1::PodSandboxMetrics>> ListPodSandboxMetrics() override {
    auto resp = CallUnary(*stub_, &Stub::ListPodSandboxMetrics, "ListPodSandboxMetrics",
                          v1::ListPodSandboxMetricsRequest(), timeout_);
    if (!resp.ok()) return resp.status();
    return ToVector(resp->pod_metrics());
  }

  absl::Status UpdateRuntimeConfig(const v1::RuntimeConfig& runtime_config) override {
    v1::UpdateRuntimeConfigRequest req;
    *req.mutable_runtime_config() = runtime_config;
    return CallUnary(*stub_, &Stub::UpdateRuntimeConfig, "UpdateRuntimeConfig", req, timeout_)
        .status();
  }

  absl::StatusOr<v1::StatusResponse> Status(bool verbose) override {
    v1::StatusRequest req;
    req.set_verbose(verbose);
    auto resp = CallUnary(*stub_, &Stub::Status, "Status", req, timeout_);
    if (!resp.ok()) return resp.status();
    if (!resp->has_status() || resp->status().conditions_size() < 2) {
      return ContractError("Status", "RuntimeReady or NetworkReady condition are not set");
    }
    return resp;
  }

 private:
  const std::shared_ptr<grpc::Channel> channel_;
  const std::unique_ptr<Stub> stub_;
  const absl::Duration timeout_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RuntimeService>> NewRemoteRuntimeService(
    const std::string& endpoint, absl::Duration request_timeout) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = internal::DialEndpoint(endpoint);
  if (!channel.ok()) return channel.status();
  auto service = std::make_unique<RemoteRuntimeService>(*std::move(channel), request_timeout);
  if (absl::Status s = service->Validate(endpoint); !s.ok()) return s;
  return std::unique_ptr<RuntimeService>(std::move(service));
}

}  // namespace kubelet::cri
