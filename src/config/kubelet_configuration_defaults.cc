// Defaulting of KubeletConfiguration: SetDefaults_KubeletConfiguration from
// pkg/kubelet/apis/config/v1beta1/defaults.go (v1.28), logsapi.SetRecommendedLoggingConfiguration,
// options.applyLegacyDefaults and the Linux eviction defaults.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "config/kubelet_configuration.h"

namespace kubelet::config {

void SetDefaults(KubeletConfiguration* c, const std::vector<std::string>& set_fields) {
  const std::set<std::string> set(set_fields.begin(), set_fields.end());
  // A Go pointer field is nil unless it was given a (non-null) value.
  auto nil = [&set](const char* path) { return set.count(path) == 0; };
  const absl::Duration zero = absl::ZeroDuration();

  if (nil("enableServer")) c->enable_server = true;
  if (c->sync_frequency == zero) c->sync_frequency = absl::Minutes(1);
  if (c->file_check_frequency == zero) c->file_check_frequency = absl::Seconds(20);
  if (c->http_check_frequency == zero) c->http_check_frequency = absl::Seconds(20);
  if (c->address.empty()) c->address = "0.0.0.0";
  if (c->port == 0) c->port = 10250;  // ports.KubeletPort
  if (nil("authentication.anonymous.enabled")) c->authentication.anonymous.enabled = false;
  if (nil("authentication.webhook.enabled")) c->authentication.webhook.enabled = true;
  if (c->authentication.webhook.cache_ttl == zero) {
    c->authentication.webhook.cache_ttl = absl::Minutes(2);
  }
  if (c->authorization.mode.empty()) c->authorization.mode = "Webhook";
  if (c->authorization.webhook.cache_authorized_ttl == zero) {
    c->authorization.webhook.cache_authorized_ttl = absl::Minutes(5);
  }
  if (c->authorization.webhook.cache_unauthorized_ttl == zero) {
    c->authorization.webhook.cache_unauthorized_ttl = absl::Seconds(30);
  }
  if (nil("registryPullQPS")) c->registry_pull_qps = 5;
  if (c->registry_burst == 0) c->registry_burst = 10;
  if (nil("eventRecordQPS")) c->event_record_qps = 50;
  if (c->event_burst == 0) c->event_burst = 100;
  if (nil("enableDebuggingHandlers")) c->enable_debugging_handlers = true;
  if (nil("healthzPort")) c->healthz_port = 10248;
  if (c->healthz_bind_address.empty()) c->healthz_bind_address = "127.0.0.1";
  if (nil("oomScoreAdj")) c->oom_score_adj = -999;  // qos.KubeletOOMScoreAdj
  if (c->streaming_connection_idle_timeout == zero) {
    c->streaming_connection_idle_timeout = absl::Hours(4);
  }
  if (c->node_status_report_frequency == zero) {
    // For backward compatibility the report frequency follows an explicitly set update
    // frequency.
    c->node_status_report_frequency = c->node_status_update_frequency == zero
                                          ? absl::Minutes(5)
                                          : c->node_status_update_frequency;
  }
  if (c->node_status_update_frequency == zero) {
    c->node_status_update_frequency = absl::Seconds(10);
  }
  if (c->node_lease_duration_seconds == 0) c->node_lease_duration_seconds = 40;
  if (c->image_minimum_gc_age == zero) c->image_minimum_gc_age = absl::Minutes(2);
  if (nil("imageGCHighThresholdPercent")) c->image_gc_high_threshold_percent = 85;
  if (nil("imageGCLowThresholdPercent")) c->image_gc_low_threshold_percent = 80;
  if (c->volume_stats_agg_period == zero) c->volume_stats_agg_period = absl::Minutes(1);
  if (nil("cgroupsPerQOS")) c->cgroups_per_qos = true;
  if (c->cgroup_driver.empty()) c->cgroup_driver = "cgroupfs";
  if (c->cpu_manager_policy.empty()) c->cpu_manager_policy = "none";
  if (c->cpu_manager_reconcile_period == zero) {
    c->cpu_manager_reconcile_period = absl::Seconds(10);
  }
  if (c->memory_manager_policy.empty()) c->memory_manager_policy = "None";
  if (c->topology_manager_policy.empty()) c->topology_manager_policy = "none";
  if (c->topology_manager_scope.empty()) c->topology_manager_scope = "container";
  if (c->runtime_request_timeout == zero) c->runtime_request_timeout = absl::Minutes(2);
  if (c->hairpin_mode.empty()) c->hairpin_mode = "promiscuous-bridge";
  if (c->max_pods == 0) c->max_pods = 110;
  // nil or negative -> -1 (the node allocatable pid limit).
  if (nil("podPidsLimit") || c->pod_pids_limit < 0) c->pod_pids_limit = -1;
  if (nil("resolvConf")) c->resolv_conf = "/etc/resolv.conf";  // kubetypes.ResolvConfDefault
  if (nil("cpuCFSQuota")) c->cpu_cfs_quota = true;
  if (nil("cpuCFSQuotaPeriod")) c->cpu_cfs_quota_period = absl::Milliseconds(100);
  if (nil("nodeStatusMaxImages")) c->node_status_max_images = 50;
  if (c->max_open_files == 0) c->max_open_files = 1000000;
  if (c->content_type.empty()) c->content_type = "application/vnd.kubernetes.protobuf";
  if (nil("kubeAPIQPS")) c->kube_api_qps = 50;
  if (c->kube_api_burst == 0) c->kube_api_burst = 100;
  if (nil("serializeImagePulls")) {
    // Serialized unless parallel pulls (>= 2) were asked for.
    c->serialize_image_pulls =
        !c->max_parallel_image_pulls.has_value() || *c->max_parallel_image_pulls < 2;
  }
  if (c->eviction_pressure_transition_period == zero) {
    c->eviction_pressure_transition_period = absl::Minutes(5);
  }
  if (nil("enableControllerAttachDetach")) c->enable_controller_attach_detach = true;
  if (nil("makeIPTablesUtilChains")) c->make_iptables_util_chains = true;
  if (nil("iptablesMasqueradeBit")) c->iptables_masquerade_bit = 14;
  if (nil("iptablesDropBit")) c->iptables_drop_bit = 15;
  if (nil("failSwapOn")) c->fail_swap_on = true;
  if (c->container_log_max_size.empty()) c->container_log_max_size = "10Mi";
  if (nil("containerLogMaxFiles")) c->container_log_max_files = 5;
  if (c->config_map_and_secret_change_detection_strategy.empty()) {
    c->config_map_and_secret_change_detection_strategy = "Watch";
  }
  if (nil("enforceNodeAllocatable")) c->enforce_node_allocatable = {"pods"};
  if (c->volume_plugin_dir.empty()) {
    c->volume_plugin_dir = "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/";
  }
  // logsapi.SetRecommendedLoggingConfiguration.
  if (c->logging.format.empty()) c->logging.format = "text";
  if (c->logging.flush_frequency.duration == zero) {
    c->logging.flush_frequency = {absl::Seconds(5), /*as_string=*/true};  // LogFlushFreqDefault
  }
  // infoBufferSize defaults to a zero quantity, which is what an unset api::Quantity is.
  if (nil("enableSystemLogHandler")) c->enable_system_log_handler = true;
  if (nil("enableSystemLogQuery")) c->enable_system_log_query = false;  // nil -> false
  if (nil("enableProfilingHandler")) c->enable_profiling_handler = true;
  if (nil("enableDebugFlagsHandler")) c->enable_debug_flags_handler = true;
  if (nil("seccompDefault")) c->seccomp_default = false;
  if (nil("memoryThrottlingFactor")) c->memory_throttling_factor = 0.9;
  if (nil("registerNode")) c->register_node = true;
  if (nil("localStorageCapacityIsolation")) c->local_storage_capacity_isolation = true;
  if (c->container_runtime_endpoint.empty()) {
    c->container_runtime_endpoint = "unix:///run/containerd/containerd.sock";
  }
}

void ApplyLegacyDefaults(KubeletConfiguration* c) {
  c->authentication.anonymous.enabled = true;  // --anonymous-auth
  c->authentication.webhook.enabled = false;   // --authentication-token-webhook
  c->authorization.mode = "AlwaysAllow";       // --authorization-mode
  c->read_only_port = 10255;                   // --read-only-port (ports.KubeletReadOnlyPort)
}

const std::map<std::string, std::string>& DefaultEvictionHard() {
  static const auto* m = new std::map<std::string, std::string>{
      {"memory.available", "100Mi"},
      {"nodefs.available", "10%"},
      {"nodefs.inodesFree", "5%"},
      {"imagefs.available", "15%"},
  };
  return *m;
}

KubeletConfiguration DefaultKubeletConfiguration() {
  KubeletConfiguration c;
  SetDefaults(&c);
  ApplyLegacyDefaults(&c);
  c.eviction_hard = DefaultEvictionHard();
  return c;
}

}  // namespace kubelet::config
