// The Logind of logind.h on a real bus, with sd-bus (upstream systemd/inhibit_linux.go on
// godbus):
//
// - The connection: the system bus (sd_bus_open_system: DBUS_SYSTEM_BUS_ADDRESS when set,
//   /run/dbus/system_bus_socket otherwise), or `bus_address` when given. A bus that cannot be
//   reached fails as godbus reports it ("dial unix /var/run/dbus/system_bus_socket: connect: no
//   such file or directory"). Method calls time out after sd-bus's default 25 s, so a logind that
//   never answers delays, and never stops, the kubelet.
// - CurrentInhibitDelay reads the InhibitDelayMaxUSec property ("failed reading
//   InhibitDelayMaxUSec property from logind: ..."; "InhibitDelayMaxUSec from logind is not a
//   uint64 as expected").
// - InhibitShutdown calls Inhibit and keeps a duplicate of the returned descriptor ("failed
//   creating systemd inhibitor: ...").
// - ReleaseInhibitLock closes it ("unable to close systemd inhibitor lock: ...").
// - OverrideInhibitDelay writes <config_directory>/99-kubelet.conf:
//       # Kubelet logind override
//       [Login]
//       InhibitDelayMaxSec=<seconds, rounded>
//   creating the directory (0755; "failed creating <dir> directory: ..."), the file 0644
//   ("failed writing logind shutdown inhibit override file <path>: ...").
// - ReloadLogindConf calls org.freedesktop.systemd1.Manager.KillUnit("systemd-logind.service",
//   "all", SIGHUP) ("unable to reload logind conf: ...").
// - MonitorShutdown adds a match on type signal, path /org/freedesktop/login1, interface
//   org.freedesktop.login1.Manager, member PrepareForShutdown (no sender: a signal emitted with
//   `dbus-send --system --type=signal /org/freedesktop/login1
//   org.freedesktop.login1.Manager.PrepareForShutdown boolean:true` counts, as upstream's node
//   e2e emits it). A signal without a body or whose argument is not a boolean is logged ("Failed
//   obtaining shutdown event, PrepareForShutdown event was empty" / "... was not bool type as
//   expected") and skipped.
// - WaitForShutdownEvent processes the bus (sd_bus_process) and waits on its descriptor and an
//   eventfd for Interrupt() (poll); an error once the connection is closed.
#ifndef KUBELET_KUBELET_NODESHUTDOWN_DBUS_LOGIND_H_
#define KUBELET_KUBELET_NODESHUTDOWN_DBUS_LOGIND_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kubelet/nodeshutdown/logind.h"

namespace kubelet::nodeshutdown {

struct DBusLogindOptions {
  // D-Bus address ("unix:path=/run/x/socket"); empty: the system bus.
  std::string bus_address;
  // Where OverrideInhibitDelay writes its drop-in.
  std::string config_directory = kLogindConfigDirectory;
};

// Connects. Errors: the bus cannot be reached.
absl::StatusOr<std::unique_ptr<Logind>> NewDBusLogind(const DBusLogindOptions& options);

// A factory of such connections (what the manager uses by default).
LogindFactory DBusLogindFactory(DBusLogindOptions options);

// Writes the drop-in of OverrideInhibitDelay (also used without a bus).
absl::Status WriteInhibitDelayOverride(const std::string& config_directory,
                                       absl::Duration inhibit_delay_max);

}  // namespace kubelet::nodeshutdown

#endif  // KUBELET_KUBELET_NODESHUTDOWN_DBUS_LOGIND_H_
