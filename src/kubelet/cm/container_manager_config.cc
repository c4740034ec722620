#include <map>
#include <set>
#include <string>

#include "common/log.h"
#include "config/cpuset.h"
#include "kubelet/cm/container_manager.h"

namespace kubelet::cm {

NodeConfig NodeConfigFromConfig(const config::KubeletConfiguration& c,
                                const config::FeatureGate& gates) {
  NodeConfig nc;
  nc.cgroup_driver = c.cgroup_driver.empty() ? kCgroupDriverCgroupfs : c.cgroup_driver;
  nc.cgroups_per_qos = c.cgroups_per_qos;
  nc.cgroup_root = c.cgroup_root;
  if (nc.cgroups_per_qos && nc.cgroup_root.empty()) nc.cgroup_root = "/";
  nc.kubelet_cgroups = c.kubelet_cgroups;
  nc.system_cgroups = c.system_cgroups;
  nc.enforce_node_allocatable =
      std::set<std::string>(c.enforce_node_allocatable.begin(), c.enforce_node_allocatable.end());
  nc.system_reserved_cgroup = c.system_reserved_cgroup;
  nc.kube_reserved_cgroup = c.kube_reserved_cgroup;
  nc.cpu_cfs_quota = c.cpu_cfs_quota;
  if (gates.Enabled("CustomCPUCFSQuotaPeriod") && c.cpu_cfs_quota_period > absl::ZeroDuration()) {
    nc.cpu_cfs_quota_period_us = absl::ToInt64Microseconds(c.cpu_cfs_quota_period);
  }
  nc.pod_pids_limit = c.pod_pids_limit;
  nc.in_place_pod_vertical_scaling = gates.Enabled("InPlacePodVerticalScaling");
  nc.fail_swap_on = c.fail_swap_on;
  nc.max_pods = c.max_pods;
  return nc;
}

void LogCgroupRootDefault(const config::KubeletConfiguration& c) {
  if (c.cgroups_per_qos && c.cgroup_root.empty()) {
    KLOG_INFO("--cgroups-per-qos enabled, but --cgroup-root was not specified.  defaulting to /");
  }
}

absl::Status SetReservationsFromConfig(const config::KubeletConfiguration& c,
                                       const MachineInfo& machine, bool ignore_eviction_thresholds,
                                       NodeConfig* nc) {
  // reservedSystemCPUs must name CPUs of this machine; it replaces the CPU reservation.
  std::map<std::string, std::string> kube_reserved = c.kube_reserved;
  std::map<std::string, std::string> system_reserved = c.system_reserved;
  absl::StatusOr<config::CPUSet> reserved_cpus = config::GetReservedCPUs(
      c.reserved_system_cpus,
      config::CPUSet(std::set<int>(machine.online_cpus.begin(), machine.online_cpus.end())));
  if (!reserved_cpus.ok()) return reserved_cpus.status();
  if (reserved_cpus->Size() > 0) {
    KLOG_INFO(
        "Option --reserved-cpus is specified, it will overwrite the cpu setting in KubeReserved "
        "and SystemReserved",
        "reservedCPUs", reserved_cpus->String());
    OverrideReservedCPUs(reserved_cpus->Size(), &kube_reserved, &system_reserved);
  }
  absl::StatusOr<api::ResourceList> kube = ParseReservation(kube_reserved);
  if (!kube.ok()) return kube.status();
  absl::StatusOr<api::ResourceList> system = ParseReservation(system_reserved);
  if (!system.ok()) return system.status();
  nc->kube_reserved = *std::move(kube);
  nc->system_reserved = *std::move(system);
  if (!ignore_eviction_thresholds) {
    absl::StatusOr<std::vector<EvictionThreshold>> hard = ParseEvictionThresholds(c.eviction_hard);
    if (!hard.ok()) return hard.status();
    nc->hard_eviction_thresholds = *std::move(hard);
  }
  return absl::OkStatus();
}

}  // namespace kubelet::cm
