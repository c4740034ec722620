// An unbounded multi-producer queue whose pending state is visible as a readable eventfd, so one
// thread can wait on several queues (and timers, signals) with a single poll(2). This is how the
// sync loop multiplexes config updates, PLEG events and probe results.
//
// Doorbell: one eventfd several queues (and other wake-ups) share, so a consumer of many waits on
// one descriptor: a queue built on a doorbell rings it on Push and leaves it alone on Drain; the
// consumer calls Clear() before it drains every queue of the doorbell (an item pushed meanwhile
// is drained now or rings again: none is missed). A kubelet's sync loop waits on one doorbell.
//
// A doorbell may instead call back on Ring() (no descriptor): how a sync loop run as a Loop
// (common/loops.h) is woken.
//
// Thread-safety: Push, Drain, Ring and Clear may be called from any thread. The fd stays valid
// for the queue's lifetime; it is readable while items are pending (level-triggered after Drain
// resets); a doorbell's is readable from a Ring until the next Clear.
#ifndef KUBELET_COMMON_EVENT_QUEUE_H_
#define KUBELET_COMMON_EVENT_QUEUE_H_

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace kubelet {

class Doorbell {
 public:
  Doorbell() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  // A doorbell without a descriptor: Ring() calls `on_ring` (say, a Loop's Wake), fd() is -1 and
  // Clear() does nothing. `on_ring` must be cheap and thread-safe; it may run with a queue's
  // lock held.
  explicit Doorbell(std::function<void()> on_ring) : fd_(-1), on_ring_(std::move(on_ring)) {}
  ~Doorbell() {
    if (fd_ >= 0) ::close(fd_);
  }
  Doorbell(const Doorbell&) = delete;
  Doorbell& operator=(const Doorbell&) = delete;

  void Ring() const {
    if (on_ring_) {
      on_ring_();
      return;
    }
    uint64_t one = 1;
    ssize_t n = ::write(fd_, &one, sizeof(one));
    (void)n;
  }
  void Clear() const {
    if (fd_ < 0) return;
    uint64_t v;
    ssize_t n = ::read(fd_, &v, sizeof(v));
    (void)n;
  }
  int fd() const { return fd_; }

 private:
  const int fd_;
  const std::function<void()> on_ring_;
};

template <typename T>
class EventQueue {
 public:
  EventQueue() : own_(true), fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  // On `bell` (which must outlive the queue), or a descriptor of its own when null.
  explicit EventQueue(const Doorbell* bell)
      : bell_(bell),
        own_(bell == nullptr),
        fd_(bell ? bell->fd() : ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  ~EventQueue() {
    if (own_ && fd_ >= 0) ::close(fd_);
  }
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  void Push(T item) {
    {
      absl::MutexLock lock(&mu_);
      items_.push_back(std::move(item));
    }
    if (bell_ != nullptr) {
      bell_->Ring();
      return;
    }
    uint64_t one = 1;
    ssize_t n = ::write(fd_, &one, sizeof(one));
    (void)n;
  }

  // Takes every pending item, oldest first, and clears the fd's readiness (a doorbell's is the
  // consumer's to clear).
  std::vector<T> Drain() {
    if (own_) {
      uint64_t v;
      ssize_t n = ::read(fd_, &v, sizeof(v));
      (void)n;
    }
    absl::MutexLock lock(&mu_);
    std::vector<T> out(std::make_move_iterator(items_.begin()),
                       std::make_move_iterator(items_.end()));
    items_.clear();
    return out;
  }

  size_t Size() const {
    absl::MutexLock lock(&mu_);
    return items_.size();
  }

  int fd() const { return fd_; }

 private:
  const Doorbell* const bell_ = nullptr;
  const bool own_;
  const int fd_;
  mutable absl::Mutex mu_;
  std::deque<T> items_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet

#endif  // KUBELET_COMMON_EVENT_QUEUE_H_
