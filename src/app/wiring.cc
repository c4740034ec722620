#include "app/wiring.h"

namespace kubelet::app {

absl::Status WireAll(WiringStage stage, WiringContext& ctx) {
  using WireFn = absl::Status (*)(WiringStage, WiringContext&);
  struct Step {
    WireFn fn;
    bool simulated;  // wired on a simulated node too: needs no machine of its own
  };
  static constexpr Step kWiringOrder[] = {{WireMemory, false},
                                          {WireContainerManager, false},
                                          {WireSimulatedMachine, true},
                                          {WireResourceManagers, false},
                                          {WireClusterContent, true},
                                          {WirePlugins, false},
                                          {WireVolumeManager, false},
                                          {WireProber, true},
                                          {WireLogs, false},
                                          {WireImages, false},
                                          {WireStats, false},
                                          {WireEviction, false},
                                          {WireNodeShutdown, false},
                                          {WireHttpServer, false},
                                          {WireApiPods, true},
                                          {WireServices, true},
                                          {WireNodeStatus, true}};
  for (const Step& step : kWiringOrder) {
    if (ctx.simulated != nullptr && !step.simulated) continue;
    if (absl::Status st = step.fn(stage, ctx); !st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace kubelet::app
