#include "kubelet/images/image_gc_manager.h"

namespace kubelet::images {

ImageGCOptions ImageGCOptionsFromConfig(const config::KubeletConfiguration& c) {
  ImageGCOptions o;
  o.policy.high_threshold_percent = c.image_gc_high_threshold_percent;
  o.policy.low_threshold_percent = c.image_gc_low_threshold_percent;
  o.policy.min_age = c.image_minimum_gc_age;
  return o;
}

}  // namespace kubelet::images
