// The v1beta1 wire description of KubeletConfiguration (see kubelet_configuration_schema.h).
// Field order, names, pointer-ness and omitempty follow
// staging/src/k8s.io/kubelet/config/v1beta1/types.go at v1.28, component-base logs/api/v1 and
// tracing/api/v1, and core/v1 Taint.
#include "config/kubelet_configuration_schema.h"

#include <optional>
#include <vector>

#include "config/kubelet_configuration.h"

namespace kubelet::config::schema {
namespace {

template <typename T>
const ListOps* ListOpsFor() {
  static const ListOps ops{
      [](const void* v) { return static_cast<const std::vector<T>*>(v)->size(); },
      [](void* v) { static_cast<std::vector<T>*>(v)->clear(); },
      [](void* v) -> void* { return &static_cast<std::vector<T>*>(v)->emplace_back(); },
      [](const void* v, size_t i) -> const void* {
        return &(*static_cast<const std::vector<T>*>(v))[i];
      }};
  return &ops;
}

template <typename T>
const OptOps* OptOpsFor() {
  static const OptOps ops{[](const void* o) -> const void* {
                            const auto* opt = static_cast<const std::optional<T>*>(o);
                            return opt->has_value() ? &**opt : nullptr;
                          },
                          [](void* o) -> void* {
                            auto* opt = static_cast<std::optional<T>*>(o);
                            if (!opt->has_value()) opt->emplace();
                            return &**opt;
                          },
                          [](void* o) { static_cast<std::optional<T>*>(o)->reset(); }};
  return &ops;
}

Field Sub(Field f, const StructDesc* sub) {
  f.sub = sub;
  return f;
}
Field SubList(Field f, const StructDesc* sub, const ListOps* list) {
  f.sub = sub;
  f.list = list;
  return f;
}
Field SubOpt(Field f, const StructDesc* sub, const OptOps* opt) {
  f.sub = sub;
  f.opt = opt;
  return f;
}

constexpr bool kPtr = true;    // Go *T
constexpr bool kVal = false;   // Go value
constexpr bool kOmit = true;   // omitempty
constexpr bool kKeep = false;  // no omitempty (or a struct, which json never omits)

#define KC_FIELD(T, json, member, kind, ptr, omit, gotype)                                      \
  Field {                                                                                       \
    json, Kind::kind, ptr, omit, gotype,                                                        \
        [](void* o) -> void* { return &static_cast<T*>(o)->member; }, nullptr, nullptr, nullptr \
  }

using KC = KubeletConfiguration;

const StructDesc* BuildAll() {
  static StructDesc x509{"KubeletX509Authentication",
                         {KC_FIELD(KubeletX509Authentication, "clientCAFile", client_ca_file,
                                   kString, kVal, kOmit, "string")}};
  static StructDesc authn_webhook{
      "KubeletWebhookAuthentication",
      {KC_FIELD(KubeletWebhookAuthentication, "enabled", enabled, kBool, kPtr, kOmit, "bool"),
       KC_FIELD(KubeletWebhookAuthentication, "cacheTTL", cache_ttl, kDuration, kVal, kKeep,
                "v1.Duration")}};
  static StructDesc anonymous{
      "KubeletAnonymousAuthentication",
      {KC_FIELD(KubeletAnonymousAuthentication, "enabled", enabled, kBool, kPtr, kOmit, "bool")}};
  static StructDesc authn{"KubeletAuthentication",
                          {Sub(KC_FIELD(KubeletAuthentication, "x509", x509, kStruct, kVal, kKeep,
                                        "v1beta1.KubeletX509Authentication"),
                               &x509),
                           Sub(KC_FIELD(KubeletAuthentication, "webhook", webhook, kStruct, kVal,
                                        kKeep, "v1beta1.KubeletWebhookAuthentication"),
                               &authn_webhook),
                           Sub(KC_FIELD(KubeletAuthentication, "anonymous", anonymous, kStruct,
                                        kVal, kKeep, "v1beta1.KubeletAnonymousAuthentication"),
                               &anonymous)}};
  static StructDesc authz_webhook{
      "KubeletWebhookAuthorization",
      {KC_FIELD(KubeletWebhookAuthorization, "cacheAuthorizedTTL", cache_authorized_ttl, kDuration,
                kVal, kKeep, "v1.Duration"),
       KC_FIELD(KubeletWebhookAuthorization, "cacheUnauthorizedTTL", cache_unauthorized_ttl,
                kDuration, kVal, kKeep, "v1.Duration")}};
  static StructDesc authz{"KubeletAuthorization",
                          {KC_FIELD(KubeletAuthorization, "mode", mode, kString, kVal, kOmit,
                                    "v1beta1.KubeletAuthorizationMode"),
                           Sub(KC_FIELD(KubeletAuthorization, "webhook", webhook, kStruct, kVal,
                                        kKeep, "v1beta1.KubeletWebhookAuthorization"),
                               &authz_webhook)}};
  static StructDesc memory_swap{"MemorySwapConfiguration",
                                {KC_FIELD(MemorySwapConfiguration, "swapBehavior", swap_behavior,
                                          kString, kVal, kOmit, "string")}};
  static StructDesc reservation{
      "MemoryReservation",
      {KC_FIELD(MemoryReservation, "numaNode", numa_node, kInt32, kVal, kKeep, "int32"),
       KC_FIELD(MemoryReservation, "limits", limits, kQuantityMap, kVal, kKeep,
                "v1.ResourceList")}};
  static StructDesc shutdown_priority{
      "ShutdownGracePeriodByPodPriority",
      {KC_FIELD(ShutdownGracePeriodByPodPriority, "priority", priority, kInt32, kVal, kKeep,
                "int32"),
       KC_FIELD(ShutdownGracePeriodByPodPriority, "shutdownGracePeriodSeconds",
                shutdown_grace_period_seconds, kInt64, kVal, kKeep, "int64")}};
  static StructDesc taint{
      "Taint",
      {KC_FIELD(Taint, "key", key, kString, kVal, kKeep, "string"),
       KC_FIELD(Taint, "value", value, kString, kVal, kOmit, "string"),
       KC_FIELD(Taint, "effect", effect, kString, kVal, kKeep, "v1.TaintEffect"),
       KC_FIELD(Taint, "timeAdded", time_added, kTime, kPtr, kOmit, "v1.Time")}};
  static StructDesc vmodule_item{
      "VModuleItem",
      {KC_FIELD(VModuleItem, "filePattern", file_pattern, kString, kVal, kKeep, "string"),
       KC_FIELD(VModuleItem, "verbosity", verbosity, kUint32, kVal, kKeep, "v1.VerbosityLevel")}};
  static StructDesc text_options{
      "TextOptions",
      {KC_FIELD(LoggingOutputRoutingOptions, "splitStream", split_stream, kBool, kVal, kOmit,
                "bool"),
       KC_FIELD(LoggingOutputRoutingOptions, "infoBufferSize", info_buffer_size, kQuantity, kVal,
                kKeep, "resource.QuantityValue")}};
  static StructDesc json_options{"JSONOptions", text_options.fields};
  static StructDesc format_options{
      "FormatOptions",
      {Sub(KC_FIELD(LoggingFormatOptions, "text", text, kStruct, kVal, kKeep, "v1.TextOptions"),
           &text_options),
       Sub(KC_FIELD(LoggingFormatOptions, "json", json, kStruct, kVal, kKeep, "v1.JSONOptions"),
           &json_options)}};
  static StructDesc logging{
      "LoggingConfiguration",
      {KC_FIELD(LoggingConfiguration, "format", format, kString, kVal, kOmit, "string"),
       Field{"flushFrequency", Kind::kFlushFrequency, kVal, kKeep, "v1.TimeOrMetaDuration",
             [](void* o) -> void* { return o; }},
       KC_FIELD(LoggingConfiguration, "verbosity", verbosity, kUint32, kVal, kKeep,
                "v1.VerbosityLevel"),
       SubList(KC_FIELD(LoggingConfiguration, "vmodule", vmodule, kStructList, kVal, kOmit,
                        "v1.VModuleConfiguration"),
               &vmodule_item, ListOpsFor<VModuleItem>()),
       Sub(KC_FIELD(LoggingConfiguration, "options", options, kStruct, kVal, kKeep,
                    "v1.FormatOptions"),
           &format_options)}};
  static StructDesc tracing{
      "TracingConfiguration",
      {KC_FIELD(TracingConfiguration, "endpoint", endpoint, kOptString, kPtr, kOmit, "string"),
       KC_FIELD(TracingConfiguration, "samplingRatePerMillion", sampling_rate_per_million,
                kOptInt32, kPtr, kOmit, "int32")}};

  static StructDesc kc{
      "KubeletConfiguration",
      {
          KC_FIELD(KC, "enableServer", enable_server, kBool, kPtr, kOmit, "bool"),
          KC_FIELD(KC, "staticPodPath", static_pod_path, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "syncFrequency", sync_frequency, kDuration, kVal, kKeep, "v1.Duration"),
          KC_FIELD(KC, "fileCheckFrequency", file_check_frequency, kDuration, kVal, kKeep,
                   "v1.Duration"),
          KC_FIELD(KC, "httpCheckFrequency", http_check_frequency, kDuration, kVal, kKeep,
                   "v1.Duration"),
          KC_FIELD(KC, "staticPodURL", static_pod_url, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "staticPodURLHeader", static_pod_url_header, kStringListMap, kVal, kOmit,
                   "map[string][]string"),
          KC_FIELD(KC, "address", address, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "port", port, kInt32, kVal, kOmit, "int32"),
          KC_FIELD(KC, "readOnlyPort", read_only_port, kInt32, kVal, kOmit, "int32"),
          KC_FIELD(KC, "tlsCertFile", tls_cert_file, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "tlsPrivateKeyFile", tls_private_key_file, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "tlsCipherSuites", tls_cipher_suites, kStringList, kVal, kOmit, "[]string"),
          KC_FIELD(KC, "tlsMinVersion", tls_min_version, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "rotateCertificates", rotate_certificates, kBool, kVal, kOmit, "bool"),
          KC_FIELD(KC, "serverTLSBootstrap", server_tls_bootstrap, kBool, kVal, kOmit, "bool"),
          Sub(KC_FIELD(KC, "authentication", authentication, kStruct, kVal, kKeep,
                       "v1beta1.KubeletAuthentication"),
              &authn),
          Sub(KC_FIELD(KC, "authorization", authorization, kStruct, kVal, kKeep,
                       "v1beta1.KubeletAuthorization"),
              &authz),
          KC_FIELD(KC, "registryPullQPS", registry_pull_qps, kInt32, kPtr, kOmit, "int32"),
          KC_FIELD(KC, "registryBurst", registry_burst, kInt32, kVal, kOmit, "int32"),
          KC_FIELD(KC, "eventRecordQPS", event_record_qps, kInt32, kPtr, kOmit, "int32"),
          KC_FIELD(KC, "eventBurst", event_burst, kInt32, kVal, kOmit, "int32"),
          KC_FIELD(KC, "enableDebuggingHandlers", enable_debugging_handlers, kBool, kPtr, kOmit,
                   "bool"),
          KC_FIELD(KC, "enableContentionProfiling", enable_contention_profiling, kBool, kVal, kOmit,
                   "bool"),
          KC_FIELD(KC, "healthzPort", healthz_port, kInt32, kPtr, kOmit, "int32"),
          KC_FIELD(KC, "healthzBindAddress", healthz_bind_address, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "oomScoreAdj", oom_score_adj, kInt32, kPtr, kOmit, "int32"),
          KC_FIELD(KC, "clusterDomain", cluster_domain, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "clusterDNS", cluster_dns, kStringList, kVal, kOmit, "[]string"),
          KC_FIELD(KC, "streamingConnectionIdleTimeout", streaming_connection_idle_timeout,
                   kDuration, kVal, kKeep, "v1.Duration"),
          KC_FIELD(KC, "nodeStatusUpdateFrequency", node_status_update_frequency, kDuration, kVal,
                   kKeep, "v1.Duration"),
          KC_FIELD(KC, "nodeStatusReportFrequency", node_status_report_frequency, kDuration, kVal,
                   kKeep, "v1.Duration"),
          KC_FIELD(KC, "nodeLeaseDurationSeconds", node_lease_duration_seconds, kInt32, kVal, kOmit,
                   "int32"),
          KC_FIELD(KC, "imageMinimumGCAge", image_minimum_gc_age, kDuration, kVal, kKeep,
                   "v1.Duration"),
          KC_FIELD(KC, "imageGCHighThresholdPercent", image_gc_high_threshold_percent, kInt32, kPtr,
                   kOmit, "int32"),
          KC_FIELD(KC, "imageGCLowThresholdPercent", image_gc_low_threshold_percent, kInt32, kPtr,
                   kOmit, "int32"),
          KC_FIELD(KC, "volumeStatsAggPeriod", volume_stats_agg_period, kDuration, kVal, kKeep,
                   "v1.Duration"),
          KC_FIELD(KC, "kubeletCgroups", kubelet_cgroups, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "systemCgroups", system_cgroups, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "cgroupRoot", cgroup_root, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "cgroupsPerQOS", cgroups_per_qos, kBool, kPtr, kOmit, "bool"),
          KC_FIELD(KC, "cgroupDriver", cgroup_driver, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "cpuManagerPolicy", cpu_manager_policy, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "cpuManagerPolicyOptions", cpu_manager_policy_options, kStringMap, kVal,
                   kOmit, "map[string]string"),
          KC_FIELD(KC, "cpuManagerReconcilePeriod", cpu_manager_reconcile_period, kDuration, kVal,
                   kKeep, "v1.Duration"),
          KC_FIELD(KC, "memoryManagerPolicy", memory_manager_policy, kString, kVal, kOmit,
                   "string"),
          KC_FIELD(KC, "topologyManagerPolicy", topology_manager_policy, kString, kVal, kOmit,
                   "string"),
          KC_FIELD(KC, "topologyManagerScope", topology_manager_scope, kString, kVal, kOmit,
                   "string"),
          KC_FIELD(KC, "topologyManagerPolicyOptions", topology_manager_policy_options, kStringMap,
                   kVal, kOmit, "map[string]string"),
          KC_FIELD(KC, "qosReserved", qos_reserved, kStringMap, kVal, kOmit, "map[string]string"),
          KC_FIELD(KC, "runtimeRequestTimeout", runtime_request_timeout, kDuration, kVal, kKeep,
                   "v1.Duration"),
          KC_FIELD(KC, "hairpinMode", hairpin_mode, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "maxPods", max_pods, kInt32, kVal, kOmit, "int32"),
          KC_FIELD(KC, "podCIDR", pod_cidr, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "podPidsLimit", pod_pids_limit, kInt64, kPtr, kOmit, "int64"),
          KC_FIELD(KC, "resolvConf", resolv_conf, kString, kPtr, kOmit, "string"),
          KC_FIELD(KC, "runOnce", run_once, kBool, kVal, kOmit, "bool"),
          KC_FIELD(KC, "cpuCFSQuota", cpu_cfs_quota, kBool, kPtr, kOmit, "bool"),
          KC_FIELD(KC, "cpuCFSQuotaPeriod", cpu_cfs_quota_period, kDuration, kPtr, kOmit,
                   "v1.Duration"),
          KC_FIELD(KC, "nodeStatusMaxImages", node_status_max_images, kInt32, kPtr, kOmit, "int32"),
          KC_FIELD(KC, "maxOpenFiles", max_open_files, kInt64, kVal, kOmit, "int64"),
          KC_FIELD(KC, "contentType", content_type, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "kubeAPIQPS", kube_api_qps, kInt32, kPtr, kOmit, "int32"),
          KC_FIELD(KC, "kubeAPIBurst", kube_api_burst, kInt32, kVal, kOmit, "int32"),
          KC_FIELD(KC, "serializeImagePulls", serialize_image_pulls, kBool, kPtr, kOmit, "bool"),
          KC_FIELD(KC, "maxParallelImagePulls", max_parallel_image_pulls, kOptInt32, kPtr, kOmit,
                   "int32"),
          KC_FIELD(KC, "evictionHard", eviction_hard, kStringMap, kVal, kOmit, "map[string]string"),
          KC_FIELD(KC, "evictionSoft", eviction_soft, kStringMap, kVal, kOmit, "map[string]string"),
          KC_FIELD(KC, "evictionSoftGracePeriod", eviction_soft_grace_period, kStringMap, kVal,
                   kOmit, "map[string]string"),
          KC_FIELD(KC, "evictionPressureTransitionPeriod", eviction_pressure_transition_period,
                   kDuration, kVal, kKeep, "v1.Duration"),
          KC_FIELD(KC, "evictionMaxPodGracePeriod", eviction_max_pod_grace_period, kInt32, kVal,
                   kOmit, "int32"),
          KC_FIELD(KC, "evictionMinimumReclaim", eviction_minimum_reclaim, kStringMap, kVal, kOmit,
                   "map[string]string"),
          KC_FIELD(KC, "podsPerCore", pods_per_core, kInt32, kVal, kOmit, "int32"),
          KC_FIELD(KC, "enableControllerAttachDetach", enable_controller_attach_detach, kBool, kPtr,
                   kOmit, "bool"),
          KC_FIELD(KC, "protectKernelDefaults", protect_kernel_defaults, kBool, kVal, kOmit,
                   "bool"),
          KC_FIELD(KC, "makeIPTablesUtilChains", make_iptables_util_chains, kBool, kPtr, kOmit,
                   "bool"),
          KC_FIELD(KC, "iptablesMasqueradeBit", iptables_masquerade_bit, kInt32, kPtr, kOmit,
                   "int32"),
          KC_FIELD(KC, "iptablesDropBit", iptables_drop_bit, kInt32, kPtr, kOmit, "int32"),
          KC_FIELD(KC, "featureGates", feature_gates, kBoolMap, kVal, kOmit, "map[string]bool"),
          KC_FIELD(KC, "failSwapOn", fail_swap_on, kBool, kPtr, kOmit, "bool"),
          Sub(KC_FIELD(KC, "memorySwap", memory_swap, kStruct, kVal, kKeep,
                       "v1beta1.MemorySwapConfiguration"),
              &memory_swap),
          KC_FIELD(KC, "containerLogMaxSize", container_log_max_size, kString, kVal, kOmit,
                   "string"),
          KC_FIELD(KC, "containerLogMaxFiles", container_log_max_files, kInt32, kPtr, kOmit,
                   "int32"),
          KC_FIELD(KC, "configMapAndSecretChangeDetectionStrategy",
                   config_map_and_secret_change_detection_strategy, kString, kVal, kOmit,
                   "v1beta1.ResourceChangeDetectionStrategy"),
          KC_FIELD(KC, "systemReserved", system_reserved, kStringMap, kVal, kOmit,
                   "map[string]string"),
          KC_FIELD(KC, "kubeReserved", kube_reserved, kStringMap, kVal, kOmit, "map[string]string"),
          KC_FIELD(KC, "reservedSystemCPUs", reserved_system_cpus, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "showHiddenMetricsForVersion", show_hidden_metrics_for_version, kString,
                   kVal, kOmit, "string"),
          KC_FIELD(KC, "systemReservedCgroup", system_reserved_cgroup, kString, kVal, kOmit,
                   "string"),
          KC_FIELD(KC, "kubeReservedCgroup", kube_reserved_cgroup, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "enforceNodeAllocatable", enforce_node_allocatable, kStringList, kVal, kOmit,
                   "[]string"),
          KC_FIELD(KC, "allowedUnsafeSysctls", allowed_unsafe_sysctls, kStringList, kVal, kOmit,
                   "[]string"),
          KC_FIELD(KC, "volumePluginDir", volume_plugin_dir, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "providerID", provider_id, kString, kVal, kOmit, "string"),
          KC_FIELD(KC, "kernelMemcgNotification", kernel_memcg_notification, kBool, kVal, kOmit,
                   "bool"),
          Sub(KC_FIELD(KC, "logging", logging, kStruct, kVal, kKeep, "v1.LoggingConfiguration"),
              &logging),
          KC_FIELD(KC, "enableSystemLogHandler", enable_system_log_handler, kBool, kPtr, kOmit,
                   "bool"),
          KC_FIELD(KC, "enableSystemLogQuery", enable_system_log_query, kBool, kPtr, kOmit, "bool"),
          KC_FIELD(KC, "shutdownGracePeriod", shutdown_grace_period, kDuration, kVal, kKeep,
                   "v1.Duration"),
          KC_FIELD(KC, "shutdownGracePeriodCriticalPods", shutdown_grace_period_critical_pods,
                   kDuration, kVal, kKeep, "v1.Duration"),
          SubList(KC_FIELD(KC, "shutdownGracePeriodByPodPriority",
                           shutdown_grace_period_by_pod_priority, kStructList, kVal, kOmit,
                           "[]v1beta1.ShutdownGracePeriodByPodPriority"),
                  &shutdown_priority, ListOpsFor<ShutdownGracePeriodByPodPriority>()),
          SubList(KC_FIELD(KC, "reservedMemory", reserved_memory, kStructList, kVal, kOmit,
                           "[]v1beta1.MemoryReservation"),
                  &reservation, ListOpsFor<MemoryReservation>()),
          KC_FIELD(KC, "enableProfilingHandler", enable_profiling_handler, kBool, kPtr, kOmit,
                   "bool"),
          KC_FIELD(KC, "enableDebugFlagsHandler", enable_debug_flags_handler, kBool, kPtr, kOmit,
                   "bool"),
          KC_FIELD(KC, "seccompDefault", seccomp_default, kBool, kPtr, kOmit, "bool"),
          KC_FIELD(KC, "memoryThrottlingFactor", memory_throttling_factor, kDouble, kPtr, kOmit,
                   "float64"),
          SubList(KC_FIELD(KC, "registerWithTaints", register_with_taints, kStructList, kVal, kOmit,
                           "[]v1.Taint"),
                  &taint, ListOpsFor<Taint>()),
          KC_FIELD(KC, "registerNode", register_node, kBool, kPtr, kOmit, "bool"),
          SubOpt(
              KC_FIELD(KC, "tracing", tracing, kOptStruct, kPtr, kOmit, "v1.TracingConfiguration"),
              &tracing, OptOpsFor<TracingConfiguration>()),
          KC_FIELD(KC, "localStorageCapacityIsolation", local_storage_capacity_isolation, kBool,
                   kPtr, kOmit, "bool"),
          KC_FIELD(KC, "containerRuntimeEndpoint", container_runtime_endpoint, kString, kVal, kKeep,
                   "string"),
          KC_FIELD(KC, "imageServiceEndpoint", image_service_endpoint, kString, kVal, kOmit,
                   "string"),
      }};
  return &kc;
}

#undef KC_FIELD

}  // namespace

const StructDesc& KubeletConfigurationDesc() {
  static const StructDesc* desc = BuildAll();
  return *desc;
}

}  // namespace kubelet::config::schema
