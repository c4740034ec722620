// Go standard library texts and path rules the kubelet reproduces where upstream's messages or
// behaviour depend on them. Pure functions; thread-safe.
#ifndef KUBELET_COMMON_GO_COMPAT_H_
#define KUBELET_COMMON_GO_COMPAT_H_

#include <string>
#include <string_view>

namespace kubelet {

// Go's path.Clean (and path/filepath.Clean on Linux): the shortest equivalent path, with "." and
// ".." elements and repeated slashes resolved lexically; "" and a path that cleans to nothing
// are ".". A rooted path never climbs above "/".
std::string GoCleanPath(std::string_view p);

// Go's syscall.Errno text: glibc's strerror with a lower-case first letter ("no such file or
// directory"), unless the first word is an acronym.
std::string GoErrnoText(int err);

}  // namespace kubelet

#endif  // KUBELET_COMMON_GO_COMPAT_H_
