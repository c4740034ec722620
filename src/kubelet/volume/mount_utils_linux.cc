#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/strings.h"
#include "kubelet/volume/mount_utils.h"
namespace kubelet::volume {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() &&
        std::all_of(s.begin() + i + 1, s.begin() + i + 4,
                    [](char c) { return c >= '0' && c <= '7'; })) {
      out.push_back(
          static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string Normalize(const std::string& path) {
  std::error_code ec;  // absolute() throws when the working directory is gone
  std::filesystem::path p = std::filesystem::absolute(path, ec);
  if (ec) p = path;
  p = p.lexically_normal();
  std::string s = p.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

absl::Status ErrnoStatus(int err, std::string_view what) {
  return absl::InternalError(absl::StrCat(AV(what), ": ", strerror(err)));
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ListMountPoints() {
  std::ifstream in("/proc/self/mountinfo");
  if (!in) return absl::InternalError("open /proc/self/mountinfo: failed");
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, mount_point;
    if (!(fields >> id >> parent >> devno >> root >> mount_point)) continue;
    out.push_back(Unescape(mount_point));
  }
  return out;
}

bool IsMountPoint(const std::string& path) {
  absl::StatusOr<std::vector<std::string>> mounts = ListMountPoints();
  if (!mounts.ok()) return false;
  const std::string p = Normalize(path);
  return std::find(mounts->begin(), mounts->end(), p) != mounts->end();
}

std::vector<std::string> MountPointsUnder(const std::string& path) {
  absl::StatusOr<std::vector<std::string>> mounts = ListMountPoints();
  if (!mounts.ok()) return {};
  const std::string p = Normalize(path);
  std::set<std::string> found;
  for (const std::string& m : *mounts) {
    if (m == p || absl::StartsWith(AV(m), AV(p + "/"))) found.insert(m);
  }
  std::vector<std::string> out(found.begin(), found.end());
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return out;
}

bool IsTmpfs(const std::string& path) {
  struct statfs st;
  if (::statfs(path.c_str(), &st) != 0) return false;
  return st.f_type == TMPFS_MAGIC;
}

absl::Status MountTmpfs(const std::string& path, int64_t size_bytes) {
  std::string options;
  if (size_bytes > 0) options = absl::StrCat("size=", size_bytes);
  if (::mount("tmpfs", path.c_str(), "tmpfs", 0, options.empty() ? nullptr : options.c_str()) !=
      0) {
    const int err = errno;
    return ErrnoStatus(err, absl::StrCat("mount failed: mount -t tmpfs",
                                         options.empty() ? "" : " -o " + options, " tmpfs ", path));
  }
  return absl::OkStatus();
}

absl::Status Unmount(const std::string& path) {
  if (::umount2(path.c_str(), UMOUNT_NOFOLLOW) != 0) {
    const int err = errno;
    if (err == EINVAL || err == ENOENT) return absl::OkStatus();  // not a mount point / gone
    return ErrnoStatus(err, absl::StrCat("unmount failed: ", path));
  }
  return absl::OkStatus();
}

absl::Status RemoveAllNoCrossMounts(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
    return absl::OkStatus();
  }
  std::vector<std::string> mounts = MountPointsUnder(path);
  if (!mounts.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("refusing to remove ", path, ": ", mounts.front(), " is still mounted"));
  }
  std::filesystem::remove_all(path, ec);
  if (ec) return absl::InternalError(absl::StrCat("remove ", path, ": ", ec.message()));
  return absl::OkStatus();
}

absl::StatusOr<int64_t> DiskUsageBytes(const std::string& path) {
  struct stat root;
  if (::lstat(path.c_str(), &root) != 0) {
    const int err = errno;
    return ErrnoStatus(err, absl::StrCat("lstat ", path));
  }
  int64_t total = static_cast<int64_t>(root.st_blocks) * 512;
  if (!S_ISDIR(root.st_mode)) return total;
  std::set<std::pair<dev_t, ino_t>> seen;
  std::error_code ec;
  auto it = std::filesystem::recursive_directory_iterator(
      path, std::filesystem::directory_options::skip_permission_denied, ec);
  if (ec) return absl::InternalError(absl::StrCat("read ", path, ": ", ec.message()));
  for (; it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    struct stat st;
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    if (st.st_dev != root.st_dev) {
      // Another filesystem mounted below: not part of this volume's usage.
      if (S_ISDIR(st.st_mode)) it.disable_recursion_pending();
      continue;
    }
    if (st.st_nlink > 1 && !S_ISDIR(st.st_mode) && !seen.emplace(st.st_dev, st.st_ino).second) {
      continue;
    }
    total += static_cast<int64_t>(st.st_blocks) * 512;
  }
  return total;
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (struct dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    out.push_back(name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kubelet::volume
