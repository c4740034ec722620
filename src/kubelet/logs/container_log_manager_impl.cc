#include "kubelet/logs/container_log_manager_impl.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/quantity.h"
#include "common/guarded.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/logs/log_reader.h"

namespace kubelet::logs {
namespace {

constexpr char kPodNamespaceLabel[] = "io.kubernetes.pod.namespace";
constexpr char kPodNameLabel[] = "io.kubernetes.pod.name";
constexpr char kPodUIDLabel[] = "io.kubernetes.pod.uid";
constexpr char kContainerNameLabel[] = "io.kubernetes.container.name";
constexpr char kRestartCountAnnotation[] = "io.kubernetes.container.restartCount";

// Upstream's rotated-file naming: "<log>.<20060102-150405>", compressed "<...>.gz".
constexpr char kTimestampFormat[] = "%Y%m%d-%H%M%S";
constexpr char kCompressSuffix[] = ".gz";
constexpr char kTmpSuffix[] = ".tmp";

std::string ErrnoText(int err) { return std::strerror(err); }

// Go's %q.
std::string Q(std::string_view s) { return log::Quote(s); }

absl::Status ErrnoStatus(const std::string& what, int err) {
  return absl::InternalError(absl::StrCat(what, ": ", ErrnoText(err)));
}

int64_t RestartCount(const runtime::v1::Container& c) {
  auto it = c.annotations().find(kRestartCountAnnotation);
  int64_t n = 0;
  if (it != c.annotations().end() && absl::SimpleAtoi(it->second, &n)) return n;
  return c.metadata().attempt();
}

// Files matching "<log>.*", sorted (oldest first thanks to the timestamp naming).
absl::StatusOr<std::vector<std::string>> RotatedFiles(const std::string& log) {
  // Escape glob metacharacters in the fixed part of the pattern.
  std::string pattern;
  for (char c : log) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') pattern.push_back('\\');
    pattern.push_back(c);
  }
  pattern += ".*";
  glob_t g;
  int r = ::glob(pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> out;
  if (r == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  if (r != 0 && r != GLOB_NOMATCH) {
    return absl::InternalError(
        absl::StrFormat("failed to list all log files with pattern %s", Q(pattern)));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Whether a rotated file is still needed: temporary files never are, compressed files always
// are, an uncompressed file is not once its compressed copy exists.
bool IsInUse(const std::string& l, const std::vector<std::string>& logs) {
  if (absl::EndsWith(l, kTmpSuffix)) return false;
  if (absl::EndsWith(l, kCompressSuffix)) return true;
  const std::string compressed = l + kCompressSuffix;
  return std::find(logs.begin(), logs.end(), compressed) == logs.end();
}

absl::Status CompressLog(const std::string& log) {
  int in = ::open(log.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return ErrnoStatus(absl::StrFormat("failed to open log %s", Q(log)), errno);
  const std::string tmp = log + kTmpSuffix;
  int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    int err = errno;
    ::close(in);
    return ErrnoStatus(absl::StrFormat("failed to create temporary log %s", Q(tmp)), err);
  }
  gzFile gz = ::gzdopen(out, "wb");
  if (gz == nullptr) {
    ::close(in);
    ::close(out);
    return absl::InternalError(absl::StrFormat("failed to create gzip writer for %s", Q(tmp)));
  }
  std::vector<char> buf(64 * 1024);
  absl::Status status;
  while (true) {
    ssize_t n = ::read(in, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      status = ErrnoStatus(absl::StrFormat("failed to compress log %s", Q(log)), errno);
      break;
    }
    if (n == 0) break;
    if (::gzwrite(gz, buf.data(), static_cast<unsigned>(n)) != n) {
      status = absl::InternalError(absl::StrFormat("failed to compress log %s", Q(log)));
      break;
    }
  }
  ::close(in);
  // gzclose closes `out` too.
  if (::gzclose(gz) != Z_OK && status.ok()) {
    status = absl::InternalError(absl::StrFormat("failed to close compressed log %s", Q(tmp)));
  }
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return status;
  }
  const std::string compressed = log + kCompressSuffix;
  if (::rename(tmp.c_str(), compressed.c_str()) != 0) {
    return ErrnoStatus(absl::StrFormat("failed to rename %s to %s", Q(tmp), Q(compressed)), errno);
  }
  if (::unlink(log.c_str()) != 0) {
    return ErrnoStatus(absl::StrFormat("failed to remove log %s after compress", Q(log)), errno);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ContainerLogManagerImpl>> NewContainerLogManager(
    cri::RuntimeService& runtime, Clock& clock, ContainerLogManagerOptions options) {
  if (options.max_files <= 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid MaxFiles ", options.max_files, ", must be > 1"));
  }
  auto size = api::ParseQuantity(options.max_size);
  if (!size.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("failed to parse container log max size %s: %s", Q(options.max_size),
                        size.status().message()));
  }
  if (options.monitor_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("container log monitor interval must be positive");
  }
  int64_t max_size = size->Value();
  return std::make_unique<ContainerLogManagerImpl>(runtime, clock, std::move(options), max_size);
}

ContainerLogManagerImpl::ContainerLogManagerImpl(cri::RuntimeService& runtime, Clock& clock,
                                                 ContainerLogManagerOptions options,
                                                 int64_t max_size_bytes)
    : runtime_(runtime),
      clock_(clock),
      options_(std::move(options)),
      max_size_bytes_(max_size_bytes),
      stop_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

ContainerLogManagerImpl::~ContainerLogManagerImpl() {
  Stop();
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

void ContainerLogManagerImpl::Start() {
  absl::MutexLock lock(&mu_);
  if (started_ || stopped_) return;
  started_ = true;
  if (max_size_bytes_ < 0) {
    KLOG_INFO("Container log rotation is disabled", "containerLogMaxSize", options_.max_size);
    return;
  }
  thread_ = GuardedThread("log rotation loop", [this] { Loop(); });
}

void ContainerLogManagerImpl::Stop() {
  std::thread t;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    t = std::move(thread_);
  }
  if (stop_fd_ >= 0) {
    uint64_t one = 1;
    (void)!::write(stop_fd_, &one, sizeof(one));
  }
  if (t.joinable()) t.join();
}

void ContainerLogManagerImpl::Loop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      // Waits the interval, or less when Stop() is called.
      mu_.AwaitWithTimeout(absl::Condition(&stopped_), options_.monitor_interval);
      if (stopped_) return;
    }
    RunGuarded("log rotation round", [this] {
      absl::Status st = RotateLogs();
      if (!st.ok()) KLOG_ERROR(st, "Failed to rotate container logs");
    });
  }
}

absl::Status ContainerLogManagerImpl::RotateLogs() {
  absl::MutexLock round(&rotate_mu_);
  auto containers = runtime_.ListContainers(nullptr);
  if (!containers.ok()) {
    return absl::Status(containers.status().code(),
                        absl::StrCat("failed to list containers: ", containers.status().message()));
  }
  // A container's log path is fixed when it is created: the runtime is asked once per
  // container, not every round.
  std::map<std::string, std::string> log_paths;
  for (const runtime::v1::Container& c : *containers) {
    // Only running containers write; a stopped one must not get a new empty log.
    if (c.state() != runtime::v1::CONTAINER_RUNNING) continue;
    const std::string& id = c.id();
    std::string path;
    if (auto known = log_paths_.find(id); known != log_paths_.end()) {
      path = known->second;
    } else {
      auto resp = runtime_.ContainerStatus(id, false);
      if (!resp.ok()) {
        KLOG_ERROR(resp.status(), "Failed to get container status", "containerID", id);
        continue;
      }
      if (!resp->has_status()) {
        KLOG_ERROR(absl::OkStatus(), "Container status is nil", "containerID", id);
        continue;
      }
      path = resp->status().log_path();
    }
    log_paths[id] = path;
    if (path.empty()) continue;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      if (errno != ENOENT) {
        KLOG_ERROR(ErrnoStatus("stat", errno), "Failed to stat container log", "path", path);
        continue;
      }
      // A failed reopen after a rotation can leave the log missing: recreate it.
      if (absl::Status r = runtime_.ReopenContainerLog(id); !r.ok()) {
        KLOG_ERROR(r, "Container log doesn't exist, reopen container log failed", "containerID", id,
                   "path", path);
        continue;
      }
      if (::stat(path.c_str(), &st) != 0) {
        KLOG_ERROR(ErrnoStatus("stat", errno), "Failed to stat container log after reopen", "path",
                   path);
        continue;
      }
    }
    if (st.st_size < max_size_bytes_) continue;
    if (absl::Status r = RotateLog(id, path); !r.ok()) {
      KLOG_ERROR(r, "Failed to rotate log for container", "path", path, "containerID", id);
    }
  }
  log_paths_ = std::move(log_paths);
  return absl::OkStatus();
}

absl::Status ContainerLogManagerImpl::RotateLog(const std::string& id, const std::string& log) {
  auto listed = RotatedFiles(log);
  if (!listed.ok()) return listed.status();
  std::vector<std::string> logs = std::move(*listed);

  // Leftovers of an interrupted earlier round.
  std::vector<std::string> in_use;
  for (const std::string& l : logs) {
    if (IsInUse(l, logs)) {
      in_use.push_back(l);
    } else if (::unlink(l.c_str()) != 0 && errno != ENOENT) {
      return ErrnoStatus(absl::StrFormat("failed to remove unused log %s", Q(l)), errno);
    }
  }
  logs = std::move(in_use);

  // Besides the current log and the one about to be rotated, keep max_files - 2 rotated files,
  // removing the oldest first so that readers of the newer ones are not disturbed.
  const size_t keep = static_cast<size_t>(std::max(0, options_.max_files - 2));
  size_t remove = logs.size() > keep ? logs.size() - keep : 0;
  for (size_t i = 0; i < remove; ++i) {
    if (::unlink(logs[i].c_str()) != 0 && errno != ENOENT) {
      return ErrnoStatus(absl::StrFormat("failed to remove old log %s", Q(logs[i])), errno);
    }
  }
  logs.erase(logs.begin(), logs.begin() + static_cast<std::ptrdiff_t>(remove));

  for (const std::string& l : logs) {
    if (absl::EndsWith(l, kCompressSuffix)) continue;
    if (absl::Status st = CompressLog(l); !st.ok()) {
      return absl::InternalError(
          absl::StrFormat("failed to compress log %s: %s", Q(l), st.message()));
    }
  }

  const std::string rotated = absl::StrCat(
      log, ".", absl::FormatTime(kTimestampFormat, clock_.Now(), absl::LocalTimeZone()));
  if (::rename(log.c_str(), rotated.c_str()) != 0) {
    return ErrnoStatus(absl::StrFormat("failed to rotate log %s to %s", Q(log), Q(rotated)), errno);
  }
  if (absl::Status st = runtime_.ReopenContainerLog(id); !st.ok()) {
    // Put the file back so the next round can try again.
    if (::rename(rotated.c_str(), log.c_str()) != 0) {
      KLOG_ERROR(ErrnoStatus("rename", errno), "Failed to rename rotated log", "rotatedLog",
                 rotated, "newLog", log, "containerID", id);
    }
    return absl::Status(st.code(), absl::StrFormat("failed to rotate log %s: failed to reopen "
                                                   "container log %s: %s",
                                                   Q(log), Q(id), st.message()));
  }
  KLOG_V(4, "Rotated container log", "containerID", id, "path", log, "rotatedLog", rotated);
  return absl::OkStatus();
}

absl::Status ContainerLogManagerImpl::GetContainerLogs(const std::string& namespace_,
                                                       const std::string& pod,
                                                       const std::string& container,
                                                       const LogOptions& options,
                                                       const LogSink& sink) {
  runtime::v1::ContainerFilter filter;
  (*filter.mutable_label_selector())[kPodNamespaceLabel] = namespace_;
  (*filter.mutable_label_selector())[kPodNameLabel] = pod;
  (*filter.mutable_label_selector())[kContainerNameLabel] = container;
  auto listed = runtime_.ListContainers(&filter);
  if (!listed.ok()) return listed.status();
  std::vector<runtime::v1::Container> instances = std::move(*listed);

  if (instances.empty()) {
    runtime::v1::PodSandboxFilter sf;
    (*sf.mutable_label_selector())[kPodNamespaceLabel] = namespace_;
    (*sf.mutable_label_selector())[kPodNameLabel] = pod;
    auto sandboxes = runtime_.ListPodSandbox(&sf);
    if (sandboxes.ok() && sandboxes->empty()) {
      return absl::NotFoundError(
          absl::StrFormat("pod %s cannot be found - no logs available", Q(pod)));
    }
    return absl::NotFoundError(
        absl::StrFormat("container %s in pod %s is not available", Q(container), Q(pod)));
  }

  // A pod deleted and created again under the same name: the newest UID is the pod.
  std::string uid;
  int64_t newest = -1;
  for (const auto& c : instances) {
    if (c.created_at() > newest) {
      newest = c.created_at();
      auto it = c.labels().find(kPodUIDLabel);
      uid = it == c.labels().end() ? "" : it->second;
    }
  }
  std::erase_if(instances, [&](const runtime::v1::Container& c) {
    auto it = c.labels().find(kPodUIDLabel);
    return (it == c.labels().end() ? "" : it->second) != uid;
  });
  std::sort(instances.begin(), instances.end(),
            [](const runtime::v1::Container& a, const runtime::v1::Container& b) {
              int64_t ra = RestartCount(a), rb = RestartCount(b);
              if (ra != rb) return ra > rb;
              return a.created_at() > b.created_at();
            });

  const runtime::v1::Container* target = nullptr;
  if (options.previous) {
    if (instances.size() < 2) {
      return absl::NotFoundError(absl::StrFormat(
          "previous terminated container %s in pod %s not found", Q(container), Q(pod)));
    }
    target = &instances[1];
  } else {
    const auto state = instances[0].state();
    if (state == runtime::v1::CONTAINER_RUNNING || state == runtime::v1::CONTAINER_EXITED) {
      target = &instances[0];
    } else if (instances.size() >= 2) {
      target = &instances[1];  // the new instance has not started: the last one terminated
    } else {
      return absl::FailedPreconditionError(absl::StrFormat(
          "container %s in pod %s is waiting to start: ContainerCreating", Q(container), Q(pod)));
    }
  }

  const std::string& id = target->id();
  auto status = runtime_.ContainerStatus(id, false);
  if (!status.ok()) {
    KLOG_V(4, "Failed to get container status", "containerID", id, "err", status.status());
    return absl::Status(status.status().code(),
                        absl::StrCat("unable to retrieve container logs for ", id));
  }
  if (!status->has_status()) return absl::UnknownError("container status is nil");
  std::string path = status->status().log_path();
  if (path.empty()) {
    return absl::NotFoundError(
        absl::StrFormat("container %s in pod %s has no log file", Q(container), Q(pod)));
  }
  if (path[0] != '/') {
    // Runtimes report the absolute path; fall back to the kubelet's layout.
    path = absl::StrCat(options_.pod_logs_root, "/", namespace_, "_", pod, "_", uid, "/", path);
  }
  FollowOptions follow;
  follow.runtime = &runtime_;
  follow.stop_fd = stop_fd_;
  follow.force_check_period = options_.follow_check_period;
  return ReadLogs(path, id, NewReadOptions(options, clock_.Now()), follow, sink);
}

}  // namespace kubelet::logs
