// Reading the host's own figures for the stats subsystem: /proc (cpu, memory, network, pid
// limits, boot time, mounts), cgroup files (v1 controllers or the v2 unified tree), statfs and
// directory disk usage. (The machine's identity and size are the container manager's
// machine info, read once at start-up.)
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
#include "common/files.h"
#include "kubelet/stats/summary.h"

namespace kubelet::stats {

// statfs(2) of a path (common/files.h).
using ::kubelet::FsInfo;
using ::kubelet::StatFs;

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
  // memory.max (v2) / memory.limit_in_bytes (v1); unset when unlimited or unreadable.
  std::optional<uint64_t> limit_bytes;
};

// What /metrics/cadvisor reports of a cgroup beyond the Summary's figures (cAdvisor's container
// stats and spec). Every field is unset when its file is missing or unreadable.
//                       cgroup v1                             cgroup v2
//   cpu user/system     cpuacct.stat (USER_HZ ticks)          cpu.stat user_usec / system_usec
//   cfs periods         cpu.stat nr_periods, nr_throttled,    cpu.stat nr_periods, nr_throttled,
//                       throttled_time                        throttled_usec
//   cpu period/quota    cpu.cfs_period_us / cpu.cfs_quota_us  cpu.max
//   cpu shares          cpu.shares                            cpu.weight, as shares
//   memory cache        memory.stat total_cache               memory.stat file
//   memory swap         memory.stat total_swap                memory.swap.current
//   memory failcnt      memory.failcnt                        (none)
//   memory max usage    memory.max_usage_in_bytes             (none)
//   memory limit        memory.limit_in_bytes                 memory.max
//   oom kills           memory.oom_control oom_kill           memory.events oom_kill
struct CgroupDetails {
  std::optional<uint64_t> cpu_user_nanos;
  std::optional<uint64_t> cpu_system_nanos;
  std::optional<uint64_t> cfs_periods;
  std::optional<uint64_t> cfs_throttled_periods;
  std::optional<uint64_t> cfs_throttled_nanos;
  std::optional<uint64_t> cpu_period_us;
  uint64_t cpu_quota_us = 0;  // 0: no quota (v1 -1, v2 "max")
  std::optional<uint64_t> cpu_shares;
  std::optional<uint64_t> memory_cache_bytes;
  std::optional<uint64_t> memory_swap_bytes;
  std::optional<uint64_t> memory_failcnt;
  std::optional<uint64_t> memory_max_usage_bytes;
  std::optional<uint64_t> memory_limit_bytes;  // UINT64_MAX for v2 "max"
  std::optional<uint64_t> oom_kills;
};

// The machine as cAdvisor's machine_* families describe it (static facts).
struct MachineFacts {
  int num_cores = 0;                   // online CPUs
  uint64_t memory_capacity_bytes = 0;  // MemTotal
  std::string machine_id;
  std::string boot_id;
  std::string system_uuid;
};

// cgroup v2 cpu.weight [1, 10000] back to cpu.shares [2, 262144] (the inverse of the kubelet's
// shares-to-weight mapping).
uint64_t CpuWeightToShares(uint64_t weight);

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
  CgroupDetails CgroupDetail(const std::string& cgroup) const;

  // The source device of the file system holding `path` (the longest mount point of
  // /proc/self/mounts that contains it); "" when none matches.
  std::string MountDevice(const std::string& path) const;

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
