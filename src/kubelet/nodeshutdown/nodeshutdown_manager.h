// The node shutdown manager (upstream pkg/kubelet/nodeshutdown, Linux, v1.28 semantics):
// graceful node shutdown on logind's delay inhibitor lock.
//
// Enabled with the GracefulNodeShutdown gate (on by default) and a grace period: the groups of
// shutdownGracePeriodByPodPriority (with the GracefulNodeShutdownBasedOnPodPriority gate), or
// else the two derived from shutdownGracePeriod and shutdownGracePeriodCriticalPods:
//   {priority 0: shutdownGracePeriod - shutdownGracePeriodCriticalPods seconds}
//   {priority 2000000000 (system-cluster-critical / system-node-critical): the rest}
// Groups are sorted by priority, lowest first. Without any, the manager is a stub: Start does
// nothing and every pod is admitted.
//
// Start (the caller logs a failure as "Failed to start node shutdown manager" and goes on, as
// upstream's kubelet does; nothing is retried then):
//   1. connect to the system bus (LogindFactory), read logind's InhibitDelayMaxUSec;
//   2. when it is shorter than the sum of the groups' periods: write the logind drop-in, make
//      logind reload, read it again, and fail if still shorter ("node shutdown manager was
//      unable to update logind InhibitDelayMaxSec to 30s (ShutdownGracePeriod), current value
//      of InhibitDelayMaxSec (5s) is less than requested ShutdownGracePeriod");
//   3. take the "shutdown" delay inhibitor lock, subscribe to PrepareForShutdown;
//   4. load the state file into the metrics (with the GracefulNodeShutdownBasedOnPodPriority
//      gate) and start the manager's thread.
// The thread waits for PrepareForShutdown. When the bus connection ends it logs "Ended to
// watching the node for shutdown events", waits 1 s, and starts over from step 1 ("Restarting
// watch for node shutdown events"; a failure: "Unable to watch the node for shutdown events",
// retried every second).
//
// PrepareForShutdown(true): event Normal "Shutdown" "Shutdown manager detected shutdown event"
// on the node; the node is shutting down: ShutdownStatus() fails with "node is shutting down"
// (the Ready condition becomes False, reason KubeletNotReady, with that message) and Admit
// rejects every pod (reason "NodeShutdown", message "Pod was rejected as the node is shutting
// down."); `sync_node_status` runs on a thread of its own; then the active pods are killed
// group by group, lowest priority first: the pods of one group in parallel, each with
// min(terminationGracePeriodSeconds, the group's period) as grace period, status phase Failed
// (unless Succeeded), reason "Terminated", message "Pod was terminated in response to imminent
// node shutdown." and (PodDisruptionConditions gate) the DisruptionTarget condition, reason
// TerminationByKubelet; the manager waits for the group's pods up to the group's period before
// the next group (a group without pods is skipped without waiting). Then the inhibitor lock is
// released, so the shutdown goes on. With GracefulNodeShutdownBasedOnPodPriority, the state file
// gets the start time (the end time when done) and the metrics
// kubelet_graceful_shutdown_start_time_seconds / _end_time_seconds are set as upstream v1.28
// sets them: start = start time and end = 0 when it begins, then start = the end time when it
// ends (v1.28 sets the start gauge twice; the end gauge shows the end time only from the state
// file at the next start).
//
// PrepareForShutdown(false) (shutdown cancelled): event "Shutdown manager detected shutdown
// cancellation"; the node is no longer shutting down (pods are admitted, Ready again) and the
// lock is taken again.
//
// The manager never shuts the machine down; a missing or misbehaving logind costs the feature,
// never the kubelet.
//
// Threads: one manager thread handles the bus and runs the shutdown (waiting through the Clock,
// so tests run on a FakeClock); one thread per pod being killed and one per node status sync,
// all joined by Stop(). Stop interrupts a wait in progress (a shutdown being handled is
// abandoned: no further group is killed), waits for the callbacks running, closes the bus
// connection and releases the lock.
// Thread-safety: ShutdownStatus, ShuttingDown and Admit may be called from any thread at any
// time; Start then Stop from the owner's thread (Stop is idempotent; the destructor stops).
// Callbacks are called without the manager's locks held and may call those three methods, never
// Stop.
#ifndef KUBELET_KUBELET_NODESHUTDOWN_NODESHUTDOWN_MANAGER_H_
#define KUBELET_KUBELET_NODESHUTDOWN_NODESHUTDOWN_MANAGER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/pod.h"
#include "common/clock.h"
#include "common/log.h"
#include "config/feature_gates.h"
#include "config/kubelet_configuration.h"
#include "kubelet/container/pod_lifecycle.h"
#include "kubelet/events/event_recorder.h"
#include "kubelet/nodeshutdown/logind.h"

namespace kubelet::nodeshutdown {

inline constexpr char kNodeShutdownReason[] = "Terminated";
inline constexpr char kNodeShutdownMessage[] =
    "Pod was terminated in response to imminent node shutdown.";
inline constexpr char kNodeShutdownNotAdmittedReason[] = "NodeShutdown";
inline constexpr char kNodeShutdownNotAdmittedMessage[] =
    "Pod was rejected as the node is shutting down.";
// ShutdownStatus()'s message while the node shuts down (the Ready condition's message).
inline constexpr char kNodeShuttingDown[] = "node is shutting down";
// The reason of the manager's node events (upstream kubeletevents.NodeShutdown).
inline constexpr char kNodeShutdownEventReason[] = "Shutdown";
// The priorities of the two groups derived from shutdownGracePeriod (upstream
// scheduling.DefaultPriorityWhenNoDefaultClassExists and SystemCriticalPriority).
inline constexpr int32_t kDefaultPriority = 0;
inline constexpr int32_t kSystemCriticalPriority = 2000000000;
// How long the manager waits before connecting again after losing the bus.
inline constexpr absl::Duration kDBusReconnectPeriod = absl::Seconds(1);

using GracePeriodByPriority = config::ShutdownGracePeriodByPodPriority;

// How a pod the manager kills ends: its grace period and upstream's status function as data.
struct PodTermination {
  int64_t grace_period_seconds = 0;
  std::string reason = kNodeShutdownReason;
  std::string message = kNodeShutdownMessage;
  // The pod gets DisruptionTarget=True, reason TerminationByKubelet, message `message`
  // (PodDisruptionConditions gate).
  bool disruption_target = true;
  // Upstream's status function: phase Failed unless the pod already Succeeded, reason, message,
  // and the DisruptionTarget condition as podutil.UpdatePodCondition sets it (appended, or
  // replacing the existing one, whose lastTransitionTime stays when its status is unchanged;
  // `now` otherwise).
  void Apply(api::PodStatus& status, absl::Time now) const;
};

// Stops `pod` with `termination.grace_period_seconds` as its grace period (overriding the
// pod's) and makes the status it ends with carry `termination` (PodTermination::Apply).
// Blocks until the pod's containers have stopped, or until the kubelet gives up waiting
// (upstream killPodNow: max(1.5 x the grace period, 10 s), then an error); must return within
// bounded time. Called on a thread per pod, several at once.
using KillPodFunc =
    std::function<absl::Status(const api::Pod& pod, const PodTermination& termination)>;

struct ManagerOptions {
  // The groups, sorted by priority (lowest first); empty: the manager is a stub.
  std::vector<GracePeriodByPriority> shutdown_grace_period_by_pod_priority;
  // As configured, for the start-up log line.
  absl::Duration shutdown_grace_period_requested = absl::ZeroDuration();
  absl::Duration shutdown_grace_period_critical_pods = absl::ZeroDuration();
  // PodDisruptionConditions: killed pods get the DisruptionTarget condition.
  bool pod_disruption_conditions = true;
  // GracefulNodeShutdownBasedOnPodPriority: the state file and the metrics.
  bool enable_metrics = true;
  // Where the state file lives (upstream: the kubelet's root directory); empty: no state file.
  std::string state_directory;

  // The pods to kill: admitted and not terminated (upstream GetActivePods). Required.
  std::function<std::vector<api::Pod>()> active_pods;
  // Required. See KillPodFunc.
  KillPodFunc kill_pod;
  // Pushes the node's status now (upstream syncNodeStatus), so the Ready condition turns False
  // at once. Optional; runs on a thread of its own.
  std::function<void()> sync_node_status;
  // Node events; null: none. Borrowed; must outlive the manager.
  events::EventRecorder* recorder = nullptr;
  std::string node_name;

  // The bus connection; unset: the system bus with the drop-in in `logind_config_directory`.
  LogindFactory logind;
  std::string logind_config_directory = kLogindConfigDirectory;
};

// The groups from the configuration and gates (upstream NewManager + migrateConfig): none
// without the GracefulNodeShutdown gate; shutdownGracePeriodByPodPriority when the
// GracefulNodeShutdownBasedOnPodPriority gate is on and it is set; else the two groups derived
// from shutdownGracePeriod (none when it is zero). The configuration was validated already.
ManagerOptions ManagerOptionsFromConfig(const config::KubeletConfiguration& c,
                                        const config::FeatureGate& gates);
inline constexpr std::string_view kManagerConfigFields[] = {
    "shutdownGracePeriod",
    "shutdownGracePeriodCriticalPods",
    "shutdownGracePeriodByPodPriority",
};

// upstream migrateConfig: the two groups of shutdownGracePeriod / shutdownGracePeriodCriticalPods.
std::vector<GracePeriodByPriority> MigrateConfig(absl::Duration requested, absl::Duration critical);

// upstream groupByPriority: each pod (priority 0 when unset) goes to the group with the highest
// priority not above its own; pods below the lowest group go to the lowest, pods above the
// highest to the highest. `periods` sorted by priority, not empty.
struct PodShutdownGroup {
  GracePeriodByPriority period;
  std::vector<api::Pod> pods;
};
std::vector<PodShutdownGroup> GroupByPriority(const std::vector<GracePeriodByPriority>& periods,
                                              std::vector<api::Pod> pods);

// The grace period a pod is killed with: the group's, or the pod's own when that is not longer.
int64_t GracePeriodOverride(const api::Pod& pod, int64_t group_seconds);

// Makes kubelet_graceful_shutdown_start_time_seconds and _end_time_seconds show (0 until set),
// as upstream registers them with the GracefulNodeShutdown and
// GracefulNodeShutdownBasedOnPodPriority gates, whether or not the manager is configured.
void RegisterMetrics(const config::FeatureGate& gates);

class Manager final : public container::PodLifecycleParticipant {
 public:
  // Logs "Creating node shutdown manager" when enabled.
  Manager(ManagerOptions options, const Clock& clock);
  ~Manager() override;  // Stop()

  bool Enabled() const { return !options_.shutdown_grace_period_by_pod_priority.empty(); }

  // Steps 1-4 of the header comment; an error leaves the manager inert (no thread, no lock).
  // A no-op for a stub. At most once.
  absl::Status Start();
  void Stop();

  // OK, or FailedPrecondition("node is shutting down") while the node shuts down.
  absl::Status ShutdownStatus() const;
  bool ShuttingDown() const;

  std::string Name() const override { return "nodeshutdown"; }
  container::AdmitDecision Admit(const api::Pod& pod,
                                 const std::vector<api::PodPtr>& admitted) override;

  // The sum of the groups' periods: what logind's InhibitDelayMax must allow.
  absl::Duration PeriodRequested() const;

 private:
  absl::Status StartWatch();
  void Run();
  void Watch();
  void HandleEvent(bool shutting_down);
  void ProcessShutdownEvent();
  absl::Status AcquireInhibitLock(Logind& logind);
  void ReleaseInhibitLock();
  void SetMetricsFromState();
  void Spawn(std::string name, std::function<void()> fn);
  std::string StatePath() const;

  const ManagerOptions options_;
  const Clock& clock_;
  events::EventRecorder& recorder_;

  mutable absl::Mutex mu_;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  // The connection; replaced by the manager's thread only (under mu_), read by it without mu_.
  std::unique_ptr<Logind> logind_ ABSL_GUARDED_BY(mu_);
  Logind* logind_raw_ = nullptr;  // == logind_.get(); the manager's thread only
  // The lock held (manager's thread, or Start before it runs, or Stop after it ended).
  std::optional<InhibitLock> lock_;
  std::thread thread_;
  absl::Mutex stop_mu_;  // one Stop at a time

  struct Background {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  absl::Mutex background_mu_;
  std::vector<Background> background_ ABSL_GUARDED_BY(background_mu_);
};

}  // namespace kubelet::nodeshutdown

#endif  // KUBELET_KUBELET_NODESHUTDOWN_NODESHUTDOWN_MANAGER_H_
