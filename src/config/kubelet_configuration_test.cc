#include "config/kubelet_configuration.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/time/time.h"
#include "common/log.h"
#include "config/kubelet_configuration_fields.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

constexpr char kHeader[] =
    "apiVersion: kubelet.config.k8s.io/v1beta1\n"
    "kind: KubeletConfiguration\n";

DecodeOptions Quiet() {
  DecodeOptions o;
  o.log_lenient_fallback = false;
  return o;
}

absl::StatusOr<LoadedConfig> DecodeYaml(const std::string& body,
                                        const DecodeOptions& options = Quiet()) {
  return DecodeKubeletConfiguration(std::string(kHeader) + body, "/etc/kubernetes/kubelet.yaml",
                                    options);
}

std::string ErrorOf(const std::string& body, const DecodeOptions& options = Quiet()) {
  auto r = DecodeYaml(body, options);
  if (r.ok()) return "<ok>";
  return std::string(r.status().message());
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/kcfgtestXXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf " + path_).c_str()); }
  std::string Write(const std::string& name, const std::string& content) {
    std::string p = path_ + "/" + name;
    std::ofstream(p) << content;
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// ---------------------------------------------------------------------------------------------
// Defaults.

TEST(KubeletConfigurationDefaults, MatchUpstreamV1beta1Defaults) {
  KubeletConfiguration c;
  SetDefaults(&c);
  EXPECT_TRUE(c.enable_server);
  EXPECT_EQ(c.sync_frequency, absl::Minutes(1));
  EXPECT_EQ(c.file_check_frequency, absl::Seconds(20));
  EXPECT_EQ(c.http_check_frequency, absl::Seconds(20));
  EXPECT_EQ(c.address, "0.0.0.0");
  EXPECT_EQ(c.port, 10250);
  EXPECT_EQ(c.read_only_port, 0);
  EXPECT_FALSE(c.authentication.anonymous.enabled);
  EXPECT_TRUE(c.authentication.webhook.enabled);
  EXPECT_EQ(c.authentication.webhook.cache_ttl, absl::Minutes(2));
  EXPECT_EQ(c.authorization.mode, "Webhook");
  EXPECT_EQ(c.authorization.webhook.cache_authorized_ttl, absl::Minutes(5));
  EXPECT_EQ(c.authorization.webhook.cache_unauthorized_ttl, absl::Seconds(30));
  EXPECT_EQ(c.registry_pull_qps, 5);
  EXPECT_EQ(c.registry_burst, 10);
  EXPECT_EQ(c.event_record_qps, 50);
  EXPECT_EQ(c.event_burst, 100);
  EXPECT_TRUE(c.enable_debugging_handlers);
  EXPECT_EQ(c.healthz_port, 10248);
  EXPECT_EQ(c.healthz_bind_address, "127.0.0.1");
  EXPECT_EQ(c.oom_score_adj, -999);
  EXPECT_EQ(c.cluster_domain, "");
  EXPECT_EQ(c.streaming_connection_idle_timeout, absl::Hours(4));
  EXPECT_EQ(c.node_status_update_frequency, absl::Seconds(10));
  EXPECT_EQ(c.node_status_report_frequency, absl::Minutes(5));
  EXPECT_EQ(c.node_lease_duration_seconds, 40);
  EXPECT_EQ(c.image_minimum_gc_age, absl::Minutes(2));
  EXPECT_EQ(c.image_gc_high_threshold_percent, 85);
  EXPECT_EQ(c.image_gc_low_threshold_percent, 80);
  EXPECT_EQ(c.volume_stats_agg_period, absl::Minutes(1));
  EXPECT_TRUE(c.cgroups_per_qos);
  EXPECT_EQ(c.cgroup_driver, "cgroupfs");
  EXPECT_EQ(c.cpu_manager_policy, "none");
  EXPECT_EQ(c.cpu_manager_reconcile_period, absl::Seconds(10));
  EXPECT_EQ(c.memory_manager_policy, "None");
  EXPECT_EQ(c.topology_manager_policy, "none");
  EXPECT_EQ(c.topology_manager_scope, "container");
  EXPECT_EQ(c.runtime_request_timeout, absl::Minutes(2));
  EXPECT_EQ(c.hairpin_mode, "promiscuous-bridge");
  EXPECT_EQ(c.max_pods, 110);
  EXPECT_EQ(c.pod_pids_limit, -1);
  EXPECT_EQ(c.resolv_conf, "/etc/resolv.conf");
  EXPECT_TRUE(c.cpu_cfs_quota);
  EXPECT_EQ(c.cpu_cfs_quota_period, absl::Milliseconds(100));
  EXPECT_EQ(c.node_status_max_images, 50);
  EXPECT_EQ(c.max_open_files, 1000000);
  EXPECT_EQ(c.content_type, "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(c.kube_api_qps, 50);
  EXPECT_EQ(c.kube_api_burst, 100);
  EXPECT_TRUE(c.serialize_image_pulls);
  EXPECT_FALSE(c.max_parallel_image_pulls.has_value());
  EXPECT_THAT(c.eviction_hard, IsEmpty());  // applied by the file loader, not the defaulter
  EXPECT_EQ(c.eviction_pressure_transition_period, absl::Minutes(5));
  EXPECT_TRUE(c.enable_controller_attach_detach);
  EXPECT_TRUE(c.make_iptables_util_chains);
  EXPECT_EQ(c.iptables_masquerade_bit, 14);
  EXPECT_EQ(c.iptables_drop_bit, 15);
  EXPECT_TRUE(c.fail_swap_on);
  EXPECT_EQ(c.container_log_max_size, "10Mi");
  EXPECT_EQ(c.container_log_max_files, 5);
  EXPECT_EQ(c.config_map_and_secret_change_detection_strategy, "Watch");
  EXPECT_THAT(c.enforce_node_allocatable, ElementsAre("pods"));
  EXPECT_EQ(c.volume_plugin_dir, "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/");
  EXPECT_EQ(c.logging.format, "text");
  EXPECT_EQ(c.logging.flush_frequency.duration, absl::Seconds(5));
  EXPECT_TRUE(c.logging.flush_frequency.as_string);
  EXPECT_EQ(c.logging.verbosity, 0u);
  EXPECT_TRUE(c.logging.options.json.info_buffer_size.IsZero());
  EXPECT_TRUE(c.enable_system_log_handler);
  EXPECT_FALSE(c.enable_system_log_query);
  EXPECT_TRUE(c.enable_profiling_handler);
  EXPECT_TRUE(c.enable_debug_flags_handler);
  EXPECT_FALSE(c.seccomp_default);
  EXPECT_DOUBLE_EQ(c.memory_throttling_factor, 0.9);
  EXPECT_TRUE(c.register_node);
  EXPECT_FALSE(c.tracing.has_value());
  EXPECT_TRUE(c.local_storage_capacity_isolation);
  EXPECT_EQ(c.container_runtime_endpoint, "unix:///run/containerd/containerd.sock");
  EXPECT_EQ(c.image_service_endpoint, "");
}

TEST(KubeletConfigurationDefaults, DefaultKubeletConfigurationHasLegacyFlagDefaults) {
  KubeletConfiguration c = DefaultKubeletConfiguration();
  EXPECT_TRUE(c.authentication.anonymous.enabled);
  EXPECT_FALSE(c.authentication.webhook.enabled);
  EXPECT_EQ(c.authorization.mode, "AlwaysAllow");
  EXPECT_EQ(c.read_only_port, 10255);
  EXPECT_EQ(c.eviction_hard, DefaultEvictionHard());
  EXPECT_EQ(c.eviction_hard.at("memory.available"), "100Mi");
  EXPECT_EQ(c.eviction_hard.at("nodefs.available"), "10%");
  EXPECT_EQ(c.eviction_hard.at("nodefs.inodesFree"), "5%");
  EXPECT_EQ(c.eviction_hard.at("imagefs.available"), "15%");
  EXPECT_EQ(c.eviction_hard.size(), 4u);
  EXPECT_EQ(c.port, 10250);
}

TEST(KubeletConfigurationDefaults, MinimalFileGetsFileDefaults) {
  auto r = DecodeYaml("");
  ASSERT_TRUE(r.ok()) << r.status();
  KubeletConfiguration want;
  SetDefaults(&want);
  want.eviction_hard = DefaultEvictionHard();
  EXPECT_EQ(r->config, want);
  EXPECT_THAT(r->fields_set, IsEmpty());
  EXPECT_EQ(r->strict_decoding_error, "");
  // Not the legacy flag defaults.
  EXPECT_FALSE(r->config.authentication.anonymous.enabled);
  EXPECT_EQ(r->config.read_only_port, 0);
}

TEST(KubeletConfigurationDefaults, PointerFieldsKeepExplicitZero) {
  auto r = DecodeYaml(
      "enableServer: false\n"
      "registryPullQPS: 0\n"
      "eventRecordQPS: 0\n"
      "healthzPort: 0\n"
      "oomScoreAdj: 0\n"
      "imageGCHighThresholdPercent: 0\n"
      "cgroupsPerQOS: false\n"
      "resolvConf: \"\"\n"
      "cpuCFSQuota: false\n"
      "nodeStatusMaxImages: 0\n"
      "kubeAPIQPS: 0\n"
      "serializeImagePulls: false\n"
      "failSwapOn: false\n"
      "containerLogMaxFiles: 0\n"
      "memoryThrottlingFactor: 0\n"
      "registerNode: false\n"
      "localStorageCapacityIsolation: false\n"
      "enforceNodeAllocatable: []\n"
      "evictionHard: {}\n"
      "authentication:\n"
      "  webhook:\n"
      "    enabled: false\n");
  ASSERT_TRUE(r.ok()) << r.status();
  const KubeletConfiguration& c = r->config;
  EXPECT_FALSE(c.enable_server);
  EXPECT_EQ(c.registry_pull_qps, 0);
  EXPECT_EQ(c.event_record_qps, 0);
  EXPECT_EQ(c.healthz_port, 0);
  EXPECT_EQ(c.oom_score_adj, 0);
  EXPECT_EQ(c.image_gc_high_threshold_percent, 0);
  EXPECT_EQ(c.image_gc_low_threshold_percent, 80);
  EXPECT_FALSE(c.cgroups_per_qos);
  EXPECT_EQ(c.resolv_conf, "");
  EXPECT_FALSE(c.cpu_cfs_quota);
  EXPECT_EQ(c.node_status_max_images, 0);
  EXPECT_EQ(c.kube_api_qps, 0);
  EXPECT_FALSE(c.serialize_image_pulls);
  EXPECT_FALSE(c.fail_swap_on);
  EXPECT_EQ(c.container_log_max_files, 0);
  EXPECT_EQ(c.memory_throttling_factor, 0);
  EXPECT_FALSE(c.register_node);
  EXPECT_FALSE(c.local_storage_capacity_isolation);
  EXPECT_THAT(c.enforce_node_allocatable, IsEmpty());
  EXPECT_THAT(c.eviction_hard, IsEmpty());
  EXPECT_FALSE(c.authentication.webhook.enabled);
}

TEST(KubeletConfigurationDefaults, NonPointerZeroValuesAreDefaulted) {
  auto r = DecodeYaml(
      "syncFrequency: 0s\n"
      "port: 0\n"
      "registryBurst: 0\n"
      "maxPods: 0\n"
      "address: \"\"\n"
      "cgroupDriver: \"\"\n"
      "authentication:\n"
      "  webhook:\n"
      "    cacheTTL: 0s\n"
      "logging:\n"
      "  format: \"\"\n"
      "  flushFrequency: 0\n");
  ASSERT_TRUE(r.ok()) << r.status();
  const KubeletConfiguration& c = r->config;
  EXPECT_EQ(c.sync_frequency, absl::Minutes(1));
  EXPECT_EQ(c.port, 10250);
  EXPECT_EQ(c.registry_burst, 10);
  EXPECT_EQ(c.max_pods, 110);
  EXPECT_EQ(c.address, "0.0.0.0");
  EXPECT_EQ(c.cgroup_driver, "cgroupfs");
  EXPECT_EQ(c.authentication.webhook.cache_ttl, absl::Minutes(2));
  EXPECT_EQ(c.logging.format, "text");
  EXPECT_EQ(c.logging.flush_frequency.duration, absl::Seconds(5));
  EXPECT_TRUE(c.logging.flush_frequency.as_string);
}

TEST(KubeletConfigurationDefaults, NullMeansUnset) {
  auto r = DecodeYaml(
      "enableServer: null\n"
      "healthzPort: ~\n"
      "evictionHard: null\n"
      "enforceNodeAllocatable:\n"
      "cpuCFSQuotaPeriod: null\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->config.enable_server);
  EXPECT_EQ(r->config.healthz_port, 10248);
  EXPECT_EQ(r->config.eviction_hard, DefaultEvictionHard());
  EXPECT_THAT(r->config.enforce_node_allocatable, ElementsAre("pods"));
  EXPECT_EQ(r->config.cpu_cfs_quota_period, absl::Milliseconds(100));
  EXPECT_THAT(r->fields_set, IsEmpty());
}

TEST(KubeletConfigurationDefaults, EvictionHardIsNotMergedWithDefaults) {
  auto r = DecodeYaml("evictionHard:\n  memory.available: 200Mi\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->config.eviction_hard,
            (std::map<std::string, std::string>{{"memory.available", "200Mi"}}));
}

TEST(KubeletConfigurationDefaults, DependentDefaults) {
  auto r = DecodeYaml("nodeStatusUpdateFrequency: 20s\nmaxParallelImagePulls: 5\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->config.node_status_update_frequency, absl::Seconds(20));
  EXPECT_EQ(r->config.node_status_report_frequency, absl::Seconds(20));
  EXPECT_EQ(r->config.max_parallel_image_pulls, 5);
  EXPECT_FALSE(r->config.serialize_image_pulls);

  r = DecodeYaml("maxParallelImagePulls: 1\npodPidsLimit: -7\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->config.serialize_image_pulls);
  EXPECT_EQ(r->config.pod_pids_limit, -1);

  r = DecodeYaml("podPidsLimit: 4096\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->config.pod_pids_limit, 4096);
}

TEST(KubeletConfigurationDefaults, SetDefaultsHonoursSetFields) {
  KubeletConfiguration c;
  c.enable_server = false;
  c.oom_score_adj = 0;
  SetDefaults(&c, {"enableServer", "oomScoreAdj"});
  EXPECT_FALSE(c.enable_server);
  EXPECT_EQ(c.oom_score_adj, 0);
  EXPECT_TRUE(c.cgroups_per_qos);
}

// ---------------------------------------------------------------------------------------------
// Decoding.

constexpr char kFullYaml[] = R"(apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
enableServer: true
staticPodPath: /etc/kubernetes/manifests
syncFrequency: 1m30s
staticPodURLHeader:
  Authorization: ["Bearer x", "y"]
address: 10.0.0.1
port: 10251
readOnlyPort: 10255
tlsCipherSuites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]
rotateCertificates: true
authentication:
  x509:
    clientCAFile: /etc/kubernetes/pki/ca.crt
  webhook:
    enabled: true
    cacheTTL: 30s
  anonymous:
    enabled: false
authorization:
  mode: Webhook
  webhook:
    cacheAuthorizedTTL: 1m
    cacheUnauthorizedTTL: 10s
clusterDomain: cluster.local
clusterDNS:
  - 10.96.0.10
cgroupDriver: systemd
cpuManagerPolicy: static
cpuManagerPolicyOptions:
  full-pcpus-only: "true"
qosReserved:
  memory: 50%
maxPods: 250
podPidsLimit: 4096
evictionHard:
  memory.available: 200Mi
evictionSoft:
  memory.available: 300Mi
evictionSoftGracePeriod:
  memory.available: 1m
evictionMinimumReclaim:
  imagefs.available: 2Gi
featureGates:
  NodeSwap: true
  GracefulNodeShutdown: false
memorySwap:
  swapBehavior: LimitedSwap
systemReserved:
  cpu: 500m
kubeReserved:
  memory: 1Gi
enforceNodeAllocatable: [pods, kube-reserved]
allowedUnsafeSysctls: ["net.core.somaxconn"]
logging:
  format: json
  flushFrequency: 1000000000
  verbosity: 4
  vmodule:
    - filePattern: "kubelet*"
      verbosity: 5
  options:
    json:
      splitStream: true
      infoBufferSize: 1Ki
shutdownGracePeriodByPodPriority:
  - priority: 2000000000
    shutdownGracePeriodSeconds: 10
  - priority: 0
    shutdownGracePeriodSeconds: 30
reservedMemory:
  - numaNode: 0
    limits:
      memory: 1Gi
registerWithTaints:
  - key: dedicated
    value: infra
    effect: NoSchedule
  - key: k2
    effect: NoExecute
    timeAdded: "2023-08-15T10:20:30Z"
tracing:
  endpoint: localhost:4317
  samplingRatePerMillion: 100
maxParallelImagePulls: 3
serializeImagePulls: false
memoryThrottlingFactor: 0.8
containerRuntimeEndpoint: unix:///run/crio/crio.sock
imageServiceEndpoint: unix:///run/crio/img.sock
)";

TEST(KubeletConfigurationDecode, FullYaml) {
  auto r = DecodeKubeletConfiguration(kFullYaml, "/etc/k/kubelet.yaml", Quiet());
  ASSERT_TRUE(r.ok()) << r.status();
  const KubeletConfiguration& c = r->config;
  EXPECT_EQ(r->strict_decoding_error, "");
  EXPECT_EQ(c.static_pod_path, "/etc/kubernetes/manifests");
  EXPECT_EQ(c.sync_frequency, absl::Seconds(90));
  EXPECT_THAT(c.static_pod_url_header.at("Authorization"), ElementsAre("Bearer x", "y"));
  EXPECT_EQ(c.address, "10.0.0.1");
  EXPECT_EQ(c.port, 10251);
  EXPECT_EQ(c.read_only_port, 10255);
  EXPECT_THAT(c.tls_cipher_suites, ElementsAre("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"));
  EXPECT_TRUE(c.rotate_certificates);
  EXPECT_EQ(c.authentication.x509.client_ca_file, "/etc/kubernetes/pki/ca.crt");
  EXPECT_EQ(c.authentication.webhook.cache_ttl, absl::Seconds(30));
  EXPECT_EQ(c.authorization.webhook.cache_authorized_ttl, absl::Minutes(1));
  EXPECT_EQ(c.authorization.webhook.cache_unauthorized_ttl, absl::Seconds(10));
  EXPECT_THAT(c.cluster_dns, ElementsAre("10.96.0.10"));
  EXPECT_EQ(c.cgroup_driver, "systemd");
  EXPECT_EQ(c.cpu_manager_policy_options.at("full-pcpus-only"), "true");
  EXPECT_EQ(c.qos_reserved.at("memory"), "50%");
  EXPECT_EQ(c.max_pods, 250);
  EXPECT_EQ(c.eviction_hard.size(), 1u);
  EXPECT_EQ(c.eviction_soft_grace_period.at("memory.available"), "1m");
  EXPECT_EQ(c.feature_gates,
            (std::map<std::string, bool>{{"GracefulNodeShutdown", false}, {"NodeSwap", true}}));
  EXPECT_EQ(c.memory_swap.swap_behavior, "LimitedSwap");
  EXPECT_THAT(c.enforce_node_allocatable, ElementsAre("pods", "kube-reserved"));
  EXPECT_EQ(c.logging.format, "json");
  EXPECT_EQ(c.logging.flush_frequency.duration, absl::Seconds(1));
  EXPECT_FALSE(c.logging.flush_frequency.as_string);
  EXPECT_EQ(c.logging.verbosity, 4u);
  ASSERT_EQ(c.logging.vmodule.size(), 1u);
  EXPECT_EQ(c.logging.vmodule[0].file_pattern, "kubelet*");
  EXPECT_EQ(c.logging.vmodule[0].verbosity, 5u);
  EXPECT_TRUE(c.logging.options.json.split_stream);
  EXPECT_EQ(c.logging.options.json.info_buffer_size.Value(), 1024);
  ASSERT_EQ(c.shutdown_grace_period_by_pod_priority.size(), 2u);
  EXPECT_EQ(c.shutdown_grace_period_by_pod_priority[0].priority, 2000000000);
  EXPECT_EQ(c.shutdown_grace_period_by_pod_priority[1].shutdown_grace_period_seconds, 30);
  ASSERT_EQ(c.reserved_memory.size(), 1u);
  EXPECT_EQ(c.reserved_memory[0].limits.at("memory").Value(), int64_t{1} << 30);
  ASSERT_EQ(c.register_with_taints.size(), 2u);
  EXPECT_EQ(c.register_with_taints[0].key, "dedicated");
  EXPECT_EQ(c.register_with_taints[0].value, "infra");
  EXPECT_EQ(c.register_with_taints[0].effect, "NoSchedule");
  EXPECT_FALSE(c.register_with_taints[0].time_added.has_value());
  EXPECT_EQ(c.register_with_taints[1].time_added, api::Time::FromUnix(1692094830));
  ASSERT_TRUE(c.tracing.has_value());
  EXPECT_EQ(c.tracing->endpoint, "localhost:4317");
  EXPECT_EQ(c.tracing->sampling_rate_per_million, 100);
  EXPECT_EQ(c.max_parallel_image_pulls, 3);
  EXPECT_FALSE(c.serialize_image_pulls);
  EXPECT_DOUBLE_EQ(c.memory_throttling_factor, 0.8);
  EXPECT_EQ(c.container_runtime_endpoint, "unix:///run/crio/crio.sock");
  EXPECT_EQ(c.image_service_endpoint, "unix:///run/crio/img.sock");
  // Untouched fields are defaulted.
  EXPECT_EQ(c.healthz_port, 10248);
  EXPECT_EQ(c.file_check_frequency, absl::Seconds(20));
}

TEST(KubeletConfigurationDecode, FieldsSet) {
  auto r = DecodeYaml(
      "syncFrequency: 10s\n"
      "authentication:\n"
      "  webhook:\n"
      "    enabled: true\n"
      "  anonymous: {}\n"
      "featureGates:\n"
      "  A: true\n"
      "registerWithTaints: [{key: a, effect: NoSchedule}]\n"
      "logging:\n"
      "  format: text\n"
      "tracing: {}\n"
      "enableServer: null\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->fields_set, ElementsAre("syncFrequency", "authentication.webhook.enabled",
                                         "authentication.anonymous", "featureGates",
                                         "registerWithTaints", "logging.format", "tracing"));
}

TEST(KubeletConfigurationDecode, JsonAndYamlAgree) {
  constexpr char kJson[] = R"({
    "kind": "KubeletConfiguration",
    "apiVersion": "kubelet.config.k8s.io/v1beta1",
    "enableServer": false,
    "syncFrequency": "30s",
    "maxPods": 50,
    "authentication": {"webhook": {"cacheTTL": "1m"}, "anonymous": {"enabled": true}},
    "featureGates": {"Foo": true},
    "evictionHard": {"memory.available": "1Gi"},
    "logging": {"format": "json", "flushFrequency": "2s"},
    "memoryThrottlingFactor": 0.75
  })";
  constexpr char kYaml[] = R"(kind: KubeletConfiguration
apiVersion: kubelet.config.k8s.io/v1beta1
enableServer: false
syncFrequency: 30s
maxPods: 50
authentication:
  webhook: {cacheTTL: 1m}
  anonymous: {enabled: yes}
featureGates: {Foo: on}
evictionHard: {memory.available: 1Gi}
logging: {format: json, flushFrequency: 2s}
memoryThrottlingFactor: 0.75
)";
  auto j = DecodeKubeletConfiguration(kJson, "/a/b.json", Quiet());
  auto y = DecodeKubeletConfiguration(kYaml, "/a/b.yaml", Quiet());
  ASSERT_TRUE(j.ok()) << j.status();
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(j->config, y->config);
  EXPECT_EQ(j->fields_set, y->fields_set);
  EXPECT_FALSE(j->config.enable_server);
  EXPECT_TRUE(j->config.authentication.anonymous.enabled);
  EXPECT_EQ(j->config.logging.flush_frequency.duration, absl::Seconds(2));
  EXPECT_DOUBLE_EQ(j->config.memory_throttling_factor, 0.75);
}

TEST(KubeletConfigurationDecode, YamlScalarResolution) {
  // yaml.v2 rules: 0x/0o/underscores are ints; 1e2 and 2.0 are floats that Go marshals as
  // integral JSON numbers.
  auto r = DecodeYaml("maxPods: 0x10\nport: 1_0250\nkubeAPIBurst: 1e2\nregistryBurst: 2.0\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->config.max_pods, 16);
  EXPECT_EQ(r->config.port, 10250);
  EXPECT_EQ(r->config.kube_api_burst, 100);
  EXPECT_EQ(r->config.registry_burst, 2);

  r = DecodeYaml("maxPods: 08\nport: 1.\n");  // not octal: a float; "1." is a float too
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->config.max_pods, 8);
  EXPECT_EQ(r->config.port, 1);
  EXPECT_THAT(ErrorOf("maxPods: .5\n"), HasSubstr("cannot unmarshal number 0.5 into"));
  // JSON number literals reach the int parser as written.
  auto j = DecodeKubeletConfiguration(
      R"({"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration",)"
      R"("maxPods":1e3})",
      "/k.json", Quiet());
  ASSERT_FALSE(j.ok());
  EXPECT_THAT(std::string(j.status().message()),
              HasSubstr("cannot unmarshal number 1e3 into Go struct field "
                        "KubeletConfiguration.maxPods of type int32"));
}

TEST(KubeletConfigurationDecode, QuotedScalarsStayStrings) {
  EXPECT_THAT(ErrorOf("enableServer: \"yes\"\n"),
              HasSubstr("cannot unmarshal string into Go struct field "
                        "KubeletConfiguration.enableServer of type bool"));
  auto r = DecodeYaml("cgroupRoot: \"123\"\nproviderID: 'on'\nfeatureGates: {A: no, B: Y}\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->config.cgroup_root, "123");
  EXPECT_EQ(r->config.provider_id, "on");
  EXPECT_EQ(r->config.feature_gates, (std::map<std::string, bool>{{"A", false}, {"B", true}}));
  // A YAML bool for a string field is a type error, as in Go.
  EXPECT_THAT(ErrorOf("cgroupDriver: yes\n"),
              HasSubstr("cannot unmarshal bool into Go struct field "
                        "KubeletConfiguration.cgroupDriver of type string"));
}

TEST(KubeletConfigurationDecode, FirstTypeErrorWinsButDurationErrorsStop) {
  // Go keeps decoding after a type error and reports the first; an UnmarshalJSON error
  // (durations) stops decoding and is reported instead.
  EXPECT_THAT(ErrorOf("maxPods: a\nport: b\n"), HasSubstr("KubeletConfiguration.maxPods"));
  EXPECT_THAT(ErrorOf("maxPods: a\nsyncFrequency: 1x\n"),
              HasSubstr("field \"syncFrequency\": time: unknown unit"));
}

TEST(KubeletConfigurationDecode, LenientFallbackIsLogged) {
  std::vector<std::string> lines;
  log::Options opts;
  opts.sink = [&lines](std::string_view line) { lines.emplace_back(line); };
  log::Configure(opts);
  DecodeOptions o;
  auto r = DecodeYaml("bogus: 1\n", o);
  log::Configure(log::Options{});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("\"Using lenient decoding as strict decoding failed\""));
  EXPECT_THAT(lines[0], HasSubstr("strict decoding error: unknown field"));
}

TEST(KubeletConfigurationDecode, YamlAnchorsAndMergeKeys) {
  auto r = DecodeYaml(
      "evictionSoft: &thresholds\n"
      "  memory.available: 300Mi\n"
      "evictionHard: *thresholds\n"
      "authentication:\n"
      "  <<: {anonymous: {enabled: true}}\n"
      "  webhook: {enabled: false}\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->strict_decoding_error, "");
  EXPECT_EQ(r->config.eviction_hard, r->config.eviction_soft);
  EXPECT_TRUE(r->config.authentication.anonymous.enabled);
  EXPECT_FALSE(r->config.authentication.webhook.enabled);
  EXPECT_THAT(ErrorOf("foo: &x [*x]\n"), HasSubstr("exceeded max depth"));
}

TEST(KubeletConfigurationDecode, LoadFromFileResolvesRelativePaths) {
  TempDir dir;
  std::string path = dir.Write("kubelet.yaml", std::string(kHeader) +
                                                   "staticPodPath: manifests\n"
                                                   "tlsCertFile: ./pki/../pki/kubelet.crt\n"
                                                   "tlsPrivateKeyFile: /abs/kubelet.key\n"
                                                   "resolvConf: resolv.conf\n"
                                                   "authentication:\n"
                                                   "  x509:\n"
                                                   "    clientCAFile: ca.crt\n"
                                                   "volumePluginDir: relative/plugins\n");
  auto r = LoadKubeletConfigFile(path, Quiet());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->config.static_pod_path, dir.path() + "/manifests");
  EXPECT_EQ(r->config.tls_cert_file, dir.path() + "/pki/kubelet.crt");
  EXPECT_EQ(r->config.tls_private_key_file, "/abs/kubelet.key");
  EXPECT_EQ(r->config.resolv_conf, dir.path() + "/resolv.conf");
  EXPECT_EQ(r->config.authentication.x509.client_ca_file, dir.path() + "/ca.crt");
  EXPECT_EQ(r->config.volume_plugin_dir, "relative/plugins");  // not a path ref in v1.28

  // Empty stays empty; a relative --config path is taken from the working directory.
  std::string empty = dir.Write("k2.yaml", std::string(kHeader) + "resolvConf: \"\"\n");
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(chdir(dir.path().c_str()), 0);
  r = LoadKubeletConfigFile("k2.yaml", Quiet());
  ASSERT_EQ(chdir(cwd), 0);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->config.resolv_conf, "");
  EXPECT_EQ(r->config.static_pod_path, "");
}

// ---------------------------------------------------------------------------------------------
// Errors.

constexpr char kChain[] =
    "failed to load kubelet config file, path: /etc/kubernetes/kubelet.yaml, error: failed to "
    "load Kubelet config file /etc/kubernetes/kubelet.yaml, error failed to decode: ";

TEST(KubeletConfigurationErrors, UnknownFieldIsLenientByDefault) {
  auto r = DecodeYaml("authentication:\n  x509:\n    clientCAFil: /x\nmaxPods: 7\nfoo: 1\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->strict_decoding_error,
            "strict decoding error: unknown field \"authentication.x509.clientCAFil\", unknown "
            "field \"foo\"");
  EXPECT_EQ(r->config.max_pods, 7);
  EXPECT_EQ(r->config.authentication.x509.client_ca_file, "");
}

TEST(KubeletConfigurationErrors, UnknownFieldIsFatalWhenStrict) {
  DecodeOptions strict = Quiet();
  strict.strict = true;
  EXPECT_EQ(ErrorOf("authentication:\n  x509:\n    clientCAFil: /x\n", strict),
            std::string(kChain) +
                "strict decoding error: unknown field \"authentication.x509.clientCAFil\"");
  // Case matters, as in sigs.k8s.io/json.
  EXPECT_THAT(ErrorOf("MaxPods: 3\n", strict), HasSubstr("unknown field \"MaxPods\""));
  EXPECT_THAT(ErrorOf("registerWithTaints:\n- key: a\n  efect: NoSchedule\n", strict),
              HasSubstr("unknown field \"registerWithTaints[0].efect\""));
}

TEST(KubeletConfigurationErrors, DuplicateFields) {
  auto r = DecodeYaml("maxPods: 5\nport: 1\nmaxPods: 6\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->config.max_pods, 6);  // last one wins
  EXPECT_EQ(r->strict_decoding_error,
            "strict decoding error: error converting YAML to JSON: yaml: unmarshal errors:\n"
            "  line 5: key \"maxPods\" already set in map");

  auto j = DecodeKubeletConfiguration(
      R"({"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration",
          "maxPods":5,"authentication":{"webhook":{"enabled":false}},"maxPods":6})",
      "/k.json", Quiet());
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->config.max_pods, 6);
  EXPECT_EQ(j->strict_decoding_error, "strict decoding error: duplicate field \"maxPods\"");

  DecodeOptions strict = Quiet();
  strict.strict = true;
  EXPECT_THAT(ErrorOf("maxPods: 5\nmaxPods: 6\n", strict),
              HasSubstr("key \"maxPods\" already set in map"));
}

TEST(KubeletConfigurationErrors, WrongTypes) {
  EXPECT_EQ(ErrorOf("maxPods: \"110\"\n"),
            std::string(kChain) +
                "json: cannot unmarshal string into Go struct field KubeletConfiguration.maxPods "
                "of type int32");
  EXPECT_EQ(ErrorOf("maxPods: 1.5\n"), std::string(kChain) +
                                           "json: cannot unmarshal number 1.5 into Go struct field "
                                           "KubeletConfiguration.maxPods of type int32");
  EXPECT_EQ(ErrorOf("maxPods: 3000000000\n"),
            std::string(kChain) +
                "json: cannot unmarshal number 3000000000 into Go struct field "
                "KubeletConfiguration.maxPods of type int32");
  EXPECT_EQ(ErrorOf("clusterDomain: 5\n"), std::string(kChain) +
                                               "json: cannot unmarshal number into Go struct field "
                                               "KubeletConfiguration.clusterDomain of type string");
  EXPECT_EQ(ErrorOf("enableServer: \"true\"\n"),
            std::string(kChain) +
                "json: cannot unmarshal string into Go struct field "
                "KubeletConfiguration.enableServer of type bool");
  EXPECT_EQ(ErrorOf("authentication:\n  webhook:\n    enabled: maybe\n"),
            std::string(kChain) +
                "json: cannot unmarshal string into Go struct field "
                "KubeletWebhookAuthentication.authentication.webhook.enabled of type bool");
  EXPECT_EQ(ErrorOf("authorization:\n  mode: 1\n"),
            std::string(kChain) +
                "json: cannot unmarshal number into Go struct field "
                "KubeletAuthorization.authorization.mode of type v1beta1.KubeletAuthorizationMode");
  EXPECT_EQ(ErrorOf("featureGates:\n  Foo: \"true\"\n"),
            std::string(kChain) +
                "json: cannot unmarshal string into Go struct field "
                "KubeletConfiguration.featureGates of type bool");
  EXPECT_EQ(ErrorOf("clusterDNS: 10.0.0.1\n"),
            std::string(kChain) +
                "json: cannot unmarshal string into Go struct field "
                "KubeletConfiguration.clusterDNS of type []string");
  EXPECT_EQ(ErrorOf("authentication: true\n"),
            std::string(kChain) +
                "json: cannot unmarshal bool into Go struct field "
                "KubeletConfiguration.authentication of type v1beta1.KubeletAuthentication");
  EXPECT_EQ(ErrorOf("registerWithTaints:\n- key: 5\n"),
            std::string(kChain) +
                "json: cannot unmarshal number into Go struct field "
                "Taint.registerWithTaints.key of type string");
  EXPECT_EQ(ErrorOf("logging:\n  verbosity: -1\n"),
            std::string(kChain) +
                "json: cannot unmarshal number -1 into Go struct field "
                "LoggingConfiguration.logging.verbosity of type v1.VerbosityLevel");
}

TEST(KubeletConfigurationErrors, BadDurations) {
  EXPECT_EQ(
      ErrorOf("syncFrequency: 5x\n"),
      std::string(kChain) + "field \"syncFrequency\": time: unknown unit \"x\" in duration \"5x\"");
  EXPECT_EQ(ErrorOf("authentication:\n  webhook:\n    cacheTTL: abc\n"),
            std::string(kChain) +
                "field \"authentication.webhook.cacheTTL\": time: invalid duration \"abc\"");
  // metav1.Duration takes strings only, and null is parsed as "".
  EXPECT_EQ(ErrorOf("syncFrequency: 5\n"), std::string(kChain) +
                                               "json: cannot unmarshal number into Go struct field "
                                               "KubeletConfiguration.syncFrequency of type string");
  EXPECT_EQ(ErrorOf("syncFrequency:\n"),
            std::string(kChain) + "field \"syncFrequency\": time: invalid duration \"\"");
  EXPECT_THAT(ErrorOf("logging:\n  flushFrequency: true\n"),
              HasSubstr("invalid duration \"true\": json: cannot unmarshal bool into Go value of "
                        "type time.Duration"));
}

TEST(KubeletConfigurationErrors, BadQuantity) {
  EXPECT_THAT(ErrorOf("logging:\n  options:\n    text:\n      infoBufferSize: lots\n"),
              HasSubstr("field \"logging.options.text.infoBufferSize\": quantities must match"));
}

TEST(KubeletConfigurationErrors, TypeMeta) {
  auto err = [](const std::string& data) {
    auto r = DecodeKubeletConfiguration(data, "/k.yaml", Quiet());
    return r.ok() ? std::string("<ok>") : std::string(r.status().message());
  };
  const std::string chain =
      "failed to load kubelet config file, path: /k.yaml, error: failed to load Kubelet config "
      "file /k.yaml, error ";
  EXPECT_EQ(err("apiVersion: kubelet.config.k8s.io/v1beta1\nmaxPods: 1\n"),
            chain +
                "failed to decode: Object 'Kind' is missing in 'apiVersion: "
                "kubelet.config.k8s.io/v1beta1\nmaxPods: 1\n'");
  EXPECT_EQ(err("kind: KubeletConfiguration\n"),
            chain +
                "failed to decode: Object 'apiVersion' is missing in 'kind: "
                "KubeletConfiguration\n'");
  EXPECT_EQ(err("apiVersion: kubelet.config.k8s.io/v1beta1_broken\nkind: KubeletConfiguration\n"),
            chain +
                "failed to decode: no kind \"KubeletConfiguration\" is registered for version "
                "\"kubelet.config.k8s.io/v1beta1_broken\" in scheme "
                "\"pkg/kubelet/apis/config/scheme/scheme.go:33\"");
  EXPECT_EQ(err("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: Kubelet\n"),
            chain +
                "failed to decode: no kind \"Kubelet\" is registered for version "
                "\"kubelet.config.k8s.io/v1beta1\" in scheme "
                "\"pkg/kubelet/apis/config/scheme/scheme.go:33\"");
  EXPECT_EQ(err("apiVersion: a/b/c\nkind: KubeletConfiguration\n"),
            chain + "failed to decode: unexpected GroupVersion string: a/b/c");
  EXPECT_EQ(err("- a\n- b\n"),
            chain +
                "failed to decode: couldn't get version/kind; json parse error: json: cannot "
                "unmarshal array into Go value of type struct { APIVersion string "
                "\"json:\\\"apiVersion,omitempty\\\"\"; Kind string "
                "\"json:\\\"kind,omitempty\\\"\" }");
}

TEST(KubeletConfigurationErrors, SyntaxErrors) {
  auto r = DecodeKubeletConfiguration("{\"kind\": }", "/k.json", Quiet());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("failed to decode: couldn't get version/kind; json parse error: "));
  r = DecodeKubeletConfiguration("kind: [a\nfoo: bar\n", "/k.yaml", Quiet());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("failed to decode: error converting YAML to JSON: yaml: line "));
  r = DecodeYaml("memoryThrottlingFactor: .inf\n");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("error converting YAML to JSON: json: unsupported value: +Inf"));
}

TEST(KubeletConfigurationErrors, FileErrors) {
  TempDir dir;
  std::string missing = dir.path() + "/nope.yaml";
  auto r = LoadKubeletConfigFile(missing, Quiet());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(std::string(r.status().message()),
            "failed to load kubelet config file, path: " + missing +
                ", error: failed to load Kubelet config file " + missing +
                ", error failed to read kubelet config file \"" + missing + "\", error: open " +
                missing + ": no such file or directory");
  std::string empty = dir.Write("empty.yaml", "");
  r = LoadKubeletConfigFile(empty, Quiet());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("error kubelet config file \"" + empty + "\" was empty"));
  r = LoadKubeletConfigFile(dir.path(), Quiet());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(": is a directory"));
  std::string bad = dir.Write("bad.yaml", std::string(kHeader) + "syncFrequency: 5x\n");
  r = LoadKubeletConfigFile(bad, Quiet());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              StartsWith("failed to load kubelet config file, path: " + bad + ", error: "));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("field \"syncFrequency\""));
}

// ---------------------------------------------------------------------------------------------
// Encoding.

TEST(KubeletConfigurationEncode, DefaultsAsUpstreamConfigz) {
  KubeletConfiguration c;
  SetDefaults(&c);
  c.eviction_hard = DefaultEvictionHard();
  EXPECT_EQ(
      KubeletConfigurationToJson(c),
      R"({"enableServer":true,"syncFrequency":"1m0s","fileCheckFrequency":"20s",)"
      R"("httpCheckFrequency":"20s","address":"0.0.0.0","port":10250,)"
      R"("authentication":{"x509":{},"webhook":{"enabled":true,"cacheTTL":"2m0s"},)"
      R"("anonymous":{"enabled":false}},"authorization":{"mode":"Webhook","webhook":)"
      R"({"cacheAuthorizedTTL":"5m0s","cacheUnauthorizedTTL":"30s"}},"registryPullQPS":5,)"
      R"("registryBurst":10,"eventRecordQPS":50,"eventBurst":100,"enableDebuggingHandlers":true,)"
      R"("healthzPort":10248,"healthzBindAddress":"127.0.0.1","oomScoreAdj":-999,)"
      R"("streamingConnectionIdleTimeout":"4h0m0s","nodeStatusUpdateFrequency":"10s",)"
      R"("nodeStatusReportFrequency":"5m0s","nodeLeaseDurationSeconds":40,)"
      R"("imageMinimumGCAge":"2m0s","imageGCHighThresholdPercent":85,)"
      R"("imageGCLowThresholdPercent":80,"volumeStatsAggPeriod":"1m0s","cgroupsPerQOS":true,)"
      R"("cgroupDriver":"cgroupfs","cpuManagerPolicy":"none","cpuManagerReconcilePeriod":"10s",)"
      R"("memoryManagerPolicy":"None","topologyManagerPolicy":"none",)"
      R"("topologyManagerScope":"container","runtimeRequestTimeout":"2m0s",)"
      R"("hairpinMode":"promiscuous-bridge","maxPods":110,"podPidsLimit":-1,)"
      R"("resolvConf":"/etc/resolv.conf","cpuCFSQuota":true,"cpuCFSQuotaPeriod":"100ms",)"
      R"("nodeStatusMaxImages":50,"maxOpenFiles":1000000,)"
      R"("contentType":"application/vnd.kubernetes.protobuf","kubeAPIQPS":50,"kubeAPIBurst":100,)"
      R"("serializeImagePulls":true,"evictionHard":{"imagefs.available":"15%",)"
      R"("memory.available":"100Mi","nodefs.available":"10%","nodefs.inodesFree":"5%"},)"
      R"("evictionPressureTransitionPeriod":"5m0s","enableControllerAttachDetach":true,)"
      R"("makeIPTablesUtilChains":true,"iptablesMasqueradeBit":14,"iptablesDropBit":15,)"
      R"("failSwapOn":true,"memorySwap":{},"containerLogMaxSize":"10Mi",)"
      R"("containerLogMaxFiles":5,"configMapAndSecretChangeDetectionStrategy":"Watch",)"
      R"("enforceNodeAllocatable":["pods"],)"
      R"("volumePluginDir":"/usr/libexec/kubernetes/kubelet-plugins/volume/exec/",)"
      R"("logging":{"format":"text","flushFrequency":"5s","verbosity":0,"options":)"
      R"({"text":{"infoBufferSize":"0"},"json":{"infoBufferSize":"0"}}},)"
      R"("enableSystemLogHandler":true,"enableSystemLogQuery":false,)"
      R"("shutdownGracePeriod":"0s","shutdownGracePeriodCriticalPods":"0s",)"
      R"("enableProfilingHandler":true,"enableDebugFlagsHandler":true,"seccompDefault":false,)"
      R"("memoryThrottlingFactor":0.9,"registerNode":true,"localStorageCapacityIsolation":true,)"
      R"("containerRuntimeEndpoint":"unix:///run/containerd/containerd.sock"})");
  EXPECT_EQ(KubeletConfigzJson(c), "{\"kubeletconfig\":" + KubeletConfigurationToJson(c) + "}");
}

TEST(KubeletConfigurationEncode, OptionalAndNestedValues) {
  auto r = DecodeKubeletConfiguration(kFullYaml, "/etc/k/kubelet.yaml", Quiet());
  ASSERT_TRUE(r.ok()) << r.status();
  std::string json = KubeletConfigurationToJson(r->config);
  EXPECT_THAT(json, HasSubstr(R"("staticPodURLHeader":{"Authorization":["Bearer x","y"]})"));
  EXPECT_THAT(json, HasSubstr(R"("serializeImagePulls":false,"maxParallelImagePulls":3,)"));
  EXPECT_THAT(json, HasSubstr(R"("featureGates":{"GracefulNodeShutdown":false,"NodeSwap":true})"));
  EXPECT_THAT(json, HasSubstr(R"("memorySwap":{"swapBehavior":"LimitedSwap"})"));
  EXPECT_THAT(json, HasSubstr(R"("logging":{"format":"json","flushFrequency":1000000000,)"
                              R"("verbosity":4,"vmodule":[{"filePattern":"kubelet*",)"
                              R"("verbosity":5}],"options":{"text":{"infoBufferSize":"0"},)"
                              R"("json":{"splitStream":true,"infoBufferSize":"1Ki"}}})"));
  EXPECT_THAT(json, HasSubstr(R"("shutdownGracePeriodByPodPriority":[{"priority":2000000000,)"
                              R"("shutdownGracePeriodSeconds":10},{"priority":0,)"
                              R"("shutdownGracePeriodSeconds":30}])"));
  EXPECT_THAT(json, HasSubstr(R"("reservedMemory":[{"numaNode":0,"limits":{"memory":"1Gi"}}])"));
  EXPECT_THAT(json, HasSubstr(R"("registerWithTaints":[{"key":"dedicated","value":"infra",)"
                              R"("effect":"NoSchedule"},{"key":"k2","effect":"NoExecute",)"
                              R"("timeAdded":"2023-08-15T10:20:30Z"}])"));
  EXPECT_THAT(json, HasSubstr(R"("tracing":{"endpoint":"localhost:4317",)"
                              R"("samplingRatePerMillion":100})"));
  EXPECT_THAT(json, HasSubstr(R"("memoryThrottlingFactor":0.8,)"));
  EXPECT_THAT(json, HasSubstr(R"("imageServiceEndpoint":"unix:///run/crio/img.sock"})"));
}

TEST(KubeletConfigurationEncode, GoStringEscaping) {
  KubeletConfiguration c;
  c.provider_id = "a<b>&\"c\\\n\x01\xe2\x80\xa8\xff";
  EXPECT_THAT(KubeletConfigurationToJson(c),
              HasSubstr(R"("providerID":"a\u003cb\u003e\u0026\"c\\\n\u0001\u2028\ufffd")"));
}

TEST(KubeletConfigurationEncode, RoundTrip) {
  for (const KubeletConfiguration& want : {DefaultKubeletConfiguration(), [] {
                                             KubeletConfiguration c;
                                             SetDefaults(&c);
                                             c.eviction_hard = DefaultEvictionHard();
                                             return c;
                                           }()}) {
    std::string json = KubeletConfigurationToJson(want, /*include_type_meta=*/true);
    auto r = DecodeKubeletConfiguration(json, "/etc/k/kubelet.json", Quiet());
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->strict_decoding_error, "");
    EXPECT_EQ(r->config, want) << json;
  }

  auto full = DecodeKubeletConfiguration(kFullYaml, "/etc/k/kubelet.yaml", Quiet());
  ASSERT_TRUE(full.ok()) << full.status();
  std::string json = KubeletConfigurationToJson(full->config, true);
  auto again = DecodeKubeletConfiguration(json, "/etc/k/kubelet.json", Quiet());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->config, full->config);
  EXPECT_EQ(KubeletConfigurationToJson(again->config, true), json);
}

TEST(KubeletConfigurationFieldsTest, PathsNameTableFields) {
  EXPECT_TRUE(IsConfigFieldPath("syncFrequency"));
  EXPECT_TRUE(IsConfigFieldPath("authentication"));
  EXPECT_TRUE(IsConfigFieldPath("authentication.webhook.enabled"));
  EXPECT_TRUE(IsConfigFieldPath("logging.options.json.infoBufferSize"));
  EXPECT_FALSE(IsConfigFieldPath("syncfrequency"));
  EXPECT_FALSE(IsConfigFieldPath("syncFrequency.x"));
  EXPECT_FALSE(IsConfigFieldPath("authentication.webhook.bogus"));
  EXPECT_FALSE(IsConfigFieldPath(""));
  EXPECT_EQ(api::codec::FieldNames<KubeletConfiguration>().front(), "enableServer");
  EXPECT_EQ(api::codec::FieldNames<KubeletConfiguration>().back(), "imageServiceEndpoint");
}

}  // namespace
}  // namespace kubelet::config
