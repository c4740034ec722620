#include "common/clock.h"

#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <ctime>

namespace kubelet {
namespace {

// How often a FakeClock wait re-checks the fake time.
constexpr absl::Duration kFakePoll = absl::Milliseconds(1);

void Drain(int fd) {
  uint64_t v;
  while (::read(fd, &v, sizeof(v)) > 0) {
  }
}

class RealTimer final : public Timer {
 public:
  RealTimer() : fd_(::timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK)) {}
  ~RealTimer() override {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const override { return fd_; }
  void Reset(absl::Time deadline) override {
    Drain(fd_);
    struct itimerspec spec = {};
    spec.it_value = absl::ToTimespec(deadline);
    // A zero it_value disarms: a deadline at or before the epoch fires at once instead.
    if (spec.it_value.tv_sec <= 0 && spec.it_value.tv_nsec <= 0) spec.it_value.tv_nsec = 1;
    ::timerfd_settime(fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
  }
  void Stop() override {
    struct itimerspec spec = {};
    ::timerfd_settime(fd_, 0, &spec, nullptr);
    Drain(fd_);
  }
  void Clear() override { Drain(fd_); }

 private:
  int fd_;
};

}  // namespace

bool RealClock::AwaitWithDeadline(absl::Mutex& mu, const absl::Condition& cond,
                                  absl::Time deadline) const {
  return mu.AwaitWithDeadline(cond, deadline);
}

bool RealClock::WaitForNotification(const absl::Notification& n, absl::Time deadline) const {
  return n.WaitForNotificationWithDeadline(deadline);
}

std::unique_ptr<Timer> RealClock::NewTimer() const { return std::make_unique<RealTimer>(); }

class FakeClock::FakeTimer final : public Timer {
 public:
  explicit FakeTimer(const FakeClock& clock)
      : clock_(clock), fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    absl::MutexLock lock(&clock_.mu_);
    clock_.timers_.insert(this);
  }
  ~FakeTimer() override {
    {
      absl::MutexLock lock(&clock_.mu_);
      clock_.timers_.erase(this);
    }
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const override { return fd_; }
  void Reset(absl::Time deadline) override {
    absl::MutexLock lock(&clock_.mu_);
    Drain(fd_);
    armed_ = true;
    deadline_ = deadline;
    FireIfDue(clock_.now_);
  }
  void Stop() override {
    absl::MutexLock lock(&clock_.mu_);
    armed_ = false;
    Drain(fd_);
  }
  void Clear() override { Drain(fd_); }

 private:
  friend class FakeClock;
  void FireIfDue(absl::Time now) {
    if (!armed_ || now < deadline_) return;
    armed_ = false;
    uint64_t one = 1;
    ssize_t r = ::write(fd_, &one, sizeof(one));
    (void)r;
  }

  const FakeClock& clock_;
  const int fd_;
  // Guarded by clock_.mu_.
  bool armed_ = false;
  absl::Time deadline_;
};

FakeClock::~FakeClock() = default;

absl::Time FakeClock::Now() const {
  absl::MutexLock lock(&mu_);
  return now_;
}

void FakeClock::Advance(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  now_ += d;
  FireDue();
}

void FakeClock::Set(absl::Time t) {
  absl::MutexLock lock(&mu_);
  now_ = t;
  FireDue();
}

void FakeClock::FireDue() {
  for (FakeTimer* t : timers_) t->FireIfDue(now_);
}

int FakeClock::Waiters() const {
  absl::MutexLock lock(&mu_);
  int armed = 0;
  for (const FakeTimer* t : timers_) armed += t->armed_ ? 1 : 0;
  return armed + waits_;
}

bool FakeClock::AwaitWithDeadline(absl::Mutex& mu, const absl::Condition& cond,
                                  absl::Time deadline) const {
  {
    absl::MutexLock lock(&mu_);
    ++waits_;
  }
  // Lock order: the waiter's mutex, then the clock's (Now() inside the condition).
  auto done = [&] { return cond.Eval() || Now() >= deadline; };
  while (!mu.AwaitWithTimeout(absl::Condition(&done), kFakePoll)) {
  }
  {
    absl::MutexLock lock(&mu_);
    --waits_;
  }
  return cond.Eval();
}

bool FakeClock::WaitForNotification(const absl::Notification& n, absl::Time deadline) const {
  {
    absl::MutexLock lock(&mu_);
    ++waits_;
  }
  bool notified = false;
  while (!(notified = n.WaitForNotificationWithTimeout(kFakePoll)) && Now() < deadline) {
  }
  {
    absl::MutexLock lock(&mu_);
    --waits_;
  }
  return notified || n.HasBeenNotified();
}

std::unique_ptr<Timer> FakeClock::NewTimer() const { return std::make_unique<FakeTimer>(*this); }

}  // namespace kubelet
