#include <string>

#include "kubelet/clustercontent/api_content.h"

namespace kubelet::clustercontent {

std::string ObjectSourceStrategyFromConfig(const config::KubeletConfiguration& c) {
  return c.config_map_and_secret_change_detection_strategy;
}

}  // namespace kubelet::clustercontent
