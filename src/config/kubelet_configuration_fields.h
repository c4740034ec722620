// The v1beta1 wire shape of KubeletConfiguration as field tables of the API codec (api/codec.h):
// JSON names in Go field order, omitempty as the struct tags say, Go pointer fields marked
// kGoPointer (and never omitted: after defaulting they are always set), Go type names where an
// error message needs one that the C++ type does not give (a struct, a named type). Follows
// staging/src/k8s.io/kubelet/config/v1beta1/types.go at v1.28, component-base logs/api/v1 and
// tracing/api/v1, and core/v1 Taint (api/node.h). Read by the encoder (/configz) and the decoder.
#ifndef KUBELET_CONFIG_KUBELET_CONFIGURATION_FIELDS_H_
#define KUBELET_CONFIG_KUBELET_CONFIGURATION_FIELDS_H_

#include <string>
#include <string_view>
#include <tuple>

#include "api/codec.h"
#include "config/kubelet_configuration.h"

namespace kubelet::api::codec {

template <>
struct Fields<config::KubeletX509Authentication> {
  using S = config::KubeletX509Authentication;
  static constexpr std::string_view kGoName = "KubeletX509Authentication";
  static constexpr auto kList = std::tuple(Field("clientCAFile", &S::client_ca_file, kOmitEmpty));
};

template <>
struct Fields<config::KubeletWebhookAuthentication> {
  using S = config::KubeletWebhookAuthentication;
  static constexpr std::string_view kGoName = "KubeletWebhookAuthentication";
  static constexpr auto kList =
      std::tuple(Field("enabled", &S::enabled, kGoPointer), Field("cacheTTL", &S::cache_ttl));
};

template <>
struct Fields<config::KubeletAnonymousAuthentication> {
  using S = config::KubeletAnonymousAuthentication;
  static constexpr std::string_view kGoName = "KubeletAnonymousAuthentication";
  static constexpr auto kList = std::tuple(Field("enabled", &S::enabled, kGoPointer));
};

template <>
struct Fields<config::KubeletAuthentication> {
  using S = config::KubeletAuthentication;
  static constexpr std::string_view kGoName = "KubeletAuthentication";
  static constexpr auto kList =
      std::tuple(Field("x509", &S::x509, 0, "v1beta1.KubeletX509Authentication"),
                 Field("webhook", &S::webhook, 0, "v1beta1.KubeletWebhookAuthentication"),
                 Field("anonymous", &S::anonymous, 0, "v1beta1.KubeletAnonymousAuthentication"));
};

template <>
struct Fields<config::KubeletWebhookAuthorization> {
  using S = config::KubeletWebhookAuthorization;
  static constexpr std::string_view kGoName = "KubeletWebhookAuthorization";
  static constexpr auto kList =
      std::tuple(Field("cacheAuthorizedTTL", &S::cache_authorized_ttl),
                 Field("cacheUnauthorizedTTL", &S::cache_unauthorized_ttl));
};

template <>
struct Fields<config::KubeletAuthorization> {
  using S = config::KubeletAuthorization;
  static constexpr std::string_view kGoName = "KubeletAuthorization";
  static constexpr auto kList =
      std::tuple(Field("mode", &S::mode, kOmitEmpty, "v1beta1.KubeletAuthorizationMode"),
                 Field("webhook", &S::webhook, 0, "v1beta1.KubeletWebhookAuthorization"));
};

template <>
struct Fields<config::MemorySwapConfiguration> {
  using S = config::MemorySwapConfiguration;
  static constexpr std::string_view kGoName = "MemorySwapConfiguration";
  static constexpr auto kList = std::tuple(Field("swapBehavior", &S::swap_behavior, kOmitEmpty));
};

template <>
struct Fields<config::MemoryReservation> {
  using S = config::MemoryReservation;
  static constexpr std::string_view kGoName = "MemoryReservation";
  static constexpr auto kList =
      std::tuple(Field("numaNode", &S::numa_node),
                 Field("limits", &S::limits, kEmptyAsNull, "v1.ResourceList"));
};

template <>
struct Fields<config::ShutdownGracePeriodByPodPriority> {
  using S = config::ShutdownGracePeriodByPodPriority;
  static constexpr std::string_view kGoName = "ShutdownGracePeriodByPodPriority";
  static constexpr auto kList =
      std::tuple(Field("priority", &S::priority),
                 Field("shutdownGracePeriodSeconds", &S::shutdown_grace_period_seconds));
};

template <>
struct Fields<config::VModuleItem> {
  using S = config::VModuleItem;
  static constexpr std::string_view kGoName = "VModuleItem";
  static constexpr auto kList =
      std::tuple(Field("filePattern", &S::file_pattern),
                 Field("verbosity", &S::verbosity, 0, "v1.VerbosityLevel"));
};

// OutputRoutingOptions, inlined into both TextOptions and JSONOptions: its members, under each
// type's own Go name.
template <typename S>
constexpr auto OutputRoutingFields() {
  return std::tuple(Field<S, bool>("splitStream", &S::split_stream, kOmitEmpty),
                    Field<S, Quantity>("infoBufferSize", &S::info_buffer_size));
}

template <>
struct Fields<config::LoggingTextOptions> {
  static constexpr std::string_view kGoName = "TextOptions";
  static constexpr auto kList = OutputRoutingFields<config::LoggingTextOptions>();
};

template <>
struct Fields<config::LoggingJsonOptions> {
  static constexpr std::string_view kGoName = "JSONOptions";
  static constexpr auto kList = OutputRoutingFields<config::LoggingJsonOptions>();
};

template <>
struct Fields<config::LoggingFormatOptions> {
  using S = config::LoggingFormatOptions;
  static constexpr std::string_view kGoName = "FormatOptions";
  static constexpr auto kList = std::tuple(Field("text", &S::text, 0, "v1.TextOptions"),
                                           Field("json", &S::json, 0, "v1.JSONOptions"));
};

template <>
struct Fields<config::LoggingConfiguration> {
  using S = config::LoggingConfiguration;
  static constexpr std::string_view kGoName = "LoggingConfiguration";
  static constexpr auto kList =
      std::tuple(Field("format", &S::format, kOmitEmpty),
                 Field("flushFrequency", &S::flush_frequency, 0, "v1.TimeOrMetaDuration"),
                 Field("verbosity", &S::verbosity, 0, "v1.VerbosityLevel"),
                 Field("vmodule", &S::vmodule, kOmitEmpty, "v1.VModuleConfiguration"),
                 Field("options", &S::options, 0, "v1.FormatOptions"));
};

template <>
struct Fields<config::TracingConfiguration> {
  using S = config::TracingConfiguration;
  static constexpr std::string_view kGoName = "TracingConfiguration";
  static constexpr auto kList = std::tuple(
      Field("endpoint", &S::endpoint, kOmitEmpty | kGoPointer),
      Field("samplingRatePerMillion", &S::sampling_rate_per_million, kOmitEmpty | kGoPointer));
};

template <>
struct Fields<config::KubeletConfiguration> {
  using S = config::KubeletConfiguration;
  static constexpr std::string_view kGoName = "KubeletConfiguration";
  static constexpr uint32_t kOmit = kOmitEmpty;
  static constexpr uint32_t kPtr = kGoPointer;  // never omitted: always set after defaulting
  static constexpr auto kList = std::tuple(
      Field("enableServer", &S::enable_server, kPtr),
      Field("staticPodPath", &S::static_pod_path, kOmit),
      Field("syncFrequency", &S::sync_frequency),
      Field("fileCheckFrequency", &S::file_check_frequency),
      Field("httpCheckFrequency", &S::http_check_frequency),
      Field("staticPodURL", &S::static_pod_url, kOmit),
      Field("staticPodURLHeader", &S::static_pod_url_header, kOmit),
      Field("address", &S::address, kOmit), Field("port", &S::port, kOmit),
      Field("readOnlyPort", &S::read_only_port, kOmit),
      Field("tlsCertFile", &S::tls_cert_file, kOmit),
      Field("tlsPrivateKeyFile", &S::tls_private_key_file, kOmit),
      Field("tlsCipherSuites", &S::tls_cipher_suites, kOmit),
      Field("tlsMinVersion", &S::tls_min_version, kOmit),
      Field("rotateCertificates", &S::rotate_certificates, kOmit),
      Field("serverTLSBootstrap", &S::server_tls_bootstrap, kOmit),
      Field("authentication", &S::authentication, 0, "v1beta1.KubeletAuthentication"),
      Field("authorization", &S::authorization, 0, "v1beta1.KubeletAuthorization"),
      Field("registryPullQPS", &S::registry_pull_qps, kPtr),
      Field("registryBurst", &S::registry_burst, kOmit),
      Field("eventRecordQPS", &S::event_record_qps, kPtr),
      Field("eventBurst", &S::event_burst, kOmit),
      Field("enableDebuggingHandlers", &S::enable_debugging_handlers, kPtr),
      Field("enableContentionProfiling", &S::enable_contention_profiling, kOmit),
      Field("healthzPort", &S::healthz_port, kPtr),
      Field("healthzBindAddress", &S::healthz_bind_address, kOmit),
      Field("oomScoreAdj", &S::oom_score_adj, kPtr),
      Field("clusterDomain", &S::cluster_domain, kOmit),
      Field("clusterDNS", &S::cluster_dns, kOmit),
      Field("streamingConnectionIdleTimeout", &S::streaming_connection_idle_timeout),
      Field("nodeStatusUpdateFrequency", &S::node_status_update_frequency),
      Field("nodeStatusReportFrequency", &S::node_status_report_frequency),
      Field("nodeLeaseDurationSeconds", &S::node_lease_duration_seconds, kOmit),
      Field("imageMinimumGCAge", &S::image_minimum_gc_age),
      Field("imageGCHighThresholdPercent", &S::image_gc_high_threshold_percent, kPtr),
      Field("imageGCLowThresholdPercent", &S::image_gc_low_threshold_percent, kPtr),
      Field("volumeStatsAggPeriod", &S::volume_stats_agg_period),
      Field("kubeletCgroups", &S::kubelet_cgroups, kOmit),
      Field("systemCgroups", &S::system_cgroups, kOmit),
      Field("cgroupRoot", &S::cgroup_root, kOmit),
      Field("cgroupsPerQOS", &S::cgroups_per_qos, kPtr),
      Field("cgroupDriver", &S::cgroup_driver, kOmit),
      Field("cpuManagerPolicy", &S::cpu_manager_policy, kOmit),
      Field("cpuManagerPolicyOptions", &S::cpu_manager_policy_options, kOmit),
      Field("cpuManagerReconcilePeriod", &S::cpu_manager_reconcile_period),
      Field("memoryManagerPolicy", &S::memory_manager_policy, kOmit),
      Field("topologyManagerPolicy", &S::topology_manager_policy, kOmit),
      Field("topologyManagerScope", &S::topology_manager_scope, kOmit),
      Field("topologyManagerPolicyOptions", &S::topology_manager_policy_options, kOmit),
      Field("qosReserved", &S::qos_reserved, kOmit),
      Field("runtimeRequestTimeout", &S::runtime_request_timeout),
      Field("hairpinMode", &S::hairpin_mode, kOmit), Field("maxPods", &S::max_pods, kOmit),
      Field("podCIDR", &S::pod_cidr, kOmit), Field("podPidsLimit", &S::pod_pids_limit, kPtr),
      Field("resolvConf", &S::resolv_conf, kPtr), Field("runOnce", &S::run_once, kOmit),
      Field("cpuCFSQuota", &S::cpu_cfs_quota, kPtr),
      Field("cpuCFSQuotaPeriod", &S::cpu_cfs_quota_period, kPtr),
      Field("nodeStatusMaxImages", &S::node_status_max_images, kPtr),
      Field("maxOpenFiles", &S::max_open_files, kOmit),
      Field("contentType", &S::content_type, kOmit), Field("kubeAPIQPS", &S::kube_api_qps, kPtr),
      Field("kubeAPIBurst", &S::kube_api_burst, kOmit),
      Field("serializeImagePulls", &S::serialize_image_pulls, kPtr),
      Field("maxParallelImagePulls", &S::max_parallel_image_pulls, kOmit | kPtr),
      Field("evictionHard", &S::eviction_hard, kOmit),
      Field("evictionSoft", &S::eviction_soft, kOmit),
      Field("evictionSoftGracePeriod", &S::eviction_soft_grace_period, kOmit),
      Field("evictionPressureTransitionPeriod", &S::eviction_pressure_transition_period),
      Field("evictionMaxPodGracePeriod", &S::eviction_max_pod_grace_period, kOmit),
      Field("evictionMinimumReclaim", &S::eviction_minimum_reclaim, kOmit),
      Field("podsPerCore", &S::pods_per_core, kOmit),
      Field("enableControllerAttachDetach", &S::enable_controller_attach_detach, kPtr),
      Field("protectKernelDefaults", &S::protect_kernel_defaults, kOmit),
      Field("makeIPTablesUtilChains", &S::make_iptables_util_chains, kPtr),
      Field("iptablesMasqueradeBit", &S::iptables_masquerade_bit, kPtr),
      Field("iptablesDropBit", &S::iptables_drop_bit, kPtr),
      Field("featureGates", &S::feature_gates, kOmit), Field("failSwapOn", &S::fail_swap_on, kPtr),
      Field("memorySwap", &S::memory_swap, 0, "v1beta1.MemorySwapConfiguration"),
      Field("containerLogMaxSize", &S::container_log_max_size, kOmit),
      Field("containerLogMaxFiles", &S::container_log_max_files, kPtr),
      Field("configMapAndSecretChangeDetectionStrategy",
            &S::config_map_and_secret_change_detection_strategy, kOmit,
            "v1beta1.ResourceChangeDetectionStrategy"),
      Field("systemReserved", &S::system_reserved, kOmit),
      Field("kubeReserved", &S::kube_reserved, kOmit),
      Field("reservedSystemCPUs", &S::reserved_system_cpus, kOmit),
      Field("showHiddenMetricsForVersion", &S::show_hidden_metrics_for_version, kOmit),
      Field("systemReservedCgroup", &S::system_reserved_cgroup, kOmit),
      Field("kubeReservedCgroup", &S::kube_reserved_cgroup, kOmit),
      Field("enforceNodeAllocatable", &S::enforce_node_allocatable, kOmit),
      Field("allowedUnsafeSysctls", &S::allowed_unsafe_sysctls, kOmit),
      Field("volumePluginDir", &S::volume_plugin_dir, kOmit),
      Field("providerID", &S::provider_id, kOmit),
      Field("kernelMemcgNotification", &S::kernel_memcg_notification, kOmit),
      Field("logging", &S::logging, 0, "v1.LoggingConfiguration"),
      Field("enableSystemLogHandler", &S::enable_system_log_handler, kPtr),
      Field("enableSystemLogQuery", &S::enable_system_log_query, kPtr),
      Field("shutdownGracePeriod", &S::shutdown_grace_period),
      Field("shutdownGracePeriodCriticalPods", &S::shutdown_grace_period_critical_pods),
      Field("shutdownGracePeriodByPodPriority", &S::shutdown_grace_period_by_pod_priority, kOmit,
            "[]v1beta1.ShutdownGracePeriodByPodPriority"),
      Field("reservedMemory", &S::reserved_memory, kOmit, "[]v1beta1.MemoryReservation"),
      Field("enableProfilingHandler", &S::enable_profiling_handler, kPtr),
      Field("enableDebugFlagsHandler", &S::enable_debug_flags_handler, kPtr),
      Field("seccompDefault", &S::seccomp_default, kPtr),
      Field("memoryThrottlingFactor", &S::memory_throttling_factor, kPtr),
      Field("registerWithTaints", &S::register_with_taints, kOmit, "[]v1.Taint"),
      Field("registerNode", &S::register_node, kPtr),
      Field("tracing", &S::tracing, kOmit | kPtr, "v1.TracingConfiguration"),
      Field("localStorageCapacityIsolation", &S::local_storage_capacity_isolation, kPtr),
      Field("containerRuntimeEndpoint", &S::container_runtime_endpoint),
      Field("imageServiceEndpoint", &S::image_service_endpoint, kOmit));
};

}  // namespace kubelet::api::codec

namespace kubelet::config {

// flushFrequency on the wire: "5s" or a number of nanoseconds, as it was read.
void AppendLeaf(std::string* out, const TimeOrMetaDuration& d);

// The JSON path ("authentication.webhook.enabled") of the field of `c` stored at `member`, the
// innermost one where a struct and its first member share an address; "" when `member` is not
// inside `c`.
std::string ConfigFieldPathAt(const KubeletConfiguration& c, const void* member);

// Whether `path` ("syncFrequency", "authentication.webhook.enabled") names a field of the tables.
bool IsConfigFieldPath(std::string_view path);

}  // namespace kubelet::config

#endif  // KUBELET_CONFIG_KUBELET_CONFIGURATION_FIELDS_H_
