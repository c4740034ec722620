// The CSI volume plugin ("kubernetes.io/csi") for the VolumeManager (volume/external_plugin.h).
// This step: CSI inline ephemeral volumes (a pod's `csi:` volume), as upstream v1.28:
//  * the driver must be registered ("driver name D not found in the list of registered CSI
//    drivers") and its CSIDriver must allow the Ephemeral lifecycle mode ("volume mode
//    \"Ephemeral\" not supported by driver D (only supports [...])");
//  * the volume handle is "csi-" + hex(sha256(pod UID + volume name)); nothing is attached or
//    staged;
//  * <volume dir>/vol_data.json (specVolID, volumeHandle, driverName, nodeName, attachmentID,
//    volumeLifecycleMode, as Go's json.Encoder writes them) is written before NodePublishVolume;
//    the target is <volume dir>/mount, created by the driver;
//  * the volume context is the volume's volumeAttributes plus, with podInfoOnMount,
//    csi.storage.k8s.io/{pod.name, pod.namespace, pod.uid, serviceAccount.name, ephemeral};
//  * tear-down reads vol_data.json (also after a kubelet restart), calls NodeUnpublishVolume and
//    removes the mount dir (never across a mount), the file and the directory.
// Not yet: PVC-backed volumes, staging, attach, nodePublishSecretRef, fsGroup, block volumes.
// Thread-safety: stateless but for the borrowed collaborators (all thread-safe).
#ifndef KUBELET_KUBELET_CSI_CSI_VOLUME_PLUGIN_H_
#define KUBELET_KUBELET_CSI_CSI_VOLUME_PLUGIN_H_

#include <string>

#include "absl/time/time.h"
#include "kubelet/csi/csi_client.h"
#include "kubelet/csi/csi_driver.h"
#include "kubelet/csi/registration_handler.h"
#include "kubelet/volume/external_plugin.h"

namespace kubelet::csi {

inline constexpr char kCSIPluginName[] = "kubernetes.io/csi";

// "csi-" + lowercase hex SHA-256 of `data`.
std::string CsiHandle(const std::string& data);

class CsiVolumePlugin final : public volume::ExternalVolumePlugin {
 public:
  // Borrowed; `drivers_api` may be null (standalone: every driver has the defaults, so inline
  // volumes are refused, as upstream without a CSIDriver).
  CsiVolumePlugin(DriverRegistry& drivers, CsiClient& client, CSIDriverLister* drivers_api,
                  std::string node_name, absl::Duration timeout = absl::Minutes(2))
      : drivers_(drivers),
        client_(client),
        drivers_api_(drivers_api),
        node_name_(std::move(node_name)),
        timeout_(timeout) {}

  std::string Name() const override { return kCSIPluginName; }
  bool CanSupport(const api::Volume& volume) const override;
  absl::StatusOr<volume::ExternalVolume> SetUp(const api::Pod& pod, const api::Volume& volume,
                                               const std::string& dir) override;
  absl::Status TearDown(const std::string& pod_uid, const std::string& dir) override;

 private:
  DriverRegistry& drivers_;
  CsiClient& client_;
  CSIDriverLister* drivers_api_;
  const std::string node_name_;
  const absl::Duration timeout_;
};

}  // namespace kubelet::csi

#endif  // KUBELET_KUBELET_CSI_CSI_VOLUME_PLUGIN_H_
