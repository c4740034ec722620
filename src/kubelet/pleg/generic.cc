#include "kubelet/pleg/generic.h"

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

// True when both pods list the same containers and sandboxes, in the same order, in the same
// PLEG states: nothing to compare further (the common case of a relist).
bool SameStates(const container::Pod* a, const container::Pod* b) {
  if (a == nullptr || b == nullptr) return a == b;
  auto same = [](const std::vector<container::Container>& x,
                 const std::vector<container::Container>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i].id.id != y[i].id.id || Convert(x[i].state) != Convert(y[i].state)) return false;
    }
    return true;
  };
  return same(a->containers, b->containers) && same(a->sandboxes, b->sandboxes);
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
      events_(options_.events_bell) {}

GenericPLEG::~GenericPLEG() { Stop(); }

void GenericPLEG::Start() {
  absl::MutexLock lock(&loop_mu_);
  if (loop_ || stopped_) return;
  // Due times of the clock: the PLEG relists in virtual time under a fake.
  loop_ = LoopsOrOwn(options_.loops, own_loops_, clock_)
              .Start("PLEG loop", absl::InfinitePast(), [this](bool) {
                Relist();
                return clock_.Now() + options_.relist_period;
              });
}

void GenericPLEG::Stop() {
  Loop* loop;
  {
    absl::MutexLock lock(&loop_mu_);
    stopped_ = true;
    loop = loop_.get();
  }
  if (loop != nullptr) loop->Stop();
}

void GenericPLEG::Poke() {
  absl::MutexLock lock(&loop_mu_);
  if (loop_) loop_->Wake();
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

std::shared_ptr<const std::vector<container::Pod>> GenericPLEG::LastRelistPods() const {
  absl::MutexLock lock(&pods_mu_);
  if (!last_pods_) return std::make_shared<const std::vector<container::Pod>>();
  return last_pods_;
}

std::optional<container::Pod> GenericPLEG::LastSeen(const std::string& uid) const {
  absl::MutexLock lock(&mu_);
  auto it = records_.find(uid);
  if (it == records_.end() || !it->second.has_old) return std::nullopt;
  return it->second.old_pod;
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

void GenericPLEG::Diff(const std::string& pod_id, const container::Pod* old_pod,
                       const container::Pod* new_pod, std::vector<PodLifecycleEvent>* out) {
  if (SameStates(old_pod, new_pod)) return;
  std::set<std::string> ids;
  CollectIds(old_pod, &ids);
  CollectIds(new_pod, &ids);
  for (const std::string& cid : ids) {
    ComputeEvents(pod_id, cid, StateOf(old_pod, cid), StateOf(new_pod, cid), out);
  }
}

void GenericPLEG::Publish(std::vector<PodLifecycleEvent>& events, absl::Time observed) {
  for (auto& e : events) {
    if (e.type == EventType::kContainerChanged) continue;
    KLOG_V(4, "GenericPLEG", "podUID", e.pod_id, "containerID", e.data, "event",
           EventTypeName(e.type));
    e.observed = observed;
    events_.Push(std::move(e));
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
  auto listed = std::make_shared<const std::vector<container::Pod>>(*std::move(pods));
  {
    absl::MutexLock lock(&pods_mu_);
    last_pods_ = listed;
  }

  struct Inspect {
    std::string uid, name, namespace_;
  };
  std::vector<Inspect> to_inspect;
  std::vector<PodLifecycleEvent> to_send;
  {
    absl::MutexLock lock(&mu_);
    std::map<std::string, const container::Pod*> current;
    for (const container::Pod& p : *listed) current.emplace(p.id, &p);
    // Pods a sync is changing, or an observation newer than this listing has described, are
    // left as they are.
    auto skip = [&](const std::string& uid, const PodRecord* rec) {
      return in_flight_.count(uid) > 0 || (rec != nullptr && rec->observed_at > start);
    };
    std::vector<PodLifecycleEvent> events;
    // Pods seen before: compared with this listing (gone ones too).
    for (auto it = records_.begin(); it != records_.end();) {
      const std::string& uid = it->first;
      PodRecord& rec = it->second;
      auto cur = current.find(uid);
      const container::Pod* new_pod = cur == current.end() ? nullptr : cur->second;
      if (cur != current.end()) current.erase(cur);
      if (skip(uid, &rec)) {
        ++it;
        continue;
      }
      events.clear();
      Diff(uid, rec.has_old ? &rec.old_pod : nullptr, new_pod, &events);
      const bool reinspect = needs_reinspection_.count(uid) > 0;
      if (!events.empty() || reinspect) {
        const container::Pod& p = new_pod ? *new_pod : rec.old_pod;
        to_inspect.push_back({uid, p.name, p.namespace_});
      }
      for (auto& e : events) to_send.push_back(std::move(e));
      if (new_pod == nullptr) {
        it = records_.erase(it);
        continue;
      }
      // update(): this listing becomes the old one. Unchanged pods keep theirs.
      if (!events.empty() || !rec.has_old) rec.old_pod = *new_pod;
      rec.has_old = true;
      ++it;
    }
    // Pods new to the PLEG.
    for (const auto& [uid, pod] : current) {
      if (skip(uid, nullptr)) continue;
      events.clear();
      Diff(uid, nullptr, pod, &events);
      if (!events.empty() || needs_reinspection_.count(uid) > 0) {
        to_inspect.push_back({uid, pod->name, pod->namespace_});
      }
      for (auto& e : events) to_send.push_back(std::move(e));
      PodRecord& rec = records_[uid];
      rec.old_pod = *pod;
      rec.has_old = true;
    }
  }

  for (const Inspect& p : to_inspect) {
    auto status = runtime_.GetPodStatus(p.uid, p.name, p.namespace_);
    {
      absl::MutexLock lock(&mu_);
      if (status.ok()) {
        needs_reinspection_.erase(p.uid);
      } else {
        needs_reinspection_.insert(p.uid);
      }
    }
    // The cache keeps the newer of this and an observation made meanwhile.
    if (status.ok()) {
      cache_.Set(p.uid, std::move(*status), absl::OkStatus(), start);
    } else {
      KLOG_ERROR(status.status(), "PLEG: Ignoring events for pod", "pod",
                 p.namespace_ + "/" + p.name);
      container::PodStatus empty;
      empty.id = p.uid;
      cache_.Set(p.uid, std::move(empty), status.status(), start);
    }
  }
  cache_.UpdateTime(start);
  Publish(to_send, start);
  if (options_.on_relist) options_.on_relist(clock_.Now() - start, interval);
}

void GenericPLEG::BeginSync(const std::string& uid) {
  {
    absl::MutexLock lock(&mu_);
    ++in_flight_[uid];
  }
  cache_.BeginChange(uid);
}

void GenericPLEG::EndSync(const std::string& uid, const container::PodStatus* observed,
                          absl::Time observed_at) {
  std::vector<PodLifecycleEvent> events;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = in_flight_.find(uid); it != in_flight_.end() && --it->second <= 0) {
      in_flight_.erase(it);
    }
    if (observed == nullptr) return;
    PodRecord& rec = records_[uid];
    if (rec.observed_at > observed_at) return;
    container::Pod seen = container::ConvertPodStatusToPod(runtime_.Type(), *observed);
    Diff(uid, rec.has_old ? &rec.old_pod : nullptr, &seen, &events);
    rec.old_pod = std::move(seen);
    rec.has_old = true;
    rec.observed_at = observed_at;
    needs_reinspection_.erase(uid);
  }
  cache_.Set(uid, *observed, absl::OkStatus(), observed_at, /*after_sync=*/true);
  Publish(events, observed_at);
}

absl::Status GenericPLEG::UpdateCache(const std::string& uid, const std::string& name,
                                      const std::string& namespace_) {
  const absl::Time now = clock_.Now();
  absl::StatusOr<container::PodStatus> status = runtime_.GetPodStatus(uid, name, namespace_);
  if (!status.ok()) return status.status();
  BeginSync(uid);
  EndSync(uid, &*status, now);
  return absl::OkStatus();
}

}  // namespace kubelet::pleg
