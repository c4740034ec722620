// The CSI volume plugin ("kubernetes.io/csi") for the VolumeManager (volume/external_plugin.h),
// as upstream v1.28's pkg/volume/csi.
//
// Persistent volumes (a claim bound to a PV with a `csi` source):
//  * the driver must be registered ("driver name D not found in the list of registered CSI
//    drivers");
//  * attach (when the CSIDriver says attachRequired, the default without one): the volume's
//    unique name "kubernetes.io/csi/<driver>^<handle>" joins volumesInUse at once (the Node
//    status is asked for an update), and nothing is mounted before the Node reports it; then
//    the VolumeAttachment "csi-" + hex(sha256(handle + driver + node)) that the attach/detach
//    controller creates must be attached; its attachmentMetadata is the publish context;
//  * stage (when the driver has STAGE_UNSTAGE_VOLUME): NodeStageVolume once per volume on
//    <root>/plugins/kubernetes.io/csi/<driver>/<hex(sha256(handle))>/globalmount, with
//    vol_data.json (driverName, volumeHandle) beside it;
//  * publish: NodePublishVolume on <volume dir>/mount (the volume dir is named after the PV),
//    with vol_data.json (specVolID, volumeHandle, driverName, nodeName, attachmentID,
//    volumeLifecycleMode) written first; the access mode from the PV's first access mode, the
//    PV's fsType and mountOptions, readOnly from the claim or the PV, the volume context from
//    the PV's volumeAttributes plus the pod's info with podInfoOnMount; then the pod's fsGroup
//    per the CSIDriver's fsGroupPolicy (File: always; ReadWriteOnceWithFSType, the default: when
//    the PV has an fsType and is ReadWriteOnce; None: never), or handed to the driver as
//    volume_mount_group when it has VOLUME_MOUNT_GROUP;
//  * tear-down: NodeUnpublishVolume, the volume dir removed; when no pod dir on disk uses the
//    volume any more, NodeUnstageVolume and the staging dir removed, and the volume leaves
//    volumesInUse (so the controller may detach it).
// Inline ephemeral volumes (a pod's `csi:` volume): the CSIDriver must allow the Ephemeral
// lifecycle mode ("volume mode \"Ephemeral\" not supported by driver D (only supports [...])"),
// the handle is "csi-" + hex(sha256(pod UID + volume name)), nothing is attached or staged, and
// the volume context gets csi.storage.k8s.io/ephemeral "true".
// Everything is found again on disk after a kubelet restart (vol_data.json files), so volumes
// in use are neither remounted nor forgotten.
// Secrets (nodeStageSecretRef, nodePublishSecretRef) are read when the volume is staged /
// published; CSIDriver tokenRequests put the pod's service account tokens into the volume
// context (csi.storage.k8s.io/serviceAccount.tokens).
// Not yet: block volumes, NodeExpandVolume, requiresRepublish, SELinux mount context.
// Thread-safety: thread-safe; calls for one volume (unique name) are serialized.
#ifndef KUBELET_KUBELET_CSI_CSI_VOLUME_PLUGIN_H_
#define KUBELET_KUBELET_CSI_CSI_VOLUME_PLUGIN_H_

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kubelet/csi/csi_client.h"
#include "kubelet/csi/csi_driver.h"
#include "kubelet/csi/registration_handler.h"
#include "kubelet/volume/external_plugin.h"
#include "kubelet/volume/token_manager.h"

namespace kubelet::csi {

inline constexpr char kCSIPluginName[] = "kubernetes.io/csi";

// "csi-" + lowercase hex SHA-256 of `data`.
std::string CsiHandle(const std::string& data);

struct CsiVolumePluginOptions {
  std::string node_name;
  std::string root_dir = "/var/lib/kubelet";
  // Bound of each call to the driver (upstream csiTimeout).
  absl::Duration timeout = absl::Minutes(2);
  // How long one SetUp waits, in all, for the volume to be reported in use and attached before
  // it fails (the volume manager retries it).
  absl::Duration attach_wait = absl::Seconds(15);
  // Bound of the calls behind GetVolumeStats, and how long its answers are reused.
  absl::Duration stats_timeout = absl::Seconds(10);
  absl::Duration stats_cache_ttl = absl::Seconds(30);
  // The volumes in use changed: the Node status should be updated now. Called without the
  // plugin's state lock (possibly under a volume's lock); must not block.
  std::function<void()> in_use_changed;
  // A secret's data (nodeStageSecretRef, nodePublishSecretRef); unset: such volumes fail.
  std::function<absl::StatusOr<std::map<std::string, std::string>>(const std::string& ns,
                                                                   const std::string& name)>
      get_secret;
  // The pod's service account tokens for CSIDriver tokenRequests; null: such drivers fail.
  // Borrowed.
  volume::TokenManager* tokens = nullptr;
};

class CsiVolumePlugin final : public volume::ExternalVolumePlugin {
 public:
  // Borrowed; `drivers_api` and `attachments` may be null (standalone: every driver has the
  // defaults, so inline volumes are refused, as upstream without a CSIDriver, and volumes that
  // need attaching wait forever).
  CsiVolumePlugin(DriverRegistry& drivers, CsiClient& client, CSIDriverLister* drivers_api,
                  VolumeAttachmentGetter* attachments, CsiVolumePluginOptions options);

  std::string Name() const override { return kCSIPluginName; }
  bool CanSupport(const volume::VolumeSpec& spec) const override;
  absl::StatusOr<volume::ExternalVolume> SetUp(const api::Pod& pod, const volume::VolumeSpec& spec,
                                               const std::string& dir) override;
  absl::Status TearDown(const std::string& pod_uid, const std::string& dir) override;
  // NodeGetVolumeStats on the published target, when the driver has GET_VOLUME_STATS; answers
  // are reused for stats_cache_ttl.
  absl::StatusOr<volume::VolumeUsageStats> GetVolumeStats(const std::string& dir) override;
  std::vector<std::string> VolumesInUse() override;
  // Retries the releases (unstage, volumesInUse) that failed at tear-down or were found pending
  // on disk after a restart.
  void Housekeeping() override;
  // The pod's claim on its attachable volumes ends (they leave volumesInUse unless still staged
  // or published, or wanted by another pod).
  void PodRemoved(const std::string& pod_uid) override;
  void MarkVolumesAsReportedInUse(const std::vector<std::string>& names) override;

  // <root>/plugins/kubernetes.io/csi/<driver>/<hex(sha256(handle))>/globalmount.
  std::string StagingPath(const std::string& driver, const std::string& handle) const;

 private:
  absl::StatusOr<volume::ExternalVolume> SetUpInline(const api::Pod& pod, const api::Volume& volume,
                                                     const std::string& dir);
  absl::StatusOr<volume::ExternalVolume> SetUpPersistent(const api::Pod& pod,
                                                         const volume::VolumeSpec& spec,
                                                         const std::string& dir);
  absl::StatusOr<CSIDriverInfo> DriverInfo(const std::string& driver);
  absl::StatusOr<volume::VolumeUsageStats> ReadVolumeStats(const std::string& dir);
  // The volume context keys every publish gets: the pod's info with podInfoOnMount, the
  // service account tokens of tokenRequests.
  absl::Status AddPodContext(const api::Pod& pod, const CSIDriverInfo& info, bool ephemeral,
                             std::map<std::string, std::string>* context);
  // The data of the secret `ref` names into *out ("failed to find the secret ..." when it
  // cannot be read); nothing when there is no reference.
  absl::Status Secrets(const std::optional<api::SecretReference>& ref,
                       std::map<std::string, std::string>* out);
  // Adds `unique` to volumesInUse for the pod `pod_uid` (until PodRemoved) and waits until the
  // Node reports it (until `deadline`).
  absl::Status WaitReportedInUse(const std::string& unique, const std::string& pod_uid,
                                 absl::Time deadline, const std::function<bool()>& cancelled);
  // Waits for the VolumeAttachment `name` to be attached; returns its attachmentMetadata.
  absl::StatusOr<std::map<std::string, std::string>> WaitForAttach(
      const std::string& name, const std::string& pv_name, absl::Time deadline,
      const std::function<bool()>& cancelled);
  // After the last pod dir using (driver, handle) is gone: unstage and drop it from in-use.
  absl::Status ReleaseIfUnused(const std::string& driver, const std::string& handle);
  // Rebuilds in_use_ from the vol_data.json files on disk, once.
  void Reconstruct();
  std::shared_ptr<absl::Mutex> VolumeLock(const std::string& unique);

  DriverRegistry& drivers_;
  CsiClient& client_;
  CSIDriverLister* drivers_api_;
  VolumeAttachmentGetter* attachments_;
  const CsiVolumePluginOptions options_;

  absl::Mutex mu_;
  bool reconstructed_ ABSL_GUARDED_BY(mu_) = false;
  // Attachable volumes staged or published (rebuilt from disk after a restart), and those that
  // pods want (from their first set-up attempt until the volume manager forgets the pod):
  // volumesInUse is the union.
  std::set<std::string> in_use_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> wanted_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> reported_ ABSL_GUARDED_BY(mu_);  // what the Node reports in use
  std::set<std::string> staged_ ABSL_GUARDED_BY(mu_);    // staged by this process
  // SetUps under way, by volume (their volume is neither unstaged nor dropped from in use).
  std::map<std::string, int> setting_up_ ABSL_GUARDED_BY(mu_);
  // (driver, handle) whose release is to be retried by Housekeeping.
  std::set<std::pair<std::string, std::string>> pending_release_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<absl::Mutex>> volume_locks_ ABSL_GUARDED_BY(mu_);
  struct CachedStats {
    volume::VolumeUsageStats stats;
    absl::Time at;
  };
  std::map<std::string, CachedStats> stats_cache_ ABSL_GUARDED_BY(mu_);  // by volume dir
};

}  // namespace kubelet::csi

#endif  // KUBELET_KUBELET_CSI_CSI_VOLUME_PLUGIN_H_
