#include "gtest/gtest.h"
#include "kubelet/clustercontent/api_content.h"

namespace kubelet::clustercontent {
namespace {

TEST(ObjectSourceStrategyFromConfig, IsTheChangeDetectionStrategy) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  EXPECT_EQ(ObjectSourceStrategyFromConfig(c), "Watch");
  c.config_map_and_secret_change_detection_strategy = "Cache";
  EXPECT_EQ(ObjectSourceStrategyFromConfig(c), "Cache");
}

}  // namespace
}  // namespace kubelet::clustercontent
