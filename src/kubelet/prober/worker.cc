#include "kubelet/prober/worker.h"

#include <utility>

namespace kubelet::prober {

const char* ProbeTypeName(ProbeType t) {
  switch (t) {
    case ProbeType::kLiveness:
      return "Liveness";
    case ProbeType::kReadiness:
      return "Readiness";
    case ProbeType::kStartup:
      return "Startup";
  }
  return "Unknown";
}

ProbeSpec NormalizeProbe(const api::Probe& probe) {
  ProbeSpec s;
  if (probe.initial_delay_seconds > 0) s.initial_delay = absl::Seconds(probe.initial_delay_seconds);
  if (probe.period_seconds > 0) s.period = absl::Seconds(probe.period_seconds);
  if (probe.timeout_seconds > 0) s.timeout = absl::Seconds(probe.timeout_seconds);
  if (probe.success_threshold > 0) s.success_threshold = probe.success_threshold;
  if (probe.failure_threshold > 0) s.failure_threshold = probe.failure_threshold;
  return s;
}

WorkerLogic::WorkerLogic(ProbeType type, const api::Probe& probe, std::string restart_policy)
    : type_(type), spec_(NormalizeProbe(probe)), restart_policy_(std::move(restart_policy)) {}

Result WorkerLogic::InitialValue() const {
  switch (type_) {
    case ProbeType::kLiveness:
      return Result::kSuccess;
    case ProbeType::kReadiness:
      return Result::kFailure;
    case ProbeType::kStartup:
      break;
  }
  return Result::kUnknown;
}

bool WorkerLogic::Observe(const ContainerObservation& obs, ResultsSink& sink) {
  const std::string id = obs.id.String();
  if (id.empty() || id == container_id_) return false;
  if (!container_id_.empty()) sink.Remove(container_id_, type_);
  container_id_ = id;
  sink.Set(container_id_, type_, InitialValue());
  on_hold_ = false;
  last_result_ = Result::kUnknown;
  result_run_ = 0;
  return true;
}

WorkerLogic::Action WorkerLogic::Prepare(const ContainerObservation& obs, absl::Time now,
                                         bool started, ResultsSink& sink) {
  if (obs.id.empty()) return Action::kWait;  // not created yet
  Observe(obs, sink);
  if (on_hold_) return Action::kWait;
  if (obs.state != container::State::kRunning) {
    // Not running (created, or exited): a failure for this container; stop for good when it
    // will not be restarted.
    sink.Set(container_id_, type_, Result::kFailure);
    if (obs.state == container::State::kExited) {
      if (restart_policy_ == "Never") return Action::kStop;
      if (restart_policy_ == "OnFailure" && obs.exit_code == 0) return Action::kStop;
    }
    return Action::kWait;
  }
  if (now - obs.started_at < spec_.initial_delay) return Action::kWait;
  if (started) {
    if (type_ == ProbeType::kStartup) return Action::kWait;  // done once started
  } else if (type_ != ProbeType::kStartup) {
    return Action::kWait;  // gated by the startup probe
  }
  return Action::kProbe;
}

void WorkerLogic::Apply(const std::string& container_id, Result result, ResultsSink& sink) {
  if (container_id != container_id_ || on_hold_ || result == Result::kUnknown) return;
  if (last_result_ == result) {
    ++result_run_;
  } else {
    last_result_ = result;
    result_run_ = 1;
  }
  if ((result == Result::kFailure && result_run_ < spec_.failure_threshold) ||
      (result == Result::kSuccess && result_run_ < spec_.success_threshold)) {
    return;  // below threshold: keep the recorded state
  }
  sink.Set(container_id_, type_, result);
  if (result == Result::kFailure &&
      (type_ == ProbeType::kLiveness || type_ == ProbeType::kStartup)) {
    // The container will be restarted; stop probing it until a new one shows up.
    on_hold_ = true;
    result_run_ = 0;
  }
}

}  // namespace kubelet::prober
