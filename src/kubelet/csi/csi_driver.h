// What a CSIDriver object (storage.k8s.io/v1) tells the kubelet about a driver, and the
// VolumeAttachments it waits for. Without the
// object (or without an API server) a driver gets upstream's defaults: attach required, no pod
// info on mount, Persistent volumes only, fsGroupPolicy ReadWriteOnceWithFSType.
#ifndef KUBELET_KUBELET_CSI_CSI_DRIVER_H_
#define KUBELET_KUBELET_CSI_CSI_DRIVER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/storage.h"
#include "apiclient/rest_client.h"

namespace kubelet::csi {

// CSIDriver spec.tokenRequests[].
struct CSITokenRequest {
  std::string audience;
  std::optional<int64_t> expiration_seconds;
};

struct CSIDriverInfo {
  bool attach_required = true;
  bool pod_info_on_mount = false;
  std::set<std::string> lifecycle_modes = {"Persistent"};  // "Persistent", "Ephemeral"
  std::string fs_group_policy = "ReadWriteOnceWithFSType";
  // Service account tokens of the pod handed to NodePublishVolume.
  std::vector<CSITokenRequest> token_requests;
};

// The CSIDriver's spec as CSIDriverInfo (defaults for members it leaves out).
CSIDriverInfo CSIDriverInfoFromJson(const nlohmann::json& object);

class CSIDriverLister {
 public:
  virtual ~CSIDriverLister() = default;
  // nullopt when there is no such CSIDriver; an error when it could not be read.
  virtual absl::StatusOr<std::optional<CSIDriverInfo>> Get(const std::string& name) = 0;
};

// GETs the object on each call (`client` borrowed).
std::unique_ptr<CSIDriverLister> NewApiCSIDriverLister(apiclient::RestClient& client);

// VolumeAttachments (storage.k8s.io/v1), made by the attach/detach controller and the driver's
// external-attacher.
class VolumeAttachmentGetter {
 public:
  virtual ~VolumeAttachmentGetter() = default;
  // nullopt when there is no such object; an error when it could not be read.
  virtual absl::StatusOr<std::optional<api::VolumeAttachment>> Get(const std::string& name) = 0;
};

// GETs the object on each call (`client` borrowed).
std::unique_ptr<VolumeAttachmentGetter> NewApiVolumeAttachmentGetter(apiclient::RestClient& client);

}  // namespace kubelet::csi

#endif  // KUBELET_KUBELET_CSI_CSI_DRIVER_H_
