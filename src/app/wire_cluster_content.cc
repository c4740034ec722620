// Pod content from the cluster, wired before the volume manager (which reads its objects and
// tokens from what this builds):
//   * API-server mode: the configMap/secret source chosen by
//     configMapAndSecretChangeDetectionStrategy (kubelet/clustercontent/api_content.h; the Cache
//     strategy's TTL comes from the Node the kubelet knows; with Watch a changed object syncs the
//     pods that reference it at once), the TokenRequest client and the TokenManager; the runtime
//     manager's env hooks (configMapKeyRef / secretKeyRef / envFrom read the same source, so their
//     objects are watched as the pod's volumes' are).
//   * Both modes: image pull credentials (upstream getPullSecretsForPod + MakeDockerKeyring):
//     the pod's imagePullSecrets (API-server mode; a secret that cannot be read is skipped with
//     upstream's FailedToRetrieveImagePullSecret warning event) ahead of the node's own docker
//     config files under --root-dir, the working directory and $HOME and, with
//     --image-credential-provider-config, the credential provider plugins (credentialprovider/
//     plugin.h; a bad configuration or a missing plugin ends start-up).
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "app/wiring.h"
#include "common/log.h"
#include "kubelet/clustercontent/api_content.h"
#include "kubelet/credentialprovider/keyring.h"
#include "kubelet/credentialprovider/plugin.h"
#include "kubelet/kubelet.h"
#include "kubelet/kuberuntime/options.h"
#include "kubelet/volume/token_manager.h"

namespace kubelet::app {
namespace {

runtime::v1::AuthConfig ToCri(const credentialprovider::AuthConfig& a) {
  runtime::v1::AuthConfig out;
  out.set_username(a.username);
  out.set_password(a.password);
  out.set_auth(a.auth);
  out.set_server_address(a.server_address);
  out.set_identity_token(a.identity_token);
  out.set_registry_token(a.registry_token);
  return out;
}

}  // namespace

absl::Status WireClusterContent(WiringStage stage, WiringContext& ctx) {
  if (stage != WiringStage::kBeforeRuntimeManager) return absl::OkStatus();
  auto node_docker_config = std::make_shared<credentialprovider::NodeDockerKeyring>(
      ctx.settings->flags.root_directory, *ctx.clock);
  ctx.components.keep_alive.push_back(node_docker_config);
  // The node's own keyring: its docker config files, and the credential provider plugins when
  // either flag is given (upstream registers them from the runtime manager's constructor).
  std::shared_ptr<const credentialprovider::DockerKeyring> node_keyring = node_docker_config;
  const config::KubeletFlags& flags = ctx.settings->flags;
  if (!flags.image_credential_provider_config_file.empty() ||
      !flags.image_credential_provider_bin_dir.empty()) {
    absl::StatusOr<std::unique_ptr<credentialprovider::ProvidersKeyring>> plugins =
        credentialprovider::RegisterCredentialProviderPlugins(
            flags.image_credential_provider_config_file, flags.image_credential_provider_bin_dir,
            *ctx.clock, node_docker_config.get());
    if (!plugins.ok()) {
      KLOG_ERROR(plugins.status(), "Failed to register CRI auth plugins");
      return absl::InvalidArgumentError(
          absl::StrCat("failed to register CRI auth plugins: ", plugins.status().message()));
    }
    node_keyring = std::shared_ptr<const credentialprovider::DockerKeyring>(*std::move(plugins));
  }

  std::shared_ptr<clustercontent::ClusterObjectSource> objects;
  if (ctx.api_client != nullptr) {
    clustercontent::ObjectSourceOptions oo;
    oo.reflector.loops = ctx.loops;
    // Read when a Get needs it; KubeletOptions outlives the wiring (app::Run owns it) and its
    // `node` hook is set once during start-up.
    const KubeletOptions* ko = ctx.kubelet_options;
    oo.ttl = [ko]() -> std::optional<absl::Duration> {
      if (!ko->node) return std::nullopt;
      return clustercontent::ObjectTTLFromAnnotations(ko->node().metadata.annotations);
    };
    // A changed object syncs its pods at once (their volumes are republished on every sync).
    oo.on_object_changed = [late = ctx.late_kubelet](const std::string& uid) {
      if (Kubelet* k = late->load()) k->TriggerPodSync(uid);
    };
    absl::StatusOr<std::shared_ptr<clustercontent::ClusterObjectSource>> made =
        clustercontent::MakeObjectSource(
            clustercontent::ObjectSourceStrategyFromConfig(ctx.settings->config), ctx.api_client,
            *ctx.clock, std::move(oo));
    if (!made.ok()) return made.status();
    objects = *std::move(made);
    auto token_client = std::make_shared<clustercontent::RestTokenClient>(ctx.api_client);
    auto tokens = std::make_shared<volume::TokenManager>(token_client.get(), *ctx.clock);
    ctx.components.object_source = objects;
    ctx.components.keep_alive.push_back(token_client);  // the TokenManager borrows it
    ctx.components.token_manager = tokens;
    ctx.components.claim_source = std::make_shared<clustercontent::RestClaimSource>(ctx.api_client);
    ctx.AtShutdown([objects] { objects->Stop(); });

    ctx.runtime_options->get_config_map =
        [objects](const std::string& ns,
                  const std::string& name) -> absl::StatusOr<std::map<std::string, std::string>> {
      absl::StatusOr<api::ConfigMap> cm = objects->GetConfigMap(ns, name);
      if (!cm.ok()) return cm.status();
      return std::move(cm->data);
    };
    ctx.runtime_options->get_secret =
        [objects](const std::string& ns,
                  const std::string& name) -> absl::StatusOr<std::map<std::string, std::string>> {
      absl::StatusOr<api::Secret> s = objects->GetSecret(ns, name);
      if (!s.ok()) return s.status();
      return std::move(s->data);
    };
  }

  events::EventRecorder* recorder = ctx.recorder;
  ctx.runtime_options->pull_credentials =
      [objects, node_keyring, recorder](
          const api::Pod& pod,
          const std::string& image) -> absl::StatusOr<std::vector<runtime::v1::AuthConfig>> {
    std::vector<credentialprovider::PullSecret> secrets;
    std::vector<std::string> failed;
    for (const api::LocalObjectReference& ref : pod.spec.image_pull_secrets) {
      // API validation lets empty names through; upstream ignores them quietly.
      if (ref.name.empty()) continue;
      absl::StatusOr<api::Secret> s =
          objects != nullptr
              ? objects->GetSecret(pod.metadata.namespace_, ref.name)
              : absl::StatusOr<api::Secret>(absl::FailedPreconditionError(absl::StrCat(
                    "secret ", log::Quote(ref.name), ": ", volume::kStandaloneObjectError)));
      if (!s.ok()) {
        KLOG_INFO("Unable to retrieve pull secret, the image pull may not succeed.", "pod",
                  absl::StrCat(pod.metadata.namespace_, "/", pod.metadata.name), "secret",
                  absl::StrCat(pod.metadata.namespace_, "/", ref.name), "err",
                  std::string(s.status().message()));
        failed.push_back(ref.name);
        continue;
      }
      secrets.push_back({ref.name, s->type, std::move(s->data)});
    }
    if (!failed.empty() && recorder != nullptr) {
      recorder->Record(
          events::PodRef(pod), "Warning", "FailedToRetrieveImagePullSecret",
          absl::StrCat("Unable to retrieve some image pull secrets (", absl::StrJoin(failed, ", "),
                       "); attempting to pull the image may not succeed."));
    }
    absl::StatusOr<std::unique_ptr<credentialprovider::DockerKeyring>> keyring =
        credentialprovider::MakeDockerKeyring(secrets, node_keyring.get());
    if (!keyring.ok()) return keyring.status();
    std::vector<runtime::v1::AuthConfig> out;
    for (const credentialprovider::AuthConfig& a : (*keyring)->Lookup(image)) {
      out.push_back(ToCri(a));
    }
    return out;
  };
  return absl::OkStatus();
}

}  // namespace kubelet::app
