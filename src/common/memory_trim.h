// The process's own memory: glibc keeps what pod churn frees in its arenas (one per thread that
// contended, up to 8 per core), so RSS crept up by ~13 KiB a pod created and deleted while the
// live heap stayed near 2 MiB.
//
// - LimitMallocArenas(): caps the arenas at 2 unless MALLOC_ARENA_MAX says otherwise (the
//   kubelet's threads mostly wait on I/O, so contention is rare). Call once at start-up.
// - MemoryTrimmer: every `period` of `clock`'s time, returns the free pages of every arena to the
//   kernel (`trim`, malloc_trim(0) by default) on a thread of its own; the destructor stops it.
// Thread-safe.
#ifndef KUBELET_COMMON_MEMORY_TRIM_H_
#define KUBELET_COMMON_MEMORY_TRIM_H_

#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace kubelet {

void LimitMallocArenas();

class MemoryTrimmer {
 public:
  explicit MemoryTrimmer(const Clock& clock, absl::Duration period = absl::Minutes(1),
                         std::function<void()> trim = nullptr);
  ~MemoryTrimmer();
  MemoryTrimmer(const MemoryTrimmer&) = delete;
  MemoryTrimmer& operator=(const MemoryTrimmer&) = delete;

 private:
  void Loop();

  const Clock& clock_;
  const absl::Duration period_;
  const std::function<void()> trim_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace kubelet

#endif  // KUBELET_COMMON_MEMORY_TRIM_H_
