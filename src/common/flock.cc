#include "common/flock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace kubelet {

absl::StatusOr<int> AcquireFileLock(const std::string& path) {
  int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("open ", path, ": ", std::strerror(errno)));
  }
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    ::close(fd);
    return absl::UnavailableError(absl::StrCat("flock ", path, ": ", std::strerror(err)));
  }
  return fd;
}

absl::StatusOr<int> WatchForLockContention(const std::string& path) {
  int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("inotify_init: ", std::strerror(errno)));
  }
  if (::inotify_add_watch(fd, path.c_str(), IN_OPEN | IN_DELETE_SELF) < 0) {
    int err = errno;
    ::close(fd);
    return absl::UnavailableError(
        absl::StrCat("unable to watch lockfile ", path, ": ", std::strerror(err)));
  }
  return fd;
}

}  // namespace kubelet
