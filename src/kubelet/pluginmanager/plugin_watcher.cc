#include "kubelet/pluginmanager/plugin_watcher.h"

#include <dirent.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace kubelet::pluginmanager {
namespace {

constexpr uint32_t kMask = IN_CREATE | IN_DELETE | IN_ONLYDIR;

bool IsDotName(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return !base.empty() && base[0] == '.';
}

}  // namespace

absl::StatusOr<std::unique_ptr<PluginWatcher>> PluginWatcher::Start(
    const std::string& dir, std::vector<WatchEvent>* existing) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("error (re-)creating root ", dir, ": ", ec.message()));
  }
  ::chmod(dir.c_str(), 0755);
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("inotify_init1: ", std::strerror(errno)));
  }
  std::unique_ptr<PluginWatcher> w(new PluginWatcher(fd));
  KLOG_V(2, "Plugin Watcher Start", "path", dir);
  w->WatchTree(dir, existing);
  return w;
}

PluginWatcher::~PluginWatcher() {
  if (fd_ >= 0) ::close(fd_);
}

void PluginWatcher::WatchTree(const std::string& dir, std::vector<WatchEvent>* out) {
  const int wd = ::inotify_add_watch(fd_, dir.c_str(), kMask);
  if (wd < 0) {
    KLOG_ERROR(absl::UnavailableError(std::strerror(errno)), "Error accessing path", "path", dir);
    return;
  }
  dirs_[wd] = dir;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    KLOG_ERROR(absl::UnavailableError(std::strerror(errno)),
               "Failed to traverse plugin socket path", "path", dir);
    return;
  }
  while (struct dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = absl::StrCat(dir, "/", name);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      KLOG_ERROR(absl::UnavailableError(std::strerror(errno)), "Error accessing path", "path",
                 path);
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      WatchTree(path, out);
    } else if (S_ISSOCK(st.st_mode)) {
      out->push_back({WatchEvent::Kind::kSocketCreated, path});
    } else {
      KLOG_V(5, "Ignoring file", "path", path, "mode", std::to_string(st.st_mode));
    }
  }
  ::closedir(d);
}

void PluginWatcher::HandleCreate(const std::string& path, std::vector<WatchEvent>* out) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    KLOG_ERROR(
        absl::UnavailableError(absl::StrCat("stat file ", path, " failed: ", std::strerror(errno))),
        "Error when handling create event", "path", path);
    return;
  }
  if (IsDotName(path)) {
    KLOG_V(5, "Ignoring file (starts with '.')", "path", path);
    return;
  }
  if (S_ISDIR(st.st_mode)) {
    WatchTree(path, out);
    return;
  }
  if (!S_ISSOCK(st.st_mode)) {
    KLOG_V(5, "Ignoring non socket file", "path", path);
    return;
  }
  out->push_back({WatchEvent::Kind::kSocketCreated, path});
}

std::vector<WatchEvent> PluginWatcher::Read() {
  std::vector<WatchEvent> out;
  alignas(struct inotify_event) char buf[16384];
  for (;;) {
    const ssize_t n = ::read(fd_, buf, sizeof(buf));
    if (n <= 0) {
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        KLOG_ERROR(absl::UnavailableError(std::strerror(errno)), "FsWatcher received error");
      }
      if (n < 0 && errno == EINTR) continue;
      break;
    }
    for (ssize_t off = 0; off < n;) {
      const auto* ev = reinterpret_cast<const struct inotify_event*>(buf + off);
      off += static_cast<ssize_t>(sizeof(struct inotify_event) + ev->len);
      if ((ev->mask & IN_IGNORED) != 0) {
        dirs_.erase(ev->wd);
        continue;
      }
      if ((ev->mask & IN_Q_OVERFLOW) != 0) {
        KLOG_ERROR(absl::ResourceExhaustedError("inotify queue overflow"),
                   "FsWatcher received error");
        continue;
      }
      auto dir = dirs_.find(ev->wd);
      if (dir == dirs_.end() || ev->len == 0) continue;
      const std::string path = absl::StrCat(dir->second, "/", ev->name);
      if ((ev->mask & IN_CREATE) != 0) {
        HandleCreate(path, &out);
      } else if ((ev->mask & IN_DELETE) != 0) {
        out.push_back({WatchEvent::Kind::kRemoved, path});
      }
    }
  }
  return out;
}

}  // namespace kubelet::pluginmanager
