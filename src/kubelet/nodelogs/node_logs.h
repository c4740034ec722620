// Serving a validated node log query for services (upstream v1.28 kubelet_server_journal.go
// nodeLogQuery.Copy): each service is asked for in journald (`journalctl --field
// _SYSTEMD_UNIT` lists "<service>.service"), the journald ones are read with one journalctl run
// (JournalctlArgs), the others from their files below the log directory.
//
// Contract:
// - CopyNodeLogs writes to `sink` as the output comes (never the whole output at once), all
//   within one deadline (30 s from the start, on the clock), in upstream's order and with its
//   in-band messages:
//     journald services: journalctl's stdout and stderr as they come; when journalctl cannot
//       be started (not found, ...) and boot is 0: "\nerror: journal output not available\n";
//       a non-zero exit or a kill at the deadline writes nothing more;
//     other services with options given: "\noptions present and query resolved to log files for
//       [a b]\ntry without specifying options\n" and nothing else for them;
//     other services: the first of <dir>/<s>, <dir>/<s>.log, <dir>/<s>/<s>.log that is a
//       regular file (symlinks resolved inside the directory), else "\nlog not found for <s>\n";
//       read errors "\nerror getting log for <s>: <err>\n"; past the deadline "\ncontext error:
//       context deadline exceeded\n".
//   `sink` returning false (the client went away) stops everything: a running journalctl is
//   killed.
// - ProcessRunner runs a command with fork/exec (posix_spawn): stdin /dev/null, stdout and
//   stderr into one pipe read as it fills, default signal dispositions and mask, the kubelet's
//   environment, no other inherited descriptors; killed (SIGKILL) when the deadline on its clock
//   passes or the output sink refuses more. It never blocks past the deadline waiting for
//   output, but waits for the killed process to exit.
// Thread-safety: CopyNodeLogs and a runner may be used from several threads at once.
#ifndef KUBELET_KUBELET_NODELOGS_NODE_LOGS_H_
#define KUBELET_KUBELET_NODELOGS_NODE_LOGS_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "common/clock.h"
#include "kubelet/nodelogs/node_log_query.h"

namespace kubelet::nodelogs {

// Takes output; false: stop (the reader has gone).
using OutputSink = std::function<bool(std::string_view)>;

struct CommandResult {
  enum class Outcome {
    kExited,         // exit_code holds the status (0: success)
    kKilled,         // killed at the deadline, or because the sink refused output
    kSignaled,       // died of a signal of its own
    kFailedToStart,  // error holds why (Go's exec error: not an *exec.ExitError)
  };
  Outcome outcome = Outcome::kExited;
  int exit_code = 0;
  std::string error;
  bool ok() const { return outcome == Outcome::kExited && exit_code == 0; }
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs argv (argv[0] looked up in PATH) until it exits or `deadline` passes; its combined
  // stdout and stderr go to `out` as they come.
  virtual CommandResult Run(const std::vector<std::string>& argv, absl::Time deadline,
                            const OutputSink& out) = 0;
};

class ProcessRunner : public CommandRunner {
 public:
  explicit ProcessRunner(const Clock& clock) : clock_(clock) {}
  CommandResult Run(const std::vector<std::string>& argv, absl::Time deadline,
                    const OutputSink& out) override;

 private:
  const Clock& clock_;
};

struct CopyOptions {
  std::string log_dir = kNodeLogDir;
  std::string journalctl = kJournalctl;
  absl::Duration timeout = absl::Seconds(30);
};

// `query` has services (validated); its files are not looked at.
void CopyNodeLogs(const NodeLogQuery& query, const CopyOptions& options, CommandRunner& runner,
                  const Clock& clock, const OutputSink& sink);

}  // namespace kubelet::nodelogs

#endif  // KUBELET_KUBELET_NODELOGS_NODE_LOGS_H_
