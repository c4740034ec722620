// Reading the host's own figures for the stats subsystem: /proc (cpu, memory, network, pid
// limits, boot time), cgroup files (v1 controllers or the v2 unified tree), statfs and
// directory disk usage.
//
// Contract: HostReader reads below the roots it is given (so tests point it at fake trees in a
// temp dir); every reader returns nullopt / an error when its file is missing or malformed and
// never throws. Cgroup paths are cgroupfs-style absolute paths ("/kubepods/burstable/pod<uid>").
// Thread-safety: HostReader is immutable after construction and safe to share; the free
// functions are thread-safe. Ownership: values.
#ifndef KUBELET_KUBELET_STATS_HOST_STATS_H_
#define KUBELET_KUBELET_STATS_HOST_STATS_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kubelet/stats/summary.h"

namespace kubelet::stats {

// statfs(2) of a path, in bytes and inodes.
struct FsInfo {
  uint64_t capacity_bytes = 0;
  uint64_t available_bytes = 0;  // to unprivileged users (f_bavail)
  uint64_t used_bytes = 0;       // (f_blocks - f_bfree) * f_frsize
  uint64_t inodes = 0;
  uint64_t inodes_free = 0;
};
absl::StatusOr<FsInfo> StatFs(const std::string& path);

// What `du` reports for a tree: allocated bytes (st_blocks * 512) and inodes, symlinks not
// followed, other file systems not crossed. A missing path is kNotFound.
struct DiskUsage {
  uint64_t bytes = 0;
  uint64_t inodes = 0;
};
absl::StatusOr<DiskUsage> MeasureDiskUsage(const std::string& path);

// Raw memory figures of a cgroup or of the host.
struct MemoryReading {
  uint64_t usage_bytes = 0;
  uint64_t working_set_bytes = 0;  // usage - inactive_file (cAdvisor's definition), >= 0
  std::optional<uint64_t> rss_bytes;
  std::optional<uint64_t> page_faults;
  std::optional<uint64_t> major_page_faults;
};

class HostReader {
 public:
  explicit HostReader(std::string proc_root = "/proc", std::string cgroup_root = "/sys/fs/cgroup");

  bool cgroup_v2() const { return v2_; }

  // Cumulative CPU time of a cgroup in nanoseconds (v1 cpuacct.usage, v2 cpu.stat usage_usec).
  std::optional<uint64_t> CgroupCpuNanos(const std::string& cgroup) const;
  std::optional<MemoryReading> CgroupMemory(const std::string& cgroup) const;
  // Process ids in the cgroup (cgroup.procs of the pids, cpuacct or unified hierarchy).
  std::vector<pid_t> CgroupPids(const std::string& cgroup) const;
  bool CgroupExists(const std::string& cgroup) const;
  // The cgroup directory's change time (a stand-in for its creation time).
  std::optional<absl::Time> CgroupCreated(const std::string& cgroup) const;

  // The node: root cgroup when it has the figure, else /proc/stat and /proc/meminfo.
  std::optional<uint64_t> NodeCpuNanos() const;
  std::optional<MemoryReading> NodeMemory() const;
  std::optional<uint64_t> MemTotalBytes() const;
  // Boot time (btime of /proc/stat).
  std::optional<absl::Time> BootTime() const;
  // Interfaces of /proc/<pid>/net/dev (pid 0: /proc/net/dev), loopback left out.
  std::vector<InterfaceStats> NetDev(pid_t pid = 0) const;
  // The interface of the host's default route (/proc/net/route), "" when none.
  std::string DefaultInterface() const;
  // kernel.pid_max and the number of tasks (/proc/loadavg's total).
  std::optional<int64_t> PidMax() const;
  std::optional<int64_t> NumTasks() const;
  // The cgroup of `pid` (0: self) in the memory hierarchy (v2: the unified one).
  std::optional<std::string> ProcessCgroup(pid_t pid = 0) const;

 private:
  // The directory of `cgroup` for `controller` (v1) or in the unified tree (v2); "" if absent.
  std::string ControllerDir(const std::string& controller, const std::string& cgroup) const;

  std::string proc_root_;
  std::string cgroup_root_;
  bool v2_ = false;
};

}  // namespace kubelet::stats

#endif  // KUBELET_KUBELET_STATS_HOST_STATS_H_
