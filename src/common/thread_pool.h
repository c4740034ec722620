// A pool of worker threads running submitted closures in FIFO order. Blocking CRI calls run
// here, never on the sync loop's or the HTTP server's thread. Per-pod ordering is the caller's
// job (pod workers serialize each pod's work themselves).
//
// Sizing: `min_threads` threads run for the pool's whole life. When work is queued and no thread
// is idle, the pool grows by one thread per queued closure, up to `max_threads` (with
// `Growth::kWhenStalled`, only when the oldest queued closure has waited for more than a
// millisecond (seen by Submit or GrowIfStalled, which the owner calls), or the pool has no thread:
// a burst of short closures is run by the threads there are instead of one new thread each, while
// closures that block still get the others threads). Work goes to the thread that became idle last,
// so threads the load no longer needs stay idle, and a thread above `min_threads` that finds no
// work for `idle_timeout` exits. So closures that block for long (a probe waiting out its timeout,
// a hook that hangs) cannot starve the others until `max_threads` of them block at once, while an
// idle pool costs only its core threads.
//
// Failure: a closure that throws is caught and logged (common/guarded.h); its thread goes on to
// the next closure.
//
// Thread-safety: Submit from any thread. The destructor (or Stop) lets queued work finish, then
// joins every thread; work submitted after Stop is dropped. Closures must not call Stop.
#ifndef KUBELET_COMMON_THREAD_POOL_H_
#define KUBELET_COMMON_THREAD_POOL_H_

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace kubelet {

class ThreadPool {
 public:
  // A fixed pool of `threads` threads.
  explicit ThreadPool(int threads);
  enum class Growth { kPerQueuedClosure, kWhenStalled };
  // An elastic pool (see above). `min_threads` >= 0, `max_threads` >= max(1, min_threads).
  ThreadPool(int min_threads, int max_threads, absl::Duration idle_timeout,
             Growth growth = Growth::kPerQueuedClosure);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Submit(std::function<void()> fn);
  void Stop();
  // Growth::kWhenStalled: adds a thread when the oldest queued closure has waited too long and
  // no thread is idle (Submit checks too, but only when something is submitted). Returns when
  // to call it again: InfiniteFuture() while nothing is queued.
  absl::Time GrowIfStalled();
  // Names the pool's threads, those running and those to come (the kernel's comm, 15
  // characters; for ps/top and debuggers).
  void SetThreadName(std::string name);

  // Threads alive now (tests and metrics).
  int threads() const;

 private:
  void SpawnLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The oldest queued closure has waited too long (Growth::kWhenStalled).
  bool StalledLocked(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Loop();
  // Joins the threads that have left Loop(). Must not hold mu_.
  void ReapExited();

  const int min_threads_;
  const int max_threads_;
  const absl::Duration idle_timeout_;
  const Growth growth_;
  std::string thread_name_ ABSL_GUARDED_BY(mu_);

  struct Task {
    std::function<void()> fn;
    absl::Time queued;
  };
  // An idle thread's wait: set when work is handed to it.
  struct Waiter {
    bool woken = false;
    absl::CondVar cv;
  };

  mutable absl::Mutex mu_;
  std::deque<Task> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int live_ ABSL_GUARDED_BY(mu_) = 0;  // threads inside Loop()
  // The idle threads' waits, the last to become idle on top: work is handed from the top.
  std::vector<Waiter*> idle_ ABSL_GUARDED_BY(mu_);
  std::map<std::thread::id, std::thread> threads_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> exited_ ABSL_GUARDED_BY(mu_);  // left Loop(), not joined yet
};

}  // namespace kubelet

#endif  // KUBELET_COMMON_THREAD_POOL_H_
