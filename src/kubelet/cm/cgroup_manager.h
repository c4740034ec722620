// CgroupManager: creates, updates, lists and destroys cgroups by driver-neutral CgroupName,
// for the cgroupfs driver (paths are the names as they are) and the systemd driver (names
// become nested slices; where systemd is PID 1, each slice is also started as a transient
// unit over D-Bus so systemd knows about it).
//
// cgroup v1: a cgroup is a directory in every controller hierarchy; limits go to cpu.shares,
// cpu.cfs_period_us / cpu.cfs_quota_us, memory.limit_in_bytes, pids.max,
// hugetlb.<size>.limit_in_bytes; a new cpuset cgroup inherits cpuset.cpus / cpuset.mems.
// cgroup v2: one directory; the parent's cgroup.subtree_control gets the controllers enabled
// first; limits go to cpu.weight, cpu.max, memory.max, pids.max, hugetlb.<size>.max.
// Destroy removes the cgroup and its children with rmdir only (nothing is killed): while
// processes remain it fails with FailedPrecondition and the caller retries later.
//
// Thread-safety: thread-safe (no mutable state besides the filesystem and systemd). The
// CgroupFs and SystemdUnits passed in are borrowed / owned as documented at each factory.
#ifndef KUBELET_KUBELET_CM_CGROUP_MANAGER_H_
#define KUBELET_KUBELET_CM_CGROUP_MANAGER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kubelet/cm/cgroup_fs.h"
#include "kubelet/cm/cgroup_name.h"
#include "kubelet/cm/resources.h"

namespace kubelet::cm {

inline constexpr char kCgroupDriverCgroupfs[] = "cgroupfs";
inline constexpr char kCgroupDriverSystemd[] = "systemd";

struct CgroupConfig {
  CgroupName name;
  ResourceConfig resources;
};

class CgroupManager {
 public:
  virtual ~CgroupManager() = default;
  // "cgroupfs" or "systemd".
  virtual std::string Driver() const = 0;
  virtual bool Unified() const = 0;
  // The name in the driver's syntax ("/kubepods/burstable" or
  // "/kubepods.slice/kubepods-burstable.slice"): what the runtime gets as cgroup parent.
  virtual std::string Name(const CgroupName& name) const = 0;
  // Every controller hierarchy the kubelet relies on has the cgroup.
  virtual bool Exists(const CgroupName& name) const = 0;
  // Like Exists, with an error naming the missing paths (or v2 controllers).
  virtual absl::Status Validate(const CgroupName& name) const = 0;
  // Creates the cgroup (and its missing ancestors) and applies the resources.
  virtual absl::Status Create(const CgroupConfig& config) = 0;
  // Applies the resources to an existing cgroup.
  virtual absl::Status Update(const CgroupConfig& config) = 0;
  // Removes the cgroup and its child cgroups; OK when it does not exist.
  virtual absl::Status Destroy(const CgroupName& name) = 0;
  // Names of the child cgroups of `parent` (parsed back from the driver's syntax).
  virtual std::vector<CgroupName> Children(const CgroupName& parent) const = 0;
  // Processes in the cgroup (itself, not its children).
  virtual std::vector<int> Pids(const CgroupName& name) const = 0;
  // Moves process `pid` into the cgroup in every hierarchy.
  virtual absl::Status AddProcess(const CgroupName& name, int pid) = 0;
  // The settings of one resource as the cgroup has them (upstream GetCgroupConfig): "cpu" gives
  // shares (v2: from cpu.weight), quota (-1 unlimited) and period; "memory" the limit (v2 "max":
  // INT64_MAX). Other resources: InvalidArgument.
  virtual absl::StatusOr<ResourceConfig> GetResourceConfig(const CgroupName& name,
                                                           const std::string& resource) const {
    (void)name;
    (void)resource;
    return absl::UnimplementedError("GetResourceConfig");
  }
  // The cgroup's memory usage in bytes (memory.usage_in_bytes, v2 memory.current).
  virtual absl::StatusOr<int64_t> MemoryUsage(const CgroupName& name) const {
    (void)name;
    return absl::UnimplementedError("MemoryUsage");
  }
};

// Transient slices over D-Bus (the systemd driver where systemd runs).
class SystemdUnits {
 public:
  virtual ~SystemdUnits() = default;
  // Starts slice `unit` ("kubepods-burstable.slice") below `parent` ("kubepods.slice");
  // OK when it already exists.
  virtual absl::Status StartSlice(const std::string& unit, const std::string& parent) = 0;
  virtual absl::Status StopUnit(const std::string& unit) = 0;
};

// True when systemd is the init system (/run/systemd/system exists), as sd_booted() decides.
bool IsRunningSystemd();
// A D-Bus connection to the system manager. Error when the bus cannot be reached.
absl::StatusOr<std::unique_ptr<SystemdUnits>> NewDBusSystemdUnits();

// `fs` is borrowed and must outlive the manager. `units` is used only by the systemd driver;
// null skips the D-Bus calls (tests). An unknown driver is an InvalidArgument error.
absl::StatusOr<std::unique_ptr<CgroupManager>> NewCgroupManager(
    CgroupFs& fs, CgroupLayout layout, const std::string& driver,
    std::unique_ptr<SystemdUnits> units = nullptr);

}  // namespace kubelet::cm

#endif  // KUBELET_KUBELET_CM_CGROUP_MANAGER_H_
