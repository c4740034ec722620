#include "kubelet/nodeshutdown/testing/private_bus.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/strings.h"

extern char** environ;

namespace kubelet::nodeshutdown::testing {
namespace {

constexpr char kConfig[] =
    R"(<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>kubelet-test</type>
  <listen>unix:path=SOCKET</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_type="method_return"/>
    <allow send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="signal"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
  </policy>
</busconfig>
)";

bool Executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

void Kill(pid_t pid) {
  kill(pid, SIGTERM);
  for (int i = 0; i < 500; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return;
    absl::SleepFor(absl::Milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

}  // namespace

std::string FindDBusDaemon() {
  const char* path = std::getenv("PATH");
  if (path != nullptr) {
    for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
      std::string candidate = absl::StrCat(dir, "/dbus-daemon");
      if (Executable(candidate)) return candidate;
    }
  }
  if (Executable("/usr/bin/dbus-daemon")) return "/usr/bin/dbus-daemon";
  return "";
}

absl::StatusOr<std::unique_ptr<PrivateBus>> PrivateBus::Start(const std::string& dir) {
  const std::string daemon = FindDBusDaemon();
  if (daemon.empty()) {
    return absl::NotFoundError("dbus-daemon not found (Debian package dbus-daemon)");
  }
  const std::string socket = dir + "/bus";
  const std::string config_path = dir + "/bus.conf";
  {
    std::string config = kConfig;
    config.replace(config.find("SOCKET"), 6, socket);
    std::ofstream out(config_path);
    out << config;
    if (!out) return absl::InternalError(absl::StrCat("writing ", config_path));
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 3);
  // Its messages (e.g. that it could not raise its descriptor limit) go to a log beside it.
  const std::string log_path = dir + "/bus.log";
  posix_spawn_file_actions_addopen(&actions, 2, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::vector<std::string> args = {daemon, "--config-file=" + config_path, "--nofork",
                                   "--nopidfile", "--print-address=3"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int r = posix_spawn(&pid, daemon.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (r != 0) {
    close(pipe_fds[0]);
    return absl::InternalError(absl::StrCat("starting ", daemon, ": ", std::strerror(r)));
  }
  // The daemon prints its address once it listens.
  std::string out;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (out.find('\n') == std::string::npos && absl::Now() < deadline) {
    pollfd p{pipe_fds[0], POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[512];
    ssize_t n = read(pipe_fds[0], buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  std::string address(absl::StripAsciiWhitespace(out.substr(0, out.find('\n'))));
  if (address.empty()) {
    Kill(pid);
    std::ifstream log(log_path);
    std::string messages((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    return absl::UnavailableError(absl::StrCat(daemon, " printed no address: ", messages));
  }
  return std::unique_ptr<PrivateBus>(new PrivateBus(pid, std::move(address)));
}

PrivateBus::~PrivateBus() { Kill(pid_); }

}  // namespace kubelet::nodeshutdown::testing
