#include "gtest/gtest.h"
#include "kubelet/nodestatus/node_status.h"

namespace kubelet::nodestatus {
namespace {

TEST(NodeStatusOptionsFromConfig, MapsRegistrationAndPeriods) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.port = 11250;
  c.register_node = false;
  c.provider_id = "fake://node-a";
  c.enable_controller_attach_detach = false;
  c.node_status_update_frequency = absl::Seconds(4);
  c.node_status_report_frequency = absl::Minutes(2);
  c.node_lease_duration_seconds = 20;
  c.node_status_max_images = -1;
  NodeStatusOptions o = NodeStatusOptionsFromConfig(c);
  EXPECT_EQ(o.kubelet_port, 11250);
  EXPECT_FALSE(o.register_node);
  EXPECT_EQ(o.provider_id, "fake://node-a");
  EXPECT_FALSE(o.enable_controller_attach_detach);
  EXPECT_EQ(o.update_frequency, absl::Seconds(4));
  EXPECT_EQ(o.report_frequency, absl::Minutes(2));
  EXPECT_EQ(o.lease_duration_seconds, 20);
  EXPECT_EQ(o.max_images, -1);
  // Left to the wiring.
  EXPECT_TRUE(o.node_name.empty());
  EXPECT_TRUE(o.node_labels.empty());
}

TEST(NodeStatusOptionsFromConfig, UnsetPeriodsKeepTheDefaults) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.node_status_update_frequency = absl::ZeroDuration();
  c.node_status_report_frequency = absl::ZeroDuration();
  c.node_lease_duration_seconds = 0;
  NodeStatusOptions o = NodeStatusOptionsFromConfig(c);
  EXPECT_EQ(o.update_frequency, absl::Seconds(10));
  EXPECT_EQ(o.report_frequency, absl::Minutes(5));
  EXPECT_EQ(o.lease_duration_seconds, 40);
}

TEST(NodeStatusOptionsFromConfig, TaintsKeepTheirTimeInWholeSeconds) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.register_with_taints = {api::Taint{.key = "dedicated", .value = "x", .effect = "NoSchedule"},
                            api::Taint{.key = "gone",
                                       .effect = "NoExecute",
                                       .time_added = api::Time::FromUnix(1700000000, 500000000)}};
  NodeStatusOptions o = NodeStatusOptionsFromConfig(c);
  ASSERT_EQ(o.register_with_taints.size(), 2u);
  EXPECT_EQ(o.register_with_taints[0],
            (api::Taint{.key = "dedicated", .value = "x", .effect = "NoSchedule"}));
  EXPECT_EQ(o.register_with_taints[1].key, "gone");
  EXPECT_EQ(o.register_with_taints[1].effect, "NoExecute");
  EXPECT_EQ(o.register_with_taints[1].time_added, api::Time::FromUnix(1700000000));
}

}  // namespace
}  // namespace kubelet::nodestatus
