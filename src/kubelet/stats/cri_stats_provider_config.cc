#include <string>

#include "kubelet/stats/cri_stats_provider.h"

namespace kubelet::stats {

std::string PodsCgroupPath(const config::KubeletConfiguration& c) {
  std::string root = c.cgroup_root.empty() || c.cgroup_root == "/" ? "" : c.cgroup_root;
  if (!c.cgroups_per_qos) return root;
  return root + (c.cgroup_driver == "systemd" ? "/kubepods.slice" : "/kubepods");
}

CRIStatsProviderOptions CRIStatsProviderOptionsFromConfig(const config::KubeletConfiguration& c) {
  CRIStatsProviderOptions o;
  o.kubelet_cgroup = c.kubelet_cgroups;
  o.system_cgroup = c.system_cgroups;
  if (c.volume_stats_agg_period > absl::ZeroDuration()) o.du_cache_ttl = c.volume_stats_agg_period;
  o.systemd_cgroup_names = c.cgroup_driver == "systemd";
  o.pods_cgroup = PodsCgroupPath(c);
  return o;
}

}  // namespace kubelet::stats
