#include "kubelet/topologymanager/options.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/strings.h"
#include "config/go_text.h"

namespace kubelet::topologymanager {
namespace {

// Options by maturity level (upstream's alphaOptions / betaOptions / stableOptions, v1.28).
const std::set<std::string_view>& AlphaOptions() {
  static const auto* s = new std::set<std::string_view>{};
  return *s;
}
const std::set<std::string_view>& BetaOptions() {
  static const auto* s = new std::set<std::string_view>{kPreferClosestNUMANodes};
  return *s;
}
const std::set<std::string_view>& StableOptions() {
  static const auto* s = new std::set<std::string_view>{};
  return *s;
}

}  // namespace

absl::Status CheckPolicyOptionAvailable(std::string_view option, const config::FeatureGate& gates) {
  const bool alpha = AlphaOptions().count(option) > 0;
  const bool beta = BetaOptions().count(option) > 0;
  if (!alpha && !beta && StableOptions().count(option) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown Topology Manager Policy option: ", log::Quote(option)));
  }
  if (alpha && !gates.Enabled("TopologyManagerPolicyAlphaOptions")) {
    return absl::InvalidArgumentError(
        absl::StrCat("Topology Manager Policy Alpha-level Options not enabled, but option ",
                     log::Quote(option), " provided"));
  }
  if (beta && !gates.Enabled("TopologyManagerPolicyBetaOptions")) {
    return absl::InvalidArgumentError(
        absl::StrCat("Topology Manager Policy Beta-level Options not enabled, but option ",
                     log::Quote(option), " provided"));
  }
  return absl::OkStatus();
}

absl::StatusOr<PolicyOptions> NewPolicyOptions(const std::map<std::string, std::string>& options,
                                               const config::FeatureGate& gates) {
  PolicyOptions opts;
  for (const auto& [name, value] : options) {
    if (absl::Status s = CheckPolicyOptionAvailable(name, gates); !s.ok()) return s;
    if (name == kPreferClosestNUMANodes) {
      absl::StatusOr<bool> b = config::ParseGoBool(value);
      if (!b.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("bad value for option ", log::Quote(name), ": ", b.status().message()));
      }
      opts.prefer_closest_numa = *b;
    } else {
      // Unreachable while every known option is handled above (upstream keeps the same guard).
      return absl::InvalidArgumentError(
          absl::StrCat("unsupported topologymanager option: ", log::Quote(name), " (", value, ")"));
    }
  }
  return opts;
}

absl::StatusOr<TopologyManagerOptions> TopologyManagerOptionsFromConfig(
    const config::KubeletConfiguration& c, const config::FeatureGate& gates) {
  TopologyManagerOptions o;
  o.policy =
      c.topology_manager_policy.empty() ? std::string(kPolicyNone) : c.topology_manager_policy;
  o.scope =
      c.topology_manager_scope.empty() ? std::string(kScopeContainer) : c.topology_manager_scope;
  if (!c.topology_manager_policy_options.empty() &&
      !gates.Enabled("TopologyManagerPolicyOptions")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "topology manager policy options ", config::GoMapString(c.topology_manager_policy_options),
        " require feature gates \"TopologyManagerPolicyOptions\" enabled"));
  }
  // Upstream's NewManager returns before reading the options when the policy is none.
  if (o.policy == kPolicyNone) return o;
  absl::StatusOr<PolicyOptions> opts = NewPolicyOptions(c.topology_manager_policy_options, gates);
  if (!opts.ok()) return opts.status();
  o.policy_options = *opts;
  return o;
}

}  // namespace kubelet::topologymanager
