// File helpers for state the kubelet keeps on disk (certificates, keys, kubeconfigs), and
// statfs(2) of a file system.
// Thread-compatible: concurrent writers of one path must serialize themselves.
#ifndef KUBELET_COMMON_FILES_H_
#define KUBELET_COMMON_FILES_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kubelet {

// Writes `data` to `path` through `path`.tmp (created with `mode`, fsynced, then renamed over
// `path`), making the parent folders; a reader never sees half a file.
absl::Status WriteFileAtomically(const std::string& path, const std::string& data, mode_t mode);

// The whole file; NotFound when it cannot be opened.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// statfs(2) of a path, in bytes and inodes.
struct FsInfo {
  uint64_t capacity_bytes = 0;
  uint64_t available_bytes = 0;  // to unprivileged users (f_bavail)
  uint64_t used_bytes = 0;       // (f_blocks - f_bfree) * f_frsize
  uint64_t inodes = 0;
  uint64_t inodes_free = 0;
};
// The errno as the status ("statfs <path>: ...").
absl::StatusOr<FsInfo> StatFs(const std::string& path);

}  // namespace kubelet

#endif  // KUBELET_COMMON_FILES_H_
