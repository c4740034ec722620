// Graceful node shutdown wiring (upstream NewManager in NewMainKubelet, Start in
// initializeRuntimeDependentModules): the manager from shutdownGracePeriod* and the gates, as
// the last pod lifecycle participant (it rejects pods with NodeShutdown while the node shuts
// down, as upstream's admit handler added last); its pods and kills through the Kubelet
// (GetActivePods, KillPodNow), its Ready condition through WireNodeStatus (readiness_errors),
// its state file in --root-dir. Started once the Kubelet runs; a start failure is logged and
// the kubelet goes on without the feature, as upstream's.
#include <memory>
#include <utility>
#include <vector>

#include "app/wiring.h"
#include "common/log.h"
#include "kubelet/kubelet.h"
#include "kubelet/nodeshutdown/nodeshutdown_manager.h"
#include "kubelet/nodestatus/node_status.h"

namespace kubelet::app {

absl::Status WireNodeShutdown(WiringStage stage, WiringContext& ctx) {
  switch (stage) {
    case WiringStage::kBeforeRuntimeManager:
      return absl::OkStatus();
    case WiringStage::kBeforeKubelet: {
      nodeshutdown::RegisterMetrics(ctx.settings->gates);
      nodeshutdown::ManagerOptions o =
          nodeshutdown::ManagerOptionsFromConfig(ctx.settings->config, ctx.settings->gates);
      o.state_directory = ctx.settings->flags.root_directory;
      o.node_name = ctx.node_name;
      o.recorder = ctx.recorder;
      auto kubelet = ctx.late_kubelet;
      o.active_pods = [kubelet]() -> std::vector<api::Pod> {
        Kubelet* k = kubelet->load();
        return k == nullptr ? std::vector<api::Pod>{} : k->GetActivePods();
      };
      o.kill_pod = [kubelet, clock = ctx.clock](
                       const api::Pod& pod, const nodeshutdown::PodTermination& t) -> absl::Status {
        Kubelet* k = kubelet->load();
        if (k == nullptr) return absl::UnavailableError("the kubelet is stopping");
        status::TerminalReason reason{t.reason, t.message, std::nullopt};
        if (t.disruption_target) reason.disruption_since = clock->Now();
        return k->KillPodNow(pod.metadata.uid, std::move(reason), t.grace_period_seconds);
      };
      o.sync_node_status = [late = ctx.components.late_node_status] {
        if (nodestatus::NodeStatusManager* n = late->load()) n->RequestStatusUpdate();
      };
      auto manager = std::make_shared<nodeshutdown::Manager>(std::move(o), *ctx.clock);
      ctx.components.node_shutdown_manager = manager;
      ctx.kubelet_options->participants.push_back(manager.get());
      return absl::OkStatus();
    }
    case WiringStage::kAfterKubeletStart: {
      std::shared_ptr<nodeshutdown::Manager> manager = ctx.components.node_shutdown_manager;
      if (!manager || !manager->Enabled()) return absl::OkStatus();
      if (absl::Status st = manager->Start(); !st.ok()) {
        KLOG_ERROR(st, "Failed to start node shutdown manager");
        return absl::OkStatus();
      }
      ctx.AtShutdown([manager] { manager->Stop(); });
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

}  // namespace kubelet::app
