#include "kubelet/stats/summary.h"

#include <string>

#include "gtest/gtest.h"
#include "kubelet/stats/resource_metrics.h"
#include "prometheus/text_serializer.h"

namespace kubelet::stats {
namespace {

TEST(SummaryToJsonTest, InvalidUtf8FromTheRuntimeIsReplacedNotThrown) {
  Summary s;
  s.node.node_name = "node";
  PodStats pod;
  pod.pod_ref = {"web", "default", "u1"};
  ContainerStats c;
  c.name = "app\xff\xfe";  // a container name read back from corrupt runtime labels
  pod.containers.push_back(c);
  s.pods.push_back(pod);
  const std::string out = SummaryToJson(s);
  EXPECT_NE(out.find("\"name\":\"app\xEF\xBF\xBD\xEF\xBF\xBD\""), std::string::npos) << out;
}

PodStats PodWithClaims() {
  PodStats pod;
  pod.pod_ref = {"web", "default", "u1"};
  VolumeStats claim;
  claim.name = "data";
  claim.fs.capacity_bytes = 1000;
  claim.fs.used_bytes = 10;
  claim.pvc_ref = PVCReference{"data-web-0", "default"};
  claim.abnormal = false;
  VolumeStats scratch;
  scratch.name = "scratch";
  scratch.fs.used_bytes = 5;
  pod.volumes = {claim, scratch};
  return pod;
}

TEST(SummaryToJsonTest, ClaimVolumesCarryTheirPvcRef) {
  Summary s;
  s.node.node_name = "node";
  s.pods.push_back(PodWithClaims());
  const std::string out = SummaryToJson(s);
  EXPECT_NE(out.find(R"("name":"data","pvcRef":{"name":"data-web-0","namespace":"default"},)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(R"("volumeHealthStats":{"abnormal":false})"), std::string::npos) << out;
  EXPECT_EQ(out.find(R"("name":"scratch","pvcRef")"), std::string::npos) << out;
}

TEST(VolumeStatsMetricsTest, OneSampleSetPerClaim) {
  // The same claim in two pods counts once; volumes without a claim are left out.
  const std::string text = prometheus::TextSerializer().Serialize(
      VolumeStatsMetricFamilies({PodWithClaims(), PodWithClaims()}));
  EXPECT_NE(text.find("kubelet_volume_stats_capacity_bytes{namespace=\"default\","
                      "persistentvolumeclaim=\"data-web-0\"} 1000"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kubelet_volume_stats_used_bytes{namespace=\"default\","
                      "persistentvolumeclaim=\"data-web-0\"} 10"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kubelet_volume_stats_health_status_abnormal{namespace=\"default\","
                      "persistentvolumeclaim=\"data-web-0\"} 0"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("kubelet_volume_stats_inodes{"), std::string::npos) << text;
  size_t n = 0;
  for (size_t at = text.find("kubelet_volume_stats_capacity_bytes{"); at != std::string::npos;
       at = text.find("kubelet_volume_stats_capacity_bytes{", at + 1)) {
    ++n;
  }
  EXPECT_EQ(n, 1u);
}

}  // namespace
}  // namespace kubelet::stats
