#include "config/validation.h"

#include <cstdint>
#include <limits>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/duration.h"
#include "common/log.h"
#include "common/strings.h"
#include "config/kubelet_configuration.h"

namespace kubelet::config {

namespace {

constexpr char kInvalid[] = "invalid configuration: ";
// The v1.28 kubelet only accepts the previous minor version for showHiddenMetricsForVersion.
constexpr char kPreviousMinorVersion[] = "1.27";
constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

std::string Q(std::string_view s) { return log::Quote(s); }
std::string B(bool b) { return b ? "true" : "false"; }
// Go's %v of a metav1.Duration value: "{1m30s}".
std::string MetaDuration(absl::Duration d) { return absl::StrCat("{", FormatGoDuration(d), "}"); }
// Go's %v of a float64.
std::string GoFloat(double v) {
  std::string out = absl::StrCat(v);
  return out;
}

bool ValidPort(int64_t p) { return p >= 1 && p <= 65535; }
bool InRange(int64_t v, int64_t lo, int64_t hi) { return v >= lo && v <= hi; }

// field.Error texts.
std::string FieldInvalid(std::string_view path, std::string_view rendered_value,
                         std::string_view detail) {
  return absl::StrCat(AV(path), ": Invalid value: ", AV(rendered_value), ": ", AV(detail));
}
std::string FieldForbidden(std::string_view path, std::string_view detail) {
  return absl::StrCat(AV(path), ": Forbidden: ", AV(detail));
}
std::string FieldRequired(std::string_view path, std::string_view detail) {
  return absl::StrCat(AV(path), ": Required value: ", AV(detail));
}

// Go's %v of a core/v1 Taint value.
std::string GoTaint(const Taint& t) {
  std::string time = "<nil>";
  if (t.time_added.has_value())
    time = absl::FormatTime(absl::RFC3339_sec, absl::FromUnixSeconds(t.time_added->seconds),
                            absl::UTCTimeZone());
  return absl::StrCat("{", t.key, " ", t.value, " ", t.effect, " ", time, "}");
}

// taints.CheckTaintValidation.
absl::Status CheckTaintValidation(const Taint& t) {
  if (std::vector<std::string> errs = IsQualifiedName(t.key); !errs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid taint key: ", absl::StrJoin(errs, "; ")));
  }
  if (!t.value.empty()) {
    if (std::vector<std::string> errs = IsValidLabelValue(t.value); !errs.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid taint value: ", absl::StrJoin(errs, "; ")));
    }
  }
  if (!t.effect.empty() && t.effect != "NoSchedule" && t.effect != "PreferNoSchedule" &&
      t.effect != "NoExecute") {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid taint effect: ", t.effect, ", unsupported taint effect"));
  }
  return absl::OkStatus();
}

// logsapi.Validate (component-base logs/api/v1, v1.28) with field path "logging".
void ValidateLogging(const LoggingConfiguration& c, const FeatureGate& gates,
                     std::vector<std::string>* errs) {
  if (c.format == "json") {
    if (!gates.Enabled("LoggingBetaOptions")) {
      errs->push_back(FieldForbidden(
          "logging.format", "Log format json is disabled, see LoggingBetaOptions feature"));
    }
  } else if (c.format != "text") {
    errs->push_back(FieldInvalid("logging.format", Q(c.format), "Unsupported log format"));
  }
  if (c.verbosity > kMaxInt32) {
    errs->push_back(FieldInvalid("logging.verbosity", absl::StrCat("0x", absl::Hex(c.verbosity)),
                                 absl::StrCat("Must be <= ", kMaxInt32)));
  }
  if (!c.vmodule.empty() && !c.format.empty() && c.format != "text") {
    errs->push_back(FieldForbidden("logging.vmodule", "Only supported for text log format"));
  }
  for (size_t i = 0; i < c.vmodule.size(); ++i) {
    const VModuleItem& item = c.vmodule[i];
    std::string path = absl::StrCat("logging.vmodule[", i, "]");
    if (item.file_pattern.empty()) {
      errs->push_back(FieldRequired(path, "File pattern must not be empty"));
    }
    if (item.file_pattern.find_first_of("=,") != std::string::npos) {
      errs->push_back(FieldInvalid(path, Q(item.file_pattern),
                                   "File pattern must not contain equal sign or comma"));
    }
    if (item.verbosity > kMaxInt32) {
      errs->push_back(FieldInvalid(path, absl::StrCat("0x", absl::Hex(item.verbosity)),
                                   absl::StrCat("Must be <= ", kMaxInt32)));
    }
  }
  const bool alpha = gates.Enabled("LoggingAlphaOptions");
  if (c.options.json.split_stream && !alpha) {
    errs->push_back(FieldForbidden("logging.options.json.splitStream",
                                   "Feature LoggingAlphaOptions is disabled"));
  }
  if (!c.options.json.info_buffer_size.IsZero() && !alpha) {
    errs->push_back(FieldForbidden("logging.options.json.infoBufferSize",
                                   "Feature LoggingAlphaOptions is disabled"));
  }
}

// url.Parse's scheme split, enough for tracing endpoints: returns false on a parse error.
bool UrlScheme(std::string_view url, std::string* scheme, std::string* err) {
  for (size_t i = 0; i < url.size(); ++i) {
    char c = url[i];
    if (absl::ascii_isalpha(static_cast<unsigned char>(c))) continue;
    if (absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.') {
      if (i == 0) break;
      continue;
    }
    if (c == ':') {
      if (i == 0) {
        *err = absl::StrCat("parse ", Q(url), ": missing protocol scheme");
        return false;
      }
      *scheme = absl::AsciiStrToLower(AV(url.substr(0, i)));
      return true;
    }
    break;
  }
  scheme->clear();
  return true;
}

// tracingapi.ValidateTracingConfiguration with field path "tracing".
void ValidateTracing(const TracingConfiguration& t, std::vector<std::string>* errs) {
  if (t.sampling_rate_per_million.has_value()) {
    int32_t rate = *t.sampling_rate_per_million;
    if (rate < 0) {
      errs->push_back(FieldInvalid("tracing.samplingRatePerMillion", absl::StrCat(rate),
                                   "sampling rate must be positive"));
    }
    if (rate > 1000000) {
      errs->push_back(FieldInvalid("tracing.samplingRatePerMillion", absl::StrCat(rate),
                                   "sampling rate per million must be less than or equal to one "
                                   "million"));
    }
  }
  if (t.endpoint.has_value()) {
    std::string endpoint = *t.endpoint;
    if (endpoint.find("//") == std::string::npos) endpoint = "dns://" + endpoint;
    std::string scheme;
    std::string err;
    if (!UrlScheme(endpoint, &scheme, &err)) {
      errs->push_back(FieldInvalid("tracing.endpoint", Q(endpoint), err));
      return;
    }
    if (scheme != "dns" && scheme != "unix" && scheme != "unix-abstract") {
      errs->push_back(
          FieldInvalid("tracing.endpoint", Q(endpoint),
                       absl::StrCat("unsupported scheme: ", scheme,
                                    ".  Options are none, dns, unix, or unix-abstract.  See "
                                    "https://github.com/grpc/grpc/blob/master/doc/naming.md")));
    }
  }
}

// validateReservedMemoryConfiguration.
void ValidateReservedMemory(const KubeletConfiguration& kc, std::vector<std::string>* errs) {
  std::map<int32_t, std::set<std::string>> seen;
  for (const MemoryReservation& r : kc.reserved_memory) {
    for (const auto& [name, q] : r.limits) {
      if (name != "memory" && !absl::StartsWith(name, "hugepages-")) {
        errs->push_back(absl::StrCat(kInvalid, "the limit type ", Q(name), " for NUMA node ",
                                     r.numa_node,
                                     " is not supported, only [memory hugepages-<HugePageSize>] "
                                     "is accepted"));
      }
      if (q.IsZero()) {
        errs->push_back(absl::StrCat(kInvalid, "reserved memory may not be zero for NUMA node ",
                                     r.numa_node, " and resource ", Q(name)));
      }
      if (!seen[r.numa_node].insert(name).second) {
        errs->push_back(absl::StrCat(kInvalid,
                                     "the reserved memory has a duplicate value for NUMA node ",
                                     r.numa_node, " and resource ", Q(name)));
      }
    }
  }
}

}  // namespace

absl::Status ValidateKubeletConfiguration(const KubeletConfiguration& kc,
                                          const FeatureGate& gates) {
  FeatureGate local = gates;
  if (absl::Status st = local.SetFromMap(kc.feature_gates); !st.ok()) return st;

  std::vector<std::string> errs;
  auto add = [&errs](auto&&... parts) { errs.push_back(absl::StrCat(kInvalid, parts...)); };

  if (kc.node_lease_duration_seconds <= 0) add("nodeLeaseDurationSeconds must be greater than 0");
  if (!kc.cgroups_per_qos && !kc.enforce_node_allocatable.empty()) {
    add("enforceNodeAllocatable (--enforce-node-allocatable) is not supported unless "
        "cgroupsPerQOS (--cgroups-per-qos) is set to true");
  }
  if (!kc.system_cgroups.empty() && kc.cgroup_root.empty()) {
    add("systemCgroups (--system-cgroups) was specified and cgroupRoot (--cgroup-root) was not "
        "specified");
  }
  if (kc.event_burst < 0) {
    add("eventBurst (--event-burst) ", kc.event_burst, " must not be a negative number");
  }
  if (kc.event_record_qps < 0) {
    add("eventRecordQPS (--event-qps) ", kc.event_record_qps, " must not be a negative number");
  }
  if (kc.healthz_port != 0 && !ValidPort(kc.healthz_port)) {
    add("healthzPort (--healthz-port) ", kc.healthz_port,
        " must be between 1 and 65535, inclusive");
  }
  const bool custom_cfs = local.Enabled("CustomCPUCFSQuotaPeriod");
  if (!custom_cfs && kc.cpu_cfs_quota_period != absl::Milliseconds(100)) {
    add("cpuCFSQuotaPeriod (--cpu-cfs-quota-period) ", MetaDuration(kc.cpu_cfs_quota_period),
        " requires feature gate CustomCPUCFSQuotaPeriod");
  }
  if (custom_cfs && (kc.cpu_cfs_quota_period < absl::Milliseconds(1) ||
                     kc.cpu_cfs_quota_period > absl::Seconds(1))) {
    add("cpuCFSQuotaPeriod (--cpu-cfs-quota-period) ", MetaDuration(kc.cpu_cfs_quota_period),
        " must be between 1ms and 1sec, inclusive");
  }
  if (!InRange(kc.image_gc_high_threshold_percent, 0, 100)) {
    add("imageGCHighThresholdPercent (--image-gc-high-threshold) ",
        kc.image_gc_high_threshold_percent, " must be between 0 and 100, inclusive");
  }
  if (!InRange(kc.image_gc_low_threshold_percent, 0, 100)) {
    add("imageGCLowThresholdPercent (--image-gc-low-threshold) ", kc.image_gc_low_threshold_percent,
        " must be between 0 and 100, inclusive");
  }
  if (kc.image_gc_low_threshold_percent >= kc.image_gc_high_threshold_percent) {
    add("imageGCLowThresholdPercent (--image-gc-low-threshold) ", kc.image_gc_low_threshold_percent,
        " must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) ",
        kc.image_gc_high_threshold_percent);
  }
  if (!InRange(kc.iptables_drop_bit, 0, 31)) {
    add("iptablesDropBit (--iptables-drop-bit) ", kc.iptables_drop_bit,
        " must be between 0 and 31, inclusive");
  }
  if (!InRange(kc.iptables_masquerade_bit, 0, 31)) {
    add("iptablesMasqueradeBit (--iptables-masquerade-bit) ", kc.iptables_masquerade_bit,
        " must be between 0 and 31, inclusive");
  }
  if (kc.kube_api_burst < 0) {
    add("kubeAPIBurst (--kube-api-burst) ", kc.kube_api_burst, " must not be a negative number");
  }
  if (kc.kube_api_qps < 0) {
    add("kubeAPIQPS (--kube-api-qps) ", kc.kube_api_qps, " must not be a negative number");
  }
  if (kc.node_status_max_images < -1) {
    add("nodeStatusMaxImages (--node-status-max-images) ", kc.node_status_max_images,
        " must be -1 or greater");
  }
  if (kc.max_open_files < 0) {
    add("maxOpenFiles (--max-open-files) ", kc.max_open_files, " must not be a negative number");
  }
  if (kc.max_pods < 0) {
    add("maxPods (--max-pods) ", kc.max_pods, " must not be a negative number");
  }
  if (!InRange(kc.oom_score_adj, -1000, 1000)) {
    add("oomScoreAdj (--oom-score-adj) ", kc.oom_score_adj,
        " must be between -1000 and 1000, inclusive");
  }
  if (kc.pods_per_core < 0) {
    add("podsPerCore (--pods-per-core) ", kc.pods_per_core, " must not be a negative number");
  }
  if (!ValidPort(kc.port)) {
    add("port (--port) ", kc.port, " must be between 1 and 65535, inclusive");
  }
  if (kc.read_only_port != 0 && !ValidPort(kc.read_only_port)) {
    add("readOnlyPort (--read-only-port) ", kc.read_only_port,
        " must be between 0 and 65535, inclusive");
  }
  if (kc.registry_burst < 0) {
    add("registryBurst (--registry-burst) ", kc.registry_burst, " must not be a negative number");
  }
  if (kc.registry_pull_qps < 0) {
    add("registryPullQPS (--registry-qps) ", kc.registry_pull_qps,
        " must not be a negative number");
  }
  if (kc.max_parallel_image_pulls.has_value() && *kc.max_parallel_image_pulls < 1) {
    add("maxParallelImagePulls ", *kc.max_parallel_image_pulls, " must be a positive number");
  }
  if (kc.serialize_image_pulls && kc.max_parallel_image_pulls.has_value() &&
      *kc.max_parallel_image_pulls > 1) {
    add("maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls "
        "(--serialize-image-pulls) is set to false");
  }
  if (kc.server_tls_bootstrap && !local.Enabled("RotateKubeletServerCertificate")) {
    add("serverTLSBootstrap ", B(kc.server_tls_bootstrap),
        " requires feature gate RotateKubeletServerCertificate");
  }

  for (const Taint& t : kc.register_with_taints) {
    if (!CheckTaintValidation(t).ok()) errs.push_back(absl::StrCat("invalid taint: ", GoTaint(t)));
    if (t.time_added.has_value()) add("taint.TimeAdded is not nil");
  }

  const std::string& tmp = kc.topology_manager_policy;
  if (tmp != "none" && tmp != "best-effort" && tmp != "restricted" && tmp != "single-numa-node") {
    add("topologyManagerPolicy (--topology-manager-policy) ", Q(tmp),
        " must be one of: [\"none\" \"best-effort\" \"restricted\" \"single-numa-node\"]");
  }
  const std::string& tms = kc.topology_manager_scope;
  if (tms != "container" && tms != "pod") {
    add("topologyManagerScope (--topology-manager-scope) ", Q(tms),
        " must be one of: \"container\", or \"pod\"");
  }

  const absl::Duration sgp = kc.shutdown_grace_period;
  const absl::Duration sgpc = kc.shutdown_grace_period_critical_pods;
  if (local.Enabled("GracefulNodeShutdown")) {
    if (sgpc > sgp) {
      add("shutdownGracePeriodCriticalPods ", MetaDuration(sgpc),
          " must be <= shutdownGracePeriod ", MetaDuration(sgp));
    }
    if (sgp < absl::ZeroDuration() || (sgp > absl::ZeroDuration() && sgp < absl::Seconds(1))) {
      add("shutdownGracePeriod ", MetaDuration(sgp), " must be either zero or otherwise >= 1 sec");
    }
    if (sgpc < absl::ZeroDuration() || (sgpc > absl::ZeroDuration() && sgpc < absl::Seconds(1))) {
      add("shutdownGracePeriodCriticalPods ", MetaDuration(sgpc),
          " must be either zero or otherwise >= 1 sec");
    }
  }
  if ((sgp > absl::ZeroDuration() || sgpc > absl::ZeroDuration()) &&
      !local.Enabled("GracefulNodeShutdown")) {
    add("specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires feature gate "
        "GracefulNodeShutdown");
  }
  if (local.Enabled("GracefulNodeShutdownBasedOnPodPriority")) {
    if (!kc.shutdown_grace_period_by_pod_priority.empty() &&
        (sgp > absl::ZeroDuration() || sgpc > absl::ZeroDuration())) {
      add("Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the "
          "same time");
    }
  } else if (!kc.shutdown_grace_period_by_pod_priority.empty()) {
    add("Specifying shutdownGracePeriodByPodPriority requires feature gate "
        "GracefulNodeShutdownBasedOnPodPriority");
  }

  if (local.Enabled("NodeSwap")) {
    const std::string& b = kc.memory_swap.swap_behavior;
    if (!b.empty() && b != "LimitedSwap" && b != "UnlimitedSwap") {
      add("memorySwap.swapBehavior ", Q(b),
          " must be one of: \"\", \"LimitedSwap\", or \"UnlimitedSwap\"");
    }
  } else if (!(kc.memory_swap == MemorySwapConfiguration{})) {
    add("memorySwap.swapBehavior cannot be set when NodeSwap feature flag is disabled");
  }

  for (const std::string& val : kc.enforce_node_allocatable) {
    if (val == "pods") continue;
    if (val == "system-reserved") {
      if (kc.system_reserved_cgroup.empty()) {
        add("systemReservedCgroup (--system-reserved-cgroup) must be specified when "
            "\"system-reserved\" contained in enforceNodeAllocatable (--enforce-node-allocatable)");
      }
    } else if (val == "kube-reserved") {
      if (kc.kube_reserved_cgroup.empty()) {
        add("kubeReservedCgroup (--kube-reserved-cgroup) must be specified when "
            "\"kube-reserved\" contained in enforceNodeAllocatable (--enforce-node-allocatable)");
      }
    } else if (val == "none") {
      if (kc.enforce_node_allocatable.size() > 1) {
        add("enforceNodeAllocatable (--enforce-node-allocatable) may not contain additional "
            "enforcements when \"none\" is specified");
      }
    } else {
      add("option ", Q(val),
          " specified for enforceNodeAllocatable (--enforce-node-allocatable). Valid options are "
          "\"pods\", \"system-reserved\", \"kube-reserved\", or \"none\"");
    }
  }
  const std::string& hm = kc.hairpin_mode;
  if (hm != "none" && hm != "hairpin-veth" && hm != "promiscuous-bridge") {
    add("option ", Q(hm),
        " specified for hairpinMode (--hairpin-mode). Valid options are \"none\", "
        "\"hairpin-veth\" or \"promiscuous-bridge\"");
  }
  if (!kc.reserved_system_cpus.empty()) {
    if (!kc.system_reserved_cgroup.empty() || !kc.kube_reserved_cgroup.empty()) {
      add("can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup "
          "(--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)");
    }
    if (absl::StatusOr<CPUSet> cpus = CPUSet::Parse(kc.reserved_system_cpus); !cpus.ok()) {
      add("unable to parse reservedSystemCPUs (--reserved-cpus) ", kc.reserved_system_cpus,
          ", error: ", cpus.status().message());
    }
  }

  ValidateReservedMemory(kc, &errs);

  if (!kc.show_hidden_metrics_for_version.empty() &&
      kc.show_hidden_metrics_for_version != kPreviousMinorVersion) {
    errs.push_back(
        absl::StrCat("--show-hidden-metrics-for-version must be omitted or have the "
                     "value '",
                     kPreviousMinorVersion, "'. Only the previous minor version is allowed"));
  }

  ValidateLogging(kc.logging, local, &errs);

  if (local.Enabled("KubeletTracing")) {
    if (kc.tracing.has_value()) ValidateTracing(*kc.tracing, &errs);
  } else if (kc.tracing.has_value()) {
    add("tracing should not be configured if KubeletTracing feature flag is disabled.");
  }

  if (kc.memory_throttling_factor <= 0 || kc.memory_throttling_factor > 1.0) {
    add("memoryThrottlingFactor ", GoFloat(kc.memory_throttling_factor),
        " must be greater than 0 and less than or equal to 1.0");
  }

  if (kc.container_runtime_endpoint.empty()) {
    add("the containerRuntimeEndpoint was not specified or empty");
  }

  if (kc.enable_system_log_query && !local.Enabled("NodeLogQuery")) {
    add("NodeLogQuery feature gate is required for enableSystemLogHandler");
  }
  if (kc.enable_system_log_query && !kc.enable_system_log_handler) {
    add("enableSystemLogHandler is required for enableSystemLogQuery");
  }

  return AggregateErrors(errs);
}

absl::Status AggregateErrors(const std::vector<std::string>& errors) {
  if (errors.empty()) return absl::OkStatus();
  if (errors.size() == 1) return absl::InvalidArgumentError(errors[0]);
  std::set<std::string> seen;
  std::vector<std::string> unique;
  for (const std::string& e : errors) {
    if (seen.insert(e).second) unique.push_back(e);
  }
  if (unique.size() == 1) return absl::InvalidArgumentError(unique[0]);
  return absl::InvalidArgumentError(absl::StrCat("[", absl::StrJoin(unique, ", "), "]"));
}

}  // namespace kubelet::config
