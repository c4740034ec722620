#include "app/process.h"

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/log.h"

namespace kubelet::app {

// Sets our own oom_score_adj. Without CAP_SYS_RESOURCE a negative value is refused (EACCES);
// upstream logs that and carries on.
absl::Status ApplyOOMScoreAdj(int value) {
  std::ofstream f("/proc/self/oom_score_adj");
  if (!f) {
    return absl::UnavailableError(
        absl::StrCat("failed to open /proc/self/oom_score_adj: ", std::strerror(errno)));
  }
  f << value;
  f.flush();
  if (!f) {
    return absl::PermissionDeniedError(
        absl::StrCat("failed to set oom_score_adj to ", value, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status SetMaxOpenFiles(int64_t max) {
  struct rlimit rl;
  rl.rlim_cur = static_cast<rlim_t>(max);
  rl.rlim_max = static_cast<rlim_t>(max);
  if (::setrlimit(RLIMIT_NOFILE, &rl) != 0) {
    return absl::UnavailableError(
        absl::StrCat("failed to set max open files to ", max, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

void DisableLockOrderChecks() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

// Blocks SIGTERM/SIGINT for every thread (call before any thread starts) and returns a
// signalfd that reports them. SIGPIPE is ignored, as the Go runtime ignores it for everything
// but stdout/stderr: a peer that hangs up on a socket or pipe (an HTTP client, a probe, a
// runtime stream) must cost an EPIPE, never the process.
int BlockShutdownSignals() {
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return ::signalfd(-1, &set, SFD_CLOEXEC);
}

// Blocks until SIGTERM/SIGINT (on `signal_fd`) or an inotify event on the lock file.
void WaitForShutdown(int signal_fd, int lock_watch_fd, const std::string& lock_file) {
  for (;;) {
    struct pollfd fds[2] = {{signal_fd, POLLIN, 0}, {lock_watch_fd, POLLIN, 0}};
    int n = ::poll(fds, lock_watch_fd >= 0 ? 2 : 1, -1);
    if (n < 0 && errno == EINTR) continue;
    if (fds[0].revents & POLLIN) {
      struct signalfd_siginfo si;
      ssize_t r = ::read(signal_fd, &si, sizeof(si));
      (void)r;
      KLOG_INFO("Received signal, shutting down", "signal",
                strsignal(static_cast<int>(si.ssi_signo)));
      return;
    }
    if (lock_watch_fd >= 0 && (fds[1].revents & POLLIN)) {
      KLOG_INFO("inotify event on the lock file, exiting", "path", lock_file);
      return;
    }
  }
}

}  // namespace kubelet::app
