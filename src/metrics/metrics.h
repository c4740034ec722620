// The kubelet's Prometheus metrics (upstream pkg/kubelet/metrics, prober metrics, the process
// collector), on prometheus-cpp.
//
// Contract:
// - Names, label names and histogram buckets are upstream v1.28's. Each metric lives in one of
//   three registries, served by the kubelet HTTP API:
//     KubeletRegistry()  -> /metrics         (kubelet_*, process_*, kubernetes_build_info)
//     ProbesRegistry()   -> /metrics/probes  (prober_probe_total, prober_probe_duration_seconds)
//     ResourceRegistry() -> /metrics/resource (filled by the stats subsystem)
//     CadvisorRegistry() -> /metrics/cadvisor (cAdvisor's container_* subset, stats subsystem)
// - The accessors below return process-wide singletons created on first use; every method is
//   thread-safe (prometheus-cpp metrics are atomic; Family::Add is internally locked).
// - Serialize() renders a registry in the Prometheus text exposition format 0.0.4
//   (Content-Type kTextContentType).
#ifndef KUBELET_METRICS_METRICS_H_
#define KUBELET_METRICS_METRICS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/metric_family.h"
#include "prometheus/registry.h"

namespace kubelet::metrics {

inline constexpr char kTextContentType[] = "text/plain; version=0.0.4; charset=utf-8";

prometheus::Registry& KubeletRegistry();
prometheus::Registry& ProbesRegistry();
prometheus::Registry& ResourceRegistry();
prometheus::Registry& CadvisorRegistry();

// Scrape-time families: a collector is called at each Serialize() of the registry it was added
// to, and its families are rendered after the registry's own (e.g. the stats subsystem's
// container_* figures, read fresh per scrape). Collectors must be thread-safe; they may block on
// the runtime (the HTTP server scrapes such registries on a worker thread, see kubelet_server.h).
using CollectFn = std::function<std::vector<prometheus::MetricFamily>()>;
void AddCollector(const prometheus::Registry& registry, CollectFn fn);
// A gauge whose value `value` gives at each scrape (upstream's NewGaugeFunc): a collector of one
// unlabelled sample. `value` must be thread-safe and outlive the registry's scrapes.
void AddGaugeFunc(const prometheus::Registry& registry, const std::string& name,
                  const std::string& help, std::function<double()> value);

// The registry's families, its collectors' families and, for KubeletRegistry(), the process_*
// families (process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_start_time_seconds, process_open_fds, process_max_fds).
std::string Serialize(const prometheus::Registry& registry);

// Upstream kubelet metrics (subsystem "kubelet").
struct KubeletMetrics {
  // kubelet_node_name{node} = 1.
  prometheus::Family<prometheus::Gauge>& node_name;
  // kubelet_running_pods: pods that have a running sandbox.
  prometheus::Family<prometheus::Gauge>& running_pods;
  // kubelet_running_containers{container_state}: created / running / exited / unknown.
  prometheus::Family<prometheus::Gauge>& running_containers;
  // kubelet_pod_start_duration_seconds: from the kubelet first seeing a pod to all its
  // containers running.
  prometheus::Family<prometheus::Histogram>& pod_start_duration;
  // kubelet_pod_worker_duration_seconds{operation_type}: one SyncPod (create / update / sync).
  prometheus::Family<prometheus::Histogram>& pod_worker_duration;
  // kubelet_pod_worker_start_duration_seconds (upstream): from the kubelet first seeing a pod to
  // its first SyncPod (type create).
  prometheus::Family<prometheus::Histogram>& pod_worker_start_duration;
  // kubelet_pleg_event_to_pod_worker_seconds (not in upstream): from the relist that found a
  // change of a pod's containers to its worker starting the SyncPod that handles it.
  prometheus::Family<prometheus::Histogram>& pleg_event_to_pod_worker;
  // kubelet_pleg_relist_duration_seconds / kubelet_pleg_relist_interval_seconds.
  prometheus::Family<prometheus::Histogram>& pleg_relist_duration;
  prometheus::Family<prometheus::Histogram>& pleg_relist_interval;
  // kubelet_runtime_operations_total / _errors_total / _duration_seconds {operation_type}:
  // CRI calls by method name in snake case (e.g. "run_podsandbox", "create_container").
  prometheus::Family<prometheus::Counter>& runtime_operations;
  prometheus::Family<prometheus::Counter>& runtime_operations_errors;
  prometheus::Family<prometheus::Histogram>& runtime_operations_duration;
  // kubelet_started_pods_total, kubelet_started_pods_errors_total.
  prometheus::Family<prometheus::Counter>& started_pods;
  prometheus::Family<prometheus::Counter>& started_pods_errors;
  // kubelet_started_containers_total{container_type} (container / init_container /
  // ephemeral_container), kubelet_started_containers_errors_total{container_type,code}.
  prometheus::Family<prometheus::Counter>& started_containers;
  prometheus::Family<prometheus::Counter>& started_containers_errors;
  // kubelet_restarted_pods_total{static}: pods re-created with the same full name (static pods).
  prometheus::Family<prometheus::Counter>& restarted_pods;
  // kubelet_evictions{eviction_signal} (kept for the eviction manager).
  prometheus::Family<prometheus::Counter>& evictions;
  // storage_operation_duration_seconds{volume_plugin,operation_name,status,migrated}: volume
  // operations (volume_mount, volume_unmount, unmount_device, ...), status "success" or
  // "fail-unknown", migrated "false"; the CSI plugin as "kubernetes.io/csi:<driver>".
  prometheus::Family<prometheus::Histogram>& storage_operation_duration;
  // csi_operations_seconds{driver_name,method_name,grpc_status_code,migrated}: calls to CSI
  // drivers, method as "/csi.v1.Node/NodePublishVolume", code as gRPC names it ("OK").
  prometheus::Family<prometheus::Histogram>& csi_operations;
  // kubelet_device_plugin_registration_total{resource_name}: Register calls of device plugins.
  prometheus::Family<prometheus::Counter>& device_plugin_registration;
  // kubelet_device_plugin_alloc_duration_seconds{resource_name}: Allocate calls (DefBuckets).
  prometheus::Family<prometheus::Histogram>& device_plugin_alloc_duration;
  // kubelet_pod_resources_endpoint_requests_total / _list / _get_allocatable / _get and
  // kubelet_pod_resources_endpoint_errors_list / _get_allocatable / _get, all
  // {server_api_version}: calls of the pod resources API.
  prometheus::Family<prometheus::Counter>& pod_resources_requests_total;
  prometheus::Family<prometheus::Counter>& pod_resources_requests_list;
  prometheus::Family<prometheus::Counter>& pod_resources_requests_get_allocatable;
  prometheus::Family<prometheus::Counter>& pod_resources_requests_get;
  prometheus::Family<prometheus::Counter>& pod_resources_errors_list;
  prometheus::Family<prometheus::Counter>& pod_resources_errors_get_allocatable;
  prometheus::Family<prometheus::Counter>& pod_resources_errors_get;
  // kubelet_cpu_manager_pinning_requests_total / _errors_total: exclusive CPU allocations.
  prometheus::Family<prometheus::Counter>& cpu_manager_pinning_requests;
  prometheus::Family<prometheus::Counter>& cpu_manager_pinning_errors;
  // kubelet_topology_manager_admission_requests_total / _errors_total, and
  // kubelet_topology_manager_admission_duration_ms (ExponentialBuckets(.05, 2, 15)).
  prometheus::Family<prometheus::Counter>& topology_manager_admission_requests;
  prometheus::Family<prometheus::Counter>& topology_manager_admission_errors;
  prometheus::Family<prometheus::Histogram>& topology_manager_admission_duration;
  // kubelet_graceful_shutdown_start_time_seconds / _end_time_seconds: the last graceful node
  // shutdown (Unix seconds; unlabelled, shown once the node shutdown component adds them).
  prometheus::Family<prometheus::Gauge>& graceful_shutdown_start_time;
  prometheus::Family<prometheus::Gauge>& graceful_shutdown_end_time;
  // kubelet_credential_provider_plugin_errors{plugin_name} and
  // kubelet_credential_provider_plugin_duration{plugin_name} (seconds, DefBuckets): runs of
  // image credential provider plugins, errors counting the runs that failed or timed out.
  prometheus::Family<prometheus::Counter>& credential_provider_plugin_errors;
  prometheus::Family<prometheus::Histogram>& credential_provider_plugin_duration;
  // kubelet_container_log_filesystem_used_bytes is a stats metric; not here.
};
KubeletMetrics& Kubelet();

// Prober metrics (/metrics/probes).
struct ProberMetrics {
  // prober_probe_total{probe_type,result,container,pod,namespace,pod_uid}; probe_type is
  // Liveness / Readiness / Startup, result successful / failed / unknown.
  prometheus::Family<prometheus::Counter>& probe_total;
  // prober_probe_duration_seconds{probe_type,container,pod,namespace} (successful probes).
  prometheus::Family<prometheus::Histogram>& probe_duration;
};
ProberMetrics& Prober();

// Recording helpers: they pick the labels' child and upstream's buckets.
//   pod start: 0.5 .. 3600 s (upstream's list); pod worker, PLEG: DefBuckets;
//   runtime operations: ExponentialBuckets(.005, 2.5, 14); probe duration:
//   ExponentialBuckets(.001, 2, 16).
void ObservePodStart(double seconds);
void ObservePodWorker(const std::string& operation_type, double seconds);
void ObservePodWorkerStart(double seconds);
void ObservePlegEventToPodWorker(double seconds);
void ObserveRelist(double duration_seconds, double interval_seconds /* <0: first relist */);
void ObserveRuntimeOperation(const std::string& operation_type, double seconds, bool error);
// Storage: upstream's buckets {.1, .25, .5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600}.
void ObserveStorageOperation(const std::string& volume_plugin, const std::string& operation_name,
                             bool success, double seconds);
void ObserveCsiOperation(const std::string& driver_name, const std::string& method_name,
                         const std::string& grpc_status_code, double seconds);
void ObserveDevicePluginAllocation(const std::string& resource_name, double seconds);
void ObserveTopologyManagerAdmission(double milliseconds);
// One run of a credential provider plugin: its duration, and an error when `error`.
void ObserveCredentialProviderPlugin(const std::string& plugin_name, double seconds, bool error);
// result: "successful", "failed" or "unknown"; probe_type: "Liveness", "Readiness", "Startup".
void ObserveProbe(const std::string& probe_type, const std::string& result,
                  const std::string& container, const std::string& pod,
                  const std::string& namespace_, const std::string& pod_uid, double seconds);

// Records that the process started now (process_start_time_seconds comes from /proc) and sets
// kubelet_node_name and kubernetes_build_info. Call once at start-up.
void Init(const std::string& node_name, const std::string& git_version,
          const std::string& git_commit);

// Upstream's bucket sets.
prometheus::Histogram::BucketBoundaries DefBuckets();
prometheus::Histogram::BucketBoundaries ExponentialBuckets(double start, double factor, int count);

}  // namespace kubelet::metrics

#endif  // KUBELET_METRICS_METRICS_H_
