// The decision logic of one probe worker (upstream prober/worker.go doProbe) as a pure state
// machine over (container observation, time, probe outcome): which container it follows,
// initialDelaySeconds, the startup gate, success/failure thresholds, holding a failed liveness
// or startup probe until the container is replaced. It does no I/O and keeps no timers: the
// ProberManager schedules it and runs the probe between Prepare and Apply.
//
// Thread-safety: none; the ProberManager guards every WorkerLogic with its mutex. Results are
// written through the ResultsSink the caller passes in.
#ifndef KUBELET_KUBELET_PROBER_WORKER_H_
#define KUBELET_KUBELET_PROBER_WORKER_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "api/pod.h"
#include "kubelet/container/runtime.h"

namespace kubelet::prober {

enum class ProbeType { kLiveness, kReadiness, kStartup };
// "Liveness", "Readiness", "Startup" (log lines and metric labels).
const char* ProbeTypeName(ProbeType t);

// upstream proberesults.Result.
enum class Result { kUnknown, kSuccess, kFailure };

// The probe's fields with API defaults applied (period 10 s, timeout 1 s, thresholds 1 / 3).
struct ProbeSpec {
  absl::Duration initial_delay = absl::ZeroDuration();
  absl::Duration period = absl::Seconds(10);
  absl::Duration timeout = absl::Seconds(1);
  int success_threshold = 1;
  int failure_threshold = 3;
};
ProbeSpec NormalizeProbe(const api::Probe& probe);

// What the latest runtime status says about the worker's container.
struct ContainerObservation {
  container::ContainerID id;  // empty: not created yet
  container::State state = container::State::kUnknown;
  absl::Time started_at = absl::InfinitePast();
  int32_t exit_code = 0;
};

// Where a worker's results go (the ProberManager's results table).
class ResultsSink {
 public:
  virtual ~ResultsSink() = default;
  virtual void Set(const std::string& container_id, ProbeType type, Result result) = 0;
  virtual void Remove(const std::string& container_id, ProbeType type) = 0;
};

class WorkerLogic {
 public:
  // `restart_policy`: the effective policy of the container ("Always" for sidecars).
  WorkerLogic(ProbeType type, const api::Probe& probe, std::string restart_policy);

  enum class Action { kWait, kProbe, kStop };

  // Follows a new container (id change): drops the old container's result, records the
  // initial one (liveness Success, readiness Failure, startup Unknown) and resumes probing.
  // Returns true when the container changed.
  bool Observe(const ContainerObservation& obs, ResultsSink& sink);

  // Whether to run the probe now. `started`: the container passed its startup probe (or has
  // none). kStop: the container terminated and will not be restarted.
  Action Prepare(const ContainerObservation& obs, absl::Time now, bool started, ResultsSink& sink);

  // Counts a probe result for `container_id` (ignored when the worker follows another
  // container by now) and records it once its threshold is reached. A failed liveness or
  // startup result holds the worker until a new container appears.
  void Apply(const std::string& container_id, Result result, ResultsSink& sink);

  ProbeType type() const { return type_; }
  const ProbeSpec& spec() const { return spec_; }
  const std::string& container_id() const { return container_id_; }
  bool on_hold() const { return on_hold_; }

 private:
  Result InitialValue() const;

  const ProbeType type_;
  const ProbeSpec spec_;
  const std::string restart_policy_;
  std::string container_id_;  // ContainerID::String() of the followed container
  bool on_hold_ = false;
  Result last_result_ = Result::kUnknown;
  int result_run_ = 0;
};

}  // namespace kubelet::prober

#endif  // KUBELET_KUBELET_PROBER_WORKER_H_
