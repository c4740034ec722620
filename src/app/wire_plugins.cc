// Plugins: the CSI driver registry and the CSI volume plugin, built before the volume manager
// (which asks the plugin for `csi:` volumes), and the plugin manager on
// <root-dir>/plugins_registry with the CSI driver handler ("CSIPlugin"), started once the Kubelet
// runs (upstream's initializeRuntimeDependentModules). In API-server mode a registered driver's
// node info goes to the Node and its CSINode, and CSIDriver objects are read; standalone,
// drivers are only recorded.
#include <memory>

#include "absl/strings/str_cat.h"
#include "app/wiring.h"
#include "common/log.h"
#include "kubelet/clustercontent/api_content.h"
#include "kubelet/csi/csi_client.h"
#include "kubelet/csi/csi_driver.h"
#include "kubelet/csi/csi_volume_plugin.h"
#include "kubelet/csi/node_info_manager.h"
#include "kubelet/csi/registration_handler.h"
#include "kubelet/nodestatus/node_status.h"
#include "kubelet/pluginmanager/plugin_manager.h"
#include "kubelet/pluginmanager/registration_client.h"

namespace kubelet::app {

absl::Status WirePlugins(WiringStage stage, WiringContext& ctx) {
  if (stage == WiringStage::kBeforeRuntimeManager) {
    auto drivers = std::make_shared<csi::DriverRegistry>();
    std::shared_ptr<csi::CsiClient> client = csi::NewGrpcCsiClient();
    std::shared_ptr<csi::CSIDriverLister> lister;
    std::shared_ptr<csi::VolumeAttachmentGetter> attachments;
    if (ctx.api_client) {
      lister = csi::NewApiCSIDriverLister(*ctx.api_client);
      attachments = csi::NewApiVolumeAttachmentGetter(*ctx.api_client);
    }
    csi::CsiVolumePluginOptions po;
    po.node_name = ctx.node_name;
    po.root_dir = ctx.settings->flags.root_directory;
    // volumesInUse changed: the Node status goes out now rather than at its next period.
    po.in_use_changed = [late = ctx.components.late_node_status] {
      if (nodestatus::NodeStatusManager* m = late->load()) m->RequestStatusUpdate();
    };
    if (ctx.api_client) {
      // Secrets a PV names are read when its volume is staged or published, with a GET each
      // time as upstream (the Node authorizer grants those of PVs bound to the node's pods).
      auto secrets = std::make_shared<clustercontent::SimpleObjectSource>(ctx.api_client);
      po.get_secret =
          [secrets](const std::string& ns,
                    const std::string& name) -> absl::StatusOr<std::map<std::string, std::string>> {
        absl::StatusOr<api::Secret> secret = secrets->GetSecret(ns, name);
        if (!secret.ok()) return secret.status();
        return std::move(secret->data);
      };
    }
    // Built by WireClusterContent (null standalone); kept alive by the components.
    po.tokens = ctx.components.token_manager.get();
    auto plugin = std::make_shared<csi::CsiVolumePlugin>(*drivers, *client, lister.get(),
                                                         attachments.get(), std::move(po));
    ctx.components.csi_drivers = drivers;
    ctx.components.csi_client = client;
    ctx.components.external_volume_plugins.push_back(plugin);
    ctx.components.keep_alive.push_back(lister);
    ctx.components.keep_alive.push_back(attachments);
    return absl::OkStatus();
  }
  if (stage != WiringStage::kAfterKubeletStart) return absl::OkStatus();
  std::shared_ptr<csi::NodeInfoManager> node_info;
  if (ctx.api_client) {
    // The CSINode is created with the first driver's node info (the Node is registered
    // asynchronously, after this point).
    node_info = csi::NewApiNodeInfoManager(*ctx.api_client, *ctx.clock, ctx.node_name);
  } else {
    KLOG_INFO("Skipping CSINode initialization, kubelet running in standalone mode");
  }
  auto handler = std::make_shared<csi::RegistrationHandler>(
      *ctx.components.csi_drivers, *ctx.components.csi_client, node_info.get());
  std::shared_ptr<pluginmanager::RegistrationClient> reg_client =
      pluginmanager::NewGrpcRegistrationClient();
  pluginmanager::PluginManagerOptions o;
  o.registry_dir = absl::StrCat(ctx.settings->flags.root_directory, "/plugins_registry");
  o.clock = ctx.clock;
  o.client = reg_client.get();
  auto manager = std::make_shared<pluginmanager::PluginManager>(o);
  manager->AddHandler(pluginmanager::kCSIPlugin, handler.get());
  KLOG_V(4, "Starting plugin manager");
  if (absl::Status st = manager->Start(); !st.ok()) {
    return absl::Status(st.code(), absl::StrCat("plugin manager: ", st.message()));
  }
  ctx.components.keep_alive.insert(ctx.components.keep_alive.end(),
                                   {node_info, handler, reg_client});
  ctx.AtShutdown([manager] { manager->Stop(); });
  return absl::OkStatus();
}

}  // namespace kubelet::app
