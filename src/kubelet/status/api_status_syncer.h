// The API half of the status manager (upstream pkg/kubelet/status/status_manager.go syncBatch /
// syncPod): pushes the status of every API-server pod (source "api") to the API server when its
// version in the StatusManager changed since the last push, and deletes the pod object once a
// deleted pod has fully terminated (upstream canBeDeleted).
//
// For each pod whose status version is new (or that can now be deleted):
//   * GET the pod. 404: the pod is gone, its state is dropped. A different UID: the pod was
//     deleted and recreated ("Pod was deleted and then recreated, skipping status update").
//   * PATCH pods/<name>/status with a strategic merge patch (upstream podutil.PatchPodStatus):
//     {"metadata":{"uid":<uid>},"status":{"$setElementOrder/conditions":[...], changed fields,
//     kubelet-owned fields the new status drops set to null}}. The status is encoded exactly as
//     /pods shows it. Nothing changed: no PATCH ("Status for pod is up-to-date"). 409 Conflict:
//     re-read and retry (up to 3 attempts per round); 404: dropped.
//   * Once `can_be_deleted` holds (deletionTimestamp set, containers stopped and cleaned up), the
//     final status is pushed, then DELETE with gracePeriodSeconds 0 and preconditions.uid
//     ("Pod fully terminated and removed from etcd").
// Static pods (API-server mode with mirror pods, upstream syncBatch's podToMirror translation):
// the status of a static pod (kept under its own UID) is pushed to its mirror pod, the same
// object name with the mirror's UID as the GET check and the patch precondition; the version last
// pushed is kept per mirror UID, so a recreated mirror pod gets the status again. A static pod
// without a mirror pod is skipped ("Static pod does not have a corresponding mirror pod") and
// tried again in a later round. Mirror pods are never deleted here (upstream canBeDeleted), only
// by the Kubelet's mirror pod logic.
// A round runs when Notify() is called (a status changed) and every `sync_period` (upstream
// syncBatch every 10 s). Failures are logged and retried in the next round.
// With `first_status_hold` > 0 and the delegate's `first_sync_hold_until`, the first status of an
// API pod is held while the kubelet's first sync of the pod is still under way and the status only
// says the pod is starting (phase Pending, no container running or terminated, every container
// waiting with ContainerCreating or PodInitializing), for at most `first_status_hold` from the
// round that first saw it: the first status pushed is the outcome of that sync (Running once the
// containers started, or what held them up), one PATCH instead of two. Any other status (an image
// pull error, a pod being deleted) goes at once, and so does the status of a pod whose first sync
// is stuck preparing (a volume that does not mount); the delegate's owner calls Notify() when a
// first sync ends.
//
// The API calls go through PodStatusClient, so this folder does not depend on the API client;
// src/app implements it on apiclient::RestClient.
//
// Thread-safety: Notify() from any thread (non-blocking); Start/Stop from the owner's thread.
// The delegate's functions and the client run in the syncer's loop (one round at a time), with no
// lock of the syncer held. Ownership: client, statuses and clock are borrowed and must outlive the
// syncer.
#ifndef KUBELET_KUBELET_STATUS_API_STATUS_SYNCER_H_
#define KUBELET_KUBELET_STATUS_API_STATUS_SYNCER_H_

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
#include "common/loops.h"
#include "kubelet/status/status_manager.h"
#include "nlohmann/json.hpp"

namespace kubelet::status {

// The pod calls of the status sync. Errors: NotFound for 404, Aborted for 409 Conflict,
// others as the API client maps them. Thread-safe.
class PodStatusClient {
 public:
  virtual ~PodStatusClient() = default;
  // The pod object as JSON.
  virtual absl::StatusOr<nlohmann::json> GetPod(const std::string& ns, const std::string& name) = 0;
  // PATCH pods/<name>/status, content type application/strategic-merge-patch+json.
  virtual absl::Status PatchPodStatus(const std::string& ns, const std::string& name,
                                      const std::string& patch) = 0;
  // DELETE pods/<name> with {"gracePeriodSeconds":0,"preconditions":{"uid":<uid>}}.
  virtual absl::Status DeletePod(const std::string& ns, const std::string& name,
                                 const std::string& uid) = 0;
};

// A static pod and the UID of its mirror pod ("" while it has none).
struct MirroredPod {
  api::PodPtr pod;  // never null
  std::string mirror_uid;
};

struct ApiStatusSyncerDelegate {
  // The API pods the kubelet currently holds (pod manager, source "api").
  // Shared, immutable objects: a round copies no pod.
  std::function<std::vector<api::PodPtr>()> pods;
  // The static pods whose status goes to their mirror pods; unset: none.
  std::function<std::vector<MirroredPod>()> static_pods;
  // Whether a deleted pod's containers and resources are gone (upstream canBeDeleted's pod
  // worker part); only asked for pods with a deletionTimestamp.
  std::function<bool(const api::Pod&)> terminated;
  // Until when the pod's (by UID) first status may be held for its first sync:
  // InfiniteFuture while that sync is starting the pod's sandbox and containers, a short grace
  // while it is still preparing (volumes), InfinitePast once it ended or when it has not begun.
  // Unset: no pod's first status is held.
  std::function<absl::Time(const std::string&)> first_sync_hold_until;
};

struct ApiStatusSyncerOptions {
  absl::Duration sync_period = absl::Seconds(10);
  int conflict_retries = 3;
  // InPlacePodVerticalScaling: status.resize is the kubelet's too (a resize status it cleared
  // is removed from the API's status, as upstream's whole-status patch does).
  bool in_place_pod_vertical_scaling = false;
  // See above; zero: every status goes at once, as upstream.
  absl::Duration first_status_hold = absl::ZeroDuration();
  // The runner of the sync loop; null: a thread of its own. Must outlive the syncer.
  Loops* loops = nullptr;
};

class ApiStatusSyncer {
 public:
  ApiStatusSyncer(PodStatusClient& client, const StatusManager& statuses,
                  ApiStatusSyncerDelegate delegate, ApiStatusSyncerOptions options, Clock& clock);
  ~ApiStatusSyncer();
  ApiStatusSyncer(const ApiStatusSyncer&) = delete;
  ApiStatusSyncer& operator=(const ApiStatusSyncer&) = delete;

  void Start();
  // Idempotent; waits for a round in progress.
  void Stop();
  // Asks for a round soon.
  void Notify();

  // One round on the caller's thread (the thread's own rounds use it; for tests).
  void SyncBatch();

  // The strategic merge patch from `old_status` (the API's, JSON) to `new_status` (ours, JSON)
  // for pod `uid`; nullopt when nothing changed. `owns_resize`: status.resize is among the
  // kubelet's fields (removed when ours has none).
  static std::optional<std::string> StatusPatch(const std::string& uid,
                                                const nlohmann::json& old_status,
                                                const nlohmann::json& new_status,
                                                bool owns_resize = false);
  // A status as JSON, exactly as /pods encodes it.
  static nlohmann::json EncodeStatus(const api::PodStatus& status);

 private:
  // The loop's body: a round, then when the next is due.
  absl::Time Round();
  // Returns whether the pod's state should be kept (false: the pod is gone). `api_uid` is the
  // UID of the API object (the mirror pod's for a static pod), `pod.metadata.uid` keys the
  // status.
  bool SyncPod(const api::Pod& pod, const std::string& api_uid, bool needs_status, bool can_delete);

  PodStatusClient& client_;
  const StatusManager& statuses_;
  const ApiStatusSyncerDelegate delegate_;
  const ApiStatusSyncerOptions options_;
  Clock& clock_;
  std::unique_ptr<Loops> own_loops_;

  // Syncer loop (SyncBatch) only.
  // Both keyed by the API object's UID (a mirror pod's for a static pod).
  std::map<std::string, uint64_t> synced_versions_;  // uid -> version last pushed
  std::set<std::string> deleted_;                    // uids whose DELETE succeeded or gone
  // API pods whose first (starting) status is held: uid -> when a round first held it.
  std::map<std::string, absl::Time> held_since_;
  // The earliest end of a hold (InfiniteFuture: none); the next round runs by then.
  absl::Time next_hold_end_ = absl::InfiniteFuture();

  absl::Mutex mu_;
  bool pending_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<Loop> loop_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet::status

#endif  // KUBELET_KUBELET_STATUS_API_STATUS_SYNCER_H_
