// Pod status generation (upstream kubelet_pods.go generateAPIPodStatus, getPhase,
// convertToAPIContainerStatuses): turns the runtime's view of a pod (container::PodStatus) plus
// the last sync's failure reasons into the API PodStatus that /pods and the API server show.
// Pure functions; thread-safe.
#ifndef KUBELET_KUBELET_STATUS_GENERATE_H_
#define KUBELET_KUBELET_STATUS_GENERATE_H_

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "api/pod.h"
#include "kubelet/container/runtime.h"

namespace kubelet::status {

// Why a container is not running, from the last SyncPod (upstream reasonCache):
// container name -> {reason, message}, e.g. {"CrashLoopBackOff", "back-off 10s restarting ..."}.
struct WaitingReason {
  std::string reason;
  std::string message;
};
using ReasonCache = std::map<std::string, WaitingReason>;

// What the prober knows of a container (by runtime container id, "" if none). Unset functions or
// nullopt answers: ready unless the container has a readiness probe, started unless it has a
// startup probe.
struct ProbeState {
  std::function<std::optional<bool>(const std::string& container_id)> ready;
  std::function<std::optional<bool>(const std::string& container_id)> started;
};

// A pod the kubelet itself decided to end (eviction, active deadline; upstream's
// PodSyncHandler.ShouldEvict and the eviction manager's status function): the status is Failed
// with this reason and message before the conditions are computed.
struct TerminalReason {
  std::string reason;
  std::string message;
  // Set: the pod carries DisruptionTarget=True (reason TerminationByKubelet, `message`) since
  // then (the PodDisruptionConditions gate, evictions only).
  std::optional<absl::Time> disruption_since;
};

struct GenerateInput {
  const api::Pod* pod = nullptr;
  const container::PodStatus* runtime_status = nullptr;
  const api::PodStatus* old_status = nullptr;  // the previous API status, if any
  const ReasonCache* reasons = nullptr;
  const ProbeState* probes = nullptr;
  std::string host_ip;
  bool pod_is_terminal = false;              // the pod worker decided the pod is finished
  const TerminalReason* terminal = nullptr;  // the kubelet ends the pod (null: it does not)
  // Alpha feature gates of v1.28, off by default: the PodReadyToStartContainers condition
  // (PodReadyToStartContainersCondition) and status.hostIPs (PodHostIPs).
  bool ready_to_start_condition = false;
  bool host_ips = false;
  // InPlacePodVerticalScaling (alpha, off by default): every running container's status gets
  // allocatedResources (its recorded allocation; unrecorded for a container with resources:
  // logged, and the old status's kept) and resources (convertContainerStatusResources: limits
  // when the spec has limits, requests when it has an allocation; CPU values from what the
  // runtime reports, else from the spec on a first Running status or a new container id, else
  // kept from the old status; memory request and ephemeral-storage from the allocation, the
  // ephemeral-storage limit from the spec). status.resize is left for the caller.
  bool in_place_vertical_scaling = false;
  std::function<std::optional<api::ResourceList>(const std::string& container)> allocation;
  absl::Time now = absl::Now();
};

api::PodStatus GeneratePodStatus(const GenerateInput& in);

// The pod conditions upstream's kubelet reports, in its order: PodReadyToStartContainers (only
// with `ready_to_start_condition`), Initialized, Ready, ContainersReady, PodScheduled (reasons
// ContainersNotInitialized, ContainersNotReady, PodCompleted, PodFailed; messages "containers
// with unready status: [a b]"). lastTransitionTime is left for the caller.
std::vector<api::PodCondition> GenerateConditions(const api::Pod& pod,
                                                  const container::PodStatus& runtime_status,
                                                  const api::PodStatus& status,
                                                  bool ready_to_start_condition = false);

// InPlacePodVerticalScaling (upstream determinePodResizeStatus's test): whether an app
// container's spec resources (CPU, memory and ephemeral-storage only) differ from the resources
// its status reports. Containers without status resources do not count.
bool PodResizeSpecStatusDiffer(const api::Pod& pod, const api::PodStatus& status);

// upstream isPodResizeInProgress: a container's status resources have limits other than the
// spec's, or requests other than its allocatedResources.
bool IsPodResizeInProgress(const api::Pod& pod, const api::PodStatus& status);

// upstream pastActiveDeadline: the pod has spec.activeDeadlineSeconds and has been active (since
// status.startTime) that long. False without a start time.
bool PastActiveDeadline(const api::Pod& pod, const std::optional<api::Time>& start_time,
                        absl::Time now);

// Upstream activeDeadlineHandler's reason and message.
inline constexpr char kDeadlineExceededReason[] = "DeadlineExceeded";
inline constexpr char kDeadlineExceededMessage[] =
    "Pod was active on the node longer than the specified deadline";

// upstream getPhase.
std::string GetPhase(const api::Pod& pod, const std::vector<api::ContainerStatus>& init_statuses,
                     const std::vector<api::ContainerStatus>& statuses, bool pod_is_terminal);

bool IsTerminalPhase(const std::string& phase);

}  // namespace kubelet::status

#endif  // KUBELET_KUBELET_STATUS_GENERATE_H_
