#include "kubelet/nodeshutdown/testing/logind_stand_in.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/guarded.h"
#include "common/strings.h"

namespace kubelet::nodeshutdown::testing {
namespace {

constexpr char kLogindService[] = "org.freedesktop.login1";
constexpr char kLogindObject[] = "/org/freedesktop/login1";
constexpr char kLogindInterface[] = "org.freedesktop.login1.Manager";
constexpr char kSystemdService[] = "org.freedesktop.systemd1";
constexpr char kSystemdObject[] = "/org/freedesktop/systemd1";
constexpr char kSystemdInterface[] = "org.freedesktop.systemd1.Manager";

// A systemd time span ("30", "30s", "1min 30s", "500ms", "infinity"); nullopt when invalid.
std::optional<absl::Duration> ParseTimeSpan(std::string_view text) {
  std::string_view s = SV(absl::StripAsciiWhitespace(AV(text)));
  if (s == "infinity") return absl::InfiniteDuration();
  if (s.empty()) return std::nullopt;
  absl::Duration total = absl::ZeroDuration();
  while (!s.empty()) {
    size_t n = 0;
    while (n < s.size() && (std::isdigit(static_cast<unsigned char>(s[n])) || s[n] == '.')) ++n;
    if (n == 0) return std::nullopt;
    double value = 0;
    if (!absl::SimpleAtod(AV(s.substr(0, n)), &value)) return std::nullopt;
    s.remove_prefix(n);
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    size_t u = 0;
    while (u < s.size() && std::isalpha(static_cast<unsigned char>(s[u]))) ++u;
    std::string_view unit = s.substr(0, u);
    s.remove_prefix(u);
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    absl::Duration scale;
    if (unit.empty() || unit == "s" || unit == "sec" || unit == "second" || unit == "seconds") {
      scale = absl::Seconds(1);
    } else if (unit == "us" || unit == "usec") {
      scale = absl::Microseconds(1);
    } else if (unit == "ms" || unit == "msec") {
      scale = absl::Milliseconds(1);
    } else if (unit == "m" || unit == "min" || unit == "minute" || unit == "minutes") {
      scale = absl::Minutes(1);
    } else if (unit == "h" || unit == "hr" || unit == "hour" || unit == "hours") {
      scale = absl::Hours(1);
    } else if (unit == "d" || unit == "day" || unit == "days") {
      scale = absl::Hours(24);
    } else {
      return std::nullopt;
    }
    total += value * scale;
  }
  return total;
}

uint64_t ToUsec(absl::Duration d) {
  if (d == absl::InfiniteDuration()) return UINT64_MAX;
  return static_cast<uint64_t>(absl::ToInt64Microseconds(d));
}

bool ValidWhat(std::string_view what) {
  static const std::set<std::string, std::less<>> kKnown = {"shutdown",
                                                            "sleep",
                                                            "idle",
                                                            "handle-power-key",
                                                            "handle-suspend-key",
                                                            "handle-hibernate-key",
                                                            "handle-lid-switch",
                                                            "handle-reboot-key"};
  if (what.empty()) return false;
  for (absl::string_view part : absl::StrSplit(AV(what), ':')) {
    if (kKnown.find(SV(part)) == kKnown.end()) return false;
  }
  return true;
}

bool DelayCapable(std::string_view what) {
  for (absl::string_view part : absl::StrSplit(AV(what), ':')) {
    if (part != "shutdown" && part != "sleep") return false;
  }
  return true;
}

}  // namespace

absl::Duration ReadInhibitDelayMaxSec(const std::string& dir, absl::Duration fallback) {
  absl::Duration value = fallback;
  if (dir.empty()) return value;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".conf") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end(),
            [](const auto& a, const auto& b) { return a.filename() < b.filename(); });
  for (const std::filesystem::path& file : files) {
    std::ifstream in(file);
    std::string line;
    std::string section;
    while (std::getline(in, line)) {
      std::string_view l = SV(absl::StripAsciiWhitespace(AV(line)));
      if (l.empty() || l.front() == '#' || l.front() == ';') continue;
      if (l.front() == '[') {
        section = std::string(l);
        continue;
      }
      if (section != "[Login]") continue;
      size_t eq = l.find('=');
      if (eq == std::string_view::npos) continue;
      if (SV(absl::StripAsciiWhitespace(AV(l.substr(0, eq)))) != "InhibitDelayMaxSec") continue;
      if (std::optional<absl::Duration> d = ParseTimeSpan(l.substr(eq + 1)); d.has_value()) {
        value = *d;
      }
    }
  }
  return value;
}

class LogindStandIn::Impl {
 public:
  Impl(LogindStandInOptions options, sd_bus* bus, int stop_fd, int wake_fd)
      : options_(std::move(options)), bus_(bus), stop_fd_(stop_fd), wake_fd_(wake_fd) {
    delay_ = ReadInhibitDelayMaxSec(options_.config_directory, options_.inhibit_delay_max);
  }

  ~Impl() {
    uint64_t one = 1;
    ssize_t ignored = write(stop_fd_, &one, sizeof one);
    (void)ignored;
    if (thread_.joinable()) thread_.join();
    sd_bus_slot_unref(login_slot_);
    sd_bus_slot_unref(systemd_slot_);
    sd_bus_flush_close_unref(bus_);
    close(stop_fd_);
    close(wake_fd_);
    absl::MutexLock l(&mu_);
    for (Held& h : inhibitors_) close(h.read_fd);
    for (Emit& e : emits_) {
      *e.result = absl::CancelledError("the stand-in stopped");
      e.done->Notify();
    }
  }

  absl::Status Register() {
    static const sd_bus_vtable kLoginVtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("InhibitDelayMaxUSec", "t", &Impl::GetDelay, 0, 0),
        SD_BUS_METHOD("Inhibit", "ssss", "h", &Impl::MethodInhibit, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("ListInhibitors", "", "a(ssssuu)", &Impl::MethodListInhibitors,
                      SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL("PrepareForShutdown", "b", 0),
        SD_BUS_VTABLE_END};
    static const sd_bus_vtable kSystemdVtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("KillUnit", "ssi", "", &Impl::MethodKillUnit, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END};
    int r = sd_bus_add_object_vtable(bus_, &login_slot_, kLogindObject, kLogindInterface,
                                     kLoginVtable, this);
    if (r < 0) return Errno("registering the login1 object", r);
    r = sd_bus_request_name(bus_, kLogindService, 0);
    if (r < 0) return Errno("taking the name org.freedesktop.login1", r);
    if (options_.serve_systemd) {
      r = sd_bus_add_object_vtable(bus_, &systemd_slot_, kSystemdObject, kSystemdInterface,
                                   kSystemdVtable, this);
      if (r < 0) return Errno("registering the systemd1 object", r);
      r = sd_bus_request_name(bus_, kSystemdService, 0);
      if (r < 0) return Errno("taking the name org.freedesktop.systemd1", r);
    }
    return absl::OkStatus();
  }

  void StartThread() {
    thread_ = GuardedThread("logind stand-in", [this] { Serve(); });
  }

  std::vector<Inhibitor> Inhibitors() {
    absl::MutexLock l(&mu_);
    PruneLocked();
    std::vector<Inhibitor> out;
    for (const Held& h : inhibitors_) out.push_back(h.inhibitor);
    return out;
  }

  absl::Duration InhibitDelayMax() {
    absl::MutexLock l(&mu_);
    return delay_;
  }

  int Reloads() {
    absl::MutexLock l(&mu_);
    return reloads_;
  }

  absl::Status EmitPrepareForShutdown(bool active) {
    auto done = std::make_shared<absl::Notification>();
    auto result = std::make_shared<absl::Status>();
    {
      absl::MutexLock l(&mu_);
      emits_.push_back(Emit{active, done, result});
    }
    uint64_t one = 1;
    ssize_t ignored = write(wake_fd_, &one, sizeof one);
    (void)ignored;
    if (!done->WaitForNotificationWithTimeout(absl::Seconds(30))) {
      return absl::DeadlineExceededError("the stand-in did not emit the signal");
    }
    return *result;
  }

 private:
  struct Held {
    Inhibitor inhibitor;
    int read_fd;
  };
  struct Emit {
    bool active;
    std::shared_ptr<absl::Notification> done;
    std::shared_ptr<absl::Status> result;
  };

  static absl::Status Errno(std::string_view what, int r) {
    return absl::UnavailableError(absl::StrCat(AV(what), ": ", std::strerror(-r)));
  }

  // Inhibitors whose every lock descriptor was closed are gone.
  void PruneLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (auto it = inhibitors_.begin(); it != inhibitors_.end();) {
      pollfd p{it->read_fd, POLLIN, 0};
      if (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR)) != 0) {
        close(it->read_fd);
        it = inhibitors_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void Serve() {
    for (;;) {
      int r = sd_bus_process(bus_, nullptr);
      if (r < 0) return;  // the bus went away
      if (r > 0) continue;
      std::deque<Emit> emits;
      std::vector<int> watched;
      {
        absl::MutexLock l(&mu_);
        emits.swap(emits_);
        PruneLocked();
        for (const Held& h : inhibitors_) watched.push_back(h.read_fd);
      }
      for (Emit& e : emits) {
        int er = sd_bus_emit_signal(bus_, kLogindObject, kLogindInterface, "PrepareForShutdown",
                                    "b", static_cast<int>(e.active));
        if (er >= 0) er = sd_bus_flush(bus_);
        *e.result = er < 0 ? Errno("emitting PrepareForShutdown", er) : absl::OkStatus();
        e.done->Notify();
      }
      if (!emits.empty()) continue;
      std::vector<pollfd> fds;
      fds.push_back(
          {sd_bus_get_fd(bus_), static_cast<short>(std::max(0, sd_bus_get_events(bus_))), 0});
      fds.push_back({stop_fd_, POLLIN, 0});
      fds.push_back({wake_fd_, POLLIN, 0});
      for (int fd : watched) fds.push_back({fd, POLLIN, 0});
      int timeout_ms = -1;
      uint64_t until = UINT64_MAX;
      if (sd_bus_get_timeout(bus_, &until) >= 0 && until != UINT64_MAX) {
        timespec ts{};
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t now = static_cast<uint64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
        timeout_ms = until <= now
                         ? 0
                         : static_cast<int>(std::min<uint64_t>((until - now + 999) / 1000, 1000));
      }
      if (poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) return;
      if ((fds[1].revents & POLLIN) != 0) return;
      if ((fds[2].revents & POLLIN) != 0) {
        uint64_t v = 0;
        ssize_t ignored = read(wake_fd_, &v, sizeof v);
        (void)ignored;
      }
    }
  }

  void Reload() {
    absl::MutexLock l(&mu_);
    delay_ = ReadInhibitDelayMaxSec(options_.config_directory, options_.inhibit_delay_max);
    ++reloads_;
  }

  static int GetDelay(sd_bus* /*bus*/, const char* /*path*/, const char* /*interface*/,
                      const char* /*property*/, sd_bus_message* reply, void* userdata,
                      sd_bus_error* /*error*/) {
    auto* self = static_cast<Impl*>(userdata);
    return sd_bus_message_append(reply, "t", ToUsec(self->InhibitDelayMax()));
  }

  static int MethodInhibit(sd_bus_message* m, void* userdata, sd_bus_error* error) {
    auto* self = static_cast<Impl*>(userdata);
    const char* what = nullptr;
    const char* who = nullptr;
    const char* why = nullptr;
    const char* mode = nullptr;
    int r = sd_bus_message_read(m, "ssss", &what, &who, &why, &mode);
    if (r < 0) return r;
    if (!ValidWhat(what)) {
      return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Invalid what specification %s",
                               what);
    }
    std::string_view mode_view = mode;
    if (mode_view != "block" && mode_view != "delay") {
      return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Invalid mode specification %s",
                               mode);
    }
    if (mode_view == "delay" && !DelayCapable(what)) {
      return sd_bus_error_set_const(error, SD_BUS_ERROR_NOT_SUPPORTED,
                                    "Delay inhibitors only supported for shutdown and sleep");
    }
    Inhibitor inhibitor{what, who, why, mode, 0, 0};
    sd_bus_creds* creds = nullptr;
    if (sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID, &creds) >= 0) {
      uid_t uid = 0;
      pid_t pid = 0;
      if (sd_bus_creds_get_euid(creds, &uid) >= 0) inhibitor.uid = uid;
      if (sd_bus_creds_get_pid(creds, &pid) >= 0) inhibitor.pid = static_cast<uint32_t>(pid);
      sd_bus_creds_unref(creds);
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return -errno;
    {
      // Listed before the caller can see the reply.
      absl::MutexLock l(&self->mu_);
      self->inhibitors_.push_back(Held{std::move(inhibitor), fds[0]});
    }
    r = sd_bus_reply_method_return(m, "h", fds[1]);  // the message keeps a copy until sent
    close(fds[1]);  // then the caller's is the only one: closing it releases the inhibitor
    return r;
  }

  static int MethodListInhibitors(sd_bus_message* m, void* userdata, sd_bus_error* /*error*/) {
    auto* self = static_cast<Impl*>(userdata);
    std::vector<Inhibitor> list = self->Inhibitors();
    sd_bus_message* reply = nullptr;
    int r = sd_bus_message_new_method_return(m, &reply);
    if (r >= 0) r = sd_bus_message_open_container(reply, 'a', "(ssssuu)");
    for (const Inhibitor& i : list) {
      if (r < 0) break;
      r = sd_bus_message_append(reply, "(ssssuu)", i.what.c_str(), i.who.c_str(), i.why.c_str(),
                                i.mode.c_str(), i.uid, i.pid);
    }
    if (r >= 0) r = sd_bus_message_close_container(reply);
    if (r >= 0) r = sd_bus_send(nullptr, reply, nullptr);
    sd_bus_message_unref(reply);
    return r;
  }

  static int MethodKillUnit(sd_bus_message* m, void* userdata, sd_bus_error* error) {
    auto* self = static_cast<Impl*>(userdata);
    const char* unit = nullptr;
    const char* who = nullptr;
    int32_t signal = 0;
    int r = sd_bus_message_read(m, "ssi", &unit, &who, &signal);
    if (r < 0) return r;
    if (std::string_view(unit) != "systemd-logind.service") {
      return sd_bus_error_setf(error, "org.freedesktop.systemd1.NoSuchUnit", "Unit %s not loaded.",
                               unit);
    }
    if (signal == SIGHUP) self->Reload();
    return sd_bus_reply_method_return(m, "");
  }

  const LogindStandInOptions options_;
  sd_bus* bus_;
  int stop_fd_;
  int wake_fd_;
  sd_bus_slot* login_slot_ = nullptr;
  sd_bus_slot* systemd_slot_ = nullptr;
  std::thread thread_;

  absl::Mutex mu_;
  absl::Duration delay_ ABSL_GUARDED_BY(mu_);
  int reloads_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Held> inhibitors_ ABSL_GUARDED_BY(mu_);
  std::deque<Emit> emits_ ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<std::unique_ptr<LogindStandIn>> LogindStandIn::Start(LogindStandInOptions options) {
  sd_bus* bus = nullptr;
  int r = 0;
  if (options.bus_address.empty()) {
    r = sd_bus_open_system(&bus);
  } else {
    r = sd_bus_new(&bus);
    if (r >= 0) r = sd_bus_set_address(bus, options.bus_address.c_str());
    if (r >= 0) r = sd_bus_set_bus_client(bus, 1);
    if (r >= 0) r = sd_bus_start(bus);
  }
  if (r < 0) {
    sd_bus_unref(bus);
    return absl::UnavailableError(
        absl::StrCat("connecting to the bus ", options.bus_address, ": ", std::strerror(-r)));
  }
  int stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  int wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  auto impl = std::make_unique<Impl>(std::move(options), bus, stop_fd, wake_fd);
  if (absl::Status st = impl->Register(); !st.ok()) return st;
  impl->StartThread();
  return std::unique_ptr<LogindStandIn>(new LogindStandIn(std::move(impl)));
}

LogindStandIn::LogindStandIn(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LogindStandIn::~LogindStandIn() = default;

std::vector<Inhibitor> LogindStandIn::Inhibitors() const { return impl_->Inhibitors(); }
absl::Duration LogindStandIn::InhibitDelayMax() const { return impl_->InhibitDelayMax(); }
int LogindStandIn::Reloads() const { return impl_->Reloads(); }
absl::Status LogindStandIn::EmitPrepareForShutdown(bool active) {
  return impl_->EmitPrepareForShutdown(active);
}

}  // namespace kubelet::nodeshutdown::testing
