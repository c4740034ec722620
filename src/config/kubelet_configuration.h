// KubeletConfiguration (kubelet.config.k8s.io/v1beta1), as of upstream Kubernetes v1.28.
//
// Contract:
//  * `KubeletConfiguration` holds every v1beta1 field, named as the JSON field in snake_case
//    (syncFrequency -> sync_frequency, staticPodURL -> static_pod_url). It models the *effective*
//    configuration (upstream's internal type): Go pointer fields (*bool, *int32, ...) are plain
//    values, resolved by defaulting; only fields that stay nil-able upstream after defaulting are
//    std::optional (maxParallelImagePulls, tracing and its members, a taint's timeAdded).
//    Durations are absl::Duration, quantities are api::Quantity, a taint is api::Taint.
//  * The wire shape is one set of field tables (kubelet_configuration_fields.h) on the API
//    codec (api/codec.h), read by the encoder below and by the decoder, which applies Go's
//    encoding/json rules and messages on top of them.
//  * Decoding follows upstream's loader (configfiles + codec + server.go loadConfigFile):
//      - JSON when the first non-space byte is '{', YAML otherwise, with Go's YAML->JSON rules
//        (yes/no/on/off are bools, `5` is a number and `"5"` a string, a number for a string
//        field or a string for an int field is an error, 1.5 for an int field is an error).
//      - apiVersion must be kubelet.config.k8s.io/v1beta1 and kind KubeletConfiguration.
//      - Type errors use Go's wording and name the field path, e.g. `json: cannot unmarshal
//        string into Go struct field KubeletConfiguration.maxPods of type int32`; a bad
//        duration reads `field "syncFrequency": time: unknown unit "x" in duration "5x"`.
//      - Unknown and duplicate fields: upstream v1.28 decodes strictly, and when the *only*
//        problems are unknown/duplicate fields it falls back to lenient decoding, logs
//        `"Using lenient decoding as strict decoding failed" err="strict decoding error: unknown
//        field \"foo\""` and carries on. That is the default here (the text is returned in
//        LoadedConfig::strict_decoding_error); DecodeOptions::strict makes them fatal.
//      - Defaulting is SetDefaults_KubeletConfiguration: a Go pointer field keeps an explicit
//        `false`/`0` from the file; a non-pointer field is defaulted when zero ("", 0, "0s").
//        `null` means unset. After decoding, an absent/null evictionHard gets
//        DefaultEvictionHard() (server.go loadConfigFile); `evictionHard: {}` stays empty.
//      - staticPodPath, authentication.x509.clientCAFile, tlsCertFile, tlsPrivateKeyFile and
//        resolvConf are resolved against the config file's directory (empty stays empty).
//  * Error messages are complete, in upstream's chained form, ready to print:
//      failed to load kubelet config file, path: P, error: failed to load Kubelet config file
//      P, error failed to decode: <detail>
//    Do not wrap them again.
//  * Encoding (/configz): the v1beta1 JSON that upstream's json.Marshal produces for the
//    converted configuration: Go field order, omitempty exactly as the struct tags (Go pointer
//    fields and struct-valued fields are always present), durations as "1m0s", quantities in
//    canonical form, Go's string escaping. Without kind/apiVersion unless asked.
// Everything here is a pure function or value type; thread-compatible. No exceptions escape.
#ifndef KUBELET_CONFIG_KUBELET_CONFIGURATION_H_
#define KUBELET_CONFIG_KUBELET_CONFIGURATION_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/node.h"
#include "api/quantity.h"

namespace kubelet::config {

inline constexpr char kKubeletConfigGroup[] = "kubelet.config.k8s.io";
inline constexpr char kKubeletConfigAPIVersion[] = "kubelet.config.k8s.io/v1beta1";
inline constexpr char kKubeletConfigKind[] = "KubeletConfiguration";

struct KubeletX509Authentication {
  std::string client_ca_file;  // clientCAFile
  bool operator==(const KubeletX509Authentication&) const = default;
};

struct KubeletWebhookAuthentication {
  bool enabled = false;      // *bool, default true
  absl::Duration cache_ttl;  // cacheTTL, default 2m
  bool operator==(const KubeletWebhookAuthentication&) const = default;
};

struct KubeletAnonymousAuthentication {
  bool enabled = false;  // *bool, default false
  bool operator==(const KubeletAnonymousAuthentication&) const = default;
};

struct KubeletAuthentication {
  KubeletX509Authentication x509;
  KubeletWebhookAuthentication webhook;
  KubeletAnonymousAuthentication anonymous;
  bool operator==(const KubeletAuthentication&) const = default;
};

struct KubeletWebhookAuthorization {
  absl::Duration cache_authorized_ttl;    // cacheAuthorizedTTL, default 5m
  absl::Duration cache_unauthorized_ttl;  // cacheUnauthorizedTTL, default 30s
  bool operator==(const KubeletWebhookAuthorization&) const = default;
};

struct KubeletAuthorization {
  std::string mode;  // "AlwaysAllow" | "Webhook", default Webhook
  KubeletWebhookAuthorization webhook;
  bool operator==(const KubeletAuthorization&) const = default;
};

struct MemorySwapConfiguration {
  std::string swap_behavior;  // swapBehavior: "", "LimitedSwap", "UnlimitedSwap"
  bool operator==(const MemorySwapConfiguration&) const = default;
};

// reservedMemory entry.
struct MemoryReservation {
  int32_t numa_node = 0;                        // numaNode
  std::map<std::string, api::Quantity> limits;  // v1.ResourceList
  bool operator==(const MemoryReservation&) const = default;
};

struct ShutdownGracePeriodByPodPriority {
  int32_t priority = 0;
  int64_t shutdown_grace_period_seconds = 0;
  bool operator==(const ShutdownGracePeriodByPodPriority&) const = default;
};

// core/v1 Taint (registerWithTaints): the API type itself.
using Taint = api::Taint;

// component-base logs/api/v1.
struct VModuleItem {
  std::string file_pattern;  // filePattern
  uint32_t verbosity = 0;
  bool operator==(const VModuleItem&) const = default;
};

// OutputRoutingOptions, inlined into TextOptions and JSONOptions.
struct LoggingOutputRoutingOptions {
  bool split_stream = false;       // splitStream
  api::Quantity info_buffer_size;  // infoBufferSize, default "0"
  bool operator==(const LoggingOutputRoutingOptions&) const = default;
};

// TextOptions and JSONOptions: two Go types of the same shape (their names appear in errors).
struct LoggingTextOptions : LoggingOutputRoutingOptions {};
struct LoggingJsonOptions : LoggingOutputRoutingOptions {};

struct LoggingFormatOptions {
  LoggingTextOptions text;
  LoggingJsonOptions json;
  bool operator==(const LoggingFormatOptions&) const = default;
};

// flushFrequency's TimeOrMetaDuration: a string ("5s") or an int (nanoseconds) in the file, and
// written back the same way. Defaulting sets it to string form.
struct TimeOrMetaDuration {
  absl::Duration duration;
  bool as_string = false;
  bool operator==(const TimeOrMetaDuration&) const = default;
};

struct LoggingConfiguration {
  std::string format;                  // default "text"
  TimeOrMetaDuration flush_frequency;  // default 5s
  uint32_t verbosity = 0;
  std::vector<VModuleItem> vmodule;
  LoggingFormatOptions options;
  bool operator==(const LoggingConfiguration&) const = default;
};

// component-base tracing/api/v1.
struct TracingConfiguration {
  std::optional<std::string> endpoint;
  std::optional<int32_t> sampling_rate_per_million;  // samplingRatePerMillion
  bool operator==(const TracingConfiguration&) const = default;
};

// Fields in v1beta1 order. "[*T]" marks Go pointer fields (explicit zero values are kept).
struct KubeletConfiguration {
  bool enable_server = false;  // [*bool] default true
  std::string static_pod_path;
  absl::Duration sync_frequency;                                          // default 1m
  absl::Duration file_check_frequency;                                    // default 20s
  absl::Duration http_check_frequency;                                    // default 20s
  std::string static_pod_url;                                             // staticPodURL
  std::map<std::string, std::vector<std::string>> static_pod_url_header;  // staticPodURLHeader
  std::string address;                                                    // default 0.0.0.0
  int32_t port = 0;                                                       // default 10250
  int32_t read_only_port = 0;
  std::string tls_cert_file;
  std::string tls_private_key_file;
  std::vector<std::string> tls_cipher_suites;
  std::string tls_min_version;
  bool rotate_certificates = false;
  bool server_tls_bootstrap = false;  // serverTLSBootstrap
  KubeletAuthentication authentication;
  KubeletAuthorization authorization;
  int32_t registry_pull_qps = 0;           // [*int32] registryPullQPS, default 5
  int32_t registry_burst = 0;              // default 10
  int32_t event_record_qps = 0;            // [*int32] eventRecordQPS, default 50
  int32_t event_burst = 0;                 // default 100
  bool enable_debugging_handlers = false;  // [*bool] default true
  bool enable_contention_profiling = false;
  int32_t healthz_port = 0;          // [*int32] default 10248
  std::string healthz_bind_address;  // default 127.0.0.1
  int32_t oom_score_adj = 0;         // [*int32] oomScoreAdj, default -999
  std::string cluster_domain;
  std::vector<std::string> cluster_dns;              // clusterDNS
  absl::Duration streaming_connection_idle_timeout;  // default 4h
  absl::Duration node_status_update_frequency;       // default 10s
  absl::Duration node_status_report_frequency;       // default 5m (or the update frequency)
  int32_t node_lease_duration_seconds = 0;           // default 40
  absl::Duration image_minimum_gc_age;               // imageMinimumGCAge, default 2m
  int32_t image_gc_high_threshold_percent = 0;       // [*int32] default 85
  int32_t image_gc_low_threshold_percent = 0;        // [*int32] default 80
  absl::Duration volume_stats_agg_period;            // default 1m
  std::string kubelet_cgroups;
  std::string system_cgroups;
  std::string cgroup_root;
  bool cgroups_per_qos = false;    // [*bool] cgroupsPerQOS, default true
  std::string cgroup_driver;       // default cgroupfs
  std::string cpu_manager_policy;  // cpuManagerPolicy, default "none"
  std::map<std::string, std::string> cpu_manager_policy_options;
  absl::Duration cpu_manager_reconcile_period;  // default 10s
  std::string memory_manager_policy;            // default "None"
  std::string topology_manager_policy;          // default "none"
  std::string topology_manager_scope;           // default "container"
  std::map<std::string, std::string> topology_manager_policy_options;
  std::map<std::string, std::string> qos_reserved;  // qosReserved
  absl::Duration runtime_request_timeout;           // default 2m
  std::string hairpin_mode;                         // default promiscuous-bridge
  int32_t max_pods = 0;                             // default 110
  std::string pod_cidr;                             // podCIDR
  int64_t pod_pids_limit = 0;                       // [*int64] default -1 (also when < 0)
  std::string resolv_conf;  // [*string] resolvConf, default /etc/resolv.conf ("" kept)
  bool run_once = false;
  bool cpu_cfs_quota = false;           // [*bool] cpuCFSQuota, default true
  absl::Duration cpu_cfs_quota_period;  // [*Duration] cpuCFSQuotaPeriod, default 100ms
  int32_t node_status_max_images = 0;   // [*int32] default 50
  int64_t max_open_files = 0;           // default 1000000
  std::string content_type;             // default application/vnd.kubernetes.protobuf
  int32_t kube_api_qps = 0;             // [*int32] kubeAPIQPS, default 50
  int32_t kube_api_burst = 0;           // kubeAPIBurst, default 100
  bool serialize_image_pulls = false;   // [*bool] default true (false if maxParallelImagePulls>1)
  std::optional<int32_t> max_parallel_image_pulls;   // [*int32] no default
  std::map<std::string, std::string> eviction_hard;  // see DefaultEvictionHard()
  std::map<std::string, std::string> eviction_soft;
  std::map<std::string, std::string> eviction_soft_grace_period;
  absl::Duration eviction_pressure_transition_period;  // default 5m
  int32_t eviction_max_pod_grace_period = 0;
  std::map<std::string, std::string> eviction_minimum_reclaim;
  int32_t pods_per_core = 0;
  bool enable_controller_attach_detach = false;  // [*bool] default true
  bool protect_kernel_defaults = false;
  bool make_iptables_util_chains = false;  // [*bool] makeIPTablesUtilChains, default true
  int32_t iptables_masquerade_bit = 0;     // [*int32] default 14
  int32_t iptables_drop_bit = 0;           // [*int32] default 15
  std::map<std::string, bool> feature_gates;
  bool fail_swap_on = false;  // [*bool] default true
  MemorySwapConfiguration memory_swap;
  std::string container_log_max_size;                           // default 10Mi
  int32_t container_log_max_files = 0;                          // [*int32] default 5
  std::string config_map_and_secret_change_detection_strategy;  // default Watch
  std::map<std::string, std::string> system_reserved;
  std::map<std::string, std::string> kube_reserved;
  std::string reserved_system_cpus;  // reservedSystemCPUs
  std::string show_hidden_metrics_for_version;
  std::string system_reserved_cgroup;
  std::string kube_reserved_cgroup;
  std::vector<std::string> enforce_node_allocatable;  // default ["pods"] when absent/null
  std::vector<std::string> allowed_unsafe_sysctls;
  std::string volume_plugin_dir;  // default /usr/libexec/kubernetes/kubelet-plugins/volume/exec/
  std::string provider_id;        // providerID
  bool kernel_memcg_notification = false;
  LoggingConfiguration logging;
  bool enable_system_log_handler = false;  // [*bool] default true
  bool enable_system_log_query = false;    // [*bool] no default (nil -> false)
  absl::Duration shutdown_grace_period;
  absl::Duration shutdown_grace_period_critical_pods;
  std::vector<ShutdownGracePeriodByPodPriority> shutdown_grace_period_by_pod_priority;
  std::vector<MemoryReservation> reserved_memory;
  bool enable_profiling_handler = false;    // [*bool] default true
  bool enable_debug_flags_handler = false;  // [*bool] default true
  bool seccomp_default = false;             // [*bool] default false
  double memory_throttling_factor = 0;      // [*float64] default 0.9
  std::vector<Taint> register_with_taints;
  bool register_node = false;                     // [*bool] default true
  std::optional<TracingConfiguration> tracing;    // [*TracingConfiguration] no default
  bool local_storage_capacity_isolation = false;  // [*bool] default true
  std::string container_runtime_endpoint;         // default unix:///run/containerd/containerd.sock
  std::string image_service_endpoint;

  bool operator==(const KubeletConfiguration&) const = default;
};

// Upstream's SetDefaults_KubeletConfiguration (pkg/kubelet/apis/config/v1beta1/defaults.go).
// `set_fields` lists the JSON paths (as in LoadedConfig::fields_set) that were explicitly set;
// Go pointer fields (and the nil-checked enforceNodeAllocatable) named there keep their value,
// all others are given their default. Non-pointer fields are defaulted when zero. With an
// empty list this defaults a freshly constructed v1beta1 object. Does not touch evictionHard.
void SetDefaults(KubeletConfiguration* config, const std::vector<std::string>& set_fields = {});

// The command-line defaults upstream keeps for flag compatibility when no --config is given
// (cmd/kubelet/app/options.applyLegacyDefaults): anonymous auth on, webhook authn off,
// authorization AlwaysAllow, readOnlyPort 10255.
void ApplyLegacyDefaults(KubeletConfiguration* config);

// Linux hard-eviction defaults (pkg/kubelet/eviction/defaults_linux.go): memory.available 100Mi,
// nodefs.available 10%, nodefs.inodesFree 5%, imagefs.available 15%.
const std::map<std::string, std::string>& DefaultEvictionHard();

// What the kubelet starts from before flags, i.e. what it runs with when no --config is given
// (options.NewKubeletConfiguration): SetDefaults on an empty object, ApplyLegacyDefaults, and
// evictionHard = DefaultEvictionHard().
KubeletConfiguration DefaultKubeletConfiguration();

struct DecodeOptions {
  // Make unknown/duplicate fields fatal instead of upstream's lenient fallback.
  bool strict = false;
  // Log upstream's "Using lenient decoding as strict decoding failed" line (KLOG_INFO) when the
  // lenient fallback is taken.
  bool log_lenient_fallback = true;
};

struct LoadedConfig {
  KubeletConfiguration config;  // decoded, defaulted, paths resolved
  // Dotted JSON paths of the fields given a non-null value in the file, in first-appearance
  // order, e.g. "syncFrequency", "authentication.webhook.enabled". Struct-valued fields are
  // descended into (an empty object lists the struct itself); maps and lists are listed by
  // their own path ("featureGates", "registerWithTaints"). apiVersion/kind are not listed.
  std::vector<std::string> fields_set;
  // Non-empty when the lenient fallback was taken: the strict error text upstream logs, e.g.
  // `strict decoding error: unknown field "authentication.x509.clientCAFil"`.
  std::string strict_decoding_error;
};

// Decodes `data` (the content of the file `source_name`). Relative paths are resolved against
// the directory of `source_name` made absolute (none when `source_name` is empty).
absl::StatusOr<LoadedConfig> DecodeKubeletConfiguration(std::string_view data,
                                                        std::string_view source_name,
                                                        const DecodeOptions& options = {});

// Reads and decodes the --config file. Errors: unreadable or empty file, plus everything
// DecodeKubeletConfiguration reports.
absl::StatusOr<LoadedConfig> LoadKubeletConfigFile(const std::string& path,
                                                   const DecodeOptions& options = {});

// --config-dir (upstream v1.28 server.go mergeKubeletConfigurations): each drop-in document is
// merged over the configuration loaded so far as upstream's JSON merge of the drop-in into the
// current configuration, decoded back with encoding/json, behaves:
//  * a field present in the drop-in replaces the value; nested objects merge field by field;
//    maps (featureGates, evictionHard, kubeReserved, ...) gain or replace keys; lists are
//    replaced as a whole;
//  * `null` (at any depth) and unknown fields change nothing; apiVersion/kind are not required
//    (nor checked); nothing is defaulted and relative paths stay as written;
//  * type errors use the decoder's Go wording and name the field path.
// DecodeKubeletConfigurationDropin decodes one document (JSON or YAML) over `config` and returns
// the JSON paths it set (as LoadedConfig::fields_set); errors are the bare detail.
absl::StatusOr<std::vector<std::string>> DecodeKubeletConfigurationDropin(
    std::string_view data, KubeletConfiguration* config);

// Merges the drop-in files of `dir` over `config`, as upstream's filepath.WalkDir: entries in
// lexical order of their names, subdirectories descended into where they come in that order
// (symlinks are not followed, a symlinked directory is a file), only names whose extension is
// exactly ".conf" read; every other file is skipped. Returns the JSON paths set, in order.
// Errors name the directory and the file, e.g.
//   failed to walk through kubelet dropin directory "/etc/k.d": failed to load kubelet dropin
//   file, path: /etc/k.d/10.conf, error: json: cannot unmarshal string into Go struct field
//   KubeletConfiguration.maxPods of type int32
// (the caller prefixes "failed to merge kubelet configs: "). On error `config` may be partly
// merged.
absl::StatusOr<std::vector<std::string>> MergeKubeletConfigDropins(const std::string& dir,
                                                                   KubeletConfiguration* config);

// The v1beta1 JSON (compact, as json.Marshal) of `config`: what /configz serves under
// "kubeletconfig". With `include_type_meta`, "kind" and "apiVersion" come first so the result
// is a loadable config file.
std::string KubeletConfigurationToJson(const KubeletConfiguration& config,
                                       bool include_type_meta = false);

// {"kubeletconfig":<KubeletConfigurationToJson(config)>}, the /configz body.
std::string KubeletConfigzJson(const KubeletConfiguration& config);

}  // namespace kubelet::config

#endif  // KUBELET_CONFIG_KUBELET_CONFIGURATION_H_
