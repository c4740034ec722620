// A pool of worker threads running submitted closures in FIFO order. Blocking CRI calls run
// here, never on the sync loop's or the HTTP server's thread. Per-pod ordering is the caller's
// job (pod workers serialize each pod's work themselves).
//
// Sizing: `min_threads` threads run for the pool's whole life. When work is queued and no thread
// is idle, the pool grows by one thread per queued closure, up to `max_threads`; a thread above
// `min_threads` that finds no work for `idle_timeout` exits. So closures that block for long (a
// probe waiting out its timeout, a hook that hangs) cannot starve the others until `max_threads`
// of them block at once, while an idle pool costs only its core threads.
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
  // An elastic pool (see above). `min_threads` >= 0, `max_threads` >= max(1, min_threads).
  ThreadPool(int min_threads, int max_threads, absl::Duration idle_timeout);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Submit(std::function<void()> fn);
  void Stop();

  // Threads alive now (tests and metrics).
  int threads() const;

 private:
  void SpawnLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Loop();
  // Joins the threads that have left Loop(). Must not hold mu_.
  void ReapExited();

  const int min_threads_;
  const int max_threads_;
  const absl::Duration idle_timeout_;

  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int live_ ABSL_GUARDED_BY(mu_) = 0;  // threads inside Loop()
  int idle_ ABSL_GUARDED_BY(mu_) = 0;  // ... of which waiting for work
  std::map<std::thread::id, std::thread> threads_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> exited_ ABSL_GUARDED_BY(mu_);  // left Loop(), not joined yet
};

}  // namespace kubelet

#endif  // KUBELET_COMMON_THREAD_POOL_H_
