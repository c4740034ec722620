// VolumeManager: sets up and tears down the volumes of the pods on this node (upstream
// pkg/kubelet/volumemanager), for the emptyDir, hostPath and downwardAPI plugins (plugins.h) and
// the configMap, secret and projected plugins (content_plugins.h) whose objects and tokens come
// from `objects` / `tokens` (API-server mode; null standalone, where they fail as upstream's).
//
// State:
//   desired  pods whose volumes should be set up: added by PrepareForSync, removed by
//            CleanupTerminatedPod and by Housekeeping for pods no longer `active`.
//   claims   persistentVolumeClaim and generic ephemeral volumes are resolved (through
//            `claims`) to the PersistentVolume their claim is bound to, as upstream's
//            desired-state populator does, with its errors ("error processing PVC ns/name:
//            ..."); hostPath and local PVs are mounted as they are, CSI PVs go to the CSI plugin.
//   actual   volumes that are set up, per pod (host path, plugin, medium, sizeLimit); rebuilt
//            after a kubelet restart from <root>/pods/<uid>/volumes/kubernetes.io~<plugin>/<name>
//            (orphans found there are torn down by Housekeeping; volumes of pods still desired
//            are adopted again by their next PrepareForSync, which is idempotent).
//
// Reconciling is synchronous where upstream's reconciler is a loop: PrepareForSync sets up every
// volume of the pod that is not set up yet (and republishes downwardAPI, configMap, secret and
// projected files, which upstream remounts on each sync; first it registers the pod's objects
// with `objects`, and tearing the pod down unregisters them and drops its tokens) and retries
// failing ones every `retry_period` until `mount_timeout` (upstream WaitForAttachAndMount); then it
// fails with upstream's message
//   unable to attach or mount volumes: unmounted volumes=[a], unattached volumes=[a b]: timed
//   out waiting for the condition
// (the wait ends early, with the same message ending in the reason, when `pod_desired` says the
// pod is gone or Stop() was called) after logging each set-up failure ("MountVolume.SetUp failed
// for volume ..."). The unmount side (CleanupTerminatedPod, orphans in Housekeeping) unmounts tmpfs
// volumes and removes the volume directories; it never deletes across a mount point. subPath
// bind mounts (<root>/pods/<uid>/volume-subpaths, made by ContainerMounts, see subpath.h) are
// unmounted and removed first; a volume whose subPaths stay mounted is not torn down (retried
// later), and a pod with such bind mounts left on disk counts as having volumes. Housekeeping
// also measures the disk usage of emptyDir volumes with a sizeLimit (at most every
// `usage_check_period`) and reports a pod whose volume exceeds it through `on_limit_exceeded`.
//
// Thread-safety: every method may be called concurrently; calls for one pod are serialized by a
// per-pod operation lock (the pod workers serialize them already; Housekeeping skips a pod that
// is busy). Callbacks are never called with a lock held. Ownership: borrows the clock.
#ifndef KUBELET_KUBELET_VOLUME_VOLUME_MANAGER_H_
#define KUBELET_KUBELET_VOLUME_VOLUME_MANAGER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/pod.h"
#include "common/clock.h"
#include "cri/proto/api.pb.h"
#include "kubelet/container/pod_lifecycle.h"
#include "kubelet/events/event_recorder.h"
#include "kubelet/volume/cluster_content.h"
#include "kubelet/volume/container_mounts.h"
#include "kubelet/volume/external_plugin.h"
#include "kubelet/volume/token_manager.h"

namespace kubelet::volume {

struct VolumeManagerOptions {
  // --root-dir: volumes live under <root_dir>/pods/<uid>/volumes/.
  std::string root_dir = "/var/lib/kubelet";
  // Node allocatable memory in bytes (tmpfs size of memory-backed volumes without a smaller
  // pod limit or sizeLimit). Unset or <= 0: no size option (the kernel's default, half of RAM).
  std::function<int64_t()> node_allocatable_memory;
  // Node allocatable for downwardAPI resourceFieldRefs of containers without limits. Unset:
  // empty (an unset limit reads as 0).
  std::function<api::ResourceList()> node_allocatable;
  // A pod's emptyDir exceeds its sizeLimit (message as upstream's eviction manager writes it).
  // Called from the housekeeping thread without locks held.
  std::function<void(const std::string& pod_uid, const std::string& message)> on_limit_exceeded;
  // Whether the pod is still desired (e.g. its manifest was not removed). A wait for the
  // volumes of a pod that is not ends early, so its termination is not held up. Called from pod
  // worker threads without locks held. Unset: every pod is desired.
  std::function<bool(const std::string& pod_uid)> pod_desired;
  // FailedMount events (a volume's set-up failed; the wait for the pod's volumes timed out), as
  // upstream records them. Unset: dropped. Borrowed; must outlive the manager.
  events::EventRecorder* recorder = nullptr;
  // configMaps and secrets (API-server mode); null: standalone. Borrowed; must outlive the
  // manager.
  ObjectSource* objects = nullptr;
  // Service account tokens of projected volumes; null: standalone. Borrowed.
  TokenManager* tokens = nullptr;
  // PersistentVolumeClaims and PersistentVolumes (API-server mode); null: standalone, where
  // claims fail. Borrowed; must outlive the manager.
  ClaimSource* claims = nullptr;
  // Plugins of other components (CSI), asked in order for volumes none of ours supports.
  // Borrowed; must outlive the manager.
  std::vector<ExternalVolumePlugin*> external_plugins;
  // How long PrepareForSync waits for the volumes (upstream podAttachAndMountTimeout).
  absl::Duration mount_timeout = absl::Seconds(123);
  // Delay between set-up attempts while waiting (upstream reconciler loop period).
  absl::Duration retry_period = absl::Milliseconds(100);
  // Minimum time between two disk-usage walks of the sizeLimit'ed emptyDirs.
  absl::Duration usage_check_period = absl::Seconds(10);
};

class VolumeManager final : public container::PodLifecycleParticipant {
 public:
  VolumeManager(VolumeManagerOptions options, const Clock& clock);
  ~VolumeManager() override;

  // PodLifecycleParticipant.
  std::string Name() const override { return "volume manager"; }
  absl::Status PrepareForSync(const api::Pod& pod) override;
  absl::Status CleanupTerminatedPod(const api::Pod& pod) override;
  void Housekeeping(const std::set<std::string>& active) override;

  // Ends every wait for volumes at once and makes later PrepareForSync calls try only once (the
  // kubelet is shutting down). Mounted volumes stay mounted, as upstream leaves them for the
  // next kubelet. Idempotent.
  void Stop();
  // Replaces options.pod_desired (for a late-bound source of desired pods; nullptr: every pod
  // is desired).
  void SetPodDesired(std::function<bool(const std::string& pod_uid)> fn);

  // The CRI mounts of `container` (kuberuntime Options::container_mounts); only volumes that
  // are set up can be mounted ("cannot find volume ..." otherwise). subPaths are bind-mounted
  // below the pod dir (MakeContainerMounts); call it from the pod's worker.
  absl::StatusOr<std::vector<runtime::v1::Mount>> ContainerMounts(
      const api::Pod& pod, const api::Container& container) const;

  // Node status.volumesInUse (sorted unique names of the external plugins' attachable volumes),
  // and what the Node reported of them (forwarded to the plugins).
  std::vector<std::string> GetVolumesInUse() const;
  void MarkVolumesAsReportedInUse(const std::vector<std::string>& names);

  // Whether no volume of the pod is set up any more, in memory or on disk (upstream
  // podVolumesExist): a deleted pod's object is removed from the API server only then.
  bool PodResourcesReclaimed(const std::string& pod_uid) const override;

  // The usage of the pod's volumes that live on storage of their own (claim-backed and CSI
  // volumes; emptyDirs and the like are measured by the stats provider with du): by pod volume
  // name, with the claim's name for claim-backed ones (/stats/summary's pvcRef). Volumes whose
  // plugin cannot tell are left out.
  struct PodVolumeStats {
    std::string name;
    std::string pvc_name;       // "" when not claim-backed
    std::string pvc_namespace;  // the claim's (the pod's) namespace
    VolumeUsageStats usage;
  };
  std::vector<PodVolumeStats> GetVolumeStats(const std::string& pod_uid) const;

  // Volumes set up for a pod, by name (e.g. for stats): name -> host path.
  std::map<std::string, std::string> MountedVolumes(const std::string& pod_uid) const;
  // UIDs of pods with volumes set up (in memory or found on disk).
  std::set<std::string> PodsWithVolumes() const;

  // <root>/pods/<uid>.
  std::string PodDir(const std::string& pod_uid) const;
  // <root>/pods/<uid>/volumes/<escaped plugin>/<name>.
  std::string VolumeDir(const std::string& pod_uid, std::string_view plugin_name,
                        const std::string& volume_name) const;

 private:
  events::EventRecorder& Recorder() const {
    return options_.recorder != nullptr ? *options_.recorder : events::DiscardingRecorder();
  }
  struct MountedVolume {
    std::string plugin;     // kEmptyDirPluginName, ...
    std::string host_path;  // what containers mount
    bool read_only = false;
    std::optional<api::Quantity> size_limit;  // disk emptyDir with a sizeLimit
    std::string pvc_name;                     // claim-backed volumes: the claim
    std::string pvc_namespace;                // and its namespace (the pod's)
    std::string dir;                          // external plugins: the volume's directory
  };
  struct PodState {
    std::map<std::string, MountedVolume> volumes;  // by volume name
    int64_t prepared_generation = -1;              // housekeeping generation of the last prepare
  };

  // Sets up one volume; returns what to record as mounted.
  absl::StatusOr<MountedVolume> SetUpVolume(const api::Pod& pod, const api::Volume& vol);
  // A claim-backed volume (persistentVolumeClaim or ephemeral) resolved to its bound PV.
  struct BoundClaim {
    api::PersistentVolume pv;
    bool read_only = false;  // the claim's readOnly
  };
  static bool IsClaimVolume(const api::Volume& vol) {
    return vol.persistent_volume_claim.has_value() || vol.other_sources.count("ephemeral") != 0;
  }
  // The PV the volume's claim is bound to, or upstream's "error processing PVC" error.
  absl::StatusOr<BoundClaim> ResolveClaim(const api::Pod& pod, const api::Volume& vol) const;
  // Sets up a resolved claim-backed volume (hostPath, local or an external plugin's PV).
  absl::StatusOr<MountedVolume> SetUpClaimVolume(const api::Pod& pod, const api::Volume& vol,
                                                 const BoundClaim& claim);
  // Tears down every volume of `uid` found in memory or on disk; keeps the pod's entry if any
  // teardown failed (retried later).
  absl::Status TearDownPod(const std::string& uid);
  // Whether PrepareForSync's wait for the pod `uid` should end (stopping, pod not desired).
  bool WaitCancelled(const std::string& uid) const;
  // The external plugin for `spec`, or null.
  ExternalVolumePlugin* ExternalPluginFor(const VolumeSpec& spec) const;
  // Tears down one volume directory of pod `uid`'s plugin (escaped name) on disk.
  absl::Status TearDownVolumeDir(const std::string& uid, const std::string& escaped_plugin,
                                 const std::string& dir);
  std::shared_ptr<absl::Mutex> PodLock(const std::string& uid) const;
  std::set<std::string> PodsOnDisk() const;
  // Whether pod `uid` has volume directories or subPath bind mounts on disk.
  bool VolumesOnDisk(const std::string& uid) const;
  void CheckUsage();

  const VolumeManagerOptions options_;
  const Clock& clock_;

  mutable absl::Mutex mu_;
  std::map<std::string, PodState> pods_ ABSL_GUARDED_BY(mu_);
  // Per-pod operation locks (a shared_ptr so a lock outlives its map entry while held).
  // Mutable: ContainerMounts (const) takes the pod's lock while it bind-mounts subPaths.
  mutable std::map<std::string, std::shared_ptr<absl::Mutex>> pod_locks_ ABSL_GUARDED_BY(mu_);
  int64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_usage_check_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::function<bool(const std::string& pod_uid)> pod_desired_ ABSL_GUARDED_BY(mu_);
  // Pods already reported over a limit (reported once per pod).
  std::set<std::string> reported_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet::volume

#endif  // KUBELET_KUBELET_VOLUME_VOLUME_MANAGER_H_
