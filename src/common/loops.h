// Loops: the periodic and woken work of a component (a sync loop, a relist, a status round)
// written as a body that a runner calls, instead of a thread the component owns. The runner
// decides what a loop costs: a kubelet runs each loop on a thread of its own (NewLoopThreads,
// waiting by the component's Clock, so FakeClock tests drive it in virtual time); a process of
// many nodes runs every node's loops on one timer thread and an elastic pool (NewSharedLoops).
//
// Contract of a loop:
// - Body(woken) is called at the `first` time given to Start(), then at the time each call
//   returns (absl::InfiniteFuture(): only when woken; a time already reached: again at once),
//   and soon after Wake(). `woken` says that a Wake() came since the previous call began. Wakes
//   coalesce: any number of them while a call runs or waits for its turn make one call.
// - Calls of one loop never overlap, and each happens-after the previous one: a body may keep
//   its state in plain members. Different loops run concurrently.
// - Stop() waits for a call in progress and makes sure no call follows; idempotent, and also
//   run by the destructor. It must not be called from the loop's own body.
// - A body that throws is logged (RunGuarded) and called again after kLoopRetryAfter.
//
// Thread-safety: Start, Wake and Stop may be called from any thread. A Loops runner must outlive
// the loops it started.
#ifndef KUBELET_COMMON_LOOPS_H_
#define KUBELET_COMMON_LOOPS_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "common/clock.h"

namespace kubelet {

// When a body that threw is called again.
inline constexpr absl::Duration kLoopRetryAfter = absl::Seconds(1);

// Returns when the body wants to run next.
using LoopBody = std::function<absl::Time(bool woken)>;

class Loop {
 public:
  virtual ~Loop() = default;
  virtual void Wake() = 0;
  virtual void Stop() = 0;
};

class Loops {
 public:
  virtual ~Loops() = default;
  // `name` names the thread (per-loop runner) and log lines. `first`: when the first call is due
  // (absl::InfinitePast(): now).
  virtual std::unique_ptr<Loop> Start(std::string name, absl::Time first, LoopBody body) = 0;
};

// A thread per loop, started by Start() and joined by Stop(); waits by `clock` (which must
// outlive the runner).
std::unique_ptr<Loops> NewLoopThreads(const Clock& clock);

struct SharedLoopsOptions {
  int max_threads = 1024;                           // bodies running at once, at most
  absl::Duration idle_timeout = absl::Seconds(10);  // a pool thread without work leaves
};
// Every loop on one timer thread (waiting by `clock`) that hands due and woken loops to an
// elastic pool: a loop holds no thread between its calls.
std::unique_ptr<Loops> NewSharedLoops(const Clock& clock, SharedLoopsOptions options = {});

// `shared` when given, else a thread-per-loop runner made into `own`.
Loops& LoopsOrOwn(Loops* shared, std::unique_ptr<Loops>& own, const Clock& clock);

}  // namespace kubelet

#endif  // KUBELET_COMMON_LOOPS_H_
