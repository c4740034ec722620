// Command-line and configuration-file handling for the kubelet binary, with the upstream
// precedence rules (cmd/kubelet/app: NewKubeletCommand):
//   defaults -> flags parsed -> --config file loaded -> --config-dir drop-ins merged over it
//   (lexical order, only with KUBELET_CONFIG_DROPIN_DIR_ALPHA set, as v1.28) -> command line
//   replayed over the result (flags win; --feature-gates merge per key over the files'
//   featureGates) -> feature gates set -> logging configured -> flags and configuration
//   validated.
// Errors name the flag, file or field. Not thread-safe; called once from main.
#ifndef KUBELET_APP_OPTIONS_H_
#define KUBELET_APP_OPTIONS_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "config/feature_gates.h"
#include "config/flagset.h"
#include "config/kubelet_configuration.h"
#include "config/kubelet_flags.h"

namespace kubelet::app {

// What the command line and the --config file settled: the kubelet's flags, its configuration
// and feature gates (upstream's options.KubeletServer).
struct Settings {
  config::KubeletFlags flags;
  config::KubeletConfiguration config;
  config::FeatureGate gates;
  // JSON paths of the fields the --config file and the drop-ins set (for the
  // not-yet-implemented report).
  std::vector<std::string> file_fields;
  // Config-bound flags given on the command line, as their config field names.
  std::vector<std::string> changed_flags;
};

enum class ParseResult {
  kRun,   // configuration complete: go on to Run
  kExit,  // --help or --version was served: exit 0
};

// What ParseCommandLine reads from the configuration: featureGates, logging (format, verbosity)
// and kubeletCgroups / kubeReservedCgroup for upstream's notice.
inline constexpr std::string_view kCommandLineConfigFields[] = {
    "featureGates",      "logging",        "logging.format",
    "logging.verbosity", "kubeletCgroups", "kubeReservedCgroup"};

// A command beside the kubelet's own (`kubelet hollow`): its name in the usage line, and flags
// of its own parsed (and listed by --help) with the kubelet's.
struct SubCommand {
  std::string name;  // e.g. "hollow": usage "kubelet hollow [flags]"
  std::string help;  // the paragraph --help prints first
  std::function<void(config::FlagSet&)> add_flags;
};

// Parses `args` (argv without the program name) into `settings`. --help and --version print to
// `out`. On error returns a status whose message is what the kubelet prints after "Error: ".
absl::Status ParseCommandLine(const std::vector<std::string>& args, Settings* settings,
                              std::ostream& out, ParseResult* result,
                              const SubCommand* command = nullptr);

}  // namespace kubelet::app

#endif  // KUBELET_APP_OPTIONS_H_
