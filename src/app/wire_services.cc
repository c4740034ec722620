// Service environment variables in API-server mode (upstream NewMainKubelet's service informer
// and getServiceEnvVarMap): only with --kubeconfig (ctx.api_client set).
//   * A checkpointed reflector lists and watches /api/v1/services in all namespaces (the Node
//     authorizer lets a node list/watch services) into a kuberuntime::ServiceEnvCache, which
//     decodes each object once when it arrives. It starts at kBeforeRuntimeManager, before any pod
//     source, so the first LIST normally lands before the first container starts.
//   * kuberuntime::Options::service_env reads the cache; until the first LIST arrived, API pods'
//     containers fail to start with upstream's "services have not yet been read at least once"
//     (CreateContainerConfigError, retried on the next sync).
//   * Offline autonomy (beyond upstream, as the API pods of wire_apipods.cc): the services are
//     checkpointed in <root-dir>/services-checkpoint.json; when no LIST has come 5 s after the
//     start, the checkpoint fills the cache, so pods restored while the API server is away can
//     (re)start their containers with the variables they had.
// Standalone mode wires nothing: no service variables, as upstream without a kubeClient.
// Hollow nodes share one watch among the nodes of their process (WiringContext::shared_services,
// StartServiceWatch): every node reads the same cache.
#include <memory>

#include "apiclient/checkpointed_reflector.h"
#include "app/wiring.h"
#include "kubelet/kuberuntime/options.h"
#include "kubelet/kuberuntime/service_env.h"

namespace kubelet::app {

struct ServiceWatch {
  std::shared_ptr<apiclient::RestClient> client;
  kuberuntime::ServiceEnvCache cache;
  apiclient::HandlerFor<kuberuntime::ServiceEnvCache> handler{cache};
  std::unique_ptr<apiclient::CheckpointedReflector> reflector;
};

std::shared_ptr<ServiceWatch> StartServiceWatch(std::shared_ptr<apiclient::RestClient> client,
                                                const std::string& checkpoint_path, Clock& clock,
                                                Loops* loops) {
  auto watch = std::make_shared<ServiceWatch>();
  watch->client = std::move(client);
  watch->reflector = std::make_unique<apiclient::CheckpointedReflector>(
      *watch->client, watch->handler,
      apiclient::ReflectorOptions{.name = "services", .path = "/api/v1/services", .loops = loops},
      apiclient::CheckpointOptions{.path = checkpoint_path, .list_kind = "ServiceList"}, clock);
  watch->reflector->Start();
  return watch;
}

void StopServiceWatch(ServiceWatch& watch) { watch.reflector->Stop(); }

absl::Status WireServices(WiringStage stage, WiringContext& ctx) {
  if (ctx.api_client == nullptr || stage != WiringStage::kBeforeRuntimeManager) {
    return absl::OkStatus();
  }
  std::shared_ptr<ServiceWatch> watch = ctx.shared_services;
  if (watch == nullptr) {
    watch = StartServiceWatch(ctx.api_client,
                              ctx.settings->flags.root_directory + "/services-checkpoint.json",
                              *ctx.clock, ctx.loops);
    ctx.AtShutdown([watch] { StopServiceWatch(*watch); });
  }
  ctx.runtime_options->service_env = [watch](const api::Pod& pod) {
    return watch->cache.EnvFor(pod);
  };
  ctx.components.keep_alive.push_back(watch);
  return absl::OkStatus();
}

}  // namespace kubelet::app
