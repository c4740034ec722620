// Image garbage collection: the image GC manager and its periodic thread (every 5 minutes),
// started once the Kubelet runs.
#include <memory>

#include "absl/strings/str_cat.h"
#include "app/wiring.h"
#include "kubelet/images/image_gc_manager.h"

namespace kubelet::app {

absl::Status WireImages(WiringStage stage, WiringContext& ctx) {
  if (stage != WiringStage::kAfterKubeletStart) return absl::OkStatus();
  images::ImageGCOptions o = images::ImageGCOptionsFromConfig(ctx.settings->config);
  o.runtime = ctx.runtime;
  o.images = ctx.images;
  o.clock = ctx.clock;
  o.sandbox_image = ctx.settings->flags.pod_sandbox_image;
  absl::StatusOr<std::unique_ptr<images::ImageGCManager>> m =
      images::ImageGCManager::Create(std::move(o));
  if (!m.ok()) return absl::InvalidArgumentError(absl::StrCat("image GC: ", m.status().message()));
  std::shared_ptr<images::ImageGCManager> manager = std::move(*m);
  manager->Start();
  ctx.components.image_gc_manager = manager;
  ctx.AtShutdown([manager] { manager->Stop(); });
  return absl::OkStatus();
}

}  // namespace kubelet::app
