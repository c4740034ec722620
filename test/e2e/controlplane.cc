#include "test/e2e/controlplane.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace kubelet::e2e {
namespace {

// Closes the fds it holds on scope exit.
class Fds {
 public:
  ~Fds() {
    for (int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  void Add(int fd) { fds_.push_back(fd); }
  void Close(int fd) {
    for (int& f : fds_) {
      if (f == fd) {
        ::close(f);
        f = -1;
      }
    }
  }

 private:
  std::vector<int> fds_;
};

int ExitCodeOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

}  // namespace

absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         std::string_view stdin_data, absl::Duration timeout) {
  if (argv.empty()) return absl::InvalidArgumentError("RunCommand: empty argv");
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
  Fds fds;
  fds.Add(in[0]);
  fds.Add(in[1]);
  if (::pipe2(out, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
  fds.Add(out[0]);
  fds.Add(out[1]);
  if (::pipe2(err, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
  fds.Add(err[0]);
  fds.Add(err[1]);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execvp(args[0], args.data());
    const char msg[] = "RunCommand: exec failed\n";
    (void)!::write(2, msg, sizeof(msg) - 1);
    ::_exit(127);
  }
  fds.Close(in[0]);
  fds.Close(out[1]);
  fds.Close(err[1]);
  // A child that exits without reading its stdin must not kill us with SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  ::fcntl(in[1], F_SETFL, O_NONBLOCK);

  CommandResult result;
  size_t written = 0;
  int in_fd = in[1];
  if (stdin_data.empty()) {
    fds.Close(in_fd);
    in_fd = -1;
  }
  bool out_open = true, err_open = true;
  const absl::Time deadline = absl::Now() + timeout;
  bool timed_out = false;
  while (out_open || err_open || in_fd >= 0) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      timed_out = true;
      break;
    }
    pollfd p[3];
    int n = 0;
    if (out_open) p[n++] = {out[0], POLLIN, 0};
    if (err_open) p[n++] = {err[0], POLLIN, 0};
    if (in_fd >= 0) p[n++] = {in_fd, POLLOUT, 0};
    const int ms = static_cast<int>(absl::ToInt64Milliseconds(left)) + 1;
    if (::poll(p, n, ms) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < n; ++i) {
      if (p[i].revents == 0) continue;
      if (p[i].fd == in_fd) {
        const ssize_t w = ::write(in_fd, stdin_data.data() + written, stdin_data.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 && errno != EAGAIN && errno != EINTR) written = stdin_data.size();
        if (written >= stdin_data.size()) {
          fds.Close(in_fd);
          in_fd = -1;
        }
        continue;
      }
      char buf[16384];
      const ssize_t r = ::read(p[i].fd, buf, sizeof(buf));
      if (r > 0) {
        (p[i].fd == out[0] ? result.out : result.err).append(buf, static_cast<size_t>(r));
      } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        (p[i].fd == out[0] ? out_open : err_open) = false;
      }
    }
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = ExitCodeOf(wait_status);
  if (timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat("`", absl::StrJoin(argv, " "), "` ran longer than ",
                     absl::FormatDuration(timeout), "; stderr so far: ", result.err));
  }
  return result;
}

absl::StatusOr<std::map<std::string, std::string>> ParseEnvFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read env file ", path));
  std::map<std::string, std::string> env;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const std::string::size_type eq = line.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    std::string value = line.substr(eq + 1);
    if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
      value = value.substr(1, value.size() - 2);
    }
    env[line.substr(0, eq)] = std::move(value);
  }
  return env;
}

absl::Status WaitFor(const std::function<absl::Status()>& poll, absl::Duration timeout,
                     absl::Duration interval) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::Status last;
  while (true) {
    last = poll();
    if (last.ok()) return last;
    if (absl::Now() >= deadline) break;
    absl::SleepFor(interval);
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "condition not met within ", absl::FormatDuration(timeout), "; last: ", last.message()));
}

namespace {

bool Required() {
  const char* v = std::getenv("KUBELET_CP_REQUIRED");
  return v != nullptr && std::string_view(v) == "1";
}

// Unavailable, or FailedPrecondition when the caller demands a control plane.
absl::Status NotAvailable(const std::string& reason) {
  if (Required()) {
    return absl::FailedPreconditionError(
        absl::StrCat("KUBELET_CP_REQUIRED=1 but the control plane is unavailable: ", reason));
  }
  return absl::UnavailableError(reason);
}

}  // namespace

ControlPlane::ControlPlane(std::map<std::string, std::string> env) : env_(std::move(env)) {
  server_ = Get("KUBELET_CP_SERVER");
  ca_file_ = Get("KUBELET_CP_CA");
  admin_kubeconfig_ = Get("KUBELET_CP_ADMIN_KUBECONFIG");
  kubectl_ = Get("KUBELET_CP_KUBECTL");
  dir_ = Get("KUBELET_CP_DIR");
  script_ = Get("KUBELET_CP_SCRIPT");
}

absl::StatusOr<ControlPlane> ControlPlane::FromEnv() {
  const char* file = std::getenv("KUBELET_CP_ENV_FILE");
  if (file == nullptr || *file == '\0') {
    return NotAvailable(
        "KUBELET_CP_ENV_FILE is not set (run the test through CTest, which starts the "
        "controlplane fixture, or point it at the env file of controlplane-env.sh up)");
  }
  absl::StatusOr<ControlPlane> cp = Load(file);
  if (!cp.ok()) return cp;
  // The cluster outlives every test: an API server a test stopped and could not start again,
  // or one that died, must not fail every test after it. A no-op while it runs.
  if (absl::Status up = cp->StartApiServer(); !up.ok()) {
    return absl::InternalError(
        absl::StrCat("the shared API server is down and does not start again: ", up.message()));
  }
  return cp;
}

absl::StatusOr<ControlPlane> ControlPlane::Load(const std::string& env_file) {
  absl::StatusOr<std::map<std::string, std::string>> env = ParseEnvFile(env_file);
  if (!env.ok()) return env.status();
  if (auto it = env->find("KUBELET_CP_SKIPPED"); it != env->end()) {
    return NotAvailable(it->second);
  }
  for (const char* key : {"KUBELET_CP_SERVER", "KUBELET_CP_CA", "KUBELET_CP_ADMIN_KUBECONFIG",
                          "KUBELET_CP_KUBECTL", "KUBELET_CP_DIR", "KUBELET_CP_SCRIPT"}) {
    auto it = env->find(key);
    if (it == env->end() || it->second.empty()) {
      return absl::DataLossError(absl::StrCat(env_file, " lacks ", key));
    }
  }
  return ControlPlane(*std::move(env));
}

std::string ControlPlane::Get(const std::string& key) const {
  auto it = env_.find(key);
  return it == env_.end() ? "" : it->second;
}

absl::StatusOr<CommandResult> ControlPlane::Kubectl(const std::vector<std::string>& args,
                                                    std::string_view stdin_data,
                                                    absl::Duration timeout) const {
  return KubectlAs(admin_kubeconfig_, args, stdin_data, timeout);
}

nlohmann::json ControlPlane::KubectlJson(const std::vector<std::string>& args,
                                         absl::Duration timeout) const {
  std::vector<std::string> full = args;
  full.insert(full.end(), {"-o", "json"});
  absl::StatusOr<CommandResult> r = Kubectl(full, {}, timeout);
  if (!r.ok() || r->exit_code != 0) return nlohmann::json();
  return nlohmann::json::parse(r->out, nullptr, /*allow_exceptions=*/false);
}

absl::StatusOr<CommandResult> ControlPlane::KubectlAs(const std::string& kubeconfig,
                                                      const std::vector<std::string>& args,
                                                      std::string_view stdin_data,
                                                      absl::Duration timeout) const {
  std::vector<std::string> argv = {kubectl_, "--kubeconfig", kubeconfig};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, stdin_data, timeout);
}

absl::StatusOr<std::string> ControlPlane::NodeKubeconfig(const std::string& node_name) const {
  absl::StatusOr<CommandResult> r =
      RunCommand({"bash", script_, "node-cert", dir_, node_name}, {}, absl::Seconds(60));
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat("controlplane-env.sh node-cert ", node_name, " exited ",
                                            r->exit_code, ": ", r->err));
  }
  std::string path(absl::StripAsciiWhitespace(r->out));
  if (path.empty()) return absl::InternalError("node-cert printed no kubeconfig path");
  return path;
}

namespace {
absl::Status RunHarness(const std::string& script, const std::string& command,
                        const std::string& dir) {
  absl::StatusOr<CommandResult> r =
      RunCommand({"bash", script, command, dir}, {}, absl::Seconds(120));
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(
        absl::StrCat("controlplane-env.sh ", command, " exited ", r->exit_code, ": ", r->err));
  }
  return absl::OkStatus();
}
}  // namespace

absl::Status ControlPlane::StopApiServer() const {
  return RunHarness(script_, "apiserver-stop", dir_);
}

absl::Status ControlPlane::StartApiServer() const {
  return RunHarness(script_, "apiserver-start", dir_);
}

absl::StatusOr<ControlPlane::BootstrapToken> ControlPlane::CreateBootstrapToken(
    const std::string& binding) const {
  const int64_t n = absl::ToUnixNanos(absl::Now());
  BootstrapToken t;
  for (int i = 0; i < 6; ++i) t.id += "abcdefghijklmnopqrstuvwxyz0123456789"[(n >> (5 * i)) % 36];
  for (int i = 0; i < 16; ++i) {
    t.secret += "0123456789abcdefghijklmnopqrstuvwxyz"[(n >> (3 * i)) % 36];
  }
  t.binding = binding;
  auto role_binding = [&](const std::string& suffix, const std::string& role) {
    return absl::StrCat(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: ",
        binding, suffix,
        "\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: ", role,
        "\nsubjects:\n- apiGroup: rbac.authorization.k8s.io\n  kind: Group\n"
        "  name: system:bootstrappers\n");
  };
  absl::StatusOr<CommandResult> r = Kubectl(
      {"apply", "-f", "-"},
      absl::StrCat(
          "apiVersion: v1\nkind: Secret\nmetadata:\n  name: bootstrap-token-", t.id,
          "\n  namespace: kube-system\ntype: bootstrap.kubernetes.io/token\n"
          "stringData:\n  token-id: ",
          t.id, "\n  token-secret: ", t.secret,
          "\n  usage-bootstrap-authentication: \"true\"\n---\n",
          role_binding("-create", "system:node-bootstrapper"), "---\n",
          role_binding("-approve",
                       "system:certificates.k8s.io:certificatesigningrequests:nodeclient")));
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat("kubectl apply of the bootstrap token: ", r->err));
  }
  return t;
}

void ControlPlane::DeleteBootstrapToken(const BootstrapToken& t) const {
  (void)Kubectl({"delete", "clusterrolebinding", t.binding + "-create", t.binding + "-approve",
                 "--wait=false"});
  (void)Kubectl(
      {"delete", "secret", "-n", "kube-system", "bootstrap-token-" + t.id, "--wait=false"});
}

std::string ControlPlane::BootstrapKubeconfig(const BootstrapToken& t,
                                              const std::string& server) const {
  return absl::StrCat(
      "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ", server,
      "\n    certificate-authority: ", ca_file_, "\nusers:\n- name: u\n  user:\n    token: ", t.id,
      ".", t.secret,
      "\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n"
      "current-context: x\n");
}

absl::Status ControlPlane::WaitForDefaultServiceAccount(const std::string& ns,
                                                        absl::Duration timeout) const {
  return WaitFor(
      [&]() -> absl::Status {
        absl::StatusOr<CommandResult> r = Kubectl({"get", "serviceaccount", "default", "-n", ns});
        if (r.ok() && r->exit_code == 0) return absl::OkStatus();
        return absl::UnavailableError(absl::StrCat("no default service account in ", ns, " yet"));
      },
      timeout, absl::Seconds(1));
}

}  // namespace kubelet::e2e
