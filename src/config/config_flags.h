// Command-line flags bound to KubeletConfiguration fields (upstream
// cmd/kubelet/app/options.AddKubeletConfigFlags, v1.28, Linux), logging flags included.
//
// Every flag carries the upstream name, value syntax and the default taken from `config` at
// registration. All of them are deprecated with upstream's notice ("This parameter should be set
// via the config file specified by the Kubelet's --config flag. See ...") except -v/--v,
// --vmodule, --log-flush-frequency and --provider-id; --iptables-masquerade-bit and
// --iptables-drop-bit are also hidden from --help (upstream MarkDeprecated'd them in 1.28).
//
// Value syntaxes (upstream flag types):
//   --eviction-hard/--eviction-soft      "memory.available<100Mi,nodefs.available<10%"
//   --system-reserved, --kube-reserved, --qos-reserved, --eviction-soft-grace-period,
//   --eviction-minimum-reclaim            "k=v,k2=v2"
//   --cpu-manager-policy-options, --topology-manager-policy-options: one "k=v" per occurrence
//   --manifest-url-header                 "Name:value,Name2:value" (repeatable, values append)
//   --register-with-taints                "key=value:Effect,key2:Effect" (last occurrence wins)
//   --reserved-memory                     "0:memory=1Gi,hugepages-1Gi=2Gi;1:memory=2Gi"
//   --address, --healthz-bind-address     an IP address
//   -v / --v                              verbosity (logging.verbosity)
// Precedence: map, slice and list flags replace the value from the --config file on their first
// occurrence during FlagSet::Apply() (upstream re-parse semantics), except --feature-gates, which
// merges per key into the file's featureGates (flag wins), as kubeletConfigFlagPrecedence does,
// and --vmodule, which appends as upstream does.
// Value errors name the flag (FlagSet wraps them: `invalid argument "x" for "--port" flag: ...`).
#ifndef KUBELET_CONFIG_CONFIG_FLAGS_H_
#define KUBELET_CONFIG_CONFIG_FLAGS_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "config/flagset.h"
#include "config/kubelet_configuration.h"

namespace kubelet::config {

// Upstream's notice for config-bound flags.
inline constexpr char kConfigFlagDeprecation[] =
    "This parameter should be set via the config file specified by the Kubelet's --config flag. "
    "See https://kubernetes.io/docs/tasks/administer-cluster/kubelet-config-file/ for more "
    "information.";

// Registers every config-bound flag onto `fs`, bound to `config` (which must outlive `fs`).
// Pass the configuration the kubelet starts from (DefaultKubeletConfiguration()) so that --help
// shows upstream's defaults.
void AddKubeletConfigFlags(FlagSet& fs, KubeletConfiguration* config);

// The v1beta1 JSON path of the field flag `flag_name` of `fs` sets, when AddKubeletConfigFlags
// bound it to `config` ("sync-frequency" -> "syncFrequency", "anonymous-auth" ->
// "authentication.anonymous.enabled", "v" -> "logging.verbosity"): found from the member the flag
// writes. Empty for other flags and unknown names.
std::string ConfigFieldForFlag(const FlagSet& fs, const KubeletConfiguration& config,
                               std::string_view flag_name);

// --register-with-taints value syntax (utiltaints.ParseTaints): "<key>=<value>:<effect>",
// "<key>:<effect>"; entries ending in "-" (removals) are ignored. Errors as upstream, e.g.
// "invalid taint effect: Foo, unsupported taint effect".
absl::StatusOr<std::vector<Taint>> ParseRegisterWithTaints(std::string_view value);

// --reserved-memory value syntax (one occurrence).
absl::StatusOr<std::vector<MemoryReservation>> ParseReservedMemory(std::string_view value);

}  // namespace kubelet::config

#endif  // KUBELET_CONFIG_CONFIG_FLAGS_H_
