// The kubelet's --lock-file: an exclusive flock(2) held for the life of the process, and the
// --exit-on-lock-contention watch (inotify IN_OPEN | IN_DELETE_SELF on the lock file: another
// kubelet opening the file to take the lock is the signal to exit).
// Functions are thread-safe; returned descriptors belong to the caller.
#ifndef KUBELET_COMMON_FLOCK_H_
#define KUBELET_COMMON_FLOCK_H_

#include <string>

#include "absl/status/statusor.h"

namespace kubelet {

// Opens (creating if needed) `path` and blocks until an exclusive lock is held. Returns the
// descriptor, which must stay open to keep the lock.
absl::StatusOr<int> AcquireFileLock(const std::string& path);

// An inotify descriptor that becomes readable when `path` is opened or deleted.
absl::StatusOr<int> WatchForLockContention(const std::string& path);

}  // namespace kubelet

#endif  // KUBELET_COMMON_FLOCK_H_
