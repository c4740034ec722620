#include "kubelet/pleg/generic.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "common/guarded.h"
#include "common/log.h"
#include "metrics/metrics.h"

namespace kubelet::pleg {
namespace {

// PLEG's view of a container's state (plegContainerState).
enum class PlegState { kRunning, kExited, kUnknown, kNonExistent };

PlegState Convert(container::State s) {
  switch (s) {
    case container::State::kRunning:
      return PlegState::kRunning;
    case container::State::kExited:
      return PlegState::kExited;
    case container::State::kCreated:
    case container::State::kUnknown:
      return PlegState::kUnknown;
  }
  return PlegState::kUnknown;
}

// State of container `id` in `pod` (sandboxes included), or non-existent.
PlegState StateOf(const container::Pod* pod, const std::string& id) {
  if (pod == nullptr) return PlegState::kNonExistent;
  for (const auto& c : pod->containers) {
    if (c.id.id == id) return Convert(c.state);
  }
  for (const auto& s : pod->sandboxes) {
    if (s.id.id == id) return Convert(s.state);
  }
  return PlegState::kNonExistent;
}

void CollectIds(const container::Pod* pod, std::set<std::string>* out) {
  if (pod == nullptr) return;
  for (const auto& c : pod->containers) out->insert(c.id.id);
  for (const auto& s : pod->sandboxes) out->insert(s.id.id);
}

void ComputeEvents(const std::string& pod_id, const std::string& cid, PlegState old_state,
                   PlegState new_state, std::vector<PodLifecycleEvent>* out) {
  if (old_state == new_state) return;
  switch (new_state) {
    case PlegState::kRunning:
      out->push_back({pod_id, EventType::kContainerStarted, cid});
      break;
    case PlegState::kExited:
      out->push_back({pod_id, EventType::kContainerDied, cid});
      break;
    case PlegState::kUnknown:
      out->push_back({pod_id, EventType::kContainerChanged, cid});
      break;
    case PlegState::kNonExistent:
      if (old_state != PlegState::kExited) {
        // The container died and was removed between two relists.
        out->push_back({pod_id, EventType::kContainerDied, cid});
      }
      out->push_back({pod_id, EventType::kContainerRemoved, cid});
      break;
  }
}

}  // namespace

const char* EventTypeName(EventType t) {
  switch (t) {
    case EventType::kContainerStarted:
      return "ContainerStarted";
    case EventType::kContainerDied:
      return "ContainerDied";
    case EventType::kContainerRemoved:
      return "ContainerRemoved";
    case EventType::kPodSync:
      return "PodSync";
    case EventType::kContainerChanged:
      return "ContainerChanged";
  }
  return "Unknown";
}

GenericPLEG::GenericPLEG(GenericPLEGOptions options, container::Runtime& runtime,
                         container::Cache& cache, const Clock& clock)
    : options_(std::move(options)),
      runtime_(runtime),
      cache_(cache),
      clock_(clock),
      poke_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      stop_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

GenericPLEG::~GenericPLEG() {
  Stop();
  ::close(poke_fd_);
  ::close(stop_fd_);
}

void GenericPLEG::Start() {
  if (thread_.joinable()) return;
  thread_ = GuardedThread("PLEG loop", [this] {
    // The period is a timer of the clock, so the PLEG relists in virtual time under a fake.
    std::unique_ptr<Timer> timer = clock_.NewTimer();
    for (;;) {
      RunGuarded("PLEG relist", [this] { Relist(); });
      timer->Reset(clock_.Now() + options_.relist_period);
      struct pollfd fds[3] = {
          {stop_fd_, POLLIN, 0}, {poke_fd_, POLLIN, 0}, {timer->fd(), POLLIN, 0}};
      int n = ::poll(fds, 3, -1);
      if (n > 0 && (fds[0].revents & POLLIN)) return;
      if (n > 0 && (fds[1].revents & POLLIN)) {
        uint64_t v;
        ssize_t r = ::read(poke_fd_, &v, sizeof(v));
        (void)r;
      }
    }
  });
}

void GenericPLEG::Stop() {
  if (!thread_.joinable()) return;
  uint64_t one = 1;
  ssize_t r = ::write(stop_fd_, &one, sizeof(one));
  (void)r;
  thread_.join();
}

void GenericPLEG::Poke() {
  uint64_t one = 1;
  ssize_t r = ::write(poke_fd_, &one, sizeof(one));
  (void)r;
}

absl::Status GenericPLEG::Healthy() const {
  int64_t last = last_relist_unix_nanos_.load();
  if (last == 0) return absl::OkStatus();  // not started yet: upstream treats this as healthy
  absl::Duration elapsed = clock_.Now() - absl::FromUnixNanos(last);
  if (elapsed > options_.relist_threshold) {
    return absl::UnavailableError(absl::StrCat("pleg was last seen active ",
                                               absl::FormatDuration(elapsed), " ago; threshold is ",
                                               absl::FormatDuration(options_.relist_threshold)));
  }
  return absl::OkStatus();
}

std::vector<container::Pod> GenericPLEG::LastRelistPods() const {
  absl::MutexLock lock(&pods_mu_);
  return last_pods_;
}

void GenericPLEG::UpdateRunningMetrics(const std::vector<container::Pod>& pods) {
  // kubelet_running_pods counts pods with a running sandbox; kubelet_running_containers counts
  // containers by state (upstream updateRunningPodAndContainerMetrics).
  int64_t running_pods = 0;
  std::map<std::string, int64_t> by_state = {
      {"created", 0}, {"running", 0}, {"exited", 0}, {"unknown", 0}};
  for (const container::Pod& p : pods) {
    for (const container::Container& sb : p.sandboxes) {
      if (sb.state == container::State::kRunning) {
        ++running_pods;
        break;
      }
    }
    for (const container::Container& c : p.containers) ++by_state[container::StateName(c.state)];
  }
  auto& km = metrics::Kubelet();
  km.running_pods.Add({}).Set(static_cast<double>(running_pods));
  for (const auto& [state, n] : by_state) {
    km.running_containers.Add({{"container_state", state}}).Set(static_cast<double>(n));
  }
}

void GenericPLEG::Relist() {
  absl::Time start = clock_.Now();
  absl::Duration interval = last_relist_start_ == absl::InfinitePast() ? absl::ZeroDuration()
                                                                       : start - last_relist_start_;
  last_relist_start_ = start;

  auto pods = runtime_.GetPods(true);
  metrics::ObserveRelist(absl::ToDoubleSeconds(clock_.Now() - start),
                         interval == absl::ZeroDuration() ? -1 : absl::ToDoubleSeconds(interval));
  if (!pods.ok()) {
    // As upstream, only a relist that got the pods counts as activity: a runtime that fails or
    // hangs makes PLEG unhealthy once the threshold passes.
    KLOG_ERROR(pods.status(), "GenericPLEG: Unable to retrieve pods");
    return;
  }
  last_relist_unix_nanos_.store(absl::ToUnixNanos(start));
  UpdateRunningMetrics(*pods);
  {
    absl::MutexLock lock(&pods_mu_);
    last_pods_ = *pods;
  }
  // setCurrent: every record's current is replaced by this relist's view.
  for (auto& [id, rec] : records_) rec.has_current = false;
  for (auto& pod : *pods) {
    PodRecord& rec = records_[pod.id];
    rec.current = std::move(pod);
    rec.has_current = true;
  }

  std::map<std::string, std::vector<PodLifecycleEvent>> events_by_pod;
  for (auto& [pod_id, rec] : records_) {
    const container::Pod* old_pod = rec.has_old ? &rec.old_pod : nullptr;
    const container::Pod* new_pod = rec.has_current ? &rec.current : nullptr;
    std::set<std::string> ids;
    CollectIds(old_pod, &ids);
    CollectIds(new_pod, &ids);
    for (const std::string& cid : ids) {
      ComputeEvents(pod_id, cid, StateOf(old_pod, cid), StateOf(new_pod, cid),
                    &events_by_pod[pod_id]);
    }
  }

  std::vector<PodLifecycleEvent> to_send;
  for (auto it = records_.begin(); it != records_.end();) {
    const std::string pod_id = it->first;
    PodRecord& rec = it->second;
    std::vector<PodLifecycleEvent>& events = events_by_pod[pod_id];
    bool reinspect = needs_reinspection_.count(pod_id) > 0;
    if (!events.empty() || reinspect) {
      const container::Pod& p = rec.has_current ? rec.current : rec.old_pod;
      auto status = runtime_.GetPodStatus(pod_id, p.name, p.namespace_);
      if (status.ok()) {
        needs_reinspection_.erase(pod_id);
        cache_.Set(pod_id, std::move(*status), absl::OkStatus(), start);
      } else {
        KLOG_ERROR(status.status(), "PLEG: Ignoring events for pod", "pod",
                   p.namespace_ + "/" + p.name);
        needs_reinspection_.insert(pod_id);
        container::PodStatus empty;
        empty.id = pod_id;
        cache_.Set(pod_id, std::move(empty), status.status(), start);
      }
    }
    // update(): the current view becomes the old one; pods gone from the runtime are dropped.
    if (rec.has_current) {
      rec.old_pod = std::move(rec.current);
      rec.has_old = true;
      rec.has_current = false;
      ++it;
    } else {
      it = records_.erase(it);
    }
    for (auto& e : events) {
      if (e.type == EventType::kContainerChanged) continue;
      KLOG_V(4, "GenericPLEG", "podUID", e.pod_id, "containerID", e.data, "event",
             EventTypeName(e.type));
      e.observed = start;
      to_send.push_back(std::move(e));
    }
  }
  cache_.UpdateTime(start);
  for (auto& e : to_send) events_.Push(std::move(e));
  if (options_.on_relist) options_.on_relist(clock_.Now() - start, interval);
}

absl::Status GenericPLEG::UpdateCache(const std::string& uid, const std::string& name,
                                      const std::string& namespace_) {
  const absl::Time now = clock_.Now();
  absl::StatusOr<container::PodStatus> status = runtime_.GetPodStatus(uid, name, namespace_);
  if (!status.ok()) return status.status();
  cache_.Set(uid, *std::move(status), absl::OkStatus(), now);
  return absl::OkStatus();
}

}  // namespace kubelet::pleg
