#include "kubelet/kubelet.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/static_pod.h"
#include "common/guarded.h"
#include "common/log.h"
#include "kubelet/podsource/file_source.h"
#include "kubelet/podsource/http_source.h"
#include "metrics/metrics.h"

namespace kubelet {
namespace {

const char* ActionName(container::SyncResult::Action a) {
  using A = container::SyncResult::Action;
  switch (a) {
    case A::kStartContainer:
      return "StartContainer";
    case A::kKillContainer:
      return "KillContainer";
    case A::kCreatePodSandbox:
      return "CreatePodSandbox";
    case A::kKillPodSandbox:
      return "KillPodSandbox";
    case A::kInitContainer:
      return "InitContainer";
    case A::kConfigPodSandbox:
      return "ConfigPodSandbox";
  }
  return "Unknown";
}

// upstream PodSyncResult.Error(): `failed to "StartContainer" for "main" with CrashLoopBackOff:
// "back-off 10s restarting failed container=..."`, several joined as an aggregate.
absl::Status SyncResultError(const container::PodSyncResult& r) {
  if (!r.sync_error.ok()) return r.sync_error;
  std::vector<std::string> errs;
  for (const auto& s : r.results) {
    if (s.error.ok()) continue;
    std::string reason = s.reason.empty() ? std::string(s.error.message()) : s.reason;
    std::string message = s.message.empty() ? std::string(s.error.message()) : s.message;
    errs.push_back(absl::StrCat("failed to \"", ActionName(s.action), "\" for \"", s.target,
                                "\" with ", reason, ": ", log::Quote(message)));
  }
  if (errs.empty()) return absl::OkStatus();
  if (errs.size() == 1) return absl::UnknownError(errs[0]);
  return absl::UnknownError(absl::StrCat("[", absl::StrJoin(errs, ", "), "]"));
}

std::vector<std::string> PodKeys(const std::vector<api::PodPtr>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back(api::PodKey(*p));
  return out;
}

bool HasMountsUnder(const std::string& dir) {
  std::ifstream mounts("/proc/mounts");
  std::string dev, mnt;
  std::string rest;
  while (mounts >> dev >> mnt) {
    std::getline(mounts, rest);
    if (mnt.rfind(dir + "/", 0) == 0 || mnt == dir) return true;
  }
  return false;
}

}  // namespace

Kubelet::Kubelet(KubeletOptions options, cri::RuntimeService& cri_runtime,
                 container::Runtime& runtime, Clock& clock)
    : options_(std::move(options)), cri_runtime_(cri_runtime), runtime_(runtime), clock_(clock) {
  pod_config_ =
      std::make_unique<podsource::PodConfig>(clock_, podsource::PodConfigOptions{.bell = &bell_});
  pleg_ = std::make_unique<pleg::GenericPLEG>(
      pleg::GenericPLEGOptions{.relist_period = options_.pleg_relist_period,
                               .events_bell = &bell_,
                               .loops = options_.loops},
      runtime_, cache_, clock_);
  pod_workers_ = std::make_unique<PodWorkers>(
      PodWorkersOptions{.threads = options_.pod_worker_threads,
                        .idle_threads = options_.pod_worker_idle_threads,
                        .resync_interval = options_.sync_frequency},
      *this, cache_, clock_);
  for (const ExtraPodSource& src : options_.extra_sources) pod_config_->AddSource(src.name);
  if (options_.status_client != nullptr) {
    status::ApiStatusSyncerDelegate d;
    d.pods = [this] {
      std::vector<api::PodPtr> pods = pod_manager_.GetPods();
      std::erase_if(pods, [](const api::PodPtr& p) { return api::IsStaticPod(*p); });
      return pods;
    };
    d.terminated = [this](const api::Pod& p) {
      const std::string& uid = p.metadata.uid;
      if (pod_workers_->IsFinished(uid)) {
        // Upstream PodResourcesAreReclaimed: the object stays until the volumes are gone.
        for (container::PodLifecycleParticipant* part : options_.participants) {
          if (!part->PodResourcesReclaimed(uid)) {
            KLOG_V(3, "Pod is terminated, but some resources have not been reclaimed yet", "pod",
                   api::PodKey(p), "subsystem", part->Name());
            return false;
          }
        }
        return true;
      }
      // Rejected at admission: never had a worker, ends Failed.
      auto st = status_manager_.GetPodStatus(uid);
      return !pod_workers_->IsKnown(uid) && st && status::IsTerminalPhase(st->status.phase);
    };
    d.first_sync_hold_until = [this](const std::string& uid) {
      // While preparing (volumes), only a short grace: a volume that does not mount must not
      // keep the pod's status back.
      constexpr absl::Duration kPrepareGrace = absl::Milliseconds(100);
      absl::MutexLock lock(&first_seen_mu_);
      auto it = first_seen_.find(uid);
      if (it == first_seen_.end()) return absl::InfinitePast();
      switch (it->second.sync) {
        case FirstSeen::Sync::kPreparing:
          return it->second.sync_began + kPrepareGrace;
        case FirstSeen::Sync::kRuntime:
          return absl::InfiniteFuture();
        default:
          return absl::InfinitePast();
      }
    };
    if (options_.mirror_client != nullptr) {
      d.static_pods = [this] {
        std::vector<status::MirroredPod> out;
        for (const api::PodPtr& p : pod_manager_.GetPods()) {
          if (!api::IsStaticPod(*p)) continue;
          auto mirror = pod_manager_.GetMirrorPodByPod(*p);
          std::string mirror_uid = mirror ? mirror->metadata.uid : "";
          out.push_back({p, std::move(mirror_uid)});
        }
        return out;
      };
    }
    status::ApiStatusSyncerOptions so;
    so.in_place_pod_vertical_scaling = options_.in_place_pod_vertical_scaling;
    so.first_status_hold = options_.first_status_hold;
    so.loops = options_.loops;
    api_status_syncer_ = std::make_unique<status::ApiStatusSyncer>(
        *options_.status_client, status_manager_, std::move(d), so, clock_);
  }
}

Kubelet::~Kubelet() { Stop(); }

absl::Status Kubelet::Start() {
  if (options_.in_place_pod_vertical_scaling && !allocation_) {
    // Upstream's status manager start: the allocations must be known before any pod is admitted.
    absl::StatusOr<std::unique_ptr<status::AllocationState>> st =
        status::AllocationState::Open(options_.root_dir);
    if (!st.ok()) {
      KLOG_ERROR(st.status(),
                 "Could not initialize pod allocation checkpoint manager, please drain node and "
                 "remove policy state file");
      return st.status();
    }
    allocation_ = *std::move(st);
  }
  KLOG_INFO("Starting kubelet main sync loop", "node", options_.node_name);
  if (!options_.static_pod_path.empty()) {
    KLOG_INFO("Adding static pod path", "path", options_.static_pod_path);
    podsource::FileSourceOptions fo;
    fo.path = options_.static_pod_path;
    fo.node_name = options_.node_name;
    fo.check_frequency = options_.file_check_frequency;
    file_source_ = std::make_unique<podsource::FileSource>(fo, *pod_config_, clock_);
  }
  if (!options_.static_pod_url.empty()) {
    KLOG_INFO("Adding pod URL with HTTP header", "URL", options_.static_pod_url);
    podsource::HttpSourceOptions ho;
    ho.url = options_.static_pod_url;
    ho.header = options_.static_pod_url_header;
    ho.node_name = options_.node_name;
    ho.check_frequency = options_.http_check_frequency;
    http_source_ = std::make_unique<podsource::HttpSource>(ho, *pod_config_, clock_);
  }
  Loops& loops = LoopsOrOwn(options_.loops, own_loops_, clock_);
  runtime_loop_ = loops.Start("runtime health loop", absl::InfinitePast(), [this](bool) {
    UpdateRuntimeUp();
    return clock_.Now() + options_.runtime_status_period;
  });
  pleg_->Start();
  // Housekeeping lists the runtime: a loop of its own, one round at a time, woken by the sync
  // loop's housekeeping tick.
  housekeeping_loop_ = loops.Start("housekeeping loop", absl::InfiniteFuture(), [this](bool) {
    RunGuarded("housekeeping", [this] { Housekeeping(); });
    housekeeping_running_ = false;
    return absl::InfiniteFuture();
  });
  KLOG_INFO("Starting kubelet main sync loop");
  next_sync_ = clock_.Now() + options_.sync_tick;
  next_housekeeping_ = clock_.Now() + options_.housekeeping_period;
  sync_loop_ =
      loops.Start("sync loop", absl::InfinitePast(), [this](bool) { return SyncLoopRound(); });
  sync_loop_ptr_ = sync_loop_.get();
  if (file_source_) {
    if (absl::Status st = file_source_->Start(); !st.ok()) return st;
  }
  if (http_source_) {
    if (absl::Status st = http_source_->Start(); !st.ok()) return st;
  }
  for (const ExtraPodSource& src : options_.extra_sources) {
    if (!src.start) continue;
    if (absl::Status st = src.start(*pod_config_); !st.ok()) return st;
  }
  if (api_status_syncer_) api_status_syncer_->Start();
  return absl::OkStatus();
}

void Kubelet::Stop() {
  if (stop_.HasBeenNotified()) return;
  stop_.Notify();
  if (file_source_) file_source_->Stop();
  if (http_source_) http_source_->Stop();
  for (const ExtraPodSource& src : options_.extra_sources) {
    if (src.stop) src.stop();
  }
  pod_config_->Shutdown();
  if (sync_loop_) sync_loop_->Stop();
  if (housekeeping_loop_) housekeeping_loop_->Stop();
  // The workers first: one waiting in the cache for a status newer than its last sync is woken
  // by the stop, not left to sit out the wait once the PLEG no longer updates the cache.
  pod_workers_->Stop();
  pleg_->Stop();
  if (runtime_loop_) runtime_loop_->Stop();
  if (api_status_syncer_) api_status_syncer_->Stop();
}

absl::Status Kubelet::SyncLoopHealthy() const {
  int64_t last = last_sync_loop_nanos_.load();
  if (last == 0) return absl::OkStatus();
  absl::Duration since = clock_.Now() - absl::FromUnixNanos(last);
  // Upstream: unhealthy when no iteration for more than 2 minutes + the sync tick.
  if (since > absl::Minutes(2) + options_.sync_tick) {
    return absl::UnavailableError(
        absl::StrCat("sync Loop took longer than expected: ", absl::FormatDuration(since)));
  }
  return absl::OkStatus();
}

absl::Time Kubelet::SyncLoopRound() {
  last_sync_loop_nanos_ = absl::ToUnixNanos(clock_.Now());
  if (stop_.HasBeenNotified()) return absl::InfiniteFuture();
  // Each update, event and request is its own boundary: one that throws is logged and the
  // round goes on with the others. Whatever is pushed meanwhile wakes the loop again.
  for (const podsource::PodUpdate& u : pod_config_->Drain()) {
    RunGuarded("SyncLoop pod update", [&] { HandleUpdate(u); });
  }
  for (const pleg::PodLifecycleEvent& e : pleg_->Events().Drain()) {
    RunGuarded("SyncLoop PLEG event", [&] { HandlePLEGEvent(e); });
  }
  std::set<std::string> uids;
  for (std::string& uid : sync_requests_.Drain()) uids.insert(std::move(uid));
  for (const std::string& uid : uids) {
    RunGuarded("SyncLoop probe result", [&] {
      auto pod = pod_manager_.GetPodByUID(uid);
      if (!pod) return;
      KLOG_V(4, "SyncLoop (probe result): sync requested", "pod", api::PodKey(*pod));
      pod_workers_->UpdatePod({SyncPodType::kSync, pod, std::nullopt, std::nullopt});
    });
  }
  // The ticks are due times of the kubelet's clock, so the loop runs in virtual time under a
  // fake clock.
  const absl::Time now = clock_.Now();
  if (now >= next_sync_) {
    RunGuarded("SyncLoop sync tick", [&] {
      pod_workers_->SyncDue();
      SyncPodsPastActiveDeadline();
    });
    next_sync_ = clock_.Now() + options_.sync_tick;
  }
  if (now >= next_housekeeping_) {
    // Housekeeping lists the runtime: it runs as a loop of its own, one round at a time.
    if (!housekeeping_running_.exchange(true)) housekeeping_loop_->Wake();
    next_housekeeping_ = clock_.Now() + options_.housekeeping_period;
  }
  return std::min(next_sync_, next_housekeeping_);
}

void Kubelet::HandleUpdate(const podsource::PodUpdate& u) {
  sources_seen_.insert(u.source);
  sources_ready_ = pod_config_->SeenAllSources(sources_seen_);
  using Op = podsource::PodOperation;
  // Mirror pods never run: they only trigger a sync of their static pod.
  std::vector<api::PodPtr> pods, mirrors;
  for (const api::PodPtr& p : u.pods) (api::IsMirrorPod(*p) ? mirrors : pods).push_back(p);
  switch (u.op) {
    case Op::kAdd:
      if (u.pods.empty()) return;
      KLOG_INFO("SyncLoop ADD", "source", u.source, "pods", PodKeys(u.pods));
      HandleMirrorPods(u.op, mirrors);
      HandlePodAdditions(pods);
      break;
    case Op::kUpdate:
      KLOG_INFO("SyncLoop UPDATE", "source", u.source, "pods", PodKeys(u.pods));
      HandleMirrorPods(u.op, mirrors);
      HandlePodUpdates(pods);
      break;
    case Op::kRemove:
      KLOG_INFO("SyncLoop REMOVE", "source", u.source, "pods", PodKeys(u.pods));
      HandleMirrorPods(u.op, mirrors);
      HandlePodRemoves(pods);
      break;
    case Op::kReconcile:
      KLOG_V(4, "SyncLoop RECONCILE", "source", u.source, "pods", PodKeys(u.pods));
      HandleMirrorPods(u.op, mirrors);
      HandlePodUpdates(pods);
      break;
    case Op::kDelete:
      KLOG_INFO("SyncLoop DELETE", "source", u.source, "pods", PodKeys(u.pods));
      HandleMirrorPods(u.op, mirrors);
      // Graceful deletion: the pod must stop, with its deletion grace period.
      for (const api::PodPtr& p : pods) {
        pod_manager_.AddOrUpdatePod(p);
        pod_workers_->UpdatePod(
            {SyncPodType::kKill, p, std::nullopt, p->metadata.deletion_grace_period_seconds});
      }
      break;
    case Op::kSet:
      KLOG_WARNING("Kubelet does not support snapshot update");
      break;
  }
  StatusChanged();
}

void Kubelet::HandleMirrorPods(podsource::PodOperation op,
                               const std::vector<api::PodPtr>& mirrors) {
  using Op = podsource::PodOperation;
  for (const api::PodPtr& mirror_pod : mirrors) {
    const api::Pod& mirror = *mirror_pod;
    if (op == Op::kRemove) {
      pod_manager_.RemovePod(mirror.metadata.uid);
    } else {
      pod_manager_.AddOrUpdatePod(mirror_pod);
    }
    // A status-only change is our own status push coming back.
    if (op == Op::kReconcile) continue;
    api::PodPtr pod = pod_manager_.GetPodByMirrorPod(mirror);
    if (!pod) {
      KLOG_V(2, "Unable to find pod for mirror pod, skipping", "mirrorPod", api::PodKey(mirror),
             "mirrorPodUID", mirror.metadata.uid);
      continue;
    }
    // Only a pod that has a worker (admitted, not rejected) is synced.
    if (!pod_workers_->IsKnown(pod->metadata.uid)) continue;
    pod_workers_->UpdatePod({SyncPodType::kUpdate, pod, std::nullopt, std::nullopt});
  }
}

void Kubelet::SyncMirrorPod(const api::Pod& pod) {
  MirrorClient& client = *options_.mirror_client;
  api::PodPtr mirror = pod_manager_.GetMirrorPodByPod(pod);
  std::optional<std::string> node_uid;
  if (options_.node_uid) node_uid = options_.node_uid();
  bool deleted = false;
  if (mirror) {
    const char* outdated = nullptr;
    if (mirror->metadata.deletion_timestamp) {
      outdated = "being deleted";
    } else if (!IsMirrorPodOf(*mirror, pod)) {
      outdated = "config hash differs";
    } else if (node_uid && !IsMirrorPodOwnedByNode(*mirror, options_.node_name, *node_uid)) {
      outdated = "not owned by the node";
    }
    if (outdated != nullptr) {
      // The mirror pod no longer mirrors the static pod: remove it; it is created again below
      // or, when the delete failed, in a later sync.
      KLOG_INFO("Trying to delete pod", "pod", api::PodKey(pod), "podUID", mirror->metadata.uid,
                "reason", outdated);
      absl::Status st = client.DeleteMirrorPod(mirror->metadata.namespace_, mirror->metadata.name,
                                               mirror->metadata.uid);
      if (st.ok()) {
        deleted = true;
        KLOG_INFO("Deleted mirror pod because it is outdated", "pod", api::PodKey(*mirror));
      } else if (!absl::IsNotFound(st) && !absl::IsAborted(st) && !absl::IsFailedPrecondition(st)) {
        KLOG_ERROR(st, "Failed deleting mirror pod", "pod", api::PodKey(*mirror));
      }
    }
  }
  if (mirror && !deleted) return;
  if (!node_uid) {
    KLOG_V(4, "No need to create a mirror pod, since failed to get node info from the cluster",
           "node", options_.node_name);
    mirror_retry_ = true;
    return;
  }
  KLOG_V(4, "Creating a mirror pod for static pod", "pod", api::PodKey(pod));
  absl::Status st = client.CreateMirrorPod(BuildMirrorPod(pod, options_.node_name, *node_uid));
  if (absl::IsAlreadyExists(st)) {
    // Another of the same name is still there (its deletion not seen yet): the watch delivers
    // it, and that syncs the pod again.
    KLOG_V(3, "Mirror pod already exists", "pod", api::PodKey(pod));
  } else if (!st.ok()) {
    KLOG_ERROR(st, "Failed creating a mirror pod for", "pod", api::PodKey(pod));
    mirror_retry_ = true;
  }
}

void Kubelet::HousekeepMirrorPods() {
  if (options_.mirror_client == nullptr) return;
  // upstream deleteOrphanedMirrorPods: once the static pod has stopped.
  std::set<std::string> seen;
  for (const api::PodPtr& orphan : pod_manager_.GetOrphanedMirrorPods()) {
    const api::Pod& mirror = *orphan;
    const std::string& uid = mirror.metadata.uid;
    seen.insert(uid);
    if (deleted_orphan_mirrors_.count(uid)) continue;
    if (pod_workers_->IsPodTerminatingByFullName(api::PodFullName(mirror))) continue;
    absl::Status st = options_.mirror_client->DeleteMirrorPod(mirror.metadata.namespace_,
                                                              mirror.metadata.name, uid);
    if (st.ok() || absl::IsNotFound(st) || absl::IsAborted(st) || absl::IsFailedPrecondition(st)) {
      KLOG_V(3, "Deleted mirror pod", "pod", api::PodKey(mirror), "podUID", uid);
      deleted_orphan_mirrors_.insert(uid);
    } else {
      KLOG_ERROR(st, "Encountered error when deleting mirror pod", "pod", api::PodKey(mirror));
    }
  }
  std::erase_if(deleted_orphan_mirrors_, [&](const std::string& uid) { return !seen.count(uid); });

  // Static pods whose mirror pod could not be created (the Node not registered yet, the API
  // server refusing for now) try again soon, not only at their next periodic sync.
  const absl::Time now = clock_.Now();
  if (!mirror_retry_.load() || now - last_mirror_retry_ < 5 * options_.housekeeping_period) return;
  if (!options_.node_uid || !options_.node_uid()) return;
  mirror_retry_ = false;
  last_mirror_retry_ = now;
  for (const api::PodPtr& pod : pod_manager_.GetPods()) {
    if (api::IsStaticPod(*pod) && !pod_manager_.GetMirrorPodByPod(*pod)) {
      TriggerPodSync(pod->metadata.uid);
    }
  }
}

void Kubelet::StatusChanged() {
  if (api_status_syncer_) api_status_syncer_->Notify();
}

void Kubelet::HandlePodAdditions(const std::vector<api::PodPtr>& pods) {
  std::vector<api::PodPtr> sorted = pods;
  std::stable_sort(sorted.begin(), sorted.end(), [](const api::PodPtr& a, const api::PodPtr& b) {
    return a->metadata.creation_timestamp.seconds < b->metadata.creation_timestamp.seconds;
  });
  const api::Node node = AdmissionNode();
  {
    absl::MutexLock lock(&admitting_mu_);
    admitting_.clear();
    for (const api::PodPtr& pod : sorted) {
      if (!pod->metadata.deletion_timestamp.has_value()) admitting_.push_back(pod);
    }
  }
  absl::Cleanup done_admitting = [this] {
    absl::MutexLock lock(&admitting_mu_);
    admitting_.clear();
  };
  for (const api::PodPtr& shared : sorted) {
    const api::Pod& pod = *shared;
    // Pods admitted before, still known to the workers, are not admitted twice.
    std::vector<api::PodPtr> admitted = ActivePods();
    std::erase_if(admitted,
                  [&](const api::PodPtr& p) { return p->metadata.uid == pod.metadata.uid; });
    if (pod_workers_->IsPodKnownTerminated(pod.metadata.uid)) {
      // The same pod (same UID) is back after it was stopped: a static pod whose manifest was
      // removed and restored.
      metrics::Kubelet()
          .restarted_pods.Add({{"static", api::IsStaticPod(pod) ? "true" : "false"}})
          .Increment();
    }
    {
      absl::MutexLock lock(&first_seen_mu_);
      first_seen_.try_emplace(pod.metadata.uid, FirstSeen{clock_.Now()});
    }
    pod_manager_.AddOrUpdatePod(shared);
    if (pod.metadata.deletion_timestamp.has_value()) {
      // Deleted before this kubelet saw it (e.g. while it was down): it only has to stop, with
      // its deletion grace period (upstream's pod workers: "Pod is marked for graceful
      // deletion, begin teardown"), and is not admitted.
      KLOG_V(4, "Pod is marked for graceful deletion, begin teardown", "pod", api::PodKey(pod),
             "podUID", pod.metadata.uid);
      pod_workers_->UpdatePod(
          {SyncPodType::kKill, shared, std::nullopt, pod.metadata.deletion_grace_period_seconds});
      continue;
    }
    // With in-place resize, a pod admitted before (a restarted kubelet) is admitted with what
    // was allocated to it, not its spec's possibly resized requests.
    AdmitResult r;
    {
      // A running pod's resize is decided apart from admissions: each sees the other's
      // allocation.
      std::optional<absl::MutexLock> resize_lock;
      if (allocation_) resize_lock.emplace(&pod_resize_mu_);
      api::PodPtr admit_pod = allocation_ ? WithAllocatedRequests(shared) : shared;
      r = CanAdmitPod(*admit_pod, admitted, node);
      if (r.admit && allocation_) {
        // The resources the pod was admitted with are its allocation.
        if (absl::Status st = allocation_->SetPodAllocation(*admit_pod); !st.ok()) {
          KLOG_ERROR(st, "SetPodAllocation failed", "pod", api::PodKey(pod));
        }
      }
    }
    if (!r.admit) {
      RejectPod(pod, r.reason, r.message);
      continue;
    }
    pod_workers_->UpdatePod({SyncPodType::kCreate, shared, std::nullopt, std::nullopt});
  }
}

void Kubelet::RejectPod(const api::Pod& pod, const std::string& reason,
                        const std::string& message) {
  KLOG_INFO("Pod admission denied", "podUID", pod.metadata.uid, "pod", api::PodKey(pod), "reason",
            reason, "message", message);
  Recorder().Record(events::PodRef(pod), events::kWarning, reason, message);
  // As upstream's rejectPod: the phase, reason and message, and the start time its status
  // manager sets on a first status; nothing else.
  api::PodStatus st;
  st.phase = "Failed";
  st.reason = reason;
  st.message = "Pod was rejected: " + message;
  st.start_time =
      pod.status.start_time.value_or(api::Time::FromUnix(absl::ToUnixSeconds(clock_.Now())));
  status_manager_.SetPodStatus(pod.metadata.uid, std::move(st));
  StatusChanged();
}

void Kubelet::HandlePodUpdates(const std::vector<api::PodPtr>& pods) {
  for (const api::PodPtr& shared : pods) {
    const api::Pod& pod = *shared;
    pod_manager_.AddOrUpdatePod(shared);
    auto st = status_manager_.GetPodStatus(pod.metadata.uid);
    if (st && !st->status.reason.empty() && st->status.phase == "Failed" &&
        !pod_workers_->IsKnown(pod.metadata.uid)) {
      continue;  // rejected at admission
    }
    pod_workers_->UpdatePod({SyncPodType::kUpdate, shared, std::nullopt, std::nullopt});
  }
}

void Kubelet::HandlePodRemoves(const std::vector<api::PodPtr>& pods) {
  for (const api::PodPtr& pod : pods) {
    pod_manager_.RemovePod(pod->metadata.uid);
    pod_workers_->UpdatePod({SyncPodType::kKill, pod, std::nullopt, std::nullopt});
  }
}

void Kubelet::HandlePLEGEvent(const pleg::PodLifecycleEvent& e) {
  auto pod = pod_manager_.GetPodByUID(e.pod_id);
  if (!pod) return;  // orphans are handled by housekeeping
  KLOG_V(
      2, "SyncLoop (PLEG): event for pod", "pod", api::PodKey(*pod), "event",
      absl::StrCat("{ID:", e.pod_id, " Type:", pleg::EventTypeName(e.type), " Data:", e.data, "}"));
  pod_workers_->UpdatePod({SyncPodType::kSync, pod, std::nullopt, std::nullopt, e.observed});
}

void Kubelet::Housekeeping() {
  if (!sources_ready_.load() && !pod_config_->SeenAllSources({})) {
    KLOG_V(4, "SyncLoop (housekeeping, skipped): sources aren't ready yet");
    return;
  }
  KLOG_V(4, "SyncLoop (housekeeping)");
  std::set<std::string> desired = pod_manager_.UIDs();
  pod_workers_->SyncKnownPods(desired);

  // Orphans: pods the runtime runs that no source wants any more (e.g. after a restart of the
  // kubelet with a manifest removed meanwhile) are killed.
  // The PLEG's last relist (at most one relist period old) stands in for a second listing.
  // What the PLEG has seen stopped since (a worker's own read after it killed the pod, younger
  // than the relist) is not stopped again: that would record a second Killing event.
  const auto relisted = pleg_->LastRelistPods();
  for (const container::Pod& listed : *relisted) {
    if (desired.count(listed.id)) continue;
    if (pod_workers_->IsKnown(listed.id) && !pod_workers_->IsFinished(listed.id)) continue;
    container::Pod rp = listed;
    // Only what still runs needs stopping (GetPods(all=false) semantics).
    std::erase_if(rp.containers, [](const container::Container& c) {
      return c.state != container::State::kRunning;
    });
    std::erase_if(rp.sandboxes, [](const container::Container& c) {
      return c.state != container::State::kRunning;
    });
    if (rp.containers.empty() && rp.sandboxes.empty()) continue;
    if (std::optional<container::Pod> seen = pleg_->LastSeen(listed.id)) {
      // A container that stopped never runs again: stopped in either view is stopped.
      std::set<std::string> stopped;
      for (const auto* list : {&seen->containers, &seen->sandboxes}) {
        for (const container::Container& c : *list) {
          if (c.state != container::State::kRunning) stopped.insert(c.id.id);
        }
      }
      auto is_stopped = [&stopped](const container::Container& c) {
        return stopped.count(c.id.id) > 0;
      };
      std::erase_if(rp.containers, is_stopped);
      std::erase_if(rp.sandboxes, is_stopped);
    }
    if (rp.containers.empty() && rp.sandboxes.empty()) continue;
    KLOG_INFO("Clean up orphaned pod containers", "podUID", rp.id, "pod",
              rp.namespace_ + "/" + rp.name);
    pod_workers_->UpdatePod({SyncPodType::kKill, nullptr, rp, std::nullopt});
  }

  std::set<std::string> keep_status = desired;
  status_manager_.RemoveOrphanedStatuses(keep_status);
  if (allocation_) {
    // The allocations of pods no source wants any more (upstream drops them with the pods'
    // statuses).
    for (const std::string& uid : allocation_->PodUIDs()) {
      if (!desired.count(uid)) (void)allocation_->Delete(uid);
    }
  }
  {
    absl::MutexLock lock(&reasons_mu_);
    for (auto it = reasons_.begin(); it != reasons_.end();) {
      it = desired.count(it->first) ? std::next(it) : reasons_.erase(it);
    }
  }
  {
    absl::MutexLock lock(&first_seen_mu_);
    for (auto it = first_seen_.begin(); it != first_seen_.end();) {
      it = desired.count(it->first) ? std::next(it) : first_seen_.erase(it);
    }
  }
  {
    absl::MutexLock lock(&terminal_mu_);
    for (auto it = terminal_overrides_.begin(); it != terminal_overrides_.end();) {
      it = desired.count(it->first) ? std::next(it) : terminal_overrides_.erase(it);
    }
  }
  // A pod whose worker finished (terminated and cleaned up once) is not active even while its
  // object is still here, so a clean-up that failed is retried (upstream's volume manager drops
  // terminated pods from its desired state the same way).
  std::set<std::string> active;
  for (const std::string& uid : desired) {
    if (!pod_workers_->IsFinished(uid)) active.insert(uid);
  }
  for (const std::string& uid : pod_workers_->KnownUIDs()) {
    if (pod_workers_->CouldHaveRunningContainers(uid)) active.insert(uid);
  }
  for (container::PodLifecycleParticipant* part : options_.participants) {
    part->Housekeeping(active);
  }
  CleanupOrphanedPodDirs(desired);
  HousekeepMirrorPods();
  // Deleted API pods whose workers finished since the last round can now be removed.
  StatusChanged();

  absl::Time now = clock_.Now();
  if (now - last_gc_ >= options_.container_gc_period) {
    last_gc_ = now;
    if (absl::Status st = runtime_.GarbageCollect(options_.gc_policy, true); !st.ok()) {
      KLOG_ERROR(st, "Container garbage collection failed");
    }
  }
}

void Kubelet::CleanupOrphanedPodDirs(const std::set<std::string>& desired) {
  std::string pods_dir = options_.root_dir + "/pods";
  DIR* d = ::opendir(pods_dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> uids;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    uids.push_back(name);
  }
  ::closedir(d);
  for (const std::string& uid : uids) {
    if (desired.count(uid)) continue;
    if (pod_workers_->CouldHaveRunningContainers(uid) && pod_workers_->IsKnown(uid)) continue;
    std::string dir = pods_dir + "/" + uid;
    if (HasMountsUnder(dir)) {
      KLOG_V(3, "Orphaned pod found, but volumes are still mounted", "podUID", uid);
      continue;
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (ec) {
      KLOG_ERROR(absl::InternalError(ec.message()), "Failed to remove orphaned pod dir", "podUID",
                 uid, "path", dir);
    } else {
      KLOG_V(3, "Cleaned up orphaned pod directory", "podUID", uid, "path", dir);
    }
  }
}

absl::Status Kubelet::MakePodDataDirs(const api::Pod& pod) {
  std::string base = options_.root_dir + "/pods/" + pod.metadata.uid;
  std::error_code ec;
  for (const char* sub : {"", "/volumes", "/plugins", "/containers"}) {
    std::filesystem::create_directories(base + sub, ec);
    if (ec) {
      return absl::InternalError(
          absl::StrCat("error making pod data directories: mkdir ", base, sub, ": ", ec.message()));
    }
  }
  return absl::OkStatus();
}

status::ReasonCache Kubelet::Reasons(const std::string& uid) const {
  absl::MutexLock lock(&reasons_mu_);
  auto it = reasons_.find(uid);
  return it == reasons_.end() ? status::ReasonCache() : it->second;
}

void Kubelet::UpdateReasons(const std::string& uid, const container::PodSyncResult& result) {
  absl::MutexLock lock(&reasons_mu_);
  status::ReasonCache& rc = reasons_[uid];
  for (const auto& r : result.results) {
    if (r.action != container::SyncResult::Action::kStartContainer &&
        r.action != container::SyncResult::Action::kInitContainer) {
      continue;
    }
    if (r.error.ok()) {
      rc.erase(r.target);
    } else {
      rc[r.target] =
          status::WaitingReason{r.reason.empty() ? "CreateContainerError" : r.reason,
                                r.message.empty() ? std::string(r.error.message()) : r.message};
    }
  }
}

std::optional<api::PodStatus> Kubelet::UpdateStatusFrom(SyncPodType type, const api::Pod& pod,
                                                        const container::PodStatus& runtime_status,
                                                        bool unless_terminal) {
  const std::string& uid = pod.metadata.uid;
  auto old = status_manager_.GetPodStatus(uid);
  status::ReasonCache reasons = Reasons(uid);
  // Without a status of its own yet, the pod's status from its source (an API pod's) is the
  // old one, as upstream's.
  const api::PodStatus* old_status = old ? &old->status : &pod.status;
  CheckActiveDeadline(pod, old_status);
  std::optional<status::TerminalReason> terminal_reason = TerminalReasonOf(uid);
  status::GenerateInput in = StatusInput(pod, runtime_status, old_status);
  in.reasons = &reasons;
  in.terminal = terminal_reason ? &*terminal_reason : nullptr;
  api::PodStatus api_status = GenerateAPIPodStatus(in);
  if (unless_terminal && status::IsTerminalPhase(api_status.phase)) return std::nullopt;
  // From the first time the sync loop saw the pod: kubelet_pod_worker_start_duration_seconds to
  // its first SyncPod (creates, as upstream), kubelet_pod_start_duration_seconds to Running.
  const bool first_sync = type == SyncPodType::kCreate;
  const bool started = (!old || old->status.phase == "Pending") && api_status.phase == "Running";
  if (first_sync || started) {
    absl::MutexLock lock(&first_seen_mu_);
    if (auto it = first_seen_.find(uid); it != first_seen_.end()) {
      const double since = absl::ToDoubleSeconds(clock_.Now() - it->second.at);
      if (first_sync) metrics::ObservePodWorkerStart(since);
      if (started) metrics::ObservePodStart(since);
    }
  }
  status_manager_.SetPodStatus(uid, api_status);
  StatusChanged();
  return api_status;
}

bool Kubelet::SetFirstSync(const std::string& uid, FirstSeen::Sync to) {
  absl::MutexLock lock(&first_seen_mu_);
  auto it = first_seen_.find(uid);
  // Only forward: a pod's later syncs leave its first one done.
  if (it == first_seen_.end() || it->second.sync >= to) return false;
  if (to == FirstSeen::Sync::kPreparing) it->second.sync_began = clock_.Now();
  it->second.sync = to;
  return true;
}

absl::StatusOr<bool> Kubelet::SyncPod(SyncPodType type, const api::Pod& pod,
                                      const container::PodStatus& runtime_status) {
  const std::string& uid = pod.metadata.uid;
  SetFirstSync(uid, FirstSeen::Sync::kPreparing);
  // However it ends, the pod's first sync is over: a first status held for it can go.
  absl::Cleanup first_sync_end = [this, &uid] {
    if (SetFirstSync(uid, FirstSeen::Sync::kDone)) StatusChanged();
  };
  api::PodStatus api_status = *UpdateStatusFrom(type, pod, runtime_status);
  const bool terminal = status::IsTerminalPhase(api_status.phase);
  if (terminal) {
    KLOG_V(2, "Pod is terminal, tearing it down", "pod", api::PodKey(pod), "phase",
           api_status.phase);
    return true;
  }
  if (options_.mirror_client != nullptr && api::IsStaticPod(pod)) SyncMirrorPod(pod);
  if (absl::Status st = MakePodDataDirs(pod); !st.ok()) {
    Recorder().Record(events::PodRef(pod), events::kWarning,
                      events::kFailedToMakePodDataDirectories,
                      absl::StrCat("error making pod data directories: ", st.message()));
    return st;
  }
  for (container::PodLifecycleParticipant* part : options_.participants) {
    if (absl::Status st = part->PrepareForSync(pod); !st.ok()) {
      KLOG_ERROR(st, "Unable to prepare pod for sync", "pod", api::PodKey(pod), "podUID", uid,
                 "subsystem", part->Name());
      return st;
    }
  }
  SetFirstSync(uid, FirstSeen::Sync::kRuntime);
  KLOG_V(4, "SyncPod enter", "pod", api::PodKey(pod), "podUID", uid, "updateType",
         SyncPodTypeName(type));
  // With in-place resize the runtime works from the pod with its fresh status (allocated and
  // actual resources); a resize the pod asks for is decided first (not for static pods).
  std::optional<api::Pod> resizing;
  if (allocation_) {
    resizing = pod;
    resizing->status = api_status;
    if (!api::IsStaticPod(pod)) HandlePodResourcesResize(&*resizing);
  }
  const api::Pod& runtime_pod = resizing ? *resizing : pod;
  const absl::Time sync_start = clock_.Now();
  // The PLEG leaves the pod to this sync while it changes the runtime, and takes the status
  // read after the changes as the pod's new state: a new pod is read once per start, not by
  // every relist that happens to see it half-made.
  pleg_->BeginSync(uid);
  bool sync_ended = false;  // an exception out of the runtime still ends the PLEG's bracket
  auto end_sync = absl::MakeCleanup([&] {
    if (!sync_ended) pleg_->EndSync(uid, nullptr, absl::InfinitePast());
  });
  container::PodSyncResult result = runtime_.SyncPod(runtime_pod, runtime_status);
  metrics::ObservePodWorker(SyncPodTypeName(type),
                            absl::ToDoubleSeconds(clock_.Now() - sync_start));
  std::optional<container::PodStatus> observed;
  const absl::Time observed_at = clock_.Now();
  // A step that failed without touching the runtime (an image that cannot be pulled, a back-off)
  // leaves nothing new to read; one that failed half-way is the relist's to find.
  // (The sandbox config step of every sync changes nothing.)
  const bool changed =
      std::any_of(result.results.begin(), result.results.end(), [](const container::SyncResult& r) {
        using Action = container::SyncResult::Action;
        switch (r.action) {
          case Action::kConfigPodSandbox:
            return false;
          case Action::kStartContainer:
          case Action::kInitContainer:
            return r.error.ok();
          default:
            return true;
        }
      });
  if (changed) {
    absl::StatusOr<container::PodStatus> now =
        runtime_.GetPodStatus(uid, pod.metadata.name, pod.metadata.namespace_);
    if (now.ok()) observed = *std::move(now);
  }
  sync_ended = true;
  pleg_->EndSync(uid, observed ? &*observed : nullptr, observed_at);
  UpdateReasons(uid, result);
  for (container::PodLifecycleParticipant* part : options_.participants) {
    part->AfterSync(pod, runtime_status);
  }
  // What this sync changed and did not read back, the PLEG sees without waiting for its period.
  if (changed && !observed) pleg_->Poke();
  if (observed) {
    // Report what the sync achieved now (containers started: Running) rather than after the
    // next sync, unless the pod turned terminal: that is the next sync's to handle.
    if (auto now = UpdateStatusFrom(SyncPodType::kSync, pod, *observed, /*unless_terminal=*/true)) {
      api_status = *std::move(now);
    }
  }
  if (absl::Status err = SyncResultError(result); !err.ok()) return err;
  if (resizing && !observed && status::IsPodResizeInProgress(pod, api_status)) {
    // While a resize is in progress the cache is refreshed after each sync, so the next one
    // sees the resources the runtime now reports (upstream pleg.UpdateCache).
    if (absl::Status st = pleg_->UpdateCache(uid, pod.metadata.name, pod.metadata.namespace_);
        !st.ok()) {
      KLOG_ERROR(st, "Failed to update pod cache", "pod", api::PodKey(pod));
      return st;
    }
  }
  return false;
}

absl::Status Kubelet::SyncTerminatingPod(const api::Pod& pod, const container::PodStatus& st,
                                         std::optional<int64_t> grace_period_seconds) {
  KLOG_V(2, "Pod terminating", "pod", api::PodKey(pod), "podUID", pod.metadata.uid);
  for (container::PodLifecycleParticipant* part : options_.participants) {
    part->PodTerminating(pod);
  }
  container::Pod running = container::ConvertPodStatusToRunningPod(runtime_.Type(), st);
  // The status may be older than the last start: also take what the runtime lists now.
  auto now_running = runtime_.GetPods(false);
  if (now_running.ok()) {
    for (const auto& rp : *now_running) {
      if (rp.id != pod.metadata.uid) continue;
      for (const auto& c : rp.containers) {
        bool known = std::any_of(running.containers.begin(), running.containers.end(),
                                 [&](const container::Container& k) { return k.id == c.id; });
        if (!known) running.containers.push_back(c);
      }
      for (const auto& s : rp.sandboxes) {
        bool known = std::any_of(running.sandboxes.begin(), running.sandboxes.end(),
                                 [&](const container::Container& k) { return k.id.id == s.id.id; });
        if (!known) running.sandboxes.push_back(s);
      }
    }
  }
  running.id = pod.metadata.uid;
  running.name = pod.metadata.name;
  running.namespace_ = pod.metadata.namespace_;
  absl::StatusOr<container::PodStatus> final_status =
      absl::UnknownError("the pod's final status was not read");
  if (absl::Status err = KillPodObserved(&pod, running, grace_period_seconds, &final_status);
      !err.ok()) {
    return absl::Status(err.code(),
                        absl::StrCat("failed to \"KillPodSandbox\" for \"", pod.metadata.uid,
                                     "\" with KillPodSandboxError: ", std::string(err.message())));
  }
  // The IPs the pod had stay in its final status (upstream preserveDataFromBeforeStopping).
  if (final_status.ok() && final_status->ips.empty()) final_status->ips = st.ips;
  if (final_status.ok() && pod_manager_.GetPodByUID(pod.metadata.uid)) {
    auto old = status_manager_.GetPodStatus(pod.metadata.uid);
    const api::PodStatus* old_status = old ? &old->status : &pod.status;
    CheckActiveDeadline(pod, old_status);
    std::optional<status::TerminalReason> terminal_reason = TerminalReasonOf(pod.metadata.uid);
    status::GenerateInput in = StatusInput(pod, *final_status, old_status);
    in.pod_is_terminal = true;
    in.terminal = terminal_reason ? &*terminal_reason : nullptr;
    api::PodStatus final_api = GenerateAPIPodStatus(in);
    status_manager_.SetPodStatus(pod.metadata.uid, std::move(final_api));
  }
  StatusChanged();
  KLOG_V(2, "Pod termination stopped all running containers", "pod", api::PodKey(pod));
  return absl::OkStatus();
}

absl::Status Kubelet::SyncTerminatingRuntimePod(const container::Pod& running) {
  KLOG_V(2, "Stopping orphaned pod", "podUID", running.id, "pod",
         running.namespace_ + "/" + running.name);
  // The state read after the kill becomes the PLEG's, so the next housekeeping does not stop
  // the pod again from an older relist.
  absl::StatusOr<container::PodStatus> final_status =
      absl::UnknownError("the pod's final status was not read");
  return KillPodObserved(nullptr, running, std::nullopt, &final_status);
}

absl::Status Kubelet::KillPodObserved(const api::Pod* pod, const container::Pod& running,
                                      std::optional<int64_t> grace_period_seconds,
                                      absl::StatusOr<container::PodStatus>* final_status) {
  // As SyncPod: the relists leave the pod to the kill, and the final status read after it is
  // the PLEG's new state of the pod.
  pleg_->BeginSync(running.id);
  bool sync_ended = false;  // an exception out of the runtime still ends the PLEG's bracket
  auto end_sync = absl::MakeCleanup([&] {
    if (!sync_ended) pleg_->EndSync(running.id, nullptr, absl::InfinitePast());
  });
  if (absl::Status err = runtime_.KillPod(pod, running, grace_period_seconds); !err.ok()) {
    return err;
  }
  const absl::Time observed_at = clock_.Now();
  *final_status = runtime_.GetPodStatus(running.id, running.name, running.namespace_);
  sync_ended = true;
  pleg_->EndSync(running.id, final_status->ok() ? &**final_status : nullptr, observed_at);
  return absl::OkStatus();
}

absl::Status Kubelet::SyncTerminatedPod(const api::Pod& pod, const container::PodStatus&) {
  KLOG_V(2, "Pod is terminated and will need no more status updates", "pod", api::PodKey(pod));
  for (auto it = options_.participants.rbegin(); it != options_.participants.rend(); ++it) {
    if (absl::Status st = (*it)->CleanupTerminatedPod(pod); !st.ok()) {
      KLOG_ERROR(st, "Failed to clean up terminated pod", "pod", api::PodKey(pod), "podUID",
                 pod.metadata.uid, "subsystem", (*it)->Name());
    }
  }
  if (!pod_manager_.GetPodByUID(pod.metadata.uid)) runtime_.ForgetPod(pod.metadata.uid);
  StatusChanged();
  return absl::OkStatus();
}

bool Kubelet::ShouldPodContentBeRemoved(const std::string& uid) const {
  // As upstream: only a deleted (or evicted) pod loses its dead containers; a pod that simply
  // completed keeps them so its final state stays visible.
  if (pod_manager_.GetPodByUID(uid)) return false;
  return !pod_workers_->IsKnown(uid) || pod_workers_->IsPodKnownTerminated(uid);
}

bool Kubelet::ShouldPodRuntimeBeRemoved(const std::string& uid) const {
  if (!pod_workers_->IsKnown(uid)) return pod_manager_.GetPodByUID(uid) == nullptr;
  return pod_workers_->IsPodKnownTerminated(uid);
}

void Kubelet::TriggerPodSync(const std::string& uid) { sync_requests_.Push(uid); }

bool Kubelet::EvictPod(const std::string& uid, const std::string& message,
                       std::optional<int64_t> grace_seconds, bool disruption_target) {
  auto pod = pod_manager_.GetPodByUID(uid);
  if (!pod) return false;
  if (api::IsCriticalPod(*pod)) {
    KLOG_ERROR(absl::FailedPreconditionError("critical pod"),
               "Eviction manager: cannot evict a critical pod", "pod", api::PodKey(*pod), "message",
               message);
    return false;
  }
  {
    absl::MutexLock lock(&terminal_mu_);
    status::TerminalReason r{"Evicted", message, std::nullopt};
    if (disruption_target && options_.pod_disruption_conditions) r.disruption_since = clock_.Now();
    terminal_overrides_[uid] = std::move(r);
  }
  Recorder().Record(events::PodRef(*pod), events::kWarning, events::kEvicted, message);
  KLOG_INFO("Eviction manager: pod is evicted successfully", "pod", api::PodKey(*pod), "message",
            message);
  pod_workers_->UpdatePod({SyncPodType::kKill, pod, std::nullopt, grace_seconds});
  return true;
}

bool Kubelet::TerminatePod(const std::string& uid, status::TerminalReason reason,
                           std::optional<int64_t> grace_seconds) {
  auto pod = pod_manager_.GetPodByUID(uid);
  if (!pod) return false;
  if (!options_.pod_disruption_conditions) reason.disruption_since.reset();
  {
    absl::MutexLock lock(&terminal_mu_);
    terminal_overrides_[uid] = std::move(reason);
  }
  pod_workers_->UpdatePod({SyncPodType::kKill, pod, std::nullopt, grace_seconds});
  return true;
}

bool Kubelet::IsPodTerminated(const std::string& uid) const {
  return !pod_workers_->IsKnown(uid) || pod_workers_->IsPodKnownTerminated(uid);
}

absl::Status Kubelet::KillPodNow(const std::string& uid, status::TerminalReason reason,
                                 int64_t grace_seconds) {
  auto pod = pod_manager_.GetPodByUID(uid);
  if (!pod || !TerminatePod(uid, std::move(reason), grace_seconds)) {
    return absl::NotFoundError(absl::StrCat("pod ", uid, " is not known"));
  }
  // upstream killPodNow: 1.5 x the grace period, at least 10 s.
  const absl::Duration timeout = std::max(absl::Seconds(10), absl::Seconds(grace_seconds) * 3 / 2);
  const absl::Time deadline = clock_.Now() + timeout;
  absl::Notification never;
  while (!IsPodTerminated(uid)) {
    if (clock_.Now() >= deadline) {
      Recorder().Record(events::PodRef(*pod), events::kWarning, "ExceededGracePeriod",
                        "Container runtime did not kill the pod within specified grace period.");
      return absl::DeadlineExceededError("timeout waiting to kill pod");
    }
    clock_.WaitForNotification(never, std::min(deadline, clock_.Now() + absl::Milliseconds(200)));
  }
  return absl::OkStatus();
}

std::optional<status::TerminalReason> Kubelet::TerminalReasonOf(const std::string& uid) {
  absl::MutexLock lock(&terminal_mu_);
  auto it = terminal_overrides_.find(uid);
  if (it == terminal_overrides_.end()) return std::nullopt;
  return it->second;
}

status::GenerateInput Kubelet::StatusInput(const api::Pod& pod, const container::PodStatus& rs,
                                           const api::PodStatus* old) {
  status::GenerateInput in;
  in.pod = &pod;
  in.runtime_status = &rs;
  in.old_status = old;
  in.probes = &options_.probe_state;
  in.host_ip = options_.host_ip;
  in.ready_to_start_condition = options_.pod_ready_to_start_containers_condition;
  in.host_ips = options_.pod_host_ips;
  if (allocation_) {
    in.in_place_vertical_scaling = true;
    in.allocation = [this, uid = pod.metadata.uid](const std::string& container) {
      return allocation_->GetContainerResourceAllocation(uid, container);
    };
  }
  in.now = clock_.Now();
  return in;
}

api::PodStatus Kubelet::GenerateAPIPodStatus(const status::GenerateInput& in) {
  api::PodStatus s = status::GeneratePodStatus(in);
  if (allocation_) DeterminePodResizeStatus(*in.pod, &s);
  return s;
}

api::Node Kubelet::AdmissionNode() const {
  if (options_.node) return options_.node();
  api::Node node;
  node.metadata.name = options_.node_name;
  node.metadata.labels = {{"kubernetes.io/hostname", options_.node_name},
                          {"kubernetes.io/os", "linux"}};
  return node;
}

AdmitResult Kubelet::CanAdmitPod(const api::Pod& pod, const std::vector<api::PodPtr>& others,
                                 const api::Node& node) {
  std::vector<api::PodPtr> counted;
  if (allocation_) {
    counted.reserve(others.size());
    for (const api::PodPtr& p : others) counted.push_back(WithAllocatedRequests(p));
  }
  const std::vector<api::PodPtr>& admitted = allocation_ ? counted : others;
  AdmitResult r = options_.sysctls.Admit(pod);
  if (r.admit) {
    r = AdmitPod(pod, admitted, options_.allocatable, node, allocation_ != nullptr);
  }
  for (container::PodLifecycleParticipant* part : options_.participants) {
    if (!r.admit) break;
    container::AdmitDecision d = part->Admit(pod, admitted);
    if (!d.admit) r = AdmitResult{false, d.reason, d.message};
  }
  return r;
}

api::PodPtr Kubelet::WithAllocatedRequests(const api::PodPtr& pod) const {
  std::optional<api::Pod> copy;
  for (size_t i = 0; i < pod->spec.containers.size(); ++i) {
    const api::Container& c = pod->spec.containers[i];
    if (c.resources.requests.empty()) continue;
    std::optional<api::ResourceList> alloc =
        allocation_->GetContainerResourceAllocation(pod->metadata.uid, c.name);
    if (!alloc) continue;
    // Both are set, a resource the allocation lacks as zero (upstream's map lookups).
    auto allocated = [&](const char* name) {
      auto it = alloc->find(name);
      return it == alloc->end() ? api::Quantity() : it->second;
    };
    // Requests that already are the allocation (nothing resized: the common case) need no copy
    // of the pod; admission counts every admitted pod this way, once per pod admitted.
    bool same = true;
    for (const char* name : {api::kResourceCPU, api::kResourceMemory}) {
      auto req = c.resources.requests.find(name);
      const api::Quantity want = allocated(name);
      same = same && req != c.resources.requests.end() && req->second == want &&
             req->second.format() == want.format();
    }
    if (same) continue;
    if (!copy) copy = *pod;
    api::ResourceList& reqs = copy->spec.containers[i].resources.requests;
    for (const char* name : {api::kResourceCPU, api::kResourceMemory}) reqs[name] = allocated(name);
  }
  if (!copy) return pod;
  return std::make_shared<const api::Pod>(*std::move(copy));
}

void Kubelet::DeterminePodResizeStatus(const api::Pod& pod, api::PodStatus* s) {
  if (!status::PodResizeSpecStatusDiffer(pod, *s)) {
    // Done (or nothing asked): the last decision is forgotten.
    if (absl::Status st = allocation_->SetPodResizeStatus(pod.metadata.uid, ""); !st.ok()) {
      KLOG_ERROR(st, "SetPodResizeStatus failed", "pod", pod.metadata.name);
    }
    s->resize.clear();
    return;
  }
  s->resize = allocation_->GetPodResizeStatus(pod.metadata.uid).value_or("");
}

namespace {

// upstream resource.GetResourceRequestQuantity: the app containers' sum, at least the largest
// init container's, plus the overhead when non-zero.
api::Quantity PodResourceRequest(const api::Pod& pod, const char* name) {
  api::Quantity total;
  for (const api::Container& c : pod.spec.containers) {
    if (auto it = c.resources.requests.find(name); it != c.resources.requests.end()) {
      total = total + it->second;
    }
  }
  for (const api::Container& c : pod.spec.init_containers) {
    if (auto it = c.resources.requests.find(name); it != c.resources.requests.end()) {
      if (total < it->second) total = it->second;
    }
  }
  if (auto it = pod.spec.overhead.find(name); it != pod.spec.overhead.end() && !total.IsZero()) {
    total = total + it->second;
  }
  return total;
}

api::ContainerStatus* FindStatus(api::PodStatus& status, const std::string& name) {
  for (api::ContainerStatus& cs : status.container_statuses) {
    if (cs.name == name) return &cs;
  }
  return nullptr;
}

}  // namespace

void Kubelet::HandlePodResourcesResize(api::Pod* pod) {
  if (pod->status.phase != "Running") return;
  bool resized = false;
  for (const api::Container& c : pod->spec.containers) {
    if (c.resources.requests.empty()) continue;
    const api::ContainerStatus* cs = FindStatus(pod->status, c.name);
    if (cs == nullptr) {
      KLOG_V(5, "ContainerStatus not found", "pod", pod->metadata.name, "container", c.name);
      break;
    }
    if (cs->allocated_resources.size() != c.resources.requests.size()) {
      KLOG_V(5, "ContainerStatus.AllocatedResources length mismatch", "pod", pod->metadata.name,
             "container", c.name);
      break;
    }
    if (c.resources.requests != cs->allocated_resources) {
      resized = true;
      break;
    }
  }
  if (!resized) return;

  absl::MutexLock lock(&pod_resize_mu_);
  // upstream canResizePod.
  api::Pod updated = *pod;
  std::string resize_status;
  bool fit = false;
  const int64_t cpu_requests = PodResourceRequest(updated, api::kResourceCPU).MilliValue();
  const int64_t memory_requests = PodResourceRequest(updated, api::kResourceMemory).Value();
  if (cpu_requests > options_.allocatable.milli_cpu ||
      memory_requests > options_.allocatable.memory_bytes) {
    KLOG_V(3, "Resize is not feasible as request exceeds allocatable node resources", "pod",
           updated.metadata.name);
    resize_status = status::kResizeInfeasible;
  } else {
    // The pod asks again with its desired resources, next to the other active pods (and those
    // of a batch being admitted right now, so a restarted kubelet does not hand a resize what
    // the pods it is still admitting were allocated).
    std::vector<api::PodPtr> others = ActiveAndAdmittingPods();
    std::erase_if(others,
                  [&](const api::PodPtr& p) { return p->metadata.uid == updated.metadata.uid; });
    AdmitResult r = CanAdmitPod(updated, others, AdmissionNode());
    if (!r.admit) {
      KLOG_V(3, "Resize cannot be accommodated", "pod", updated.metadata.name, "reason", r.reason,
             "message", r.message);
      resize_status = status::kResizeDeferred;
    } else {
      for (const api::Container& c : updated.spec.containers) {
        api::ContainerStatus* cs = FindStatus(updated.status, c.name);
        if (cs == nullptr) continue;
        for (const auto& [name, q] : c.resources.requests) cs->allocated_resources[name] = q;
      }
      fit = true;
      resize_status = status::kResizeInProgress;
    }
  }
  if (fit) {
    if (absl::Status st = allocation_->SetPodAllocation(updated); !st.ok()) {
      KLOG_ERROR(st, "SetPodAllocation failed", "pod", api::PodKey(updated));
      return;
    }
  }
  if (absl::Status st = allocation_->SetPodResizeStatus(updated.metadata.uid, resize_status);
      !st.ok()) {
    KLOG_ERROR(st, "SetPodResizeStatus failed", "pod", api::PodKey(updated));
    return;
  }
  updated.status.resize = resize_status;
  status_manager_.SetPodStatus(updated.metadata.uid, updated.status);
  StatusChanged();
  *pod = std::move(updated);
}

void Kubelet::CheckActiveDeadline(const api::Pod& pod, const api::PodStatus* old) {
  if (!pod.spec.active_deadline_seconds.has_value() || old == nullptr) return;
  if (!status::PastActiveDeadline(pod, old->start_time, clock_.Now())) return;
  {
    absl::MutexLock lock(&terminal_mu_);
    // An eviction decided first keeps its reason.
    terminal_overrides_.try_emplace(
        pod.metadata.uid, status::TerminalReason{status::kDeadlineExceededReason,
                                                 status::kDeadlineExceededMessage, std::nullopt});
  }
  Recorder().Record(events::PodRef(pod), events::kNormal, status::kDeadlineExceededReason,
                    status::kDeadlineExceededMessage);
}

void Kubelet::SyncPodsPastActiveDeadline() {
  const absl::Time now = clock_.Now();
  for (const api::PodPtr& pod : pod_manager_.GetPods()) {
    if (!pod->spec.active_deadline_seconds.has_value()) continue;
    const std::string& uid = pod->metadata.uid;
    auto st = status_manager_.GetPodStatus(uid);
    if (!st || status::IsTerminalPhase(st->status.phase)) continue;
    if (!status::PastActiveDeadline(*pod, st->status.start_time, now)) continue;
    if (pod_workers_->IsPodTerminationRequested(uid)) continue;
    KLOG_V(4, "SyncLoop (SYNC): pod past its active deadline", "pod", api::PodKey(*pod));
    pod_workers_->UpdatePod({SyncPodType::kSync, pod, std::nullopt, std::nullopt});
  }
}

std::optional<std::string> Kubelet::RunningContainerID(const std::string& uid,
                                                       const std::string& name) const {
  container::Cache::Entry e = cache_.Get(uid);
  const container::ContainerStatus* c = e.status.GetRunningContainerStatus(name);
  if (c == nullptr) return std::nullopt;
  return c->id.id;
}

std::vector<api::PodPtr> Kubelet::ActivePods() const {
  std::vector<api::PodPtr> out = pod_manager_.GetPods();
  std::erase_if(out, [&](const api::PodPtr& p) {
    auto st = status_manager_.GetPodStatus(p->metadata.uid);
    return (st && status::IsTerminalPhase(st->status.phase)) ||
           pod_workers_->IsPodTerminationRequested(p->metadata.uid);
  });
  return out;
}

std::vector<api::PodPtr> Kubelet::ActiveAndAdmittingPods() const {
  std::vector<api::PodPtr> out = ActivePods();
  std::set<std::string> seen;
  for (const api::PodPtr& p : out) seen.insert(p->metadata.uid);
  absl::MutexLock lock(&admitting_mu_);
  for (const api::PodPtr& p : admitting_) {
    if (seen.insert(p->metadata.uid).second) out.push_back(p);
  }
  return out;
}

std::vector<api::Pod> Kubelet::GetActivePods() const {
  std::vector<api::Pod> out;
  for (const api::PodPtr& p : ActivePods()) out.push_back(*p);
  return out;
}

absl::Status Kubelet::DeleteAllUnusedContainers() {
  return runtime_.GarbageCollect(options_.gc_policy, true);
}

std::vector<api::Pod> Kubelet::GetPodsWithStatus() const {
  std::vector<api::Pod> pods;
  for (const api::PodPtr& shared : pod_manager_.GetPods()) {
    api::Pod& p = pods.emplace_back(*shared);
    auto st = status_manager_.GetPodStatus(p.metadata.uid);
    if (st) p.status = st->status;
  }
  return pods;
}

namespace {

// A runtime condition as upstream prints one (RuntimeCondition.String()).
std::string ConditionText(const std::string& type, bool found, bool status,
                          const std::string& reason, const std::string& message) {
  if (!found) return "<nil>";
  return absl::StrCat(type, "=", status ? "true" : "false", " reason:", reason,
                      " message:", message);
}

}  // namespace

void Kubelet::UpdateRuntimeUp() {
  auto status = cri_runtime_.Status(false);
  if (!status.ok()) {
    // As upstream: the runtime state is left as it was; "container runtime is down" follows
    // once no good Status came for 30 s.
    KLOG_ERROR(status.status(), "Container runtime sanity check failed");
    runtime_ready_ = false;
    return;
  }
  bool runtime_ready = false, network_ready = false, runtime_found = false, network_found = false;
  std::string runtime_text, network_text;
  for (const auto& cond : status->status().conditions()) {
    if (cond.type() == "RuntimeReady") {
      runtime_found = true;
      runtime_ready = cond.status();
      runtime_text = ConditionText(cond.type(), true, cond.status(), cond.reason(), cond.message());
    }
    if (cond.type() == "NetworkReady") {
      network_found = true;
      network_ready = cond.status();
      network_text = ConditionText(cond.type(), true, cond.status(), cond.reason(), cond.message());
    }
  }
  if (!runtime_found) runtime_text = "<nil>";
  if (!network_found) network_text = "<nil>";
  if (network_ready != network_ready_.load() || first_runtime_update_) {
    if (network_ready) {
      KLOG_V(2, "Container runtime network ready");
    } else {
      KLOG_ERROR(absl::UnavailableError(network_text), "Container runtime network not ready",
                 "networkReady", network_text);
    }
  }
  if (runtime_ready != runtime_ready_.load() || first_runtime_update_) {
    if (runtime_ready) {
      KLOG_INFO("Container runtime status", "runtimeReady", true);
    } else {
      KLOG_ERROR(absl::UnavailableError(runtime_text), "Container runtime not ready",
                 "runtimeReady", runtime_text);
    }
  }
  first_runtime_update_ = false;
  network_ready_ = network_ready;
  runtime_ready_ = runtime_ready;
  absl::MutexLock lock(&runtime_state_mu_);
  network_error_ =
      network_ready ? "" : absl::StrCat("container runtime network not ready: ", network_text);
  runtime_error_ = runtime_ready ? "" : absl::StrCat("container runtime not ready: ", runtime_text);
  if (runtime_ready) last_runtime_sync_ = clock_.Now();
}

std::vector<std::string> Kubelet::ReadinessErrors() const {
  std::vector<std::string> errs;
  std::string runtime_error, network_error;
  absl::Time last_sync;
  {
    absl::MutexLock lock(&runtime_state_mu_);
    runtime_error = runtime_error_;
    network_error = network_error_;
    last_sync = last_runtime_sync_;
  }
  if (last_sync == absl::InfinitePast()) {
    errs.push_back("container runtime status check may not have completed yet");
  } else if (last_sync + absl::Seconds(30) <= clock_.Now()) {
    errs.push_back("container runtime is down");
  }
  if (absl::Status pleg = PLEGHealthy(); !pleg.ok()) {
    errs.push_back(absl::StrCat("PLEG is not healthy: ", pleg.message()));
  }
  if (!runtime_error.empty()) errs.push_back(runtime_error);
  if (!network_error.empty()) errs.push_back(network_error);
  return errs;
}

}  // namespace kubelet
