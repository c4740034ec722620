// The memory manager's state and its file, <root-dir>/memory_manager_state (upstream
// pkg/kubelet/cm/memorymanager/state), read and written byte-compatibly with the v1.28 kubelet so
// a node can switch between this kubelet and upstream's:
//
//   {"policyName":"Static","machineState":{"0":{"numberOfAssignments":1,"memoryMap":{"memory":
//    {"total":2048,"systemReserved":512,"allocatable":1536,"reserved":512,"free":1024}},
//    "cells":[0]}},"entries":{"<pod UID>":{"<container>":[{"numaAffinity":[0],"type":"memory",
//    "size":512}]}},"checksum":4215593881}
//
// Objects are written with Go's encoding/json key order (machineState's NUMA ids sorted as
// strings: "10" before "2"); `entries` is left out when empty. The checksum is upstream's
// checkpointmanager checksum: FNV-1a 32 over the go-spew "%#v" text of the
// *MemoryManagerCheckpoint with its checksum zeroed (SpewChecksumText). A file whose checksum does
// not match, a zero checksum included (v1.28 accepts none), is "checkpoint is corrupted".
// Value types and pure functions; thread-safe.
#ifndef KUBELET_KUBELET_MEMORYMANAGER_STATE_H_
#define KUBELET_KUBELET_MEMORYMANAGER_STATE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace kubelet::memorymanager {

inline constexpr char kStateFileName[] = "memory_manager_state";

// One memory type (memory, hugepages-<size>) of one NUMA node, in bytes.
struct MemoryTable {
  uint64_t total = 0;  // "total" (TotalMemSize)
  uint64_t system_reserved = 0;
  uint64_t allocatable = 0;  // total - systemReserved (- hugepages, for memory)
  uint64_t reserved = 0;     // held by containers
  uint64_t free = 0;
  bool operator==(const MemoryTable&) const = default;
};

struct NUMANodeState {
  // One per memory type of every container holding memory here.
  int number_of_assignments = 0;
  std::map<std::string, MemoryTable> memory_map;  // by resource name
  // This node and the nodes it shares a multi-NUMA allocation with ([id] when alone).
  std::vector<int> cells;
  bool operator==(const NUMANodeState&) const = default;
};

using NUMANodeMap = std::map<int, NUMANodeState>;

// An amount of one memory type held on a set of NUMA nodes.
struct Block {
  std::vector<int> numa_affinity;  // ascending NUMA ids
  std::string type;                // "memory", "hugepages-2Mi"
  uint64_t size = 0;               // bytes
  bool operator==(const Block&) const = default;
};

// pod UID -> container name -> blocks.
using ContainerMemoryAssignments = std::map<std::string, std::map<std::string, std::vector<Block>>>;

struct MemoryManagerCheckpoint {
  std::string policy_name;  // "None", "Static"
  NUMANodeMap machine_state;
  ContainerMemoryAssignments entries;
  uint64_t checksum = 0;
  bool operator==(const MemoryManagerCheckpoint&) const = default;
};

// The text upstream hashes, e.g. (*state.MemoryManagerCheckpoint){PolicyName:(string)Static
// MachineState:(state.NUMANodeMap)map[0:<*>{NumberOfAssignments:(int)0 MemoryMap:
// (map[v1.ResourceName]*state.MemoryTable)map[memory:<*>{TotalMemSize:(uint64)2048 ...}]
// Cells:([]int)[0]}] Entries:(state.ContainerMemoryAssignments)map[] Checksum:
// (checksum.Checksum)0}.
std::string SpewChecksumText(const MemoryManagerCheckpoint& cp);

// The checksum of `cp` (its own checksum field ignored).
uint64_t Checksum(const MemoryManagerCheckpoint& cp);

// The file's text, with the checksum computed.
std::string MarshalCheckpoint(MemoryManagerCheckpoint cp);

// Parses and verifies a file's text. Errors: not JSON / wrong member types (naming the member),
// "checkpoint is corrupted" (DataLoss) when the checksum does not match.
absl::StatusOr<MemoryManagerCheckpoint> UnmarshalCheckpoint(std::string_view text);

}  // namespace kubelet::memorymanager

#endif  // KUBELET_KUBELET_MEMORYMANAGER_STATE_H_
