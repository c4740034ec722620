#include "test/e2e/kubelet_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

extern char** environ;

namespace kubelet::e2e {

std::string KubeletBinary() {
  const char* b = std::getenv("KUBELET_BINARY");
  return b ? b : "kubelet";
}

std::string MakeTempDir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp ? tmp : "/tmp") + "/" + prefix + "XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) std::abort();
  return std::string(buf.data());
}

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::trunc);
  f << content;
  if (!f) std::abort();
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string StandaloneServingConfig() { return StandaloneServingConfig(FreePort(), true); }

std::string StandaloneServingConfig(int port, bool anonymous) {
  return "port: " + std::to_string(port) +
         "\n"
         "authentication:\n"
         "  anonymous:\n"
         "    enabled: " +
         (anonymous ? "true" : "false") +
         "\n"
         "  webhook:\n"
         "    enabled: false\n"
         "authorization:\n"
         "  mode: AlwaysAllow\n";
}

int FreePort() {
  // The kernel may hand the same free port to two bind(0) calls in a row (nothing holds it in
  // between), and a test that asked for two ports would give the kubelet the same one twice:
  // never return a port this process returned before.
  static std::set<int>* given = new std::set<int>();
  for (;;) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    int port = ntohs(addr.sin_port);
    if (given->insert(port).second) return port;
  }
}

HttpResult HttpGet(int port, const std::string& path, const std::string& host) {
  HttpResult result;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return result;
  }
  std::string req = "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
  ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string resp;
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    resp.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (resp.rfind("HTTP/1.1 ", 0) == 0) result.status = std::atoi(resp.c_str() + 9);
  size_t p = resp.find("\r\n\r\n");
  if (p != std::string::npos) result.body = resp.substr(p + 4);
  return result;
}

absl::StatusOr<std::unique_ptr<KubeletProcess>> KubeletProcess::Start(
    const std::string& binary, const std::vector<std::string>& args,
    const std::map<std::string, std::string>& extra_env, const std::string& log_path) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    std::string key = kv.substr(0, kv.find('='));
    if (!extra_env.count(key)) env_strings.push_back(kv);
  }
  for (const auto& [k, v] : extra_env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings{binary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  int log_fd = ::open(log_path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) return absl::InternalError("cannot open " + log_path);
  pid_t pid = ::fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    // The kubelet must not outlive a test or benchmark that is killed.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::execve(binary.c_str(), argv.data(), envp.data());
    std::fprintf(stderr, "execve %s: %s\n", binary.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  ::close(log_fd);
  return std::unique_ptr<KubeletProcess>(new KubeletProcess(pid, log_path));
}

KubeletProcess::~KubeletProcess() {
  if (!exit_code_) {
    ::kill(pid_, SIGKILL);
    int status;
    ::waitpid(pid_, &status, 0);
  }
}

std::string KubeletProcess::Log() const {
  std::ifstream f(log_path_);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool KubeletProcess::WaitForLog(const std::string& text, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (Log().find(text) != std::string::npos) return true;
    if (Wait(absl::ZeroDuration()).has_value()) return Log().find(text) != std::string::npos;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return false;
}

void KubeletProcess::Signal(int sig) {
  if (!exit_code_) ::kill(pid_, sig);
}

std::optional<int> KubeletProcess::Wait(absl::Duration timeout) {
  if (exit_code_) return exit_code_;
  absl::Time deadline = absl::Now() + timeout;
  do {
    int status;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return exit_code_;
    }
    if (absl::Now() >= deadline) break;
    absl::SleepFor(absl::Milliseconds(10));
  } while (true);
  return std::nullopt;
}

}  // namespace kubelet::e2e
