#include "gtest/gtest.h"
#include "kubelet/logs/container_log_manager_impl.h"

namespace kubelet::logs {
namespace {

TEST(ContainerLogManagerOptionsFromConfig, MapsRotationLimits) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.container_log_max_size = "5Mi";
  c.container_log_max_files = 3;
  ContainerLogManagerOptions o = ContainerLogManagerOptionsFromConfig(c);
  EXPECT_EQ(o.max_size, "5Mi");
  EXPECT_EQ(o.max_files, 3);
  // Left to the wiring and the defaults.
  EXPECT_EQ(o.pod_logs_root, "/var/log/pods");
  EXPECT_EQ(o.monitor_interval, absl::Seconds(10));
}

TEST(ContainerLogManagerOptionsFromConfig, UpstreamDefaults) {
  ContainerLogManagerOptions o =
      ContainerLogManagerOptionsFromConfig(config::DefaultKubeletConfiguration());
  EXPECT_EQ(o.max_size, "10Mi");
  EXPECT_EQ(o.max_files, 5);
}

}  // namespace
}  // namespace kubelet::logs
