// The kubelet's view of the container runtime (upstream pkg/kubelet/container): runtime-neutral
// types for pods, containers and their status, and the Runtime interface that the sync loop,
// pod workers, PLEG and GC use. The CRI-backed implementation lives in kubelet/kuberuntime.
//
// Types are values (copyable snapshots). Runtime implementations are thread-safe; their methods
// block on CRI calls and must never be called from the HTTP server's or the sync loop's thread
// for anything slow (pod workers and PLEG run them on their own threads).
#ifndef KUBELET_KUBELET_CONTAINER_RUNTIME_H_
#define KUBELET_KUBELET_CONTAINER_RUNTIME_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/pod.h"

namespace kubelet::container {

// "containerd://<id>" in API status; type is the runtime name reported by Version.
struct ContainerID {
  std::string type;
  std::string id;
  std::string String() const { return id.empty() ? "" : type + "://" + id; }
  bool empty() const { return id.empty(); }
  bool operator==(const ContainerID&) const = default;
};

enum class State { kCreated, kRunning, kExited, kUnknown };
const char* StateName(State s);  // "created", "running", "exited", "unknown"

// A container as listed by the runtime (GetPods).
struct Container {
  ContainerID id;
  std::string name;
  std::string image;
  std::string image_id;
  uint64_t hash = 0;  // io.kubernetes.container.hash label
  State state = State::kUnknown;
  absl::Time created_at = absl::InfinitePast();
};

// A pod as listed by the runtime: its sandboxes and containers grouped by pod UID.
struct Pod {
  std::string id;  // pod UID
  std::string name;
  std::string namespace_;
  absl::Time created_at = absl::InfinitePast();
  std::vector<Container> containers;
  std::vector<Container> sandboxes;  // sandboxes as containers (state running/exited)
};

// The CPU and memory the runtime reports as applied to a running container (CRI
// ContainerStatus.resources.linux, upstream kubecontainer.ContainerResources): the CPU request
// from cpu.shares, the CPU limit from the CFS quota and period, the memory limit. Unset: not
// reported (or zero).
struct ContainerResources {
  std::optional<api::Quantity> cpu_request;
  std::optional<api::Quantity> cpu_limit;
  std::optional<api::Quantity> memory_request;
  std::optional<api::Quantity> memory_limit;
  bool operator==(const ContainerResources&) const = default;
};

// Detailed status of one container (from ContainerStatus).
struct ContainerStatus {
  ContainerID id;
  std::string name;
  State state = State::kUnknown;
  absl::Time created_at = absl::InfinitePast();
  absl::Time started_at = absl::InfinitePast();
  absl::Time finished_at = absl::InfinitePast();
  int32_t exit_code = 0;
  std::string image;
  std::string image_id;
  std::string image_ref;
  uint64_t hash = 0;
  // io.kubernetes.container.hashWithoutResources annotation (InPlacePodVerticalScaling; 0 when
  // the container was created without the gate).
  uint64_t hash_without_resources = 0;
  int32_t restart_count = 0;  // io.kubernetes.container.restartCount annotation
  std::string reason;
  std::string message;
  // The container's log path on the host (for FallbackToLogsOnError).
  std::string log_path;
  // What the runtime reports as applied (InPlacePodVerticalScaling only).
  std::optional<ContainerResources> resources;
};

// One sandbox's status, reduced to what the kubelet decides on.
struct SandboxStatus {
  std::string id;
  bool ready = false;  // SANDBOX_READY
  uint32_t attempt = 0;
  absl::Time created_at = absl::InfinitePast();
  std::vector<std::string> ips;  // primary first
  // Namespace modes as created (NODE for host network etc.), to detect config changes.
  bool host_network = false;
};

// Status of a pod as seen by the runtime, produced by GetPodStatus and cached by PLEG.
struct PodStatus {
  std::string id;  // pod UID
  std::string name;
  std::string namespace_;
  std::vector<std::string> ips;
  std::vector<ContainerStatus> container_statuses;  // newest first per container name
  std::vector<SandboxStatus> sandbox_statuses;      // newest first
  absl::Time timestamp = absl::InfinitePast();      // when this status was observed

  // The newest status for container `name`, or nullptr.
  const ContainerStatus* FindContainerStatusByName(const std::string& name) const;
  // The running container named `name`, or nullptr.
  const ContainerStatus* GetRunningContainerStatus(const std::string& name) const;
};

// Outcome of one SyncPod: the per-step results (for logging and status reasons) and an overall
// error. `reason` strings are the upstream ones: ErrImagePull, ImagePullBackOff,
// ErrImageNeverPull, CrashLoopBackOff, CreateContainerConfigError, CreateContainerError,
// RunContainerError, InvalidImageName, PreStartHookError, PostStartHookError...
struct SyncResult {
  enum class Action {
    kStartContainer,
    kKillContainer,
    kCreatePodSandbox,
    kKillPodSandbox,
    kInitContainer,
    kConfigPodSandbox
  };
  Action action;
  std::string target;  // container name or sandbox id
  absl::Status error;
  std::string reason;
  std::string message;
};

struct PodSyncResult {
  std::vector<SyncResult> results;
  absl::Status sync_error;     // set when the sync as a whole failed before the steps
  absl::Status Error() const;  // first failure, or Ok
};

// Garbage collection policy for dead containers (upstream kubecontainer.GCPolicy).
struct GCPolicy {
  absl::Duration min_age = absl::ZeroDuration();
  int max_per_pod_container = 1;
  int max_containers = -1;  // no limit
};

// Answers questions about pods for GC: whether a pod is gone (deleted from every source) or
// terminated (its containers may all be removed).
class PodStateProvider {
 public:
  virtual ~PodStateProvider() = default;
  virtual bool ShouldPodContentBeRemoved(const std::string& uid) const = 0;
  virtual bool ShouldPodRuntimeBeRemoved(const std::string& uid) const = 0;
};

class Runtime {
 public:
  virtual ~Runtime() = default;

  // "containerd", as Version reports it.
  virtual std::string Type() const = 0;

  // Pods known to the runtime. all=false lists only running containers/sandboxes.
  virtual absl::StatusOr<std::vector<Pod>> GetPods(bool all) = 0;

  // Brings the pod's sandbox and containers to the state `pod` describes (computePodActions,
  // then sandbox, init containers, app containers), given the latest observed `status`.
  virtual PodSyncResult SyncPod(const api::Pod& pod, const PodStatus& status) = 0;

  // Stops every container of `running` (and its sandbox), honouring the pod's grace period or
  // `grace_period_override`. `pod` may be null when the spec is gone (orphans).
  virtual absl::Status KillPod(const api::Pod* pod, const Pod& running,
                               std::optional<int64_t> grace_period_override) = 0;

  // Reads sandbox and container status of one pod from the runtime.
  virtual absl::StatusOr<PodStatus> GetPodStatus(const std::string& uid, const std::string& name,
                                                 const std::string& namespace_) = 0;

  // Removes dead containers and sandboxes per policy; `all_sources_ready` gates removing pods
  // that no source knows about.
  virtual absl::Status GarbageCollect(const GCPolicy& policy, bool all_sources_ready) = 0;

  // Clears per-container back-off state for a deleted pod.
  virtual void ForgetPod(const std::string& uid) = 0;
};

// The pod as a listing would show it from its status: every container with its state, and
// every sandbox (ready: running, otherwise exited).
Pod ConvertPodStatusToPod(const std::string& runtime_name, const PodStatus& status);
// kubecontainer.ConvertPodStatusToRunningPod: the running containers and all sandboxes of a
// pod's status, as a runtime Pod (what KillPod needs). `runtime_name` types the sandbox IDs.
Pod ConvertPodStatusToRunningPod(const std::string& runtime_name, const PodStatus& status);

}  // namespace kubelet::container

#endif  // KUBELET_KUBELET_CONTAINER_RUNTIME_H_
