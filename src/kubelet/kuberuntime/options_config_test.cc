#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kubelet/kuberuntime/options.h"

namespace kubelet::kuberuntime {
namespace {

TEST(RuntimeOptionsFromConfig, MapsDnsSeccompAndImagePulls) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.cluster_dns = {"10.0.0.10"};
  c.cluster_domain = "cluster.local";
  c.resolv_conf = "";
  c.seccomp_default = true;
  c.serialize_image_pulls = false;
  c.max_parallel_image_pulls = 3;
  c.registry_pull_qps = 0;
  c.registry_burst = 7;
  Options o = RuntimeOptionsFromConfig(c, config::FeatureGate());
  EXPECT_EQ(o.cluster_dns, std::vector<std::string>{"10.0.0.10"});
  EXPECT_EQ(o.cluster_domain, "cluster.local");
  EXPECT_EQ(o.resolv_conf, "");
  EXPECT_TRUE(o.seccomp_default);
  EXPECT_FALSE(o.serialize_image_pulls);
  EXPECT_EQ(o.max_parallel_image_pulls, 3);
  EXPECT_EQ(o.registry_pull_qps, 0);
  EXPECT_EQ(o.registry_burst, 7);
  // Left to the wiring.
  EXPECT_EQ(o.recorder, nullptr);
  EXPECT_TRUE(o.node_name.empty());
}

TEST(RuntimeOptionsFromConfig, CfsQuotaPeriodOnlyWithTheGate) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.cpu_cfs_quota = false;
  c.cpu_cfs_quota_period = absl::Milliseconds(50);
  config::FeatureGate gates;
  Options o = RuntimeOptionsFromConfig(c, gates);
  EXPECT_FALSE(o.cpu_cfs_quota);
  EXPECT_EQ(o.cpu_cfs_quota_period, absl::Milliseconds(100));
  ASSERT_TRUE(gates.SetFromMap({{"CustomCPUCFSQuotaPeriod", true}}).ok());
  EXPECT_EQ(RuntimeOptionsFromConfig(c, gates).cpu_cfs_quota_period, absl::Milliseconds(50));
}

}  // namespace
}  // namespace kubelet::kuberuntime
