// Calls to a CSI driver's Node service. As upstream, every call opens its own connection to the
// driver's endpoint (a unix socket path, with or without "unix://") and closes it after, so a
// restarted driver is simply reached again. Thread-safe.
#ifndef KUBELET_KUBELET_CSI_CSI_CLIENT_H_
#define KUBELET_KUBELET_CSI_CSI_CLIENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
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

// NodeGetCapabilities' answer (csi.v1 NodeServiceCapability.RPC types).
struct NodeCapabilities {
  bool stage_unstage = false;             // STAGE_UNSTAGE_VOLUME
  bool get_volume_stats = false;          // GET_VOLUME_STATS
  bool expand = false;                    // EXPAND_VOLUME
  bool volume_condition = false;          // VOLUME_CONDITION
  bool single_node_multi_writer = false;  // SINGLE_NODE_MULTI_WRITER
  bool volume_mount_group = false;        // VOLUME_MOUNT_GROUP
};

// csi.v1 VolumeCapability: a block or a mount volume, and its access mode.
struct VolumeCapability {
  bool block = false;
  std::string fs_type;
  std::vector<std::string> mount_flags;
  std::string volume_mount_group;
  int access_mode = 1;  // VolumeCapability.AccessMode.Mode (1: SINGLE_NODE_WRITER)
};

struct StageRequest {
  std::string volume_id;
  std::map<std::string, std::string> publish_context;
  std::string staging_target_path;
  VolumeCapability capability;
  std::map<std::string, std::string> secrets;
  std::map<std::string, std::string> volume_context;
};

struct PublishRequest {
  std::string volume_id;
  std::map<std::string, std::string> publish_context;
  std::string staging_target_path;  // empty: the driver does not stage
  std::string target_path;
  VolumeCapability capability;
  bool readonly = false;
  std::map<std::string, std::string> secrets;
  std::map<std::string, std::string> volume_context;
};

// NodeGetVolumeStats' answer; a usage the driver did not report stays nullopt.
struct VolumeUsage {
  int64_t available = 0;
  int64_t total = 0;
  int64_t used = 0;
};
struct VolumeStats {
  std::optional<VolumeUsage> bytes;
  std::optional<VolumeUsage> inodes;
  bool abnormal = false;  // volume_condition
  std::string message;
};

// Errors carry the gRPC code as the absl code and Go's text ("rpc error: code = NotFound desc =
// ...").
class CsiClient {
 public:
  virtual ~CsiClient() = default;
  virtual absl::StatusOr<NodeInfo> NodeGetInfo(const std::string& endpoint,
                                               absl::Duration timeout) = 0;
  virtual absl::StatusOr<NodeCapabilities> NodeGetCapabilities(const std::string& endpoint,
                                                               absl::Duration timeout) = 0;
  virtual absl::Status NodeStageVolume(const std::string& endpoint, const StageRequest& r,
                                       absl::Duration timeout) = 0;
  virtual absl::Status NodeUnstageVolume(const std::string& endpoint, const std::string& volume_id,
                                         const std::string& staging_target_path,
                                         absl::Duration timeout) = 0;
  virtual absl::Status NodePublishVolume(const std::string& endpoint, const PublishRequest& r,
                                         absl::Duration timeout) = 0;
  virtual absl::Status NodeUnpublishVolume(const std::string& endpoint,
                                           const std::string& volume_id,
                                           const std::string& target_path,
                                           absl::Duration timeout) = 0;
  virtual absl::StatusOr<VolumeStats> NodeGetVolumeStats(const std::string& endpoint,
                                                         const std::string& volume_id,
                                                         const std::string& volume_path,
                                                         absl::Duration timeout) = 0;
};

std::unique_ptr<CsiClient> NewGrpcCsiClient();

}  // namespace kubelet::csi

#endif  // KUBELET_KUBELET_CSI_CSI_CLIENT_H_
