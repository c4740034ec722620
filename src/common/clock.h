// Injected time. Code that schedules, backs off, waits or timestamps takes a Clock so tests can
// use FakeClock and advance time instead of sleeping: every wait below ends by the clock's own
// time, so a loop that waits through its Clock runs in virtual time under a FakeClock.
//
// - Now(): the clock's time.
// - AwaitWithDeadline(mu, cond, deadline): as absl::Mutex::AwaitWithDeadline, with `deadline` on
//   this clock; `cond` is re-evaluated whenever `mu` is released, as absl does.
// - WaitForNotification(n, deadline): as absl::Notification::WaitForNotificationWithDeadline.
// - NewTimer(): a one-shot timer with a file descriptor for poll() loops: it polls readable from
//   the moment the clock reaches the armed deadline until Clear().
//
// Thread-safety: clocks and timers are thread-safe; a Timer must not outlive its Clock.
#ifndef KUBELET_COMMON_CLOCK_H_
#define KUBELET_COMMON_CLOCK_H_

#include <memory>
#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kubelet {

class Timer {
 public:
  virtual ~Timer() = default;
  // Readable (POLLIN) once the timer fired, until Clear(). Owned by the timer.
  virtual int fd() const = 0;
  // Arms the timer for `deadline`, replacing an earlier arming and clearing a firing not yet
  // consumed; a deadline already reached fires at once.
  virtual void Reset(absl::Time deadline) = 0;
  // Disarms the timer and clears a pending firing.
  virtual void Stop() = 0;
  // Consumes a firing (fd() stops polling readable); the timer stays disarmed until Reset().
  virtual void Clear() = 0;
};

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
  // Called with `mu` held; returns whether `cond` holds (false: the deadline passed first).
  virtual bool AwaitWithDeadline(absl::Mutex& mu, const absl::Condition& cond,
                                 absl::Time deadline) const = 0;
  // Whether `n` was notified before this clock reached `deadline`.
  virtual bool WaitForNotification(const absl::Notification& n, absl::Time deadline) const = 0;
  virtual std::unique_ptr<Timer> NewTimer() const = 0;

  bool AwaitWithTimeout(absl::Mutex& mu, const absl::Condition& cond, absl::Duration d) const {
    return AwaitWithDeadline(mu, cond, Now() + d);
  }
  bool WaitForNotificationWithTimeout(const absl::Notification& n, absl::Duration d) const {
    return WaitForNotification(n, Now() + d);
  }
};

// Wall-clock time; timers are timerfds on CLOCK_REALTIME (absl::Time is wall time).
class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  bool AwaitWithDeadline(absl::Mutex& mu, const absl::Condition& cond,
                         absl::Time deadline) const override;
  bool WaitForNotification(const absl::Notification& n, absl::Time deadline) const override;
  std::unique_ptr<Timer> NewTimer() const override;
};

// A clock that moves only when told to. Advance() and Set() fire the timers whose deadline was
// reached and wake the waits whose deadline passed (a wait notices within about a millisecond:
// waits re-check the fake time on a short real-time period, so no lock order ties a waiter's
// mutex to the clock's).
class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1700000000)) : now_(start) {}
  ~FakeClock() override;
  absl::Time Now() const override;
  bool AwaitWithDeadline(absl::Mutex& mu, const absl::Condition& cond,
                         absl::Time deadline) const override;
  bool WaitForNotification(const absl::Notification& n, absl::Time deadline) const override;
  std::unique_ptr<Timer> NewTimer() const override;

  void Advance(absl::Duration d);
  void Set(absl::Time t);
  // Armed timers and waits in progress: how a test knows a loop went back to waiting.
  int Waiters() const;

 private:
  class FakeTimer;
  friend class FakeTimer;
  void FireDue() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  mutable std::set<FakeTimer*> timers_ ABSL_GUARDED_BY(mu_);
  mutable int waits_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kubelet

#endif  // KUBELET_COMMON_CLOCK_H_
