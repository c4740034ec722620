#include "kubelet/nodelogs/secure_join.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/strings.h"

namespace kubelet::nodelogs {

std::string ErrnoText(int err) {
  std::string s = std::strerror(err);
  if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z') s[0] = static_cast<char>(s[0] - 'A' + 'a');
  return s;
}

std::string CleanPath(std::string_view p) {
  if (p.empty()) return ".";
  const bool rooted = p[0] == '/';
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i < p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view part = p.substr(i, j - i);
    i = j + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!rooted) {
        parts.push_back(part);
      }
      continue;
    }
    parts.push_back(part);
  }
  std::string out = rooted ? "/" : "";
  for (size_t k = 0; k < parts.size(); ++k) {
    if (k) out += '/';
    out.append(parts[k]);
  }
  return out.empty() ? "." : out;
}

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
    std::string next = CleanPath(absl::StrCat("/", current, "/", part));
    if (next == "/") {
      current.clear();
      continue;
    }
    const std::string full = absl::StrCat(root, "/", next);
    struct stat st;
    if (::lstat(full.c_str(), &st) != 0) {
      const int err = errno;
      if (err != ENOENT && err != ENOTDIR) {
        return absl::PermissionDeniedError(absl::StrCat("lstat ", full, ": ", ErrnoText(err)));
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
          absl::StrCat("SecureJoin ", root, "/", AV(unsafe_path), ": ", ErrnoText(ELOOP)));
    }
    char buf[4096];
    ssize_t n = ::readlink(full.c_str(), buf, sizeof(buf));
    if (n < 0) {
      return absl::PermissionDeniedError(absl::StrCat("readlink ", full, ": ", ErrnoText(errno)));
    }
    std::string dest(buf, static_cast<size_t>(n));
    remaining = absl::StrCat(dest, "/", remaining);
    if (!dest.empty() && dest[0] == '/') current.clear();
  }
  return CleanPath(absl::StrCat(root, "/", CleanPath(absl::StrCat("/", current))));
}

}  // namespace kubelet::nodelogs
