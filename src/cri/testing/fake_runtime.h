// FakeRuntime: an in-process container runtime implementing both CRI client interfaces with
// real state, for unit tests of the kubelet's CRI users (kuberuntime, PLEG, image manager...).
//
// Behaviour follows containerd where tests are likely to notice:
//  - RunPodSandbox returns a fresh id ("sandbox-00000001"; ids sort in creation order). A
//    second sandbox with the same metadata (name, namespace, uid, attempt) while the first
//    exists fails with kAlreadyExists. Sandboxes start READY with an IP (none with host
//    network).
//  - StopPodSandbox kills the sandbox's running containers (exit code 137) and marks it
//    NOTREADY; RemovePodSandbox and RemoveContainer are idempotent and force-stop first.
//  - Containers go CREATED -> RUNNING -> EXITED; StopContainer of a non-running container is a
//    no-op; unknown ids fail with kNotFound; wrong states fail with kFailedPrecondition.
//  - List* honour every filter field (id, state, sandbox id, label selector).
//  - ImageStatus of an unknown image is OK with no `image`; PullImage adds the image.
//  - GetContainerEvents answers kUnimplemented (like containerd 1.6) unless
//    set_events_supported(true); then it streams an event per container transition.
//
// Test controls: InjectError() queues an error for the next call of a method; calls() is the
// log of method names in call order; SetContainerExited() simulates a crash; times come from a
// settable clock.
//
// Thread-safety: all methods are thread-safe. Callbacks (event stream, exec handler, clock) are
// never called with the fake's lock held, except the clock, which must not call the fake.
#ifndef KUBELET_CRI_TESTING_FAKE_RUNTIME_H_
#define KUBELET_CRI_TESTING_FAKE_RUNTIME_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cri/runtime_service.h"

namespace kubelet::cri {

class FakeRuntime final : public RuntimeService, public ImageManagerService {
 public:
  // Exit code StopPodSandbox/RemoveContainer give to containers they kill (SIGKILL).
  static constexpr int kKilledExitCode = 137;
  static constexpr char kRuntimeName[] = "fakeruntime";
  static constexpr char kRuntimeVersion[] = "0.1.0";
  static constexpr char kRuntimeApiVersion[] = "v1";

  using ExecSyncHandler = std::function<absl::StatusOr<runtime::v1::ExecSyncResponse>(
      const std::string& container_id, const std::vector<std::string>& cmd,
      absl::Duration timeout)>;

  FakeRuntime();
  ~FakeRuntime() override;

  // ---- Test controls ----------------------------------------------------------------------

  // Queues `status` to be returned by the next call of `method` (an RPC name such as
  // "StartContainer"); several errors queued for one method are returned in order, one per call.
  // The call is still logged in calls() but has no other effect.
  void InjectError(absl::string_view method, absl::Status status);
  // Makes every call of `method` fail with `status` until ClearErrors().
  void SetPersistentError(absl::string_view method, absl::Status status);
  void ClearErrors();

  // Method names in call order, e.g. {"RunPodSandbox", "CreateContainer", ...}.
  std::vector<std::string> calls() const;
  int CallCount(absl::string_view method) const;
  void ClearCalls();

  // Time source for created_at/started_at/finished_at and stats timestamps (default absl::Now).
  void SetClock(std::function<absl::Time()> now);

  // Simulates the container's process ending by itself: EXITED with `exit_code`, finished now.
  // `reason` defaults to "Completed" for 0 and "Error" otherwise (containerd's choice).
  absl::Status SetContainerExited(const std::string& container_id, int exit_code,
                                  absl::string_view reason = "", absl::string_view message = "");
  // Forces a container into `state` without the usual transition checks.
  absl::Status SetContainerState(const std::string& container_id,
                                 runtime::v1::ContainerState state);
  absl::Status SetSandboxState(const std::string& pod_sandbox_id,
                               runtime::v1::PodSandboxState state);
  // Overrides the IP reported in a sandbox's network status.
  absl::Status SetSandboxIP(const std::string& pod_sandbox_id, const std::string& ip);

  // Replaces what Version/Status answer. Status by default reports RuntimeReady and
  // NetworkReady true.
  void SetVersion(runtime::v1::VersionResponse version);
  void SetRuntimeStatus(runtime::v1::StatusResponse status);
  // Last runtime config passed to UpdateRuntimeConfig.
  runtime::v1::RuntimeConfig runtime_config() const;

  // ExecSync runs `handler` (outside the lock); by default it succeeds with empty output.
  void SetExecSyncHandler(ExecSyncHandler handler);
  // Stats returned for a container by ContainerStats/ListContainerStats/PodSandboxStats; by
  // default only attributes and zero usage timestamps are filled in.
  void SetContainerStats(const std::string& container_id, runtime::v1::ContainerStats stats);
  void SetMetrics(std::vector<runtime::v1::MetricDescriptor> descriptors,
                  std::vector<runtime::v1::PodSandboxMetrics> metrics);

  // GetContainerEvents streams events when true; answers kUnimplemented when false (default).
  void set_events_supported(bool supported);
  // Number of GetContainerEvents calls currently streaming.
  int event_subscriber_count() const;
  // Exit code StopContainer gives a running container (default 0: it honoured SIGTERM).
  void set_stop_exit_code(int exit_code);

  // Images known to the runtime. AddImage replaces an image with the same id.
  void AddImage(runtime::v1::Image image);
  // Image file system usage reported by ImageFsInfo (default: one entry, the sum of sizes).
  void SetImageFsInfo(std::vector<runtime::v1::FilesystemUsage> usage);
  // Every PullImage request received, in order (including failed ones).
  std::vector<runtime::v1::PullImageRequest> pull_requests() const;

  // Snapshots of the state, for assertions.
  std::vector<std::string> sandbox_ids() const;
  std::vector<std::string> container_ids() const;
  std::optional<runtime::v1::PodSandboxStatus> GetSandbox(const std::string& id) const;
  std::optional<runtime::v1::ContainerStatus> GetContainer(const std::string& id) const;
  // The config a container was created with.
  std::optional<runtime::v1::ContainerConfig> GetContainerConfig(const std::string& id) const;

  // ---- RuntimeService ---------------------------------------------------------------------
  absl::StatusOr<runtime::v1::VersionResponse> Version(const std::string& api_version) override;
  absl::StatusOr<std::string> RunPodSandbox(const runtime::v1::PodSandboxConfig& config,
                                            const std::string& runtime_handler) override;
  absl::Status StopPodSandbox(const std::string& pod_sandbox_id) override;
  absl::Status RemovePodSandbox(const std::string& pod_sandbox_id) override;
  absl::StatusOr<runtime::v1::PodSandboxStatusResponse> PodSandboxStatus(
      const std::string& pod_sandbox_id, bool verbose) override;
  absl::StatusOr<std::vector<runtime::v1::PodSandbox>> ListPodSandbox(
      const runtime::v1::PodSandboxFilter* filter) override;
  absl::StatusOr<runtime::v1::PortForwardResponse> PortForward(
      const runtime::v1::PortForwardRequest& request) override;
  absl::StatusOr<std::string> CreateContainer(
      const std::string& pod_sandbox_id, const runtime::v1::ContainerConfig& config,
      const runtime::v1::PodSandboxConfig& sandbox_config) override;
  absl::Status StartContainer(const std::string& container_id) override;
  absl::Status StopContainer(const std::string& container_id, int64_t timeout_seconds) override;
  absl::Status RemoveContainer(const std::string& container_id) override;
  absl::StatusOr<std::vector<runtime::v1::Container>> ListContainers(
      const runtime::v1::ContainerFilter* filter) override;
  absl::StatusOr<runtime::v1::ContainerStatusResponse> ContainerStatus(
      const std::string& container_id, bool verbose) override;
  absl::Status UpdateContainerResources(const std::string& container_id,
                                        const runtime::v1::ContainerResources& resources) override;
  absl::Status ReopenContainerLog(const std::string& container_id) override;
  absl::StatusOr<runtime::v1::ExecSyncResponse> ExecSync(const std::string& container_id,
                                                         const std::vector<std::string>& cmd,
                                                         absl::Duration timeout) override;
  absl::StatusOr<runtime::v1::ExecResponse> Exec(const runtime::v1::ExecRequest& request) override;
  absl::StatusOr<runtime::v1::AttachResponse> Attach(
      const runtime::v1::AttachRequest& request) override;
  absl::Status CheckpointContainer(const runtime::v1::CheckpointContainerRequest& request) override;
  absl::Status GetContainerEvents(const ContainerEventCallback& on_event,
                                  StreamCancellation& cancel) override;
  absl::StatusOr<runtime::v1::ContainerStats> ContainerStats(
      const std::string& container_id) override;
  absl::StatusOr<std::vector<runtime::v1::ContainerStats>> ListContainerStats(
      const runtime::v1::ContainerStatsFilter* filter) override;
  absl::StatusOr<runtime::v1::PodSandboxStats> PodSandboxStats(
      const std::string& pod_sandbox_id) override;
  absl::StatusOr<std::vector<runtime::v1::PodSandboxStats>> ListPodSandboxStats(
      const runtime::v1::PodSandboxStatsFilter* filter) override;
  absl::StatusOr<std::vector<runtime::v1::MetricDescriptor>> ListMetricDescriptors() override;
  absl::StatusOr<std::vector<runtime::v1::PodSandboxMetrics>> ListPodSandboxMetrics() override;
  absl::Status UpdateRuntimeConfig(const runtime::v1::RuntimeConfig& runtime_config) override;
  absl::StatusOr<runtime::v1::StatusResponse> Status(bool verbose) override;

  // ---- ImageManagerService ----------------------------------------------------------------
  absl::StatusOr<std::vector<runtime::v1::Image>> ListImages(
      const runtime::v1::ImageFilter* filter) override;
  absl::StatusOr<runtime::v1::ImageStatusResponse> ImageStatus(const runtime::v1::ImageSpec& image,
                                                               bool verbose) override;
  absl::StatusOr<std::string> PullImage(
      const runtime::v1::ImageSpec& image, const runtime::v1::AuthConfig* auth,
      const runtime::v1::PodSandboxConfig* sandbox_config) override;
  absl::Status RemoveImage(const runtime::v1::ImageSpec& image) override;
  absl::StatusOr<std::vector<runtime::v1::FilesystemUsage>> ImageFsInfo() override;

 private:
  struct Sandbox {
    runtime::v1::PodSandboxStatus status;
    runtime::v1::PodSandboxConfig config;
  };
  struct Container {
    runtime::v1::ContainerStatus status;
    runtime::v1::ContainerConfig config;
    std::string pod_sandbox_id;
  };
  // One GetContainerEvents caller's pending events; lives on that caller's stack.
  struct Subscriber {
    std::deque<runtime::v1::ContainerEventResponse> queue;
    bool cancelled = false;
  };

  // Logs the call and returns the injected error for `method`, if any.
  absl::Status Begin(absl::string_view method) ABSL_LOCKS_EXCLUDED(mu_);
  int64_t NowNanos() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Container* FindContainer(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Sandbox* FindSandbox(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks a running container EXITED now with `exit_code`/`reason` and emits a STOPPED event.
  void ExitContainer(Container& c, int exit_code, absl::string_view reason,
                     absl::string_view message) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EmitEvent(const Container& c, runtime::v1::ContainerEventType type)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  runtime::v1::ContainerStats StatsFor(const Container& c) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  runtime::v1::PodSandboxStats SandboxStatsFor(const std::string& id, const Sandbox& s) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const runtime::v1::Image* FindImage(const std::string& ref) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveContainerLocked(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::function<absl::Time()> now_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::deque<absl::Status>> injected_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, absl::Status> persistent_ ABSL_GUARDED_BY(mu_);

  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  // Ordered maps so List* answers are deterministic (creation order of ids).
  std::map<std::string, Sandbox> sandboxes_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Container> containers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, runtime::v1::ContainerStats> stats_ ABSL_GUARDED_BY(mu_);

  runtime::v1::VersionResponse version_ ABSL_GUARDED_BY(mu_);
  runtime::v1::StatusResponse status_ ABSL_GUARDED_BY(mu_);
  runtime::v1::RuntimeConfig runtime_config_ ABSL_GUARDED_BY(mu_);
  ExecSyncHandler exec_sync_handler_ ABSL_GUARDED_BY(mu_);
  std::vector<runtime::v1::MetricDescriptor> metric_descriptors_ ABSL_GUARDED_BY(mu_);
  std::vector<runtime::v1::PodSandboxMetrics> metrics_ ABSL_GUARDED_BY(mu_);

  bool events_supported_ ABSL_GUARDED_BY(mu_) = false;
  int stop_exit_code_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Subscriber*> subscribers_ ABSL_GUARDED_BY(mu_);

  std::map<std::string, runtime::v1::Image> images_ ABSL_GUARDED_BY(mu_);  // by id
  std::optional<std::vector<runtime::v1::FilesystemUsage>> image_fs_ ABSL_GUARDED_BY(mu_);
  std::vector<runtime::v1::PullImageRequest> pull_requests_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet::cri

#endif  // KUBELET_CRI_TESTING_FAKE_RUNTIME_H_
