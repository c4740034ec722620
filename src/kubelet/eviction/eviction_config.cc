#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kubelet/eviction/eviction.h"
#include "kubelet/stats/cri_stats_provider.h"

namespace kubelet::eviction {

absl::StatusOr<ManagerOptions> ManagerOptionsFromConfig(const config::KubeletConfiguration& c) {
  absl::StatusOr<std::vector<Threshold>> thresholds = ParseThresholds(
      c.eviction_hard, c.eviction_soft, c.eviction_soft_grace_period, c.eviction_minimum_reclaim,
      std::set<std::string>(c.enforce_node_allocatable.begin(), c.enforce_node_allocatable.end()));
  if (!thresholds.ok()) return thresholds.status();
  ManagerOptions o;
  o.thresholds = *std::move(thresholds);
  o.pressure_transition_period = c.eviction_pressure_transition_period;
  o.max_pod_grace_period_seconds = c.eviction_max_pod_grace_period;
  o.kernel_memcg_notification = c.kernel_memcg_notification;
  if (o.kernel_memcg_notification) o.pods_cgroup = stats::PodsCgroupPath(c);
  return o;
}

}  // namespace kubelet::eviction
