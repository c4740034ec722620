// PodLifecycleParticipant: how subsystems (volume manager, container manager, prober manager,
// eviction, ...) take part in a pod's life without the sync loop knowing them (upstream spreads
// these calls over kubelet.go's SyncPod / SyncTerminatedPod / HandlePodCleanups and the admit
// handlers; here they are one interface, registered with the Kubelet in a fixed order).
//
// Call order for one pod (pod workers serialize calls per pod; different pods run in parallel):
//   Admit (sync-loop thread, once, before the first sync)
//   PrepareForSync -> runtime SyncPod -> AfterSync        (every sync of a running pod)
//   PodTerminating                                        (before its containers are killed)
//   CleanupTerminatedPod                                  (after every container has stopped)
//   Housekeeping(active)                                  (housekeeping thread, every 2 s)
// Participants are called in registration order (cleanup in reverse order).
//
// Thread-safety: every method may be called from several threads at once for different pods.
#ifndef KUBELET_KUBELET_CONTAINER_POD_LIFECYCLE_H_
#define KUBELET_KUBELET_CONTAINER_POD_LIFECYCLE_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "api/pod.h"
#include "kubelet/container/runtime.h"

namespace kubelet::container {

struct AdmitDecision {
  bool admit = true;
  std::string reason;   // e.g. "OutOfcpu", "UnexpectedAdmissionError", "HostPortConflict"?
  std::string message;  // human-readable, shown in the pod's status.message
};

class PodLifecycleParticipant {
 public:
  virtual ~PodLifecycleParticipant() = default;
  virtual std::string Name() const = 0;

  // Whether `pod` may run next to the already admitted pods. A rejected pod is marked Failed
  // with the reason and message and never started.
  virtual AdmitDecision Admit(const api::Pod& pod, const std::vector<api::PodPtr>& admitted) {
    (void)pod;
    (void)admitted;
    return {};
  }
  // Before the runtime sync of a pod that should run (pod worker thread): create the pod's
  // cgroup, set up and wait for its volumes. An error ends this sync attempt (the worker retries
  // with back-off); its message is logged with the pod and becomes the pod's sync error.
  virtual absl::Status PrepareForSync(const api::Pod& pod) {
    (void)pod;
    return absl::OkStatus();
  }
  // After the runtime sync, with the runtime status taken before it (e.g. start probe workers).
  virtual void AfterSync(const api::Pod& pod, const PodStatus& status) {
    (void)pod;
    (void)status;
  }
  // The pod is about to be stopped (e.g. stop its probe workers).
  virtual void PodTerminating(const api::Pod& pod) { (void)pod; }
  // Every container of the pod has stopped: tear down volumes, remove the pod cgroup. An error
  // is retried on the next housekeeping pass (through Housekeeping's `active` set).
  virtual absl::Status CleanupTerminatedPod(const api::Pod& pod) {
    (void)pod;
    return absl::OkStatus();
  }
  // Whether everything the participant held for the terminated pod `uid` is released (upstream
  // PodResourcesAreReclaimed, e.g. its volumes unmounted); a deleted pod's object is removed
  // from the API server only once every participant says so.
  virtual bool PodResourcesReclaimed(const std::string& uid) const {
    (void)uid;
    return true;
  }
  // Periodic clean-up (housekeeping thread): `active` holds the UIDs of pods that are desired
  // and not yet terminated, or may still have running containers. Anything a participant keeps for
  // other UIDs (mounted volumes, pod cgroups, probe workers) is orphaned and must be released. Only
  // called once every pod source has been seen, so a restarted kubelet does not drop pods it has
  // not read yet.
  virtual void Housekeeping(const std::set<std::string>& active) { (void)active; }
};

}  // namespace kubelet::container

#endif  // KUBELET_KUBELET_CONTAINER_POD_LIFECYCLE_H_
