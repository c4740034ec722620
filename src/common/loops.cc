#include "common/loops.h"

#include <algorithm>
#include <map>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/guarded.h"
#include "common/thread_pool.h"

namespace kubelet {
namespace {

// One call of `body`; a throw makes it due again after kLoopRetryAfter.
absl::Time CallBody(const std::string& name, const LoopBody& body, const Clock& clock, bool woken) {
  absl::Time next = absl::InfiniteFuture();
  if (!RunGuarded(name, [&] { next = body(woken); })) next = clock.Now() + kLoopRetryAfter;
  return next;
}

// --- A thread per loop. ---

class ThreadLoop final : public Loop {
 public:
  ThreadLoop(const Clock& clock, std::string name, absl::Time first, LoopBody body)
      : clock_(clock), name_(std::move(name)), body_(std::move(body)), due_(first) {
    thread_ = GuardedThread(name_, [this] { Run(); });
  }
  ~ThreadLoop() override { Stop(); }

  void Wake() override {
    absl::MutexLock lock(&mu_);
    woken_ = true;
  }

  void Stop() override {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    absl::MutexLock join_lock(&join_mu_);
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Run() {
    absl::MutexLock lock(&mu_);
    for (;;) {
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || woken_; };
      if (!ready() && due_ > clock_.Now()) {
        clock_.AwaitWithDeadline(mu_, absl::Condition(&ready), due_);
      }
      if (stopping_) return;
      const bool woken = woken_;
      woken_ = false;
      mu_.Unlock();
      const absl::Time next = CallBody(name_, body_, clock_, woken);
      mu_.Lock();
      due_ = next;
    }
  }

  const Clock& clock_;
  const std::string name_;
  const LoopBody body_;
  absl::Mutex mu_;
  absl::Time due_ ABSL_GUARDED_BY(mu_);
  bool woken_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Mutex join_mu_;
  std::thread thread_;
};

class LoopThreads final : public Loops {
 public:
  explicit LoopThreads(const Clock& clock) : clock_(clock) {}
  std::unique_ptr<Loop> Start(std::string name, absl::Time first, LoopBody body) override {
    return std::make_unique<ThreadLoop>(clock_, std::move(name), first, std::move(body));
  }

 private:
  const Clock& clock_;
};

// --- Every loop on one timer thread and a pool. ---

class SharedLoops;

// A loop's state, guarded by its runner's mutex. Shared with the pool task running it.
struct SharedState {
  std::string name;
  LoopBody body;
  absl::Time due;        // when it is due (InfiniteFuture: only when woken)
  bool queued = false;   // in the runner's timer set at `due`
  bool running = false;  // handed to the pool, or its body runs
  bool woken = false;    // a Wake() since the last call began
  bool stopped = false;
  uint64_t id = 0;
};

class SharedLoop final : public Loop {
 public:
  SharedLoop(SharedLoops& runner, std::shared_ptr<SharedState> state)
      : runner_(runner), state_(std::move(state)) {}
  ~SharedLoop() override { Stop(); }
  void Wake() override;
  void Stop() override;

 private:
  SharedLoops& runner_;
  const std::shared_ptr<SharedState> state_;
};

class SharedLoops final : public Loops {
 public:
  SharedLoops(const Clock& clock, SharedLoopsOptions options)
      : clock_(clock),
        // Bodies are short but come in bursts (loops started together stay due together): the
        // pool grows only when none of its threads is idle, so a burst is run by the threads
        // there are, and a body that blocks still gets the others a new thread.
        pool_(0, std::max(1, options.max_threads), options.idle_timeout,
              ThreadPool::Growth::kWhenStalled) {
    pool_.SetThreadName("loops");
    timer_ = GuardedThread("loop timer", [this] { TimerLoop(); });
  }

  ~SharedLoops() override {
    {
      absl::MutexLock lock(&mu_);
      shutdown_ = true;
    }
    timer_.join();
    pool_.Stop();
  }

  std::unique_ptr<Loop> Start(std::string name, absl::Time first, LoopBody body) override {
    auto state = std::make_shared<SharedState>();
    state->name = std::move(name);
    state->body = std::move(body);
    {
      absl::MutexLock lock(&mu_);
      state->id = ++next_id_;
      ScheduleLocked(state, first);
    }
    return std::make_unique<SharedLoop>(*this, state);
  }

  void Wake(const std::shared_ptr<SharedState>& s) {
    absl::MutexLock lock(&mu_);
    if (s->stopped) return;
    s->woken = true;
    if (s->running) return;  // called again when the running call returns
    UnqueueLocked(*s);
    DispatchLocked(s);
  }

  void Stop(const std::shared_ptr<SharedState>& s) {
    absl::MutexLock lock(&mu_);
    s->stopped = true;
    UnqueueLocked(*s);
    auto idle = [&s]() { return !s->running; };
    mu_.Await(absl::Condition(&idle));
  }

 private:
  using Key = std::pair<absl::Time, uint64_t>;

  void ScheduleLocked(const std::shared_ptr<SharedState>& s, absl::Time due)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    s->due = due;
    if (due <= clock_.Now()) {
      DispatchLocked(s);
      return;
    }
    if (due == absl::InfiniteFuture()) return;
    const bool earliest = timers_.empty() || Key{due, s->id} < timers_.begin()->first;
    timers_.emplace(Key{due, s->id}, s);
    s->queued = true;
    if (earliest) changed_ = true;  // the timer thread waits for an earlier deadline
  }

  void UnqueueLocked(SharedState& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!s.queued) return;
    timers_.erase(Key{s.due, s.id});
    s.queued = false;
  }

  void DispatchLocked(const std::shared_ptr<SharedState>& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    s->running = true;
    // The pool takes its own lock only; it never calls back under it.
    pool_.Submit([this, s] { Run(s); });
  }

  void Run(const std::shared_ptr<SharedState>& s) {
    bool woken;
    {
      absl::MutexLock lock(&mu_);
      if (s->stopped) {
        s->running = false;
        return;
      }
      woken = s->woken;
      s->woken = false;
    }
    const absl::Time next = CallBody(s->name, s->body, clock_, woken);
    absl::MutexLock lock(&mu_);
    s->running = false;
    if (s->stopped) return;
    if (s->woken) {
      DispatchLocked(s);
      return;
    }
    ScheduleLocked(s, next);
  }

  void TimerLoop() {
    absl::MutexLock lock(&mu_);
    while (!shutdown_) {
      const absl::Time now = clock_.Now();
      while (!timers_.empty() && timers_.begin()->first.first <= now) {
        std::shared_ptr<SharedState> s = timers_.begin()->second;
        timers_.erase(timers_.begin());
        s->queued = false;
        DispatchLocked(s);
      }
      absl::Time deadline = timers_.empty() ? absl::InfiniteFuture() : timers_.begin()->first.first;
      // While bodies wait for a thread, the pool is looked at every millisecond: one whose
      // threads are all blocked grows (real time: the pool's own measure).
      const absl::Time stalled_check = pool_.GrowIfStalled();
      if (stalled_check != absl::InfiniteFuture()) {
        deadline = std::min(deadline, clock_.Now() + (stalled_check - absl::Now()));
      }
      changed_ = false;
      auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return changed_ || shutdown_; };
      clock_.AwaitWithDeadline(mu_, absl::Condition(&woken), deadline);
    }
  }

  const Clock& clock_;
  absl::Mutex mu_;
  std::map<Key, std::shared_ptr<SharedState>> timers_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  bool changed_ ABSL_GUARDED_BY(mu_) = false;
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  ThreadPool pool_;
  std::thread timer_;
};

void SharedLoop::Wake() { runner_.Wake(state_); }
void SharedLoop::Stop() { runner_.Stop(state_); }

}  // namespace

std::unique_ptr<Loops> NewLoopThreads(const Clock& clock) {
  return std::make_unique<LoopThreads>(clock);
}

std::unique_ptr<Loops> NewSharedLoops(const Clock& clock, SharedLoopsOptions options) {
  return std::make_unique<SharedLoops>(clock, options);
}

Loops& LoopsOrOwn(Loops* shared, std::unique_ptr<Loops>& own, const Clock& clock) {
  if (shared != nullptr) return *shared;
  if (!own) own = NewLoopThreads(clock);
  return *own;
}

}  // namespace kubelet
