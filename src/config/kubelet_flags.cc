#include "config/kubelet_flags.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/duration.h"
#include "common/strings.h"
#include "config/validation.h"

namespace kubelet::config {
namespace {

constexpr char kRemoteRuntime[] = "remote";

absl::Status UnsupportedRuntime(std::string_view runtime) {
  return absl::InvalidArgumentError(absl::StrCat("unsupported CRI runtime: \"", AV(runtime),
                                                 "\", only \"", kRemoteRuntime,
                                                 "\" is currently supported"));
}

bool GoBoolSyntax(std::string_view v) {
  static const std::set<std::string_view> kOk = {"1", "t", "T", "true",  "TRUE",  "True",
                                                 "0", "f", "F", "false", "FALSE", "False"};
  return kOk.count(v) > 0;
}

// A removed upstream flag: accepted (with a deprecation warning from the FlagSet), value checked
// for its old type, then dropped.
enum class RemovedKind { kString, kInt, kBool, kDuration };

void AddRemoved(FlagSet& fs, std::string_view name, RemovedKind kind, std::string_view why) {
  Flag f;
  f.name = std::string(name);
  f.usage = "Removed upstream; accepted for compatibility and ignored.";
  f.deprecated = std::string(why);
  f.hidden = true;
  switch (kind) {
    case RemovedKind::kString:
      f.type_name = "string";
      f.set = [](std::string_view, bool) { return absl::OkStatus(); };
      break;
    case RemovedKind::kInt:
      f.type_name = "int32";
      f.set = [](std::string_view v, bool) {
        int32_t n;
        if (!absl::SimpleAtoi(AV(v), &n)) {
          return absl::InvalidArgumentError(
              absl::StrCat("strconv.ParseInt: parsing \"", AV(v), "\": invalid syntax"));
        }
        return absl::OkStatus();
      };
      break;
    case RemovedKind::kBool:
      f.is_bool = true;
      f.set = [](std::string_view v, bool) {
        if (!GoBoolSyntax(v)) {
          return absl::InvalidArgumentError(
              absl::StrCat("strconv.ParseBool: parsing \"", AV(v), "\": invalid syntax"));
        }
        return absl::OkStatus();
      };
      break;
    case RemovedKind::kDuration:
      f.type_name = "duration";
      f.set = [](std::string_view v, bool) { return ParseGoDuration(v).status(); };
      break;
  }
  fs.Add(std::move(f));
}

// cliflag.ConfigurationMap: "k=v,k2" pairs accumulate; a key without '=' maps to "".
FlagSetter ConfigurationMapSetter(std::map<std::string, std::string>* target) {
  return [target](std::string_view value, bool) {
    for (absl::string_view item : absl::StrSplit(AV(value), ',')) {
      if (item.empty()) continue;
      std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
      std::string key(absl::StripAsciiWhitespace(kv[0]));
      (*target)[key] = kv.size() == 2 ? std::string(absl::StripAsciiWhitespace(kv[1])) : "";
    }
    return absl::OkStatus();
  };
}

std::string FormatMap(const std::map<std::string, std::string>& m) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : m) parts.push_back(absl::StrCat(k, "=", v));
  return absl::StrJoin(parts, ",");
}

std::string LabelNamespace(std::string_view key) {
  size_t slash = key.find('/');
  return slash == std::string_view::npos ? "" : std::string(key.substr(0, slash));
}

bool IsKubernetesLabel(std::string_view key) {
  std::string ns = LabelNamespace(key);
  return ns == "kubernetes.io" || absl::EndsWith(ns, ".kubernetes.io") || ns == "k8s.io" ||
         absl::EndsWith(ns, ".k8s.io");
}

// Go's fmt %v of a []string: "[a b c]".
std::string GoList(const std::vector<std::string>& v) {
  return absl::StrCat("[", absl::StrJoin(v, " "), "]");
}

}  // namespace

const std::vector<std::string>& KubeletLabels() {
  static const auto* labels = new std::vector<std::string>{
      "beta.kubernetes.io/arch",
      "beta.kubernetes.io/instance-type",
      "beta.kubernetes.io/os",
      "failure-domain.beta.kubernetes.io/region",
      "failure-domain.beta.kubernetes.io/zone",
      "kubernetes.io/arch",
      "kubernetes.io/hostname",
      "kubernetes.io/os",
      "node.kubernetes.io/instance-type",
      "topology.kubernetes.io/region",
      "topology.kubernetes.io/zone",
  };
  return *labels;
}

const std::vector<std::string>& KubeletLabelNamespaces() {
  static const auto* namespaces =
      new std::vector<std::string>{"kubelet.kubernetes.io", "node.kubernetes.io"};
  return *namespaces;
}

bool IsKubeletLabel(std::string_view key) {
  const auto& labels = KubeletLabels();
  if (std::find(labels.begin(), labels.end(), key) != labels.end()) return true;
  std::string ns = LabelNamespace(key);
  for (const std::string& allowed : KubeletLabelNamespaces()) {
    if (ns == allowed || absl::EndsWith(ns, absl::StrCat(".", allowed))) return true;
  }
  return false;
}

void AddKubeletFlags(FlagSet& fs, KubeletFlags* f) {
  // Container runtime options.
  fs.String("runtime-cgroups", &f->runtime_cgroups,
            "Optional absolute name of the cgroup the container runtime runs in.");
  fs.String("pod-infra-container-image", &f->pod_sandbox_image,
            "Sandbox image kept out of image garbage collection. The container runtime has its "
            "own setting for the image it actually uses.")
      .deprecated =
      "will be removed in a future release. Image garbage collector will get sandbox image "
      "information from CRI.";
  fs.String("image-credential-provider-config", &f->image_credential_provider_config_file,
            "Path to the credential provider plugin config file.");
  fs.String("image-credential-provider-bin-dir", &f->image_credential_provider_bin_dir,
            "Directory holding the credential provider plugin binaries.");

  fs.String("config", &f->kubelet_config_file,
            "Path of the KubeletConfiguration file to load at start-up (absolute, or relative to "
            "the working directory). Command-line flags override values from this file.");
  fs.String("config-dir", &f->kubelet_dropin_config_dir,
            "Directory of drop-in configuration files (*.conf, in lexical order) merged over "
            "--config. Honoured only when the KUBELET_CONFIG_DROPIN_DIR_ALPHA environment "
            "variable is set. [default='']");
  fs.String("kubeconfig", &f->kube_config,
            "Path to a kubeconfig file for reaching the API server. Without it the kubelet runs "
            "in standalone mode.");
  fs.String("bootstrap-kubeconfig", &f->bootstrap_kubeconfig,
            "Path to a kubeconfig used to request a client certificate when the --kubeconfig "
            "file does not exist. The resulting kubeconfig is written to --kubeconfig and the "
            "certificate and key to --cert-dir.");
  fs.String("hostname-override", &f->hostname_override,
            "If non-empty, identify the node by this name instead of the hostname.");
  fs.String("node-ip", &f->node_ip,
            "IP address of the node, or a comma-separated dual-stack pair. Unset: use the "
            "default IPv4 address, else the default IPv6 one; '::' prefers IPv6.");
  fs.String("cert-dir", &f->cert_directory,
            "Directory holding the TLS certificates. Ignored when --tls-cert-file and "
            "--tls-private-key-file are given.");
  fs.String("cloud-provider", &f->cloud_provider,
            "Cloud provider. Empty for none, 'external' for an out-of-tree provider.")
      .deprecated =
      "will be removed in 1.25 or later, in favor of removing cloud provider code from Kubelet.";
  fs.String("root-dir", &f->root_directory,
            "Directory for kubelet state (volume mounts, plugins, pod data).");
  fs.Bool("seccomp-default", &f->seccomp_default,
          "Use the RuntimeDefault seccomp profile as the default for all workloads.");

  {
    Flag labels;
    labels.name = "node-labels";
    labels.type_name = "mapStringString";
    labels.usage = absl::StrCat(
        "Labels to add when registering the node, as comma-separated key=value pairs. Labels in "
        "the 'kubernetes.io' namespace must begin with an allowed prefix (",
        absl::StrJoin(KubeletLabelNamespaces(), ", "), ") or be in the specifically allowed set (",
        absl::StrJoin(KubeletLabels(), ", "), ")");
    labels.default_value = FormatMap(f->node_labels);
    labels.set = ConfigurationMapSetter(&f->node_labels);
    fs.Add(std::move(labels));
  }

  // Experimental.
  fs.String("lock-file", &f->lock_file_path,
            "<Warning: Alpha feature> Path of a file the kubelet locks to exclude other kubelets.");
  fs.Bool("exit-on-lock-contention", &f->exit_on_lock_contention,
          "Exit when another process contends for the --lock-file.");

  // Deprecated (kept visible in --help, as upstream does).
  constexpr char kUseEviction[] =
      "Use --eviction-hard or --eviction-soft instead. Will be removed in a future version.";
  fs.Duration("minimum-container-ttl-duration", &f->minimum_gc_age,
              "Minimum age of a finished container before it can be garbage collected, e.g. "
              "'300ms', '10s' or '2h45m'.")
      .deprecated = kUseEviction;
  fs.Int32("maximum-dead-containers-per-container", &f->max_per_pod_container_count,
           "Maximum number of old instances to keep per container.")
      .deprecated = kUseEviction;
  fs.Int32("maximum-dead-containers", &f->max_container_count,
           "Maximum number of old container instances to keep on the node. Negative disables "
           "the limit.")
      .deprecated = kUseEviction;
  fs.Bool("register-schedulable", &f->register_schedulable,
          "Register the node as schedulable. No effect when --register-node is false.")
      .deprecated = "will be removed in a future version";
  fs.Bool("keep-terminated-pod-volumes", &f->keep_terminated_pod_volumes,
          "Keep the volumes of terminated pods mounted, for debugging.")
      .deprecated = "will be removed in a future version";
  fs.String("experimental-mounter-path", &f->experimental_mounter_path,
            "[Experimental] Path of the mount binary. Empty uses the default mount.")
      .deprecated = "will be removed in 1.25 or later. in favor of using CSI.";
  fs.String("cloud-config", &f->cloud_config_file,
            "Path of the cloud provider configuration file. Empty for none.")
      .deprecated =
      "will be removed in 1.25 or later, in favor of removing cloud provider code from Kubelet.";
  fs.Bool("experimental-allocatable-ignore-eviction",
          &f->experimental_node_allocatable_ignore_eviction_threshold,
          "Ignore hard eviction thresholds when computing Node Allocatable. [default=false]")
      .deprecated = "will be removed in 1.25 or later.";

  // Removed upstream, still accepted.
  {
    Flag rt;
    rt.name = "container-runtime";
    rt.type_name = "string";
    rt.usage = "Removed upstream; only 'remote' is accepted.";
    rt.deprecated =
        "has no effect and was removed upstream in v1.27, as the only valid value is 'remote'.";
    rt.hidden = true;
    rt.set = [f](std::string_view v, bool) {
      if (v != kRemoteRuntime) return UnsupportedRuntime(v);
      f->container_runtime = std::string(v);
      return absl::OkStatus();
    };
    fs.Add(std::move(rt));
  }
  constexpr char kDockershim[] =
      "has no effect: it was removed upstream in v1.24 together with dockershim.";
  AddRemoved(fs, "network-plugin", RemovedKind::kString, kDockershim);
  AddRemoved(fs, "network-plugin-mtu", RemovedKind::kInt, kDockershim);
  AddRemoved(fs, "cni-bin-dir", RemovedKind::kString, kDockershim);
  AddRemoved(fs, "cni-conf-dir", RemovedKind::kString, kDockershim);
  AddRemoved(fs, "cni-cache-dir", RemovedKind::kString, kDockershim);
  AddRemoved(fs, "docker-endpoint", RemovedKind::kString, kDockershim);
  AddRemoved(fs, "image-pull-progress-deadline", RemovedKind::kDuration, kDockershim);
  AddRemoved(fs, "experimental-dockershim-root-directory", RemovedKind::kString, kDockershim);
  AddRemoved(fs, "non-masquerade-cidr", RemovedKind::kString, kDockershim);
  constexpr char kRemoved[] = "has no effect: it was removed upstream.";
  AddRemoved(fs, "dynamic-config-dir", RemovedKind::kString, kRemoved);
  AddRemoved(fs, "master-service-namespace", RemovedKind::kString, kRemoved);
  AddRemoved(fs, "experimental-check-node-capabilities-before-mount", RemovedKind::kBool, kRemoved);
}

bool IsAllowedRoleLabel(std::string_view key) {
  return key == "node-role.kubernetes.io/master" || key == "node-role.kubernetes.io/worker" ||
         key == "node-role.kubernetes.io/control-plane" || key == "node-role.kubernetes.io/etcd";
}

absl::Status ValidateKubeletFlags(const KubeletFlags& flags) {
  std::set<std::string> unknown_labels;
  std::map<std::string, std::vector<std::string>> invalid_label_errs;
  for (const auto& [k, v] : flags.node_labels) {
    if (IsKubernetesLabel(k) && !IsKubeletLabel(k) && !IsAllowedRoleLabel(k)) {
      unknown_labels.insert(k);
    }
    for (std::string& e : IsQualifiedName(k)) invalid_label_errs[k].push_back(std::move(e));
    for (std::string& e : IsValidLabelValue(v)) invalid_label_errs[v].push_back(std::move(e));
  }
  if (!unknown_labels.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: ",
        GoList(std::vector<std::string>(unknown_labels.begin(), unknown_labels.end())),
        "\n--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (",
        absl::StrJoin(KubeletLabelNamespaces(), ", "), ") or be in the specifically allowed set (",
        absl::StrJoin(KubeletLabels(), ", "), ")"));
  }
  if (!invalid_label_errs.empty()) {
    std::vector<std::string> parts;
    for (const auto& [k, errs] : invalid_label_errs) {
      parts.push_back(absl::StrCat("'", k, "' - ", absl::StrJoin(errs, ", ")));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("invalid node labels: ", absl::StrJoin(parts, "; ")));
  }
  if (flags.container_runtime != kRemoteRuntime) return UnsupportedRuntime(flags.container_runtime);
  return absl::OkStatus();
}

}  // namespace kubelet::config
