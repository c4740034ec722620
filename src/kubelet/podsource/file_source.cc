#include "kubelet/podsource/file_source.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/static_pod.h"
#include "common/go_compat.h"
#include "common/guarded.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::podsource {
namespace {

using SteadyClock = std::chrono::steady_clock;

// klog.ErrorS(nil, ...): an error record without an err field.
#define KLOG_ERROR_NIL(...)                                                              \
  ::kubelet::log::internal::Log(::kubelet::log::Severity::kError, 0, __FILE__, __LINE__, \
                                __VA_ARGS__)

// Events on the watched directory (or file) that may change the pod set.
constexpr uint32_t kPathMask = IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_MOVED_TO |
                               IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF;
// Events on the parent directory that may concern the path itself.
constexpr uint32_t kParentMask = IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
                                 IN_DELETE_SELF | IN_MOVE_SELF | IN_ATTRIB | IN_ONLYDIR;

// *os.PathError text: "<op> <path>: <errno text>".
std::string PathError(std::string_view op, std::string_view path, int err) {
  return absl::StrCat(AV(op), " ", AV(path), ": ", GoErrnoText(err));
}

// Go's fs.FileMode.String() for the mode bits stat(2) reports.
std::string GoFileMode(mode_t mode) {
  std::string out;
  const mode_t type = mode & S_IFMT;
  if (type == S_IFDIR) out += 'd';
  if (type == S_IFLNK) out += 'L';
  if (type == S_IFBLK || type == S_IFCHR) out += 'D';
  if (type == S_IFIFO) out += 'p';
  if (type == S_IFSOCK) out += 'S';
  if (mode & S_ISUID) out += 'u';
  if (mode & S_ISGID) out += 'g';
  if (type == S_IFCHR) out += 'c';
  if (mode & S_ISVTX) out += 't';
  if (out.empty()) out += '-';
  const char* rwx = "rwxrwxrwx";
  for (int i = 0; i < 9; ++i) out += (mode & (1 << (8 - i))) ? rwx[i] : '-';
  return out;
}

SteadyClock::duration ToChrono(absl::Duration d) { return absl::ToChronoNanoseconds(d); }

}  // namespace

FileSource::FileSource(FileSourceOptions options, PodConfig& config, Clock& clock)
    : options_(std::move(options)), config_(config), clock_(clock) {
  // Like upstream, a trailing separator is not part of the watched name.
  path_ = options_.path;
  while (path_.size() > 1 && path_.back() == '/') path_.pop_back();
  const size_t slash = path_.rfind('/');
  if (slash == std::string::npos) {
    parent_ = ".";
    base_ = path_;
  } else if (slash == 0) {
    parent_ = "/";
    base_ = path_.substr(1);
  } else {
    parent_ = path_.substr(0, slash);
    base_ = path_.substr(slash + 1);
  }
  config_.AddSource(kFileSource);
}

FileSource::~FileSource() { Stop(); }

absl::Status FileSource::Start() {
  if (started_ || stopping_.load()) {
    return absl::FailedPreconditionError("file source already started or stopped");
  }
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) {
    return absl::InternalError(absl::StrCat("unable to create eventfd: ", GoErrnoText(errno)));
  }
  started_ = true;
  KLOG_V(1, "Watching path", "path", path_);
  // Each step of the loop is guarded too (Guarded below); this only covers the rest.
  thread_ = GuardedThread(absl::StrCat("file source ", path_), [this] { Run(); });
  return absl::OkStatus();
}

void FileSource::Stop() {
  if (!started_) return;
  stopping_.store(true);
  uint64_t one = 1;
  ssize_t n = ::write(stop_fd_, &one, sizeof(one));
  (void)n;
  if (thread_.joinable()) thread_.join();
  ::close(stop_fd_);
  stop_fd_ = -1;
  started_ = false;
}

void FileSource::Run() {
  const auto period = std::max(ToChrono(options_.check_frequency),
                               SteadyClock::duration(std::chrono::milliseconds(1)));
  const auto debounce = ToChrono(options_.debounce);
  const auto max_debounce = ToChrono(options_.max_debounce);
  const auto watch_retry =
      std::max(ToChrono(options_.watch_retry), SteadyClock::duration(std::chrono::milliseconds(1)));

  Guarded("scan", [&] { Scan(/*authoritative=*/true); });  // at once, to speed up start-up
  auto next_resync = SteadyClock::now() + period;
  auto next_watch_retry = SteadyClock::now() + watch_retry;
  bool pending = false;
  SteadyClock::time_point first_event, last_event;

  while (!stopping_.load()) {
    const auto now = SteadyClock::now();
    auto deadline = next_resync;
    if (pending) deadline = std::min({deadline, last_event + debounce, first_event + max_debounce});
    const bool watches_incomplete = inotify_fd_ < 0 || parent_wd_ < 0 || path_wd_ < 0;
    if (watches_incomplete) deadline = std::min(deadline, next_watch_retry);

    pollfd fds[2] = {{stop_fd_, POLLIN, 0}, {inotify_fd_, POLLIN, 0}};
    const int nfds = inotify_fd_ >= 0 ? 2 : 1;
    const auto wait = std::clamp<SteadyClock::duration>(
        deadline - now, SteadyClock::duration::zero(), std::chrono::hours(1));
    const auto wait_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
    const timespec ts{static_cast<time_t>(wait_ns / 1000000000),
                      static_cast<long>(wait_ns % 1000000000)};
    int rc = ::ppoll(fds, nfds, &ts, nullptr);
    if (rc < 0 && errno != EINTR) {
      KLOG_WARNING("poll failed in file source", "err", GoErrnoText(errno));
      ::usleep(10000);
    }
    if (stopping_.load()) break;

    if (rc > 0 && nfds == 2 && (fds[1].revents & POLLIN)) {
      bool relevant = false;
      Guarded("inotify", [&] { HandleInotify(&relevant); });
      if (relevant) {
        const auto t = SteadyClock::now();
        if (!pending) first_event = t;
        last_event = t;
        pending = true;
      }
    }

    const auto t = SteadyClock::now();
    bool scan = false;
    bool authoritative = false;
    if (pending && (t >= last_event + debounce || t >= first_event + max_debounce)) scan = true;
    if (t >= next_resync) {
      scan = authoritative = true;
      next_resync = t + period;
    }
    if (watches_incomplete && t >= next_watch_retry) {
      next_watch_retry = t + watch_retry;
      // Only rescan when a watch could be added now: the path (or its parent) appeared.
      const bool was_incomplete_path = path_wd_ < 0;
      Guarded("watch", [&] { EnsureWatches(); });
      if (was_incomplete_path && path_wd_ >= 0) scan = true;
    }
    if (scan) {
      pending = false;
      Guarded("scan", [&] { Scan(authoritative); });
    }
  }

  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  inotify_fd_ = parent_wd_ = path_wd_ = -1;
}

template <class F>
void FileSource::Guarded(std::string_view step, F&& f) {
  // The thread's boundary: a manifest must never end it. Anything thrown (out of memory, a
  // library throwing on hostile content) is logged naming the step and the path, and the loop
  // goes on; the next periodic re-read retries.
  RunGuarded(absl::StrCat("file source ", AV(step), " of ", path_), std::forward<F>(f));
}

void FileSource::DropWatch(int* wd) {
  if (*wd >= 0 && inotify_fd_ >= 0) ::inotify_rm_watch(inotify_fd_, *wd);
  *wd = -1;
}

void FileSource::EnsureWatches() {
  if (inotify_fd_ < 0) {
    inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (inotify_fd_ < 0) {
      const std::string msg = absl::StrCat("unable to create inotify: ", GoErrnoText(errno));
      if (ShouldLog("\n/inotify", msg)) {
        KLOG_ERROR(absl::UnavailableError(msg), "Unable to read config path", "path", path_);
      }
      return;
    }
    last_logged_.erase("\n/inotify");
  }
  if (parent_wd_ < 0 && parent_ != path_) {
    parent_wd_ = ::inotify_add_watch(inotify_fd_, parent_.c_str(), kParentMask);
  }
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) {
    DropWatch(&path_wd_);
    return;
  }
  const bool is_dir = S_ISDIR(st.st_mode);
  if (path_wd_ >= 0 && path_dev_ == st.st_dev && path_ino_ == st.st_ino && path_is_dir_ == is_dir) {
    return;
  }
  DropWatch(&path_wd_);
  if (!is_dir && !S_ISREG(st.st_mode)) return;
  path_wd_ = ::inotify_add_watch(inotify_fd_, path_.c_str(), kPathMask);
  if (path_wd_ < 0) {
    const std::string msg = absl::StrCat("unable to create inotify for path ", log::Quote(path_),
                                         ": ", GoErrnoText(errno));
    if (ShouldLog("\n/inotify-path", msg)) {
      KLOG_ERROR(absl::UnavailableError(msg), "Unable to read config path", "path", path_);
    }
    return;
  }
  last_logged_.erase("\n/inotify-path");
  path_dev_ = st.st_dev;
  path_ino_ = st.st_ino;
  path_is_dir_ = is_dir;
}

void FileSource::HandleInotify(bool* relevant) {
  alignas(inotify_event) char buf[16384];
  while (true) {
    const ssize_t n = ::read(inotify_fd_, buf, sizeof(buf));
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return;  // EAGAIN: drained
    }
    for (ssize_t off = 0; off + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
      off += sizeof(inotify_event) + ev->len;
      const std::string_view name = ev->len > 0 ? std::string_view(ev->name) : std::string_view();
      if (ev->mask & IN_Q_OVERFLOW) {
        *relevant = true;
        continue;
      }
      if (ev->wd == parent_wd_) {
        if (ev->mask & IN_IGNORED) {
          parent_wd_ = -1;
          *relevant = true;
        } else if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
          DropWatch(&parent_wd_);
          *relevant = true;
        } else if (name == base_) {
          *relevant = true;
        }
        // The watch on the path is re-established (or dropped) by the rescan.
        continue;
      }
      if (ev->wd == path_wd_) {
        if (ev->mask & IN_IGNORED) {
          path_wd_ = -1;
          *relevant = true;
        } else if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
          DropWatch(&path_wd_);
          *relevant = true;
        } else if (path_is_dir_ && !name.empty() && name[0] == '.') {
          // Editors' swap and temporary files.
          KLOG_V(4, "Ignored pod manifest, because it starts with dots", "eventName",
                 absl::StrCat(path_, "/", AV(name)));
        } else {
          *relevant = true;
        }
      }
    }
  }
}

bool FileSource::ShouldLog(const std::string& key, const std::string& message) {
  auto [it, inserted] = last_logged_.emplace(key, message);
  if (inserted) return true;
  if (it->second == message) return false;
  it->second = message;
  return true;
}

void FileSource::Scan(bool authoritative) {
  EnsureWatches();
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) {
    const int err = errno;
    cache_.clear();
    if (err == ENOENT || err == ENOTDIR) {
      if (ShouldLog(path_, "missing")) {
        KLOG_ERROR(absl::NotFoundError("path does not exist, ignoring"),
                   "Unable to read config path", "path", path_);
      }
      // An empty snapshot lets the file source count as seen.
      Deliver({});
    } else {
      const std::string msg = PathError("stat", path_, err);
      if (ShouldLog(path_, msg)) {
        KLOG_ERROR(absl::UnknownError(msg), "Unable to read config path", "path", path_);
      }
    }
    scans_.fetch_add(1);
    return;
  }
  if (S_ISDIR(st.st_mode)) {
    last_logged_.erase(path_);
    Deliver(ExtractFromDir(authoritative));
  } else if (S_ISREG(st.st_mode)) {
    auto pod = ExtractFromFile(path_);
    for (auto it = cache_.begin(); it != cache_.end();) {
      it = it->first == path_ ? std::next(it) : cache_.erase(it);
    }
    if (pod.ok()) {
      last_logged_.erase(path_);
      Deliver({*std::move(pod)});
    } else if (ShouldLog(path_, std::string(pod.status().message()))) {
      // As upstream: the previous snapshot stays in force.
      KLOG_ERROR(pod.status(), "Unable to read config path", "path", path_);
    }
  } else {
    cache_.clear();
    if (ShouldLog(path_, "not a directory or file")) {
      KLOG_ERROR(absl::FailedPreconditionError("path is not a directory or file"),
                 "Unable to read config path", "path", path_);
    }
  }
  scans_.fetch_add(1);
}

std::vector<FileSource::PodPtr> FileSource::ExtractFromDir(bool authoritative) {
  std::vector<PodPtr> pods;
  std::vector<std::string> entries;
  DIR* dir = ::opendir(path_.c_str());
  if (dir == nullptr) {
    // filepath.Glob ignores I/O errors and finds nothing.
    const std::string msg = PathError("open", path_, errno);
    if (ShouldLog(path_ + "\n/opendir", msg)) {
      KLOG_ERROR(absl::UnknownError(msg), "Unable to read config path", "path", path_);
    }
    cache_.clear();
    return pods;
  }
  last_logged_.erase(path_ + "\n/opendir");
  while (dirent* de = ::readdir(dir)) {
    const std::string_view name = de->d_name;
    if (name.empty() || name[0] == '.') continue;  // hidden files, "." and ".."
    entries.push_back(absl::StrCat(path_, "/", AV(name)));
  }
  ::closedir(dir);
  std::sort(entries.begin(), entries.end());

  std::map<std::string, std::string> still_logged;
  for (const std::string& file : entries) {
    struct stat st;
    if (::stat(file.c_str(), &st) != 0) {
      const int err = errno;
      if (err == ENOENT && ::lstat(file.c_str(), &st) != 0) continue;  // removed meanwhile
      const std::string msg = PathError("stat", file, err);
      if (ShouldLog(file, msg)) {
        KLOG_ERROR(absl::UnknownError(msg), "Could not get metadata", "path", file);
      }
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      if (ShouldLog(file, "directory")) {
        KLOG_ERROR_NIL("Provided manifest path is a directory, not recursing into manifest path",
                       "path", file);
      }
    } else if (S_ISREG(st.st_mode)) {
      auto pod = ExtractFromFile(file);
      if (pod.ok()) {
        last_logged_.erase(file);
        pods.push_back(*std::move(pod));
        continue;
      }
      if (absl::IsNotFound(pod.status())) continue;  // removed between listing and reading
      if (ShouldLog(file, std::string(pod.status().message()))) {
        KLOG_ERROR(pod.status(), "Could not process manifest file", "path", file);
      }
      // As upstream's watch path, a file that stops parsing between periodic re-reads keeps its
      // pod: editors and config tools truncate before writing, and dropping the pod on that
      // transient state would restart it.
      auto it = cache_.find(file);
      if (!authoritative && it != cache_.end() && it->second.last_good != nullptr) {
        pods.push_back(it->second.last_good);
      }
    } else {
      const std::string mode = GoFileMode(st.st_mode);
      if (ShouldLog(file, "mode " + mode)) {
        KLOG_ERROR_NIL("Manifest path is not a directory or file", "path", file, "mode", mode);
      }
    }
  }
  // Forget cache entries and logged problems of files that are gone, so a file that comes back
  // with the same problem is reported again.
  for (auto it = cache_.begin(); it != cache_.end();) {
    it = std::binary_search(entries.begin(), entries.end(), it->first) ? std::next(it)
                                                                       : cache_.erase(it);
  }
  const std::string prefix = path_ + "/";
  for (auto it = last_logged_.begin(); it != last_logged_.end();) {
    const bool in_dir = it->first.size() > prefix.size() &&
                        it->first.compare(0, prefix.size(), prefix) == 0 &&
                        it->first.find('\n') == std::string::npos;
    if (in_dir && !std::binary_search(entries.begin(), entries.end(), it->first)) {
      it = last_logged_.erase(it);
    } else {
      ++it;
    }
  }
  return pods;
}

absl::StatusOr<FileSource::PodPtr> FileSource::ExtractFromFile(const std::string& file) {
  KLOG_V(3, "Reading config file", "path", file);
  // O_NONBLOCK: never hang on a FIFO swapped in after the stat.
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return absl::NotFoundError(PathError("open", file, err));
    return absl::UnknownError(PathError("open", file, err));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat(AV(file), ": not a regular file, please check config file"));
  }
  // The same 10 MiB bound as a URL body (upstream's maxConfigLength): a manifest is a few KiB,
  // and the bound keeps a huge or growing file from costing more memory than that. A file
  // already larger is not read at all.
  if (st.st_size > static_cast<off_t>(api::kMaxConfigLength)) {
    ::close(fd);
    CacheEntry& entry = cache_[file];
    entry.content.reset();
    entry.status = absl::ResourceExhaustedError("the read limit is reached");
    return entry.status;
  }
  std::string content;
  absl::Status read_status;
  try {
    content.reserve(static_cast<size_t>(std::min<off_t>(st.st_size, api::kMaxConfigLength)) + 1);
    char buf[65536];
    while (true) {
      const ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n < 0) {
        if (errno == EINTR) continue;
        read_status = absl::UnknownError(PathError("read", file, errno));
        break;
      }
      if (n == 0) break;
      content.append(buf, static_cast<size_t>(n));
      if (content.size() > api::kMaxConfigLength) {
        read_status = absl::ResourceExhaustedError("the read limit is reached");
        break;
      }
    }
  } catch (const std::bad_alloc&) {
    read_status = absl::ResourceExhaustedError("out of memory reading manifest");
  }
  ::close(fd);
  CacheEntry& entry = cache_[file];
  if (!read_status.ok()) {
    entry.content.reset();
    entry.status = read_status;
    return read_status;
  }
  if (entry.content.has_value() && *entry.content == content) {
    if (!entry.status.ok()) return entry.status;
    return entry.last_good;
  }
  absl::StatusOr<api::Pod> result;
  try {
    result = api::DecodeStaticPodFile(content, options_.node_name, file, clock_.Now());
  } catch (const std::exception& e) {
    result = absl::InternalError(absl::StrCat(AV(file), ": ", e.what()));
  } catch (...) {
    result = absl::InternalError(absl::StrCat(AV(file), ": unexpected decode failure"));
  }
  entry.content = std::move(content);
  entry.status = result.status();
  if (!result.ok()) return result.status();
  entry.last_good = std::make_shared<const api::Pod>(*std::move(result));
  return entry.last_good;
}

void FileSource::Deliver(std::vector<PodPtr> pods) {
  auto same = [](const PodPtr& a, const PodPtr& b) { return a == b || *a == *b; };
  if (last_delivered_.has_value() && std::equal(last_delivered_->begin(), last_delivered_->end(),
                                                pods.begin(), pods.end(), same)) {
    return;
  }
  last_delivered_ = pods;
  if (!config_.SetSource(kFileSource, std::move(pods), &stopping_)) {
    last_delivered_.reset();  // not delivered: send again next time
  }
}

}  // namespace kubelet::podsource
