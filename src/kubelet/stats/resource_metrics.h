// The stats subsystem's Prometheus figures, computed from a Summary at scrape time:
//   /metrics/resource  upstream's resource metrics collector (v1.28): node_cpu_usage_seconds_total,
//                      node_memory_working_set_bytes, container_cpu_usage_seconds_total,
//                      container_memory_working_set_bytes, container_start_time_seconds
//                      {container,pod,namespace}, pod_cpu_usage_seconds_total,
//                      pod_memory_working_set_bytes {pod,namespace}, scrape_error; samples carry
//                      the figure's own time as their timestamp, as upstream.
//   /metrics/cadvisor  the subset of cAdvisor's families a CadvisorSnapshot can answer, with
//                      cAdvisor's labels {container,id,image,name,namespace,pod} for the node
//                      ("/"), the system containers, the pods' cgroups and the containers:
//                      container_cpu_{usage{cpu="total"},user,system}_seconds_total,
//                      container_cpu_cfs_{periods,throttled_periods,throttled_seconds}_total
//                      (cgroups with a CFS quota), container_memory_{working_set_bytes,
//                      usage_bytes,rss,cache,swap,failcnt (v1),max_usage_bytes (v1)},
//                      container_oom_events_total (the cgroup's oom_kill count),
//                      container_spec_cpu_{period,quota (when set),shares},
//                      container_spec_memory_limit_bytes (0: unlimited),
//                      container_start_time_seconds, container_last_seen,
//                      container_network_{receive,transmit}_{bytes,errors}_total{interface},
//                      container_fs_{usage,limit}_bytes{device} (the node's root and image file
//                      systems; a container's writable layer on the image file system), and
//                      machine_cpu_cores / machine_memory_bytes {boot_id,machine_id,system_uuid}.
//                      Families are sorted by name, as Go's client renders them.
//
// Thread-safety: the functions are pure; RegisterStatsCollectors' collectors call the provider,
// which is thread-safe. Ownership: RegisterStatsCollectors keeps the shared provider alive in
// the process-wide collector table (collectors are never removed).
#ifndef KUBELET_KUBELET_STATS_RESOURCE_METRICS_H_
#define KUBELET_KUBELET_STATS_RESOURCE_METRICS_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "kubelet/stats/cri_stats_provider.h"
#include "kubelet/stats/summary.h"
#include "prometheus/metric_family.h"

namespace kubelet::stats {

// A failed summary yields only scrape_error 1.
std::vector<prometheus::MetricFamily> ResourceMetricFamilies(const absl::StatusOr<Summary>& s);
std::vector<prometheus::MetricFamily> CadvisorMetricFamilies(const CadvisorSnapshot& snap);

// /metrics' kubelet_volume_stats_{capacity,available,used}_bytes, _inodes, _inodes_free,
// _inodes_used and _health_status_abnormal {namespace, persistentvolumeclaim} (upstream's
// volume stats collector): one sample per claim of the pods' volumes with a pvcRef (a claim
// used by several pods counts once).
std::vector<prometheus::MetricFamily> VolumeStatsMetricFamilies(const std::vector<PodStats>& pods);
// Adds a collector of those to metrics::KubeletRegistry(); `pods` gives the pods' volume stats
// at each scrape (thread-safe, kept for good).
void RegisterVolumeStatsCollector(std::function<std::vector<PodStats>()> pods);

// Adds the collectors to metrics::ResourceRegistry() and metrics::CadvisorRegistry().
void RegisterStatsCollectors(std::shared_ptr<CRIStatsProvider> provider);

}  // namespace kubelet::stats

#endif  // KUBELET_KUBELET_STATS_RESOURCE_METRICS_H_
