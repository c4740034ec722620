// Prober wiring: builds the lifecycle HandlerRunner (postStart / preStop hooks) and the
// ProberManager (liveness, readiness, startup probes), hands the runtime manager its hook and
// probe-result queries and status generation its readiness / started view, registers the
// prober as a pod lifecycle participant, and re-syncs a pod whenever a probe result changes.
#include <memory>
#include <string>
#include <vector>

#include "app/wiring.h"
#include "common/log.h"
#include "kubelet/kubelet.h"
#include "kubelet/kuberuntime/options.h"
#include "kubelet/lifecycle/handler_runner.h"
#include "kubelet/prober/prober_manager.h"

namespace kubelet::app {

absl::Status WireProber(WiringStage stage, WiringContext& ctx) {
  switch (stage) {
    case WiringStage::kBeforeRuntimeManager: {
      if (ctx.runtime == nullptr || ctx.clock == nullptr) {
        return absl::FailedPreconditionError("prober wiring needs the CRI runtime and a clock");
      }
      std::vector<std::string> node_ips;
      if (!ctx.node_ip.empty()) node_ips.push_back(ctx.node_ip);

      lifecycle::HandlerRunner::Options ho;
      ho.node_ips = node_ips;
      // Shared with the hook: the runtime manager may outlive the components.
      auto runner = std::make_shared<lifecycle::HandlerRunner>(*ctx.runtime, std::move(ho));
      ctx.runtime_options->run_lifecycle_handler =
          [runner](const container::ContainerID& id, const api::Pod& pod,
                   const api::Container& container, const api::LifecycleHandler& handler,
                   absl::Duration timeout) {
            return runner->Run(id, pod, container, handler, timeout);
          };
      ctx.components.keep_alive.push_back(runner);

      prober::ProberManager::Options po;
      po.node_ips = node_ips;
      po.recorder = ctx.recorder;
      // A hollow node keeps no idle probe threads: they start when probes are due.
      if (ctx.simulated != nullptr) po.probe_threads = 0;
      auto pm = std::make_shared<prober::ProberManager>(*ctx.runtime, *ctx.clock, std::move(po));
      ctx.components.prober_manager = pm;
      // The runtime manager asks with ContainerID; status generation with its String() form
      // ("containerd://<id>"), which is also the prober's key.
      ctx.runtime_options->liveness_failed = [pm](const container::ContainerID& id) {
        return pm->LivenessFailed(id);
      };
      ctx.runtime_options->startup_failed = [pm](const container::ContainerID& id) {
        return pm->StartupFailed(id);
      };
      ctx.runtime_options->startup_pending = [pm](const container::ContainerID& id) {
        return pm->StartupPending(id);
      };
      ctx.kubelet_options->probe_state.ready = [pm](const std::string& container_id) {
        return pm->Ready(container_id);
      };
      ctx.kubelet_options->probe_state.started = [pm](const std::string& container_id) {
        return pm->Started(container_id);
      };
      // Stops the scheduler and waits for running probes; registered after the runtime is
      // connected, so it runs before the CRI connection is torn down.
      ctx.AtShutdown([pm] { pm->Stop(); });
      return absl::OkStatus();
    }
    case WiringStage::kBeforeKubelet:
      if (ctx.components.prober_manager != nullptr) {
        ctx.kubelet_options->participants.push_back(ctx.components.prober_manager.get());
      }
      return absl::OkStatus();
    case WiringStage::kAfterKubeletStart:
      if (ctx.components.prober_manager != nullptr && ctx.kubelet != nullptr) {
        Kubelet* k = ctx.kubelet;
        ctx.components.prober_manager->SetOnChange(
            [k](const std::string& uid) { k->TriggerPodSync(uid); });
      }
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace kubelet::app
