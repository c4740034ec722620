// The CPU manager's in-memory state (upstream pkg/kubelet/cm/cpumanager/state): the default
// (shared) CPU set and the exclusive CPU sets assigned to containers, by pod UID and container
// name; and its conversion to and from the cpu_manager_state file (state_checkpoint.h) with
// upstream's restore checks and messages:
//   configured policy "static" differs from state checkpoint policy "none"
//   could not parse default cpu set "x": <error>
//   could not parse cpuset "x" for container "c" in pod "p": <error>
// Value type; thread-compatible.
#ifndef KUBELET_KUBELET_CPUMANAGER_STATE_H_
#define KUBELET_KUBELET_CPUMANAGER_STATE_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "config/cpuset.h"
#include "kubelet/cpumanager/state_checkpoint.h"

namespace kubelet::cpumanager {

// pod UID -> container name -> exclusive CPUs.
using ContainerCPUAssignments = std::map<std::string, std::map<std::string, config::CPUSet>>;

struct CPUState {
  config::CPUSet default_cpu_set;
  ContainerCPUAssignments assignments;

  std::optional<config::CPUSet> Get(const std::string& pod_uid,
                                    const std::string& container_name) const;
  // The container's exclusive set, else the default set.
  config::CPUSet GetOrDefault(const std::string& pod_uid, const std::string& container_name) const;
  void Set(const std::string& pod_uid, const std::string& container_name, config::CPUSet cpus);
  void Delete(const std::string& pod_uid, const std::string& container_name);

  bool operator==(const CPUState&) const = default;
};

CPUManagerCheckpoint ToCheckpoint(const CPUState& state, std::string_view policy_name);

// The state a file holds, when it was written by `policy_name`.
absl::StatusOr<CPUState> FromCheckpoint(const CPUManagerCheckpoint& cp,
                                        std::string_view policy_name);

}  // namespace kubelet::cpumanager

#endif  // KUBELET_KUBELET_CPUMANAGER_STATE_H_
