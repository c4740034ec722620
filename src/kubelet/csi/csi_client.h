// Calls to a CSI driver's Node service. As upstream, every call opens its own connection to the
// driver's endpoint (a unix socket path, with or without "unix://") and closes it after, so a
// restarted driver is simply reached again. Thread-safe.
#ifndef KUBELET_KUBELET_CSI_CSI_CLIENT_H_
#define KUBELET_KUBELET_CSI_CSI_CLIENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kubelet::csi {

// NodeGetInfo's answer.
struct NodeInfo {
  std::string node_id;
  int64_t max_volumes_per_node = 0;
  std::map<std::string, std::string> topology;  // accessible_topology.segments
};

class CsiClient {
 public:
  virtual ~CsiClient() = default;
  virtual absl::StatusOr<NodeInfo> NodeGetInfo(const std::string& endpoint,
                                               absl::Duration timeout) = 0;
};

std::unique_ptr<CsiClient> NewGrpcCsiClient();

}  // namespace kubelet::csi

#endif  // KUBELET_KUBELET_CSI_CSI_CLIENT_H_
