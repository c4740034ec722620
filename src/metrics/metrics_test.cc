#include "metrics/metrics.h"

#include <gtest/gtest.h>

namespace kubelet::metrics {
namespace {

TEST(MetricsTest, KubeletRegistryRendersUpstreamNamesAndProcessFamilies) {
  Init("node-a", "v1.28.15", "abc");
  ObservePodStart(1.5);
  ObserveRuntimeOperation("run_podsandbox", 0.2, false);
  ObserveRuntimeOperation("run_podsandbox", 0.2, true);
  Kubelet().running_pods.Add({}).Set(3);
  const std::string text = Serialize(KubeletRegistry());
  EXPECT_NE(text.find("kubelet_node_name{node=\"node-a\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("kubelet_running_pods 3"), std::string::npos) << text;
  EXPECT_NE(text.find("kubelet_pod_start_duration_seconds_bucket{le=\"2\"} 1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("kubelet_runtime_operations_total{operation_type=\"run_podsandbox\"} 2"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("kubelet_runtime_operations_errors_total{operation_type=\"run_podsandbox\"} 1"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter"), std::string::npos) << text;
  EXPECT_NE(text.find("process_resident_memory_bytes "), std::string::npos) << text;
  EXPECT_NE(text.find("process_start_time_seconds "), std::string::npos) << text;
  // Families without samples are left out, as Go's client does.
  EXPECT_EQ(text.find("kubelet_evictions"), std::string::npos) << text;
}

TEST(MetricsTest, ProbesRegistryAndCollectors) {
  ObserveProbe("Liveness", "failed", "main", "p", "default", "u1", 0.01);
  AddCollector(ResourceRegistry(), [] {
    prometheus::MetricFamily f;
    f.name = "node_cpu_usage_seconds_total";
    f.help = "x";
    f.type = prometheus::MetricType::Counter;
    prometheus::ClientMetric m;
    m.counter.value = 12.5;
    f.metric.push_back(m);
    return std::vector<prometheus::MetricFamily>{f};
  });
  const std::string probes = Serialize(ProbesRegistry());
  EXPECT_NE(probes.find("prober_probe_total{container=\"main\",namespace=\"default\",pod=\"p\","
                        "pod_uid=\"u1\",probe_type=\"Liveness\",result=\"failed\"} 1"),
            std::string::npos)
      << probes;
  EXPECT_EQ(probes.find("process_"), std::string::npos);
  EXPECT_NE(Serialize(ResourceRegistry()).find("node_cpu_usage_seconds_total 12.5"),
            std::string::npos);
}

}  // namespace
}  // namespace kubelet::metrics
