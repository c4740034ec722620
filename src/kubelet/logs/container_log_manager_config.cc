#include "kubelet/logs/container_log_manager_impl.h"

namespace kubelet::logs {

ContainerLogManagerOptions ContainerLogManagerOptionsFromConfig(
    const config::KubeletConfiguration& c) {
  ContainerLogManagerOptions o;
  o.max_size = c.container_log_max_size;
  o.max_files = c.container_log_max_files;
  return o;
}

}  // namespace kubelet::logs
