// Calls to a CSI driver's Node service. As upstream, every call opens its own connection to the
// driver's endpoint (a unix socket path, with or without "unix://") and closes it after, so a
// restarted driver is simply reached again. Thread-safe.
#ifndef KUBELET_KUBELET_CSI_CSI_CLIENT_H_
#define KUBELET_KUBELET_CSI_CSI_CLIENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kubelet::csi {

// NodeGetInfo's answer.
struct NodeInfo {
  std::string node_id;
  int64_t max_volumes_per_node = 0;
  std::map<std::string, std::string> topology;  // accessible_topology.segments
};

// NodePublishVolume's arguments (a mount volume; block volumes are not published yet).
struct PublishRequest {
  std::string volume_id;
  std::string staging_target_path;  // empty: the driver does not stage
  std::string target_path;
  std::string fs_type;
  std::vector<std::string> mount_flags;
  int access_mode = 1;  // csi.v1 VolumeCapability.AccessMode.Mode (1: SINGLE_NODE_WRITER)
  bool readonly = false;
  std::map<std::string, std::string> publish_context;
  std::map<std::string, std::string> volume_context;
  std::map<std::string, std::string> secrets;
};

// Errors carry the gRPC code as the absl code and Go's text ("rpc error: code = NotFound desc =
// ...").
class CsiClient {
 public:
  virtual ~CsiClient() = default;
  virtual absl::StatusOr<NodeInfo> NodeGetInfo(const std::string& endpoint,
                                               absl::Duration timeout) = 0;
  virtual absl::Status NodePublishVolume(const std::string& endpoint, const PublishRequest& r,
                                         absl::Duration timeout) = 0;
  virtual absl::Status NodeUnpublishVolume(const std::string& endpoint,
                                           const std::string& volume_id,
                                           const std::string& target_path,
                                           absl::Duration timeout) = 0;
};

std::unique_ptr<CsiClient> NewGrpcCsiClient();

}  // namespace kubelet::csi

#endif  // KUBELET_KUBELET_CSI_CSI_CLIENT_H_
