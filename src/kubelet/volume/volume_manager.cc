#include "kubelet/volume/volume_manager.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/files.h"
#include "common/log.h"
#include "kubelet/volume/atomic_writer.h"
#include "kubelet/volume/content_plugins.h"
#include "kubelet/volume/mount_utils.h"
#include "kubelet/volume/plugins.h"
#include "kubelet/volume/subpath.h"
#include "metrics/metrics.h"

namespace kubelet::volume {
namespace {

namespace fs = std::filesystem;

std::string PodKey(const api::Pod& pod) {
  return absl::StrCat(pod.metadata.namespace_, "/", pod.metadata.name);
}

// The plugin of a volume this manager supports; "" for any other source.
std::string PluginOf(const api::Volume& v) {
  if (v.empty_dir.has_value()) return kEmptyDirPluginName;
  if (v.host_path.has_value()) return kHostPathPluginName;
  if (v.downward_api.has_value()) return kDownwardAPIPluginName;
  if (v.config_map.has_value()) return kConfigMapPluginName;
  if (v.secret.has_value()) return kSecretPluginName;
  if (v.projected.has_value()) return kProjectedPluginName;
  return "";
}

// Volumes whose files are republished on every sync of the pod (upstream remounts them so
// changed objects, labels and refreshed tokens reach running pods).
bool Republished(const api::Volume& v) {
  return v.downward_api.has_value() || v.config_map.has_value() || v.secret.has_value() ||
         v.projected.has_value();
}

// upstream WaitForAttachAndMount's error: "unmounted volumes=[a b], unattached volumes=[b],
// failed to process volumes=[a]: <cause>" (names sorted).
std::string WaitDetail(std::vector<std::string> unmounted, std::vector<std::string> unattached,
                       std::vector<std::string> unprocessed, const std::string& cause) {
  std::sort(unmounted.begin(), unmounted.end());
  std::sort(unattached.begin(), unattached.end());
  std::sort(unprocessed.begin(), unprocessed.end());
  return absl::StrCat("unmounted volumes=[", absl::StrJoin(unmounted, " "),
                      "], unattached volumes=[", absl::StrJoin(unattached, " "),
                      "], failed to process volumes=[", absl::StrJoin(unprocessed, " "),
                      "]: ", cause);
}

// The name of a volume source no plugin here supports (only the opaque ones reach this).
std::string SourceName(const api::Volume& v) {
  return v.other_sources.empty() ? "unknown" : v.other_sources.begin()->first;
}

}  // namespace

VolumeManager::VolumeManager(VolumeManagerOptions options, const Clock& clock)
    : options_(std::move(options)), clock_(clock), pod_desired_(options_.pod_desired) {}

VolumeManager::~VolumeManager() = default;

void VolumeManager::SetPodDesired(std::function<bool(const std::string& pod_uid)> fn) {
  absl::MutexLock lock(&mu_);
  pod_desired_ = std::move(fn);
}

void VolumeManager::Stop() {
  absl::MutexLock lock(&mu_);
  stopped_ = true;
}

std::string VolumeManager::PodDir(const std::string& pod_uid) const {
  return absl::StrCat(options_.root_dir, "/pods/", pod_uid);
}

std::string VolumeManager::VolumeDir(const std::string& pod_uid, std::string_view plugin_name,
                                     const std::string& volume_name) const {
  return absl::StrCat(PodDir(pod_uid), "/volumes/", EscapePluginName(plugin_name), "/",
                      volume_name);
}

std::shared_ptr<absl::Mutex> VolumeManager::PodLock(const std::string& uid) const {
  absl::MutexLock lock(&mu_);
  std::shared_ptr<absl::Mutex>& m = pod_locks_[uid];
  if (m == nullptr) m = std::make_shared<absl::Mutex>();
  return m;
}

absl::StatusOr<VolumeManager::MountedVolume> VolumeManager::SetUpVolume(const api::Pod& pod,
                                                                        const api::Volume& vol) {
  const std::string& uid = pod.metadata.uid;
  MountedVolume mv;
  mv.plugin = PluginOf(vol);
  if (vol.empty_dir.has_value()) {
    const api::EmptyDirVolumeSource& src = *vol.empty_dir;
    const std::string dir = VolumeDir(uid, kEmptyDirPluginName, vol.name);
    if (src.medium == "Memory") {
      const int64_t alloc =
          options_.node_allocatable_memory ? options_.node_allocatable_memory() : 0;
      if (absl::Status st =
              SetUpEmptyDir(dir, true, MemoryBackedSizeBytes(pod, src.size_limit, alloc));
          !st.ok()) {
        return st;
      }
    } else if (src.medium.empty()) {
      if (absl::Status st = SetUpEmptyDir(dir, false, 0); !st.ok()) return st;
      if (src.size_limit.has_value() && src.size_limit->Sign() > 0) mv.size_limit = src.size_limit;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("emptyDir medium ", log::Quote(src.medium), " is not supported"));
    }
    if (absl::Status st = ApplyFsGroup(pod, dir, /*read_only=*/false); !st.ok()) return st;
    mv.host_path = dir;
    return mv;
  }
  if (vol.host_path.has_value()) {
    if (absl::Status st = CheckHostPathType(vol.host_path->path, vol.host_path->type); !st.ok()) {
      return st;
    }
    mv.host_path = vol.host_path->path;
    return mv;
  }
  if (vol.downward_api.has_value()) {
    const std::string dir = VolumeDir(uid, kDownwardAPIPluginName, vol.name);
    const api::ResourceList alloc =
        options_.node_allocatable ? options_.node_allocatable() : api::ResourceList{};
    absl::StatusOr<Payload> payload =
        CollectDownwardAPIData(pod, vol.downward_api->items, vol.downward_api->default_mode, alloc);
    if (!payload.ok()) return payload.status();
    // Upstream wraps the volume in a memory-medium emptyDir.
    const int64_t mem = options_.node_allocatable_memory ? options_.node_allocatable_memory() : 0;
    if (absl::Status st = SetUpEmptyDir(dir, true, MemoryBackedSizeBytes(pod, std::nullopt, mem));
        !st.ok()) {
      return st;
    }
    AtomicWriter writer(dir, absl::StrCat("pod ", PodKey(pod), " volume ", vol.name), clock_);
    if (absl::Status st = writer.Write(*payload); !st.ok()) return st;
    if (absl::Status st = ApplyFsGroup(pod, dir, /*read_only=*/true); !st.ok()) return st;
    mv.host_path = dir;
    mv.read_only = true;
    return mv;
  }
  if (vol.config_map.has_value() || vol.secret.has_value() || vol.projected.has_value()) {
    absl::StatusOr<Payload> payload;
    bool memory = true;  // secret and projected: tmpfs; configMap: the kubelet's disk
    const char* plugin = kProjectedPluginName;
    if (vol.config_map.has_value()) {
      payload = ConfigMapVolumePayload(pod, *vol.config_map, options_.objects);
      memory = false;
      plugin = kConfigMapPluginName;
    } else if (vol.secret.has_value()) {
      payload = SecretVolumePayload(pod, *vol.secret, options_.objects);
      plugin = kSecretPluginName;
    } else {
      const api::ResourceList alloc =
          options_.node_allocatable ? options_.node_allocatable() : api::ResourceList{};
      payload =
          ProjectedVolumePayload(pod, *vol.projected, options_.objects, options_.tokens, alloc);
    }
    if (!payload.ok()) return payload.status();
    const std::string dir = VolumeDir(uid, plugin, vol.name);
    const int64_t mem = options_.node_allocatable_memory ? options_.node_allocatable_memory() : 0;
    if (absl::Status st =
            SetUpEmptyDir(dir, memory, memory ? MemoryBackedSizeBytes(pod, std::nullopt, mem) : 0);
        !st.ok()) {
      return st;
    }
    AtomicWriter writer(dir, absl::StrCat("pod ", PodKey(pod), " volume ", vol.name), clock_);
    if (absl::Status st = writer.Write(*payload); !st.ok()) return st;
    if (absl::Status st = ApplyFsGroup(pod, dir, /*read_only=*/true); !st.ok()) return st;
    mv.host_path = dir;
    mv.read_only = true;
    return mv;
  }
  const VolumeSpec spec{.volume = &vol, .cancelled = [this, uid] { return WaitCancelled(uid); }};
  if (ExternalVolumePlugin* plugin = ExternalPluginFor(spec)) {
    mv.plugin = plugin->Name();
    mv.dir = VolumeDir(uid, plugin->Name(), vol.name);
    absl::StatusOr<ExternalVolume> ev = plugin->SetUp(pod, spec, mv.dir);
    if (!ev.ok()) return ev.status();
    mv.host_path = std::move(ev->path);
    mv.read_only = ev->read_only;
    return mv;
  }
  return absl::UnimplementedError(absl::StrCat("volume type ", log::Quote(SourceName(vol)),
                                               " is not supported by this kubelet"));
}

absl::Status VolumeManager::PrepareForSync(const api::Pod& pod) {
  const std::string& uid = pod.metadata.uid;
  {
    absl::MutexLock lock(&mu_);
    PodState& ps = pods_[uid];
    ps.prepared_generation = generation_;
  }
  // Before any Get: the objects the pod references are watched from now on.
  if (options_.objects != nullptr) options_.objects->RegisterPod(pod);
  std::shared_ptr<absl::Mutex> pod_lock = PodLock(uid);
  const absl::Time deadline = clock_.Now() + options_.mount_timeout;
  const absl::Time real_deadline = absl::Now() + options_.mount_timeout;
  absl::Duration delay = options_.retry_period;
  std::vector<std::string> unmounted;
  // Claim-backed volumes whose claim resolved but which are not set up (upstream: attachable
  // volumes not attached yet), and volumes whose claim did not resolve (upstream: not added to
  // the desired state), with the errors of the latter.
  std::vector<std::string> unattached;
  std::vector<std::string> unprocessed;
  std::set<std::string> processing_errors;
  bool processing_reported = false;
  std::string cause;  // why the wait ended without every volume set up
  while (true) {
    {
      absl::MutexLock op(pod_lock.get());
      {
        // Housekeeping may have dropped the pod meanwhile (it was not active): claim it again.
        absl::MutexLock lock(&mu_);
        pods_[uid].prepared_generation = generation_;
      }
      unmounted.clear();
      unattached.clear();
      unprocessed.clear();
      processing_errors.clear();
      for (const api::Volume& vol : pod.spec.volumes) {
        bool mounted = false;
        {
          absl::MutexLock lock(&mu_);
          const PodState& ps = pods_[uid];
          mounted = ps.volumes.count(vol.name) > 0;
        }
        // Set-up is done once; downwardAPI, configMap, secret and projected files are
        // republished on every sync (upstream remounts such volumes so label / annotation /
        // object changes and refreshed tokens reach the files).
        if (mounted && !Republished(vol)) continue;
        absl::StatusOr<MountedVolume> mv;
        const absl::Time set_up_start = absl::Now();
        if (IsClaimVolume(vol)) {
          absl::StatusOr<BoundClaim> claim = ResolveClaim(pod, vol);
          if (!claim.ok()) {
            KLOG_ERROR(claim.status(), "Error processing volume", "pod", PodKey(pod), "volumeName",
                       vol.name);
            processing_errors.insert(std::string(claim.status().message()));
            unprocessed.push_back(vol.name);
            unmounted.push_back(vol.name);
            continue;
          }
          mv = SetUpClaimVolume(pod, vol, *claim);
          if (!mv.ok()) {
            unattached.push_back(vol.name);
          } else {
            mv->pvc_name = vol.persistent_volume_claim.has_value()
                               ? vol.persistent_volume_claim->claim_name
                               : absl::StrCat(pod.metadata.name, "-", vol.name);
            mv->pvc_namespace = pod.metadata.namespace_;
          }
        } else {
          mv = SetUpVolume(pod, vol);
        }
        if (!mv.ok()) {
          KLOG_ERROR(mv.status(),
                     absl::StrCat(mounted ? "MountVolume.SetUp failed (remount) for volume "
                                          : "MountVolume.SetUp failed for volume ",
                                  log::Quote(vol.name)),
                     "pod", PodKey(pod), "podUID", uid);
          Recorder().Record(events::PodRef(pod), events::kWarning, events::kFailedMountVolume,
                            absl::StrCat("MountVolume.SetUp failed for volume \"", vol.name,
                                         "\" : ", mv.status().message()));
          if (!mounted) unmounted.push_back(vol.name);
          continue;
        }
        if (!mounted && mv->plugin.find("kubernetes.io/csi") != 0) {
          metrics::ObserveStorageOperation(mv->plugin, "volume_mount", true,
                                           absl::ToDoubleSeconds(absl::Now() - set_up_start));
        }
        if (!mounted) {
          KLOG_V(3, absl::StrCat("MountVolume.SetUp succeeded for volume ", log::Quote(vol.name)),
                 "pod", PodKey(pod), "podUID", uid, "path", mv->host_path);
        }
        absl::MutexLock lock(&mu_);
        pods_[uid].volumes[vol.name] = *std::move(mv);
      }
    }
    if (unmounted.empty()) {
      KLOG_V(3, "All volumes are attached and mounted for pod", "pod", PodKey(pod));
      return absl::OkStatus();
    }
    // Upstream's wait ends at once on such errors (the pod worker retries the sync later); this
    // one reports them the same way, once, and keeps waiting so a claim bound meanwhile is
    // mounted without a sync's back-off.
    if (!processing_errors.empty() && !processing_reported) {
      processing_reported = true;
      Recorder().Record(events::PodRef(pod), events::kWarning, events::kFailedMountVolume,
                        absl::StrCat("Unable to attach or mount volumes: ",
                                     WaitDetail(unmounted, unattached, unprocessed,
                                                absl::StrJoin(processing_errors, "; "))));
    }
    // Both clocks bound the wait: the injected one for tests, the real one because we sleep.
    if (clock_.Now() + delay > deadline || absl::Now() + delay > real_deadline) break;
    // Sleep in slices, to notice Stop() at once and a pod that went away within a slice.
    const absl::Time wake = absl::Now() + delay;
    for (absl::Time now = absl::Now(); now < wake && cause.empty(); now = absl::Now()) {
      std::function<bool(const std::string&)> desired;
      {
        absl::MutexLock lock(&mu_);
        mu_.AwaitWithTimeout(absl::Condition(&stopped_),
                             std::min(wake - now, absl::Milliseconds(500)));
        if (stopped_) cause = "volume manager is stopping";
        desired = pod_desired_;
      }
      if (cause.empty() && desired && !desired(uid)) cause = "pod is no longer desired";
    }
    if (!cause.empty()) break;
    delay = std::min(delay * 2, absl::Seconds(16));
  }
  const bool timed_out = cause.empty();
  if (timed_out) {
    cause = processing_errors.empty() ? "timed out waiting for the condition"
                                      : absl::StrJoin(processing_errors, "; ");
  }
  const std::string detail = WaitDetail(unmounted, unattached, unprocessed, cause);
  if (timed_out) {
    Recorder().Record(events::PodRef(pod), events::kWarning, events::kFailedMountVolume,
                      "Unable to attach or mount volumes: " + detail);
  }
  return absl::DeadlineExceededError("unable to attach or mount volumes: " + detail);
}

bool VolumeManager::WaitCancelled(const std::string& uid) const {
  std::function<bool(const std::string&)> desired;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return true;
    desired = pod_desired_;
  }
  return desired && !desired(uid);
}

ExternalVolumePlugin* VolumeManager::ExternalPluginFor(const VolumeSpec& spec) const {
  for (ExternalVolumePlugin* p : options_.external_plugins) {
    if (p != nullptr && p->CanSupport(spec)) return p;
  }
  return nullptr;
}

absl::StatusOr<VolumeManager::BoundClaim> VolumeManager::ResolveClaim(
    const api::Pod& pod, const api::Volume& vol) const {
  const bool ephemeral = !vol.persistent_volume_claim.has_value();
  // A generic ephemeral volume's claim is named <pod>-<volume> (ephemeral.VolumeClaimName).
  const std::string claim_name = ephemeral ? absl::StrCat(pod.metadata.name, "-", vol.name)
                                           : vol.persistent_volume_claim->claim_name;
  const std::string& ns = pod.metadata.namespace_;
  // Upstream's populator errors (createVolumeSpec, getPVCExtractPV, getPVSpec).
  const std::string prefix = absl::StrCat("error processing PVC ", ns, "/", claim_name, ": ");
  if (options_.claims == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(prefix, "failed to fetch PVC from API server: ", kStandaloneObjectError));
  }
  absl::StatusOr<api::PersistentVolumeClaim> pvc =
      options_.claims->GetPersistentVolumeClaim(ns, claim_name);
  if (!pvc.ok()) {
    return absl::Status(
        pvc.status().code(),
        absl::StrCat(prefix, "failed to fetch PVC from API server: ", pvc.status().message()));
  }
  if (pvc->metadata.deletion_timestamp.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat(prefix, "PVC is being deleted"));
  }
  if (pvc->status.phase != api::kClaimBound) {
    return absl::FailedPreconditionError(absl::StrCat(prefix, "PVC is not bound"));
  }
  if (pvc->spec.volume_name.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(prefix, "PVC has empty pvc.Spec.VolumeName"));
  }
  if (ephemeral) {
    // ephemeral.VolumeIsForPod: the claim must be controlled by this pod (no prefix upstream).
    bool owned = false;
    for (const api::OwnerReference& o : pvc->metadata.owner_references) {
      owned |= o.controller.value_or(false) && o.uid == pod.metadata.uid;
    }
    if (!owned || pvc->metadata.namespace_ != ns) {
      return absl::FailedPreconditionError(absl::StrCat("PVC ", ns, "/", claim_name,
                                                        " was not created for pod ", ns, "/",
                                                        pod.metadata.name, " (pod is not owner)"));
    }
  }
  absl::StatusOr<api::PersistentVolume> pv =
      options_.claims->GetPersistentVolume(pvc->spec.volume_name);
  if (!pv.ok()) {
    return absl::Status(pv.status().code(),
                        absl::StrCat(prefix, "failed to fetch PV ", pvc->spec.volume_name,
                                     " from API server: ", pv.status().message()));
  }
  if (!pv->spec.claim_ref.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat(prefix, "found PV object ", pv->metadata.name,
                     " but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the "
                     "claim"));
  }
  if (pv->spec.claim_ref->uid != pvc->metadata.uid) {
    return absl::FailedPreconditionError(absl::StrCat(
        prefix, "found PV object ", pv->metadata.name, " but its pv.Spec.ClaimRef.UID ",
        pv->spec.claim_ref->uid, " does not point to claim.UID ", pvc->metadata.uid));
  }
  return BoundClaim{*std::move(pv), !ephemeral && vol.persistent_volume_claim->read_only};
}

absl::StatusOr<VolumeManager::MountedVolume> VolumeManager::SetUpClaimVolume(
    const api::Pod& pod, const api::Volume& vol, const BoundClaim& claim) {
  const api::PersistentVolume* pv = &claim.pv;
  const bool read_only = claim.read_only;
  MountedVolume mv;
  mv.read_only = read_only;
  if (pv->spec.volume_mode == api::kVolumeModeBlock) {
    return absl::UnimplementedError(
        absl::StrCat("PersistentVolume ", pv->metadata.name,
                     " has volumeMode Block, which this kubelet does not support yet"));
  }
  if (pv->spec.host_path.has_value()) {
    if (absl::Status st = CheckHostPathType(pv->spec.host_path->path, pv->spec.host_path->type);
        !st.ok()) {
      return st;
    }
    mv.plugin = kHostPathPluginName;
    mv.host_path = pv->spec.host_path->path;
    return mv;
  }
  if (pv->spec.local.has_value()) {
    // The local disk or directory is mounted as it is (upstream bind-mounts it into the pod's
    // volume dir first); it must exist.
    struct stat st;
    if (::stat(pv->spec.local->path.c_str(), &st) != 0) {
      return absl::NotFoundError(
          absl::StrCat("path ", log::Quote(pv->spec.local->path), " does not exist"));
    }
    if (!read_only) {
      if (absl::Status s = ApplyFsGroup(pod, pv->spec.local->path, false); !s.ok()) return s;
    }
    mv.plugin = kLocalVolumePluginName;
    mv.host_path = pv->spec.local->path;
    return mv;
  }
  const VolumeSpec spec{.volume = &vol,
                        .pv = pv,
                        .read_only = read_only,
                        .cancelled = [this, uid = pod.metadata.uid] { return WaitCancelled(uid); }};
  ExternalVolumePlugin* plugin = ExternalPluginFor(spec);
  if (plugin == nullptr) {
    return absl::UnimplementedError(absl::StrCat("the volume source of PersistentVolume ",
                                                 pv->metadata.name,
                                                 " is not supported by this kubelet"));
  }
  mv.plugin = plugin->Name();
  mv.dir = VolumeDir(pod.metadata.uid, plugin->Name(), spec.Name());
  absl::StatusOr<ExternalVolume> ev = plugin->SetUp(pod, spec, mv.dir);
  if (!ev.ok()) return ev.status();
  mv.host_path = std::move(ev->path);
  mv.read_only = ev->read_only;
  return mv;
}

std::vector<std::string> VolumeManager::GetVolumesInUse() const {
  std::set<std::string> names;
  for (ExternalVolumePlugin* p : options_.external_plugins) {
    if (p == nullptr) continue;
    for (std::string& n : p->VolumesInUse()) names.insert(std::move(n));
  }
  return std::vector<std::string>(names.begin(), names.end());
}

void VolumeManager::MarkVolumesAsReportedInUse(const std::vector<std::string>& names) {
  for (ExternalVolumePlugin* p : options_.external_plugins) {
    if (p != nullptr) p->MarkVolumesAsReportedInUse(names);
  }
}

std::vector<VolumeManager::PodVolumeStats> VolumeManager::GetVolumeStats(
    const std::string& pod_uid) const {
  std::vector<std::pair<std::string, MountedVolume>> volumes;
  {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(pod_uid);
    if (it == pods_.end()) return {};
    volumes.assign(it->second.volumes.begin(), it->second.volumes.end());
  }
  std::vector<PodVolumeStats> out;
  for (const auto& [name, mv] : volumes) {
    PodVolumeStats ps{name, mv.pvc_name, mv.pvc_namespace, {}};
    if (!mv.dir.empty()) {
      ExternalVolumePlugin* plugin = nullptr;
      for (ExternalVolumePlugin* p : options_.external_plugins) {
        if (p != nullptr && p->Name() == mv.plugin) plugin = p;
      }
      if (plugin == nullptr) continue;
      absl::StatusOr<VolumeUsageStats> usage = plugin->GetVolumeStats(mv.dir);
      if (!usage.ok()) {
        if (!absl::IsUnimplemented(usage.status())) {
          KLOG_V(4, "Failed to get volume stats", "podUID", pod_uid, "volume", name, "err",
                 usage.status());
        }
        continue;
      }
      ps.usage = *usage;
    } else if (mv.plugin == kLocalVolumePluginName) {
      // upstream's local volumes report statfs of their path (MetricsStatFS).
      absl::StatusOr<FsInfo> fs = StatFs(mv.host_path);
      if (!fs.ok()) continue;
      ps.usage.capacity_bytes = static_cast<int64_t>(fs->capacity_bytes);
      ps.usage.available_bytes = static_cast<int64_t>(fs->available_bytes);
      ps.usage.used_bytes = static_cast<int64_t>(fs->used_bytes);
      ps.usage.inodes = static_cast<int64_t>(fs->inodes);
      ps.usage.inodes_free = static_cast<int64_t>(fs->inodes_free);
      ps.usage.inodes_used = static_cast<int64_t>(fs->inodes - fs->inodes_free);
    } else {
      continue;
    }
    out.push_back(std::move(ps));
  }
  return out;
}

bool VolumeManager::PodResourcesReclaimed(const std::string& pod_uid) const {
  {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(pod_uid);
    if (it != pods_.end() && !it->second.volumes.empty()) return false;
  }
  return !VolumesOnDisk(pod_uid);
}

absl::Status VolumeManager::TearDownVolumeDir(const std::string& uid,
                                              const std::string& escaped_plugin,
                                              const std::string& dir) {
  for (ExternalVolumePlugin* p : options_.external_plugins) {
    if (p != nullptr && EscapePluginName(p->Name()) == escaped_plugin) return p->TearDown(uid, dir);
  }
  // Plugins whose volumes are (wrapped) emptyDirs: a directory, maybe a tmpfs on it. Besides
  // ours, the ones an upstream kubelet this one replaced may have left behind.
  static const char* const kEmptyDirLike[] = {
      "kubernetes.io~empty-dir", "kubernetes.io~downward-api", "kubernetes.io~secret",
      "kubernetes.io~configmap", "kubernetes.io~projected",    "kubernetes.io~git-repo"};
  for (const char* p : kEmptyDirLike) {
    if (escaped_plugin == p) return TearDownEmptyDir(dir);
  }
  // Any other plugin (CSI, NFS, ...) is not ours to unmount: only unmounted leftovers are
  // removed, never across a mount.
  return RemoveAllNoCrossMounts(dir);
}

absl::Status VolumeManager::TearDownPod(const std::string& uid) {
  const std::string pod_dir = PodDir(uid);
  const std::string volumes_dir = absl::StrCat(pod_dir, "/volumes");
  std::vector<std::string> errors;
  // subPath bind mounts go first (upstream CleanSubPaths before each TearDown); a volume whose
  // subPaths stay mounted is kept for the next attempt, as upstream's unmount fails then.
  std::set<std::string> pinned;
  for (const std::string& name : ListDir(absl::StrCat(pod_dir, "/", kVolumeSubPathsDir))) {
    if (absl::Status st = CleanSubPaths(pod_dir, name); !st.ok()) {
      KLOG_ERROR(st, "Failed to clean subpaths of volume", "podUID", uid, "volume", name);
      errors.push_back(std::string(st.message()));
      pinned.insert(name);
    }
  }
  for (const std::string& plugin : ListDir(volumes_dir)) {
    const std::string plugin_dir = absl::StrCat(volumes_dir, "/", plugin);
    for (const std::string& name : ListDir(plugin_dir)) {
      if (pinned.count(name)) continue;
      const std::string dir = absl::StrCat(plugin_dir, "/", name);
      if (absl::Status st = TearDownVolumeDir(uid, plugin, dir); !st.ok()) {
        KLOG_ERROR(st, "UnmountVolume.TearDown failed for volume", "podUID", uid, "volume", name,
                   "plugin", plugin);
        errors.push_back(std::string(st.message()));
        continue;
      }
      KLOG_V(3, "UnmountVolume.TearDown succeeded for volume", "podUID", uid, "volume", name,
             "plugin", plugin);
    }
    if (ListDir(plugin_dir).empty()) ::rmdir(plugin_dir.c_str());
  }
  // Metadata upstream keeps per plugin (e.g. emptyDir "ready" files) goes with the volumes.
  const std::string plugins_dir = absl::StrCat(options_.root_dir, "/pods/", uid, "/plugins");
  for (const std::string& plugin :
       errors.empty() ? ListDir(plugins_dir) : std::vector<std::string>{}) {
    if (absl::StartsWith(plugin, "kubernetes.io~") && plugin != "kubernetes.io~csi") {
      (void)RemoveAllNoCrossMounts(absl::StrCat(plugins_dir, "/", plugin));
    }
  }
  {
    absl::MutexLock lock(&mu_);
    if (!errors.empty()) {
      return absl::InternalError(absl::StrCat("failed to tear down volumes of pod ", uid, ": ",
                                              absl::StrJoin(errors, "; ")));
    }
    pods_.erase(uid);
    reported_.erase(uid);
  }
  // The pod's objects are no longer watched for it; its tokens are forgotten (upstream
  // deleteServiceAccountToken on TearDown); plugins release what they kept for it. All are
  // thread-safe and do not block.
  if (options_.objects != nullptr) options_.objects->UnregisterPod(uid);
  if (options_.tokens != nullptr) options_.tokens->DeleteServiceAccountToken(uid);
  for (ExternalVolumePlugin* p : options_.external_plugins) {
    if (p != nullptr) p->PodRemoved(uid);
  }
  return absl::OkStatus();
}

absl::Status VolumeManager::CleanupTerminatedPod(const api::Pod& pod) {
  const std::string& uid = pod.metadata.uid;
  std::shared_ptr<absl::Mutex> pod_lock = PodLock(uid);
  absl::MutexLock op(pod_lock.get());
  return TearDownPod(uid);
}

bool VolumeManager::VolumesOnDisk(const std::string& uid) const {
  const std::string pod_dir = PodDir(uid);
  // subPath bind mounts of any volume (hostPath ones have no volume directory).
  if (!ListDir(absl::StrCat(pod_dir, "/", kVolumeSubPathsDir)).empty()) return true;
  const std::string volumes_dir = absl::StrCat(pod_dir, "/volumes");
  for (const std::string& plugin : ListDir(volumes_dir)) {
    if (!ListDir(absl::StrCat(volumes_dir, "/", plugin)).empty()) return true;
  }
  return false;
}

std::set<std::string> VolumeManager::PodsOnDisk() const {
  std::set<std::string> out;
  for (const std::string& uid : ListDir(absl::StrCat(options_.root_dir, "/pods"))) {
    if (VolumesOnDisk(uid)) out.insert(uid);
  }
  return out;
}

std::set<std::string> VolumeManager::PodsWithVolumes() const {
  std::set<std::string> out = PodsOnDisk();
  absl::MutexLock lock(&mu_);
  for (const auto& [uid, ps] : pods_) {
    if (!ps.volumes.empty()) out.insert(uid);
  }
  return out;
}

void VolumeManager::Housekeeping(const std::set<std::string>& active) {
  for (ExternalVolumePlugin* p : options_.external_plugins) {
    if (p != nullptr) p->Housekeeping();
  }
  int64_t gen;
  std::set<std::string> candidates = PodsOnDisk();
  {
    absl::MutexLock lock(&mu_);
    gen = ++generation_;
    for (const auto& [uid, ps] : pods_) candidates.insert(uid);
  }
  for (const std::string& uid : candidates) {
    if (active.count(uid)) continue;
    std::shared_ptr<absl::Mutex> pod_lock = PodLock(uid);
    if (!pod_lock->TryLock()) continue;  // a sync or clean-up of this pod is under way
    bool recent = false;
    {
      absl::MutexLock lock(&mu_);
      auto it = pods_.find(uid);
      // Prepared since the previous pass began: `active` may predate the pod.
      recent = it != pods_.end() && it->second.prepared_generation >= gen - 1;
    }
    if (!recent) {
      KLOG_V(2, "Tearing down volumes of orphaned pod", "podUID", uid);
      (void)TearDownPod(uid);
    }
    pod_lock->Unlock();
  }
  {
    absl::MutexLock lock(&mu_);
    for (auto it = pod_locks_.begin(); it != pod_locks_.end();) {
      const bool idle = it->second.use_count() == 1 && !pods_.count(it->first);
      it = idle ? pod_locks_.erase(it) : std::next(it);
    }
  }
  if (options_.tokens != nullptr) options_.tokens->Cleanup();
  CheckUsage();
}

void VolumeManager::CheckUsage() {
  struct Check {
    std::string uid, name, path;
    api::Quantity limit;
  };
  std::vector<Check> checks;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = clock_.Now();
    if (now - last_usage_check_ < options_.usage_check_period) return;
    last_usage_check_ = now;
    for (const auto& [uid, ps] : pods_) {
      if (reported_.count(uid)) continue;
      for (const auto& [name, mv] : ps.volumes) {
        if (mv.size_limit.has_value()) checks.push_back({uid, name, mv.host_path, *mv.size_limit});
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> exceeded;
  for (const Check& c : checks) {
    absl::StatusOr<int64_t> used = DiskUsageBytes(c.path);
    if (!used.ok()) continue;
    if (*used > c.limit.Value()) {
      const std::string msg = EmptyDirLimitMessage(c.name, c.limit);
      KLOG_INFO("EmptyDir volume exceeds its size limit", "podUID", c.uid, "volume", c.name,
                "usedBytes", *used, "limit", c.limit.String());
      absl::MutexLock lock(&mu_);
      if (reported_.insert(c.uid).second) exceeded.emplace_back(c.uid, msg);
    }
  }
  if (!options_.on_limit_exceeded) return;
  for (const auto& [uid, msg] : exceeded) options_.on_limit_exceeded(uid, msg);
}

absl::StatusOr<std::vector<runtime::v1::Mount>> VolumeManager::ContainerMounts(
    const api::Pod& pod, const api::Container& container) const {
  // Serialized with the pod's teardown: bind mounts are never made while it cleans them up.
  std::shared_ptr<absl::Mutex> pod_lock = PodLock(pod.metadata.uid);
  absl::MutexLock op(pod_lock.get());
  std::map<std::string, MountedVolume> volumes;
  {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(pod.metadata.uid);
    if (it != pods_.end()) volumes = it->second.volumes;
  }
  return MakeContainerMounts(
      pod, container,
      [&](const std::string& name) -> std::optional<MountableVolume> {
        auto it = volumes.find(name);
        if (it == volumes.end()) return std::nullopt;
        return MountableVolume{it->second.host_path, it->second.read_only};
      },
      PodDir(pod.metadata.uid));
}

std::map<std::string, std::string> VolumeManager::MountedVolumes(const std::string& pod_uid) const {
  std::map<std::string, std::string> out;
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(pod_uid);
  if (it == pods_.end()) return out;
  for (const auto& [name, mv] : it->second.volumes) out[name] = mv.host_path;
  return out;
}

}  // namespace kubelet::volume
