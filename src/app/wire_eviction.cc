// Eviction manager wiring: thresholds from evictionHard / evictionSoft (+ grace periods, minimum
// reclaim; a bad entry ends start-up), the manager as a pod lifecycle participant (admission
// under pressure), and once the Kubelet runs: the Summary from the stats provider, the active
// pods, eviction through Kubelet::EvictPod, node-level reclaim
// (dead containers, unused images), then its monitoring thread. Its pressure conditions reach
// the Node through WireNodeStatus.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "app/wiring.h"
#include "common/log.h"
#include "kubelet/cm/cgroup_fs.h"
#include "kubelet/eviction/eviction.h"
#include "kubelet/images/image_gc_manager.h"
#include "kubelet/kubelet.h"
#include "kubelet/stats/cri_stats_provider.h"

namespace kubelet::app {
absl::Status WireEviction(WiringStage stage, WiringContext& ctx) {
  switch (stage) {
    case WiringStage::kBeforeRuntimeManager:
      return absl::OkStatus();
    case WiringStage::kBeforeKubelet: {
      absl::StatusOr<eviction::ManagerOptions> options =
          eviction::ManagerOptionsFromConfig(ctx.settings->config);
      if (!options.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "failed to run Kubelet: invalid eviction thresholds: ", options.status().message()));
      }
      // The stats provider and the image GC manager exist from kAfterKubeletStart on, before
      // the manager's thread starts; app::Run keeps `components` until after the shutdown
      // actions have stopped that thread.
      const Components* comps = &ctx.components;
      eviction::ManagerOptions o = *std::move(options);
      o.summary = [comps]() -> absl::StatusOr<stats::Summary> {
        auto provider = std::dynamic_pointer_cast<stats::CRIStatsProvider>(comps->stats_provider);
        if (!provider) return absl::UnavailableError("stats provider not ready");
        return provider->GetSummary(false);
      };
      o.node_summary = [comps]() -> absl::StatusOr<stats::Summary> {
        auto provider = std::dynamic_pointer_cast<stats::CRIStatsProvider>(comps->stats_provider);
        if (!provider) return absl::UnavailableError("stats provider not ready");
        return provider->GetNodeSummary();
      };
      auto kubelet = ctx.late_kubelet;
      o.active_pods = [kubelet]() -> std::vector<api::Pod> {
        Kubelet* k = kubelet->load();
        return k == nullptr ? std::vector<api::Pod>{} : k->GetActivePods();
      };
      o.evict = [kubelet](const api::Pod& pod, const std::string& message, int64_t grace) {
        Kubelet* k = kubelet->load();
        return k != nullptr && k->EvictPod(pod.metadata.uid, message, grace);
      };
      o.delete_dead_containers = [kubelet] {
        Kubelet* k = kubelet->load();
        if (k == nullptr) return;
        if (absl::Status st = k->DeleteAllUnusedContainers(); !st.ok()) {
          KLOG_ERROR(st, "Eviction manager: failed to delete dead containers");
        }
      };
      o.delete_unused_images = [comps] {
        if (!comps->image_gc_manager) return;
        uint64_t freed = 0;
        absl::Status st = comps->image_gc_manager->FreeSpace(UINT64_MAX, freed);
        KLOG_INFO("Eviction manager: unused images deleted", "bytesFreed", freed);
        if (!st.ok()) KLOG_V(2, "Eviction manager: some images were not deleted", "err", st);
      };
      // kernelMemcgNotification: where the memory hierarchy is mounted on this host.
      if (o.kernel_memcg_notification) {
        if (absl::StatusOr<cm::CgroupLayout> layout = cm::DetectCgroupLayout(); layout.ok()) {
          auto memory = layout->controllers.find("memory");
          o.memory_cgroup_root = layout->unified                       ? layout->unified_root
                                 : memory != layout->controllers.end() ? memory->second
                                                                       : "";
        }
      }
      auto manager = std::make_shared<eviction::Manager>(std::move(o), *ctx.clock);
      ctx.components.eviction_manager = manager;
      ctx.kubelet_options->participants.push_back(manager.get());
      return absl::OkStatus();
    }
    case WiringStage::kAfterKubeletStart: {
      std::shared_ptr<eviction::Manager> manager = ctx.components.eviction_manager;
      if (!manager) return absl::OkStatus();
      manager->Start();
      ctx.AtShutdown([manager] { manager->Stop(); });
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

}  // namespace kubelet::app
