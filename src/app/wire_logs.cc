// Container logs: the log reader the HTTP API serves /containerLogs from, and log rotation
// (upstream kubelet.go: NewContainerLogManager from containerLogMaxSize/containerLogMaxFiles,
// started with the kubelet's modules).
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "app/wiring.h"
#include "common/log.h"
#include "kubelet/kuberuntime/options.h"
#include "kubelet/logs/container_log_manager_impl.h"

namespace kubelet::app {

absl::Status WireLogs(WiringStage stage, WiringContext& ctx) {
  if (stage != WiringStage::kAfterKubeletStart) return absl::OkStatus();
  if (ctx.runtime == nullptr || ctx.clock == nullptr || ctx.settings == nullptr) {
    return absl::FailedPreconditionError("container log manager: runtime, clock and config needed");
  }
  logs::ContainerLogManagerOptions options =
      logs::ContainerLogManagerOptionsFromConfig(ctx.settings->config);
  const std::string max_size = options.max_size;  // for the log line once started
  const int32_t max_files = options.max_files;
  // v1.28 has no containerLogMonitorInterval: upstream rotates every 10s (the default here).
  if (ctx.runtime_options != nullptr) options.pod_logs_root = ctx.runtime_options->pod_logs_dir;
  auto manager = logs::NewContainerLogManager(*ctx.runtime, *ctx.clock, std::move(options));
  if (!manager.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("failed to initialize container log manager: ", manager.status().message()));
  }
  // Shared: the HTTP API reads logs through it while the shutdown action stops it.
  std::shared_ptr<logs::ContainerLogManager> log_manager = std::move(*manager);
  ctx.components.log_manager = log_manager;
  log_manager->Start();
  ctx.AtShutdown([log_manager] { log_manager->Stop(); });
  KLOG_V(2, "Started container log manager", "containerLogMaxSize", max_size,
         "containerLogMaxFiles", max_files);
  return absl::OkStatus();
}

}  // namespace kubelet::app
