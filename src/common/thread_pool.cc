#include "common/thread_pool.h"

#include <algorithm>
#include <system_error>

#include "common/guarded.h"
#include "common/log.h"

namespace kubelet {
namespace {

// Growth::kWhenStalled: how long the oldest queued closure waits before the pool grows.
constexpr absl::Duration kStalled = absl::Milliseconds(1);

}  // namespace

ThreadPool::ThreadPool(int threads)
    : ThreadPool(std::max(1, threads), std::max(1, threads), absl::InfiniteDuration()) {}

ThreadPool::ThreadPool(int min_threads, int max_threads, absl::Duration idle_timeout, Growth growth)
    : min_threads_(std::max(0, min_threads)),
      max_threads_(std::max({1, min_threads, max_threads})),
      idle_timeout_(idle_timeout),
      growth_(growth) {
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
    const absl::Time now = absl::Now();
    queue_.push_back(Task{std::move(fn), now});
    if (!idle_.empty()) {
      // The thread that became idle last takes it.
      Waiter* w = idle_.back();
      idle_.pop_back();
      w->woken = true;
      w->cv.Signal();
    } else if (live_ < max_threads_ &&
               (growth_ == Growth::kPerQueuedClosure || live_ == 0 || StalledLocked(now))) {
      SpawnLocked();
    }
  }
  ReapExited();
}

bool ThreadPool::StalledLocked(absl::Time now) const {
  return !queue_.empty() && now - queue_.front().queued > kStalled;
}

absl::Time ThreadPool::GrowIfStalled() {
  absl::MutexLock lock(&mu_);
  if (queue_.empty() || stopping_) return absl::InfiniteFuture();
  const absl::Time now = absl::Now();
  if (idle_.empty() && live_ < max_threads_ && StalledLocked(now)) SpawnLocked();
  return now + kStalled;
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
    for (Waiter* w : idle_) w->cv.Signal();
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

void ThreadPool::SetThreadName(std::string name) {
  absl::MutexLock lock(&mu_);
  thread_name_ = std::move(name);
  // The threads already running (the core ones the constructor started) are named here.
  for (auto& [id, t] : threads_) NameThread(t, thread_name_);
}

void ThreadPool::Loop() {
  mu_.Lock();
  if (!thread_name_.empty()) NameThisThread(thread_name_);
  for (;;) {
    if (queue_.empty() && !stopping_) {
      // Each idle thread waits on a condition variable of its own, signalled when work is handed
      // to it: waits on the mutex with a Condition would have every Unlock evaluate the idle
      // threads' conditions one by one.
      Waiter w;
      idle_.push_back(&w);
      const absl::Time give_up =
          live_ > min_threads_ ? absl::Now() + idle_timeout_ : absl::InfiniteFuture();
      while (!w.woken && !stopping_) {
        if (w.cv.WaitWithDeadline(&mu_, give_up) && !w.woken) break;  // timed out
      }
      if (!w.woken) {
        // Timed out or stopping: no longer idle.
        idle_.erase(std::find(idle_.begin(), idle_.end(), &w));
        if (stopping_ ? queue_.empty() : live_ > min_threads_) break;
      }
    }
    if (queue_.empty()) {
      if (stopping_) break;
      continue;  // handed work another thread took first
    }
    std::function<void()> fn = std::move(queue_.front().fn);
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
