// PrivateBus: a dbus-daemon of a test's own, so tests talk D-Bus without the machine's system
// bus: a unix socket in a directory the test owns, a permissive policy (anyone may own any name
// and send or receive anything), started as a child process (--nofork; its messages in
// <dir>/bus.log) and stopped (SIGTERM, reaped) with the object.
//
// Start fails with NotFound when no dbus-daemon is installed (Debian package dbus-daemon):
// tests then skip, naming that package.
// Thread-compatible.
#ifndef KUBELET_KUBELET_NODESHUTDOWN_TESTING_PRIVATE_BUS_H_
#define KUBELET_KUBELET_NODESHUTDOWN_TESTING_PRIVATE_BUS_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace kubelet::nodeshutdown::testing {

class PrivateBus {
 public:
  // `dir` must exist; the config and the socket go there.
  static absl::StatusOr<std::unique_ptr<PrivateBus>> Start(const std::string& dir);
  ~PrivateBus();

  // "unix:path=<dir>/bus,guid=...", for DBUS_SYSTEM_BUS_ADDRESS or a client's address.
  const std::string& address() const { return address_; }
  pid_t pid() const { return pid_; }

 private:
  PrivateBus(pid_t pid, std::string address) : pid_(pid), address_(std::move(address)) {}
  pid_t pid_;
  std::string address_;
};

// The dbus-daemon executable (PATH, then /usr/bin); empty when none.
std::string FindDBusDaemon();

}  // namespace kubelet::nodeshutdown::testing

#endif  // KUBELET_KUBELET_NODESHUTDOWN_TESTING_PRIVATE_BUS_H_
