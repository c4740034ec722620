// API-server mode pods (upstream pkg/kubelet/config/apiserver.go and the status manager's API
// half): only with --kubeconfig (ctx.api_client set).
//   * The "api" pod source: a checkpointed reflector on
//     /api/v1/pods?fieldSelector=spec.nodeName=<node> feeding podsource::ApiSource (the Kubelet
//     registers the source when built, starts the reflector once the sync loop runs, and stops
//     it before its PodConfig shuts down). Its pods' specs are checkpointed in
//     <root-dir>/api-pods-checkpoint.json; when no list has come 5 s after the start (the API
//     server unreachable), the checkpoint is delivered instead.
//   * The status sync: status::PodStatusClient on the shared RestClient (GET, PATCH status with
//     a strategic merge patch, DELETE with the UID precondition); the Kubelet runs the
//     ApiStatusSyncer with it.
//   * Mirror pods: MirrorClient on the shared RestClient (POST the mirror pod, DELETE it with
//     the UID precondition) and the Node's uid for their owner reference, read from the API
//     server (apipods::NodeUidLookup: cached, re-read at most every 5 s while unknown).
// Standalone mode wires nothing.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/pod_codec.h"
#include "apiclient/checkpointed_reflector.h"
#include "apiclient/rest_client.h"
#include "app/wiring.h"
#include "common/log.h"
#include "kubelet/apipods/pod_api.h"
#include "kubelet/kubelet.h"
#include "kubelet/mirror_client.h"
#include "kubelet/podsource/api_source.h"
#include "kubelet/status/api_status_syncer.h"

namespace kubelet::app {
namespace {

// The core's status client on the API client.
class RestPodStatusClient final : public status::PodStatusClient {
 public:
  explicit RestPodStatusClient(std::shared_ptr<apiclient::RestClient> client)
      : api_(std::move(client)) {}
  absl::StatusOr<nlohmann::json> GetPod(const std::string& ns, const std::string& name) override {
    return api_.Get(ns, name);
  }
  absl::Status PatchPodStatus(const std::string& ns, const std::string& name,
                              const std::string& patch) override {
    return api_.PatchStatus(ns, name, patch);
  }
  absl::Status DeletePod(const std::string& ns, const std::string& name,
                         const std::string& uid) override {
    return api_.Delete(ns, name, uid);
  }

 private:
  apipods::PodApi api_;
};

// The core's mirror pod client on the API client.
class RestMirrorClient final : public MirrorClient {
 public:
  explicit RestMirrorClient(std::shared_ptr<apiclient::RestClient> client)
      : api_(std::move(client)) {}
  absl::Status CreateMirrorPod(const api::Pod& mirror) override {
    return api_.Create(mirror.metadata.namespace_, api::EncodePodJson(mirror)).status();
  }
  absl::Status DeleteMirrorPod(const std::string& ns, const std::string& name,
                               const std::string& uid) override {
    KLOG_V(2, "Deleting a mirror pod", "pod", ns + "/" + name, "podUID", uid);
    return api_.Delete(ns, name, uid);
  }

 private:
  apipods::PodApi api_;
};

// The running source: built by the Kubelet's start hook, stopped once (by the shutdown action
// or the Kubelet's stop hook, whichever comes first).
struct ApiPodSource {
  std::shared_ptr<apiclient::RestClient> client;
  Clock* clock = nullptr;
  Loops* loops = nullptr;
  std::string node_name;
  std::string checkpoint_path;
  absl::Mutex mu;
  std::unique_ptr<podsource::ApiSource> source ABSL_GUARDED_BY(mu);
  std::unique_ptr<apiclient::HandlerFor<podsource::ApiSource>> handler ABSL_GUARDED_BY(mu);
  std::unique_ptr<apiclient::CheckpointedReflector> reflector ABSL_GUARDED_BY(mu);
  bool stopped ABSL_GUARDED_BY(mu) = false;

  absl::Status Start(podsource::PodConfig& config) {
    absl::MutexLock lock(&mu);
    if (stopped || reflector) return absl::OkStatus();
    source = std::make_unique<podsource::ApiSource>(config);
    handler = std::make_unique<apiclient::HandlerFor<podsource::ApiSource>>(*source);
    reflector = std::make_unique<apiclient::CheckpointedReflector>(
        *client, *handler,
        apiclient::ReflectorOptions{.name = "pods",
                                    .path = "/api/v1/pods",
                                    .field_selector = "spec.nodeName=" + node_name,
                                    .loops = loops},
        apiclient::CheckpointOptions{
            .path = checkpoint_path, .list_kind = "PodList", .strip = {"status"}},
        *clock);
    reflector->Start();
    return absl::OkStatus();
  }

  void Stop() {
    std::unique_ptr<apiclient::CheckpointedReflector> r;
    {
      absl::MutexLock lock(&mu);
      if (stopped) return;
      stopped = true;
      // Unblocks a delivery waiting on a full PodConfig queue, then the reflector can stop.
      if (source) source->Stop();
      r = std::move(reflector);
    }
    if (r) r->Stop();
  }
};

}  // namespace

absl::Status WireApiPods(WiringStage stage, WiringContext& ctx) {
  if (ctx.api_client == nullptr || stage != WiringStage::kBeforeKubelet) return absl::OkStatus();
  auto status_client = std::make_shared<RestPodStatusClient>(ctx.api_client);
  auto src = std::make_shared<ApiPodSource>();
  src->client = ctx.api_client;
  src->clock = ctx.clock;
  src->loops = ctx.loops;
  src->node_name = ctx.node_name;
  src->checkpoint_path = ctx.settings->flags.root_directory + "/api-pods-checkpoint.json";
  ctx.components.keep_alive.push_back(status_client);
  ctx.components.keep_alive.push_back(src);
  ctx.kubelet_options->status_client = status_client.get();
  auto mirror_client = std::make_shared<RestMirrorClient>(ctx.api_client);
  auto node_uid =
      std::make_shared<apipods::NodeUidLookup>(ctx.api_client, ctx.node_name, *ctx.clock);
  ctx.components.keep_alive.push_back(mirror_client);
  ctx.components.keep_alive.push_back(node_uid);
  ctx.kubelet_options->mirror_client = mirror_client.get();
  ctx.kubelet_options->node_uid = [node_uid] { return node_uid->Get(); };
  ctx.kubelet_options->extra_sources.push_back(
      ExtraPodSource{.name = podsource::kApiSourceName,
                     .start = [src](podsource::PodConfig& config) { return src->Start(config); },
                     .stop = [src] { src->Stop(); }});
  ctx.AtShutdown([src] { src->Stop(); });
  return absl::OkStatus();
}

}  // namespace kubelet::app
