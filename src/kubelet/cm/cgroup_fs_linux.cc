#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/strings.h"
#include "kubelet/cm/cgroup_fs.h"

namespace kubelet::cm {
namespace {

absl::Status ErrnoStatus(int err, const std::string& what) {
  std::string msg = absl::StrCat(what, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(msg);
    case EBUSY:
      return absl::FailedPreconditionError(msg);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    case EINVAL:
      return absl::InvalidArgumentError(msg);
    default:
      return absl::InternalError(msg);
  }
}

// v1 controllers the kubelet knows; anything else in a mount's options (rw, relatime,
// name=systemd, ...) is not a controller.
const std::set<std::string>& KnownControllers() {
  static const auto* k = new std::set<std::string>{
      "cpu",     "cpuacct", "cpuset",  "memory",   "pids",       "hugetlb", "devices",
      "freezer", "blkio",   "net_cls", "net_prio", "perf_event", "rdma",    "misc"};
  return *k;
}

}  // namespace

absl::Status OsCgroupFs::MakeDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return ErrnoStatus(ec.value(), "mkdir " + path);
  return absl::OkStatus();
}

absl::Status OsCgroupFs::RemoveDir(const std::string& path) {
  if (::rmdir(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus(errno, "rmdir " + path);
  return absl::OkStatus();
}

bool OsCgroupFs::Exists(const std::string& path) const { return ::access(path.c_str(), F_OK) == 0; }

absl::StatusOr<std::string> OsCgroupFs::ReadFile(const std::string& path) const {
  std::ifstream in(path);
  if (!in) return ErrnoStatus(errno ? errno : ENOENT, "open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::Status OsCgroupFs::WriteFile(const std::string& path, const std::string& value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, "open " + path);
  ssize_t n = ::write(fd, value.data(), value.size());
  int err = errno;
  ::close(fd);
  if (n < 0) return ErrnoStatus(err, absl::StrCat("write ", value, " to ", path));
  return absl::OkStatus();
}

std::vector<std::string> OsCgroupFs::ListDirs(const std::string& path) const {
  std::vector<std::string> out;
  // error_code forms throughout: a cgroup removed while it is listed is not an error worth an
  // exception (a range-for would advance with the throwing operator++).
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(path, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::error_code ec2;
    if (it->is_directory(ec2) && !it->is_symlink(ec2)) {
      out.push_back(it->path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> CgroupLayout::Hierarchies() const {
  std::set<std::string> dirs;
  for (const auto& [c, dir] : controllers) dirs.insert(dir);
  dirs.insert(extra_hierarchies.begin(), extra_hierarchies.end());
  return std::vector<std::string>(dirs.begin(), dirs.end());
}

absl::StatusOr<CgroupLayout> ParseCgroupLayout(std::string_view proc_mounts) {
  CgroupLayout layout;
  std::string unified;
  std::vector<std::string> named;
  for (absl::string_view line : absl::StrSplit(AV(proc_mounts), '\n', absl::SkipEmpty())) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    if (f.size() < 4) continue;
    if (f[2] == "cgroup2") {
      if (unified.empty()) unified = f[1];
    } else if (f[2] == "cgroup") {
      for (absl::string_view opt : absl::StrSplit(f[3], ',')) {
        std::string o(opt);
        if (absl::StartsWith(opt, "name=")) named.push_back(f[1]);
        if (KnownControllers().count(o) && !layout.controllers.count(o)) {
          layout.controllers[o] = f[1];
        }
      }
    }
  }
  if (!layout.controllers.empty()) {
    layout.extra_hierarchies = named;
    if (!unified.empty()) layout.extra_hierarchies.push_back(unified);
    return layout;
  }
  if (unified.empty()) return absl::NotFoundError("no cgroup filesystem is mounted");
  layout.unified = true;
  layout.unified_root = unified;
  return layout;
}

absl::StatusOr<CgroupLayout> DetectCgroupLayout() {
  OsCgroupFs fs;
  auto mounts = fs.ReadFile("/proc/self/mounts");
  if (!mounts.ok()) return mounts.status();
  return ParseCgroupLayout(*mounts);
}

}  // namespace kubelet::cm
