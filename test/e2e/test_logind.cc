// test_logind: a stand-in for systemd-logind (and systemd's KillUnit) on a D-Bus bus, for the
// graceful node shutdown tests on machines where neither runs (kubelet/nodeshutdown/testing/
// logind_stand_in.h says what it serves). Start a private dbus-daemon, point
// DBUS_SYSTEM_BUS_ADDRESS at it for this program and the kubelet, then emit the shutdown as
// upstream's node e2e does:
//   dbus-send --system --type=signal /org/freedesktop/login1 \
//       org.freedesktop.login1.Manager.PrepareForShutdown boolean:true
//
// Flags:
//   --inhibit-delay-max=5s   logind's InhibitDelayMaxSec before any drop-in (Go duration)
//   --config-dir=DIR         the logind.conf.d the kubelet writes its drop-in to (the kubelet's
//                            drop-in directory option must name the same one)
//   --bus-address=ADDRESS    the bus (default: the system bus, DBUS_SYSTEM_BUS_ADDRESS)
//   --no-systemd             do not serve org.freedesktop.systemd1 (KillUnit then fails)
// Prints "test_logind ready" on stdout once it owns its names; SIGTERM / SIGINT end it. The
// inhibitors it holds are printed on stdout whenever they change ("inhibitors: kubelet ...").
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/duration.h"
#include "kubelet/nodeshutdown/testing/logind_stand_in.h"

namespace {

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

bool Flag(std::string_view arg, std::string_view name, std::string* value) {
  if (arg.substr(0, name.size()) != name) return false;
  *value = std::string(arg.substr(name.size()));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using kubelet::nodeshutdown::testing::Inhibitor;
  using kubelet::nodeshutdown::testing::LogindStandIn;
  using kubelet::nodeshutdown::testing::LogindStandInOptions;
  LogindStandInOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string value;
    if (Flag(arg, "--inhibit-delay-max=", &value)) {
      absl::StatusOr<absl::Duration> d = kubelet::ParseGoDuration(value);
      if (!d.ok()) {
        std::fprintf(stderr, "test_logind: --inhibit-delay-max: %s\n",
                     std::string(d.status().message()).c_str());
        return 2;
      }
      options.inhibit_delay_max = *d;
    } else if (Flag(arg, "--config-dir=", &value)) {
      options.config_directory = value;
    } else if (Flag(arg, "--bus-address=", &value)) {
      options.bus_address = value;
    } else if (arg == "--no-systemd") {
      options.serve_systemd = false;
    } else {
      std::fprintf(stderr, "test_logind: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  absl::StatusOr<std::unique_ptr<LogindStandIn>> logind = LogindStandIn::Start(options);
  if (!logind.ok()) {
    std::fprintf(stderr, "test_logind: %s\n", std::string(logind.status().message()).c_str());
    return 1;
  }
  std::printf("test_logind ready\n");
  std::fflush(stdout);
  std::string last = "";
  while (g_stop == 0) {
    std::vector<std::string> held;
    for (const Inhibitor& i : (*logind)->Inhibitors()) {
      held.push_back(absl::StrCat(i.who, " ", i.what, " ", i.mode, " pid ", i.pid));
    }
    std::string now = absl::StrJoin(held, ", ");
    if (now != last) {
      std::printf("inhibitors: %s\n", now.c_str());
      std::fflush(stdout);
      last = now;
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  return 0;
}
