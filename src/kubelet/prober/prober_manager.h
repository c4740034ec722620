// ProberManager: liveness, readiness and startup probes for every running pod (upstream
// pkg/kubelet/prober). It takes part in each pod's life as a PodLifecycleParticipant:
//   AfterSync          one worker per (pod UID, container, probe type) for containers that
//                      declare probes (app containers and restartable init containers); each
//                      worker follows the newest container of its name from the runtime status
//                      (a new container ID resets that container's results).
//   PodTerminating     liveness and startup workers stop (a terminating pod is not restarted);
//                      readiness keeps running until the pod is cleaned up.
//   CleanupTerminatedPod / Housekeeping   workers of finished or unknown pods are removed.
// Workers share one scheduler thread (a timer scan over all workers; started with the first
// worker, so a node without probes holds none) and an elastic pool that
// runs the probes themselves (a few threads, more only while that many probes are in flight at
// once); there is no thread per pod or per probe.
//
// Results are kept per container ID in ContainerID::String() form ("containerd://<id>"); the
// string queries take that form (status generation's container_id), the ContainerID ones
// convert. Queries are cheap (one map lookup under a mutex) and thread-safe.
//
// Thread-safety: all public methods are thread-safe. The change callback runs on a probe pool
// thread with no lock held. Stop() (also run by the destructor) waits for running probes.
// Ownership: borrows the RuntimeService and Clock, which must outlive the manager.
#ifndef KUBELET_KUBELET_PROBER_PROBER_MANAGER_H_
#define KUBELET_KUBELET_PROBER_PROBER_MANAGER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/pod.h"
#include "common/clock.h"
#include "common/thread_pool.h"
#include "cri/runtime_service.h"
#include "kubelet/container/pod_lifecycle.h"
#include "kubelet/container/runtime.h"
#include "kubelet/events/event_recorder.h"
#include "kubelet/lifecycle/probe_executors.h"
#include "kubelet/prober/worker.h"

namespace kubelet::prober {

class ProberManager : public container::PodLifecycleParticipant {
 public:
  // Runs one probe against a container. The default executes the probe's handler (exec via
  // CRI ExecSync, httpGet, tcpSocket, grpc against `pod_ip`).
  using ProbeFn = std::function<lifecycle::ProbeOutcome(
      ProbeType type, const api::Pod& pod, const api::Container& container, const api::Probe& probe,
      const container::ContainerID& id, const std::string& pod_ip)>;

  struct Options {
    // Threads running probes: `probe_threads` (0 or more) always, growing to
    // `max_probe_threads` while that many probes are in flight at once (each blocks a thread
    // for at most its timeoutSeconds, or a few retries of it), so slow probes never delay the
    // others' periods.
    int probe_threads = 4;
    int max_probe_threads = 64;
    // False: no scheduler thread; the owner drives probing with RunDueProbes() (tests).
    bool start_scheduler = true;
    // The node's IPs: the pod IP of hostNetwork pods whose sandbox reports none.
    std::vector<std::string> node_ips;
    ProbeFn probe;  // unset: the real probes
    // Unhealthy / ProbeWarning events on the probed container, as upstream. Unset: dropped.
    // Borrowed; must outlive the manager.
    events::EventRecorder* recorder = nullptr;
  };

  ProberManager(cri::RuntimeService& runtime, Clock& clock, Options options);
  ~ProberManager() override;
  ProberManager(const ProberManager&) = delete;
  ProberManager& operator=(const ProberManager&) = delete;

  // Called (outside locks, on a probe thread) with the pod UID when a container's liveness or
  // startup result turns to failure, its startup result to success, or its readiness changes:
  // the pod needs a sync. Set it once, before results can change (after construction is fine).
  void SetOnChange(std::function<void(const std::string& pod_uid)> on_change);

  // Stops the scheduler and the probe pool (waits for running probes). Idempotent.
  void Stop();

  // --- PodLifecycleParticipant ----------------------------------------------------------------
  std::string Name() const override { return "prober"; }
  void AfterSync(const api::Pod& pod, const container::PodStatus& status) override;
  void PodTerminating(const api::Pod& pod) override;
  absl::Status CleanupTerminatedPod(const api::Pod& pod) override;
  void Housekeeping(const std::set<std::string>& active) override;

  // --- Queries ---------------------------------------------------------------------------------
  // The last liveness / startup result of the container is Failure.
  bool LivenessFailed(const container::ContainerID& id) const;
  bool StartupFailed(const container::ContainerID& id) const;
  // No startup success recorded for the container. Only meaningful for containers that have a
  // startup probe (as upstream, an ID the prober has not seen yet counts as pending).
  bool StartupPending(const container::ContainerID& id) const;
  // Readiness of a container with a readiness probe (false until its first success); nullopt
  // when the prober has no readiness result for the ID. `container_id` is ContainerID::String().
  std::optional<bool> Ready(const std::string& container_id) const;
  // Whether a container with a startup probe has passed it; nullopt when unknown.
  std::optional<bool> Started(const std::string& container_id) const;

  // --- Tests -----------------------------------------------------------------------------------
  // Runs every due probe now on the calling thread (with start_scheduler false).
  void RunDueProbes();
  size_t NumWorkers() const;
  // Whether the scheduler thread was started (it starts with the first worker).
  bool SchedulerStarted();

 private:
  struct Worker;
  struct ResultEntry {
    std::string pod_uid;
    std::optional<Result> liveness, readiness, startup;
    bool has_startup_probe = false;
  };
  class Sink;

  static std::string Key(const std::string& uid, const std::string& container, ProbeType t);
  void SchedulerLoop();
  // Starts the scheduler thread with the first worker (options_.start_scheduler; a node that
  // probes nothing holds no thread), unless it runs or Stop() began.
  void StartScheduler();
  // Takes the workers due at `now` (marked in flight).
  std::vector<std::shared_ptr<Worker>> TakeDueLocked(absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RunWorker(const std::shared_ptr<Worker>& w);
  absl::Duration JitterLocked(absl::Duration period) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveWorkerLocked(const std::string& key, Sink& sink) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool StartedLocked(const std::string& container_id, const Worker& w) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  lifecycle::ProbeOutcome Execute(const Worker& w, const api::Pod& pod,
                                  const api::Container& container, const container::ContainerID& id,
                                  const std::string& pod_ip);
  void Notify(const std::vector<std::string>& uids);
  std::optional<Result> GetResult(const std::string& id, ProbeType t) const;

  cri::RuntimeService& runtime_;
  Clock& clock_;
  const Options options_;
  ThreadPool pool_;
  const absl::Time start_;  // when the manager was built (first-probe jitter after restarts)

  mutable absl::Mutex mu_;
  absl::CondVar wake_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::shared_ptr<Worker>> workers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, ResultEntry> results_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> terminating_ ABSL_GUARDED_BY(mu_);
  std::function<void(const std::string&)> on_change_ ABSL_GUARDED_BY(mu_);
  std::minstd_rand rng_ ABSL_GUARDED_BY(mu_);

  std::thread scheduler_;
  absl::Mutex stop_mu_;
  bool stopped_ ABSL_GUARDED_BY(stop_mu_) = false;
};

}  // namespace kubelet::prober

#endif  // KUBELET_KUBELET_PROBER_PROBER_MANAGER_H_
