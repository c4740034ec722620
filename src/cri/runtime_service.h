// Container Runtime Interface (CRI) client interfaces: the kubelet's only way to talk to the
// container runtime (containerd, CRI-O).
//
// RuntimeService and ImageManagerService mirror the upstream kubelet's `internalapi`
// interfaces (k8s.io/cri-api/pkg/apis, v0.28): one method per CRI RPC, using the runtime.v1
// protobuf messages as parameters and results.
//
// Errors are values. A failure reported by the runtime is returned as an absl::Status with the
// same canonical code as the gRPC status and the message "<Method>: <runtime's message>", e.g.
// "RunPodSandbox: failed to reserve sandbox name". A response that breaks the CRI contract (a
// missing id, an unset required field) is returned as kUnknown with the same prefix.
//
// Thread-safety: implementations are thread-safe; every method may be called concurrently from
// any thread. Calls are blocking: they return when the runtime has answered or the call's
// deadline has passed (kDeadlineExceeded). Run them on a worker pool, never on an event loop.
//
// Ownership: arguments are borrowed for the duration of the call only; results are owned by the
// caller. Pointer arguments (filters) may be null, meaning "no filter".
#ifndef KUBELET_CRI_RUNTIME_SERVICE_H_
#define KUBELET_CRI_RUNTIME_SERVICE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cri/proto/api.pb.h"

namespace kubelet::cri {

// The CRI API version the kubelet speaks in VersionRequest.version (upstream's
// kubeRuntimeAPIVersion).
inline constexpr char kKubeRuntimeAPIVersion[] = "0.1.0";

// Lets one thread stop a long-running streaming call (GetContainerEvents) made by another.
//
// Cancel() may be called from any thread, any number of times, before, during or after the
// stream. Implementations of streaming calls register a hook that Cancel() runs once (outside
// any lock of this object); ClearCancelHook() waits for a hook that is running to return, so
// the implementation may free what its hook touches right after clearing it.
class StreamCancellation {
 public:
  StreamCancellation() = default;
  StreamCancellation(const StreamCancellation&) = delete;
  StreamCancellation& operator=(const StreamCancellation&) = delete;

  void Cancel();
  bool IsCancelled() const;

  // For implementations. Runs `hook` at once (on this thread) if already cancelled.
  void SetCancelHook(std::function<void()> hook);
  void ClearCancelHook();

 private:
  mutable absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool hook_running_ ABSL_GUARDED_BY(mu_) = false;
  std::function<void()> hook_ ABSL_GUARDED_BY(mu_);
};

// Called once per event received, on the thread that called GetContainerEvents.
using ContainerEventCallback = std::function<void(const runtime::v1::ContainerEventResponse&)>;

class RuntimeService {
 public:
  virtual ~RuntimeService() = default;

  // --- Versioning -------------------------------------------------------------------------
  // Fails with kUnknown if the runtime leaves any field of the response empty.
  virtual absl::StatusOr<runtime::v1::VersionResponse> Version(const std::string& api_version) = 0;

  // --- Pod sandboxes ----------------------------------------------------------------------
  // Creates and starts a sandbox; returns its id.
  virtual absl::StatusOr<std::string> RunPodSandbox(const runtime::v1::PodSandboxConfig& config,
                                                    const std::string& runtime_handler) = 0;
  // Idempotent per the CRI; stops every container of the sandbox.
  virtual absl::Status StopPodSandbox(const std::string& pod_sandbox_id) = 0;
  // Idempotent per the CRI; removes every container of the sandbox.
  virtual absl::Status RemovePodSandbox(const std::string& pod_sandbox_id) = 0;
  virtual absl::StatusOr<runtime::v1::PodSandboxStatusResponse> PodSandboxStatus(
      const std::string& pod_sandbox_id, bool verbose) = 0;
  virtual absl::StatusOr<std::vector<runtime::v1::PodSandbox>> ListPodSandbox(
      const runtime::v1::PodSandboxFilter* filter) = 0;
  virtual absl::StatusOr<runtime::v1::PortForwardResponse> PortForward(
      const runtime::v1::PortForwardRequest& request) = 0;

  // --- Containers -------------------------------------------------------------------------
  // Returns the new container's id.
  virtual absl::StatusOr<std::string> CreateContainer(
      const std::string& pod_sandbox_id, const runtime::v1::ContainerConfig& config,
      const runtime::v1::PodSandboxConfig& sandbox_config) = 0;
  virtual absl::Status StartContainer(const std::string& container_id) = 0;
  // `timeout_seconds` is the grace period before the runtime kills the container.
  virtual absl::Status StopContainer(const std::string& container_id, int64_t timeout_seconds) = 0;
  virtual absl::Status RemoveContainer(const std::string& container_id) = 0;
  virtual absl::StatusOr<std::vector<runtime::v1::Container>> ListContainers(
      const runtime::v1::ContainerFilter* filter) = 0;
  virtual absl::StatusOr<runtime::v1::ContainerStatusResponse> ContainerStatus(
      const std::string& container_id, bool verbose) = 0;
  virtual absl::Status UpdateContainerResources(
      const std::string& container_id, const runtime::v1::ContainerResources& resources) = 0;
  virtual absl::Status ReopenContainerLog(const std::string& container_id) = 0;
  // Runs `cmd` in the container and waits for it. `timeout` limits the command (zero: no
  // limit). A command that ran is OK whatever its exit code (see ExecSyncResponse.exit_code);
  // a command that outlived its timeout fails with kDeadlineExceeded.
  virtual absl::StatusOr<runtime::v1::ExecSyncResponse> ExecSync(
      const std::string& container_id, const std::vector<std::string>& cmd,
      absl::Duration timeout) = 0;
  virtual absl::StatusOr<runtime::v1::ExecResponse> Exec(
      const runtime::v1::ExecRequest& request) = 0;
  virtual absl::StatusOr<runtime::v1::AttachResponse> Attach(
      const runtime::v1::AttachRequest& request) = 0;
  virtual absl::Status CheckpointContainer(
      const runtime::v1::CheckpointContainerRequest& request) = 0;
  // Blocks, calling `on_event` for each container event, until the stream ends or `cancel` is
  // cancelled. Returns kCancelled after a cancellation, kUnimplemented if the runtime has no
  // event stream (containerd 1.6), and otherwise the status that ended the stream. Has no
  // deadline.
  virtual absl::Status GetContainerEvents(const ContainerEventCallback& on_event,
                                          StreamCancellation& cancel) = 0;

  // --- Stats ------------------------------------------------------------------------------
  virtual absl::StatusOr<runtime::v1::ContainerStats> ContainerStats(
      const std::string& container_id) = 0;
  virtual absl::StatusOr<std::vector<runtime::v1::ContainerStats>> ListContainerStats(
      const runtime::v1::ContainerStatsFilter* filter) = 0;
  virtual absl::StatusOr<runtime::v1::PodSandboxStats> PodSandboxStats(
      const std::string& pod_sandbox_id) = 0;
  virtual absl::StatusOr<std::vector<runtime::v1::PodSandboxStats>> ListPodSandboxStats(
      const runtime::v1::PodSandboxStatsFilter* filter) = 0;
  virtual absl::StatusOr<std::vector<runtime::v1::MetricDescriptor>> ListMetricDescriptors() = 0;
  virtual absl::StatusOr<std::vector<runtime::v1::PodSandboxMetrics>> ListPodSandboxMetrics() = 0;

  // --- Runtime ----------------------------------------------------------------------------
  virtual absl::Status UpdateRuntimeConfig(const runtime::v1::RuntimeConfig& runtime_config) = 0;
  // Fails with kUnknown unless the runtime reports at least two conditions (RuntimeReady and
  // NetworkReady), as upstream.
  virtual absl::StatusOr<runtime::v1::StatusResponse> Status(bool verbose) = 0;
};

class ImageManagerService {
 public:
  virtual ~ImageManagerService() = default;

  virtual absl::StatusOr<std::vector<runtime::v1::Image>> ListImages(
      const runtime::v1::ImageFilter* filter) = 0;
  // An absent image is not an error: the response has no `image`.
  virtual absl::StatusOr<runtime::v1::ImageStatusResponse> ImageStatus(
      const runtime::v1::ImageSpec& image, bool verbose) = 0;
  // Returns the image reference (id or digest) of the pulled image. `auth` and
  // `sandbox_config` may be null.
  virtual absl::StatusOr<std::string> PullImage(
      const runtime::v1::ImageSpec& image, const runtime::v1::AuthConfig* auth,
      const runtime::v1::PodSandboxConfig* sandbox_config) = 0;
  // Idempotent per the CRI.
  virtual absl::Status RemoveImage(const runtime::v1::ImageSpec& image) = 0;
  virtual absl::StatusOr<std::vector<runtime::v1::FilesystemUsage>> ImageFsInfo() = 0;
};

}  // namespace kubelet::cri

#endif  // KUBELET_CRI_RUNTIME_SERVICE_H_
