#include "common/memory_trim.h"

#include <malloc.h>

#include <cstdlib>
#include <utility>

#include "common/guarded.h"

namespace kubelet {

void LimitMallocArenas() {
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) (void)mallopt(M_ARENA_MAX, 2);
}

MemoryTrimmer::MemoryTrimmer(const Clock& clock, absl::Duration period, std::function<void()> trim)
    : clock_(clock), period_(period), trim_(trim ? std::move(trim) : [] { (void)malloc_trim(0); }) {
  thread_ = GuardedThread("memory trimmer", [this] { Loop(); });
}

MemoryTrimmer::~MemoryTrimmer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void MemoryTrimmer::Loop() {
  absl::MutexLock lock(&mu_);
  while (!clock_.AwaitWithTimeout(mu_, absl::Condition(&stopping_), period_)) {
    mu_.Unlock();
    trim_();
    mu_.Lock();
  }
}

}  // namespace kubelet
