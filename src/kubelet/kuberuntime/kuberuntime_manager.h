// KubeGenericRuntimeManager: the CRI-backed container::Runtime (upstream
// pkg/kubelet/kuberuntime/kuberuntime_manager.go and friends).
//
// It turns pod specs into CRI calls: sandbox and container configs (sandbox_config.h, env.h,
// security_context.h, resources.h), image pulls (image_manager.h), the sync decision
// (pod_actions.h), crash-loop back-off, graceful kills with sidecar termination ordering, and
// garbage collection of dead containers, sandboxes and pod log directories.
//
// In-place resize (options.in_place_pod_vertical_scaling, upstream v1.28 doPodResizeAction,
// SyncPod step 7 before new containers start): per resource, memory first, then CPU, the pod
// cgroup grows before its containers and shrinks after them; a memory limit below the pod's
// current usage is refused ("Aborting attempt to set pod memory limit less than current memory
// usage"); each container gets UpdateContainerResources with its Linux resources as for
// creation (the other resource at its last known value). A failure stops the resize and is
// logged; the next sync retries (the sync result does not carry it, as upstream).
//
// Restart safety: the manager keeps no pod state of its own besides back-off timers. Everything
// it decides on (restart counts, spec hashes, grace periods, preStop handlers of orphans) is read
// back from the labels and annotations it writes (labels.h), so a freshly started manager given
// an existing pod's status computes no actions for unchanged running containers.
//
// Files on the host: <pod_logs_dir>/<ns>_<name>_<uid>/ (0755) and its <container>/ directories
// (the runtime writes N.log there), <root_dir>/pods/<uid>/etc-hosts, and termination-message
// files <root_dir>/pods/<uid>/containers/<name>/<random id> (0666) bound at
// terminationMessagePath.
//
// Thread-safety: thread-safe. SyncPod/KillPod/GetPodStatus for different pods may run in
// parallel (the pod workers serialize calls per pod). Every method blocks on CRI calls; call
// them from worker threads only. KillPod stops a pod's containers in parallel (one thread per
// container, joined before returning).
//
// Ownership: borrows the CRI services, the clock and the pod state provider, which must outlive
// the manager.
#ifndef KUBELET_KUBELET_KUBERUNTIME_KUBERUNTIME_MANAGER_H_
#define KUBELET_KUBELET_KUBERUNTIME_KUBERUNTIME_MANAGER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "api/pod.h"
#include "common/backoff.h"
#include "common/clock.h"
#include "cri/runtime_service.h"
#include "kubelet/container/runtime.h"
#include "kubelet/kuberuntime/env.h"
#include "kubelet/kuberuntime/image_manager.h"
#include "kubelet/kuberuntime/options.h"
#include "kubelet/kuberuntime/pod_actions.h"
#include "kubelet/kuberuntime/sandbox_config.h"
#include "kubelet/kuberuntime/security_context.h"

namespace kubelet::kuberuntime {

// Reasons of failed SyncPod steps (SyncResult.reason), as upstream.
inline constexpr char kErrCrashLoopBackOff[] = "CrashLoopBackOff";
inline constexpr char kErrCreateContainerConfig[] = "CreateContainerConfigError";
inline constexpr char kErrCreateContainer[] = "CreateContainerError";
inline constexpr char kErrRunContainer[] = "RunContainerError";
inline constexpr char kErrPreStartHook[] = "PreStartHookError";
inline constexpr char kErrPostStartHook[] = "PostStartHookError";
inline constexpr char kErrKillContainer[] = "KillContainerError";
inline constexpr char kErrCreatePodSandbox[] = "CreatePodSandboxError";
inline constexpr char kErrConfigPodSandbox[] = "ConfigPodSandboxError";
inline constexpr char kErrKillPodSandbox[] = "KillPodSandboxError";

// The kubelet never gives a container less than this to stop (avoids needless SIGKILLs).
inline constexpr int64_t kMinimumGracePeriodSeconds = 2;
// The CRI API version the manager requires (upstream kubeRuntimeAPIVersion).
inline constexpr char kRuntimeAPIVersion[] = "0.1.0";

class KubeGenericRuntimeManager final : public container::Runtime {
 public:
  // `pod_state` may be null: GC then never treats a pod as deleted.
  KubeGenericRuntimeManager(cri::RuntimeService& runtime, cri::ImageManagerService& images,
                            Clock& clock, Options options,
                            const container::PodStateProvider* pod_state = nullptr);
  ~KubeGenericRuntimeManager() override;

  KubeGenericRuntimeManager(const KubeGenericRuntimeManager&) = delete;
  KubeGenericRuntimeManager& operator=(const KubeGenericRuntimeManager&) = delete;

  // Asks the runtime for its version: fails unless it speaks CRI version 0.1.0 (as upstream's
  // constructor does) and caches the runtime name for Type() and container ids. Optional: Type()
  // fetches the name lazily otherwise.
  absl::Status Init();

  // ---- container::Runtime ------------------------------------------------------------------
  std::string Type() const override;
  absl::StatusOr<std::vector<container::Pod>> GetPods(bool all) override;
  container::PodSyncResult SyncPod(const api::Pod& pod,
                                   const container::PodStatus& status) override;
  absl::Status KillPod(const api::Pod* pod, const container::Pod& running,
                       std::optional<int64_t> grace_period_override) override;
  absl::StatusOr<container::PodStatus> GetPodStatus(const std::string& uid, const std::string& name,
                                                    const std::string& namespace_) override;
  absl::Status GarbageCollect(const container::GCPolicy& policy, bool all_sources_ready) override;
  void ForgetPod(const std::string& uid) override;

  // ---- Beyond the interface -------------------------------------------------------------
  // GarbageCollect with upstream's evictNonDeletedPods (eviction manager: also remove the
  // containers of terminated pods that are not deleted yet).
  absl::Status GarbageCollect(const container::GCPolicy& policy, bool all_sources_ready,
                              bool evict_non_deleted_pods);

  // KillPod returning the per-step results.
  container::PodSyncResult KillPodWithSyncResult(const api::Pod* pod, const container::Pod& running,
                                                 std::optional<int64_t> grace_period_override);

  // The sandbox config for `pod` (also what CreateContainer receives).
  absl::StatusOr<runtime::v1::PodSandboxConfig> GeneratePodSandboxConfig(const api::Pod& pod,
                                                                         uint32_t attempt) const;

  // The container config; creates the container's log directory and its termination-message
  // file, writes etc-hosts. `image_ref` is what EnsureImageExists returned.
  absl::StatusOr<runtime::v1::ContainerConfig> GenerateContainerConfig(
      const api::Pod& pod, const api::Container& container, int restart_count,
      const std::vector<std::string>& pod_ips, const std::string& image_ref,
      const container::ContainerID* ns_target = nullptr);

  // Drops stale crash-loop and image pull back-off entries (housekeeping).
  void BackOffGC();

  ImageManager& image_manager() { return image_manager_; }
  Backoff& crash_backoff() { return crash_backoff_; }
  const Options& options() const { return options_; }

 private:
  events::EventRecorder& Recorder() const {
    return options_.recorder != nullptr ? *options_.recorder : events::DiscardingRecorder();
  }
  class TerminationOrdering;

  struct StartOutcome {
    std::string reason;  // "" on success
    std::string message;
  };

  std::string RuntimeName() const;
  container::ContainerID MakeID(const std::string& id) const;
  SandboxSettings MakeSandboxSettings(const api::Pod& pod) const;
  ResourceSettings MakeResourceSettings() const;
  EnvContext MakeEnvContext() const;

  // Crash-loop back-off check for a container about to start.
  bool DoBackOff(const api::Pod& pod, const api::Container& container,
                 const container::PodStatus& status, std::string* message);
  StartOutcome StartContainer(const std::string& sandbox_id,
                              const runtime::v1::PodSandboxConfig& sandbox_config,
                              const api::Container& container, const api::Pod& pod,
                              const container::PodStatus& status,
                              const std::vector<std::string>& pod_ips,
                              const std::string* ephemeral_target);
  absl::StatusOr<std::string> CreatePodSandbox(const api::Pod& pod, uint32_t attempt,
                                               std::string* message);
  absl::StatusOr<std::vector<runtime::v1::Mount>> MakeMounts(
      const api::Pod& pod, const api::Container& container,
      const std::vector<std::string>& pod_ips);

  absl::Status KillContainer(const api::Pod* pod, const container::ContainerID& id,
                             const std::string& name, std::string message,
                             const std::string& reason, std::optional<int64_t> grace_override,
                             TerminationOrdering* ordering);
  std::vector<container::SyncResult> KillContainersWithSyncResult(
      const api::Pod* pod, const container::Pod& running, std::optional<int64_t> grace_override);
  // Runs preStop within `grace` seconds; returns the seconds it took.
  int64_t ExecutePreStopHook(const api::Pod& pod, const container::ContainerID& id,
                             const api::Container& spec, int64_t grace);

  void PruneInitContainersBeforeStart(const api::Pod& pod, const container::PodStatus& status);
  void PurgeInitContainers(const api::Pod& pod, const container::PodStatus& status);
  // Removes the container's log files, then the container.
  absl::Status RemoveContainer(const std::string& id);

  // In-place resize steps.
  void DoPodResizeAction(const api::Pod& pod, const PodActions& changes);
  absl::Status UpdatePodContainerResources(const api::Pod& pod, const std::string& resource,
                                           const std::vector<ContainerToUpdate>& updates);
  absl::Status UpdateContainerResources(const api::Pod& pod, const api::Container& container,
                                        const container::ContainerID& id);

  absl::StatusOr<std::vector<container::ContainerStatus>> GetPodContainerStatuses(
      const std::string& uid);
  container::ContainerStatus ToContainerStatus(const runtime::v1::ContainerStatus& s) const;

  // GC steps (kuberuntime_gc.cc).
  absl::Status EvictContainers(const container::GCPolicy& policy, bool all_sources_ready,
                               bool evict_non_deleted_pods);
  absl::Status EvictSandboxes(bool evict_non_deleted_pods);
  absl::Status EvictPodLogsDirectories(bool all_sources_ready);
  bool ShouldRemoveContent(const std::string& uid) const;
  bool ShouldRemoveRuntime(const std::string& uid) const;

  cri::RuntimeService& runtime_;
  cri::ImageManagerService& images_;
  Clock& clock_;
  const Options options_;
  const container::PodStateProvider* const pod_state_;
  ImageManager image_manager_;
  Backoff crash_backoff_;
  int64_t memory_capacity_ = 0;
  bool cgroup2_unified_ = false;

  mutable absl::Mutex mu_;
  mutable std::string runtime_name_ ABSL_GUARDED_BY(mu_);
};

// Lives with the runtime-neutral types now.
using container::ConvertPodStatusToRunningPod;

// The grace period to stop a container with: the pod's deletion grace period, else the probe's
// terminationGracePeriodSeconds when killed for that probe, else the pod's
// terminationGracePeriodSeconds, else 2.
int64_t SetTerminationGracePeriod(const api::Pod& pod, const api::Container& container,
                                  const std::string& reason);

}  // namespace kubelet::kuberuntime

#endif  // KUBELET_KUBELET_KUBERUNTIME_KUBERUNTIME_MANAGER_H_
