#include "kubelet/nodeshutdown/nodeshutdown_manager.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/static_pod.h"
#include "common/duration.h"
#include "common/guarded.h"
#include "kubelet/nodeshutdown/dbus_logind.h"
#include "kubelet/nodeshutdown/state.h"
#include "metrics/metrics.h"

namespace kubelet::nodeshutdown {
namespace {

// The groups as klog prints the Go slice in "Creating node shutdown manager" (%+v of
// []ShutdownGracePeriodByPodPriority; JSON: the struct's Go field names).
struct PeriodsForLog {
  const std::vector<GracePeriodByPriority>* periods;
};

// Found by argument-dependent lookup from the logging macros.
[[maybe_unused]] log::Field MakeField(std::string_view key, const PeriodsForLog& v) {
  std::string text = "[";
  std::string json = "[";
  for (size_t i = 0; i < v.periods->size(); ++i) {
    const GracePeriodByPriority& p = (*v.periods)[i];
    if (i > 0) {
      text += " ";
      json += ",";
    }
    absl::StrAppend(&text, "{Priority:", p.priority,
                    " ShutdownGracePeriodSeconds:", p.shutdown_grace_period_seconds, "}");
    absl::StrAppend(&json, "{\"Priority\":", p.priority,
                    ",\"ShutdownGracePeriodSeconds\":", p.shutdown_grace_period_seconds, "}");
  }
  text += "]";
  json += "]";
  return log::Field{std::string(key), text, json};
}

void SetStartTimeMetric(double value) {
  metrics::Kubelet().graceful_shutdown_start_time.Add({}).Set(value);
}
void SetEndTimeMetric(double value) {
  metrics::Kubelet().graceful_shutdown_end_time.Add({}).Set(value);
}

api::Time ToApiTime(absl::Time t) {
  const int64_t seconds = absl::ToUnixSeconds(t);
  const int64_t nanos = absl::ToInt64Nanoseconds(t - absl::FromUnixSeconds(seconds));
  return api::Time::FromUnix(seconds, static_cast<int32_t>(nanos));
}

}  // namespace

void PodTermination::Apply(api::PodStatus& status, absl::Time now) const {
  if (status.phase != api::kPodSucceeded) status.phase = api::kPodFailed;
  status.message = message;
  status.reason = reason;
  if (!disruption_target) return;
  api::PodCondition c;
  c.type = "DisruptionTarget";
  c.status = "True";
  c.reason = "TerminationByKubelet";
  c.message = message;
  c.last_transition_time = ToApiTime(now);
  for (api::PodCondition& old : status.conditions) {
    if (old.type != c.type) continue;
    if (old.status == c.status) c.last_transition_time = old.last_transition_time;
    old = std::move(c);
    return;
  }
  status.conditions.push_back(std::move(c));
}

std::vector<GracePeriodByPriority> MigrateConfig(absl::Duration requested,
                                                 absl::Duration critical) {
  if (requested == absl::ZeroDuration()) return {};
  const absl::Duration default_period = requested - critical;
  if (default_period < absl::ZeroDuration()) return {};
  const absl::Duration critical_period = requested - default_period;
  if (critical_period < absl::ZeroDuration()) return {};
  GracePeriodByPriority d;
  d.priority = kDefaultPriority;
  d.shutdown_grace_period_seconds = absl::ToInt64Seconds(default_period);
  GracePeriodByPriority c;
  c.priority = kSystemCriticalPriority;
  c.shutdown_grace_period_seconds = absl::ToInt64Seconds(critical_period);
  return {d, c};
}

ManagerOptions ManagerOptionsFromConfig(const config::KubeletConfiguration& c,
                                        const config::FeatureGate& gates) {
  ManagerOptions o;
  o.shutdown_grace_period_requested = c.shutdown_grace_period;
  o.shutdown_grace_period_critical_pods = c.shutdown_grace_period_critical_pods;
  o.pod_disruption_conditions = gates.Enabled("PodDisruptionConditions");
  o.enable_metrics = gates.Enabled("GracefulNodeShutdownBasedOnPodPriority");
  if (!gates.Enabled("GracefulNodeShutdown")) return o;
  std::vector<GracePeriodByPriority> periods = c.shutdown_grace_period_by_pod_priority;
  if (!gates.Enabled("GracefulNodeShutdownBasedOnPodPriority") || periods.empty()) {
    periods = MigrateConfig(c.shutdown_grace_period, c.shutdown_grace_period_critical_pods);
  }
  std::stable_sort(periods.begin(), periods.end(),
                   [](const GracePeriodByPriority& a, const GracePeriodByPriority& b) {
                     return a.priority < b.priority;
                   });
  o.shutdown_grace_period_by_pod_priority = std::move(periods);
  return o;
}

std::vector<PodShutdownGroup> GroupByPriority(const std::vector<GracePeriodByPriority>& periods,
                                              std::vector<api::Pod> pods) {
  std::vector<PodShutdownGroup> groups;
  groups.reserve(periods.size());
  for (const GracePeriodByPriority& p : periods) groups.push_back(PodShutdownGroup{p, {}});
  if (groups.empty()) return groups;
  for (api::Pod& pod : pods) {
    const int32_t priority = pod.spec.priority.value_or(0);
    // The first group whose priority is not below the pod's.
    size_t index = static_cast<size_t>(std::partition_point(groups.begin(), groups.end(),
                                                            [priority](const PodShutdownGroup& g) {
                                                              return g.period.priority < priority;
                                                            }) -
                                       groups.begin());
    // Above the highest: the highest. Between two groups: the lower one.
    if (index == groups.size()) {
      index = groups.size() - 1;
    } else if (index > 0 && groups[index].period.priority > priority) {
      --index;
    }
    groups[index].pods.push_back(std::move(pod));
  }
  return groups;
}

int64_t GracePeriodOverride(const api::Pod& pod, int64_t group_seconds) {
  const std::optional<int64_t>& own = pod.spec.termination_grace_period_seconds;
  if (own.has_value() && *own <= group_seconds) return *own;
  return group_seconds;
}

void RegisterMetrics(const config::FeatureGate& gates) {
  if (gates.Enabled("GracefulNodeShutdown") &&
      gates.Enabled("GracefulNodeShutdownBasedOnPodPriority")) {
    metrics::Kubelet().graceful_shutdown_start_time.Add({});
    metrics::Kubelet().graceful_shutdown_end_time.Add({});
  }
}

Manager::Manager(ManagerOptions options, const Clock& clock)
    : options_(std::move(options)),
      clock_(clock),
      recorder_(options_.recorder != nullptr ? *options_.recorder : events::DiscardingRecorder()) {
  if (Enabled()) {
    KLOG_INFO("Creating node shutdown manager", "shutdownGracePeriodRequested",
              options_.shutdown_grace_period_requested, "shutdownGracePeriodCriticalPods",
              options_.shutdown_grace_period_critical_pods, "shutdownGracePeriodByPodPriority",
              PeriodsForLog{&options_.shutdown_grace_period_by_pod_priority});
  }
}

Manager::~Manager() { Stop(); }

absl::Duration Manager::PeriodRequested() const {
  int64_t sum = 0;
  for (const GracePeriodByPriority& p : options_.shutdown_grace_period_by_pod_priority) {
    sum += p.shutdown_grace_period_seconds;
  }
  return absl::Seconds(sum);
}

std::string Manager::StatePath() const {
  if (options_.state_directory.empty()) return "";
  return (std::filesystem::path(options_.state_directory) / kLocalStorageStateFile).string();
}

absl::Status Manager::Start() {
  if (!Enabled()) return absl::OkStatus();
  {
    absl::MutexLock l(&mu_);
    if (started_) return absl::FailedPreconditionError("the node shutdown manager was started");
    started_ = true;
    if (stopping_) return absl::CancelledError("the node shutdown manager is stopping");
  }
  if (absl::Status st = StartWatch(); !st.ok()) return st;
  SetMetricsFromState();
  thread_ = GuardedThread("node shutdown manager", [this] { Run(); });
  return absl::OkStatus();
}

absl::Status Manager::StartWatch() {
  LogindFactory factory = options_.logind;
  if (!factory) {
    DBusLogindOptions o;
    o.config_directory = options_.logind_config_directory;
    factory = DBusLogindFactory(std::move(o));
  }
  absl::StatusOr<std::unique_ptr<Logind>> conn = factory();
  if (!conn.ok()) return conn.status();
  if (*conn == nullptr) return absl::InternalError("no bus connection");
  Logind& logind = **conn;

  absl::StatusOr<absl::Duration> current = logind.CurrentInhibitDelay();
  if (!current.ok()) return current.status();
  // When logind's InhibitDelayMaxUSec (logind.conf) is shorter than the periods, raise it.
  const absl::Duration requested = PeriodRequested();
  if (requested > *current) {
    if (absl::Status st = logind.OverrideInhibitDelay(requested); !st.ok()) {
      return absl::Status(
          st.code(),
          absl::StrCat("unable to override inhibit delay by shutdown manager: ", st.message()));
    }
    if (absl::Status st = logind.ReloadLogindConf(); !st.ok()) return st;
    absl::StatusOr<absl::Duration> updated = logind.CurrentInhibitDelay();
    if (!updated.ok()) return updated.status();
    if (requested > *updated) {
      return absl::FailedPreconditionError(
          absl::StrCat("node shutdown manager was unable to update logind InhibitDelayMaxSec to ",
                       FormatGoDuration(requested),
                       " (ShutdownGracePeriod), current value of InhibitDelayMaxSec (",
                       FormatGoDuration(*updated), ") is less than requested ShutdownGracePeriod"));
    }
  }

  if (absl::Status st = AcquireInhibitLock(logind); !st.ok()) return st;

  if (absl::Status st = logind.MonitorShutdown(); !st.ok()) {
    absl::Status released = logind.ReleaseInhibitLock(*lock_);
    lock_.reset();
    if (!released.ok()) {
      return absl::UnavailableError(
          absl::StrCat("failed releasing inhibitLock: ", released.message(),
                       " and failed monitoring shutdown: ", st.message()));
    }
    return absl::UnavailableError(absl::StrCat("failed to monitor shutdown: ", st.message()));
  }

  absl::MutexLock l(&mu_);
  if (stopping_) {
    (void)logind.ReleaseInhibitLock(*lock_);
    lock_.reset();
    return absl::CancelledError("the node shutdown manager is stopping");
  }
  logind_ = *std::move(conn);
  logind_raw_ = logind_.get();
  return absl::OkStatus();
}

absl::Status Manager::AcquireInhibitLock(Logind& logind) {
  absl::StatusOr<InhibitLock> lock = logind.InhibitShutdown();
  if (!lock.ok()) return lock.status();
  if (lock_.has_value()) (void)logind.ReleaseInhibitLock(*lock_);
  lock_ = *lock;
  return absl::OkStatus();
}

void Manager::ReleaseInhibitLock() {
  if (!lock_.has_value()) return;
  if (logind_raw_ != nullptr) {
    (void)logind_raw_->ReleaseInhibitLock(*lock_);
  } else {
    close(lock_->fd);
  }
  lock_.reset();
}

void Manager::SetMetricsFromState() {
  const std::string path = StatePath();
  if (!options_.enable_metrics || path.empty()) return;
  absl::StatusOr<ShutdownState> state = LoadShutdownState(path);
  if (!state.ok()) {
    KLOG_ERROR(state.status(), "Failed to load graceful shutdown state");
    return;
  }
  if (state->start_time.has_value()) SetStartTimeMetric(ShutdownTimestamp(state->start_time));
  if (state->end_time.has_value()) SetEndTimeMetric(ShutdownTimestamp(state->end_time));
}

void Manager::Run() {
  for (;;) {
    if (logind_raw_ != nullptr) Watch();
    {
      absl::MutexLock l(&mu_);
      if (stopping_) return;
      clock_.AwaitWithTimeout(mu_, absl::Condition(&stopping_), kDBusReconnectPeriod);
      if (stopping_) return;
    }
    KLOG_V(1, "Restarting watch for node shutdown events");
    if (absl::Status st = StartWatch(); !st.ok()) {
      if (absl::IsCancelled(st)) return;  // stopping
      KLOG_ERROR(st, "Unable to watch the node for shutdown events");
    }
  }
}

void Manager::Watch() {
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      if (stopping_) return;
    }
    absl::StatusOr<std::optional<bool>> event = logind_raw_->WaitForShutdownEvent();
    if (!event.ok()) {
      KLOG_ERROR(absl::OkStatus(), "Ended to watching the node for shutdown events");
      KLOG_V(4, "The bus connection of the node shutdown manager ended", "err", event.status());
      std::unique_ptr<Logind> gone;
      {
        absl::MutexLock l(&mu_);
        gone = std::move(logind_);
        logind_raw_ = nullptr;
      }
      return;
    }
    if (!event->has_value()) continue;  // interrupted: stopping?
    HandleEvent(**event);
  }
}

void Manager::HandleEvent(bool shutting_down) {
  KLOG_V(1, "Shutdown manager detected new shutdown event, isNodeShuttingDownNow", "event",
         shutting_down);
  KLOG_V(1, "Shutdown manager detected new shutdown event", "event",
         shutting_down ? "shutdown" : "cancelled");
  recorder_.Record(events::NodeRef(options_.node_name), events::kNormal, kNodeShutdownEventReason,
                   shutting_down ? "Shutdown manager detected shutdown event"
                                 : "Shutdown manager detected shutdown cancellation");
  {
    absl::MutexLock l(&mu_);
    shutting_down_ = shutting_down;
  }
  if (shutting_down) {
    // The Ready condition turns False now.
    if (options_.sync_node_status) Spawn("node status sync", options_.sync_node_status);
    ProcessShutdownEvent();
  } else {
    (void)AcquireInhibitLock(*logind_raw_);
  }
}

void Manager::ProcessShutdownEvent() {
  KLOG_V(1, "Shutdown manager processing shutdown event");
  std::vector<api::Pod> pods;
  if (options_.active_pods) pods = options_.active_pods();

  const std::string state_path = StatePath();
  std::optional<absl::Time> start;
  if (options_.enable_metrics) {
    start = clock_.Now();
    if (!state_path.empty()) {
      if (absl::Status st = StoreShutdownState(state_path, ShutdownState{start, std::nullopt});
          !st.ok()) {
        KLOG_ERROR(st, "Failed to store graceful shutdown state");
      }
    }
    SetStartTimeMetric(ShutdownTimestamp(start));
    SetEndTimeMetric(0);
  }

  for (PodShutdownGroup& group :
       GroupByPriority(options_.shutdown_grace_period_by_pod_priority, std::move(pods))) {
    // A priority range without pods is not waited for.
    if (group.pods.empty()) continue;
    {
      absl::MutexLock l(&mu_);
      if (stopping_) break;
    }
    const int64_t group_seconds = group.period.shutdown_grace_period_seconds;
    auto pending = std::make_shared<size_t>(group.pods.size());  // guarded by mu_
    for (api::Pod& pod : group.pods) {
      PodTermination termination;
      termination.grace_period_seconds = GracePeriodOverride(pod, group_seconds);
      termination.disruption_target = options_.pod_disruption_conditions;
      KLOG_V(1, "Shutdown manager killing pod with gracePeriod", "pod", api::PodKey(pod),
             "gracePeriod", termination.grace_period_seconds);
      Spawn("node shutdown pod kill", [this, pod = std::move(pod),
                                       termination = std::move(termination), pending] {
        RunGuarded("node shutdown pod kill", [&] {
          absl::Status st = options_.kill_pod ? options_.kill_pod(pod, termination)
                                              : absl::UnimplementedError("no way to kill pods");
          if (!st.ok()) {
            KLOG_V(1, "Shutdown manager failed killing pod", "pod", api::PodKey(pod), "err", st);
          } else {
            KLOG_V(1, "Shutdown manager finished killing pod", "pod", api::PodKey(pod));
          }
        });
        absl::MutexLock l(&mu_);
        --*pending;
      });
    }
    bool done = false;
    bool stopping = false;
    {
      absl::MutexLock l(&mu_);
      const absl::Time deadline = clock_.Now() + absl::Seconds(group_seconds);
      auto finished = [this, &pending]()
                          ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return *pending == 0 || stopping_; };
      clock_.AwaitWithDeadline(mu_, absl::Condition(&finished), deadline);
      done = *pending == 0;
      stopping = stopping_;
    }
    if (!done && !stopping) {
      KLOG_V(1, "Shutdown manager pod killing time out", "gracePeriod", group_seconds, "priority",
             group.period.priority);
    }
  }

  if (options_.enable_metrics) {
    const absl::Time end = clock_.Now();
    if (!state_path.empty()) {
      if (absl::Status st = StoreShutdownState(state_path, ShutdownState{start, end}); !st.ok()) {
        KLOG_ERROR(st, "Failed to store graceful shutdown state");
      }
    }
    // Upstream v1.28 sets the start gauge here (the end gauge follows from the state file).
    SetStartTimeMetric(ShutdownTimestamp(end));
  }
  ReleaseInhibitLock();
  KLOG_V(1, "Shutdown manager completed processing shutdown event, node will shutdown shortly");
}

void Manager::Spawn(std::string name, std::function<void()> fn) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::vector<std::thread> finished;
  {
    absl::MutexLock l(&background_mu_);
    for (auto it = background_.begin(); it != background_.end();) {
      if (it->done->load()) {
        finished.push_back(std::move(it->thread));
        it = background_.erase(it);
      } else {
        ++it;
      }
    }
    background_.push_back(
        Background{std::thread([name = std::move(name), fn = std::move(fn), done] {
                     RunGuarded(name, fn);
                     done->store(true);
                   }),
                   done});
  }
  for (std::thread& t : finished) t.join();
}

void Manager::Stop() {
  absl::MutexLock stop_lock(&stop_mu_);
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
    if (logind_ != nullptr) logind_->Interrupt();
  }
  if (thread_.joinable()) thread_.join();
  std::vector<Background> background;
  {
    absl::MutexLock l(&background_mu_);
    background.swap(background_);
  }
  for (Background& b : background) b.thread.join();
  // The manager's thread has ended: its connection and lock are ours.
  std::unique_ptr<Logind> conn;
  {
    absl::MutexLock l(&mu_);
    conn = std::move(logind_);
  }
  logind_raw_ = conn.get();
  ReleaseInhibitLock();
  logind_raw_ = nullptr;
}

absl::Status Manager::ShutdownStatus() const {
  if (ShuttingDown()) return absl::FailedPreconditionError(kNodeShuttingDown);
  return absl::OkStatus();
}

bool Manager::ShuttingDown() const {
  absl::MutexLock l(&mu_);
  return shutting_down_;
}

container::AdmitDecision Manager::Admit(const api::Pod& /*pod*/,
                                        const std::vector<api::PodPtr>& /*admitted*/) {
  if (ShuttingDown()) {
    return container::AdmitDecision{false, kNodeShutdownNotAdmittedReason,
                                    kNodeShutdownNotAdmittedMessage};
  }
  return {};
}

}  // namespace kubelet::nodeshutdown
