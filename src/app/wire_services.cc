// Service environment variables in API-server mode (upstream NewMainKubelet's service informer
// and getServiceEnvVarMap): only with --kubeconfig (ctx.api_client set).
//   * A Reflector lists and watches /api/v1/services in all namespaces (the Node authorizer
//     lets a node list/watch services) into a kuberuntime::ServiceEnvCache; each object is
//     decoded once when it arrives. It starts at kBeforeRuntimeManager, before any pod source,
//     so the first LIST normally lands before the first container starts.
//   * kuberuntime::Options::service_env reads the cache; until the first LIST arrived, API pods'
//     containers fail to start with upstream's "services have not yet been read at least once"
//     (CreateContainerConfigError, retried on the next sync).
// Standalone mode wires nothing: no service variables, as upstream without a kubeClient.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/core_misc.h"
#include "apiclient/reflector.h"
#include "apiclient/rest_client.h"
#include "app/wiring.h"
#include "common/log.h"
#include "kubelet/kuberuntime/options.h"
#include "kubelet/kuberuntime/service_env.h"

namespace kubelet::app {
namespace {

// Decodes the reflector's objects into the cache. Runs on the reflector's thread.
class ServiceCacheHandler final : public apiclient::ResourceEventHandler {
 public:
  explicit ServiceCacheHandler(kuberuntime::ServiceEnvCache& cache) : cache_(cache) {}

  void Replace(std::vector<nlohmann::json> objects, const std::string&) override {
    std::vector<api::Service> services;
    services.reserve(objects.size());
    for (const nlohmann::json& o : objects) {
      if (std::optional<api::Service> s = Decode(o)) services.push_back(*std::move(s));
    }
    cache_.Replace(std::move(services));
    KLOG_V(4, "Services read", "count", std::to_string(cache_.size()));
  }
  void Add(const nlohmann::json& object) override { Put(object); }
  void Update(const nlohmann::json& object) override { Put(object); }
  void Delete(const nlohmann::json& object) override {
    const std::string key = apiclient::Store::KeyOf(object);
    const size_t slash = key.find('/');
    if (slash == std::string::npos) return;
    cache_.Remove(key.substr(0, slash), key.substr(slash + 1));
  }

 private:
  void Put(const nlohmann::json& object) {
    if (std::optional<api::Service> s = Decode(object)) cache_.Upsert(*std::move(s));
  }
  static std::optional<api::Service> Decode(const nlohmann::json& object) {
    absl::StatusOr<api::Service> s = api::FromJson<api::Service>(object);
    if (!s.ok()) {
      KLOG_ERROR(s.status(), "Could not read a service", "service",
                 apiclient::Store::KeyOf(object));
      return std::nullopt;
    }
    return *std::move(s);
  }

  kuberuntime::ServiceEnvCache& cache_;
};

// The running watch; stopped once.
struct ServiceWatch {
  std::shared_ptr<apiclient::RestClient> client;
  std::shared_ptr<kuberuntime::ServiceEnvCache> cache =
      std::make_shared<kuberuntime::ServiceEnvCache>();
  ServiceCacheHandler handler{*cache};
  absl::Mutex mu;
  std::unique_ptr<apiclient::Reflector> reflector ABSL_GUARDED_BY(mu);

  void Stop() {
    std::unique_ptr<apiclient::Reflector> r;
    {
      absl::MutexLock lock(&mu);
      r = std::move(reflector);
    }
    if (r) r->Stop();
  }
  ~ServiceWatch() { Stop(); }
};

}  // namespace

absl::Status WireServices(WiringStage stage, WiringContext& ctx) {
  if (ctx.api_client == nullptr || stage != WiringStage::kBeforeRuntimeManager) {
    return absl::OkStatus();
  }
  auto watch = std::make_shared<ServiceWatch>();
  watch->client = ctx.api_client;
  apiclient::ReflectorOptions ro;
  ro.name = "services";
  ro.path = "/api/v1/services";
  {
    absl::MutexLock lock(&watch->mu);
    watch->reflector =
        std::make_unique<apiclient::Reflector>(*watch->client, watch->handler, ro, *ctx.clock);
    watch->reflector->Start();
  }
  ctx.runtime_options->service_env = [cache = watch->cache](const api::Pod& pod) {
    return cache->EnvFor(pod);
  };
  ctx.components.keep_alive.push_back(watch);
  ctx.AtShutdown([watch] { watch->Stop(); });
  return absl::OkStatus();
}

}  // namespace kubelet::app
