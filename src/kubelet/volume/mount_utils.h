// Linux mount helpers for the volume plugins: mount-point queries from /proc/self/mountinfo,
// tmpfs mounts, unmounts, and a recursive delete that refuses to cross into mounted
// filesystems (so a failed unmount never wipes a tmpfs' or a host directory's content).
//
// Thread-safety: stateless free functions, safe from any thread. Mount operations need
// CAP_SYS_ADMIN.
#ifndef KUBELET_KUBELET_VOLUME_MOUNT_UTILS_H_
#define KUBELET_KUBELET_VOLUME_MOUNT_UTILS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kubelet::volume {

// Mount points of the calling process' mount namespace (unescaped), in mountinfo order.
absl::StatusOr<std::vector<std::string>> ListMountPoints();

// True when `path` (made absolute, not resolved through symlinks) is a mount point.
bool IsMountPoint(const std::string& path);

// Mount points at or below `path`, deepest first.
std::vector<std::string> MountPointsUnder(const std::string& path);

// True when the filesystem holding `path` is a tmpfs (statfs magic).
bool IsTmpfs(const std::string& path);

// mount -t tmpfs tmpfs <path> [-o size=<size_bytes>] (no size option when size_bytes <= 0).
absl::Status MountTmpfs(const std::string& path, int64_t size_bytes);

// umount(2); a path that is not mounted is not an error.
absl::Status Unmount(const std::string& path);

// The entry names of directory `dir` (without "." and ".."), sorted; empty when it cannot be
// read.
std::vector<std::string> ListDir(const std::string& dir);

// Removes `path` recursively. Fails without deleting anything when a mount point lies at or
// below `path`. A missing path is not an error.
absl::Status RemoveAllNoCrossMounts(const std::string& path);

// Bytes used by the files below `path` (st_blocks * 512, each inode counted once), staying on
// the filesystem of `path` (du -x semantics).
absl::StatusOr<int64_t> DiskUsageBytes(const std::string& path);

}  // namespace kubelet::volume

#endif  // KUBELET_KUBELET_VOLUME_MOUNT_UTILS_H_
