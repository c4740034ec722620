#include "gtest/gtest.h"
#include "kubelet/stats/cri_stats_provider.h"

namespace kubelet::stats {
namespace {

TEST(PodsCgroupPath, FollowsTheContainerManagerLayout) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.cgroups_per_qos = true;
  c.cgroup_driver = "cgroupfs";
  c.cgroup_root = "";
  EXPECT_EQ(PodsCgroupPath(c), "/kubepods");
  c.cgroup_root = "/";
  EXPECT_EQ(PodsCgroupPath(c), "/kubepods");
  c.cgroup_root = "/custom";
  EXPECT_EQ(PodsCgroupPath(c), "/custom/kubepods");
  c.cgroup_driver = "systemd";
  EXPECT_EQ(PodsCgroupPath(c), "/custom/kubepods.slice");
  c.cgroups_per_qos = false;
  EXPECT_EQ(PodsCgroupPath(c), "/custom");
  c.cgroup_root = "/";
  EXPECT_EQ(PodsCgroupPath(c), "");
}

TEST(CRIStatsProviderOptionsFromConfig, MapsSystemContainersAndCacheTtl) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.kubelet_cgroups = "/kubelet.slice";
  c.system_cgroups = "/system.slice";
  c.volume_stats_agg_period = absl::Seconds(30);
  c.cgroup_driver = "systemd";
  c.cgroups_per_qos = true;
  c.cgroup_root = "/";
  CRIStatsProviderOptions o = CRIStatsProviderOptionsFromConfig(c);
  EXPECT_EQ(o.kubelet_cgroup, "/kubelet.slice");
  EXPECT_EQ(o.system_cgroup, "/system.slice");
  EXPECT_EQ(o.du_cache_ttl, absl::Seconds(30));
  EXPECT_TRUE(o.systemd_cgroup_names);
  EXPECT_EQ(o.pods_cgroup, "/kubepods.slice");
  // Left to the wiring.
  EXPECT_EQ(o.runtime, nullptr);
  EXPECT_TRUE(o.runtime_cgroup.empty());

  c.volume_stats_agg_period = absl::ZeroDuration();
  c.cgroup_driver = "cgroupfs";
  o = CRIStatsProviderOptionsFromConfig(c);
  EXPECT_EQ(o.du_cache_ttl, absl::Minutes(1));
  EXPECT_FALSE(o.systemd_cgroup_names);
}

}  // namespace
}  // namespace kubelet::stats
