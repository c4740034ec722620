#include "app/wiring.h"

namespace kubelet::app {

absl::Status WireAll(WiringStage stage, WiringContext& ctx) {
  using WireFn = absl::Status (*)(WiringStage, WiringContext&);
  static constexpr WireFn kWiringOrder[] = {WireMemory,           WireContainerManager,
                                            WireResourceManagers, WireClusterContent,
                                            WirePlugins,          WireVolumeManager,
                                            WireProber,           WireLogs,
                                            WireImages,           WireStats,
                                            WireEviction,         WireNodeShutdown,
                                            WireHttpServer,       WireApiPods,
                                            WireServices,         WireNodeStatus};
  for (WireFn fn : kWiringOrder) {
    if (absl::Status st = fn(stage, ctx); !st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace kubelet::app
