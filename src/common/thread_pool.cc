#include "common/thread_pool.h"

#include <algorithm>
#include <system_error>

#include "common/guarded.h"
#include "common/log.h"

namespace kubelet {

ThreadPool::ThreadPool(int threads)
    : ThreadPool(std::max(1, threads), std::max(1, threads), absl::InfiniteDuration()) {}

ThreadPool::ThreadPool(int min_threads, int max_threads, absl::Duration idle_timeout)
    : min_threads_(std::max(0, min_threads)),
      max_threads_(std::max({1, min_threads, max_threads})),
      idle_timeout_(idle_timeout) {
  absl::MutexLock lock(&mu_);
  for (int i = 0; i < min_threads_; ++i) SpawnLocked();
}

ThreadPool::~ThreadPool() { Stop(); }

void ThreadPool::SpawnLocked() {
  std::thread t;
  try {
    t = std::thread([this] { Loop(); });
  } catch (const std::system_error& e) {
    // Out of threads (RLIMIT_NPROC, memory): the work stays queued for the running threads,
    // and the next Submit tries again.
    KLOG_ERROR(absl::ResourceExhaustedError(e.what()), "Failed to start a pool thread", "threads",
               live_);
    return;
  }
  ++live_;
  std::thread::id id = t.get_id();
  threads_.emplace(id, std::move(t));
}

void ThreadPool::Submit(std::function<void()> fn) {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    queue_.push_back(std::move(fn));
    if (static_cast<size_t>(idle_) < queue_.size() && live_ < max_threads_) SpawnLocked();
  }
  ReapExited();
}

void ThreadPool::ReapExited() {
  std::vector<std::thread> done;
  {
    absl::MutexLock lock(&mu_);
    done.swap(exited_);
  }
  for (auto& t : done) t.join();
}

void ThreadPool::Stop() {
  std::vector<std::thread> all;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    for (auto& [id, t] : threads_) all.push_back(std::move(t));
    threads_.clear();
    for (auto& t : exited_) all.push_back(std::move(t));
    exited_.clear();
  }
  for (auto& t : all) {
    if (t.joinable()) t.join();
  }
}

int ThreadPool::threads() const {
  absl::MutexLock lock(&mu_);
  return live_;
}

void ThreadPool::Loop() {
  mu_.Lock();
  for (;;) {
    auto ready = [this]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); };
    ++idle_;
    bool woken = true;
    if (live_ > min_threads_ && idle_timeout_ != absl::InfiniteDuration()) {
      woken = mu_.AwaitWithTimeout(absl::Condition(&ready), idle_timeout_);
    } else {
      mu_.Await(absl::Condition(&ready));
    }
    --idle_;
    if (queue_.empty()) {
      if (stopping_ || (!woken && live_ > min_threads_)) break;
      continue;
    }
    std::function<void()> fn = std::move(queue_.front());
    queue_.pop_front();
    mu_.Unlock();
    RunGuarded("thread pool task", fn);
    fn = nullptr;  // the closure's captures die outside the lock too
    mu_.Lock();
  }
  --live_;
  // Hand our own std::thread to whoever joins next (Submit or Stop); Stop may already hold it.
  auto it = threads_.find(std::this_thread::get_id());
  if (it != threads_.end()) {
    exited_.push_back(std::move(it->second));
    threads_.erase(it);
  }
  mu_.Unlock();
}

}  // namespace kubelet
