#include "kubelet/nodelogs/secure_join.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/go_compat.h"
#include "common/strings.h"

namespace kubelet::nodelogs {

absl::StatusOr<std::string> SecureJoin(const std::string& root, std::string_view unsafe_path) {
  constexpr int kMaxLinks = 255;
  std::string current;  // resolved so far, relative to root, without symlinks
  std::string remaining(unsafe_path);
  int links = 0;
  while (!remaining.empty()) {
    std::string part;
    size_t slash = remaining.find('/');
    if (slash == std::string::npos) {
      part = std::move(remaining);
      remaining.clear();
    } else {
      part = remaining.substr(0, slash);
      remaining.erase(0, slash + 1);
    }
    std::string next = GoCleanPath(absl::StrCat("/", current, "/", part));
    if (next == "/") {
      current.clear();
      continue;
    }
    const std::string full = absl::StrCat(root, "/", next);
    struct stat st;
    if (::lstat(full.c_str(), &st) != 0) {
      const int err = errno;
      if (err != ENOENT && err != ENOTDIR) {
        return absl::PermissionDeniedError(absl::StrCat("lstat ", full, ": ", GoErrnoText(err)));
      }
      current = next;
      continue;
    }
    if (!S_ISLNK(st.st_mode)) {
      current = next;
      continue;
    }
    if (++links > kMaxLinks) {
      return absl::FailedPreconditionError(
          absl::StrCat("SecureJoin ", root, "/", AV(unsafe_path), ": ", GoErrnoText(ELOOP)));
    }
    char buf[4096];
    ssize_t n = ::readlink(full.c_str(), buf, sizeof(buf));
    if (n < 0) {
      return absl::PermissionDeniedError(absl::StrCat("readlink ", full, ": ", GoErrnoText(errno)));
    }
    std::string dest(buf, static_cast<size_t>(n));
    remaining = absl::StrCat(dest, "/", remaining);
    if (!dest.empty() && dest[0] == '/') current.clear();
  }
  return GoCleanPath(absl::StrCat(root, "/", GoCleanPath(absl::StrCat("/", current))));
}

}  // namespace kubelet::nodelogs
