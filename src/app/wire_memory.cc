// The process's own memory: glibc keeps what pod churn frees in its arenas (one per thread that
// contended, up to 8 per core), so RSS crept up by ~13 KiB a pod created and deleted while the
// live heap stayed near 2 MiB. At start-up the arenas are capped at 2 (unless MALLOC_ARENA_MAX
// says otherwise; the kubelet's threads mostly wait on I/O, so contention is rare), and once a
// minute the free pages of every arena go back to the kernel (malloc_trim).
#include <malloc.h>

#include <cstdlib>
#include <memory>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "app/wiring.h"

namespace kubelet::app {
namespace {

class Trimmer {
 public:
  Trimmer() : thread_([this] { Loop(); }) {}
  ~Trimmer() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    thread_.join();
  }

 private:
  void Loop() {
    absl::MutexLock lock(&mu_);
    auto stopped = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_; };
    while (!mu_.AwaitWithTimeout(absl::Condition(&stopped), absl::Minutes(1))) {
      mu_.Unlock();
      (void)malloc_trim(0);
      mu_.Lock();
    }
  }

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace

absl::Status WireMemory(WiringStage stage, WiringContext& ctx) {
  switch (stage) {
    case WiringStage::kBeforeRuntimeManager:
      if (std::getenv("MALLOC_ARENA_MAX") == nullptr) (void)mallopt(M_ARENA_MAX, 2);
      return absl::OkStatus();
    case WiringStage::kBeforeKubelet:
      return absl::OkStatus();
    case WiringStage::kAfterKubeletStart: {
      auto trimmer = std::make_shared<Trimmer>();
      ctx.AtShutdown([trimmer]() mutable { trimmer.reset(); });
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

}  // namespace kubelet::app
