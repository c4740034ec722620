// Running a credential provider plugin: the process (posix_spawn in its own process group,
// pipes polled against a Clock timer, the group killed at the timeout, the child always reaped)
// and the request / response wire format.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/go_json.h"
#include "common/duration.h"
#include "common/go_compat.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/credentialprovider/plugin.h"
#include "kubelet/credentialprovider/plugin_internal.h"
#include "metrics/metrics.h"

extern char** environ;  // NOLINT: POSIX

namespace kubelet::credentialprovider {
namespace {

using internal::Json;

constexpr std::string_view kResponseKind = "CredentialProviderResponse";

// ---- the process ----

// Moves `fd` above the standard descriptors (so the child's dup2 onto 0-2 never meets itself).
int AboveStdio(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

bool MakePipe(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  fds[0] = AboveStdio(fds[0]);
  fds[1] = AboveStdio(fds[1]);
  if (fds[0] < 0 || fds[1] < 0) {
    if (fds[0] >= 0) ::close(fds[0]);
    if (fds[1] >= 0) ::close(fds[1]);
    return false;
  }
  return true;
}

void CloseFd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

void SetNonBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Blocks SIGPIPE on this thread while it writes to the child's stdin, and swallows a SIGPIPE the
// writes raised (the kubelet ignores SIGPIPE anyway; a unit test binary may not).
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
  }
  ~SigpipeGuard() {
    if (!was_pending_) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGPIPE);
        const timespec zero{};
        while (sigtimedwait(&set, nullptr, &zero) < 0 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t old_;
  bool was_pending_ = false;
};

struct ProcessResult {
  std::string start_error;  // non-empty: the process did not start
  bool timed_out = false;
  bool overflow = false;  // stdout exceeded the bound
  int wait_status = 0;
  std::string out;
  std::string err;
};

// Go's syscall.Signal names for the signals a plugin is likely to die of.
std::string SignalName(int sig) {
  static const std::map<int, std::string_view> kNames = {
      {SIGHUP, "hangup"},
      {SIGINT, "interrupt"},
      {SIGQUIT, "quit"},
      {SIGILL, "illegal instruction"},
      {SIGTRAP, "trace/breakpoint trap"},
      {SIGABRT, "aborted"},
      {SIGBUS, "bus error"},
      {SIGFPE, "floating point exception"},
      {SIGKILL, "killed"},
      {SIGUSR1, "user defined signal 1"},
      {SIGSEGV, "segmentation fault"},
      {SIGUSR2, "user defined signal 2"},
      {SIGPIPE, "broken pipe"},
      {SIGALRM, "alarm clock"},
      {SIGTERM, "terminated"},
      {SIGXCPU, "CPU time limit exceeded"},
      {SIGXFSZ, "file size limit exceeded"},
      {SIGSYS, "bad system call"},
  };
  if (auto it = kNames.find(sig); it != kNames.end()) return std::string(it->second);
  return absl::StrCat("signal ", sig);
}

// Go's ProcessState.String() for a process that did not exit 0; empty for success.
std::string ExitText(int status) {
  if (WIFEXITED(status)) {
    if (WEXITSTATUS(status) == 0) return "";
    return absl::StrCat("exit status ", WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    std::string s = absl::StrCat("signal: ", SignalName(WTERMSIG(status)));
    if (WCOREDUMP(status)) absl::StrAppend(&s, " (core dumped)");
    return s;
  }
  return absl::StrCat("wait status ", status);
}

// One read from `fd` into `out` (keeping at most `keep` bytes; `total` counts all of them), so
// the loop goes back to its timer between reads however fast the plugin writes. Returns false at
// EOF or on an error.
bool ReadSome(int fd, std::string* out, size_t keep, size_t* total) {
  char buf[16384];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n > 0) {
      *total += static_cast<size_t>(n);
      if (out->size() < keep) {
        out->append(buf, std::min(static_cast<size_t>(n), keep - out->size()));
      }
      return true;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

ProcessResult RunProcess(const std::string& path, const std::vector<std::string>& args,
                         const std::vector<std::string>& env, std::string_view input, Clock& clock,
                         const ExecOptions& options) {
  ProcessResult res;
  int in[2], out[2], err[2];
  if (!MakePipe(in)) {
    res.start_error = absl::StrCat("pipe: ", GoErrnoText(errno));
    return res;
  }
  if (!MakePipe(out)) {
    res.start_error = absl::StrCat("pipe: ", GoErrnoText(errno));
    CloseFd(&in[0]);
    CloseFd(&in[1]);
    return res;
  }
  if (!MakePipe(err)) {
    res.start_error = absl::StrCat("pipe: ", GoErrnoText(errno));
    for (int* fd : {&in[0], &in[1], &out[0], &out[1]}) CloseFd(fd);
    return res;
  }

  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(path.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t mask;
  sigemptyset(&mask);
  posix_spawnattr_setsigmask(&attr, &mask);
  // Dispositions the kubelet sets to "ignore" would survive exec; the plugin gets the defaults.
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD,
                  SIGXFSZ, SIGTTIN, SIGTTOU, SIGTSTP}) {
    sigaddset(&defaults, sig);
  }
  posix_spawnattr_setsigdefault(&attr, &defaults);

  const absl::Time start = clock.Now();
  std::unique_ptr<Timer> timer = clock.NewTimer();
  timer->Reset(start + options.timeout);

  pid_t pid = -1;
  const int spawn_err =
      ::posix_spawn(&pid, path.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  CloseFd(&in[0]);
  CloseFd(&out[1]);
  CloseFd(&err[1]);
  if (spawn_err != 0) {
    res.start_error = absl::StrCat("fork/exec ", path, ": ", GoErrnoText(spawn_err));
    for (int* fd : {&in[1], &out[0], &err[0]}) CloseFd(fd);
    return res;
  }

  int in_w = in[1], out_r = out[0], err_r = err[0];
  SetNonBlocking(in_w);
  SetNonBlocking(out_r);
  SetNonBlocking(err_r);
  if (input.empty()) CloseFd(&in_w);
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  bool reaped = false;
  size_t written = 0, out_total = 0, err_total = 0;

  auto try_reap = [&] {
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(pid, &status, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == pid) {
      reaped = true;
      res.wait_status = status;
      CloseFd(&pidfd);
    }
  };

  {
    SigpipeGuard sigpipe;
    while (true) {
      if (!reaped && pidfd < 0) try_reap();
      if (out_r < 0 && err_r < 0 && reaped) break;
      pollfd fds[5];
      int n = 0;
      int i_in = -1, i_out = -1, i_err = -1, i_pid = -1;
      if (in_w >= 0) {
        i_in = n;
        fds[n++] = pollfd{in_w, POLLOUT, 0};
      }
      if (out_r >= 0) {
        i_out = n;
        fds[n++] = pollfd{out_r, POLLIN, 0};
      }
      if (err_r >= 0) {
        i_err = n;
        fds[n++] = pollfd{err_r, POLLIN, 0};
      }
      if (!reaped && pidfd >= 0) {
        i_pid = n;
        fds[n++] = pollfd{pidfd, POLLIN, 0};
      }
      const int i_timer = n;
      fds[n++] = pollfd{timer->fd(), POLLIN, 0};
      // Without a pidfd the child's exit is noticed by polling waitpid.
      const int wait_ms = (!reaped && pidfd < 0) ? 10 : -1;
      const int ready = ::poll(fds, static_cast<nfds_t>(n), wait_ms);
      if (ready < 0) {
        if (errno == EINTR) continue;
        res.timed_out = true;  // cannot wait any more: treat as the deadline
        break;
      }
      if (fds[i_timer].revents != 0) {
        res.timed_out = true;
        break;
      }
      if (i_in >= 0 && fds[i_in].revents != 0) {
        while (written < input.size()) {
          const ssize_t w = ::write(in_w, input.data() + written, input.size() - written);
          if (w > 0) {
            written += static_cast<size_t>(w);
            continue;
          }
          if (w < 0 && errno == EINTR) continue;
          if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
          written = input.size();  // EPIPE and the like: the plugin does not read its input
        }
        if (written >= input.size()) CloseFd(&in_w);
      }
      if (i_out >= 0 && fds[i_out].revents != 0) {
        if (!ReadSome(out_r, &res.out, options.max_stdout_bytes + 1, &out_total)) CloseFd(&out_r);
        if (out_total > options.max_stdout_bytes) {
          res.overflow = true;
          break;
        }
      }
      if (i_err >= 0 && fds[i_err].revents != 0) {
        if (!ReadSome(err_r, &res.err, options.max_stderr_bytes, &err_total)) CloseFd(&err_r);
      }
      if (i_pid >= 0 && fds[i_pid].revents != 0) try_reap();
    }
  }

  if (res.timed_out || res.overflow) {
    // The whole group: a shell script's children hold the pipes too.
    ::kill(-pid, SIGKILL);
  }
  for (int* fd : {&in_w, &out_r, &err_r, &pidfd}) CloseFd(fd);
  if (!reaped) {
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(pid, &status, 0);
    } while (r < 0 && errno == EINTR);
    if (r == pid) res.wait_status = status;
  }
  return res;
}

// Go's exec.Cmd environment: later entries win, in the order of their last occurrence.
std::vector<std::string> MergeEnv(const std::vector<ExecEnvVar>& provider_env) {
  std::vector<std::string> all;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) all.emplace_back(*e);
  for (const ExecEnvVar& v : provider_env) all.push_back(absl::StrCat(v.name, "=", v.value));
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    size_t eq = it->find('=');
    if (eq == 0) eq = it->find('=', 1);
    if (eq == std::string::npos) {
      if (!it->empty()) out.push_back(*it);
      continue;
    }
    if (!seen.insert(it->substr(0, eq)).second) continue;
    out.push_back(*it);
  }
  return std::vector<std::string>(out.rbegin(), out.rend());
}

std::string JoinPath(std::string_view dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  if (dir.back() == '/') return absl::StrCat(AV(dir), AV(name));
  return absl::StrCat(AV(dir), "/", AV(name));
}

class ExecPlugin final : public CredentialPlugin {
 public:
  ExecPlugin(std::string bin_dir, const CredentialProvider& provider, Clock& clock,
             ExecOptions options)
      : name_(provider.name),
        api_version_(provider.api_version),
        path_(JoinPath(bin_dir, provider.name)),
        args_(provider.args),
        env_(provider.env),
        clock_(clock),
        options_(options) {}

  absl::StatusOr<CredentialProviderResponse> Exec(std::string_view repository) override {
    KLOG_V(5, absl::StrCat("Getting image ", AV(repository),
                           " credentials from external exec plugin ", name_));
    std::string request = "{\"kind\":\"CredentialProviderRequest\",\"apiVersion\":";
    api::AppendGoString(&request, api_version_);
    request += ",\"image\":";
    api::AppendGoString(&request, repository);
    request += "}\n";

    const std::vector<std::string> env = MergeEnv(env_);
    auto exec_error = [&](std::string_view reason, std::string_view stderr_text) {
      return absl::UnknownError(absl::StrCat("error execing credential provider plugin ", name_,
                                             " for image ", AV(repository), ": ", AV(reason), ": ",
                                             AV(stderr_text)));
    };
    for (const std::string& e : env) {
      if (e.find('\0') != std::string::npos) {
        return absl::UnknownError(absl::StrCat("error execing credential provider plugin ", name_,
                                               " for image ", AV(repository),
                                               ": exec: environment variable contains NUL"));
      }
    }
    const absl::Time start = clock_.Now();
    ProcessResult run;
    bool nul_arg = path_.find('\0') != std::string::npos;
    for (const std::string& a : args_) nul_arg = nul_arg || a.find('\0') != std::string::npos;
    if (nul_arg) {
      run.start_error = absl::StrCat("fork/exec ", path_, ": invalid argument");
    } else {
      run = RunProcess(path_, args_, env, request, clock_, options_);
    }
    std::string failure;
    if (!run.start_error.empty()) {
      failure = run.start_error;
    } else if (run.timed_out) {
      failure = "context deadline exceeded";
    } else if (run.overflow) {
      failure = absl::StrCat("output exceeds ", options_.max_stdout_bytes, " bytes");
    } else {
      failure = ExitText(run.wait_status);
    }
    metrics::ObserveCredentialProviderPlugin(name_, absl::ToDoubleSeconds(clock_.Now() - start),
                                             !failure.empty());
    if (!failure.empty()) return exec_error(failure, run.err);
    return DecodeCredentialProviderResponse(run.out, api_version_);
  }

 private:
  const std::string name_;
  const std::string api_version_;
  const std::string path_;
  const std::vector<std::string> args_;
  const std::vector<ExecEnvVar> env_;
  Clock& clock_;
  const ExecOptions options_;
};

// The response's fields, as the typed decoder reads them (case-sensitive, unknown members
// ignored, null absent). Any failure is reported by the caller without detail.
bool DecodeResponseFields(const Json& j, CredentialProviderResponse* out) {
  if (!j.is_object()) return false;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const Json& v = it.value();
    if (v.is_null()) {
      if (key == "cacheDuration") out->cache_duration.reset();
      if (key == "auth") out->auth.clear();
      continue;
    }
    if (key == "cacheKeyType") {
      if (!v.is_string()) return false;
      out->cache_key_type = v.get<std::string>();
    } else if (key == "cacheDuration") {
      if (!v.is_string()) return false;
      absl::StatusOr<absl::Duration> d = ParseGoDuration(v.get_ref<const std::string&>());
      if (!d.ok()) return false;
      out->cache_duration = *d;
    } else if (key == "auth") {
      if (!v.is_object()) return false;
      out->auth.clear();
      for (auto a = v.begin(); a != v.end(); ++a) {
        AuthConfig cfg;
        const Json& entry = a.value();
        if (!entry.is_null()) {
          if (!entry.is_object()) return false;
          for (auto f = entry.begin(); f != entry.end(); ++f) {
            std::string* target = f.key() == "username"   ? &cfg.username
                                  : f.key() == "password" ? &cfg.password
                                                          : nullptr;
            if (target == nullptr || f.value().is_null()) continue;
            if (!f.value().is_string()) return false;
            *target = f.value().get<std::string>();
          }
        }
        out->auth.emplace_back(a.key(), std::move(cfg));
      }
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<CredentialProviderResponse> DecodeCredentialProviderResponse(
    std::string_view stdout_data, std::string_view api_version) {
  auto gvk_error = [](std::string_view detail) {
    return absl::InvalidArgumentError(
        absl::StrCat("error reading GVK from response: ", AV(detail)));
  };
  absl::StatusOr<Json> j = internal::ParseJson(stdout_data);
  if (!j.ok()) {
    return gvk_error(
        absl::StrCat("couldn't get version/kind; json parse error: ", j.status().message()));
  }
  std::string got_version, kind;
  if (absl::Status st = internal::InterpretTypeMeta(*j, &got_version, &kind); !st.ok()) {
    return gvk_error(SV(st.message()));
  }
  absl::StatusOr<std::string> gv = internal::NormalizeGroupVersion(got_version);
  if (!gv.ok()) {
    return gvk_error(
        absl::StrCat("unexpected GroupVersion string: ", internal::EchoApiVersion(got_version)));
  }
  if (*gv != api_version) {
    return absl::InvalidArgumentError(
        absl::StrCat("apiVersion from credential plugin response did not match expected "
                     "apiVersion:",
                     AV(api_version), ", actual apiVersion:", internal::EchoApiVersion(*gv)));
  }
  // The decoder's own errors may quote the output, which holds the credentials: never shown.
  const absl::Status decode_error =
      absl::InvalidArgumentError("error decoding credential provider plugin response from stdout");
  if (kind != kResponseKind) return decode_error;
  CredentialProviderResponse response;
  if (!DecodeResponseFields(*j, &response)) return decode_error;
  return response;
}

std::unique_ptr<CredentialPlugin> NewExecPlugin(std::string bin_dir,
                                                const CredentialProvider& provider, Clock& clock,
                                                ExecOptions options) {
  return std::make_unique<ExecPlugin>(std::move(bin_dir), provider, clock, options);
}

}  // namespace kubelet::credentialprovider
