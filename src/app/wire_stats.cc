// The stats subsystem: the Summary provider (/stats/summary) and the /metrics/resource and
// /metrics/cadvisor collectors, built once the Kubelet runs (it supplies the desired pods).
#include <atomic>
#include <memory>

#include "app/wiring.h"
#include "kubelet/cm/container_manager.h"
#include "kubelet/kubelet.h"
#include "kubelet/stats/cri_stats_provider.h"
#include "kubelet/stats/resource_metrics.h"

namespace kubelet::app {

absl::Status WireStats(WiringStage stage, WiringContext& ctx) {
  if (stage != WiringStage::kAfterKubeletStart) return absl::OkStatus();
  stats::CRIStatsProviderOptions o = stats::CRIStatsProviderOptionsFromConfig(ctx.settings->config);
  o.runtime = ctx.runtime;
  o.images = ctx.images;
  o.clock = ctx.clock;
  o.node_name = ctx.node_name;
  o.root_dir = ctx.settings->flags.root_directory;
  // The machine_* figures: read once at start-up by the container manager.
  if (ctx.components.container_manager) {
    const cm::MachineInfo& m = ctx.components.container_manager->machine_info();
    o.machine = {.num_cores = m.num_cores,
                 .memory_capacity_bytes = static_cast<uint64_t>(m.memory_capacity_bytes),
                 .machine_id = m.machine_id,
                 .boot_id = m.boot_id,
                 .system_uuid = m.system_uuid};
  }
  o.runtime_cgroup = ctx.settings->flags.runtime_cgroups;
  // The collectors live in the process-wide metrics table for good; once the kubelet shuts
  // down (the HTTP server has stopped before: it is wired last) the pod list reads as empty.
  auto alive = std::make_shared<std::atomic<bool>>(true);
  Kubelet* k = ctx.kubelet;
  o.get_pods = [k, alive]() -> std::vector<api::Pod> {
    if (k == nullptr || !alive->load()) return {};
    return k->GetPodsWithStatus();
  };
  auto provider = std::make_shared<stats::CRIStatsProvider>(std::move(o));
  stats::RegisterStatsCollectors(provider);
  ctx.components.stats_provider = provider;
  ctx.AtShutdown([alive] { alive->store(false); });
  return absl::OkStatus();
}

}  // namespace kubelet::app
