// The cgroup filesystem behind an interface, and where the hierarchies are mounted.
//
// CgroupFs is the only way the container manager touches cgroupfs, so unit tests run the real
// managers against a temp dir laid out like /sys/fs/cgroup (cgroup v1 per-controller
// hierarchies or the v2 unified hierarchy). NewOsCgroupFs() uses the real filesystem with
// cgroupfs semantics (rmdir removes a cgroup together with its control files).
//
// CgroupLayout says where each controller lives. DetectCgroupLayout() reads /proc/self/mounts:
// any v1 controller mounted -> v1 (a hybrid host's cgroup2 mount at /sys/fs/cgroup/unified is
// only gets directories, see extra_hierarchies); otherwise the cgroup2 mount -> unified.
//
// Thread-safety: CgroupFs implementations are thread-safe (no state beyond the filesystem).
#ifndef KUBELET_KUBELET_CM_CGROUP_FS_H_
#define KUBELET_KUBELET_CM_CGROUP_FS_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kubelet::cm {

class CgroupFs {
 public:
  virtual ~CgroupFs() = default;
  // mkdir -p.
  virtual absl::Status MakeDirs(const std::string& path) = 0;
  // Removes one cgroup directory that has no child cgroups (rmdir). FailedPrecondition when
  // processes remain (EBUSY), OK when it does not exist.
  virtual absl::Status RemoveDir(const std::string& path) = 0;
  virtual bool Exists(const std::string& path) const = 0;
  virtual absl::StatusOr<std::string> ReadFile(const std::string& path) const = 0;
  // Writes `value` to a control file in a single write.
  virtual absl::Status WriteFile(const std::string& path, const std::string& value) = 0;
  // Names of the sub-directories of `path` (child cgroups); empty when `path` is missing.
  virtual std::vector<std::string> ListDirs(const std::string& path) const = 0;
};

// The real filesystem.
class OsCgroupFs : public CgroupFs {
 public:
  absl::Status MakeDirs(const std::string& path) override;
  absl::Status RemoveDir(const std::string& path) override;
  bool Exists(const std::string& path) const override;
  absl::StatusOr<std::string> ReadFile(const std::string& path) const override;
  absl::Status WriteFile(const std::string& path, const std::string& value) override;
  std::vector<std::string> ListDirs(const std::string& path) const override;
};

struct CgroupLayout {
  bool unified = false;
  // cgroup v2: the unified mount (e.g. /sys/fs/cgroup).
  std::string unified_root;
  // cgroup v1: controller -> its hierarchy's mount point (co-mounted controllers share one).
  std::map<std::string, std::string> controllers;
  // cgroup v1: hierarchies without a controller the kubelet sets (name=systemd, a hybrid
  // host's cgroup2 mount). The runtime creates its container cgroups there too, so pod
  // cgroups are created and removed there as well; no limits are written.
  std::vector<std::string> extra_hierarchies;

  bool Has(const std::string& controller) const { return controllers.count(controller) > 0; }
  // v1: the distinct hierarchy mount points (controllers and extras), sorted.
  std::vector<std::string> Hierarchies() const;
};

// From /proc/self/mounts text. NotFound when no cgroup hierarchy is mounted.
absl::StatusOr<CgroupLayout> ParseCgroupLayout(std::string_view proc_mounts);
absl::StatusOr<CgroupLayout> DetectCgroupLayout();

}  // namespace kubelet::cm

#endif  // KUBELET_KUBELET_CM_CGROUP_FS_H_
