// The process's own memory: glibc keeps what pod churn frees in its arenas (one per thread that
// contended, up to 8 per core), so RSS crept up by ~13 KiB a pod created and deleted while the
// live heap stayed near 2 MiB.
//
// - LimitMallocArenas(arenas): caps the arenas at `arenas` unless MALLOC_ARENA_MAX says
//   otherwise. Call once at start-up. The kubelet takes one: its threads mostly wait on I/O, so
//   contention is rare (glibc's per-thread caches take the small allocations), and every arena
//   keeps free space of its own between long-lived chunks. Measured with 30 and then 250 static
//   pods (bench/run-side-by-side.sh), private memory grew 25-34 KiB per extra pod over four runs
//   with one arena and 33 KiB in a run with two the same day: no clear gain, and no cost in idle
//   CPU or pod start either. jemalloc (one arena, no thread caches) gave 23-24 KiB with about
//   30% more idle CPU and was not kept.
//   Hollow nodes keep two: a thousand nodes' loops allocate on many threads.
// - MemoryTrimmer: every `period` of `clock`'s time, returns the free pages of every arena to the
//   kernel (`trim`, by default malloc_trim(0), and on the first round PageOutCode() too) on a
//   thread of its own; the destructor stops it.
// - PageOutCode(): start-up runs code spread over the whole binary (flag and configuration
//   parsing, validation, certificates, every subsystem's set-up, the node's registration, the
//   first pods' start), and the kernel maps code in 64 KiB around each fault: 10 of the
//   binary's 12 MiB of text, and most of libcrypto's, stayed resident though a running kubelet
//   uses about half of it. On the trimmer's first round, a minute after start-up, the pages of
//   the executable file mappings that only this process maps are handed back (MADV_PAGEOUT);
//   what runs after that faults back in from the file as needed. The kernel only drops clean
//   pages of regular files (a binary written moments ago keeps its pages until written back).
// Thread-safe.
#ifndef KUBELET_COMMON_MEMORY_TRIM_H_
#define KUBELET_COMMON_MEMORY_TRIM_H_

#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace kubelet {

void LimitMallocArenas(int arenas);

// MADV_PAGEOUT on every executable mapping of a file (from /proc/self/maps); pages other
// processes map too are left alone by the kernel. Returns the bytes of the mappings advised;
// an error when /proc/self/maps cannot be read. Kernels before 5.4 refuse the advice (0).
absl::StatusOr<size_t> PageOutCode();

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
