#include <map>
#include <string>

#include "gtest/gtest.h"
#include "kubelet/eviction/eviction.h"

namespace kubelet::eviction {
namespace {

TEST(ManagerOptionsFromConfig, MapsThresholdsAndPeriods) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.eviction_hard = {{"memory.available", "100Mi"}};
  c.eviction_soft = {{"nodefs.available", "15%"}};
  c.eviction_soft_grace_period = {{"nodefs.available", "90s"}};
  c.eviction_minimum_reclaim = {{"memory.available", "50Mi"}};
  c.enforce_node_allocatable = {"pods"};
  c.eviction_pressure_transition_period = absl::Minutes(2);
  c.eviction_max_pod_grace_period = 30;
  c.kernel_memcg_notification = false;
  absl::StatusOr<ManagerOptions> o = ManagerOptionsFromConfig(c);
  ASSERT_TRUE(o.ok()) << o.status();
  std::map<std::string, const Threshold*> by;
  for (const Threshold& t : o->thresholds) by[t.signal] = &t;
  ASSERT_EQ(by.size(), 3u);  // allocatableMemory.available with "pods" enforced
  EXPECT_TRUE(by[kSignalMemoryAvailable]->hard());
  EXPECT_EQ(by[kSignalMemoryAvailable]->MinReclaim(0), 50 * 1024 * 1024);
  EXPECT_EQ(by[kSignalAllocatableMemoryAvailable]->String(), "100Mi");
  EXPECT_EQ(by[kSignalNodeFsAvailable]->grace_period, absl::Seconds(90));
  EXPECT_EQ(o->pressure_transition_period, absl::Minutes(2));
  EXPECT_EQ(o->max_pod_grace_period_seconds, 30);
  EXPECT_FALSE(o->kernel_memcg_notification);
  EXPECT_EQ(o->pods_cgroup, "");
  // Left to the wiring.
  EXPECT_FALSE(o->summary);
  EXPECT_EQ(o->memory_cgroup_root, "");
}

TEST(ManagerOptionsFromConfig, MemcgNotificationGetsThePodsCgroup) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.kernel_memcg_notification = true;
  c.cgroups_per_qos = true;
  c.cgroup_root = "/";
  c.cgroup_driver = "systemd";
  absl::StatusOr<ManagerOptions> o = ManagerOptionsFromConfig(c);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->kernel_memcg_notification);
  EXPECT_EQ(o->pods_cgroup, "/kubepods.slice");
}

TEST(ManagerOptionsFromConfig, BadThresholdsAreErrors) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.eviction_soft = {{"memory.available", "1Gi"}};
  absl::StatusOr<ManagerOptions> o = ManagerOptionsFromConfig(c);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().message(),
            "no grace period specified for soft eviction threshold memory.available");
}

}  // namespace
}  // namespace kubelet::eviction
