// Resource managers wiring (upstream's container manager builds them in NewContainerManager and
// starts them in Start): the machine's CPU topology, the topology manager (admission, after the
// container manager) with the device, CPU and memory managers as its hint providers, the device
// manager's registration socket, the runtime hooks that give containers their devices and
// cpusets, the node status's device capacity, and the pod resources API socket once the Kubelet
// runs.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "app/wiring.h"
#include "common/log.h"
#include "kubelet/devicemanager/device_manager.h"
#include "kubelet/devicemanager/device_plugin_api.h"
#include "kubelet/kubelet.h"
#include "kubelet/kuberuntime/options.h"
#include "kubelet/nodestatus/node_status.h"
#include "kubelet/podresources/pod_resources_api.h"
#include "kubelet/podresources/server.h"
#include "kubelet/topology/topology.h"
#include "kubelet/topologymanager/topology_manager.h"

namespace kubelet::app {
namespace {

std::vector<podresources::DeviceInstance> Instances(
    const devicemanager::ResourceDeviceInstances& devices) {
  std::vector<podresources::DeviceInstance> out;
  for (const auto& [resource, ids] : devices) {
    for (const auto& [id, numa] : ids) out.push_back({resource, id, numa});
  }
  return out;
}

absl::Status BeforeRuntimeManager(WiringContext& ctx) {
  const Settings& s = *ctx.settings;
  absl::StatusOr<topology::CPUTopology> topo = topology::DiscoverCPUTopology();
  if (!topo.ok()) {
    return absl::Status(topo.status().code(), absl::StrCat("failed to discover the CPU topology: ",
                                                           topo.status().message()));
  }
  std::vector<int> numa_nodes(topo->NUMANodes().begin(), topo->NUMANodes().end());
  absl::StatusOr<topologymanager::TopologyManagerOptions> to =
      topologymanager::TopologyManagerOptionsFromConfig(s.config, s.gates);
  if (!to.ok()) return to.status();
  absl::StatusOr<std::unique_ptr<topologymanager::TopologyManager>> tm =
      topologymanager::NewTopologyManager(*to, numa_nodes);
  if (!tm.ok()) {
    return absl::Status(tm.status().code(), absl::StrCat("failed to initialize topology manager: ",
                                                         tm.status().message()));
  }
  std::shared_ptr<topologymanager::TopologyManager> topology_manager = std::move(*tm);
  ctx.components.topology_manager = topology_manager;

  devicemanager::DeviceManagerOptions dmo;
  dmo.plugin_dir = devicemanager::DevicePluginDir(s.flags.root_directory);
  dmo.numa_nodes = numa_nodes;
  dmo.cdi_devices = s.gates.Enabled("DevicePluginCDIDevices");
  auto dm = std::make_shared<devicemanager::DeviceManager>(dmo, topology_manager.get(), *ctx.clock);
  ctx.components.device_manager = dm;
  topology_manager->AddHintProvider(dm.get());

  devicemanager::DeviceManager::Hooks hooks;
  hooks.active_pods = [late = ctx.late_kubelet]() -> std::optional<std::vector<api::PodPtr>> {
    Kubelet* k = late->load();
    if (k == nullptr || !k->SourcesReady()) return std::nullopt;
    return k->ActivePods();
  };
  hooks.devices_changed = [late = ctx.components.late_node_status] {
    if (nodestatus::NodeStatusManager* m = late->load()) m->RequestStatusUpdate();
  };
  if (absl::Status st = dm->Start(std::move(hooks)); !st.ok()) {
    return absl::Status(st.code(),
                        absl::StrCat("failed to start device plugin manager: ", st.message()));
  }
  ctx.AtShutdown([dm] { dm->Stop(); });

  ctx.runtime_options->container_resources =
      [dm](const api::Pod& pod,
           const api::Container& c) -> absl::StatusOr<kuberuntime::ContainerResources> {
    absl::StatusOr<devicemanager::DeviceRunContainerOptions> o =
        dm->GetDeviceRunContainerOptions(pod, c);
    if (!o.ok()) return o.status();
    kuberuntime::ContainerResources r;
    r.mounts = std::move(o->mounts);
    r.devices = std::move(o->devices);
    r.envs = std::move(o->envs);
    r.annotations = std::move(o->annotations);
    r.cdi_devices = std::move(o->cdi_devices);
    return r;
  };
  return absl::OkStatus();
}

absl::Status AfterKubeletStart(WiringContext& ctx) {
  podresources::ServerOptions so;
  so.socket_path = podresources::SocketPath(ctx.settings->flags.root_directory);
  so.get_enabled = ctx.settings->gates.Enabled("KubeletPodResourcesGet");
  podresources::Providers p;
  Kubelet* k = ctx.kubelet;
  p.pods = [k] { return k->pod_manager().GetPods(); };
  if (std::shared_ptr<devicemanager::DeviceManager> dm = ctx.components.device_manager) {
    p.devices = [dm](const std::string& uid, const std::string& c) {
      return Instances(dm->GetDevices(uid, c));
    };
    p.allocatable_devices = [dm] { return Instances(dm->GetAllocatableDevices()); };
    p.update_allocated_devices = [dm] { dm->UpdateAllocatedDevices(); };
  }
  auto server = std::make_shared<podresources::PodResourcesServer>(so, std::move(p));
  if (absl::Status st = server->Start(); !st.ok()) {
    // As upstream, a pod resources socket that cannot be served is logged, not fatal.
    KLOG_ERROR(st, "Failed to start the pod resources API server");
    return absl::OkStatus();
  }
  ctx.components.keep_alive.push_back(server);
  ctx.AtShutdown([server] { server->Stop(); });
  return absl::OkStatus();
}

}  // namespace

absl::Status WireResourceManagers(WiringStage stage, WiringContext& ctx) {
  switch (stage) {
    case WiringStage::kBeforeRuntimeManager:
      return BeforeRuntimeManager(ctx);
    case WiringStage::kBeforeKubelet:
      if (ctx.components.topology_manager) {
        ctx.kubelet_options->participants.push_back(ctx.components.topology_manager.get());
      }
      return absl::OkStatus();
    case WiringStage::kAfterKubeletStart:
      return AfterKubeletStart(ctx);
  }
  return absl::OkStatus();
}

}  // namespace kubelet::app
