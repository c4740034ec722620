#include "kubelet/pod_workers.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/static_pod.h"
#include "common/guarded.h"
#include "common/jitter.h"
#include "common/log.h"
#include "metrics/metrics.h"

namespace kubelet {
namespace {

std::string PodRef(const api::PodPtr& pod, const std::optional<container::Pod>& rp) {
  if (pod) return pod->metadata.namespace_ + "/" + pod->metadata.name;
  if (rp) return rp->namespace_ + "/" + rp->name;
  return "";
}

}  // namespace

const char* SyncPodTypeName(SyncPodType t) {
  switch (t) {
    case SyncPodType::kSync:
      return "sync";
    case SyncPodType::kUpdate:
      return "update";
    case SyncPodType::kCreate:
      return "create";
    case SyncPodType::kKill:
      return "kill";
  }
  return "sync";
}

PodWorkers::PodWorkers(PodWorkersOptions options, PodSyncer& syncer, container::Cache& cache,
                       const Clock& clock)
    : options_(options),
      syncer_(syncer),
      cache_(cache),
      clock_(clock),
      pool_(std::make_unique<ThreadPool>(std::min(options.idle_threads, options.threads),
                                         options.threads, absl::Seconds(30))) {
  pool_->SetThreadName("pod worker");
}

PodWorkers::~PodWorkers() { Stop(); }

void PodWorkers::Stop() {
  std::vector<std::shared_ptr<Cancellation>> in_flight;
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
    for (auto& [uid, st] : states_) {
      st.pending.reset();
      if (st.sync_cancel) in_flight.push_back(st.sync_cancel);
      if (st.wait_cancel) in_flight.push_back(st.wait_cancel);
    }
  }
  for (auto& c : in_flight) c->Cancel();
  pool_->Stop();
}

int64_t PodWorkers::EffectiveGrace(const State& st) {
  if (st.grace_period_seconds) return *st.grace_period_seconds;
  if (st.pod && st.pod->spec.termination_grace_period_seconds) {
    return *st.pod->spec.termination_grace_period_seconds;
  }
  return 30;  // the API default
}

void PodWorkers::Merge(State& st, UpdatePodOptions update) {
  if (st.phase == Phase::kFinished) {
    if (update.type != SyncPodType::kCreate || !update.pod) return;
    // The pod was added again after it finished (a manifest removed, then restored): start over.
    bool working = st.working;
    st = State();
    st.working = working;
  }
  // The state keeps the one copy; the pending update carries only its type and grace period.
  if (update.pod) st.pod = std::move(update.pod);
  if (update.running_pod) st.running_pod = std::move(update.running_pod);
  update.pod.reset();
  update.running_pod.reset();
  if (update.type == SyncPodType::kKill) {
    if (st.phase == Phase::kSyncing) st.phase = Phase::kTerminating;
    if (update.kill_grace_period_seconds) {
      st.grace_period_seconds =
          st.grace_period_seconds
              ? std::min(*st.grace_period_seconds, *update.kill_grace_period_seconds)
              : *update.kill_grace_period_seconds;
    }
    st.pending = std::move(update);
    st.requeue_at.reset();
    return;
  }
  if (st.pending && st.pending->type == SyncPodType::kKill) return;  // a kill is never overwritten
  if (st.pending && st.pending->pleg_observed != absl::InfinitePast() &&
      (update.pleg_observed == absl::InfinitePast() ||
       st.pending->pleg_observed < update.pleg_observed)) {
    update.pleg_observed = st.pending->pleg_observed;  // waiting since the earlier event
  }
  st.pending = std::move(update);
  st.requeue_at.reset();
}

void PodWorkers::UpdatePod(UpdatePodOptions update) {
  std::string uid;
  if (update.pod) {
    uid = update.pod->metadata.uid;
  } else if (update.running_pod) {
    uid = update.running_pod->id;
  }
  if (uid.empty()) return;
  bool schedule = false;
  std::shared_ptr<Cancellation> cancel;
  const bool kill = update.type == SyncPodType::kKill;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    auto it = states_.find(uid);
    if (it == states_.end()) {
      if (!update.pod && update.type != SyncPodType::kKill) return;
      it = states_.emplace(uid, State()).first;
    }
    State& st = it->second;
    const bool was_terminating = st.phase == Phase::kTerminating;
    const int64_t grace_before = EffectiveGrace(st);
    Merge(st, std::move(update));
    if (st.pending && !st.working) {
      st.working = true;
      schedule = true;
    }
    // A kill cancels a sync in flight; while the pod terminates, only a kill that shortens the
    // grace period cancels the termination in flight, which then starts over with the shorter
    // one (a second `kubectl delete --grace-period` as upstream's pod workers honour it).
    if (kill && (!was_terminating || EffectiveGrace(st) < grace_before)) {
      cancel = st.sync_cancel;
    }
  }
  if (cancel) {
    KLOG_V(3, "Cancelling current pod sync", "podUID", uid);
    cancel->Cancel();
  }
  if (schedule) pool_->Submit([this, uid] { Run(uid); });
}

void PodWorkers::SyncDue() {
  std::vector<std::string> due;
  absl::Time now = clock_.Now();
  {
    absl::MutexLock lock(&mu_);
    for (auto& [uid, st] : states_) {
      if (!st.requeue_at || *st.requeue_at > now) continue;
      if (!st.pending) {
        st.requeue_at.reset();
        st.pending = UpdatePodOptions{SyncPodType::kSync, nullptr, std::nullopt, std::nullopt};
        if (!st.working) {
          st.working = true;
          due.push_back(uid);
        }
      } else if (!st.working) {
        // A static pod whose start waits for its previous version: its update is still pending.
        st.requeue_at.reset();
        st.working = true;
        due.push_back(uid);
      }
    }
  }
  for (const std::string& uid : due) pool_->Submit([this, uid] { Run(uid); });
}

void PodWorkers::Run(const std::string& uid) {
  for (;;) {
    UpdatePodOptions update;
    Phase phase;
    api::PodPtr pod;
    std::optional<container::Pod> running;
    std::optional<int64_t> grace;
    absl::Time last_sync;
    std::shared_ptr<Cancellation> cancel;
    std::shared_ptr<Cancellation> wait_cancel;
    {
      absl::MutexLock lock(&mu_);
      State& st = states_[uid];
      if (!st.pending || stopped_) {
        st.working = false;
        return;
      }
      if (st.phase == Phase::kSyncing && !st.started) {
        if (st.pod && api::IsStaticPod(*st.pod) && StaticPodMustWait(uid, st)) {
          KLOG_V(2, "Static pod is waiting for termination of previous instance", "pod",
                 PodRef(st.pod, st.running_pod), "podUID", uid);
          st.working = false;
          st.requeue_at = clock_.Now() + absl::Seconds(1);
          return;  // the update stays pending
        }
        st.started = true;
      }
      update = std::move(*st.pending);
      st.pending.reset();
      phase = st.phase;
      pod = st.pod;
      running = st.running_pod;
      grace = st.grace_period_seconds;
      last_sync = st.last_sync;
      if (phase == Phase::kSyncing || phase == Phase::kTerminating) {
        cancel = std::make_shared<Cancellation>();
        st.sync_cancel = cancel;
        wait_cancel = cancel;
      } else {
        // Only Stop() cancels the status wait of the other steps.
        wait_cancel = std::make_shared<Cancellation>();
        st.wait_cancel = wait_cancel;
      }
    }
    container::PodStatus status;
    {
      // A kill or Stop() cancels the wait as it cancels the step.
      ScopedCancellation scope(wait_cancel);
      status = cache_.GetNewerThan(uid, last_sync, clock_, options_.cache_wait).status;
    }
    absl::Status err;
    bool advance = false;
    // A step that throws fails like one that returned an error: the worker's bookkeeping below
    // still runs, so the pod is retried instead of being left marked as working forever.
    std::string thrown;
    const bool returned = RunGuarded(
        "pod worker",
        [&] {
          switch (phase) {
            case Phase::kSyncing: {
              // A kill that came while this step waited for the status cache: go straight on to it.
              if (!pod || cancel->IsCancelled()) break;
              ScopedCancellation scope(cancel);
              if (update.pleg_observed != absl::InfinitePast()) {
                metrics::ObservePlegEventToPodWorker(
                    absl::ToDoubleSeconds(clock_.Now() - update.pleg_observed));
              }
              auto terminal = syncer_.SyncPod(update.type, *pod, status);
              if (!terminal.ok()) {
                err = terminal.status();
              } else {
                advance = *terminal;
              }
              break;
            }
            case Phase::kTerminating:
              if (pod) {
                ScopedCancellation scope(cancel);
                err = syncer_.SyncTerminatingPod(*pod, status, grace);
              } else if (running) {
                err = syncer_.SyncTerminatingRuntimePod(*running);
              }
              advance = err.ok();
              break;
            case Phase::kTerminated:
              if (pod) err = syncer_.SyncTerminatedPod(*pod, status);
              advance = err.ok();
              break;
            case Phase::kFinished:
              break;
          }
        },
        &thrown);
    if (!returned) {
      err = absl::InternalError(absl::StrCat("pod sync step threw: ", thrown));
      advance = false;
    }
    if (!err.ok() && cancel && cancel->IsCancelled()) {
      KLOG_V(2, "Sync exited with context cancellation error", "pod", PodRef(pod, running),
             "podUID", uid, "err", err);
    } else if (!err.ok()) {
      KLOG_ERROR(err, "Error syncing pod, skipping", "pod", PodRef(pod, running), "podUID", uid);
    }
    absl::MutexLock lock(&mu_);
    State& st = states_[uid];
    st.sync_cancel.reset();
    st.wait_cancel.reset();
    // As upstream: the next step needs a status observed after this one finished, so it sees
    // the containers this step started (a relist that began during the step may have missed
    // them).
    st.last_sync = clock_.Now();
    if (advance && st.phase == phase) {
      switch (phase) {
        case Phase::kSyncing:
          st.phase = Phase::kTerminating;
          break;
        case Phase::kTerminating:
          st.phase = Phase::kTerminated;
          break;
        case Phase::kTerminated:
          st.phase = Phase::kFinished;
          break;
        case Phase::kFinished:
          break;
      }
      if (st.phase != Phase::kFinished && !st.pending) {
        st.pending = UpdatePodOptions{SyncPodType::kSync, nullptr, std::nullopt, std::nullopt};
      }
      st.requeue_at.reset();
    } else if (!err.ok()) {
      // Up to +50%, as upstream's pod workers (wait.Jitter(d, 0.5)).
      st.requeue_at = clock_.Now() + Jitter(options_.backoff_period, 0.5);
    } else if (st.phase == Phase::kSyncing) {
      st.requeue_at = clock_.Now() + Jitter(options_.resync_interval, 0.5);
    }
  }
}

std::vector<std::string> PodWorkers::KnownUIDs() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  out.reserve(states_.size());
  for (const auto& [uid, st] : states_) out.push_back(uid);
  return out;
}

bool PodWorkers::IsKnown(const std::string& uid) const {
  absl::MutexLock lock(&mu_);
  return states_.count(uid) > 0;
}

bool PodWorkers::IsPodTerminationRequested(const std::string& uid) const {
  absl::MutexLock lock(&mu_);
  auto it = states_.find(uid);
  return it != states_.end() && it->second.phase != Phase::kSyncing;
}

bool PodWorkers::IsPodKnownTerminated(const std::string& uid) const {
  absl::MutexLock lock(&mu_);
  auto it = states_.find(uid);
  return it != states_.end() &&
         (it->second.phase == Phase::kTerminated || it->second.phase == Phase::kFinished);
}

bool PodWorkers::CouldHaveRunningContainers(const std::string& uid) const {
  absl::MutexLock lock(&mu_);
  auto it = states_.find(uid);
  if (it == states_.end()) return true;  // unknown (e.g. before the first sync after restart)
  return it->second.phase == Phase::kSyncing || it->second.phase == Phase::kTerminating;
}

bool PodWorkers::IsPodTerminatingByFullName(const std::string& full_name) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [uid, st] : states_) {
    if (st.phase == Phase::kSyncing || (st.phase == Phase::kFinished && !st.working)) continue;
    if (st.pod && api::PodFullName(*st.pod) == full_name) return true;
  }
  return false;
}

std::string PodWorkers::FullName(const State& st) {
  if (st.pod) return api::PodFullName(*st.pod);
  if (st.running_pod) return st.running_pod->name + "_" + st.running_pod->namespace_;
  return "";
}

bool PodWorkers::StaticPodMustWait(const std::string& uid, const State& st) const {
  const std::string full_name = FullName(st);
  for (const auto& [other_uid, other] : states_) {
    if (other_uid == uid || FullName(other) != full_name) continue;
    switch (other.phase) {
      case Phase::kSyncing:
        // Started, or an orphan of that name still to be killed.
        if (other.started || !other.pod) return true;
        break;
      case Phase::kTerminating:
      case Phase::kTerminated:
        return true;
      case Phase::kFinished:
        if (other.working) return true;
        break;
    }
  }
  return false;
}

bool PodWorkers::IsFinished(const std::string& uid) const {
  absl::MutexLock lock(&mu_);
  auto it = states_.find(uid);
  return it != states_.end() && it->second.phase == Phase::kFinished && !it->second.working;
}

void PodWorkers::SyncKnownPods(const std::set<std::string>& desired) {
  absl::MutexLock lock(&mu_);
  for (auto it = states_.begin(); it != states_.end();) {
    if (it->second.phase == Phase::kFinished && !it->second.working && !desired.count(it->first)) {
      it = states_.erase(it);
    } else {
      ++it;
    }
  }
}

size_t PodWorkers::ActiveCount() const {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [uid, st] : states_) n += st.phase != Phase::kFinished;
  return n;
}

}  // namespace kubelet
