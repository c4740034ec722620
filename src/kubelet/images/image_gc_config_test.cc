#include "gtest/gtest.h"
#include "kubelet/images/image_gc_manager.h"

namespace kubelet::images {
namespace {

TEST(ImageGCOptionsFromConfig, MapsThePolicy) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.image_gc_high_threshold_percent = 90;
  c.image_gc_low_threshold_percent = 70;
  c.image_minimum_gc_age = absl::Minutes(7);
  ImageGCOptions o = ImageGCOptionsFromConfig(c);
  EXPECT_EQ(o.policy.high_threshold_percent, 90);
  EXPECT_EQ(o.policy.low_threshold_percent, 70);
  EXPECT_EQ(o.policy.min_age, absl::Minutes(7));
  // Left to the wiring.
  EXPECT_EQ(o.runtime, nullptr);
  EXPECT_EQ(o.sandbox_image, "registry.k8s.io/pause:3.9");
}

TEST(ImageGCOptionsFromConfig, DefaultsMatchThePolicyDefaults) {
  ImageGCOptions o = ImageGCOptionsFromConfig(config::DefaultKubeletConfiguration());
  EXPECT_EQ(o.policy.high_threshold_percent, ImageGCPolicy().high_threshold_percent);
  EXPECT_EQ(o.policy.low_threshold_percent, ImageGCPolicy().low_threshold_percent);
  EXPECT_EQ(o.policy.min_age, ImageGCPolicy().min_age);
}

}  // namespace
}  // namespace kubelet::images
