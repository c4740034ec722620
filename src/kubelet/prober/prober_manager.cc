#include "kubelet/prober/prober_manager.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/guarded.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/prober/grpc_probe.h"
#include "metrics/metrics.h"

namespace kubelet::prober {

namespace {

constexpr int kMaxProbeRetries = 3;

std::string KObj(const api::Pod& pod) {
  return pod.metadata.namespace_.empty() ? pod.metadata.name
                                         : pod.metadata.namespace_ + "/" + pod.metadata.name;
}

const api::Box<api::Probe>& ProbeOf(const api::Container& c, ProbeType t) {
  switch (t) {
    case ProbeType::kLiveness:
      return c.liveness_probe;
    case ProbeType::kReadiness:
      return c.readiness_probe;
    case ProbeType::kStartup:
      break;
  }
  return c.startup_probe;
}

}  // namespace

// Every field is guarded by ProberManager::mu_ (the struct is shared with probe threads through
// shared_ptr so a probe in flight keeps it alive after removal).
struct ProberManager::Worker {
  Worker(ProbeType t, const api::Probe& probe, std::string restart_policy)
      : type(t), logic(t, probe, std::move(restart_policy)) {}

  ProbeType type;
  std::string key;
  std::string pod_uid;
  api::Pod pod;
  api::Container container;
  api::Probe probe;
  WorkerLogic logic;
  ContainerObservation obs;
  std::string pod_ip;
  bool has_startup_probe = false;
  absl::Time next_run = absl::InfinitePast();
  bool in_flight = false;
  bool removed = false;
  bool finished = false;  // the container terminated for good: not scheduled
};

// Writes results into results_ (callers hold mu_) and collects the pods to re-sync.
class ProberManager::Sink final : public ResultsSink {
 public:
  Sink(ProberManager& m, std::string pod_uid) : m_(m), pod_uid_(std::move(pod_uid)) {}

  void Set(const std::string& id, ProbeType type, Result r) override {
    ResultEntry& e = m_.results_[id];
    e.pod_uid = pod_uid_;
    std::optional<Result>& slot = Slot(e, type);
    const std::optional<Result> old = slot;
    slot = r;
    if (old.has_value() && *old == r) return;
    bool notify = false;
    switch (type) {
      case ProbeType::kLiveness:
        notify = r == Result::kFailure;
        break;
      case ProbeType::kStartup:
        notify = old.has_value() && r != Result::kUnknown;
        break;
      case ProbeType::kReadiness:
        notify = old.has_value();
        break;
    }
    if (notify) uids.push_back(pod_uid_);
  }

  void Remove(const std::string& id, ProbeType type) override {
    auto it = m_.results_.find(id);
    if (it == m_.results_.end()) return;
    Slot(it->second, type).reset();
    const ResultEntry& e = it->second;
    if (!e.liveness && !e.readiness && !e.startup) m_.results_.erase(it);
  }

  void set_pod_uid(std::string uid) { pod_uid_ = std::move(uid); }

  std::vector<std::string> uids;

 private:
  static std::optional<Result>& Slot(ResultEntry& e, ProbeType t) {
    switch (t) {
      case ProbeType::kLiveness:
        return e.liveness;
      case ProbeType::kReadiness:
        return e.readiness;
      case ProbeType::kStartup:
        break;
    }
    return e.startup;
  }

  ProberManager& m_;
  std::string pod_uid_;
};

ProberManager::ProberManager(cri::RuntimeService& runtime, Clock& clock, Options options)
    : runtime_(runtime),
      clock_(clock),
      options_(std::move(options)),
      pool_(std::max(0, options_.probe_threads), std::max(1, options_.max_probe_threads),
            absl::Seconds(30)),
      start_(clock.Now()),
      rng_(std::random_device{}()) {
  pool_.SetThreadName("prober");
}

ProberManager::~ProberManager() { Stop(); }

void ProberManager::SetOnChange(std::function<void(const std::string& pod_uid)> on_change) {
  absl::MutexLock lock(&mu_);
  on_change_ = std::move(on_change);
}

void ProberManager::Stop() {
  {
    absl::MutexLock lock(&stop_mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    wake_.SignalAll();
  }
  // stopped_ is set: no StartScheduler() touches scheduler_ any more.
  if (scheduler_.joinable()) scheduler_.join();
  pool_.Stop();
}

std::string ProberManager::Key(const std::string& uid, const std::string& container, ProbeType t) {
  return absl::StrCat(uid, "/", container, "/", static_cast<int>(t));
}

void ProberManager::AfterSync(const api::Pod& pod, const container::PodStatus& status) {
  const std::string& uid = pod.metadata.uid;
  std::string pod_ip = status.ips.empty() ? "" : status.ips.front();
  if (pod_ip.empty() && pod.spec.host_network && !options_.node_ips.empty()) {
    pod_ip = options_.node_ips.front();
  }
  std::vector<const api::Container*> containers;
  for (const api::Container& c : pod.spec.init_containers) {
    if (api::IsRestartableInitContainer(c)) containers.push_back(&c);
  }
  for (const api::Container& c : pod.spec.containers) containers.push_back(&c);

  Sink sink(*this, uid);
  bool added = false;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    const bool deleting = pod.metadata.deletion_timestamp.has_value() || terminating_.count(uid);
    const absl::Time now = clock_.Now();
    for (const api::Container* c : containers) {
      ContainerObservation obs;
      if (const container::ContainerStatus* cs = status.FindContainerStatusByName(c->name)) {
        obs.id = cs->id;
        obs.state = cs->state;
        obs.started_at = cs->started_at;
        obs.exit_code = cs->exit_code;
      }
      for (ProbeType t : {ProbeType::kStartup, ProbeType::kLiveness, ProbeType::kReadiness}) {
        const api::Box<api::Probe>& probe = ProbeOf(*c, t);
        if (!probe.has_value()) continue;
        // A terminating pod's containers are not restarted: no liveness / startup probing.
        if (deleting && t != ProbeType::kReadiness) continue;
        const std::string key = Key(uid, c->name, t);
        auto it = workers_.find(key);
        if (it == workers_.end()) {
          std::string policy = api::IsRestartableInitContainer(*c)
                                   ? std::string(api::kContainerRestartPolicyAlways)
                                   : pod.spec.restart_policy;
          if (policy.empty()) policy = api::kContainerRestartPolicyAlways;
          auto w = std::make_shared<Worker>(t, *probe, std::move(policy));
          w->key = key;
          w->pod_uid = uid;
          w->probe = *probe;
          w->has_startup_probe = c->startup_probe.has_value();
          it = workers_.emplace(key, std::move(w)).first;
          added = true;
          KLOG_V(4, "Adding probe worker", "probeType", ProbeTypeName(t), "pod", KObj(pod),
                 "containerName", c->name);
        }
        Worker& w = *it->second;
        w.pod = pod;
        w.container = *c;
        w.pod_ip = pod_ip;
        w.obs = obs;
        const bool created = w.next_run == absl::InfinitePast();
        if (w.logic.Observe(obs, sink) || created) {
          // A new container: probe it from now on (the initial delay still applies).
          w.finished = false;
          w.next_run = now;
          added = true;
          // Right after a kubelet restart every pod's workers appear at once: spread their
          // first probes over one period, as upstream does.
          if (options_.start_scheduler && now - start_ < w.logic.spec().period) {
            w.next_run += JitterLocked(w.logic.spec().period);
          }
        }
      }
    }
    if (added) wake_.Signal();
  }
  if (added) StartScheduler();
  Notify(sink.uids);
}

bool ProberManager::SchedulerStarted() {
  absl::MutexLock lock(&stop_mu_);
  return scheduler_.joinable();
}

void ProberManager::StartScheduler() {
  if (!options_.start_scheduler) return;
  absl::MutexLock lock(&stop_mu_);
  if (stopped_ || scheduler_.joinable()) return;
  scheduler_ = GuardedThread("prober scheduler", [this] { SchedulerLoop(); });
}

absl::Duration ProberManager::JitterLocked(absl::Duration period) {
  std::uniform_real_distribution<double> fraction(0.0, 1.0);
  return period * fraction(rng_);
}

void ProberManager::RemoveWorkerLocked(const std::string& key, Sink& sink) {
  auto it = workers_.find(key);
  if (it == workers_.end()) return;
  Worker& w = *it->second;
  w.removed = true;
  if (!w.logic.container_id().empty()) sink.Remove(w.logic.container_id(), w.type);
  KLOG_V(4, "Removing probe worker", "probeType", ProbeTypeName(w.type), "pod", KObj(w.pod),
         "containerName", w.container.name);
  workers_.erase(it);
}

void ProberManager::PodTerminating(const api::Pod& pod) {
  Sink sink(*this, pod.metadata.uid);
  absl::MutexLock lock(&mu_);
  terminating_.insert(pod.metadata.uid);
  std::vector<std::string> keys;
  for (const auto& [key, w] : workers_) {
    if (w->pod_uid == pod.metadata.uid && w->type != ProbeType::kReadiness) keys.push_back(key);
  }
  for (const std::string& key : keys) RemoveWorkerLocked(key, sink);
}

absl::Status ProberManager::CleanupTerminatedPod(const api::Pod& pod) {
  Sink sink(*this, pod.metadata.uid);
  absl::MutexLock lock(&mu_);
  std::vector<std::string> keys;
  for (const auto& [key, w] : workers_) {
    if (w->pod_uid == pod.metadata.uid) keys.push_back(key);
  }
  for (const std::string& key : keys) RemoveWorkerLocked(key, sink);
  terminating_.erase(pod.metadata.uid);
  return absl::OkStatus();
}

void ProberManager::Housekeeping(const std::set<std::string>& active) {
  Sink sink(*this, "");
  absl::MutexLock lock(&mu_);
  std::vector<std::string> keys;
  for (const auto& [key, w] : workers_) {
    if (!active.count(w->pod_uid)) keys.push_back(key);
  }
  for (const std::string& key : keys) RemoveWorkerLocked(key, sink);
  for (auto it = terminating_.begin(); it != terminating_.end();) {
    it = active.count(*it) ? std::next(it) : terminating_.erase(it);
  }
  // Results whose worker is gone (e.g. a result left by a worker that was replaced).
  for (auto it = results_.begin(); it != results_.end();) {
    it = active.count(it->second.pod_uid) ? std::next(it) : results_.erase(it);
  }
}

std::vector<std::shared_ptr<ProberManager::Worker>> ProberManager::TakeDueLocked(absl::Time now) {
  std::vector<std::shared_ptr<Worker>> due;
  for (auto& [key, w] : workers_) {
    if (w->in_flight || w->finished || w->next_run > now) continue;
    w->in_flight = true;
    const absl::Duration period = w->logic.spec().period;
    w->next_run += period;
    if (w->next_run <= now) w->next_run = now + period;  // missed ticks are dropped
    due.push_back(w);
  }
  return due;
}

void ProberManager::SchedulerLoop() {
  mu_.Lock();
  while (!stopping_) {
    const absl::Time now = clock_.Now();
    std::vector<std::shared_ptr<Worker>> due = TakeDueLocked(now);
    if (!due.empty()) {
      mu_.Unlock();
      for (auto& w : due) pool_.Submit([this, w] { RunWorker(w); });
      mu_.Lock();
      continue;
    }
    // Wake at the next due time; at least once a second so an injected clock that jumps is
    // noticed.
    absl::Duration wait = absl::Seconds(1);
    for (const auto& [key, w] : workers_) {
      if (w->finished) continue;
      // An in-flight worker's next run is already set; one that is overdue by the time it
      // finishes wakes the scheduler itself (RunWorker), the others need no wake-up.
      if (w->in_flight && w->next_run <= now) continue;
      wait = std::min(wait, w->next_run - now);
    }
    wake_.WaitWithTimeout(&mu_, std::max(wait, absl::Milliseconds(1)));
  }
  mu_.Unlock();
}

void ProberManager::RunDueProbes() {
  std::vector<std::shared_ptr<Worker>> due;
  {
    absl::MutexLock lock(&mu_);
    due = TakeDueLocked(clock_.Now());
  }
  for (auto& w : due) RunWorker(w);
}

size_t ProberManager::NumWorkers() const {
  absl::MutexLock lock(&mu_);
  return workers_.size();
}

bool ProberManager::StartedLocked(const std::string& container_id, const Worker& w) const {
  if (!w.has_startup_probe) return true;
  auto it = results_.find(container_id);
  return it != results_.end() && it->second.startup == Result::kSuccess;
}

void ProberManager::RunWorker(const std::shared_ptr<Worker>& w) {
  Sink sink(*this, "");
  api::Pod pod;
  api::Container container;
  container::ContainerID id;
  std::string pod_ip;
  {
    absl::MutexLock lock(&mu_);
    sink.set_pod_uid(w->pod_uid);
    if (w->removed || stopping_) {
      w->in_flight = false;
      return;
    }
    const bool started = StartedLocked(w->obs.id.String(), *w);
    const WorkerLogic::Action action = w->logic.Prepare(w->obs, clock_.Now(), started, sink);
    if (action != WorkerLogic::Action::kProbe) {
      if (action == WorkerLogic::Action::kStop) {
        w->finished = true;
        sink.Remove(w->logic.container_id(), w->type);
      }
      w->in_flight = false;
    } else {
      pod = w->pod;
      container = w->container;
      id = w->obs.id;
      pod_ip = w->pod_ip;
    }
  }
  if (id.empty()) {
    Notify(sink.uids);
    return;
  }

  const absl::Time start = clock_.Now();
  lifecycle::ProbeOutcome outcome;
  // A probe that throws errors like one that could not run; the bookkeeping below still clears
  // the worker's in-flight mark, so the next period probes again.
  std::string thrown;
  const bool returned = RunGuarded(
      "probe",
      [&] {
        for (int attempt = 0; attempt < kMaxProbeRetries; ++attempt) {
          outcome = Execute(*w, pod, container, id, pod_ip);
          if (outcome.result != lifecycle::ProbeResult::kUnknown) break;
        }
      },
      &thrown);
  if (!returned) {
    outcome = lifecycle::ProbeOutcome{};
    outcome.result = lifecycle::ProbeResult::kUnknown;
    outcome.error = absl::InternalError(absl::StrCat("probe threw: ", thrown));
  }
  const double seconds = absl::ToDoubleSeconds(clock_.Now() - start);
  const char* type_name = ProbeTypeName(w->type);
  const std::string& container_name = container.name;
  Result result = Result::kUnknown;
  events::EventRecorder& recorder =
      options_.recorder != nullptr ? *options_.recorder : events::DiscardingRecorder();
  switch (outcome.result) {
    case lifecycle::ProbeResult::kSuccess:
      result = Result::kSuccess;
      KLOG_V(3, "Probe succeeded", "probeType", type_name, "pod", KObj(pod), "podUID",
             pod.metadata.uid, "containerName", container_name);
      break;
    case lifecycle::ProbeResult::kWarning:
      result = Result::kSuccess;
      KLOG_V(3, "Probe succeeded with a warning", "probeType", type_name, "pod", KObj(pod),
             "podUID", pod.metadata.uid, "containerName", container_name, "output", outcome.output);
      recorder.Record(events::ContainerRef(pod, container_name), events::kWarning,
                      events::kContainerProbeWarning,
                      absl::StrCat(type_name, " probe warning: ", outcome.output));
      break;
    case lifecycle::ProbeResult::kFailure:
      result = Result::kFailure;
      KLOG_V(1, "Probe failed", "probeType", type_name, "pod", KObj(pod), "podUID",
             pod.metadata.uid, "containerName", container_name, "probeResult",
             lifecycle::ProbeResultName(outcome.result), "output", outcome.output);
      recorder.Record(events::ContainerRef(pod, container_name), events::kWarning,
                      events::kContainerUnhealthy,
                      absl::StrCat(type_name, " probe failed: ", outcome.output));
      break;
    case lifecycle::ProbeResult::kUnknown:
      KLOG_V(1, "Probe errored", "err", outcome.error, "probeType", type_name, "pod", KObj(pod),
             "podUID", pod.metadata.uid, "containerName", container_name);
      if (!outcome.error.ok()) {
        recorder.Record(events::ContainerRef(pod, container_name), events::kWarning,
                        events::kContainerUnhealthy,
                        absl::StrCat(type_name, " probe errored: ", outcome.error.message()));
      }
      break;
  }
  // As upstream, a probe that could not be run (an error) is thrown away before it is counted;
  // "unknown" counts results that are neither success nor failure.
  if (outcome.error.ok()) {
    metrics::ObserveProbe(type_name,
                          result == Result::kSuccess   ? "successful"
                          : result == Result::kFailure ? "failed"
                                                       : "unknown",
                          container_name, pod.metadata.name, pod.metadata.namespace_,
                          pod.metadata.uid, seconds);
  }
  {
    absl::MutexLock lock(&mu_);
    // A prober error throws the result away (upstream); a removed worker records nothing.
    if (!w->removed && result != Result::kUnknown) w->logic.Apply(id.String(), result, sink);
    w->in_flight = false;
    // Only a probe that outlived its period has a run the scheduler is not waiting for.
    if (w->next_run <= clock_.Now()) wake_.Signal();
  }
  Notify(sink.uids);
}

lifecycle::ProbeOutcome ProberManager::Execute(const Worker& w, const api::Pod& pod,
                                               const api::Container& container,
                                               const container::ContainerID& id,
                                               const std::string& pod_ip) {
  // The worker's spec never changes after creation: reading it without mu_ is safe.
  const api::Probe& p = w.probe;
  if (options_.probe) return options_.probe(w.type, pod, container, p, id, pod_ip);
  const absl::Duration timeout = w.logic.spec().timeout;
  lifecycle::ProbeOutcome out;
  if (p.exec.has_value()) return lifecycle::ExecProbe(runtime_, id.id, p.exec->command, timeout);
  if (p.http_get.has_value()) {
    lifecycle::HttpGetRequest req;
    req.host = p.http_get->host.empty() ? pod_ip : p.http_get->host;
    auto port = lifecycle::ResolveContainerPort(p.http_get->port, container);
    if (!port.ok()) {
      out.error = port.status();
      return out;
    }
    req.port = *port;
    req.scheme =
        p.http_get->scheme.empty() ? "http" : absl::AsciiStrToLower(AV(p.http_get->scheme));
    req.path = p.http_get->path;
    req.headers = p.http_get->http_headers;
    req.user_agent = lifecycle::DefaultUserAgent("probe");
    return lifecycle::HttpProbe(req, timeout);
  }
  if (p.tcp_socket.has_value()) {
    auto port = lifecycle::ResolveContainerPort(p.tcp_socket->port, container);
    if (!port.ok()) {
      out.error = port.status();
      return out;
    }
    const std::string host = p.tcp_socket->host.empty() ? pod_ip : p.tcp_socket->host;
    return lifecycle::TcpProbe(host, *port, timeout);
  }
  if (p.grpc.has_value()) {
    return GrpcProbe(pod_ip, p.grpc->port, p.grpc->service.value_or(""), timeout);
  }
  KLOG_WARNING("Failed to find probe builder for container", "containerName", container.name);
  out.error = absl::InvalidArgumentError(
      absl::StrCat("missing probe handler for ", KObj(pod), ":", container.name));
  return out;
}

void ProberManager::Notify(const std::vector<std::string>& uids) {
  if (uids.empty()) return;
  std::function<void(const std::string&)> cb;
  {
    absl::MutexLock lock(&mu_);
    cb = on_change_;
  }
  if (!cb) return;
  std::set<std::string> seen;
  for (const std::string& uid : uids) {
    if (seen.insert(uid).second) cb(uid);
  }
}

std::optional<Result> ProberManager::GetResult(const std::string& id, ProbeType t) const {
  absl::MutexLock lock(&mu_);
  auto it = results_.find(id);
  if (it == results_.end()) return std::nullopt;
  switch (t) {
    case ProbeType::kLiveness:
      return it->second.liveness;
    case ProbeType::kReadiness:
      return it->second.readiness;
    case ProbeType::kStartup:
      break;
  }
  return it->second.startup;
}

bool ProberManager::LivenessFailed(const container::ContainerID& id) const {
  return GetResult(id.String(), ProbeType::kLiveness) == Result::kFailure;
}

bool ProberManager::StartupFailed(const container::ContainerID& id) const {
  return GetResult(id.String(), ProbeType::kStartup) == Result::kFailure;
}

bool ProberManager::StartupPending(const container::ContainerID& id) const {
  absl::MutexLock lock(&mu_);
  auto it = results_.find(id.String());
  if (it == results_.end()) return true;  // not probed yet
  if (!it->second.startup.has_value()) return false;
  return *it->second.startup != Result::kSuccess;
}

std::optional<bool> ProberManager::Ready(const std::string& container_id) const {
  std::optional<Result> r = GetResult(container_id, ProbeType::kReadiness);
  if (!r.has_value()) return std::nullopt;
  return *r == Result::kSuccess;
}

std::optional<bool> ProberManager::Started(const std::string& container_id) const {
  std::optional<Result> r = GetResult(container_id, ProbeType::kStartup);
  if (!r.has_value()) return std::nullopt;
  return *r == Result::kSuccess;
}

}  // namespace kubelet::prober
