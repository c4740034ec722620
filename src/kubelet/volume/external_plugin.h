// A volume plugin that lives outside this component (the CSI plugin, src/kubelet/csi), plugged
// into the VolumeManager through VolumeManagerOptions::external_plugins. The manager keeps the
// bookkeeping (desired pods, retries, FailedMount events, the wait for a pod's volumes, orphans,
// subPaths); the plugin sets up and tears down one volume directory,
// <root>/pods/<uid>/volumes/<escaped Name()>/<volume name>.
// Thread-safety: called concurrently for different pods; calls for one volume are serialized.
#ifndef KUBELET_KUBELET_VOLUME_EXTERNAL_PLUGIN_H_
#define KUBELET_KUBELET_VOLUME_EXTERNAL_PLUGIN_H_

#include <string>

#include "absl/status/statusor.h"
#include "api/pod.h"

namespace kubelet::volume {

// What SetUp made: the path containers mount, and whether they mount it read-only.
struct ExternalVolume {
  std::string path;
  bool read_only = false;
};

class ExternalVolumePlugin {
 public:
  virtual ~ExternalVolumePlugin() = default;
  // The plugin name, e.g. "kubernetes.io/csi".
  virtual std::string Name() const = 0;
  virtual bool CanSupport(const api::Volume& volume) const = 0;
  // Sets up `volume` of `pod` below `dir` (created by the plugin); idempotent. An error is
  // reported as a failed MountVolume.SetUp and retried.
  virtual absl::StatusOr<ExternalVolume> SetUp(const api::Pod& pod, const api::Volume& volume,
                                               const std::string& dir) = 0;
  // Tears down the volume at `dir` from what is on disk (also after a kubelet restart) and
  // removes `dir`; an error keeps it for a later attempt.
  virtual absl::Status TearDown(const std::string& pod_uid, const std::string& dir) = 0;
};

}  // namespace kubelet::volume

#endif  // KUBELET_KUBELET_VOLUME_EXTERNAL_PLUGIN_H_
