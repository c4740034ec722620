// SecureJoin (github.com/cyphar/filepath-securejoin v0.2, as the node log query uses it):
// `unsafe_path` resolved below `root` as if `root` were the file system root. Every ".." and
// every symlink met on the way is resolved lexically inside `root` (an absolute link target
// starts again at `root`), so the result never leaves it; components that do not exist are
// taken as they are. At most 255 links are followed.
//
// Contract: returns filepath.Join(root, <resolved>); errors as Go prints them: "lstat <path>:
// permission denied", "readlink <path>: ...", "SecureJoin <root>/<unsafe>: too many levels of
// symbolic links". Thread-safe; only lstat and readlink are used.
#ifndef KUBELET_KUBELET_NODELOGS_SECURE_JOIN_H_
#define KUBELET_KUBELET_NODELOGS_SECURE_JOIN_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace kubelet::nodelogs {

absl::StatusOr<std::string> SecureJoin(const std::string& root, std::string_view unsafe_path);

}  // namespace kubelet::nodelogs

#endif  // KUBELET_KUBELET_NODELOGS_SECURE_JOIN_H_
