// A volume plugin that lives outside this component (the CSI plugin, src/kubelet/csi), plugged
// into the VolumeManager through VolumeManagerOptions::external_plugins. The manager keeps the
// bookkeeping (desired pods, claims resolved to their PersistentVolumes, retries, FailedMount
// events, the wait for a pod's volumes, orphans, subPaths); the plugin sets up and tears down one
// volume directory, <root>/pods/<uid>/volumes/<escaped Name()>/<VolumeSpec::Name()>, and whatever
// it shares between pods (e.g. a CSI volume's staging mount).
// Thread-safety: called concurrently for different pods; calls for one volume are serialized.
#ifndef KUBELET_KUBELET_VOLUME_EXTERNAL_PLUGIN_H_
#define KUBELET_KUBELET_VOLUME_EXTERNAL_PLUGIN_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/pod.h"
#include "api/storage.h"

namespace kubelet::volume {

// A volume to set up (upstream volume.Spec): a pod's own volume, or the PersistentVolume its
// claim (persistentVolumeClaim or ephemeral) is bound to.
struct VolumeSpec {
  const api::Volume* volume = nullptr;        // the pod's volume; always set
  const api::PersistentVolume* pv = nullptr;  // claim-backed volumes: the bound PV
  bool read_only = false;                     // claim-backed: the claim's readOnly
  // Whether the set-up is no longer wanted (the pod went away, the kubelet is stopping): a
  // plugin that waits checks it and gives up. Null: never.
  std::function<bool()> cancelled;
  // The volume directory's name: the PV's name for claim-backed volumes, else the volume's.
  const std::string& Name() const { return pv != nullptr ? pv->metadata.name : volume->name; }
};

// What SetUp made: the path containers mount, and whether they mount it read-only.
struct ExternalVolume {
  std::string path;
  bool read_only = false;
};

// A volume's usage as its plugin measures it (CSI NodeGetVolumeStats); unknown figures unset.
struct VolumeUsageStats {
  std::optional<int64_t> capacity_bytes, available_bytes, used_bytes;
  std::optional<int64_t> inodes, inodes_free, inodes_used;
  std::optional<bool> abnormal;  // the volume's condition, when the driver reports one
};

class ExternalVolumePlugin {
 public:
  virtual ~ExternalVolumePlugin() = default;
  // The plugin name, e.g. "kubernetes.io/csi".
  virtual std::string Name() const = 0;
  virtual bool CanSupport(const VolumeSpec& spec) const = 0;
  // Sets up `spec` for `pod` below `dir` (created by the plugin); idempotent. An error is
  // reported as a failed MountVolume.SetUp and retried.
  virtual absl::StatusOr<ExternalVolume> SetUp(const api::Pod& pod, const VolumeSpec& spec,
                                               const std::string& dir) = 0;
  // Tears down the volume at `dir` from what is on disk (also after a kubelet restart) and
  // removes `dir`; when it was the last user of a shared (staged) volume, releases that too. An
  // error keeps it for a later attempt.
  virtual absl::Status TearDown(const std::string& pod_uid, const std::string& dir) = 0;

  // The usage of the volume set up at `dir`; Unimplemented when the plugin cannot tell.
  virtual absl::StatusOr<VolumeUsageStats> GetVolumeStats(const std::string& dir) {
    (void)dir;
    return absl::UnimplementedError("no volume stats");
  }

  // Unique names of the attachable volumes this node uses or is setting up (Node
  // status.volumesInUse), e.g. "kubernetes.io/csi/<driver>^<handle>"; rebuilt from disk after a
  // restart.
  virtual std::vector<std::string> VolumesInUse() { return {}; }
  // Periodic clean-up (the volume manager's housekeeping thread), e.g. retrying releases.
  virtual void Housekeeping() {}
  // The volume manager forgot the pod (its volumes are torn down, or it never had one set up
  // and is gone): whatever the plugin keeps for it is released.
  virtual void PodRemoved(const std::string& pod_uid) { (void)pod_uid; }

  // The volumesInUse the Node's status now holds; a plugin mounts an attachable volume only
  // once it is reported (so the attach/detach controller does not detach it meanwhile).
  virtual void MarkVolumesAsReportedInUse(const std::vector<std::string>& names) { (void)names; }
};

}  // namespace kubelet::volume

#endif  // KUBELET_KUBELET_VOLUME_EXTERNAL_PLUGIN_H_
