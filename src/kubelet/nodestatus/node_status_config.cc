#include "kubelet/nodestatus/node_status.h"

namespace kubelet::nodestatus {

NodeStatusOptions NodeStatusOptionsFromConfig(const config::KubeletConfiguration& c) {
  NodeStatusOptions o;
  o.kubelet_port = c.port;
  o.register_with_taints = c.register_with_taints;
  // A taint's timeAdded in whole seconds, as the Node carries it.
  for (api::Taint& t : o.register_with_taints) {
    if (t.time_added) t.time_added->nanos = 0;
  }
  o.register_node = c.register_node;
  o.provider_id = c.provider_id;
  o.enable_controller_attach_detach = c.enable_controller_attach_detach;
  if (c.node_status_update_frequency > absl::ZeroDuration()) {
    o.update_frequency = c.node_status_update_frequency;
  }
  if (c.node_status_report_frequency > absl::ZeroDuration()) {
    o.report_frequency = c.node_status_report_frequency;
  }
  if (c.node_lease_duration_seconds > 0) o.lease_duration_seconds = c.node_lease_duration_seconds;
  o.max_images = c.node_status_max_images;
  return o;
}

}  // namespace kubelet::nodestatus
