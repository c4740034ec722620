// The static CPU manager policy (upstream pkg/kubelet/cm/cpumanager/policy_static.go, v1.28).
//
// CPU pools:
//   shared     the default CPU set: everything not exclusively assigned. Burstable, BestEffort
//              and non-integral Guaranteed containers run here (it includes the reserved CPUs).
//   reserved   reservedSystemCPUs, or else ceil(kubeReserved.cpu + systemReserved.cpu) CPUs
//              taken by topology from the lowest-numbered cores; never assigned exclusively.
//   exclusive  the CPUs of one container of a Guaranteed pod whose CPU request is an integer,
//              taken from shared minus reserved (plus CPUs its pod's finished init containers
//              held: init containers' exclusive CPUs are reused by the app containers after them;
//              restartable init containers (sidecars) keep theirs).
// CPUs are chosen with cpu_assignment.h, first within the NUMA nodes of the topology manager's
// affinity for the container (its sockets with align-by-socket), then anywhere.
//
// Errors: SMTAlignmentError (full-pcpus-only: "SMT Alignment Error: requested 3 cpus not
// multiple cpus per core = 2", or, when fewer whole free cores than requested remain,
// "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = 8, requested
// CPUs = 10, CPUs per core = 2"); the assignment errors of cpu_assignment.h; Start's state
// checks with upstream's messages.
//
// Metrics: kubelet_cpu_manager_pinning_requests_total counts Allocate calls for containers that
// get exclusive CPUs, kubelet_cpu_manager_pinning_errors_total those that failed.
//
// Not thread-safe: the CPU manager serializes every call.
#ifndef KUBELET_KUBELET_CPUMANAGER_POLICY_STATIC_H_
#define KUBELET_KUBELET_CPUMANAGER_POLICY_STATIC_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/pod.h"
#include "config/cpuset.h"
#include "kubelet/cpumanager/policy_options.h"
#include "kubelet/cpumanager/state.h"
#include "kubelet/topology/topology.h"
#include "kubelet/topologymanager/hint_provider.h"

namespace kubelet::cpumanager {

// The pod admission failure reason of an SMT alignment error (upstream ErrorSMTAlignment).
inline constexpr char kSMTAlignmentErrorReason[] = "SMTAlignmentError";

// Upstream SMTAlignmentError, as a topologymanager::AdmissionError with reason
// kSMTAlignmentErrorReason (the pod is rejected with that reason, not UnexpectedAdmissionError).
// `available_physical_cpus` > 0 selects the "not enough free physical CPUs" text (as upstream
// 1.28 does: with none left it prints the other one).
absl::Status SMTAlignmentError(int requested_cpus, int cpus_per_core, int available_physical_cpus);
// Whether `status` is an SMTAlignmentError.
bool IsSMTAlignmentError(const absl::Status& status);

// Exclusive CPUs a container gets: its integral CPU request in a Guaranteed pod, else 0.
int GuaranteedCPUs(const api::Pod& pod, const api::Container& container);
// The pod's: max(largest init container (plus the sidecars started before it), app containers
// plus sidecars).
int PodGuaranteedCPUs(const api::Pod& pod);

class StaticPolicy {
 public:
  // `reserved_cpus` non-empty: those CPUs (there must be `num_reserved_cpus` of them); else
  // `num_reserved_cpus` CPUs taken by topology. Errors: the options', and
  // "[cpumanager] unable to reserve the required amount of CPUs (size of 0-1 did not equal 3)".
  static absl::StatusOr<StaticPolicy> Create(topology::CPUTopology topology, int num_reserved_cpus,
                                             const config::CPUSet& reserved_cpus,
                                             StaticPolicyOptions options);

  // Checks a restored state (or fills an empty one with every CPU). Errors, as upstream:
  //   default cpuset cannot be empty
  //   not all reserved cpus: "0" are present in defaultCpuSet: "1-3"
  //   pod: <uid>, container: <name> cpuset: "2" overlaps with default cpuset "0,2-3"
  //   current set of available CPUs "0-3" doesn't match with CPUs in state "0-2"
  absl::Status Start(CPUState* state) const;

  // Assigns exclusive CPUs when the container gets them; a container already in the state keeps
  // its CPUs. `affinity` may be null (no NUMA preference).
  absl::Status Allocate(CPUState* state, const api::Pod& pod, const api::Container& container,
                        const topologymanager::AffinityStore* affinity);
  // Frees the container's exclusive CPUs, except those another container of its pod still holds
  // (reused init container CPUs).
  void RemoveContainer(CPUState* state, const std::string& pod_uid,
                       const std::string& container_name);
  // Forgets the pod's reusable init container CPUs.
  void ForgetPod(const std::string& pod_uid) { cpus_to_reuse_.erase(pod_uid); }

  topologymanager::TopologyHints GetTopologyHints(const CPUState& state, const api::Pod& pod,
                                                  const api::Container& container) const;
  topologymanager::TopologyHints GetPodTopologyHints(const CPUState& state,
                                                     const api::Pod& pod) const;

  const config::CPUSet& reserved() const { return reserved_; }
  const StaticPolicyOptions& options() const { return options_; }
  // Every CPU but the reserved ones.
  config::CPUSet GetAllocatableCPUs() const;
  // The shared pool minus the reserved CPUs.
  config::CPUSet GetAvailableCPUs(const CPUState& state) const;

  // The CPU picker this policy uses (packed, or distributed with distribute-cpus-across-numa).
  absl::StatusOr<config::CPUSet> TakeByTopology(const config::CPUSet& available,
                                                int num_cpus) const;

 private:
  StaticPolicy(topology::CPUTopology topology, StaticPolicyOptions options);

  absl::Status AllocateExclusive(CPUState* state, const api::Pod& pod,
                                 const api::Container& container, int num_cpus,
                                 const topologymanager::AffinityStore* affinity);
  absl::StatusOr<config::CPUSet> AllocateCPUs(CPUState* state, int num_cpus,
                                              const std::optional<topologymanager::NUMAMask>& numa,
                                              const config::CPUSet& reusable) const;
  config::CPUSet AlignedCPUs(const topologymanager::NUMAMask& numa,
                             const config::CPUSet& allocatable) const;
  void UpdateCPUsToReuse(const api::Pod& pod, const api::Container& container,
                         const config::CPUSet& cpus);
  std::vector<topologymanager::TopologyHint> GenerateCPUTopologyHints(
      const config::CPUSet& available, const config::CPUSet& reusable, int request) const;
  bool IsHintSocketAligned(const topologymanager::TopologyHint& hint, int min_affinity_size) const;

  topology::CPUTopology topology_;
  StaticPolicyOptions options_;
  int cpu_group_size_ = 1;  // threads per core
  config::CPUSet reserved_;
  // The reserved CPUs with their core siblings: what full-pcpus-only cannot count as free.
  config::CPUSet reserved_physical_;
  // Pod UID -> CPUs its init containers held that its next containers may reuse. Only the pod
  // being admitted is kept.
  std::map<std::string, config::CPUSet> cpus_to_reuse_;
};

}  // namespace kubelet::cpumanager

#endif  // KUBELET_KUBELET_CPUMANAGER_POLICY_STATIC_H_
