// The topology manager's configuration (upstream pkg/kubelet/cm/topologymanager policy and scope
// names, policy_options.go, and the option gate check of cmd/kubelet/app/server.go, v1.28):
//
//   topologyManagerPolicy         none | best-effort | restricted | single-numa-node
//   topologyManagerScope          container | pod
//   topologyManagerPolicyOptions  prefer-closest-numa-nodes=<bool> (a beta option)
//
// TopologyManagerOptionsFromConfig fails as upstream does, in upstream's order:
//   * options given while the TopologyManagerPolicyOptions gate is off: `topology manager policy
//     options map[prefer-closest-numa-nodes:true] require feature gates
//     "TopologyManagerPolicyOptions" enabled`;
//   * with a policy other than none (upstream parses no option for none):
//     `unknown Topology Manager Policy option: "foo"`,
//     `Topology Manager Policy Beta-level Options not enabled, but option
//     "prefer-closest-numa-nodes" provided` (gate TopologyManagerPolicyBetaOptions; Alpha-level
//     likewise, there is no alpha option in v1.28),
//     `bad value for option "prefer-closest-numa-nodes": strconv.ParseBool: parsing "x": invalid
//     syntax`.
// Several bad options: the first in name order is reported (upstream walks a Go map).
// Unknown policy and scope names are reported when the manager is created (topology_manager.h).
//
// Value types; functions are thread-safe.
#ifndef KUBELET_KUBELET_TOPOLOGYMANAGER_OPTIONS_H_
#define KUBELET_KUBELET_TOPOLOGYMANAGER_OPTIONS_H_

#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "config/feature_gates.h"
#include "config/kubelet_configuration.h"

namespace kubelet::topologymanager {

inline constexpr std::string_view kPolicyNone = "none";
inline constexpr std::string_view kPolicyBestEffort = "best-effort";
inline constexpr std::string_view kPolicyRestricted = "restricted";
inline constexpr std::string_view kPolicySingleNumaNode = "single-numa-node";

inline constexpr std::string_view kScopeContainer = "container";
inline constexpr std::string_view kScopePod = "pod";

inline constexpr std::string_view kPreferClosestNUMANodes = "prefer-closest-numa-nodes";

// More NUMA nodes than this and a policy other than none: the manager is not created
// ("unsupported on machines with more than 8 NUMA Nodes").
inline constexpr int kMaxAllowableNUMANodes = 8;

struct PolicyOptions {
  // prefer-closest-numa-nodes: among equally wide preferred masks, the one with the smallest
  // average NUMA distance wins (not for single-numa-node).
  bool prefer_closest_numa = false;
  bool operator==(const PolicyOptions&) const = default;
};

// Whether `option` is known and its maturity level's gate is on (upstream
// CheckPolicyOptionAvailable).
absl::Status CheckPolicyOptionAvailable(std::string_view option, const config::FeatureGate& gates);

// Parses topologyManagerPolicyOptions (upstream NewPolicyOptions).
absl::StatusOr<PolicyOptions> NewPolicyOptions(const std::map<std::string, std::string>& options,
                                               const config::FeatureGate& gates);

struct TopologyManagerOptions {
  std::string policy = std::string(kPolicyNone);
  std::string scope = std::string(kScopeContainer);
  PolicyOptions policy_options;
};

// Reads topologyManagerPolicy, topologyManagerScope and topologyManagerPolicyOptions; errors as
// described above.
absl::StatusOr<TopologyManagerOptions> TopologyManagerOptionsFromConfig(
    const config::KubeletConfiguration& c, const config::FeatureGate& gates);
inline constexpr std::string_view kTopologyManagerConfigFields[] = {
    "topologyManagerPolicy", "topologyManagerScope", "topologyManagerPolicyOptions"};

}  // namespace kubelet::topologymanager

#endif  // KUBELET_KUBELET_TOPOLOGYMANAGER_OPTIONS_H_
