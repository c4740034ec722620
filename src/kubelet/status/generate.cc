#include "kubelet/status/generate.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/static_pod.h"
#include "common/log.h"

namespace kubelet::status {
namespace {

api::Time ToApiTime(absl::Time t) {
  if (t == absl::InfinitePast() || t == absl::UnixEpoch()) return api::Time();
  absl::Duration since = t - absl::UnixEpoch();
  int64_t secs = absl::ToInt64Seconds(since);
  int32_t nanos = static_cast<int32_t>(absl::ToInt64Nanoseconds(since - absl::Seconds(secs)));
  return api::Time::FromUnix(secs, nanos);
}

const api::ContainerStatus* Find(const std::vector<api::ContainerStatus>& v,
                                 const std::string& name) {
  for (const auto& s : v) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool IsRestartableInit(const api::Container& c) {
  return c.restart_policy && *c.restart_policy == "Always";
}

api::ContainerState Terminated(const container::ContainerStatus& cs) {
  api::ContainerState st;
  api::ContainerStateTerminated t;
  t.exit_code = cs.exit_code;
  t.reason = cs.reason.empty() ? (cs.exit_code == 0 ? "Completed" : "Error") : cs.reason;
  t.message = cs.message;
  t.started_at = ToApiTime(cs.started_at);
  t.finished_at = ToApiTime(cs.finished_at);
  t.container_id = cs.id.String();
  st.terminated = t;
  return st;
}

// Upstream's ShouldContainerBeRestarted, plus its special case for init containers that
// completed: whether the next sync starts `c` (given its newest runtime status, if any).
bool ShouldBeRestarted(const api::Container& c, const api::Pod& pod,
                       const container::ContainerStatus* newest, bool is_init) {
  if (pod.metadata.deletion_timestamp.has_value()) return false;
  if (newest == nullptr) return true;
  if (newest->state == container::State::kRunning) return false;
  if (newest->state != container::State::kExited) return true;  // created or unknown
  if (is_init && newest->exit_code == 0) return false;
  if (is_init && IsRestartableInit(c)) return true;
  if (pod.spec.restart_policy == "Never") return false;
  if (pod.spec.restart_policy == "OnFailure" && newest->exit_code == 0) return false;
  return true;
}

enum class Kind { kApp, kInit, kEphemeral };

bool HasResource(const api::ResourceList& list, const char* name) {
  return list.find(name) != list.end();
}

// upstream convertContainerStatusResources: the allocatedResources and resources of the status
// `s` of a running container built from the runtime's `cs`.
void ConvertContainerStatusResources(const api::Container& c, const container::ContainerStatus& cs,
                                     const api::ContainerStatus* old, const GenerateInput& in,
                                     api::ContainerStatus* s) {
  // Where neither the runtime nor the spec says: a container that just started (or was
  // replaced) takes the spec's / allocation's value, a running one keeps its last status value.
  auto determine = [&](const char* name, const api::ResourceList& desired,
                       const api::ResourceList* old_list, api::ResourceList* out) {
    if (old == nullptr) return;
    if (!old->state.running.has_value() || s->container_id != old->container_id) {
      if (auto it = desired.find(name); it != desired.end()) (*out)[name] = it->second;
    } else if (old_list != nullptr) {
      if (auto it = old_list->find(name); it != old_list->end()) (*out)[name] = it->second;
    }
  };
  std::optional<api::ResourceList> allocated;
  if (in.allocation) allocated = in.allocation(c.name);
  if (allocated.has_value()) {
    s->allocated_resources = *allocated;
  } else if (!(c.resources.requests.empty() && c.resources.limits.empty())) {
    KLOG_ERROR(absl::OkStatus(), "resource allocation not found in checkpoint store", "pod",
               in.pod->metadata.name, "container", c.name);
    if (old != nullptr) s->allocated_resources = old->allocated_resources;
  }
  const api::ResourceRequirements* old_res =
      old != nullptr && old->resources.has_value() ? &*old->resources : nullptr;
  const container::ContainerResources* rt = cs.resources ? &*cs.resources : nullptr;
  api::ResourceRequirements res;
  if (!c.resources.limits.empty()) {
    if (rt != nullptr && rt->cpu_limit) {
      res.limits[api::kResourceCPU] = *rt->cpu_limit;
    } else {
      determine(api::kResourceCPU, c.resources.limits, old_res ? &old_res->limits : nullptr,
                &res.limits);
    }
    if (rt != nullptr && rt->memory_limit) {
      res.limits[api::kResourceMemory] = *rt->memory_limit;
    } else {
      determine(api::kResourceMemory, c.resources.limits, old_res ? &old_res->limits : nullptr,
                &res.limits);
    }
    if (auto it = c.resources.limits.find(api::kResourceEphemeralStorage);
        it != c.resources.limits.end()) {
      res.limits[api::kResourceEphemeralStorage] = it->second;
    }
  }
  const api::ResourceList& alloc = s->allocated_resources;
  if (!alloc.empty()) {
    if (rt != nullptr && rt->cpu_request) {
      res.requests[api::kResourceCPU] = *rt->cpu_request;
    } else {
      determine(api::kResourceCPU, alloc, old_res ? &old_res->requests : nullptr, &res.requests);
    }
    if (HasResource(alloc, api::kResourceMemory)) {
      res.requests[api::kResourceMemory] = alloc.at(api::kResourceMemory);
    }
    if (HasResource(alloc, api::kResourceEphemeralStorage)) {
      res.requests[api::kResourceEphemeralStorage] = alloc.at(api::kResourceEphemeralStorage);
    }
  }
  s->resources = std::move(res);
}

// One list (init, app or ephemeral containers) of API statuses. As upstream's prober
// UpdatePodStatus: every app and init container status has `started` (false unless running);
// a regular init container that exited 0 is ready; ephemeral containers are never probed (no
// `started`, never ready).
std::vector<api::ContainerStatus> Convert(const std::vector<const api::Container*>& containers,
                                          const container::PodStatus& rs,
                                          const ReasonCache* reasons, const ProbeState* probes,
                                          bool has_init, Kind kind, const api::Pod& pod,
                                          const GenerateInput& in,
                                          const std::vector<api::ContainerStatus>* old_statuses) {
  const bool is_init = kind == Kind::kInit;
  const bool probed = kind != Kind::kEphemeral;
  std::vector<api::ContainerStatus> out;
  for (const api::Container* cp : containers) {
    const api::Container& c = *cp;
    api::ContainerStatus s;
    s.name = c.name;
    s.image = c.image;
    s.state.waiting =
        api::ContainerStateWaiting{has_init ? "PodInitializing" : "ContainerCreating", ""};
    if (probed) s.started = false;
    // Runtime statuses of this container, newest first.
    std::vector<const container::ContainerStatus*> mine;
    for (const auto& cs : rs.container_statuses) {
      if (cs.name == c.name) mine.push_back(&cs);
    }
    if (!mine.empty()) {
      const container::ContainerStatus& newest = *mine[0];
      s.container_id = newest.id.String();
      s.image_id = newest.image_ref.empty() ? newest.image_id : newest.image_ref;
      if (!newest.image.empty()) s.image = newest.image;
      s.restart_count = newest.restart_count;
      switch (newest.state) {
        case container::State::kRunning: {
          s.state = api::ContainerState();
          s.state.running = api::ContainerStateRunning{ToApiTime(newest.started_at)};
          // Without a probe result: started unless there is a startup probe, ready unless
          // there is a readiness probe (upstream prober manager UpdatePodStatus). A container
          // that has not started is never ready.
          const std::string id = newest.id.String();
          std::optional<bool> started, ready;
          if (probes && probes->started) started = probes->started(id);
          if (probes && probes->ready) ready = probes->ready(id);
          if (!probed) break;
          s.started = started.value_or(!c.startup_probe.has_value());
          bool is_ready = ready.value_or(!c.readiness_probe.has_value());
          s.ready = *s.started && is_ready && (!is_init || IsRestartableInit(c));
          break;
        }
        case container::State::kExited:
          s.state = Terminated(newest);
          s.ready = is_init && !IsRestartableInit(c) && newest.exit_code == 0;
          break;
        default:
          // Created but not started (or unknown): waiting, with no reason (upstream).
          s.state = api::ContainerState();
          s.state.waiting = api::ContainerStateWaiting{};
          break;
      }
      if (in.in_place_vertical_scaling && newest.state == container::State::kRunning) {
        ConvertContainerStatusResources(
            c, newest, old_statuses != nullptr ? Find(*old_statuses, c.name) : nullptr, in, &s);
      }
      if (mine.size() > 1 && mine[1]->state == container::State::kExited) {
        s.last_state = Terminated(*mine[1]);
      } else if (newest.state != container::State::kExited && mine.size() > 1) {
        s.last_state = Terminated(*mine[1]);
      }
    }
    // A container the next sync will (re)start waits with the failure reason of the last sync.
    // An ephemeral container is started once, never restarted.
    const bool restarts =
        kind == Kind::kEphemeral
            ? mine.empty() && !pod.metadata.deletion_timestamp.has_value()
            : ShouldBeRestarted(c, pod, mine.empty() ? nullptr : mine[0], is_init);
    if (reasons != nullptr && restarts) {
      auto it = reasons->find(c.name);
      if (it != reasons->end()) {
        if (s.state.terminated) s.last_state = s.state;
        s.state = api::ContainerState();
        s.state.waiting = api::ContainerStateWaiting{it->second.reason, it->second.message};
        s.ready = false;
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

bool AnyRegularContainerStarted(const api::Pod& pod,
                                const std::vector<api::ContainerStatus>& statuses) {
  for (const auto& c : pod.spec.containers) {
    const api::ContainerStatus* s = Find(statuses, c.name);
    if (s && (s->state.running || s->state.terminated || s->last_state.terminated)) return true;
  }
  return false;
}

}  // namespace

bool IsTerminalPhase(const std::string& phase) { return phase == "Succeeded" || phase == "Failed"; }

std::string GetPhase(const api::Pod& pod, const std::vector<api::ContainerStatus>& init_statuses,
                     const std::vector<api::ContainerStatus>& statuses, bool pod_is_terminal) {
  int pending_init = 0, failed_init = 0;
  for (const api::Container& c : pod.spec.init_containers) {
    const api::ContainerStatus* s = Find(init_statuses, c.name);
    if (IsRestartableInit(c)) {
      if (!s) {
        ++pending_init;
      } else if (s->state.running) {
        if (!s->started.value_or(false)) ++pending_init;
      } else if (s->state.waiting && !s->last_state.terminated) {
        ++pending_init;
      }
      continue;
    }
    if (!s) {
      ++pending_init;
    } else if (s->state.running) {
      ++pending_init;
    } else if (s->state.terminated) {
      if (s->state.terminated->exit_code != 0) ++failed_init;
    } else if (s->state.waiting) {
      if (s->last_state.terminated) {
        if (s->last_state.terminated->exit_code != 0) ++failed_init;
      } else {
        ++pending_init;
      }
    } else {
      ++pending_init;
    }
  }
  int unknown = 0, running = 0, waiting = 0, stopped = 0, succeeded = 0;
  for (const api::Container& c : pod.spec.containers) {
    const api::ContainerStatus* s = Find(statuses, c.name);
    if (!s) {
      ++unknown;
    } else if (s->state.running) {
      ++running;
    } else if (s->state.terminated) {
      ++stopped;
      if (s->state.terminated->exit_code == 0) ++succeeded;
    } else if (s->state.waiting) {
      if (s->last_state.terminated) {
        ++stopped;
      } else {
        ++waiting;
      }
    } else {
      ++unknown;
    }
  }
  const std::string& policy = pod.spec.restart_policy;
  if (failed_init > 0 && policy == "Never") return "Failed";
  if ((pending_init > 0 && !AnyRegularContainerStarted(pod, statuses)) || waiting > 0) {
    return "Pending";
  }
  if (running > 0 && unknown == 0) return "Running";
  if (running == 0 && stopped > 0 && unknown == 0) {
    if (pod_is_terminal) return stopped == succeeded ? "Succeeded" : "Failed";
    if (policy == "Always") return "Running";
    if (stopped == succeeded) return "Succeeded";
    if (policy == "Never") return "Failed";
    return "Running";
  }
  return "Pending";
}

api::PodStatus GeneratePodStatus(const GenerateInput& in) {
  const api::Pod& pod = *in.pod;
  const container::PodStatus& rs = *in.runtime_status;
  api::PodStatus s;
  bool has_init = !pod.spec.init_containers.empty();
  auto list = [](const std::vector<api::Container>& v) {
    std::vector<const api::Container*> out;
    for (const api::Container& c : v) out.push_back(&c);
    return out;
  };
  const api::PodStatus* old = in.old_status;
  s.init_container_statuses =
      Convert(list(pod.spec.init_containers), rs, in.reasons, in.probes, has_init, Kind::kInit, pod,
              in, old ? &old->init_container_statuses : nullptr);
  s.container_statuses = Convert(list(pod.spec.containers), rs, in.reasons, in.probes, has_init,
                                 Kind::kApp, pod, in, old ? &old->container_statuses : nullptr);
  std::vector<const api::Container*> ephemeral;
  for (const api::EphemeralContainer& ec : pod.spec.ephemeral_containers) {
    ephemeral.push_back(&ec.common);
  }
  s.ephemeral_container_statuses =
      Convert(ephemeral, rs, in.reasons, in.probes, has_init, Kind::kEphemeral, pod, in,
              old ? &old->ephemeral_container_statuses : nullptr);
  s.phase = GetPhase(pod, s.init_container_statuses, s.container_statuses, in.pod_is_terminal);
  // A terminal phase never goes back (upstream keeps the old terminal phase); the reason and
  // message of an unchanged phase are kept.
  if (in.old_status && IsTerminalPhase(in.old_status->phase) && !IsTerminalPhase(s.phase)) {
    s.phase = in.old_status->phase;
  }
  if (in.old_status && in.old_status->phase == s.phase) {
    s.reason = in.old_status->reason;
    s.message = in.old_status->message;
  }
  if (in.terminal != nullptr) {
    s.phase = "Failed";
    s.reason = in.terminal->reason;
    s.message = in.terminal->message;
  }
  s.qos_class = std::string(api::QOSClassName(api::ComputePodQOS(pod)));
  s.host_ip = in.host_ip;
  if (in.host_ips && !in.host_ip.empty()) s.host_ips.push_back(api::HostIP{in.host_ip});
  if (pod.spec.host_network) {
    s.pod_ip = in.host_ip;
    if (!in.host_ip.empty()) s.pod_ips.push_back(api::PodIP{in.host_ip});
  } else {
    for (const std::string& ip : rs.ips) s.pod_ips.push_back(api::PodIP{ip});
    if (!rs.ips.empty()) s.pod_ip = rs.ips[0];
    // A terminal pod whose sandbox is gone keeps the IPs it had.
    if (rs.ips.empty() && in.old_status != nullptr && IsTerminalPhase(s.phase)) {
      s.pod_ip = in.old_status->pod_ip;
      s.pod_ips = in.old_status->pod_ips;
    }
  }
  if (in.old_status && in.old_status->start_time) {
    s.start_time = in.old_status->start_time;
  } else {
    s.start_time = ToApiTime(in.now);
  }
  s.conditions = GenerateConditions(pod, rs, s, in.ready_to_start_condition);
  if (in.terminal != nullptr && in.terminal->disruption_since.has_value()) {
    // Set once by the kubelet, not regenerated; upstream keeps it ahead of its own conditions.
    api::PodCondition c;
    c.type = "DisruptionTarget";
    c.status = "True";
    c.reason = "TerminationByKubelet";
    c.message = in.terminal->message;
    s.conditions.insert(s.conditions.begin(), std::move(c));
  }
  // lastTransitionTime moves only when a condition's status changes (upstream status manager).
  for (api::PodCondition& c : s.conditions) {
    c.last_transition_time = ToApiTime(in.now);
    if (c.type == "DisruptionTarget") {
      c.last_transition_time = ToApiTime(*in.terminal->disruption_since);
    }
    if (in.old_status == nullptr) continue;
    for (const api::PodCondition& o : in.old_status->conditions) {
      if (o.type == c.type && o.status == c.status) c.last_transition_time = o.last_transition_time;
    }
  }
  return s;
}

bool PodResizeSpecStatusDiffer(const api::Pod& pod, const api::PodStatus& status) {
  // Only what the status reports (upstream deleteCustomResourceFromResourceRequirements).
  auto filtered = [](api::ResourceRequirements r) {
    for (api::ResourceList* list : {&r.limits, &r.requests}) {
      std::erase_if(*list, [](const auto& e) {
        return e.first != api::kResourceCPU && e.first != api::kResourceMemory &&
               e.first != api::kResourceEphemeralStorage;
      });
    }
    return r;
  };
  for (const api::Container& c : pod.spec.containers) {
    const api::ContainerStatus* cs = Find(status.container_statuses, c.name);
    if (cs == nullptr || !cs->resources.has_value()) continue;
    if (!(filtered(c.resources) == *cs->resources)) return true;
  }
  return false;
}

bool IsPodResizeInProgress(const api::Pod& pod, const api::PodStatus& status) {
  for (const api::Container& c : pod.spec.containers) {
    const api::ContainerStatus* cs = Find(status.container_statuses, c.name);
    if (cs == nullptr || !cs->resources.has_value()) continue;
    if (c.resources.limits != cs->resources->limits ||
        cs->allocated_resources != cs->resources->requests) {
      return true;
    }
  }
  return false;
}

bool PastActiveDeadline(const api::Pod& pod, const std::optional<api::Time>& start_time,
                        absl::Time now) {
  if (!pod.spec.active_deadline_seconds.has_value()) return false;
  if (!start_time.has_value() || start_time->IsZero()) return false;
  const absl::Time started =
      absl::FromUnixSeconds(start_time->seconds) + absl::Nanoseconds(start_time->nanos);
  return now - started >= absl::Seconds(*pod.spec.active_deadline_seconds);
}

std::vector<api::PodCondition> GenerateConditions(const api::Pod& pod,
                                                  const container::PodStatus& rs,
                                                  const api::PodStatus& s,
                                                  bool ready_to_start_condition) {
  std::vector<api::PodCondition> out;
  auto condition = [](std::string type, bool ok, std::string reason, std::string message) {
    api::PodCondition c;
    c.type = std::move(type);
    c.status = ok ? "True" : "False";
    if (!ok) {
      c.reason = std::move(reason);
      c.message = std::move(message);
    }
    return c;
  };
  auto bracket = [](const std::vector<std::string>& names) {
    return absl::StrCat("[", absl::StrJoin(names, " "), "]");
  };

  // PodReadyToStartContainers: the newest sandbox is ready (with its network set up).
  bool sandbox_ready = !rs.sandbox_statuses.empty() && rs.sandbox_statuses[0].ready &&
                       (pod.spec.host_network || !rs.sandbox_statuses[0].ips.empty());
  if (ready_to_start_condition) {
    out.push_back(condition("PodReadyToStartContainers", sandbox_ready, "", ""));
  }

  // Initialized: every init container completed (restartable ones: started).
  {
    std::vector<std::string> unknown, incomplete;
    for (const api::Container& c : pod.spec.init_containers) {
      const api::ContainerStatus* st = Find(s.init_container_statuses, c.name);
      if (st == nullptr) {
        unknown.push_back(c.name);
        continue;
      }
      if (IsRestartableInit(c)) {
        if (!st->started.value_or(false)) incomplete.push_back(c.name);
        continue;
      }
      if (!st->ready) incomplete.push_back(c.name);  // ready: exited 0
    }
    std::vector<std::string> parts;
    if (!unknown.empty()) parts.push_back("containers with unknown status: " + bracket(unknown));
    if (!incomplete.empty()) {
      parts.push_back("containers with incomplete status: " + bracket(incomplete));
    }
    api::PodCondition c;
    if (s.phase == "Succeeded" && unknown.empty()) {
      c = condition("Initialized", true, "", "");
      c.reason = "PodCompleted";
    } else if (AnyRegularContainerStarted(pod, s.container_statuses)) {
      // Once an app container has started, the pod was initialized (restartable init
      // containers may be restarting).
      c = condition("Initialized", true, "", "");
    } else {
      c = condition("Initialized", parts.empty(), "ContainersNotInitialized",
                    absl::StrJoin(parts, ", "));
    }
    out.push_back(std::move(c));
  }

  // ContainersReady / Ready: every app container (and sidecar) ready.
  {
    std::vector<std::string> unknown, unready;
    auto check = [&](const api::Container& c, const std::vector<api::ContainerStatus>& list) {
      const api::ContainerStatus* st = Find(list, c.name);
      if (st == nullptr) {
        unknown.push_back(c.name);
      } else if (!st->ready) {
        unready.push_back(c.name);
      }
    };
    for (const api::Container& c : pod.spec.init_containers) {
      if (IsRestartableInit(c)) check(c, s.init_container_statuses);
    }
    for (const api::Container& c : pod.spec.containers) check(c, s.container_statuses);
    std::vector<std::string> parts;
    if (!unknown.empty()) parts.push_back("containers with unknown status: " + bracket(unknown));
    if (!unready.empty()) parts.push_back("containers with unready status: " + bracket(unready));
    api::PodCondition ready;
    if (s.phase == "Succeeded" && unknown.empty()) {
      ready = condition("ContainersReady", false, "PodCompleted", "");
    } else if (s.phase == "Failed") {
      // Explicitly not ready: the containers may still be terminating.
      ready = condition("ContainersReady", false, "PodFailed", "");
    } else {
      ready = condition("ContainersReady", parts.empty(), "ContainersNotReady",
                        absl::StrJoin(parts, ", "));
    }
    api::PodCondition pod_ready = ready;
    pod_ready.type = "Ready";
    out.push_back(pod_ready);
    out.push_back(ready);
  }
  api::PodCondition scheduled;
  scheduled.type = "PodScheduled";
  scheduled.status = "True";
  out.push_back(scheduled);
  return out;
}

}  // namespace kubelet::status
