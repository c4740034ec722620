// The topology manager (upstream pkg/kubelet/cm/topologymanager, v1.28): at admission it asks
// the hint providers (CPU, memory, device managers) where they could place a pod's resources,
// merges their hints by policy (policy.h), stores the chosen NUMA affinity for each container
// and lets every provider allocate, in that order.
//
// Admission (Admit, per pod; containers are the init containers, then the app containers, in
// spec order):
//   * policy none: each provider's Allocate for each container; nothing is stored (GetAffinity
//     answers "any").
//   * scope container: for each container, the providers' GetTopologyHints are merged; a hint
//     the policy does not admit rejects the pod with reason "TopologyAffinityError" and message
//     "Resources cannot be allocated with Topology locality"; otherwise the hint is stored for
//     the container and every provider allocates it before the next container is looked at.
//   * scope pod: the providers' GetPodTopologyHints are merged once; the same admission check,
//     then the one hint is stored for every container and each is allocated in turn.
//   An Allocate error rejects the pod with reason "UnexpectedAdmissionError" and message
//   "Allocate failed due to <error message>, which is unexpected", or with the reason and
//   message of an AdmissionError (hint_provider.h) as they are. A rejected pod's affinities are
//   dropped (upstream keeps them until its containers are removed; a rejected pod has none).
//   Upstream's logs: "Topology Admit Handler" (every pod), "Best TopologyHint" and "Topology
//   Affinity"; the hints each provider gave at verbosity 4. Metrics (upstream's):
//   kubelet_topology_manager_admission_requests_total (every pod), _errors_total (rejections
//   by a policy other than none), _duration_ms.
//
// Stored affinities are dropped by CleanupTerminatedPod and by Housekeeping for pods no longer
// active. Providers are borrowed and added at wiring time, before the first Admit.
//
// Thread-safety: all methods are thread-safe. Providers are called without the manager's lock
// held, so they may call GetAffinity from GetTopologyHints and Allocate.
#ifndef KUBELET_KUBELET_TOPOLOGYMANAGER_TOPOLOGY_MANAGER_H_
#define KUBELET_KUBELET_TOPOLOGYMANAGER_TOPOLOGY_MANAGER_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "api/pod.h"
#include "kubelet/container/pod_lifecycle.h"
#include "kubelet/topologymanager/hint_provider.h"
#include "kubelet/topologymanager/numa_info.h"
#include "kubelet/topologymanager/options.h"
#include "kubelet/topologymanager/policy.h"

namespace kubelet::topologymanager {

inline constexpr char kErrorTopologyAffinity[] = "TopologyAffinityError";
inline constexpr char kTopologyAffinityErrorMessage[] =
    "Resources cannot be allocated with Topology locality";
inline constexpr char kErrorReasonUnexpected[] = "UnexpectedAdmissionError";

class TopologyManager final : public container::PodLifecycleParticipant, public AffinityStore {
 public:
  // As upstream NewManager: with policy none nothing is checked and `numa` is ignored; otherwise
  // more than kMaxAllowableNUMANodes nodes fail ("unsupported on machines with more than 8 NUMA
  // Nodes"), then an unknown policy (`unknown policy: "x"`) or scope (`unknown scope: "x"`);
  // node ids must be 0..63 and, with prefer-closest-numa-nodes, `numa` must hold every node's
  // distances.
  static absl::StatusOr<std::unique_ptr<TopologyManager>> Create(
      const TopologyManagerOptions& options, NUMAInfo numa);

  std::string Name() const override { return "topology manager"; }

  // Borrowed; call before the first Admit. Providers are consulted in the order added.
  void AddHintProvider(HintProvider* provider);

  // "none", "best-effort", "restricted" or "single-numa-node"; the scope: "container", "pod",
  // or "none" with policy none (as upstream's scope names).
  const std::string& policy_name() const { return policy_name_; }
  const std::string& scope_name() const { return scope_name_; }

  container::AdmitDecision Admit(const api::Pod& pod,
                                 const std::vector<api::PodPtr>& admitted) override;
  // Drops the pod's affinities and has every provider release what the pod held.
  absl::Status CleanupTerminatedPod(const api::Pod& pod) override;
  void Housekeeping(const std::set<std::string>& active) override;

  TopologyHint GetAffinity(const std::string& pod_uid,
                           const std::string& container_name) const override;
  // UIDs of the pods with stored affinities, sorted.
  std::vector<std::string> PodsWithAffinity() const;

 private:
  TopologyManager(std::string scope_name, std::optional<Policy> policy);

  container::AdmitDecision AdmitNone(const api::Pod& pod,
                                     const std::vector<HintProvider*>& providers);
  container::AdmitDecision AdmitContainerScope(const api::Pod& pod,
                                               const std::vector<HintProvider*>& providers);
  container::AdmitDecision AdmitPodScope(const api::Pod& pod,
                                         const std::vector<HintProvider*>& providers);
  // Every provider's Allocate for `c`; the first error as an admission rejection.
  static std::optional<container::AdmitDecision> Allocate(
      const api::Pod& pod, const api::Container& c, const std::vector<HintProvider*>& providers);
  void SetAffinity(const std::string& pod_uid, const std::string& container,
                   const TopologyHint& hint);
  void DropPod(const std::string& pod_uid);

  const std::string scope_name_;
  const std::string policy_name_;
  const std::optional<Policy> policy_;  // nullopt for policy none

  mutable absl::Mutex mu_;
  std::vector<HintProvider*> providers_ ABSL_GUARDED_BY(mu_);
  // pod UID -> container name -> hint
  std::map<std::string, std::map<std::string, TopologyHint>> affinities_ ABSL_GUARDED_BY(mu_);
};

// Create with the NUMA distances read from <sysfs_root>/devices/system/node when the policy is
// not none and prefer-closest-numa-nodes is on (NewNUMAInfo), for the machine's `numa_nodes`.
absl::StatusOr<std::unique_ptr<TopologyManager>> NewTopologyManager(
    const TopologyManagerOptions& options, std::vector<int> numa_nodes,
    const std::string& sysfs_root = "/sys");

}  // namespace kubelet::topologymanager

#endif  // KUBELET_KUBELET_TOPOLOGYMANAGER_TOPOLOGY_MANAGER_H_
