#include "kubelet/cpumanager/policy_options.h"

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "config/go_text.h"

namespace kubelet::cpumanager {
namespace {

enum class Maturity { kAlpha, kBeta, kUnknown };

Maturity OptionMaturity(std::string_view option) {
  if (option == kDistributeCPUsAcrossNUMAOption || option == kAlignBySocketOption) {
    return Maturity::kAlpha;
  }
  if (option == kFullPCPUsOnlyOption) return Maturity::kBeta;
  return Maturity::kUnknown;
}

}  // namespace

absl::Status CheckPolicyOptionAvailable(std::string_view option, bool alpha_options_enabled,
                                        bool beta_options_enabled) {
  switch (OptionMaturity(option)) {
    case Maturity::kUnknown:
      return absl::InvalidArgumentError(
          absl::StrCat("unknown CPU Manager Policy option: ", log::Quote(option)));
    case Maturity::kAlpha:
      if (!alpha_options_enabled) {
        return absl::InvalidArgumentError(
            absl::StrCat("CPU Manager Policy Alpha-level Options not enabled, but option ",
                         log::Quote(option), " provided"));
      }
      break;
    case Maturity::kBeta:
      if (!beta_options_enabled) {
        return absl::InvalidArgumentError(
            absl::StrCat("CPU Manager Policy Beta-level Options not enabled, but option ",
                         log::Quote(option), " provided"));
      }
      break;
  }
  return absl::OkStatus();
}

absl::StatusOr<StaticPolicyOptions> ParseStaticPolicyOptions(
    const std::map<std::string, std::string>& options, bool alpha_options_enabled,
    bool beta_options_enabled) {
  StaticPolicyOptions out;
  for (const auto& [name, value] : options) {
    if (absl::Status st =
            CheckPolicyOptionAvailable(name, alpha_options_enabled, beta_options_enabled);
        !st.ok()) {
      return st;
    }
    absl::StatusOr<bool> parsed = config::ParseGoBool(value);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad value for option ", log::Quote(name), ": ", parsed.status().message()));
    }
    if (name == kFullPCPUsOnlyOption) {
      out.full_physical_cpus_only = *parsed;
    } else if (name == kDistributeCPUsAcrossNUMAOption) {
      out.distribute_cpus_across_numa = *parsed;
    } else {
      out.align_by_socket = *parsed;
    }
  }
  return out;
}

absl::Status ValidateStaticPolicyOptions(const StaticPolicyOptions& options,
                                         const topology::CPUTopology& topology,
                                         std::string_view topology_manager_policy) {
  if (!options.align_by_socket) return absl::OkStatus();
  if (topology_manager_policy == kTopologyManagerPolicySingleNUMANode) {
    // Upstream's text, spelling and double space included.
    return absl::InvalidArgumentError(
        "Topolgy manager Single numa policy is incompatible with CPUManager Align  by socket "
        "policy option");
  }
  if (topology.num_sockets > topology.num_numa_nodes) {
    return absl::InvalidArgumentError(
        "Align by socket is not compatible with hardware where number of sockets are more than "
        "number of NUMA");
  }
  return absl::OkStatus();
}

}  // namespace kubelet::cpumanager
