#include "kubelet/kuberuntime/pod_actions.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "kubelet/kuberuntime/helpers.h"

namespace kubelet::kuberuntime {
namespace {

using container::ContainerStatus;
using container::State;

bool ShouldRestartOnFailure(const api::Pod& pod) {
  return pod.spec.restart_policy != api::kRestartPolicyNever;
}

bool ContainerSucceeded(const api::Container& c, const container::PodStatus& status) {
  const ContainerStatus* s = status.FindContainerStatusByName(c.name);
  return s != nullptr && s->state == State::kExited && s->exit_code == 0;
}

bool HasAnyRegularContainerCreated(const api::Pod& pod, const container::PodStatus& status) {
  for (const api::Container& c : pod.spec.containers) {
    const ContainerStatus* s = status.FindContainerStatusByName(c.name);
    if (s == nullptr) continue;
    if (s->state == State::kCreated || s->state == State::kRunning || s->state == State::kExited) {
      return true;
    }
  }
  return false;
}

bool Call(const std::function<bool(const container::ContainerID&)>& fn,
          const container::ContainerID& id) {
  return fn ? fn(id) : false;
}

std::string Quoted(State s) { return absl::StrCat("\"", container::StateName(s), "\""); }

// computeInitContainerActions. Returns true when the pod has been initialized.
bool ComputeInitContainerActions(const api::Pod& pod, const container::PodStatus& status,
                                 const ProbeView& probes, PodActions* changes) {
  const std::vector<api::Container>& inits = pod.spec.init_containers;
  if (inits.empty()) return true;

  // A regular container that was created or is running means initialization completed at some
  // point, even if the init containers were removed since. Exited ones do not count: after a node
  // reboot every container is exited and the new sandbox is not initialized.
  bool pod_has_initialized = false;
  for (const api::Container& c : pod.spec.containers) {
    const ContainerStatus* s = status.FindContainerStatusByName(c.name);
    if (s != nullptr && (s->state == State::kCreated || s->state == State::kRunning)) {
      pod_has_initialized = true;
      break;
    }
  }

  bool previously_initialized = pod_has_initialized;
  const bool restart_on_failure = ShouldRestartOnFailure(pod);
  auto kill = [&](const ContainerStatus& s, const api::Container& c, std::string message,
                  const char* reason) {
    changes->containers_to_kill[s.id.id] =
        ContainerToKill{s.id, c.name, std::move(message), reason};
  };

  // Walk backwards: completed init containers may have been removed, so the last one with a
  // status tells how far initialization got.
  for (int i = static_cast<int>(inits.size()) - 1; i >= 0; --i) {
    const api::Container& c = inits[i];
    const bool restartable = api::IsRestartableInitContainer(c);
    const ContainerStatus* s = status.FindContainerStatusByName(c.name);
    if (s == nullptr) {
      if (previously_initialized && restartable) changes->init_containers_to_start.push_back(i);
      continue;
    }
    if (previously_initialized && !restartable) continue;

    switch (s->state) {
      case State::kCreated:
        // Created and started in one step normally: stuck in created means start failed.
        changes->init_containers_to_start.push_back(i);
        break;

      case State::kRunning: {
        if (!restartable) break;  // a regular init container: wait for it to finish
        if (c.startup_probe.has_value()) {
          if (Call(probes.startup_failed, s->id)) {
            kill(*s, c, absl::StrCat("Init container ", c.name, " failed startup probe"),
                 kReasonStartupProbe);
            changes->init_containers_to_start.push_back(i);
            break;
          }
          if (Call(probes.startup_pending, s->id)) break;
        }
        if (i == static_cast<int>(inits.size()) - 1) {
          pod_has_initialized = true;
        } else if (!previously_initialized) {
          changes->init_containers_to_start.push_back(i + 1);
        }
        if (ContainerChanged(c, *s)) {
          kill(*s, c, absl::StrCat("Init container ", c.name, " definition changed"), "");
          changes->init_containers_to_start.push_back(i);
          break;
        }
        if (c.liveness_probe.has_value() && Call(probes.liveness_failed, s->id)) {
          kill(*s, c, absl::StrCat("Init container ", c.name, " failed liveness probe"),
               kReasonLivenessProbe);
          changes->init_containers_to_start.push_back(i);
        }
        break;
      }

      case State::kExited:
        if (restartable) {
          changes->init_containers_to_start.push_back(i);
        } else if (IsInitContainerFailed(*s)) {
          if (!restart_on_failure) {
            changes->kill_pod = true;
            changes->init_containers_to_start.clear();
            return false;
          }
          changes->init_containers_to_start.push_back(i);
        } else if (i == static_cast<int>(inits.size()) - 1) {
          pod_has_initialized = true;
        } else {
          changes->init_containers_to_start.push_back(i + 1);
        }
        break;

      default:  // unknown
        if (restartable) {
          kill(*s, c,
               absl::StrCat("Init container is in ", Quoted(s->state),
                            " state, try killing it before restart"),
               kReasonUnknown);
          changes->init_containers_to_start.push_back(i);
        } else {
          if (!restart_on_failure) {
            changes->kill_pod = true;
            changes->init_containers_to_start.clear();
            return false;
          }
          kill(*s, c,
               absl::StrCat("Init container is in ", Quoted(s->state),
                            " state, try killing it before restart"),
               kReasonUnknown);
          changes->init_containers_to_start.push_back(i);
        }
        break;
    }
    previously_initialized = true;
  }

  if (!previously_initialized) changes->init_containers_to_start.push_back(0);
  std::reverse(changes->init_containers_to_start.begin(), changes->init_containers_to_start.end());
  return pod_has_initialized;
}

std::string UpdatesString(const std::map<std::string, std::vector<ContainerToUpdate>>& updates) {
  std::vector<std::string> parts;
  for (const auto& [resource, list] : updates) {
    std::vector<std::string> ids;
    for (const ContainerToUpdate& u : list) ids.push_back(u.id.String());
    parts.push_back(absl::StrCat(resource, ":[", absl::StrJoin(ids, " "), "]"));
  }
  return absl::StrCat(", ContainersToUpdate: map[", absl::StrJoin(parts, " "), "]");
}

int64_t MilliOf(const api::ResourceList& list, const char* name) {
  auto it = list.find(name);
  return it == list.end() ? 0 : it->second.MilliValue();
}

int64_t ValueOf(const api::ResourceList& list, const char* name) {
  auto it = list.find(name);
  return it == list.end() ? 0 : it->second.Value();
}

}  // namespace

bool ComputePodResizeAction(const api::Pod& pod, int idx, const ContainerStatus& kube_status,
                            PodActions* changes) {
  const api::Container& c = pod.spec.containers[idx];
  if (c.resources.limits.empty() || pod.status.container_statuses.empty()) return true;
  // Only a running container whose resize the kubelet accepted (requests == allocatedResources)
  // and that is the one the API status describes (not one being restarted).
  const api::ContainerStatus* api_status = nullptr;
  for (const api::ContainerStatus& cs : pod.status.container_statuses) {
    if (cs.name == c.name) api_status = &cs;
  }
  if (api_status == nullptr || !api_status->state.running.has_value() ||
      !api_status->resources.has_value() || kube_status.state != State::kRunning ||
      kube_status.id.String() != api_status->container_id ||
      c.resources.requests != api_status->allocated_resources) {
    return true;
  }
  const api::ResourceRequirements& actual = *api_status->resources;
  const int64_t desired_memory_limit = ValueOf(c.resources.limits, api::kResourceMemory);
  const int64_t desired_cpu_limit = MilliOf(c.resources.limits, api::kResourceCPU);
  const int64_t desired_cpu_request = MilliOf(c.resources.requests, api::kResourceCPU);
  int64_t current_memory_limit = ValueOf(actual.limits, api::kResourceMemory);
  int64_t current_cpu_limit = MilliOf(actual.limits, api::kResourceCPU);
  int64_t current_cpu_request = MilliOf(actual.requests, api::kResourceCPU);
  // What the runtime reports wins over the API status.
  if (kube_status.resources.has_value()) {
    const container::ContainerResources& r = *kube_status.resources;
    if (r.memory_limit) current_memory_limit = r.memory_limit->Value();
    if (r.cpu_limit) current_cpu_limit = r.cpu_limit->MilliValue();
    if (r.cpu_request) current_cpu_request = r.cpu_request->MilliValue();
  }
  // cgroups have no memory request: it is not compared.
  if (desired_memory_limit == current_memory_limit && desired_cpu_limit == current_cpu_limit &&
      desired_cpu_request == current_cpu_request) {
    return true;
  }
  const ContainerResourceValues desired{
      desired_memory_limit, ValueOf(api_status->allocated_resources, api::kResourceMemory),
      desired_cpu_limit, desired_cpu_request};
  auto current = std::make_shared<ContainerResourceValues>(
      ContainerResourceValues{current_memory_limit, ValueOf(actual.requests, api::kResourceMemory),
                              current_cpu_limit, current_cpu_request});
  std::map<std::string, std::string> policy;
  for (const api::ContainerResizePolicy& p : c.resize_policy) {
    policy[p.resource_name] = p.restart_policy;
  }
  struct Decision {
    bool resize = false;
    bool restart = false;
  };
  auto determine = [&](const char* resource, int64_t spec, int64_t status) {
    if (spec == status) return Decision{};
    return Decision{true, policy[resource] == "RestartContainer"};
  };
  auto mark = [&](const char* resource, int64_t spec, int64_t status) {
    ContainerToUpdate u{idx, kube_status.id, desired, current};
    std::vector<ContainerToUpdate>& list = changes->containers_to_update[resource];
    if (spec > status) {
      list.push_back(std::move(u));
    } else if (spec < status) {
      list.insert(list.begin(), std::move(u));
    }
  };
  const Decision memory_limit =
      determine(api::kResourceMemory, desired_memory_limit, current_memory_limit);
  const Decision cpu_limit = determine(api::kResourceCPU, desired_cpu_limit, current_cpu_limit);
  const Decision cpu_request =
      determine(api::kResourceCPU, desired_cpu_request, current_cpu_request);
  if (cpu_limit.restart || cpu_request.restart || memory_limit.restart) {
    changes->containers_to_kill[kube_status.id.id] =
        ContainerToKill{kube_status.id, kube_status.name,
                        absl::StrCat("Container ", c.name, " resize requires restart"), ""};
    changes->containers_to_start.push_back(idx);
    changes->update_pod_resources = true;
    return false;
  }
  if (memory_limit.resize) {
    mark(api::kResourceMemory, desired_memory_limit, current_memory_limit);
  }
  if (cpu_limit.resize) {
    mark(api::kResourceCPU, desired_cpu_limit, current_cpu_limit);
  } else if (cpu_request.resize) {
    mark(api::kResourceCPU, desired_cpu_request, current_cpu_request);
  }
  return true;
}

std::string PodActions::String() const {
  std::vector<std::string> kills;
  for (const auto& [id, k] : containers_to_kill) {
    kills.push_back(absl::StrCat(k.name, "(", id, "): ", k.message));
  }
  return absl::StrCat(
      "KillPod: ", kill_pod ? "true" : "false",
      ", CreateSandbox: ", create_sandbox ? "true" : "false", ", SandboxID: ", sandbox_id,
      ", Attempt: ", attempt, ", InitContainersToStart: [",
      absl::StrJoin(init_containers_to_start, " "), "], ContainersToStart: [",
      absl::StrJoin(containers_to_start, " "), "], EphemeralContainersToStart: [",
      absl::StrJoin(ephemeral_containers_to_start, " "), "], ContainersToKill: [",
      absl::StrJoin(kills, ", "), "]", update_pod_resources ? ", UpdatePodResources: true" : "",
      containers_to_update.empty() ? "" : UpdatesString(containers_to_update));
}

bool IsInitContainerFailed(const ContainerStatus& status) {
  if (status.reason == "OOMKilled") return true;
  if (status.state == State::kExited && status.exit_code != 0) return true;
  return status.state == State::kUnknown;
}

bool ContainerChanged(const api::Container& container, const ContainerStatus& status) {
  return HashContainerSpec(container) != status.hash;
}

bool ShouldContainerBeRestarted(const api::Container& container, const api::Pod& pod,
                                const container::PodStatus& status) {
  if (pod.metadata.deletion_timestamp.has_value()) return false;
  const ContainerStatus* s = status.FindContainerStatusByName(container.name);
  if (s == nullptr) return true;
  if (s->state == State::kRunning) return false;
  if (s->state == State::kUnknown || s->state == State::kCreated) return true;
  if (pod.spec.restart_policy == api::kRestartPolicyNever) {
    KLOG_V(4, "Already ran container, do nothing", "pod", FormatPod(pod), "containerName",
           container.name);
    return false;
  }
  if (pod.spec.restart_policy == api::kRestartPolicyOnFailure && s->exit_code == 0) {
    KLOG_V(4, "Already successfully ran container, do nothing", "pod", FormatPod(pod),
           "containerName", container.name);
    return false;
  }
  return true;
}

SandboxChange PodSandboxChanged(const api::Pod& pod, const container::PodStatus& status) {
  if (status.sandbox_statuses.empty()) {
    KLOG_V(2, "No sandbox for pod can be found. Need to start a new one", "pod", FormatPod(pod));
    return SandboxChange{true, 0, ""};
  }
  int ready = 0;
  uint32_t max_attempt = 0;
  for (const container::SandboxStatus& s : status.sandbox_statuses) {
    if (s.ready) ++ready;
    max_attempt = std::max(max_attempt, s.attempt);
  }
  const container::SandboxStatus& newest = status.sandbox_statuses[0];
  if (ready > 1) {
    KLOG_V(2, "Multiple sandboxes are ready for Pod. Need to reconcile them", "pod",
           FormatPod(pod));
    return SandboxChange{true, max_attempt + 1, newest.id};
  }
  if (!newest.ready) {
    KLOG_V(2, "No ready sandbox for pod can be found. Need to start a new one", "pod",
           FormatPod(pod));
    return SandboxChange{true, max_attempt + 1, newest.id};
  }
  if (newest.host_network != pod.spec.host_network) {
    KLOG_V(2, "Sandbox for pod has changed. Need to start a new one", "pod", FormatPod(pod));
    return SandboxChange{true, max_attempt + 1, ""};
  }
  if (!pod.spec.host_network && newest.ips.empty()) {
    KLOG_V(2, "Sandbox for pod has no IP address. Need to start a new one", "pod", FormatPod(pod));
    return SandboxChange{true, max_attempt + 1, newest.id};
  }
  return SandboxChange{false, max_attempt, newest.id};
}

PodActions ComputePodActions(const api::Pod& pod, const container::PodStatus& pod_status,
                             const ProbeView& probes, const ResizeView& resize) {
  const container::PodStatus& status = pod_status;
  const SandboxChange sandbox = PodSandboxChanged(pod, status);
  PodActions changes;
  changes.kill_pod = sandbox.changed;
  changes.create_sandbox = sandbox.changed;
  changes.sandbox_id = sandbox.sandbox_id;
  changes.attempt = sandbox.attempt;

  if (sandbox.changed) {
    if (!ShouldRestartOnFailure(pod) && sandbox.attempt != 0 &&
        !status.container_statuses.empty()) {
      // A Never pod whose containers already ran: no new sandbox, just make sure it is dead.
      changes.create_sandbox = false;
      return changes;
    }
    std::vector<int> to_start;
    for (int i = 0; i < static_cast<int>(pod.spec.containers.size()); ++i) {
      const api::Container& c = pod.spec.containers[i];
      if (pod.spec.restart_policy == api::kRestartPolicyOnFailure &&
          ContainerSucceeded(c, status)) {
        continue;
      }
      to_start.push_back(i);
    }
    if (to_start.empty() && HasAnyRegularContainerCreated(pod, status)) {
      changes.create_sandbox = false;
      return changes;
    }
    if (!pod.spec.init_containers.empty()) {
      changes.init_containers_to_start = {0};
      return changes;
    }
    changes.containers_to_start = std::move(to_start);
    return changes;
  }

  for (int i = 0; i < static_cast<int>(pod.spec.ephemeral_containers.size()); ++i) {
    if (status.FindContainerStatusByName(pod.spec.ephemeral_containers[i].common.name) == nullptr) {
      changes.ephemeral_containers_to_start.push_back(i);
    }
  }

  const bool initialized = ComputeInitContainerActions(pod, status, probes, &changes);
  if (changes.kill_pod || !initialized) return changes;

  // With in-place resize the regular containers are looked at in the freshest status.
  const container::PodStatus& current =
      resize.allowed && resize.latest != nullptr ? *resize.latest : pod_status;
  int keep_count = 0;
  for (int i = 0; i < static_cast<int>(pod.spec.containers.size()); ++i) {
    const api::Container& c = pod.spec.containers[i];
    const ContainerStatus* s = current.FindContainerStatusByName(c.name);
    if (s == nullptr || s->state != State::kRunning) {
      if (ShouldContainerBeRestarted(c, pod, current)) {
        KLOG_V(3, "Container of pod is not in the desired state and shall be started",
               "containerName", c.name, "pod", FormatPod(pod));
        changes.containers_to_start.push_back(i);
        if (s != nullptr && s->state == State::kUnknown) {
          changes.containers_to_kill[s->id.id] =
              ContainerToKill{s->id, s->name,
                              absl::StrCat("Container is in ", Quoted(s->state),
                                           " state, try killing it before restart"),
                              kReasonUnknown};
        }
      }
      continue;
    }
    std::string message;
    std::string reason;
    bool restart = ShouldRestartOnFailure(pod);
    // With in-place resize a change of resources alone is not a new definition.
    if (ContainerChanged(c, *s) &&
        (!resize.allowed || HashContainerSpecWithoutResources(c) != s->hash_without_resources)) {
      message = absl::StrCat("Container ", c.name, " definition changed");
      restart = true;  // regardless of the restart policy
    } else if (Call(probes.liveness_failed, s->id)) {
      message = absl::StrCat("Container ", c.name, " failed liveness probe");
      reason = kReasonLivenessProbe;
    } else if (Call(probes.startup_failed, s->id)) {
      message = absl::StrCat("Container ", c.name, " failed startup probe");
      reason = kReasonStartupProbe;
    } else if (resize.allowed && !ComputePodResizeAction(pod, i, *s, &changes)) {
      continue;  // restarted for its resize
    } else {
      ++keep_count;
      continue;
    }
    if (restart) {
      absl::StrAppend(&message, ", will be restarted");
      changes.containers_to_start.push_back(i);
    }
    KLOG_V(2, "Message for Container of pod", "containerName", c.name, "containerStatusID",
           s->id.String(), "pod", FormatPod(pod), "containerMessage", message);
    changes.containers_to_kill[s->id.id] = ContainerToKill{s->id, s->name, message, reason};
  }

  if (keep_count == 0 && changes.containers_to_start.empty()) {
    changes.kill_pod = true;
    // Sidecars alone must not keep the pod alive.
    changes.init_containers_to_start.clear();
  }
  return changes;
}

}  // namespace kubelet::kuberuntime
