// The stats subsystem's Prometheus figures, computed from a Summary at scrape time:
//   /metrics/resource  upstream's resource metrics collector (v1.28): node_cpu_usage_seconds_total,
//                      node_memory_working_set_bytes, container_cpu_usage_seconds_total,
//                      container_memory_working_set_bytes, container_start_time_seconds
//                      {container,pod,namespace}, pod_cpu_usage_seconds_total,
//                      pod_memory_working_set_bytes {pod,namespace}, scrape_error; samples carry
//                      the figure's own time as their timestamp, as upstream.
//   /metrics/cadvisor  the subset of cAdvisor's container_* families the Summary can answer
//                      (cpu, memory, start time, network, fs usage) with cAdvisor's labels
//                      {container,id,image,name,namespace,pod} for the node ("/"), the pods'
//                      cgroups and the containers.
//
// Thread-safety: the functions are pure; RegisterStatsCollectors' collectors call the provider,
// which is thread-safe. Ownership: RegisterStatsCollectors keeps the shared provider alive in
// the process-wide collector table (collectors are never removed).
#ifndef KUBELET_KUBELET_STATS_RESOURCE_METRICS_H_
#define KUBELET_KUBELET_STATS_RESOURCE_METRICS_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "kubelet/stats/cri_stats_provider.h"
#include "kubelet/stats/summary.h"
#include "prometheus/metric_family.h"

namespace kubelet::stats {

// A failed summary yields only scrape_error 1.
std::vector<prometheus::MetricFamily> ResourceMetricFamilies(const absl::StatusOr<Summary>& s);
std::vector<prometheus::MetricFamily> CadvisorMetricFamilies(const Summary& s);

// Adds the collectors to metrics::ResourceRegistry() and metrics::CadvisorRegistry().
void RegisterStatsCollectors(std::shared_ptr<CRIStatsProvider> provider);

}  // namespace kubelet::stats

#endif  // KUBELET_KUBELET_STATS_RESOURCE_METRICS_H_
