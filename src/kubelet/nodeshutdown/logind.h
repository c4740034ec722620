// Logind: what the node shutdown manager needs of systemd-logind (upstream
// pkg/kubelet/nodeshutdown/systemd, the manager's dbusInhibiter), separate from the manager's
// logic so that logic runs in tests on a fake (testing/fake_logind.h). The real one talks to the
// system bus through sd-bus (dbus_logind.h).
//
// One instance is one bus connection:
//   CurrentInhibitDelay   logind's InhibitDelayMaxUSec property (µs), as a duration
//   InhibitShutdown       Inhibit("shutdown", "kubelet", "Kubelet needs time to handle node
//                         shutdown", "delay"): a delay inhibitor lock, a file descriptor the
//                         caller owns
//   ReleaseInhibitLock    closes that descriptor, letting a pending shutdown go on
//   OverrideInhibitDelay  writes the logind drop-in raising InhibitDelayMaxSec
//   ReloadLogindConf      makes logind re-read its configuration (systemd's KillUnit
//                         systemd-logind.service SIGHUP)
//   MonitorShutdown       subscribes to logind's PrepareForShutdown(b) signal
//   WaitForShutdownEvent  blocks until a PrepareForShutdown arrives (its argument), Interrupt()
//                         is called (nullopt) or the connection ends (an error)
//
// Thread-safety: an instance is used by one thread at a time, except Interrupt(), which any
// thread may call at any time; an interrupt that arrives while no wait is in progress makes the
// next WaitForShutdownEvent return nullopt at once.
#ifndef KUBELET_KUBELET_NODESHUTDOWN_LOGIND_H_
#define KUBELET_KUBELET_NODESHUTDOWN_LOGIND_H_

#include <functional>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kubelet::nodeshutdown {

// Where upstream writes its logind drop-in, and the drop-in's name.
inline constexpr char kLogindConfigDirectory[] = "/etc/systemd/logind.conf.d/";
inline constexpr char kKubeletLogindConf[] = "99-kubelet.conf";

// The bus names, paths and interfaces involved.
inline constexpr char kLogindService[] = "org.freedesktop.login1";
inline constexpr char kLogindObject[] = "/org/freedesktop/login1";
inline constexpr char kLogindInterface[] = "org.freedesktop.login1.Manager";
inline constexpr char kSystemdService[] = "org.freedesktop.systemd1";
inline constexpr char kSystemdObject[] = "/org/freedesktop/systemd1";
inline constexpr char kSystemdInterface[] = "org.freedesktop.systemd1.Manager";
inline constexpr char kLogindUnit[] = "systemd-logind.service";

// The inhibitor the kubelet takes.
inline constexpr char kInhibitWhat[] = "shutdown";
inline constexpr char kInhibitWho[] = "kubelet";
inline constexpr char kInhibitWhy[] = "Kubelet needs time to handle node shutdown";
inline constexpr char kInhibitMode[] = "delay";

// A delay inhibitor lock: the descriptor logind handed out (owned by whoever holds the lock).
struct InhibitLock {
  int fd = -1;
};

class Logind {
 public:
  virtual ~Logind() = default;
  virtual absl::StatusOr<absl::Duration> CurrentInhibitDelay() = 0;
  virtual absl::StatusOr<InhibitLock> InhibitShutdown() = 0;
  virtual absl::Status ReleaseInhibitLock(InhibitLock lock) = 0;
  virtual absl::Status ReloadLogindConf() = 0;
  virtual absl::Status OverrideInhibitDelay(absl::Duration inhibit_delay_max) = 0;
  virtual absl::Status MonitorShutdown() = 0;
  virtual absl::StatusOr<std::optional<bool>> WaitForShutdownEvent() = 0;
  virtual void Interrupt() = 0;
};

// A new connection (upstream systemDbus()); the manager calls it at start and again after the
// connection was lost.
using LogindFactory = std::function<absl::StatusOr<std::unique_ptr<Logind>>()>;

}  // namespace kubelet::nodeshutdown

#endif  // KUBELET_KUBELET_NODESHUTDOWN_LOGIND_H_
