#include "config/validation.h"

#include <functional>
#include <string>
#include <vector>

#include "config/kubelet_configuration.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::config {
namespace {

using ::testing::HasSubstr;

KubeletConfiguration Valid() {
  KubeletConfiguration c = DefaultKubeletConfiguration();
  return c;
}

std::string Validate(const KubeletConfiguration& c) {
  absl::Status st = ValidateKubeletConfiguration(c, FeatureGate());
  return st.ok() ? "" : std::string(st.message());
}

TEST(ValidationTest, DefaultsAreValid) { EXPECT_EQ(Validate(Valid()), ""); }

TEST(ValidationTest, SingleRules) {
  struct Case {
    const char* name;
    std::function<void(KubeletConfiguration&)> mutate;
    const char* want;
  } cases[] = {
      {"lease", [](auto& c) { c.node_lease_duration_seconds = 0; },
       "invalid configuration: nodeLeaseDurationSeconds must be greater than 0"},
      {"enforce without qos",
       [](auto& c) {
         c.cgroups_per_qos = false;
         c.enforce_node_allocatable = {"pods"};
       },
       "invalid configuration: enforceNodeAllocatable (--enforce-node-allocatable) is not "
       "supported unless cgroupsPerQOS (--cgroups-per-qos) is set to true"},
      {"system cgroups", [](auto& c) { c.system_cgroups = "/"; },
       "invalid configuration: systemCgroups (--system-cgroups) was specified and cgroupRoot "
       "(--cgroup-root) was not specified"},
      {"event burst", [](auto& c) { c.event_burst = -1; },
       "invalid configuration: eventBurst (--event-burst) -1 must not be a negative number"},
      {"event qps", [](auto& c) { c.event_record_qps = -1; },
       "invalid configuration: eventRecordQPS (--event-qps) -1 must not be a negative number"},
      {"healthz port", [](auto& c) { c.healthz_port = 65536; },
       "invalid configuration: healthzPort (--healthz-port) 65536 must be between 1 and 65535, "
       "inclusive"},
      {"cfs period without gate", [](auto& c) { c.cpu_cfs_quota_period = absl::Milliseconds(200); },
       "invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) {200ms} requires "
       "feature gate CustomCPUCFSQuotaPeriod"},
      {"cfs period range",
       [](auto& c) {
         c.feature_gates = {{"CustomCPUCFSQuotaPeriod", true}};
         c.cpu_cfs_quota_period = absl::Seconds(2);
       },
       "invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) {2s} must be between "
       "1ms and 1sec, inclusive"},
      {"gc high", [](auto& c) { c.image_gc_high_threshold_percent = 101; },
       "invalid configuration: imageGCHighThresholdPercent (--image-gc-high-threshold) 101 must be "
       "between 0 and 100, inclusive"},
      {"gc low > high",
       [](auto& c) {
         c.image_gc_high_threshold_percent = 50;
         c.image_gc_low_threshold_percent = 80;
       },
       "invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) 80 must be "
       "less than imageGCHighThresholdPercent (--image-gc-high-threshold) 50"},
      {"drop bit", [](auto& c) { c.iptables_drop_bit = 32; },
       "invalid configuration: iptablesDropBit (--iptables-drop-bit) 32 must be between 0 and 31, "
       "inclusive"},
      {"api qps", [](auto& c) { c.kube_api_qps = -1; },
       "invalid configuration: kubeAPIQPS (--kube-api-qps) -1 must not be a negative number"},
      {"max images", [](auto& c) { c.node_status_max_images = -2; },
       "invalid configuration: nodeStatusMaxImages (--node-status-max-images) -2 must be -1 or "
       "greater"},
      {"max pods", [](auto& c) { c.max_pods = -1; },
       "invalid configuration: maxPods (--max-pods) -1 must not be a negative number"},
      {"oom", [](auto& c) { c.oom_score_adj = 1001; },
       "invalid configuration: oomScoreAdj (--oom-score-adj) 1001 must be between -1000 and 1000, "
       "inclusive"},
      {"port", [](auto& c) { c.port = 0; },
       "invalid configuration: port (--port) 0 must be between 1 and 65535, inclusive"},
      {"read only port", [](auto& c) { c.read_only_port = 65536; },
       "invalid configuration: readOnlyPort (--read-only-port) 65536 must be between 0 and 65535, "
       "inclusive"},
      {"registry qps", [](auto& c) { c.registry_pull_qps = -1; },
       "invalid configuration: registryPullQPS (--registry-qps) -1 must not be a negative number"},
      {"parallel pulls", [](auto& c) { c.max_parallel_image_pulls = 0; },
       "invalid configuration: maxParallelImagePulls 0 must be a positive number"},
      {"parallel pulls serialized",
       [](auto& c) {
         c.serialize_image_pulls = true;
         c.max_parallel_image_pulls = 3;
       },
       "invalid configuration: maxParallelImagePulls cannot be larger than 1 unless "
       "SerializeImagePulls (--serialize-image-pulls) is set to false"},
      {"server tls bootstrap",
       [](auto& c) {
         c.feature_gates = {{"RotateKubeletServerCertificate", false}};
         c.server_tls_bootstrap = true;
       },
       "invalid configuration: serverTLSBootstrap true requires feature gate "
       "RotateKubeletServerCertificate"},
      {"topology policy", [](auto& c) { c.topology_manager_policy = "invalid-policy"; },
       "invalid configuration: topologyManagerPolicy (--topology-manager-policy) "
       "\"invalid-policy\" must be one of: [\"none\" \"best-effort\" \"restricted\" "
       "\"single-numa-node\"]"},
      {"topology scope", [](auto& c) { c.topology_manager_scope = "invalid-scope"; },
       "invalid configuration: topologyManagerScope (--topology-manager-scope) \"invalid-scope\" "
       "must be one of: \"container\", or \"pod\""},
      {"shutdown critical > total",
       [](auto& c) {
         c.shutdown_grace_period_critical_pods = absl::Seconds(2);
         c.shutdown_grace_period = absl::Seconds(1);
       },
       "invalid configuration: shutdownGracePeriodCriticalPods {2s} must be <= "
       "shutdownGracePeriod {1s}"},
      {"shutdown < 1s", [](auto& c) { c.shutdown_grace_period = absl::Milliseconds(1); },
       "invalid configuration: shutdownGracePeriod {1ms} must be either zero or otherwise >= 1 "
       "sec"},
      {"shutdown without gate",
       [](auto& c) {
         c.feature_gates = {{"GracefulNodeShutdown", false}};
         c.shutdown_grace_period = absl::Seconds(1);
       },
       "invalid configuration: specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods "
       "requires feature gate GracefulNodeShutdown"},
      {"shutdown by priority and total",
       [](auto& c) {
         c.shutdown_grace_period = absl::Seconds(10);
         c.shutdown_grace_period_by_pod_priority = {{1, 10}};
       },
       "invalid configuration: Cannot specify both shutdownGracePeriodByPodPriority and "
       "shutdownGracePeriod at the same time"},
      {"shutdown by priority without gate",
       [](auto& c) {
         c.feature_gates = {{"GracefulNodeShutdownBasedOnPodPriority", false}};
         c.shutdown_grace_period_by_pod_priority = {{1, 10}};
       },
       "invalid configuration: Specifying shutdownGracePeriodByPodPriority requires feature gate "
       "GracefulNodeShutdownBasedOnPodPriority"},
      {"swap behavior",
       [](auto& c) {
         c.feature_gates = {{"NodeSwap", true}};
         c.memory_swap.swap_behavior = "invalid-behavior";
       },
       "invalid configuration: memorySwap.swapBehavior \"invalid-behavior\" must be one of: \"\", "
       "\"LimitedSwap\", or \"UnlimitedSwap\""},
      {"swap without gate", [](auto& c) { c.memory_swap.swap_behavior = "LimitedSwap"; },
       "invalid configuration: memorySwap.swapBehavior cannot be set when NodeSwap feature flag "
       "is disabled"},
      {"enforce system-reserved", [](auto& c) { c.enforce_node_allocatable = {"system-reserved"}; },
       "invalid configuration: systemReservedCgroup (--system-reserved-cgroup) must be specified "
       "when \"system-reserved\" contained in enforceNodeAllocatable (--enforce-node-allocatable)"},
      {"enforce none+",
       [](auto& c) {
         c.enforce_node_allocatable = {"none", "pods"};
       },
       "invalid configuration: enforceNodeAllocatable (--enforce-node-allocatable) may not contain "
       "additional enforcements when \"none\" is specified"},
      {"enforce unknown", [](auto& c) { c.enforce_node_allocatable = {"bogus"}; },
       "invalid configuration: option \"bogus\" specified for enforceNodeAllocatable "
       "(--enforce-node-allocatable). Valid options are \"pods\", \"system-reserved\", "
       "\"kube-reserved\", or \"none\""},
      {"hairpin", [](auto& c) { c.hairpin_mode = "foo"; },
       "invalid configuration: option \"foo\" specified for hairpinMode (--hairpin-mode). Valid "
       "options are \"none\", \"hairpin-veth\" or \"promiscuous-bridge\""},
      {"reserved cpus + cgroup",
       [](auto& c) {
         c.reserved_system_cpus = "0-1";
         c.system_reserved_cgroup = "/system.slice";
       },
       "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with "
       "systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup "
       "(--kube-reserved-cgroup)"},
      {"reserved cpus parse", [](auto& c) { c.reserved_system_cpus = "0-x"; },
       "invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) 0-x, error: "
       "strconv.Atoi: parsing \"x\": invalid syntax"},
      {"hidden metrics", [](auto& c) { c.show_hidden_metrics_for_version = "1.26"; },
       "--show-hidden-metrics-for-version must be omitted or have the value '1.27'. Only the "
       "previous minor version is allowed"},
      {"throttling", [](auto& c) { c.memory_throttling_factor = 1.5; },
       "invalid configuration: memoryThrottlingFactor 1.5 must be greater than 0 and less than or "
       "equal to 1.0"},
      {"runtime endpoint", [](auto& c) { c.container_runtime_endpoint = ""; },
       "invalid configuration: the containerRuntimeEndpoint was not specified or empty"},
      {"log query gate", [](auto& c) { c.enable_system_log_query = true; },
       "invalid configuration: NodeLogQuery feature gate is required for enableSystemLogHandler"},
      {"log query handler",
       [](auto& c) {
         c.feature_gates = {{"NodeLogQuery", true}};
         c.enable_system_log_query = true;
         c.enable_system_log_handler = false;
       },
       "invalid configuration: enableSystemLogHandler is required for enableSystemLogQuery"},
      {"tracing without gate",
       [](auto& c) {
         c.feature_gates = {{"KubeletTracing", false}};
         c.tracing = TracingConfiguration{};
       },
       "invalid configuration: tracing should not be configured if KubeletTracing feature flag is "
       "disabled."},
      {"tracing rate",
       [](auto& c) {
         c.tracing = TracingConfiguration{std::nullopt, -1};
       },
       "tracing.samplingRatePerMillion: Invalid value: -1: sampling rate must be positive"},
      {"tracing endpoint",
       [](auto& c) {
         c.tracing = TracingConfiguration{"http://collector:4317", std::nullopt};
       },
       "tracing.endpoint: Invalid value: \"http://collector:4317\": unsupported scheme: http.  "
       "Options are none, dns, unix, or unix-abstract.  See "
       "https://github.com/grpc/grpc/blob/master/doc/naming.md"},
      {"logging format", [](auto& c) { c.logging.format = "xml"; },
       "logging.format: Invalid value: \"xml\": Unsupported log format"},
      {"logging json gated",
       [](auto& c) {
         c.feature_gates = {{"LoggingBetaOptions", false}};
         c.logging.format = "json";
       },
       "logging.format: Forbidden: Log format json is disabled, see LoggingBetaOptions feature"},
      {"vmodule json",
       [](auto& c) {
         c.logging.format = "json";
         c.logging.vmodule = {{"foo", 2}};
       },
       "logging.vmodule: Forbidden: Only supported for text log format"},
      {"split stream", [](auto& c) { c.logging.options.json.split_stream = true; },
       "logging.options.json.splitStream: Forbidden: Feature LoggingAlphaOptions is disabled"},
      {"taint",
       [](auto& c) {
         c.register_with_taints = {{"k", "v", "Bad", std::nullopt}};
       },
       "invalid taint: {k v Bad <nil>}"},
      {"reserved memory zero",
       [](auto& c) {
         MemoryReservation r;
         r.numa_node = 0;
         r.limits["memory"] = api::Quantity();
         c.reserved_memory = {r};
       },
       "invalid configuration: reserved memory may not be zero for NUMA node 0 and resource "
       "\"memory\""},
      {"reserved memory type",
       [](auto& c) {
         MemoryReservation r;
         r.numa_node = 1;
         r.limits["cpu"] = api::Quantity::FromValue(1);
         c.reserved_memory = {r};
       },
       "invalid configuration: the limit type \"cpu\" for NUMA node 1 is not supported, only "
       "[memory hugepages-<HugePageSize>] is accepted"},
  };
  for (const Case& c : cases) {
    KubeletConfiguration cfg = Valid();
    c.mutate(cfg);
    EXPECT_EQ(Validate(cfg), c.want) << c.name;
  }
}

TEST(ValidationTest, ValidVariants) {
  KubeletConfiguration c = Valid();
  c.feature_gates = {{"NodeSwap", true}};
  c.memory_swap.swap_behavior = "UnlimitedSwap";
  c.read_only_port = 0;
  c.healthz_port = 0;
  c.reserved_system_cpus = "0-1";
  c.enforce_node_allocatable = {"pods", "kube-reserved"};
  c.kube_reserved_cgroup = "";
  c.tracing = TracingConfiguration{"localhost:4317", 100};
  c.show_hidden_metrics_for_version = "1.27";
  c.register_with_taints = {{"dedicated", "infra", "NoSchedule", std::nullopt}};
  c.enforce_node_allocatable = {"pods"};
  EXPECT_EQ(Validate(c), "");
}

TEST(ValidationTest, AggregatesErrors) {
  KubeletConfiguration c = Valid();
  c.image_gc_high_threshold_percent = 50;
  c.image_gc_low_threshold_percent = 80;
  c.max_pods = -1;
  EXPECT_EQ(Validate(c),
            "[invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) 80 "
            "must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) 50, "
            "invalid configuration: maxPods (--max-pods) -1 must not be a negative number]");
  EXPECT_EQ(AggregateErrors({"a", "a"}).message(), "a");
  EXPECT_EQ(AggregateErrors({"a", "b", "a"}).message(), "[a, b]");
  EXPECT_TRUE(AggregateErrors({}).ok());
}

TEST(ValidationTest, FeatureGateErrorsReturnedAsIs) {
  KubeletConfiguration c = Valid();
  c.feature_gates = {{"Bogus", true}};
  EXPECT_EQ(Validate(c), "unrecognized feature gate: Bogus");
  c.feature_gates = {{"CPUManager", false}};
  EXPECT_EQ(Validate(c), "cannot set feature gate CPUManager to false, feature is locked to true");
}

TEST(ValidationTest, DoesNotMutateTheCallersGate) {
  FeatureGate gates;
  KubeletConfiguration c = Valid();
  c.feature_gates = {{"NodeSwap", true}};
  ASSERT_TRUE(ValidateKubeletConfiguration(c, gates).ok());
  EXPECT_FALSE(gates.Enabled("NodeSwap"));
}

TEST(LabelValidationTest, Messages) {
  EXPECT_TRUE(IsQualifiedName("example.com/MyName").empty());
  EXPECT_TRUE(IsQualifiedName("my.name").empty());
  EXPECT_TRUE(IsValidLabelValue("").empty());
  EXPECT_TRUE(IsValidLabelValue("my_value").empty());
  EXPECT_TRUE(IsDNS1123Subdomain("example.com").empty());
  EXPECT_FALSE(IsDNS1123Subdomain("Example.com").empty());
  EXPECT_FALSE(IsDNS1123Subdomain("a..b").empty());

  std::vector<std::string> errs = IsQualifiedName("/x");
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0], "prefix part must be non-empty");
  errs = IsQualifiedName("a/b/c");
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_THAT(errs[0], HasSubstr("with an optional DNS subdomain prefix and '/' (e.g. "
                                 "'example.com/MyName')"));
  errs = IsQualifiedName("Bad_Prefix/x");
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0],
            "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
            "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
            "'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  errs = IsQualifiedName(std::string(64, 'a'));
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0], "name part must be no more than 63 characters");
  errs = IsQualifiedName("x/");
  ASSERT_EQ(errs.size(), 2u);
  EXPECT_EQ(errs[0], "name part must be non-empty");
  errs = IsValidLabelValue(std::string(64, 'a'));
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0], "must be no more than 63 characters");
}

}  // namespace
}  // namespace kubelet::config
