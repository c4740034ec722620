#include "kubelet/cpumanager/state.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace kubelet::cpumanager {

std::optional<config::CPUSet> CPUState::Get(const std::string& pod_uid,
                                            const std::string& container_name) const {
  auto pod = assignments.find(pod_uid);
  if (pod == assignments.end()) return std::nullopt;
  auto c = pod->second.find(container_name);
  if (c == pod->second.end()) return std::nullopt;
  return c->second;
}

config::CPUSet CPUState::GetOrDefault(const std::string& pod_uid,
                                      const std::string& container_name) const {
  std::optional<config::CPUSet> cpus = Get(pod_uid, container_name);
  return cpus ? *cpus : default_cpu_set;
}

void CPUState::Set(const std::string& pod_uid, const std::string& container_name,
                   config::CPUSet cpus) {
  assignments[pod_uid][container_name] = std::move(cpus);
}

void CPUState::Delete(const std::string& pod_uid, const std::string& container_name) {
  auto pod = assignments.find(pod_uid);
  if (pod == assignments.end()) return;
  pod->second.erase(container_name);
  if (pod->second.empty()) assignments.erase(pod);
}

CPUManagerCheckpoint ToCheckpoint(const CPUState& state, std::string_view policy_name) {
  CPUManagerCheckpoint cp;
  cp.policy_name = std::string(policy_name);
  cp.default_cpu_set = state.default_cpu_set.String();
  for (const auto& [pod, containers] : state.assignments) {
    for (const auto& [name, cpus] : containers) cp.entries[pod][name] = cpus.String();
  }
  return cp;
}

absl::StatusOr<CPUState> FromCheckpoint(const CPUManagerCheckpoint& cp,
                                        std::string_view policy_name) {
  if (cp.policy_name != policy_name) {
    return absl::FailedPreconditionError(absl::StrCat("configured policy ", log::Quote(policy_name),
                                                      " differs from state checkpoint policy ",
                                                      log::Quote(cp.policy_name)));
  }
  CPUState state;
  absl::StatusOr<config::CPUSet> def = config::CPUSet::Parse(cp.default_cpu_set);
  if (!def.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("could not parse default cpu set ",
                                                   log::Quote(cp.default_cpu_set), ": ",
                                                   def.status().message()));
  }
  state.default_cpu_set = *std::move(def);
  for (const auto& [pod, containers] : cp.entries) {
    for (const auto& [name, text] : containers) {
      absl::StatusOr<config::CPUSet> cpus = config::CPUSet::Parse(text);
      if (!cpus.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "could not parse cpuset ", log::Quote(text), " for container ", log::Quote(name),
            " in pod ", log::Quote(pod), ": ", cpus.status().message()));
      }
      state.assignments[pod][name] = *std::move(cpus);
    }
  }
  return state;
}

}  // namespace kubelet::cpumanager
