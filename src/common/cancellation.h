// Cancellation: a one-shot signal that blocking work started on behalf of something (one pod's
// sync step) should give up, as a cancelled Go context tells upstream's CRI calls and hook
// requests to. A kill request for a pod whose sync is in flight cancels that sync, so a postStart
// hook that never returns or a pull of a huge image cannot keep the pod from being deleted.
//
// The cancellation of the work a thread does is installed for a scope (ScopedCancellation) by
// whoever runs that work (the pod workers), and found by the blocking calls deep below it
// (CurrentCancellation(): the CRI client's unary calls, the HTTP hook client) without threading
// it through every interface in between. Work that nobody can cancel sees none.
//
// Thread-safety: Cancellation is thread-safe. Callbacks run on the thread that calls Cancel(),
// under the Cancellation's lock (so that OnCancel's destructor can wait for them): they must be
// quick and must not touch the Cancellation. One that throws is logged and the others still run.
// ScopedCancellation and OnCancel are used on one thread.
#ifndef KUBELET_COMMON_CANCELLATION_H_
#define KUBELET_COMMON_CANCELLATION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace kubelet {

class Cancellation {
 public:
  // Idempotent: the first call runs every registered callback.
  void Cancel();
  bool IsCancelled() const { return cancelled_.load(std::memory_order_acquire); }

 private:
  friend class OnCancel;
  // Registers `fn`; returns 0 without registering when already cancelled.
  uint64_t Register(std::function<void()> fn);
  void Unregister(uint64_t id);

  std::atomic<bool> cancelled_{false};
  absl::Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, std::function<void()>> callbacks_ ABSL_GUARDED_BY(mu_);
};

// The cancellation installed on this thread, or null.
Cancellation* CurrentCancellation();

// Installs `c` (may be null) as this thread's cancellation for the object's lifetime.
class ScopedCancellation {
 public:
  explicit ScopedCancellation(std::shared_ptr<Cancellation> c);
  ~ScopedCancellation();
  ScopedCancellation(const ScopedCancellation&) = delete;
  ScopedCancellation& operator=(const ScopedCancellation&) = delete;

 private:
  std::shared_ptr<Cancellation> c_;
  Cancellation* previous_;
};

// Runs `fn` if this thread's cancellation (at construction) is cancelled while the object
// lives. The destructor unregisters, waiting for a running `fn`.
class OnCancel {
 public:
  explicit OnCancel(std::function<void()> fn);
  ~OnCancel();
  OnCancel(const OnCancel&) = delete;
  OnCancel& operator=(const OnCancel&) = delete;
  // The cancellation was already cancelled at construction (`fn` was not registered) or has
  // been since.
  bool cancelled() const { return c_ != nullptr && c_->IsCancelled(); }

 private:
  Cancellation* c_;
  uint64_t id_ = 0;
};

}  // namespace kubelet

#endif  // KUBELET_COMMON_CANCELLATION_H_
