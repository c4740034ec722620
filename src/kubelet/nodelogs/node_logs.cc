#include "kubelet/nodelogs/node_logs.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/go_compat.h"
#include "kubelet/nodelogs/secure_join.h"

extern char** environ;

namespace kubelet::nodelogs {
namespace {

constexpr size_t kUnitListLimit = 16 << 20;  // what the journald check keeps of its output
constexpr char kDeadlineExceeded[] = "context deadline exceeded";

// Go's exec error for a command that could not start.
std::string StartError(const std::string& name, int err) {
  if (err == ENOENT && name.find('/') == std::string::npos) {
    return absl::StrCat("exec: \"", name, "\": executable file not found in $PATH");
  }
  return absl::StrCat("fork/exec ", name, ": ", GoErrnoText(err));
}

class FileActions {
 public:
  FileActions() { ::posix_spawn_file_actions_init(&fa_); }
  ~FileActions() { ::posix_spawn_file_actions_destroy(&fa_); }
  posix_spawn_file_actions_t* get() { return &fa_; }

 private:
  posix_spawn_file_actions_t fa_;
};

class SpawnAttr {
 public:
  SpawnAttr() { ::posix_spawnattr_init(&attr_); }
  ~SpawnAttr() { ::posix_spawnattr_destroy(&attr_); }
  posix_spawnattr_t* get() { return &attr_; }

 private:
  posix_spawnattr_t attr_;
};

}  // namespace

CommandResult ProcessRunner::Run(const std::vector<std::string>& argv, absl::Time deadline,
                                 const OutputSink& out) {
  CommandResult result;
  if (argv.empty()) {
    result.outcome = CommandResult::Outcome::kFailedToStart;
    result.error = "exec: no command";
    return result;
  }
  if (clock_.Now() >= deadline) {
    // exec.CommandContext refuses to start once its context is done.
    result.outcome = CommandResult::Outcome::kFailedToStart;
    result.error = kDeadlineExceeded;
    return result;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result.outcome = CommandResult::Outcome::kFailedToStart;
    result.error = absl::StrCat("pipe: ", GoErrnoText(errno));
    return result;
  }
  FileActions fa;
  ::posix_spawn_file_actions_addopen(fa.get(), 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(fa.get(), fds[1], 1);
  ::posix_spawn_file_actions_adddup2(fa.get(), fds[1], 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  ::posix_spawn_file_actions_addclosefrom_np(fa.get(), 3);
#endif
  SpawnAttr attr;
  sigset_t defaults, mask;
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD}) {
    sigaddset(&defaults, sig);
  }
  sigemptyset(&mask);
  ::posix_spawnattr_setsigdefault(attr.get(), &defaults);
  ::posix_spawnattr_setsigmask(attr.get(), &mask);
  ::posix_spawnattr_setflags(attr.get(), POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, argv[0].c_str(), fa.get(), attr.get(), args.data(), environ);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    result.outcome = CommandResult::Outcome::kFailedToStart;
    result.error = StartError(argv[0], rc);
    return result;
  }

  std::unique_ptr<Timer> timer = clock_.NewTimer();
  timer->Reset(deadline);
  bool killed = false;
  bool reading = true;
  auto kill = [&] {
    if (!killed) ::kill(pid, SIGKILL);
    killed = true;
  };
  std::vector<char> buf(64 << 10);
  while (reading) {
    pollfd p[2] = {{fds[0], POLLIN, 0}, {timer->fd(), POLLIN, 0}};
    int n = ::poll(p, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      kill();
      break;
    }
    if (p[1].revents & POLLIN) {
      timer->Clear();
      if (killed) break;  // the grace period after the kill is over: stop waiting for output
      kill();
      // The output written before the kill is still passed on; a process that left the pipe
      // open in a child of its own is not waited for beyond a short grace period.
      timer->Reset(clock_.Now() + absl::Seconds(1));
    }
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t got = ::read(fds[0], buf.data(), buf.size());
      if (got < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        break;
      }
      if (got == 0) break;
      if (!out(std::string_view(buf.data(), static_cast<size_t>(got)))) {
        kill();
        reading = false;
      }
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (killed) {
    result.outcome = CommandResult::Outcome::kKilled;
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.outcome = CommandResult::Outcome::kSignaled;
  }
  return result;
}

namespace {

struct Copier {
  const NodeLogQuery& query;
  const CopyOptions& options;
  CommandRunner& runner;
  const Clock& clock;
  const OutputSink& sink;
  absl::Time deadline;
  bool gone = false;

  bool Write(std::string_view data) {
    if (gone) return false;
    if (!sink(data)) gone = true;
    return !gone;
  }
  bool Expired() const { return clock.Now() >= deadline; }

  // checkForNativeLogger: whether journald knows "<service>.service".
  bool LogsToJournal(const std::string& service) {
    std::string units;
    CommandResult r = runner.Run({options.journalctl, "--field", "_SYSTEMD_UNIT"}, deadline,
                                 [&units](std::string_view data) {
                                   if (units.size() < kUnitListLimit) units.append(data);
                                   return true;
                                 });
    if (!r.ok()) return false;
    return units.find(service + ".service") != std::string::npos;
  }

  void CopyServiceLogs(const std::vector<std::string>& services, int64_t boot) {
    std::vector<std::string> argv = {options.journalctl};
    std::vector<std::string> args = JournalctlArgs(query, services);
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r =
        runner.Run(argv, deadline, [this](std::string_view data) { return Write(data); });
    if (r.outcome == CommandResult::Outcome::kFailedToStart && boot == 0) {
      Write("\nerror: journal output not available\n");
    }
  }

  enum class FileOutcome { kCopied, kNotExist, kError };

  // heuristicsCopyFileLog: a non-directory at `path`, copied to the sink.
  FileOutcome CopyFile(const std::string& path, std::string* err) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) return FileOutcome::kNotExist;
      *err = absl::StrCat("stat ", path, ": ", GoErrnoText(errno));
      return FileOutcome::kError;
    }
    if (S_ISDIR(st.st_mode)) return FileOutcome::kNotExist;
    // Non-blocking so that a FIFO cannot hold the request forever.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      if (errno == ENOENT) return FileOutcome::kNotExist;
      *err = absl::StrCat("open ", path, ": ", GoErrnoText(errno));
      return FileOutcome::kError;
    }
    std::vector<char> buf(32 << 10);
    FileOutcome outcome = FileOutcome::kCopied;
    for (;;) {
      if (Expired()) {
        *err = kDeadlineExceeded;
        outcome = FileOutcome::kError;
        break;
      }
      ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) break;
        *err = absl::StrCat("read ", path, ": ", GoErrnoText(errno));
        outcome = FileOutcome::kError;
        break;
      }
      if (n == 0) break;
      if (!Write(std::string_view(buf.data(), static_cast<size_t>(n)))) break;
    }
    ::close(fd);
    return outcome;
  }

  // heuristicsCopyFileLogs: <dir>/<s>, <dir>/<s>.log, <dir>/<s>/<s>.log, first found wins.
  void CopyServiceFile(const std::string& service) {
    const std::string names[] = {service, absl::StrCat(service, ".log"),
                                 absl::StrCat(service, "/", service, ".log")};
    FileOutcome outcome = FileOutcome::kNotExist;
    std::string err;
    for (const std::string& name : names) {
      absl::StatusOr<std::string> path = SecureJoin(options.log_dir, name);
      if (!path.ok()) {
        outcome = FileOutcome::kError;
        err = std::string(path.status().message());
        break;
      }
      outcome = CopyFile(*path, &err);
      if (outcome != FileOutcome::kNotExist) break;
      if (gone) return;
    }
    if (outcome == FileOutcome::kNotExist) {
      Write(absl::StrCat("\nlog not found for ", service, "\n"));
    } else if (outcome == FileOutcome::kError) {
      Write(absl::StrCat("\nerror getting log for ", service, ": ", err, "\n"));
    }
  }

  void Run() {
    if (Expired()) return;
    const int64_t boot = query.options.boot.value_or(0);
    std::vector<std::string> journal, files;
    for (const std::string& s : query.services) {
      (LogsToJournal(s) ? journal : files).push_back(s);
    }
    if (!journal.empty()) CopyServiceLogs(journal, boot);
    if (gone || files.empty()) return;
    if (!query.options.empty()) {
      Write(absl::StrCat("\noptions present and query resolved to log files for ",
                         GoStringList(files), "\ntry without specifying options\n"));
      return;
    }
    if (Expired()) {
      Write(absl::StrCat("\ncontext error: ", kDeadlineExceeded, "\n"));
      return;
    }
    for (const std::string& s : files) {
      CopyServiceFile(s);
      if (gone) return;
    }
  }
};

}  // namespace

void CopyNodeLogs(const NodeLogQuery& query, const CopyOptions& options, CommandRunner& runner,
                  const Clock& clock, const OutputSink& sink) {
  Copier c{query, options, runner, clock, sink, clock.Now() + options.timeout};
  c.Run();
}

}  // namespace kubelet::nodelogs
