#include "app/wiring.h"

namespace kubelet::app {

absl::Status WireImages(WiringStage stage, WiringContext& ctx) {
  (void)stage;
  (void)ctx;
  return absl::OkStatus();
}

}  // namespace kubelet::app
