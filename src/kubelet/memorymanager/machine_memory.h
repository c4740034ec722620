// The machine's memory per NUMA node, for the memory manager (what upstream reads from cadvisor's
// MachineInfo.Topology: each node's MemTotal and its hugepage pools).
//
// DiscoverMachineMemory reads, below a sysfs root (a parameter, so tests describe machines as
// directory trees):
//   <root>/devices/system/node/nodeN/meminfo          "Node N MemTotal:   X kB" (bytes = X * 1024)
//   <root>/devices/system/node/nodeN/hugepages/hugepages-<size>kB/nr_hugepages
// A machine without nodeN directories is one node 0 whose memory is the MemTotal of /proc/meminfo
// (given by the caller) and whose hugepages are the machine's (<root>/kernel/mm/hugepages/...).
// A node without a hugepages directory has no hugepage pools (kernels built without them).
// Errors name the file that could not be read or parsed.
// Value types and pure functions; thread-safe.
#ifndef KUBELET_KUBELET_MEMORYMANAGER_MACHINE_MEMORY_H_
#define KUBELET_KUBELET_MEMORYMANAGER_MACHINE_MEMORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kubelet::memorymanager {

// One hugepage pool of a node.
struct HugePages {
  uint64_t page_size_kb = 0;  // 2048 for 2Mi pages
  uint64_t num_pages = 0;     // nr_hugepages
  bool operator==(const HugePages&) const = default;
};

struct NUMANodeMemory {
  int id = 0;
  uint64_t memory_bytes = 0;         // MemTotal, hugepages included
  std::vector<HugePages> hugepages;  // ascending page size
  bool operator==(const NUMANodeMemory&) const = default;
};

struct MachineMemory {
  std::vector<NUMANodeMemory> nodes;  // ascending id
  bool operator==(const MachineMemory&) const = default;
};

// See the file comment. `mem_total_bytes`: /proc/meminfo's MemTotal, used only when sysfs has no
// NUMA node directories.
absl::StatusOr<MachineMemory> DiscoverMachineMemory(const std::string& sysfs_root,
                                                    uint64_t mem_total_bytes);

// The resource name of a hugepage size (upstream HugePageResourceName): "hugepages-2Mi" for
// 2097152 bytes, "hugepages-1Gi", "hugepages-64Ki".
std::string HugePageResourceName(uint64_t page_size_bytes);

// True for "hugepages-<size>" names (upstream IsHugePageResourceName).
bool IsHugePageResourceName(const std::string& name);

}  // namespace kubelet::memorymanager

#endif  // KUBELET_KUBELET_MEMORYMANAGER_MACHINE_MEMORY_H_
