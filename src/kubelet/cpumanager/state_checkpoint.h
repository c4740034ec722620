// The CPU manager's state file, <root-dir>/cpu_manager_state (upstream
// pkg/kubelet/cm/cpumanager/state, checkpoint format V2), read and written byte-compatibly so a
// node can switch between this kubelet and upstream's:
//
//   {"policyName":"static","defaultCpuSet":"0-1,6-13","entries":{"<pod UID>":{"<container>":
//    "2-3"}},"checksum":1684933537}
//
// `entries` is left out when empty. The checksum is upstream's checkpointmanager checksum: the
// FNV-1a 32-bit hash of the go-spew "%#v" text of the *CPUManagerCheckpoint with the checksum
// field zeroed (SpewChecksumText gives that text). A file whose checksum does not match is
// "checkpoint is corrupted"; a zero checksum (files of old kubelets) is accepted.
// Pure functions; thread-safe.
#ifndef KUBELET_KUBELET_CPUMANAGER_STATE_CHECKPOINT_H_
#define KUBELET_KUBELET_CPUMANAGER_STATE_CHECKPOINT_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace kubelet::cpumanager {

inline constexpr char kStateFileName[] = "cpu_manager_state";

struct CPUManagerCheckpoint {
  std::string policy_name;      // "none", "static"
  std::string default_cpu_set;  // Linux list format
  // pod UID -> container name -> CPU set (Linux list format).
  std::map<std::string, std::map<std::string, std::string>> entries;
  uint64_t checksum = 0;
  bool operator==(const CPUManagerCheckpoint&) const = default;
};

// The text upstream hashes: (*state.CPUManagerCheckpoint){PolicyName:(string)static
// DefaultCPUSet:(string)0-23 Entries:(map[string]map[string]string)map[] Checksum:
// (checksum.Checksum)0} (keys sorted, entries as map[pod:map[container:set ...] ...]).
std::string SpewChecksumText(const CPUManagerCheckpoint& cp);

// The checksum of `cp` (its own checksum field ignored).
uint64_t Checksum(const CPUManagerCheckpoint& cp);

// The file's text, with the checksum computed.
std::string MarshalCheckpoint(CPUManagerCheckpoint cp);

// Parses and verifies a file's text. Errors: not JSON / wrong member types (naming the member),
// "checkpoint is corrupted" when the checksum does not match.
absl::StatusOr<CPUManagerCheckpoint> UnmarshalCheckpoint(std::string_view text);

}  // namespace kubelet::cpumanager

#endif  // KUBELET_KUBELET_CPUMANAGER_STATE_CHECKPOINT_H_
