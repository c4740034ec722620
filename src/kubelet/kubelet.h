// The Kubelet: the sync loop and the pieces it drives (upstream pkg/kubelet/kubelet.go).
//
//   pod sources -> PodConfig -> sync loop -> pod workers -> container::Runtime (kuberuntime/CRI)
//                                   ^    ^
//                         PLEG events    1 s sync tick, 2 s housekeeping tick
//
// The sync loop runs on its own thread and multiplexes, with one poll(2): config updates
// (ADD/UPDATE/REMOVE/RECONCILE/DELETE), PLEG events, the sync tick (due re-syncs, pods past
// their activeDeadlineSeconds), the housekeeping tick (orphan pods, finished workers, stale
// statuses, pod directories, container GC) and, later, probe results. It never calls the runtime
// itself: pod work runs on the pod workers' pool, relists on the PLEG thread, orphan listing on the
// housekeeping worker.
//
// Mirror pods (API-server mode, mirror_client set): a static pod being synced gets a mirror pod
// in the API server (created, or deleted and recreated when outdated: another config hash, a
// deletionTimestamp, another owner); mirror pods the sources deliver are kept apart in the pod
// manager, never run, and only trigger a sync of their static pod; orphaned ones are deleted by
// housekeeping once their static pod has stopped. The status of a static pod goes to its mirror.
//
// In-place resize (KubeletOptions.in_place_pod_vertical_scaling, upstream v1.28
// handlePodResourcesResize / canResizePod): a running API pod whose container requests differ
// from their recorded allocation asks for them again before its runtime sync, next to the other
// active pods (their allocations): beyond the node's allocatable -> status.resize Infeasible,
// not admitted now -> Deferred, else InProgress and the allocation follows (checkpointed). The
// runtime then syncs the pod with that status; status.resize is cleared once the containers'
// reported resources match their spec.
//
// The Kubelet implements PodSyncer (the pod workers' callbacks) and container::PodStateProvider
// (for GC). A runtime health loop (upstream updateRuntimeUp) checks CRI Status every 5 s.
//
// Thread-safety: Start/Stop from the owner's thread; queries (RuntimeReady, GetPodStatus, ...)
// from any thread. Ownership: runtime services and the container runtime are borrowed.
#ifndef KUBELET_KUBELET_KUBELET_H_
#define KUBELET_KUBELET_KUBELET_H_

#include <atomic>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/event_queue.h"
#include "common/loops.h"
#include "config/kubelet_configuration.h"
#include "cri/runtime_service.h"
#include "kubelet/admission.h"
#include "kubelet/container/cache.h"
#include "kubelet/container/pod_lifecycle.h"
#include "kubelet/container/runtime.h"
#include "kubelet/events/event_recorder.h"
#include "kubelet/logs/container_log_manager.h"
#include "kubelet/mirror_client.h"
#include "kubelet/pleg/generic.h"
#include "kubelet/pod_manager.h"
#include "kubelet/pod_workers.h"
#include "kubelet/podsource/pod_config.h"
#include "kubelet/stats/stats_provider.h"
#include "kubelet/status/allocation_state.h"
#include "kubelet/status/api_status_syncer.h"
#include "kubelet/status/generate.h"
#include "kubelet/status/status_manager.h"
#include "server/kubelet_server.h"

namespace kubelet {

namespace podsource {
class FileSource;
class HttpSource;
}  // namespace podsource

// A pod source the core does not build itself (the API server's, wired in src/app). `name` is
// registered with the PodConfig when the Kubelet is constructed, so sources-ready waits for its
// first snapshot; `start` runs in Kubelet::Start once the sync loop runs, `stop` in Stop before
// the PodConfig shuts down (it must end the source's deliveries).
struct ExtraPodSource {
  std::string name;
  std::function<absl::Status(podsource::PodConfig&)> start;
  std::function<void()> stop;
};

struct KubeletOptions {
  // The runner of the kubelet's loops (sync, housekeeping, runtime health, PLEG, pod status
  // sync); null: a thread per loop, waiting by the kubelet's clock. Must outlive the Kubelet.
  Loops* loops = nullptr;
  std::string node_name;
  std::string host_ip;
  std::string root_dir = "/var/lib/kubelet";
  absl::Duration runtime_status_period = absl::Seconds(5);
  // Pod sources.
  std::string static_pod_path;
  absl::Duration file_check_frequency = absl::Seconds(20);
  std::string static_pod_url;
  std::map<std::string, std::vector<std::string>> static_pod_url_header;
  absl::Duration http_check_frequency = absl::Seconds(20);
  // Loop periods.
  absl::Duration sync_frequency = absl::Minutes(1);  // re-sync of a healthy pod
  absl::Duration sync_tick = absl::Seconds(1);
  absl::Duration housekeeping_period = absl::Seconds(2);
  absl::Duration container_gc_period = absl::Minutes(1);
  absl::Duration pleg_relist_period = absl::Seconds(1);
  int pod_worker_threads = 16;
  int pod_worker_idle_threads = std::numeric_limits<int>::max();  // PodWorkersOptions::idle_threads
  container::GCPolicy gc_policy;
  NodeAllocatable allocatable;
  // The sysctls pods may set, checked first at admission. Default: the safe set.
  SysctlAllowlist sysctls;
  // The Node as the kubelet knows it, for admission (upstream getNodeAnyWay): the API server's
  // copy in API-server mode, else the Node the kubelet would register. Called on the sync-loop
  // thread; must be cheap and thread-safe. Unset: a Node named node_name with the
  // kubernetes.io/hostname and kubernetes.io/os=linux labels.
  std::function<api::Node()> node;
  // Subsystems taking part in pod admission, sync, termination and clean-up, in call order
  // (container/pod_lifecycle.h). Borrowed; must outlive the Kubelet.
  std::vector<container::PodLifecycleParticipant*> participants;
  // Probe state of a container by runtime container id (prober manager). Unset: a running
  // container is ready unless it has a readiness probe, started unless it has a startup probe.
  status::ProbeState probe_state;
  // Pod events the core records (admission rejections, evictions, pod data dirs). Unset:
  // dropped. Borrowed; must outlive the Kubelet.
  events::EventRecorder* recorder = nullptr;
  // API-server mode: more pod sources, and where the status of API pods is pushed (null: API
  // statuses stay local). The client is borrowed and must outlive the Kubelet.
  std::vector<ExtraPodSource> extra_sources;
  status::PodStatusClient* status_client = nullptr;
  // API-server mode: mirror pods for static pods (null: none, as standalone). Borrowed; must
  // outlive the Kubelet. `node_uid` gives the uid of this node's Node object, nullopt while it
  // is unknown (not registered yet, or being deleted): mirror pods are created only once it is
  // known. Called on pod worker and housekeeping threads; must be thread-safe.
  MirrorClient* mirror_client = nullptr;
  std::function<std::optional<std::string>()> node_uid;
  // API-server mode: how long at most the first status of an API pod is held while its first
  // sync is under way and the status only says the pod is starting
  // (status::ApiStatusSyncerOptions::first_status_hold): the first status pushed is that sync's
  // outcome (Running once its containers started), one PATCH instead of two. Zero: none.
  absl::Duration first_status_hold = absl::Seconds(5);
  // PodDisruptionConditions feature gate (beta, on by default in v1.28): a pod the kubelet
  // evicts carries the DisruptionTarget condition (reason TerminationByKubelet).
  bool pod_disruption_conditions = true;
  // Alpha gates of v1.28 (off by default): the PodReadyToStartContainers condition
  // (PodReadyToStartContainersCondition) and status.hostIPs (PodHostIPs).
  bool pod_ready_to_start_containers_condition = false;
  bool pod_host_ips = false;
  // InPlacePodVerticalScaling (alpha, off by default in v1.28): pods' allocated requests are
  // checkpointed in <root_dir>/pod_status_manager_state (status/allocation_state.h) and what
  // admission counts; a running API pod whose container requests differ from their allocation
  // is admitted again as a resize (status.resize Infeasible / Deferred / InProgress), and
  // container statuses carry allocatedResources and resources.
  bool in_place_pod_vertical_scaling = false;
};

// Reads the pod sources, syncFrequency, allocatable (maxPods, kubeReserved + systemReserved off
// MachineAllocatable) and allowedUnsafeSysctls (over `kernel_release`'s safe set; bad: an error).
absl::StatusOr<KubeletOptions> KubeletOptionsFromConfig(const config::KubeletConfiguration& c,
                                                        std::string_view kernel_release);
inline constexpr std::string_view kKubeletConfigFields[] = {
    "staticPodPath",      "fileCheckFrequency",   "staticPodURL", "staticPodURLHeader",
    "httpCheckFrequency", "syncFrequency",        "maxPods",      "systemReserved",
    "kubeReserved",       "allowedUnsafeSysctls",
};

class Kubelet final : public PodSyncer,
                      public container::PodStateProvider,
                      public server::HostInterface {
 public:
  Kubelet(KubeletOptions options, cri::RuntimeService& cri_runtime, container::Runtime& runtime,
          Clock& clock);
  ~Kubelet() override;

  // With in_place_pod_vertical_scaling, first restores the allocation checkpoint (an unreadable
  // one is an error, as upstream).
  absl::Status Start();
  void Stop();

  bool RuntimeReady() const { return runtime_ready_.load(); }
  bool NetworkReady() const { return network_ready_.load(); }
  // Why the node is not ready, as upstream's runtimeState: "container runtime status check may
  // not have completed yet" before the first good runtime Status, "container runtime is down"
  // when none succeeded with RuntimeReady for 30 s (maxWaitForContainerRuntime), "PLEG is not
  // healthy: ...", "container runtime not ready: RuntimeReady=false reason:... message:..."
  // (runtime errors), then "container runtime network not ready: NetworkReady=false ..."
  // (network errors). Empty: ready. Thread-safe.
  std::vector<std::string> ReadinessErrors() const;
  // PLEG health and sync-loop liveness, for /healthz.
  absl::Status PLEGHealthy() const { return pleg_->Healthy(); }
  absl::Status SyncLoopHealthy() const;

  // Asks the sync loop to sync the pod soon (probe results: a liveness failure restarts the
  // container, a readiness change updates the status). Thread-safe, non-blocking.
  void TriggerPodSync(const std::string& uid);

  // Evicts the pod (eviction manager, emptyDir sizeLimit): a non-critical pod is stopped and
  // ends Failed with reason "Evicted" and `message`; a critical (static) pod is never evicted, as
  // upstream ("cannot evict a critical pod" is logged). Returns whether the pod is evicted.
  // Thread-safe.
  // `grace_seconds` overrides the pod's termination grace period when set.
  // `disruption_target`: the pod gets the DisruptionTarget condition (with the
  // PodDisruptionConditions gate), as the eviction manager's evictions do; upstream's volume
  // manager evicts for an emptyDir sizeLimit without it.
  bool EvictPod(const std::string& uid, const std::string& message,
                std::optional<int64_t> grace_seconds = std::nullopt, bool disruption_target = true);

  // Stops the pod for a reason of the node's own (graceful node shutdown), critical pods
  // included, without an event: the pod ends Failed with `reason` / `message` (and
  // DisruptionTarget when `reason.disruption_since` is set and the PodDisruptionConditions gate
  // is on). `grace_seconds` overrides the pod's termination grace period when set. Returns
  // false when the pod is unknown. Thread-safe, non-blocking; IsPodTerminated tells when it is
  // done.
  bool TerminatePod(const std::string& uid, status::TerminalReason reason,
                    std::optional<int64_t> grace_seconds);
  // Whether no container of the pod can be running any more (its termination finished or the
  // pod is unknown to the pod workers). Thread-safe.
  bool IsPodTerminated(const std::string& uid) const;
  // TerminatePod, then waits until the pod's containers have stopped (upstream killPodNow):
  // up to max(1.5 x the grace period, 10 s); past that a Warning ExceededGracePeriod event
  // ("Container runtime did not kill the pod within specified grace period.") and a
  // DeadlineExceeded error. NotFound when the pod is unknown. Blocks; thread-safe.
  absl::Status KillPodNow(const std::string& uid, status::TerminalReason reason,
                          int64_t grace_seconds);

  // Pods admitted and not being terminated nor in a terminal phase (upstream GetActivePods):
  // what the eviction manager may choose from. Thread-safe.
  std::vector<api::Pod> GetActivePods() const;
  // The same without copying: the pod manager's shared pods. Thread-safe.
  std::vector<api::PodPtr> ActivePods() const;
  // ActivePods plus the pods of the batch being admitted right now (upstream's
  // pendingAdmissionPod, for the whole batch): what the resource managers keep state for. A
  // restarted kubelet admits the pods it finds one by one; the ones after the current pod are
  // not in the pod manager yet and must not lose their CPUs or devices meanwhile. Thread-safe.
  std::vector<api::PodPtr> ActiveAndAdmittingPods() const;
  // Whether every pod source has delivered its pods once (upstream sourcesReady.AllReady):
  // until then the active pods are not all known. Thread-safe.
  bool SourcesReady() const { return sources_ready_.load(); }
  // The id of the running container `name` of pod `uid` as the last relist saw it; nullopt when
  // none runs. Thread-safe.
  std::optional<std::string> RunningContainerID(const std::string& uid,
                                                const std::string& name) const;
  // Removes every dead container the GC policy allows to, at once (upstream
  // DeleteAllUnusedContainers, the eviction manager's node-level reclaim). Thread-safe.
  absl::Status DeleteAllUnusedContainers();

  // Desired pods with their current API status (for /pods).
  std::vector<api::Pod> GetPodsWithStatus() const;
  const PodManager& pod_manager() const { return pod_manager_; }
  const status::StatusManager& status_manager() const { return status_manager_; }
  // The allocation checkpoint (in_place_pod_vertical_scaling, once started); null otherwise.
  const status::AllocationState* allocation_state() const { return allocation_.get(); }

  // PodSyncer.
  absl::StatusOr<bool> SyncPod(SyncPodType type, const api::Pod& pod,
                               const container::PodStatus& status) override;
  absl::Status SyncTerminatingPod(const api::Pod& pod, const container::PodStatus& status,
                                  std::optional<int64_t> grace_period_seconds) override;
  absl::Status SyncTerminatingRuntimePod(const container::Pod& running) override;
  absl::Status SyncTerminatedPod(const api::Pod& pod, const container::PodStatus& status) override;

  // PodStateProvider.
  bool ShouldPodContentBeRemoved(const std::string& uid) const override;
  bool ShouldPodRuntimeBeRemoved(const std::string& uid) const override;

  // The kubelet API's host (server/kubelet_server.h), as upstream's Kubelet answers it
  // (kubelet_server_host.cc): the pods with their status, the runtime's pods, logs, stats,
  // health, configz, and the streaming lookups (exec / attach / port-forward / run: the pod
  // must be one the kubelet manages, else NotFound "pod does not exist"; then the runtime's
  // running pod and container, else upstream's "pod not found" / "container not found").
  // The logs manager, stats provider and configz renderer are built after Start() and set with
  // SetApiParts(); until then logs answer Unavailable, stats null and configz "{}".
  // Thread-safe.
  void SetApiParts(std::shared_ptr<logs::ContainerLogManager> logs,
                   std::shared_ptr<stats::StatsProvider> stats,
                   std::function<std::string()> configz);
  std::vector<api::Pod> GetPods() override { return GetPodsWithStatus(); }
  absl::StatusOr<std::vector<api::Pod>> GetRunningPods() override;
  absl::Status GetContainerLogs(const std::string& namespace_, const std::string& pod,
                                const std::string& container, const logs::LogOptions& options,
                                const logs::LogSink& sink) override;
  stats::StatsProvider* GetStatsProvider() override;
  absl::Status SyncLoopHealthy() override { return std::as_const(*this).SyncLoopHealthy(); }
  std::string Configz() override;
  absl::StatusOr<std::string> GetExec(const server::StreamRequest& request) override;
  absl::StatusOr<std::string> GetAttach(const server::StreamRequest& request) override;
  absl::StatusOr<std::string> GetPortForward(const std::string& namespace_, const std::string& pod,
                                             const std::string& uid,
                                             const std::vector<int32_t>& ports) override;
  absl::StatusOr<std::string> RunInContainer(const server::StreamRequest& request) override;

 private:
  events::EventRecorder& Recorder() const {
    return options_.recorder != nullptr ? *options_.recorder : events::DiscardingRecorder();
  }
  // One round of the sync loop (its Loop body): drains pod updates, PLEG events and sync
  // requests, runs the sync and housekeeping ticks that are due; returns when the next is.
  absl::Time SyncLoopRound();
  void HandleUpdate(const podsource::PodUpdate& update);
  // The pods are PodConfig's objects, kept as they are (shared) by the pod manager and workers.
  void HandlePodAdditions(const std::vector<api::PodPtr>& pods);
  void HandlePodUpdates(const std::vector<api::PodPtr>& pods);
  void HandlePodRemoves(const std::vector<api::PodPtr>& pods);
  // Mirror pods are only stored (apart from the pods) and trigger a sync of their static pod.
  void HandleMirrorPods(podsource::PodOperation op, const std::vector<api::PodPtr>& mirrors);
  // Creates, or deletes and recreates, the mirror pod of a static pod being synced.
  void SyncMirrorPod(const api::Pod& pod);
  // Housekeeping: deletes mirror pods whose static pod is gone; re-syncs static pods still
  // without a mirror pod after a failed creation (Node unknown, API error), at most every 5
  // housekeeping periods, instead of waiting for their next periodic sync.
  void HousekeepMirrorPods();
  void HandlePLEGEvent(const pleg::PodLifecycleEvent& e);
  void Housekeeping();
  void UpdateRuntimeUp();
  // The reason the kubelet ends the pod with, if it does (eviction, active deadline).
  std::optional<status::TerminalReason> TerminalReasonOf(const std::string& uid);
  // Upstream's activeDeadlineHandler: a pod past its activeDeadlineSeconds (counted from the
  // start time of `old`, its last status) is ended Failed / DeadlineExceeded, with a Normal
  // DeadlineExceeded event at each status generated for it.
  void CheckActiveDeadline(const api::Pod& pod, const api::PodStatus* old);
  // Sync tick: pods whose deadline has just passed are synced at once (upstream getPodsToSync).
  // Generates the pod's API status from the runtime's and hands it to the status manager (the
  // start of SyncPod, and again after a sync changed the runtime); returns it. With
  // `unless_terminal` a terminal status is neither set nor returned.
  std::optional<api::PodStatus> UpdateStatusFrom(SyncPodType type, const api::Pod& pod,
                                                 const container::PodStatus& runtime_status,
                                                 bool unless_terminal = false);
  void SyncPodsPastActiveDeadline();
  // The status generation inputs every path shares (probe state, host IP, feature gates).
  status::GenerateInput StatusInput(const api::Pod& pod, const container::PodStatus& rs,
                                    const api::PodStatus* old);
  // generateAPIPodStatus: GeneratePodStatus plus, with in-place resize, status.resize.
  api::PodStatus GenerateAPIPodStatus(const status::GenerateInput& in);
  // The Node admission checks against (upstream getNodeAnyWay).
  api::Node AdmissionNode() const;
  // upstream canAdmitPod: the sysctls, the resource and node predicates and the participants'
  // admission, in that order. With in-place resize the other pods count their allocated CPU and
  // memory requests.
  AdmitResult CanAdmitPod(const api::Pod& pod, const std::vector<api::PodPtr>& others,
                          const api::Node& node);
  // `pod` with the CPU and memory requests of its containers replaced by their recorded
  // allocation (upstream's admission copy); `pod` itself when nothing is recorded.
  api::PodPtr WithAllocatedRequests(const api::PodPtr& pod) const;
  // upstream determinePodResizeStatus: status.resize from the checkpoint while a container's
  // status resources differ from its spec; cleared (and forgotten) once they agree.
  void DeterminePodResizeStatus(const api::Pod& pod, api::PodStatus* status);
  // upstream handlePodResourcesResize / canResizePod: `pod` carries its fresh status; a
  // resize it asks for is decided, recorded and reflected in its status.
  void HandlePodResourcesResize(api::Pod* pod);
  void RejectPod(const api::Pod& pod, const std::string& reason, const std::string& message);
  absl::Status MakePodDataDirs(const api::Pod& pod);
  void CleanupOrphanedPodDirs(const std::set<std::string>& desired);
  status::ReasonCache Reasons(const std::string& uid) const;
  // Tells the API status sync (if any) that a status or a pod changed.
  void StatusChanged();
  void UpdateReasons(const std::string& uid, const container::PodSyncResult& result);
  // The streaming lookups: the runtime's running pod of a pod the kubelet manages
  // (kUnknownPod: the kubelet has no such pod; kNotRunning: the runtime has none).
  enum class LookupError { kNone, kUnknownPod, kNotRunning };
  absl::StatusOr<container::Pod> RunningPod(const std::string& ns, const std::string& name,
                                            const std::string& uid, LookupError* error);
  absl::StatusOr<std::string> RunningContainer(const server::StreamRequest& request);

  KubeletOptions options_;
  cri::RuntimeService& cri_runtime_;
  container::Runtime& runtime_;
  Clock& clock_;

  container::Cache cache_;
  PodManager pod_manager_;
  status::StatusManager status_manager_;
  // What wakes the sync loop: pod updates, PLEG events and sync requests ring it (it wakes the
  // sync loop once Start() made it).
  Doorbell bell_{[this] { WakeSyncLoop(); }};
  std::unique_ptr<podsource::PodConfig> pod_config_;
  std::unique_ptr<podsource::FileSource> file_source_;
  std::unique_ptr<podsource::HttpSource> http_source_;
  std::unique_ptr<pleg::GenericPLEG> pleg_;
  std::unique_ptr<PodWorkers> pod_workers_;
  std::unique_ptr<status::ApiStatusSyncer> api_status_syncer_;
  // in_place_pod_vertical_scaling: set by Start() before any pod work.
  std::unique_ptr<status::AllocationState> allocation_;
  // Serializes resize decisions (upstream podResizeMutex).
  absl::Mutex pod_resize_mu_;

  std::set<std::string> sources_seen_;  // sync-loop thread only
  std::atomic<bool> sources_ready_{false};
  mutable absl::Mutex admitting_mu_;
  std::vector<api::PodPtr> admitting_ ABSL_GUARDED_BY(admitting_mu_);
  absl::Time last_gc_ = absl::InfinitePast();  // housekeeping thread only
  std::atomic<int64_t> last_sync_loop_nanos_{0};

  // Pods ended by the kubelet itself (evicted, past their deadline): their final status's
  // reason and message, and since when they carry DisruptionTarget (evictions).
  absl::Mutex terminal_mu_;
  std::map<std::string, status::TerminalReason> terminal_overrides_ ABSL_GUARDED_BY(terminal_mu_);

  // Each desired pod: when it was first seen (kubelet_pod_start_duration_seconds) and how far
  // its first SyncPod is (the API status syncer's first status hold).
  struct FirstSeen {
    absl::Time at;
    enum class Sync { kNotBegun, kPreparing, kRuntime, kDone } sync = Sync::kNotBegun;
    absl::Time sync_began;  // kPreparing, kRuntime
  };
  absl::Mutex first_seen_mu_;
  std::map<std::string, FirstSeen> first_seen_ ABSL_GUARDED_BY(first_seen_mu_);
  // Moves a desired pod's first sync forward to `to`; whether it moved.
  bool SetFirstSync(const std::string& uid, FirstSeen::Sync to);

  // Stops `running` (of `pod`; null for an orphan) bracketed for the PLEG (BeginSync /
  // EndSync): relists leave the pod alone meanwhile, and the status read right after the kill,
  // stored in `final_status` (the read's error when it failed), becomes the PLEG's state of the
  // pod. The kill's error, if any (nothing read then).
  absl::Status KillPodObserved(const api::Pod* pod, const container::Pod& running,
                               std::optional<int64_t> grace_period_seconds,
                               absl::StatusOr<container::PodStatus>* final_status);

  mutable absl::Mutex reasons_mu_;
  std::map<std::string, status::ReasonCache> reasons_ ABSL_GUARDED_BY(reasons_mu_);

  std::atomic<bool> runtime_ready_{false};
  std::atomic<bool> network_ready_{false};
  mutable absl::Mutex runtime_state_mu_;
  absl::Time last_runtime_sync_ ABSL_GUARDED_BY(runtime_state_mu_) = absl::InfinitePast();
  std::string runtime_error_ ABSL_GUARDED_BY(runtime_state_mu_);
  std::string network_error_ ABSL_GUARDED_BY(runtime_state_mu_);
  bool first_runtime_update_ = true;
  std::atomic<bool> housekeeping_running_{false};
  // A mirror pod could not be created (the Node's uid unknown, or the API call failed).
  std::atomic<bool> mirror_retry_{false};
  // Housekeeping thread only: the last re-sync for mirror_retry_; orphaned mirror pods whose
  // DELETE succeeded, until the watch removes them.
  absl::Time last_mirror_retry_ = absl::InfinitePast();
  std::set<std::string> deleted_orphan_mirrors_;

  EventQueue<std::string> sync_requests_{&bell_};
  absl::Notification stop_;
  // The loops (common/loops.h) on options_.loops or a runner of the kubelet's own: the sync
  // loop, housekeeping (woken by the sync loop's housekeeping tick) and runtime health.
  std::unique_ptr<Loops> own_loops_;
  std::unique_ptr<Loop> runtime_loop_;
  std::unique_ptr<Loop> housekeeping_loop_;
  std::unique_ptr<Loop> sync_loop_;
  std::atomic<Loop*> sync_loop_ptr_{nullptr};  // what bell_ wakes; set once sync_loop_ is
  // Sync loop only: when its next sync and housekeeping ticks are due.
  absl::Time next_sync_ = absl::InfinitePast();
  absl::Time next_housekeeping_ = absl::InfinitePast();
  void WakeSyncLoop() {
    if (Loop* l = sync_loop_ptr_.load()) l->Wake();
  }

  // The kubelet API's parts built after Start (SetApiParts).
  mutable absl::Mutex api_parts_mu_;
  std::shared_ptr<logs::ContainerLogManager> container_logs_ ABSL_GUARDED_BY(api_parts_mu_);
  std::shared_ptr<stats::StatsProvider> stats_provider_ ABSL_GUARDED_BY(api_parts_mu_);
  std::function<std::string()> configz_ ABSL_GUARDED_BY(api_parts_mu_);
};

}  // namespace kubelet

#endif  // KUBELET_KUBELET_KUBELET_H_
