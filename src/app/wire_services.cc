// Service environment variables in API-server mode (upstream NewMainKubelet's service informer
// and getServiceEnvVarMap): only with --kubeconfig (ctx.api_client set).
//   * A Reflector lists and watches /api/v1/services in all namespaces (the Node authorizer
//     lets a node list/watch services) into a kuberuntime::ServiceEnvCache; each object is
//     decoded once when it arrives. It starts at kBeforeRuntimeManager, before any pod source,
//     so the first LIST normally lands before the first container starts.
//   * kuberuntime::Options::service_env reads the cache; until the first LIST arrived, API pods'
//     containers fail to start with upstream's "services have not yet been read at least once"
//     (CreateContainerConfigError, retried on the next sync).
//   * Offline autonomy (beyond upstream, with the API pods checkpoint of wire_apipods.cc): the
//     services are checkpointed in <root-dir>/services-checkpoint.json as they change; when no
//     LIST has come 5 s after the start, the checkpoint fills the cache, so pods restored while
//     the API server is away can (re)start their containers with the variables they had.
// Standalone mode wires nothing: no service variables, as upstream without a kubeClient.
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/core_misc.h"
#include "apiclient/reflector.h"
#include "apiclient/rest_client.h"
#include "app/wiring.h"
#include "common/files.h"
#include "common/log.h"
#include "kubelet/kuberuntime/options.h"
#include "kubelet/kuberuntime/service_env.h"

namespace kubelet::app {
namespace {

// Decodes the reflector's objects into the cache and keeps the checkpoint. Runs on the
// reflector's thread (and Restore on the watch's restore thread).
class ServiceCacheHandler final : public apiclient::ResourceEventHandler {
 public:
  ServiceCacheHandler(kuberuntime::ServiceEnvCache& cache, std::string checkpoint_path)
      : cache_(cache), checkpoint_path_(std::move(checkpoint_path)) {}

  void Replace(std::vector<nlohmann::json> objects, const std::string&) override {
    absl::MutexLock lock(&mu_);
    listed_ = true;
    std::vector<api::Service> services;
    services.reserve(objects.size());
    objects_.clear();
    for (nlohmann::json& o : objects) {
      if (std::optional<api::Service> s = Decode(o)) services.push_back(*std::move(s));
      objects_[apiclient::Store::KeyOf(o)] = std::move(o);
    }
    cache_.Replace(std::move(services));
    KLOG_V(4, "Services read", "count", std::to_string(cache_.size()));
    WriteCheckpoint();
  }
  void Add(const nlohmann::json& object) override { Put(object); }
  void Update(const nlohmann::json& object) override { Put(object); }
  void Delete(const nlohmann::json& object) override {
    absl::MutexLock lock(&mu_);
    const std::string key = apiclient::Store::KeyOf(object);
    const size_t slash = key.find('/');
    if (slash == std::string::npos) return;
    cache_.Remove(key.substr(0, slash), key.substr(slash + 1));
    objects_.erase(key);
    WriteCheckpoint();
  }

  // Fills the cache from the checkpoint unless a LIST came first.
  void Restore() {
    absl::MutexLock lock(&mu_);
    if (listed_ || checkpoint_path_.empty()) return;
    absl::StatusOr<std::string> text = ReadFileToString(checkpoint_path_);
    if (!text.ok()) return;
    nlohmann::json items = nlohmann::json::parse(*text, nullptr, false);
    if (!items.is_array()) return;
    std::vector<api::Service> services;
    for (const nlohmann::json& o : items) {
      if (std::optional<api::Service> s = Decode(o)) services.push_back(*std::move(s));
    }
    KLOG_INFO("Restored services from the checkpoint while the API server is unreachable",
              "services", services.size());
    cache_.Replace(std::move(services));
  }

 private:
  void Put(const nlohmann::json& object) {
    absl::MutexLock lock(&mu_);
    if (std::optional<api::Service> s = Decode(object)) cache_.Upsert(*std::move(s));
    objects_[apiclient::Store::KeyOf(object)] = object;
    WriteCheckpoint();
  }
  void WriteCheckpoint() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (checkpoint_path_.empty()) return;
    nlohmann::json items = nlohmann::json::array();
    for (const auto& [key, o] : objects_) {
      nlohmann::json copy = o;
      if (copy.contains("metadata") && copy["metadata"].is_object()) {
        copy["metadata"].erase("managedFields");
        copy["metadata"].erase("resourceVersion");
      }
      items.push_back(std::move(copy));
    }
    std::string text = items.dump();
    if (text == written_) return;
    if (absl::Status st = WriteFileAtomically(checkpoint_path_, text, 0600); !st.ok()) {
      KLOG_ERROR(st, "Failed to write the services checkpoint", "path", checkpoint_path_);
      return;
    }
    written_ = std::move(text);
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
  const std::string checkpoint_path_;
  absl::Mutex mu_;
  bool listed_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, nlohmann::json> objects_ ABSL_GUARDED_BY(mu_);
  std::string written_ ABSL_GUARDED_BY(mu_);
};

// The running watch; stopped once.
struct ServiceWatch {
  explicit ServiceWatch(std::string checkpoint_path)
      : handler(*cache, std::move(checkpoint_path)) {}
  std::shared_ptr<apiclient::RestClient> client;
  std::shared_ptr<kuberuntime::ServiceEnvCache> cache =
      std::make_shared<kuberuntime::ServiceEnvCache>();
  ServiceCacheHandler handler;
  absl::Mutex mu;
  std::unique_ptr<apiclient::Reflector> reflector ABSL_GUARDED_BY(mu);
  bool stopped ABSL_GUARDED_BY(mu) = false;
  std::thread restorer;

  void StartRestorer() {
    restorer = std::thread([this] {
      {
        absl::MutexLock lock(&mu);
        auto done = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu) { return stopped; };
        if (mu.AwaitWithTimeout(absl::Condition(&done), absl::Seconds(5))) return;
      }
      handler.Restore();
    });
  }

  void Stop() {
    std::unique_ptr<apiclient::Reflector> r;
    {
      absl::MutexLock lock(&mu);
      stopped = true;
      r = std::move(reflector);
    }
    if (r) r->Stop();
    if (restorer.joinable()) restorer.join();
  }
  ~ServiceWatch() { Stop(); }
};

}  // namespace

absl::Status WireServices(WiringStage stage, WiringContext& ctx) {
  if (ctx.api_client == nullptr || stage != WiringStage::kBeforeRuntimeManager) {
    return absl::OkStatus();
  }
  auto watch = std::make_shared<ServiceWatch>(ctx.server->flags.root_directory +
                                              "/services-checkpoint.json");
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
  watch->StartRestorer();
  ctx.runtime_options->service_env = [cache = watch->cache](const api::Pod& pod) {
    return cache->EnvFor(pod);
  };
  ctx.components.keep_alive.push_back(watch);
  ctx.AtShutdown([watch] { watch->Stop(); });
  return absl::OkStatus();
}

}  // namespace kubelet::app
