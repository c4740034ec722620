#include "app/options.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "app/version.h"
#include "common/log.h"
#include "config/config_flags.h"
#include "config/flagset.h"
#include "config/validation.h"

namespace kubelet::app {
namespace {

// Upstream v1.28 honours --config-dir only when this variable is set (whatever its value).
constexpr char kDropinDirEnv[] = "KUBELET_CONFIG_DROPIN_DIR_ALPHA";

constexpr const char* kLongHelp =
    "The kubelet is the node agent: it runs the containers of the pods described by its\n"
    "pod sources (static pod files or a manifest URL in standalone mode, the API server\n"
    "otherwise) through a CRI container runtime, and keeps them healthy.\n"
    "\n"
    "This is a C++ implementation with the flags, configuration file and on-disk layout of\n"
    "the upstream Kubernetes v1.28 kubelet.\n";

}  // namespace

absl::Status ParseCommandLine(const std::vector<std::string>& args, Settings* settings,
                              std::ostream& out, ParseResult* result, const SubCommand* command) {
  *result = ParseResult::kRun;
  settings->config = config::DefaultKubeletConfiguration();

  config::FlagSet fs("kubelet");
  bool help = false;
  std::string version;
  config::AddKubeletFlags(fs, &settings->flags);
  config::AddKubeletConfigFlags(fs, &settings->config);
  fs.Bool("help", &help, "help for kubelet").shorthand = "h";
  config::Flag version_flag;
  version_flag.name = "version";
  version_flag.type_name = "version[=true]";
  version_flag.usage = "--version, --version=raw prints version information and quits";
  version_flag.default_value = "false";
  version_flag.is_bool = true;
  version_flag.set = [&version](std::string_view v, bool) {
    version = std::string(v);
    return absl::OkStatus();
  };
  fs.Add(std::move(version_flag));
  if (command != nullptr && command->add_flags) command->add_flags(fs);

  if (absl::Status st = fs.Parse(args); !st.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("failed to parse kubelet flag: ", std::string(st.message()),
                     "\nSee 'kubelet --help' for usage."));
  }
  for (const std::string& w : fs.Warnings()) {
    // pflag prints deprecation notices on stderr as the flag is parsed.
    std::fprintf(stderr, "%s\n", w.c_str());
  }
  if (!fs.Args().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown command ", fs.Args().front()));
  }
  if (help) {
    if (command != nullptr) {
      out << command->help << "\nUsage:\n  kubelet " << command->name << " [flags]\n\nFlags:\n"
          << fs.Usages();
    } else {
      out << kLongHelp << "\nUsage:\n  kubelet [flags]\n\nFlags:\n" << fs.Usages();
    }
    *result = ParseResult::kExit;
    return absl::OkStatus();
  }
  if (!version.empty() && version != "false") {
    if (version == "raw") {
      out << "version.Info{Major:\"1\", Minor:\"28\", GitVersion:\"" << VersionString()
          << "\", BuildId:\"" << BuildId() << "\"}\n";
    } else {
      out << "Kubernetes " << VersionString() << "\n";
    }
    *result = ParseResult::kExit;
    return absl::OkStatus();
  }
  if (absl::Status st = settings->gates.SetFromMap(settings->config.feature_gates); !st.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("failed to set feature gates from initial flags-based config: ",
                     std::string(st.message())));
  }
  if (absl::Status st = config::ValidateKubeletFlags(settings->flags); !st.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("failed to validate kubelet flags: ", std::string(st.message())));
  }
  for (const auto& [key, value] : settings->flags.node_labels) {
    if (!config::IsAllowedRoleLabel(key)) continue;
    KLOG_WARNING(
        "--node-labels: a node role label, refused by upstream v1.28, is accepted as OpenShift's "
        "kubelet accepts it; if the API server's NodeRestriction admission refuses it, the node "
        "registers without it",
        "label", key);
  }
  if (fs.Changed("pod-infra-container-image")) {
    KLOG_INFO(
        "--pod-infra-container-image will not be pruned by the image garbage collector in "
        "kubelet and should also be set in the remote runtime");
  }
  const std::string& config_file = settings->flags.kubelet_config_file;
  if (!config_file.empty()) {
    auto loaded = config::LoadKubeletConfigFile(config_file, config::DecodeOptions{.strict = true});
    if (!loaded.ok()) return loaded.status();
    settings->config = std::move(loaded->config);
    settings->file_fields = std::move(loaded->fields_set);
  }
  // --config-dir: the drop-ins merged over the configuration so far, in lexical order; alpha in
  // v1.28, honoured only with the KUBELET_CONFIG_DROPIN_DIR_ALPHA environment variable set.
  const std::string& dropin_dir = settings->flags.kubelet_dropin_config_dir;
  if (!dropin_dir.empty()) {
    if (std::getenv(kDropinDirEnv) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("flag ", dropin_dir, " specified but environment variable ", kDropinDirEnv,
                       " not set, cannot start kubelet"));
    }
    absl::StatusOr<std::vector<std::string>> merged =
        config::MergeKubeletConfigDropins(dropin_dir, &settings->config);
    if (!merged.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("failed to merge kubelet configs: ", merged.status().message()));
    }
    for (std::string& field : *merged) {
      if (std::find(settings->file_fields.begin(), settings->file_fields.end(), field) ==
          settings->file_fields.end()) {
        settings->file_fields.push_back(std::move(field));
      }
    }
  }
  if (!config_file.empty() || !dropin_dir.empty()) {
    // Flags win over the files: replay the command line onto the loaded configuration.
    if (absl::Status st = fs.Apply(); !st.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("failed to precedence kubeletConfigFlag: ", std::string(st.message())));
    }
    if (absl::Status st = settings->gates.SetFromMap(settings->config.feature_gates); !st.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("failed to set feature gates from initial flags-based config: ",
                       std::string(st.message())));
    }
  }
  for (const std::string& name : fs.ChangedFlags()) {
    std::string field = config::ConfigFieldForFlag(fs, settings->config, name);
    if (!field.empty()) settings->changed_flags.push_back(std::move(field));
  }
  // Configuration complete: logging can be set up.
  log::Format format;
  if (absl::Status st = log::ParseFormat(settings->config.logging.format, &format); !st.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("initialize logging: logging.format: ", std::string(st.message())));
  }
  log::Configure(log::Options{static_cast<int>(settings->config.logging.verbosity), format, {}});

  if (absl::Status st = config::ValidateKubeletConfiguration(settings->config, settings->gates);
      !st.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("failed to validate kubelet configuration, error: ", std::string(st.message()),
                     config_file.empty() ? "" : absl::StrCat(", path: ", config_file)));
  }
  if (!settings->config.kubelet_cgroups.empty() && !settings->config.kube_reserved_cgroup.empty() &&
      settings->config.kubelet_cgroups.rfind(settings->config.kube_reserved_cgroup, 0) != 0) {
    KLOG_INFO("unsupported configuration:KubeletCgroups is not within KubeReservedCgroup");
  }
  return absl::OkStatus();
}

}  // namespace kubelet::app
