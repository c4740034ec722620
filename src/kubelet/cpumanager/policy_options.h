// The static CPU manager policy's options (cpuManagerPolicyOptions; upstream
// pkg/kubelet/cm/cpumanager/policy_options.go, v1.28):
//
//   full-pcpus-only              beta  (gate CPUManagerPolicyBetaOptions, on by default): only
//                                      whole physical cores are handed out; a request that is not
//                                      a multiple of the threads per core is an SMTAlignmentError
//   distribute-cpus-across-numa  alpha (gate CPUManagerPolicyAlphaOptions): spread an allocation
//                                      that needs several NUMA nodes evenly across them
//   align-by-socket              alpha: the topology manager's NUMA affinity widened to whole
//                                      sockets when choosing CPUs and preferring hints
//
// Values are Go strconv.ParseBool booleans. Errors carry upstream's text:
//   unknown CPU Manager Policy option: "x"
//   CPU Manager Policy Alpha-level Options not enabled, but option "align-by-socket" provided
//   CPU Manager Policy Beta-level Options not enabled, but option "full-pcpus-only" provided
//   bad value for option "full-pcpus-only": strconv.ParseBool: parsing "x": invalid syntax
// and align-by-socket's incompatibilities (single-numa-node topology manager policy; more
// sockets than NUMA nodes), with upstream's wording, typos included.
//
// Pure functions; thread-safe.
#ifndef KUBELET_KUBELET_CPUMANAGER_POLICY_OPTIONS_H_
#define KUBELET_KUBELET_CPUMANAGER_POLICY_OPTIONS_H_

#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kubelet/topology/topology.h"

namespace kubelet::cpumanager {

inline constexpr char kFullPCPUsOnlyOption[] = "full-pcpus-only";
inline constexpr char kDistributeCPUsAcrossNUMAOption[] = "distribute-cpus-across-numa";
inline constexpr char kAlignBySocketOption[] = "align-by-socket";

// The topology manager policy align-by-socket cannot work with.
inline constexpr char kTopologyManagerPolicySingleNUMANode[] = "single-numa-node";

struct StaticPolicyOptions {
  bool full_physical_cpus_only = false;
  bool distribute_cpus_across_numa = false;
  bool align_by_socket = false;
  bool operator==(const StaticPolicyOptions&) const = default;
};

// Whether an option exists and its maturity level's gate is on (upstream
// CheckPolicyOptionAvailable, with the gate values passed in).
absl::Status CheckPolicyOptionAvailable(std::string_view option, bool alpha_options_enabled,
                                        bool beta_options_enabled);

// Parses the options map (upstream NewStaticPolicyOptions). Options are checked in name order,
// so with several bad ones the reported one is deterministic (upstream walks a Go map).
absl::StatusOr<StaticPolicyOptions> ParseStaticPolicyOptions(
    const std::map<std::string, std::string>& options, bool alpha_options_enabled,
    bool beta_options_enabled);

// Checks the options against the machine and the topology manager policy (upstream
// ValidateStaticPolicyOptions).
absl::Status ValidateStaticPolicyOptions(const StaticPolicyOptions& options,
                                         const topology::CPUTopology& topology,
                                         std::string_view topology_manager_policy);

}  // namespace kubelet::cpumanager

#endif  // KUBELET_KUBELET_CPUMANAGER_POLICY_OPTIONS_H_
