// SimRuntime: the simulated container runtime of a hollow node. It implements both CRI client
// interfaces in process, with no containers, no images, no network and no logs behind them, so
// that one process can run many real kubelets (one SimRuntime each) against a real API server.
//
// Unlike FakeRuntime (cri/testing) it is production code: a thousand instances live in one
// process, so an instance keeps only the live sandboxes, containers and images (their CRI
// statuses and a few resolved numbers); it records no calls or requests, injects no errors, and
// frees a sandbox or container when it is removed.
//
// Sandboxes
//  - RunPodSandbox takes the pod's start delay (see below), then returns a fresh id (64 hex
//    digits, as containerd's; ids sort in creation order) of a READY sandbox. A second sandbox
//    with the same metadata (name, namespace, uid, attempt) while the first exists fails with
//    kAlreadyExists.
//  - Every sandbox gets the lowest free IPv4 address of `pod_cidr`, never its network address,
//    its first address (the gateway, ".1") or its broadcast address; none with host network
//    (linux.security_context.namespace_options.network == NODE). When none is left,
//    RunPodSandbox fails with kResourceExhausted naming the CIDR; with an invalid `pod_cidr`
//    it fails with kInvalidArgument (ValidateSimRuntimeOptions tells earlier).
//  - StopPodSandbox kills the sandbox's running containers (exit code 137, reason "Error", as
//    SIGKILL), marks it NOTREADY and releases its IP (its status then shows none); stopping
//    again is a no-op. RemovePodSandbox removes it and its containers and is idempotent.
//
// Containers
//  - CREATED -> RUNNING -> EXITED. CreateContainer needs a READY sandbox and a name + attempt
//    not used in it (kAlreadyExists); StartContainer a CREATED container (otherwise
//    kFailedPrecondition) and takes the start delay first. StopContainer of a running container
//    makes it EXITED with exit code 0, reason "Completed" (it honoured SIGTERM; the grace period
//    is not waited for) and is a no-op otherwise. RemoveContainer is idempotent. Other calls
//    with an unknown id fail with kNotFound.
//  - ContainerStatus reports the config's image, labels, annotations and log path (the log
//    directory of the sandbox config joined with the container's log_path; no log is written),
//    image_ref (the pulled image's id, or the image as given when it was never pulled), the
//    resources of the config or of UpdateContainerResources, and no mounts.
//  - List* honour every filter field (id, state, sandbox id, label selector).
//
// Per-pod behaviour, from the annotations of the PodSandboxConfig (the kubelet copies the pod's
// annotations there). A container's settings are resolved once, when it is created, from the
// sandbox config given to CreateContainer (the pod as it is then, so a restarted container sees
// edited annotations), or from the sandbox's own annotations when that config has none:
//  - "hollow.kubelet/exit-after": a Go duration ("30s", "1m30s", "0s"): every container of the
//    pod exits that long after it started. "hollow.kubelet/exit-after-<container name>"
//    overrides it for one container ("hollow.kubelet/exit-after-init: 0s" lets an init
//    container finish). Default: never.
//  - "hollow.kubelet/exit-code", "hollow.kubelet/exit-code-<container name>": the exit code of
//    such an exit, 0..255 (default 0); reason "Completed" for 0 and "Error" otherwise, as
//    containerd.
//  - "hollow.kubelet/start-delay": a Go duration replacing `start_delay` for the pod's
//    RunPodSandbox (read from the config given to it) and StartContainer calls.
//  - "hollow.kubelet/exec-exit-code": the exit code ExecSync answers, 0..255 (default 0), so
//    that exec probes can be made to fail.
//  - "hollow.kubelet/cpu-millicores", "hollow.kubelet/memory-bytes": decimal integers >= 0
//    replacing `cpu_millicores` and `memory_bytes`.
//  A value that does not parse or is out of range (a negative duration, say) is ignored, as if
//  the key were absent: these come from users, and never make a call fail.
//
// Time is lazy: there are no threads and no timers. A running container whose exit time
// (started_at + exit-after) has passed is made EXITED, finished at that time, whenever a call
// reads or lists containers (ListContainers, ContainerStatus, PodSandboxStatus, the stats
// calls, ExecSync, StopContainer, StopPodSandbox, Counts). A restarted container is a new
// container created by the kubelet, with its own start time.
//
// Stats: a running container uses `cpu_millicores` (usage_nano_cores = millicores * 1e6; the
// cumulative usage_core_nano_seconds grows by millicores * 1e6 per second since it started) and
// `memory_bytes` (working set, usage and RSS); a container that is not running uses nothing.
// Timestamps are now. A sandbox's stats are the sums over its containers, its process count the
// number of running containers. ListMetricDescriptors and ListPodSandboxMetrics are empty.
//
// Images: PullImage of an image not present takes `pull_delay`, then adds it: id a stable
// pseudo digest ("sha256:" + 64 hex) of the normalized reference ("busybox" ->
// "docker.io/library/busybox:latest"), repo_tags that reference (repo_digests for a digest
// reference), size `image_size_bytes`; it answers the image's id. PullImage of a present image
// answers at once. ImageStatus of an unknown image is OK with no image; RemoveImage is
// idempotent; ImageFsInfo reports one file system, "/var/lib/hollow/images", its used bytes the
// sum of the image sizes and its inodes the number of images.
//
// Everything else: ExecSync answers the pod's exec exit code with empty output (kNotFound or
// kFailedPrecondition when the container is unknown or not running). Exec, Attach and
// PortForward fail with kUnimplemented ("hollow node: no streaming"), as do CheckpointContainer
// and GetContainerEvents (the kubelet then uses its relisting PLEG). UpdateContainerResources
// stores the resources in the container's status. ReopenContainerLog and UpdateRuntimeConfig
// are OK and do nothing (the pod CIDR stays `pod_cidr`). Version answers `runtime_name`,
// `runtime_version` and API "v1"; Status reports RuntimeReady and NetworkReady true.
//
// Thread-safety: every method is thread-safe (one mutex). The delays (`sleep`) run outside the
// lock, so one slow start does not hold up other calls; a container removed or stopped during
// its start delay is not started (kNotFound / kFailedPrecondition). `now` is called with the
// lock held and must not call back into the runtime.
#ifndef KUBELET_CRI_SIM_SIM_RUNTIME_H_
#define KUBELET_CRI_SIM_SIM_RUNTIME_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cri/runtime_service.h"

namespace kubelet::cri {

struct SimRuntimeOptions {
  // IPv4 CIDR the sandboxes' addresses come from.
  std::string pod_cidr = "10.64.0.0/24";
  // How long RunPodSandbox and StartContainer take (a pod's "hollow.kubelet/start-delay"
  // replaces it). Negative durations count as zero.
  absl::Duration start_delay = absl::ZeroDuration();
  // How long PullImage takes for an image not present yet.
  absl::Duration pull_delay = absl::ZeroDuration();
  // Size of every pulled image.
  uint64_t image_size_bytes = uint64_t{10} << 20;
  // Simulated CPU use (millicores) and working set (bytes) of each running container.
  int64_t cpu_millicores = 1;
  int64_t memory_bytes = int64_t{4} << 20;
  // Time source for every timestamp and for the lazy exits. Null: absl::Now.
  std::function<absl::Time()> now = absl::Now;
  // Runs the delays (outside the lock); called only for positive delays. Null: absl::SleepFor.
  std::function<void(absl::Duration)> sleep = absl::SleepFor;
  // What Version answers.
  std::string runtime_name = "hollow";
  std::string runtime_version = "1.0.0";
};

// OK when `options` can be used as given: `pod_cidr` an IPv4 CIDR ("a.b.c.d/n", n <= 32, no
// leading zeros), delays, sizes and usages not negative. SimRuntime accepts any options; this
// lets the wiring refuse bad flags at start-up.
absl::Status ValidateSimRuntimeOptions(const SimRuntimeOptions& options);

// What a SimRuntime holds, for metrics and tests.
struct SimRuntimeCounts {
  int64_t sandboxes = 0;
  int64_t ready_sandboxes = 0;
  int64_t containers = 0;
  int64_t running_containers = 0;

  friend bool operator==(const SimRuntimeCounts&, const SimRuntimeCounts&) = default;
};

class SimRuntime final : public RuntimeService, public ImageManagerService {
 public:
  // Pod annotations (see the contract above). The "-<container name>" forms append "-" and the
  // name to kExitAfterAnnotation / kExitCodeAnnotation.
  static constexpr char kExitAfterAnnotation[] = "hollow.kubelet/exit-after";
  static constexpr char kExitCodeAnnotation[] = "hollow.kubelet/exit-code";
  static constexpr char kStartDelayAnnotation[] = "hollow.kubelet/start-delay";
  static constexpr char kExecExitCodeAnnotation[] = "hollow.kubelet/exec-exit-code";
  static constexpr char kCpuMillicoresAnnotation[] = "hollow.kubelet/cpu-millicores";
  static constexpr char kMemoryBytesAnnotation[] = "hollow.kubelet/memory-bytes";

  // Exit code of the containers StopPodSandbox kills (SIGKILL).
  static constexpr int kKilledExitCode = 137;
  static constexpr char kRuntimeApiVersion[] = "v1";
  static constexpr char kImageFsMountpoint[] = "/var/lib/hollow/images";

  explicit SimRuntime(SimRuntimeOptions options = {});
  ~SimRuntime() override;

  SimRuntime(const SimRuntime&) = delete;
  SimRuntime& operator=(const SimRuntime&) = delete;

  // Applies the exits that are due, then counts.
  SimRuntimeCounts Counts();

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
  // A container's settings, resolved from the pod's annotations when it is created.
  struct Behaviour {
    absl::Duration exit_after = absl::InfiniteDuration();  // infinite: never exits by itself
    absl::Duration start_delay;
    int64_t cpu_millicores = 0;
    int64_t memory_bytes = 0;
    int32_t exit_code = 0;
    int32_t exec_exit_code = 0;
  };
  struct Sandbox {
    runtime::v1::PodSandboxStatus status;
    std::string log_directory;
    std::vector<std::string> container_ids;  // in creation order
    int64_t ip_offset = -1;                  // address held in the pod CIDR; -1: none
  };
  struct Container {
    runtime::v1::ContainerStatus status;
    std::string pod_sandbox_id;
    Behaviour behaviour;
  };
  // The pod CIDR's addresses as offsets from its network address: the usable ones are
  // [first, end); those below `next` were handed out and are free again only if in `released`.
  struct IpPool {
    absl::Status error;  // the pod CIDR does not parse
    uint32_t network = 0;
    uint64_t first = 0;
    uint64_t end = 0;
    uint64_t next = 0;
    std::set<uint64_t> released;
  };

  Behaviour ResolveBehaviour(const google::protobuf::Map<std::string, std::string>& annotations,
                             const std::string& container_name) const;
  absl::Duration StartDelay(
      const google::protobuf::Map<std::string, std::string>& annotations) const;

  std::string NewId() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int64_t NowNanos() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Container* FindContainer(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Sandbox* FindSandbox(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The CREATED container `id` of a READY sandbox, or StartContainer's error.
  absl::StatusOr<Container*> StartableContainer(const std::string& id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes `c` EXITED if its exit time is at or before `now_ns`.
  void Advance(Container& c, int64_t now_ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AdvanceAll(int64_t now_ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AdvanceSandbox(const Sandbox& s, int64_t now_ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<uint64_t> AllocateIp() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReleaseIp(Sandbox& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EraseContainer(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  runtime::v1::ContainerStats StatsFor(const Container& c, int64_t now_ns) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  runtime::v1::PodSandboxStats SandboxStatsFor(const Sandbox& s, int64_t now_ns) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const runtime::v1::Image* FindImage(const std::string& ref) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const SimRuntimeOptions options_;
  const uint64_t id_salt_;

  mutable absl::Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  IpPool pool_ ABSL_GUARDED_BY(mu_);
  // Ordered by id, that is by creation.
  std::map<std::string, Sandbox> sandboxes_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Container> containers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, runtime::v1::Image> images_ ABSL_GUARDED_BY(mu_);  // by id
};

}  // namespace kubelet::cri

#endif  // KUBELET_CRI_SIM_SIM_RUNTIME_H_
