// Resource managers wiring (upstream's container manager builds them in NewContainerManager and
// starts them in Start): the machine's CPU topology, the topology manager (admission, after the
// container manager) with the device, CPU and memory managers as its hint providers, the CPU
// manager's reconcile through CRI UpdateContainerResources, the device manager's registration
// socket, the runtime hooks that give containers their devices and cpusets, and the pod
// resources API socket once the Kubelet runs.
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "app/wiring.h"
#include "common/log.h"
#include "kubelet/cm/container_manager.h"
#include "kubelet/cpumanager/cpu_manager.h"
#include "kubelet/devicemanager/device_manager.h"
#include "kubelet/devicemanager/device_plugin_api.h"
#include "kubelet/kubelet.h"
#include "kubelet/kuberuntime/options.h"
#include "kubelet/memorymanager/memory_manager.h"
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
    const bool needed =
        (!s.config.cpu_manager_policy.empty() && s.config.cpu_manager_policy != "none") ||
        (!s.config.topology_manager_policy.empty() && s.config.topology_manager_policy != "none");
    if (needed || ctx.components.container_manager == nullptr) {
      return absl::Status(
          topo.status().code(),
          absl::StrCat("failed to discover the CPU topology: ", topo.status().message()));
    }
    KLOG_WARNING("Cannot read the CPU topology; assuming one core per CPU on one NUMA node", "err",
                 std::string(topo.status().message()));
    topo = topology::FlatCPUTopology(ctx.components.container_manager->machine_info().num_cores);
  }
  const std::set<int> numa = topo->NUMANodes();
  std::vector<int> numa_nodes(numa.begin(), numa.end());
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

  // CPU manager: exclusive CPUs for Guaranteed pods' integer-CPU containers (static policy).
  absl::StatusOr<cpumanager::CPUManagerOptions> co =
      cpumanager::CPUManagerOptionsFromConfig(s.config, s.gates);
  if (!co.ok()) return co.status();
  co->state_dir = s.flags.root_directory;
  co->topology = *topo;
  co->topology_manager_policy = topology_manager->policy_name();
  absl::StatusOr<std::unique_ptr<cpumanager::CPUManager>> cpu =
      cpumanager::CPUManager::Create(*co, topology_manager.get(), ctx.clock);
  if (!cpu.ok()) {
    return absl::Status(cpu.status().code(),
                        absl::StrCat("start cpu manager error: ", cpu.status().message()));
  }
  std::shared_ptr<cpumanager::CPUManager> cpu_manager = std::move(*cpu);
  ctx.components.cpu_manager = cpu_manager;

  // Memory manager (MemoryManager gate): NUMA-pinned memory for Guaranteed pods (Static).
  std::shared_ptr<memorymanager::MemoryManager> memory_manager;
  memorymanager::MemoryManagerOptions mo =
      memorymanager::MemoryManagerOptionsFromConfig(s.config, s.gates);
  if (mo.enabled) {
    mo.state_dir = s.flags.root_directory;
    if (ctx.components.container_manager) {
      mo.node_allocatable_reservation = ctx.components.container_manager->AllocatableReservation();
    }
    const uint64_t mem_total =
        ctx.components.container_manager
            ? ctx.components.container_manager->machine_info().memory_capacity_bytes
            : 0;
    absl::StatusOr<memorymanager::MachineMemory> machine =
        memorymanager::DiscoverMachineMemory("/sys", mem_total);
    if (!machine.ok()) return machine.status();
    absl::StatusOr<std::unique_ptr<memorymanager::MemoryManager>> mem =
        memorymanager::MemoryManager::Create(mo, *std::move(machine), topology_manager.get());
    if (!mem.ok()) return mem.status();
    memory_manager = std::move(*mem);
    ctx.components.memory_manager = memory_manager;
  }

  devicemanager::DeviceManagerOptions dmo;
  dmo.plugin_dir = devicemanager::DevicePluginDir(s.flags.root_directory);
  dmo.numa_nodes = numa_nodes;
  dmo.cdi_devices = s.gates.Enabled("DevicePluginCDIDevices");
  auto dm = std::make_shared<devicemanager::DeviceManager>(dmo, topology_manager.get(), *ctx.clock);
  ctx.components.device_manager = dm;
  // Upstream's order: devices, CPUs, memory.
  topology_manager->AddHintProvider(dm.get());
  topology_manager->AddHintProvider(cpu_manager.get());
  if (memory_manager) topology_manager->AddHintProvider(memory_manager.get());

  auto late = ctx.late_kubelet;
  auto sources_ready = [late] {
    Kubelet* k = late->load();
    return k != nullptr && k->SourcesReady();
  };
  auto active_pods = [late] {
    Kubelet* k = late->load();
    return k == nullptr ? std::vector<api::PodPtr>{} : k->ActiveAndAdmittingPods();
  };
  if (memory_manager) {
    if (absl::Status st = memory_manager->Start(active_pods, sources_ready); !st.ok()) {
      return absl::Status(st.code(), absl::StrCat("start memory manager error: ", st.message()));
    }
  }
  cpumanager::CPUManager::Runtime rt;
  rt.active_pods = active_pods;
  rt.sources_ready = sources_ready;
  rt.running_container_id = [late](const std::string& uid,
                                   const std::string& name) -> std::optional<std::string> {
    Kubelet* k = late->load();
    if (k == nullptr) return std::nullopt;
    return k->RunningContainerID(uid, name);
  };
  rt.update_container_cpuset = [runtime = ctx.runtime](const std::string& id,
                                                       const config::CPUSet& cpus) {
    runtime::v1::ContainerResources r;
    r.mutable_linux()->set_cpuset_cpus(cpus.String());
    return runtime->UpdateContainerResources(id, r);
  };
  cpu_manager->Start(std::move(rt));
  ctx.AtShutdown([cpu_manager] { cpu_manager->Stop(); });

  // The internal container lifecycle: cpusets at creation, the container registered before it
  // starts.
  ctx.runtime_options->pre_create_container = [cpu_manager, memory_manager](
                                                  const api::Pod& pod, const api::Container& c,
                                                  runtime::v1::ContainerConfig* config) {
    const config::CPUSet cpus = cpu_manager->GetCPUAffinity(pod.metadata.uid, c.name);
    if (!cpus.IsEmpty()) {
      config->mutable_linux()->mutable_resources()->set_cpuset_cpus(cpus.String());
    }
    if (memory_manager) {
      const std::set<int> mems = memory_manager->GetMemoryNUMANodes(pod.metadata.uid, c.name);
      if (!mems.empty()) {
        config->mutable_linux()->mutable_resources()->set_cpuset_mems(absl::StrJoin(mems, ","));
      }
    }
  };
  ctx.runtime_options->pre_start_container = [cpu_manager, memory_manager](const api::Pod& pod,
                                                                           const api::Container& c,
                                                                           const std::string& id) {
    cpu_manager->AddContainer(pod, c, id);
    if (memory_manager) memory_manager->AddContainer(pod, c.name);
    return absl::OkStatus();
  };

  devicemanager::DeviceManager::Hooks hooks;
  hooks.active_pods = [late = ctx.late_kubelet]() -> std::optional<std::vector<api::PodPtr>> {
    Kubelet* k = late->load();
    if (k == nullptr || !k->SourcesReady()) return std::nullopt;
    return k->ActiveAndAdmittingPods();
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
  if (std::shared_ptr<cpumanager::CPUManager> cpu = ctx.components.cpu_manager) {
    auto ids = [](const config::CPUSet& s) {
      std::vector<int64_t> out;
      for (int c : s.List()) out.push_back(c);
      return out;
    };
    p.cpus = [cpu, ids](const std::string& uid, const std::string& c) {
      return ids(cpu->GetExclusiveCPUs(uid, c));
    };
    p.allocatable_cpus = [cpu, ids] { return ids(cpu->GetAllocatableCPUs()); };
  }
  if (std::shared_ptr<memorymanager::MemoryManager> mem = ctx.components.memory_manager) {
    auto blocks = [](const std::vector<memorymanager::Block>& in) {
      std::vector<podresources::MemoryBlock> out;
      for (const memorymanager::Block& b : in) {
        out.push_back(
            {b.type, b.size, std::vector<int64_t>(b.numa_affinity.begin(), b.numa_affinity.end())});
      }
      return out;
    };
    p.memory = [mem, blocks](const std::string& uid, const std::string& c) {
      return blocks(mem->GetMemory(uid, c));
    };
    p.allocatable_memory = [mem, blocks] { return blocks(mem->GetAllocatableMemory()); };
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
