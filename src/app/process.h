// What belongs to the kubelet process rather than to a node (app::Run and the hollow mode share
// them): its own OOM score and open-files limit, the shutdown signals, the wait for them.
// Called from the start-up thread.
#ifndef KUBELET_APP_PROCESS_H_
#define KUBELET_APP_PROCESS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace kubelet::app {

// The process settings start-up applies: oomScoreAdj (ApplyOOMScoreAdj) and maxOpenFiles
// (SetMaxOpenFiles).
inline constexpr std::string_view kProcessConfigFields[] = {"oomScoreAdj", "maxOpenFiles"};

// Sets our own oom_score_adj. Without CAP_SYS_RESOURCE a negative value is refused (EACCES);
// upstream logs that and carries on.
absl::Status ApplyOOMScoreAdj(int value);

// RLIMIT_NOFILE, soft and hard.
absl::Status SetMaxOpenFiles(int64_t max);

// Turns off abseil's lock-order checking for the process. The distribution's abseil is built
// without NDEBUG, as a debug build is, so absl::Mutex checks every Lock against a process-wide
// graph of the lock orders it has seen (a global spinlock on every Lock, a graph update on every
// Mutex's destruction) and aborts the process on an order it thinks could deadlock. A release
// build of abseil does neither. Tests, which do not call this, keep the checks. Call first.
void DisableLockOrderChecks();

// Blocks SIGTERM/SIGINT for every thread (call before any thread starts) and returns a
// signalfd that reports them. SIGPIPE is ignored, as the Go runtime ignores it for everything
// but stdout/stderr: a peer that hangs up on a socket or pipe (an HTTP client, a probe, a
// runtime stream) must cost an EPIPE, never the process.
int BlockShutdownSignals();

// Blocks until SIGTERM/SIGINT (on `signal_fd`) or, when `lock_watch_fd` >= 0, an inotify event
// on the lock file.
void WaitForShutdown(int signal_fd, int lock_watch_fd, const std::string& lock_file);

}  // namespace kubelet::app

#endif  // KUBELET_APP_PROCESS_H_
