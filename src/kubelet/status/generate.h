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

struct GenerateInput {
  const api::Pod* pod = nullptr;
  const container::PodStatus* runtime_status = nullptr;
  const api::PodStatus* old_status = nullptr;  // the previous API status, if any
  const ReasonCache* reasons = nullptr;
  const ProbeState* probes = nullptr;
  std::string host_ip;
  bool pod_is_terminal = false;  // the pod worker decided the pod is finished
  absl::Time now = absl::Now();
};

api::PodStatus GeneratePodStatus(const GenerateInput& in);

// The pod conditions upstream's kubelet reports, in its order: PodReadyToStartContainers,
// Initialized, Ready, ContainersReady, PodScheduled (reasons ContainersNotInitialized,
// ContainersNotReady, PodCompleted; messages "containers with unready status: [a b]").
// lastTransitionTime is left for the caller.
std::vector<api::PodCondition> GenerateConditions(const api::Pod& pod,
                                                  const container::PodStatus& runtime_status,
                                                  const api::PodStatus& status);

// upstream getPhase.
std::string GetPhase(const api::Pod& pod, const std::vector<api::ContainerStatus>& init_statuses,
                     const std::vector<api::ContainerStatus>& statuses, bool pod_is_terminal);

bool IsTerminalPhase(const std::string& phase);

}  // namespace kubelet::status

#endif  // KUBELET_KUBELET_STATUS_GENERATE_H_
