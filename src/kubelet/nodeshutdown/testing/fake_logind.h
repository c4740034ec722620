// FakeLogind: an in-memory logind for the node shutdown manager's unit tests. Factory() hands
// out connections (Logind) that all talk to this one fake:
//   - InhibitDelayMax is what CurrentInhibitDelay reports; OverrideInhibitDelay records the
//     drop-in's value, and ReloadLogindConf makes it the current one unless
//     set_ignore_override(true) (a logind whose drop-ins are shadowed);
//   - InhibitShutdown hands out a real descriptor (a pipe's write end, so closing it releases the
//     lock as with logind); HeldLocks() counts the locks not released yet;
//   - Emit(b) delivers PrepareForShutdown(b) to the current connection's waits; Disconnect()
//     ends that connection (its waits fail), as a lost bus does;
//   - FailNext(method, status) makes the next call of that method fail; FailConnect(n) makes the
//     next n connection attempts fail.
// Calls() lists what the connections were asked, in order ("CurrentInhibitDelay",
// "OverrideInhibitDelay 30s", "ReloadLogindConf", "InhibitShutdown", "ReleaseInhibitLock",
// "MonitorShutdown", "Connect").
// Thread-safety: every method is thread-safe; the fake must outlive its connections.
#ifndef KUBELET_KUBELET_NODESHUTDOWN_TESTING_FAKE_LOGIND_H_
#define KUBELET_KUBELET_NODESHUTDOWN_TESTING_FAKE_LOGIND_H_

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kubelet/nodeshutdown/logind.h"

namespace kubelet::nodeshutdown::testing {

class FakeLogind {
 public:
  explicit FakeLogind(absl::Duration inhibit_delay_max = absl::Seconds(5));
  ~FakeLogind();

  LogindFactory Factory();

  void set_inhibit_delay_max(absl::Duration d);
  absl::Duration inhibit_delay_max() const;
  void set_ignore_override(bool ignore);
  void FailNext(const std::string& method, absl::Status status);
  void FailConnect(int times, absl::Status status);

  void Emit(bool shutting_down);
  void Disconnect();

  int HeldLocks() const;
  // Connections made so far, and whether one is live and watching PrepareForShutdown.
  int Connections() const;
  bool Monitoring() const;
  // Interrupt() calls so far (the manager's Stop interrupts its connection).
  int Interrupts() const;
  std::vector<std::string> Calls() const;

 private:
  class Connection;
  friend class Connection;

  absl::Status TakeFailure(const std::string& method) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  absl::Duration inhibit_delay_max_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Duration> override_ ABSL_GUARDED_BY(mu_);
  bool ignore_override_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::deque<absl::Status>> failures_ ABSL_GUARDED_BY(mu_);
  int connect_failures_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status connect_failure_ ABSL_GUARDED_BY(mu_);
  std::vector<int> lock_read_ends_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
  int connections_ ABSL_GUARDED_BY(mu_) = 0;
  // The live connection (the latest), its events, and whether it subscribed.
  int current_ ABSL_GUARDED_BY(mu_) = 0;
  bool monitoring_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<bool> events_ ABSL_GUARDED_BY(mu_);
  std::map<int, bool> interrupted_ ABSL_GUARDED_BY(mu_);
  int interrupts_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kubelet::nodeshutdown::testing

#endif  // KUBELET_KUBELET_NODESHUTDOWN_TESTING_FAKE_LOGIND_H_
