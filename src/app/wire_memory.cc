// The process's own memory (common/memory_trim.h): one malloc arena, free pages
// returned to the kernel once a minute.
#include <memory>

#include "app/wiring.h"
#include "common/memory_trim.h"

namespace kubelet::app {

absl::Status WireMemory(WiringStage stage, WiringContext& ctx) {
  if (stage == WiringStage::kBeforeRuntimeManager) LimitMallocArenas(1);
  if (stage == WiringStage::kAfterKubeletStart) {
    auto trimmer = std::make_shared<MemoryTrimmer>(*ctx.clock);
    ctx.AtShutdown([trimmer]() mutable { trimmer.reset(); });
  }
  return absl::OkStatus();
}

}  // namespace kubelet::app
