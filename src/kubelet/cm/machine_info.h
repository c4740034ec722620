// Machine facts the kubelet reports and computes capacity from, read cheaply from procfs, sysfs
// and /etc (no cAdvisor): online CPUs, MemTotal, hugepage pools, identity (machine-id,
// boot-id, system UUID), kernel and OS image, pid_max, and the filesystem holding a path (statfs).
//
// Every reader takes a `root` prefix ("" on a real node) so tests lay out a fake /proc, /sys
// and /etc in a temp dir. Pure functions; thread-safe.
#ifndef KUBELET_KUBELET_CM_MACHINE_INFO_H_
#define KUBELET_KUBELET_CM_MACHINE_INFO_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace kubelet::cm {

struct HugePagePool {
  int64_t page_size_bytes = 0;  // e.g. 2097152
  int64_t num_pages = 0;        // nr_hugepages
  bool operator==(const HugePagePool&) const = default;
};

struct MachineInfo {
  int num_cores = 0;                    // online CPUs
  std::vector<int> online_cpus;         // ids, ascending
  int64_t memory_capacity_bytes = 0;    // MemTotal
  std::vector<HugePagePool> hugepages;  // by page size, ascending
  std::string machine_id;
  std::string boot_id;
  std::string system_uuid;     // DMI product_uuid ("" without DMI, e.g. most VMs' guests)
  std::string kernel_version;  // uname -r
  std::string os_image;        // PRETTY_NAME of os-release
  int64_t pid_max = 0;         // /proc/sys/kernel/pid_max (0 when unreadable)
};

// Reads the machine's facts below `root`. Only the CPU count and MemTotal are required; missing
// identity files leave their fields empty.
absl::StatusOr<MachineInfo> ReadMachineInfo(const std::string& root = "");

// Parses a Linux CPU list ("0-3,7"); used for /sys/devices/system/cpu/online.
absl::StatusOr<std::vector<int>> ParseCPUList(std::string_view list);

struct FsInfo {
  std::string device;  // mount source of the filesystem holding the path
  std::string mountpoint;
  uint64_t capacity_bytes = 0;
  uint64_t available_bytes = 0;  // for unprivileged users (f_bavail)
  uint64_t inodes = 0;
  uint64_t inodes_free = 0;
};
// statfs of `path` plus its mount (longest mount point prefix in /proc/self/mounts).
absl::StatusOr<FsInfo> GetFsInfo(const std::string& path);

// Non-empty lines of `root`/proc/swaps, the header first: more than one line means swap is on.
// NotFound when the file does not exist.
absl::StatusOr<std::vector<std::string>> ReadSwapLines(const std::string& root = "");

}  // namespace kubelet::cm

#endif  // KUBELET_KUBELET_CM_MACHINE_INFO_H_
