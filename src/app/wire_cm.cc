// Container manager wiring: machine info, the failSwapOn check, node capacity / allocatable
// (kubeReserved, systemReserved, reservedSystemCPUs, hard eviction thresholds), the cgroup
// driver and the QoS / pod cgroup tree below cgroupRoot. Hands the runtime manager the pod
// cgroup parent, the machine's memory and the allocatable resources (with InPlacePodVerticalScaling
// also the pod cgroup reads and writes of in-place resize), gives admission its allocatable, and
// registers the manager as a pod lifecycle participant.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "app/wiring.h"
#include "common/log.h"
#include "kubelet/cm/cgroup_fs.h"
#include "kubelet/cm/cgroup_manager.h"
#include "kubelet/cm/container_manager.h"
#include "kubelet/cm/machine_info.h"
#include "kubelet/cm/node_allocatable.h"
#include "kubelet/kubelet.h"
#include "kubelet/kuberuntime/options.h"

namespace kubelet::app {
namespace {

absl::Status CheckFailSwapOn() {
  auto lines = cm::ReadSwapLines();
  if (absl::IsNotFound(lines.status())) {
    KLOG_INFO("File does not exist, assuming that swap is disabled", "path", "/proc/swaps");
    return absl::OkStatus();
  }
  if (!lines.ok()) return lines.status();
  return cm::CheckSwap(*lines);
}

absl::StatusOr<std::shared_ptr<cm::ContainerManager>> Build(const Settings& s,
                                                            events::EventRecorder* recorder,
                                                            const std::string& node_name) {
  auto machine = cm::ReadMachineInfo();
  if (!machine.ok()) return machine.status();
  KLOG_V(2, "Machine info", "cores", machine->num_cores, "memoryCapacity",
         machine->memory_capacity_bytes, "machineID", machine->machine_id, "bootID",
         machine->boot_id, "kernelVersion", machine->kernel_version, "osImage", machine->os_image);

  cm::NodeConfig nc = cm::NodeConfigFromConfig(s.config, s.gates);
  if (nc.fail_swap_on) {
    if (absl::Status st = CheckFailSwapOn(); !st.ok()) return st;
  }
  cm::LogCgroupRootDefault(s.config);
  nc.recorder = recorder;
  nc.node_name = node_name;
  nc.runtime_cgroups = s.flags.runtime_cgroups;
  if (absl::Status st = cm::SetReservationsFromConfig(
          s.config, *machine, s.flags.experimental_node_allocatable_ignore_eviction_threshold, &nc);
      !st.ok()) {
    return st;
  }

  // ephemeral-storage capacity: the filesystem of the root dir (or of / before it exists).
  std::optional<int64_t> storage;
  auto fs_info = cm::GetFsInfo(s.flags.root_directory);
  if (!fs_info.ok()) fs_info = cm::GetFsInfo("/");
  if (fs_info.ok()) storage = static_cast<int64_t>(fs_info->capacity_bytes);
  api::ResourceList capacity = cm::MachineCapacity(*machine, nc.max_pods, storage);

  auto layout = cm::DetectCgroupLayout();
  if (!layout.ok()) return layout.status();
  std::unique_ptr<cm::SystemdUnits> units;
  if (nc.cgroup_driver == cm::kCgroupDriverSystemd) {
    if (!cm::IsRunningSystemd()) {
      return absl::FailedPreconditionError(
          "systemd cgroup driver requested but systemd is not running: use cgroupDriver "
          "cgroupfs (the container runtime must use the same driver)");
    }
    auto u = cm::NewDBusSystemdUnits();
    if (!u.ok()) return u.status();
    units = std::move(*u);
  }
  // Stateless; shared by the managers for the whole process lifetime.
  static cm::OsCgroupFs os_fs;
  auto cgroups = cm::NewCgroupManager(os_fs, *layout, nc.cgroup_driver, std::move(units));
  if (!cgroups.ok()) return cgroups.status();
  auto raw = cm::NewCgroupManager(os_fs, *layout, cm::kCgroupDriverCgroupfs);
  if (!raw.ok()) return raw.status();
  KLOG_INFO("Detected cgroup layout", "cgroupVersion", layout->unified ? "v2" : "v1",
            "cgroupDriver", nc.cgroup_driver);

  auto manager = std::make_shared<cm::ContainerManager>(std::move(nc), std::move(*machine),
                                                        std::move(capacity), std::move(*cgroups),
                                                        std::move(*raw));
  if (absl::Status st = manager->Start(); !st.ok()) return st;
  return manager;
}

// In-place resize: the runtime manager reaches the pod cgroups through the manager.
void WirePodCgroupResize(cm::ContainerManager* m, WiringContext& ctx) {
  auto to_runtime = [](const cm::ResourceConfig& rc) {
    kuberuntime::PodCgroupConfig c;
    c.cpu_shares = rc.cpu_shares;
    c.cpu_quota = rc.cpu_quota;
    c.cpu_period = rc.cpu_period;
    c.memory = rc.memory;
    return c;
  };
  kuberuntime::Options& ro = *ctx.runtime_options;
  ro.pod_cgroup_desired = [m, to_runtime](const api::Pod& pod) {
    return to_runtime(cm::ResourceConfigForPod(pod, m->config().cpu_cfs_quota,
                                               m->config().cpu_cfs_quota_period_us));
  };
  ro.get_pod_cgroup_config =
      [m, to_runtime](const api::Pod& pod,
                      const std::string& resource) -> absl::StatusOr<kuberuntime::PodCgroupConfig> {
    absl::StatusOr<cm::ResourceConfig> rc = m->GetPodCgroupConfig(pod, resource);
    if (!rc.ok()) return rc.status();
    return to_runtime(*rc);
  };
  ro.set_pod_cgroup_config = [m](const api::Pod& pod, const std::string& resource,
                                 const kuberuntime::PodCgroupConfig& c) {
    cm::ResourceConfig rc;
    rc.cpu_shares = c.cpu_shares;
    rc.cpu_quota = c.cpu_quota;
    rc.cpu_period = c.cpu_period;
    rc.memory = c.memory;
    return m->SetPodCgroupConfig(pod, resource, rc);
  };
  ro.pod_cgroup_memory_usage = [m](const api::Pod& pod) { return m->GetPodCgroupMemoryUsage(pod); };
}

}  // namespace

absl::Status WireContainerManager(WiringStage stage, WiringContext& ctx) {
  switch (stage) {
    case WiringStage::kBeforeRuntimeManager: {
      auto manager = Build(*ctx.settings, ctx.recorder, ctx.node_name);
      if (!manager.ok()) {
        return absl::Status(manager.status().code(),
                            absl::StrCat("failed to run Kubelet: ", manager.status().message()));
      }
      std::shared_ptr<cm::ContainerManager> cm = *manager;
      ctx.components.container_manager = cm;
      // The manager outlives the runtime manager (components are released after it).
      cm::ContainerManager* m = cm.get();
      if (m->config().cgroups_per_qos) {
        ctx.runtime_options->cgroup_parent = [m](const api::Pod& pod) {
          return m->PodCgroupParent(pod);
        };
        if (m->config().in_place_pod_vertical_scaling) WirePodCgroupResize(m, ctx);
      }
      ctx.runtime_options->memory_capacity_bytes = m->machine_info().memory_capacity_bytes;
      ctx.runtime_options->cgroup2_unified = m->cgroup_manager().Unified();
      ctx.runtime_options->node_allocatable = [m]() { return m->Allocatable(); };
      const api::ResourceList& alloc = m->Allocatable();
      auto get = [&](const char* name) -> const api::Quantity* {
        auto it = alloc.find(name);
        return it == alloc.end() ? nullptr : &it->second;
      };
      if (const api::Quantity* q = get(api::kResourceCPU)) {
        ctx.kubelet_options->allocatable.milli_cpu = q->MilliValue();
      }
      if (const api::Quantity* q = get(api::kResourceMemory)) {
        ctx.kubelet_options->allocatable.memory_bytes = q->Value();
      }
      if (const api::Quantity* q = get(cm::kResourcePods)) {
        ctx.kubelet_options->allocatable.pods = q->Value();
      }
      if (const api::Quantity* q = get(api::kResourceEphemeralStorage)) {
        ctx.kubelet_options->allocatable.ephemeral_storage_bytes = q->Value();
      }
      KLOG_INFO("Node allocatable", "cpu", ctx.kubelet_options->allocatable.milli_cpu, "memory",
                ctx.kubelet_options->allocatable.memory_bytes, "pods",
                ctx.kubelet_options->allocatable.pods);
      return absl::OkStatus();
    }
    case WiringStage::kBeforeKubelet:
      if (ctx.components.container_manager) {
        ctx.kubelet_options->participants.push_back(ctx.components.container_manager.get());
      }
      return absl::OkStatus();
    case WiringStage::kAfterKubeletStart:
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace kubelet::app
