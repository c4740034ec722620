// A fixed-size pool of worker threads running submitted closures in FIFO order. Blocking CRI
// calls run here, never on the sync loop's or the HTTP server's thread. Per-pod ordering is the
// caller's job (pod workers serialize each pod's work themselves).
//
// Thread-safety: Submit from any thread. The destructor (or Stop) lets queued work finish, then
// joins; work submitted after Stop is dropped.
#ifndef KUBELET_COMMON_THREAD_POOL_H_
#define KUBELET_COMMON_THREAD_POOL_H_

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace kubelet {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Submit(std::function<void()> fn);
  void Stop();

 private:
  void Loop();

  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace kubelet

#endif  // KUBELET_COMMON_THREAD_POOL_H_
