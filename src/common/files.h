// File helpers for state the kubelet keeps on disk (certificates, keys, kubeconfigs).
// Thread-compatible: concurrent writers of one path must serialize themselves.
#ifndef KUBELET_COMMON_FILES_H_
#define KUBELET_COMMON_FILES_H_

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kubelet {

// Writes `data` to `path` through `path`.tmp (created with `mode`, fsynced, then renamed over
// `path`), making the parent folders; a reader never sees half a file.
absl::Status WriteFileAtomically(const std::string& path, const std::string& data, mode_t mode);

// The whole file; NotFound when it cannot be opened.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace kubelet

#endif  // KUBELET_COMMON_FILES_H_
