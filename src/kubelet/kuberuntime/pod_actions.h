// computePodActions: what SyncPod must do to move a pod from its observed runtime status to its
// spec. A pure function (no runtime calls, no manager state), ported from upstream
// kuberuntime_manager.go / kuberuntime_container.go with the sidecar logic of later releases
// (computeInitContainerActions, used for every pod):
//
//   * Sandbox: none, not ready, several ready, network mode changed (hostNetwork flipped) or no IP
//     for a pod-network pod -> kill everything and create a new sandbox (attempt = max + 1),
//     restarting init containers from the first. Exceptions: restartPolicy Never pods that
//     already ran containers, and pods whose regular containers were already created and have
//     nothing left to start (OnFailure after success), get no new sandbox (KillPod only).
//   * Init containers, in order: the next one starts when the previous one succeeded; a failed one
//     restarts unless restartPolicy is Never (then the pod is killed); one in unknown state is
//     killed first. Sidecars (restartPolicy Always init containers) are started in order, count
//     as started once running (and, with a startup probe, once startup succeeded), and are
//     restarted whenever they exit, change spec or fail liveness/startup.
//   * Regular containers start once initialization is done; an exited one restarts per
//     restartPolicy (Always; OnFailure when exit code != 0; Never not at all); a running one is
//     killed and restarted when its spec hash changed ("Container x definition changed, will be
//     restarted") or liveness/startup failed (restarted unless restartPolicy Never). No pod
//     deleted (deletionTimestamp set) restarts containers.
//   * Nothing left running or to start -> KillPod (sidecars are not restarted then).
//   * In-place resize (InPlacePodVerticalScaling, not for static pods; upstream v1.28
//     computePodResizeAction): a running container whose spec changed in its resources only is
//     not restarted for that. Once its requests equal its allocatedResources (the kubelet
//     accepted the resize), its desired memory limit, CPU limit and CPU request are compared
//     with the current ones (the runtime's report, else the API status's resources): a changed
//     resource whose resizePolicy is RestartContainer restarts the container ("Container x
//     resize requires restart") and the pod cgroup is updated; otherwise the container is listed
//     for an update of that resource, decreases first. Containers without limits, or whose API
//     status has no resources, are left alone.
//
// Thread-safe (pure).
#ifndef KUBELET_KUBELET_KUBERUNTIME_POD_ACTIONS_H_
#define KUBELET_KUBELET_KUBERUNTIME_POD_ACTIONS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/pod.h"
#include "kubelet/container/runtime.h"

namespace kubelet::kuberuntime {

// Why a container is killed (upstream containerKillReason); selects probe grace periods.
inline constexpr char kReasonStartupProbe[] = "StartupProbe";
inline constexpr char kReasonLivenessProbe[] = "LivenessProbe";
inline constexpr char kReasonFailedPostStartHook[] = "FailedPostStartHook";
inline constexpr char kReasonUnknown[] = "Unknown";

struct ContainerToKill {
  container::ContainerID id;
  std::string name;
  std::string message;
  std::string reason;  // one of the kReason* above, or ""
  bool operator==(const ContainerToKill&) const = default;
};

// A container's resources as the resize sees them: limits and requests in bytes / millicores.
struct ContainerResourceValues {
  int64_t memory_limit = 0;
  int64_t memory_request = 0;
  int64_t cpu_limit = 0;
  int64_t cpu_request = 0;
  bool operator==(const ContainerResourceValues&) const = default;
};

// upstream containerToUpdateInfo. `current` is shared by the memory and CPU entries of one
// container: an update of one resource that succeeded is what the other's update keeps.
struct ContainerToUpdate {
  int container_index = 0;  // into spec.containers
  container::ContainerID id;
  ContainerResourceValues desired;
  std::shared_ptr<ContainerResourceValues> current;
  bool operator==(const ContainerToUpdate& o) const {
    return container_index == o.container_index && id == o.id && desired == o.desired &&
           (current == o.current || (current && o.current && *current == *o.current));
  }
};

struct PodActions {
  // Stop every running container and the sandbox(es).
  bool kill_pod = false;
  // Create a new sandbox (after KillPod); init containers are purged first.
  bool create_sandbox = false;
  // The existing sandbox to start containers in ("" when none / being replaced).
  std::string sandbox_id;
  // Attempt number for the sandbox to create (or of the current one).
  uint32_t attempt = 0;
  // Indexes into spec.initContainers, in start order.
  std::vector<int> init_containers_to_start;
  // Indexes into spec.containers, in start order.
  std::vector<int> containers_to_start;
  // Keyed by runtime container id.
  std::map<std::string, ContainerToKill> containers_to_kill;
  // Indexes into spec.ephemeralContainers (ephemeral containers are never restarted).
  std::vector<int> ephemeral_containers_to_start;
  // In-place resize: per resource ("cpu", "memory"), the running containers to update, in
  // update order (decreases before increases).
  std::map<std::string, std::vector<ContainerToUpdate>> containers_to_update;
  // A container is restarted for a resize: the pod cgroup is updated too.
  bool update_pod_resources = false;

  std::string String() const;
  bool operator==(const PodActions&) const = default;
};

// Probe verdicts for running containers; any may be empty (= never true).
struct ProbeView {
  std::function<bool(const container::ContainerID&)> liveness_failed;
  std::function<bool(const container::ContainerID&)> startup_failed;
  std::function<bool(const container::ContainerID&)> startup_pending;
};

// In-place resize for ComputePodActions.
struct ResizeView {
  // InPlacePodVerticalScaling, and not a static pod (upstream
  // isInPlacePodVerticalScalingAllowed).
  bool allowed = false;
  // The pod's status re-read from the runtime, used for the regular containers (upstream reads
  // it again there); null: `status`.
  const container::PodStatus* latest = nullptr;
};

PodActions ComputePodActions(const api::Pod& pod, const container::PodStatus& status,
                             const ProbeView& probes = {}, const ResizeView& resize = {});

// upstream computePodResizeAction for the running container `idx` with runtime status `status`:
// false when the container is to be restarted for its resize (listed in `changes`), true when
// it is kept (and listed for updates when it needs some).
bool ComputePodResizeAction(const api::Pod& pod, int idx, const container::ContainerStatus& status,
                            PodActions* changes);

// podSandboxChanged: (changed, attempt for the next sandbox, sandbox id to reuse or kill).
struct SandboxChange {
  bool changed = false;
  uint32_t attempt = 0;
  std::string sandbox_id;
};
SandboxChange PodSandboxChanged(const api::Pod& pod, const container::PodStatus& status);

// kubecontainer.ShouldContainerBeRestarted.
bool ShouldContainerBeRestarted(const api::Container& container, const api::Pod& pod,
                                const container::PodStatus& status);

// OOMKilled, exited with non-zero code, or unknown state.
bool IsInitContainerFailed(const container::ContainerStatus& status);

// The spec hash differs from the one the container was created with.
bool ContainerChanged(const api::Container& container, const container::ContainerStatus& status);

}  // namespace kubelet::kuberuntime

#endif  // KUBELET_KUBELET_KUBERUNTIME_POD_ACTIONS_H_
