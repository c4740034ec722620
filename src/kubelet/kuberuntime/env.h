// Container environment and command expansion, ported from upstream kubelet_pods.go
// (makeEnvironmentVariables, podFieldSelectorRuntimeValue, defaultPodLimitsForDownwardAPI),
// pkg/api/v1/resource (ExtractContainerResourceValue), pkg/fieldpath and
// kubecontainer.ExpandContainerCommandAndArgs.
//
// Semantics:
//   * envFrom (configMapRef / secretRef, with prefix) first, then env in declaration order; a
//     later definition of a name replaces the earlier value. Keys that are not valid env var
//     names are skipped with upstream's InvalidEnvironmentVariableNames warning event on the
//     pod. Output order: envFrom keys (by source, sorted by key), then env entries
//     in declaration order (upstream's order is a Go map's, i.e. random).
//   * value "$(VAR)" references expand against the variables defined so far (envFrom + earlier
//     env); "$$" escapes; unknown references stay verbatim.
//   * valueFrom.fieldRef: metadata.name/namespace/uid, metadata.labels['k'],
//     metadata.annotations['k'], metadata.labels / metadata.annotations (k="v" lines),
//     spec.nodeName, spec.serviceAccountName, status.hostIP, status.hostIPs (PodHostIPs gate),
//     status.podIP, status.podIPs (IPs ordered by the node's primary IP family).
//   * valueFrom.resourceFieldRef: limits/requests of cpu, memory, ephemeral-storage, hugepages-*
//     with the divisor, rounded up; unset limits fall back to node allocatable.
//   * configMapKeyRef / secretKeyRef through hooks; without them the standalone kubelet's
//     "couldn't get configMap <ns>/<name>, no kubeClient defined" error.
//   * service variables (service_env.h) through a hook, computed first (its error fails the
//     whole environment): "$(VAR)" in env values falls back to them after the container's own
//     variables; they follow the container's variables in the output, sorted by name, except
//     those the container defines itself. Without the hook (standalone) there are none.
// Pure functions apart from the hooks; thread-safe.
#ifndef KUBELET_KUBELET_KUBERUNTIME_ENV_H_
#define KUBELET_KUBELET_KUBERUNTIME_ENV_H_

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "api/pod.h"
#include "kubelet/events/event_recorder.h"

namespace kubelet::kuberuntime {

struct EnvVar {
  std::string name;
  std::string value;
  bool operator==(const EnvVar&) const = default;
};

using DataLookup = std::function<absl::StatusOr<std::map<std::string, std::string>>(
    const std::string& ns, const std::string& name)>;

// The service variables of a pod's containers (service_env.h).
using ServiceEnvLookup =
    std::function<absl::StatusOr<std::map<std::string, std::string>>(const api::Pod& pod)>;

struct EnvContext {
  std::vector<std::string> node_ips;  // primary first
  bool pod_host_ips = false;          // PodHostIPs feature gate
  api::ResourceList node_allocatable;
  DataLookup get_config_map;     // may be empty
  DataLookup get_secret;         // may be empty
  ServiceEnvLookup service_env;  // may be empty: no service variables
  // Where envFrom's skipped keys are reported (InvalidEnvironmentVariableNames); may be null.
  events::EventRecorder* recorder = nullptr;
};

absl::StatusOr<std::vector<EnvVar>> MakeEnvironmentVariables(
    const api::Pod& pod, const api::Container& container, const std::vector<std::string>& pod_ips,
    const EnvContext& ctx);

// The value of a downward API field path ("metadata.name", "metadata.labels['app']", ...).
absl::StatusOr<std::string> PodFieldSelectorRuntimeValue(const api::ObjectFieldSelector& fs,
                                                         const api::Pod& pod,
                                                         const std::vector<std::string>& pod_ips,
                                                         const EnvContext& ctx);

// The value of a resourceFieldRef for `container` (or fs.container_name of `pod`), limits
// defaulted from node allocatable.
absl::StatusOr<std::string> ContainerResourceRuntimeValue(const api::ResourceFieldSelector& fs,
                                                          const api::Pod& pod,
                                                          const api::Container& container,
                                                          const api::ResourceList& allocatable);

// command and args with $(VAR) expanded against `envs`.
std::pair<std::vector<std::string>, std::vector<std::string>> ExpandContainerCommandAndArgs(
    const api::Container& container, const std::vector<EnvVar>& envs);

// The pod IPs reordered as upstream's sortPodIPs: the first IP of the node's primary family,
// then the first of the other family.
std::vector<std::string> SortPodIPs(const std::vector<std::string>& pod_ips,
                                    const std::vector<std::string>& node_ips);

}  // namespace kubelet::kuberuntime

#endif  // KUBELET_KUBELET_KUBERUNTIME_ENV_H_
