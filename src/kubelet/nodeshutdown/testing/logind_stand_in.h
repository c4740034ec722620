// LogindStandIn: the part of systemd-logind (and of systemd's manager) that graceful node
// shutdown uses, served on a D-Bus bus with sd-bus, for tests on a real bus (a private
// dbus-daemon; see private_bus.h) where neither systemd nor logind runs.
//
// Owns org.freedesktop.login1 and, unless told not to, org.freedesktop.systemd1:
//   /org/freedesktop/login1  org.freedesktop.login1.Manager
//     Inhibit(ssss what, who, why, mode) -> h   a lock: the write end of a pipe; the inhibitor
//                                               goes away when every copy of it is closed
//     ListInhibitors() -> a(ssssuu)             what, who, why, mode, uid, pid
//     property InhibitDelayMaxUSec (t)          the configured value, then InhibitDelayMaxSec of
//                                               the drop-ins (*.conf of `config_directory`, in
//                                               name order, the last wins), read at start and on
//                                               each reload
//     signal PrepareForShutdown(b)              emitted by EmitPrepareForShutdown, or by anyone
//                                               on the bus (dbus-send), as logind's
//   /org/freedesktop/systemd1  org.freedesktop.systemd1.Manager
//     KillUnit(ssi unit, who, signal)           "systemd-logind.service" with SIGHUP: reload (done
//                                               before the reply, so a read right after sees
//                                               it); other units: NoSuchUnit
// Invalid arguments fail as logind's do (org.freedesktop.DBus.Error.InvalidArgs). It never shuts
// anything down.
//
// Thread-safety: one thread serves the bus; the accessors are thread-safe.
#ifndef KUBELET_KUBELET_NODESHUTDOWN_TESTING_LOGIND_STAND_IN_H_
#define KUBELET_KUBELET_NODESHUTDOWN_TESTING_LOGIND_STAND_IN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kubelet::nodeshutdown::testing {

struct LogindStandInOptions {
  // D-Bus address; empty: the system bus (DBUS_SYSTEM_BUS_ADDRESS).
  std::string bus_address;
  absl::Duration inhibit_delay_max = absl::Seconds(5);
  // Drop-ins read for InhibitDelayMaxSec; empty: none.
  std::string config_directory;
  bool serve_systemd = true;
};

struct Inhibitor {
  std::string what, who, why, mode;
  uint32_t uid = 0;
  uint32_t pid = 0;
};

class LogindStandIn {
 public:
  // Connects, takes the names, serves on a thread of its own.
  static absl::StatusOr<std::unique_ptr<LogindStandIn>> Start(LogindStandInOptions options);
  ~LogindStandIn();

  std::vector<Inhibitor> Inhibitors() const;
  absl::Duration InhibitDelayMax() const;
  int Reloads() const;
  // Emits PrepareForShutdown(b) from the stand-in's connection; returns once sent.
  absl::Status EmitPrepareForShutdown(bool active);

  class Impl;

 private:
  explicit LogindStandIn(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// InhibitDelayMaxSec of logind's drop-ins in `dir` (systemd time spans: "30", "30s", "1min 30s",
// "500ms"); nullopt-like `fallback` when none sets it.
absl::Duration ReadInhibitDelayMaxSec(const std::string& dir, absl::Duration fallback);

}  // namespace kubelet::nodeshutdown::testing

#endif  // KUBELET_KUBELET_NODESHUTDOWN_TESTING_LOGIND_STAND_IN_H_
