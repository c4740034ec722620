#include "kubelet/nodeshutdown/dbus_logind.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::nodeshutdown {
namespace {

// Go's text for an errno (its table is strerror's with a lower-case first letter).
std::string GoErrno(int err) {
  std::string s = std::strerror(err);
  if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z') s[0] = static_cast<char>(s[0] - 'A' + 'a');
  return s;
}

// The text of a failed call: the bus error's message when there is one, else the errno's.
std::string BusErrorText(const sd_bus_error& error, int r) {
  if (error.message != nullptr && error.message[0] != '\0') return error.message;
  if (error.name != nullptr && error.name[0] != '\0') return error.name;
  return GoErrno(-r);
}

struct BusError {
  sd_bus_error e = SD_BUS_ERROR_NULL;
  ~BusError() { sd_bus_error_free(&e); }
};

struct MessageRef {
  sd_bus_message* m = nullptr;
  ~MessageRef() { sd_bus_message_unref(m); }
};

// The socket path godbus would name when it cannot connect.
std::string SocketPathForError(const std::string& address) {
  std::string_view a = address;
  if (absl::StartsWith(AV(a), "unix:path=")) {
    a.remove_prefix(std::string_view("unix:path=").size());
    return std::string(a.substr(0, a.find(',')));
  }
  return "";
}

class DBusLogind final : public Logind {
 public:
  DBusLogind(sd_bus* bus, int interrupt_fd, std::string config_directory)
      : bus_(bus), interrupt_fd_(interrupt_fd), config_directory_(std::move(config_directory)) {}

  ~DBusLogind() override {
    sd_bus_slot_unref(match_);
    sd_bus_flush_close_unref(bus_);
    close(interrupt_fd_);
  }

  absl::StatusOr<absl::Duration> CurrentInhibitDelay() override {
    BusError error;
    MessageRef reply;
    int r = sd_bus_call_method(bus_, kLogindService, kLogindObject,
                               "org.freedesktop.DBus.Properties", "Get", &error.e, &reply.m, "ss",
                               kLogindInterface, "InhibitDelayMaxUSec");
    if (r < 0) {
      return absl::UnavailableError(absl::StrCat(
          "failed reading InhibitDelayMaxUSec property from logind: ", BusErrorText(error.e, r)));
    }
    uint64_t usec = 0;
    if (sd_bus_message_enter_container(reply.m, 'v', "t") <= 0 ||
        sd_bus_message_read(reply.m, "t", &usec) <= 0) {
      return absl::InvalidArgumentError(
          "InhibitDelayMaxUSec from logind is not a uint64 as expected");
    }
    // Go's time.Duration is int64 nanoseconds: logind's "infinity" (UINT64_MAX) saturates.
    if (usec > static_cast<uint64_t>(INT64_MAX / 1000)) return absl::Nanoseconds(INT64_MAX);
    return absl::Microseconds(static_cast<int64_t>(usec));
  }

  absl::StatusOr<InhibitLock> InhibitShutdown() override {
    BusError error;
    MessageRef reply;
    int r = sd_bus_call_method(bus_, kLogindService, kLogindObject, kLogindInterface, "Inhibit",
                               &error.e, &reply.m, "ssss", kInhibitWhat, kInhibitWho, kInhibitWhy,
                               kInhibitMode);
    if (r < 0) {
      return absl::UnavailableError(
          absl::StrCat("failed creating systemd inhibitor: ", BusErrorText(error.e, r)));
    }
    int fd = -1;
    r = sd_bus_message_read(reply.m, "h", &fd);
    if (r <= 0 || fd < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("failed storing inhibit lock file descriptor: ",
                       r < 0 ? GoErrno(-r) : std::string("the reply holds no file descriptor")));
    }
    // The message owns its descriptor: keep a duplicate.
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (own < 0) {
      return absl::InternalError(
          absl::StrCat("failed storing inhibit lock file descriptor: ", GoErrno(errno)));
    }
    return InhibitLock{own};
  }

  absl::Status ReleaseInhibitLock(InhibitLock lock) override {
    if (close(lock.fd) != 0) {
      return absl::InternalError(
          absl::StrCat("unable to close systemd inhibitor lock: ", GoErrno(errno)));
    }
    return absl::OkStatus();
  }

  absl::Status ReloadLogindConf() override {
    BusError error;
    int r =
        sd_bus_call_method(bus_, kSystemdService, kSystemdObject, kSystemdInterface, "KillUnit",
                           &error.e, nullptr, "ssi", kLogindUnit, "all", int32_t{1} /* SIGHUP */);
    if (r < 0) {
      return absl::UnavailableError(
          absl::StrCat("unable to reload logind conf: ", BusErrorText(error.e, r)));
    }
    return absl::OkStatus();
  }

  absl::Status OverrideInhibitDelay(absl::Duration inhibit_delay_max) override {
    return WriteInhibitDelayOverride(config_directory_, inhibit_delay_max);
  }

  absl::Status MonitorShutdown() override {
    if (match_ != nullptr) return absl::OkStatus();
    int r = sd_bus_match_signal(bus_, &match_, nullptr, kLogindObject, kLogindInterface,
                                "PrepareForShutdown", &DBusLogind::OnPrepareForShutdown, this);
    if (r < 0) return absl::UnavailableError(GoErrno(-r));
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<bool>> WaitForShutdownEvent() override {
    for (;;) {
      if (!events_.empty()) {
        bool event = events_.front();
        events_.pop_front();
        return std::optional<bool>(event);
      }
      int r = sd_bus_process(bus_, nullptr);
      if (r < 0) {
        return absl::UnavailableError(absl::StrCat("the bus connection ended: ", GoErrno(-r)));
      }
      if (r > 0) continue;
      if (sd_bus_is_open(bus_) <= 0) {
        return absl::UnavailableError("the bus connection ended");
      }
      int events = sd_bus_get_events(bus_);
      if (events < 0) {
        return absl::UnavailableError(absl::StrCat("the bus connection ended: ", GoErrno(-events)));
      }
      uint64_t until = UINT64_MAX;
      int timeout_ms = -1;
      if (sd_bus_get_timeout(bus_, &until) >= 0 && until != UINT64_MAX) {
        timespec ts{};
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t now = static_cast<uint64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
        timeout_ms = until <= now
                         ? 0
                         : static_cast<int>(std::min<uint64_t>((until - now + 999) / 1000, 60000));
      }
      pollfd fds[2] = {{sd_bus_get_fd(bus_), static_cast<short>(events), 0},
                       {interrupt_fd_, POLLIN, 0}};
      int n = poll(fds, 2, timeout_ms);
      if (n < 0 && errno != EINTR) {
        return absl::InternalError(absl::StrCat("poll: ", GoErrno(errno)));
      }
      if (n > 0 && (fds[1].revents & POLLIN) != 0) {
        uint64_t value = 0;
        ssize_t ignored = read(interrupt_fd_, &value, sizeof value);
        (void)ignored;
        return std::optional<bool>();
      }
    }
  }

  void Interrupt() override {
    uint64_t one = 1;
    ssize_t ignored = write(interrupt_fd_, &one, sizeof one);
    (void)ignored;
  }

 private:
  static int OnPrepareForShutdown(sd_bus_message* m, void* userdata, sd_bus_error* /*error*/) {
    auto* self = static_cast<DBusLogind*>(userdata);
    const char* signature = sd_bus_message_get_signature(m, 1);
    if (signature == nullptr || signature[0] == '\0') {
      KLOG_ERROR(absl::OkStatus(),
                 "Failed obtaining shutdown event, PrepareForShutdown event was empty");
      return 0;
    }
    int active = 0;
    if (signature[0] != 'b' || sd_bus_message_read(m, "b", &active) <= 0) {
      KLOG_ERROR(absl::OkStatus(),
                 "Failed obtaining shutdown event, PrepareForShutdown event was "
                 "not bool type as expected");
      return 0;
    }
    self->events_.push_back(active != 0);
    return 0;
  }

  sd_bus* bus_;
  int interrupt_fd_;
  std::string config_directory_;
  sd_bus_slot* match_ = nullptr;
  std::deque<bool> events_;
};

}  // namespace

absl::Status WriteInhibitDelayOverride(const std::string& config_directory,
                                       absl::Duration inhibit_delay_max) {
  std::error_code ec;
  std::filesystem::create_directories(config_directory, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("failed creating ", config_directory,
                                            " directory: mkdir ", config_directory, ": ",
                                            GoErrno(ec.value())));
  }
  // logind's drop-in names whole seconds.
  std::string text =
      absl::StrFormat("# Kubelet logind override\n[Login]\nInhibitDelayMaxSec=%.0f\n",
                      absl::ToDoubleSeconds(inhibit_delay_max));
  std::string path = (std::filesystem::path(config_directory) / kKubeletLogindConf).string();
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("failed writing logind shutdown inhibit override file ",
                                            path, ": open ", path, ": ", GoErrno(errno)));
  }
  std::string_view rest = text;
  while (!rest.empty()) {
    ssize_t n = write(fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return absl::InternalError(
          absl::StrCat("failed writing logind shutdown inhibit override file ", path, ": write ",
                       path, ": ", GoErrno(err)));
    }
    rest.remove_prefix(static_cast<size_t>(n));
  }
  if (close(fd) != 0) {
    return absl::InternalError(absl::StrCat("failed writing logind shutdown inhibit override file ",
                                            path, ": close ", path, ": ", GoErrno(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Logind>> NewDBusLogind(const DBusLogindOptions& options) {
  sd_bus* bus = nullptr;
  int r = 0;
  std::string address = options.bus_address;
  if (address.empty()) {
    const char* env = std::getenv("DBUS_SYSTEM_BUS_ADDRESS");
    address = env != nullptr && env[0] != '\0' ? env : "unix:path=/var/run/dbus/system_bus_socket";
    r = sd_bus_open_system(&bus);
  } else {
    r = sd_bus_new(&bus);
    if (r >= 0) r = sd_bus_set_address(bus, address.c_str());
    if (r >= 0) r = sd_bus_set_bus_client(bus, 1);
    if (r >= 0) r = sd_bus_start(bus);
  }
  if (r < 0) {
    sd_bus_unref(bus);
    std::string path = SocketPathForError(address);
    if (!path.empty()) {
      return absl::UnavailableError(absl::StrCat("dial unix ", path, ": connect: ", GoErrno(-r)));
    }
    return absl::UnavailableError(
        absl::StrCat("failed to connect to the bus ", address, ": ", GoErrno(-r)));
  }
  int interrupt_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (interrupt_fd < 0) {
    int err = errno;
    sd_bus_flush_close_unref(bus);
    return absl::InternalError(absl::StrCat("eventfd: ", GoErrno(err)));
  }
  return std::unique_ptr<Logind>(
      std::make_unique<DBusLogind>(bus, interrupt_fd, options.config_directory));
}

LogindFactory DBusLogindFactory(DBusLogindOptions options) {
  return [options = std::move(options)]() { return NewDBusLogind(options); };
}

}  // namespace kubelet::nodeshutdown
