#include "metrics/metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/text_serializer.h"

namespace kubelet::metrics {
namespace {

struct CollectorTable {
  absl::Mutex mu;
  std::multimap<const prometheus::Registry*, CollectFn> fns ABSL_GUARDED_BY(mu);
};

CollectorTable& Collectors() {
  static auto* t = new CollectorTable;
  return *t;
}

prometheus::MetricFamily GaugeFamily(const std::string& name, const std::string& help, double value,
                                     prometheus::MetricType type) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(m);
  return f;
}

// The Go client's process collector, from /proc/self.
std::vector<prometheus::MetricFamily> ProcessFamilies() {
  std::vector<prometheus::MetricFamily> out;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  std::ifstream stat("/proc/self/stat");
  std::string line;
  if (std::getline(stat, line)) {
    // Fields after the parenthesised command name; field 3 (state) is index 0 here.
    const auto close = line.rfind(')');
    std::istringstream in(close == std::string::npos ? std::string() : line.substr(close + 1));
    std::vector<std::string> f;
    for (std::string tok; in >> tok;) f.push_back(tok);
    // Parsed without exceptions: a scrape must not throw on a field it cannot read.
    double utime = 0, stime = 0, start_ticks = 0, vsize = 0, rss = 0;
    if (f.size() > 21 && absl::SimpleAtod(f[11], &utime) && absl::SimpleAtod(f[12], &stime) &&
        absl::SimpleAtod(f[19], &start_ticks) && absl::SimpleAtod(f[20], &vsize) &&
        absl::SimpleAtod(f[21], &rss)) {
      out.push_back(GaugeFamily("process_cpu_seconds_total",
                                "Total user and system CPU time spent in seconds.",
                                (utime + stime) / ticks, prometheus::MetricType::Counter));
      out.push_back(GaugeFamily("process_resident_memory_bytes", "Resident memory size in bytes.",
                                rss * page, prometheus::MetricType::Gauge));
      out.push_back(GaugeFamily("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                                vsize, prometheus::MetricType::Gauge));
      double boot = 0;
      std::ifstream pstat("/proc/stat");
      for (std::string l; std::getline(pstat, l);) {
        if (l.rfind("btime ", 0) == 0) {
          if (!absl::SimpleAtod(absl::string_view(l).substr(6), &boot)) boot = 0;
          break;
        }
      }
      out.push_back(GaugeFamily("process_start_time_seconds",
                                "Start time of the process since unix epoch in seconds.",
                                boot + start_ticks / ticks, prometheus::MetricType::Gauge));
    }
  }
  int fds = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') ++fds;
    }
    closedir(d);
    --fds;  // the directory stream's own descriptor
  }
  out.push_back(GaugeFamily("process_open_fds", "Number of open file descriptors.", fds,
                            prometheus::MetricType::Gauge));
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    out.push_back(GaugeFamily("process_max_fds", "Maximum number of open file descriptors.",
                              static_cast<double>(rl.rlim_cur), prometheus::MetricType::Gauge));
  }
  return out;
}

}  // namespace

prometheus::Registry& KubeletRegistry() {
  static auto* r = new prometheus::Registry();
  return *r;
}
prometheus::Registry& ProbesRegistry() {
  static auto* r = new prometheus::Registry();
  return *r;
}
prometheus::Registry& ResourceRegistry() {
  static auto* r = new prometheus::Registry();
  return *r;
}
prometheus::Registry& CadvisorRegistry() {
  static auto* r = new prometheus::Registry();
  return *r;
}

void AddCollector(const prometheus::Registry& registry, CollectFn fn) {
  auto& t = Collectors();
  absl::MutexLock l(&t.mu);
  t.fns.emplace(&registry, std::move(fn));
}

void AddGaugeFunc(const prometheus::Registry& registry, const std::string& name,
                  const std::string& help, std::function<double()> value) {
  AddCollector(registry, [name, help, value = std::move(value)] {
    return std::vector<prometheus::MetricFamily>{
        GaugeFamily(name, help, value(), prometheus::MetricType::Gauge)};
  });
}

std::string Serialize(const prometheus::Registry& registry) {
  std::vector<prometheus::MetricFamily> families = registry.Collect();
  std::vector<CollectFn> fns;
  {
    auto& t = Collectors();
    absl::MutexLock l(&t.mu);
    auto [b, e] = t.fns.equal_range(&registry);
    for (auto it = b; it != e; ++it) fns.push_back(it->second);
  }
  for (auto& fn : fns) {
    auto more = fn();
    families.insert(families.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
  }
  if (&registry == &KubeletRegistry()) {
    auto proc = ProcessFamilies();
    families.insert(families.end(), proc.begin(), proc.end());
  }
  // Families with no samples render as bare HELP/TYPE lines; Go's client omits them.
  std::vector<prometheus::MetricFamily> non_empty;
  for (auto& f : families) {
    if (!f.metric.empty()) non_empty.push_back(std::move(f));
  }
  return prometheus::TextSerializer().Serialize(non_empty);
}

prometheus::Histogram::BucketBoundaries DefBuckets() {
  return {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};
}

prometheus::Histogram::BucketBoundaries ExponentialBuckets(double start, double factor, int count) {
  prometheus::Histogram::BucketBoundaries b;
  double v = start;
  for (int i = 0; i < count; ++i) {
    b.push_back(v);
    v *= factor;
  }
  return b;
}

KubeletMetrics& Kubelet() {
  static auto* m = [] {
    auto& r = KubeletRegistry();
    return new KubeletMetrics{
        prometheus::BuildGauge()
            .Name("kubelet_node_name")
            .Help("[ALPHA] The node's name. The count is always 1.")
            .Register(r),
        prometheus::BuildGauge()
            .Name("kubelet_running_pods")
            .Help("[ALPHA] Number of pods that have a running pod sandbox")
            .Register(r),
        prometheus::BuildGauge()
            .Name("kubelet_running_containers")
            .Help("[ALPHA] Number of containers currently running")
            .Register(r),
        prometheus::BuildHistogram()
            .Name("kubelet_pod_start_duration_seconds")
            .Help("[ALPHA] Duration in seconds from kubelet seeing a pod for the first time to the "
                  "pod starting to run")
            .Register(r),
        prometheus::BuildHistogram()
            .Name("kubelet_pod_worker_duration_seconds")
            .Help("[ALPHA] Duration in seconds to sync a single pod. Broken down by operation "
                  "type: create, update, or sync")
            .Register(r),
        prometheus::BuildHistogram()
            .Name("kubelet_pod_worker_start_duration_seconds")
            .Help("[ALPHA] Duration in seconds from kubelet seeing a pod to starting a worker.")
            .Register(r),
        prometheus::BuildHistogram()
            .Name("kubelet_pleg_event_to_pod_worker_seconds")
            .Help("Duration in seconds from the PLEG relist that found a change of a pod's "
                  "containers to its pod worker starting the sync that handles it.")
            .Register(r),
        prometheus::BuildHistogram()
            .Name("kubelet_pleg_relist_duration_seconds")
            .Help("[ALPHA] Duration in seconds for relisting pods in PLEG.")
            .Register(r),
        prometheus::BuildHistogram()
            .Name("kubelet_pleg_relist_interval_seconds")
            .Help("[ALPHA] Interval in seconds between relisting in PLEG.")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_runtime_operations_total")
            .Help("[ALPHA] Cumulative number of runtime operations by operation type.")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_runtime_operations_errors_total")
            .Help("[ALPHA] Cumulative number of runtime operation errors by operation type.")
            .Register(r),
        prometheus::BuildHistogram()
            .Name("kubelet_runtime_operations_duration_seconds")
            .Help("[ALPHA] Duration in seconds of runtime operations. Broken down by operation "
                  "type.")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_started_pods_total")
            .Help("[ALPHA] Cumulative number of pods started")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_started_pods_errors_total")
            .Help("[ALPHA] Cumulative number of errors when starting pods")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_started_containers_total")
            .Help("[ALPHA] Cumulative number of containers started")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_started_containers_errors_total")
            .Help("[ALPHA] Cumulative number of errors when starting containers")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_restarted_pods_total")
            .Help("[ALPHA] Number of pods that have been restarted because they were deleted and "
                  "recreated with the same UID while the kubelet was watching them (common for "
                  "static pods, extremely uncommon for API pods)")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_evictions")
            .Help("[ALPHA] Cumulative number of pod evictions by eviction signal")
            .Register(r),
        prometheus::BuildHistogram()
            .Name("storage_operation_duration_seconds")
            .Help("[ALPHA] Storage operation duration")
            .Register(r),
        prometheus::BuildHistogram()
            .Name("csi_operations_seconds")
            .Help("[ALPHA] Container Storage Interface operation duration with gRPC error code "
                  "status total")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_device_plugin_registration_total")
            .Help("[ALPHA] Cumulative number of device plugin registrations. Broken down by "
                  "resource name.")
            .Register(r),
        prometheus::BuildHistogram()
            .Name("kubelet_device_plugin_alloc_duration_seconds")
            .Help("[ALPHA] Duration in seconds to serve a device plugin Allocation request. "
                  "Broken down by resource name.")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_pod_resources_endpoint_requests_total")
            .Help("[ALPHA] Number of requests to the PodResource endpoint. Broken down by "
                  "server api version.")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_pod_resources_endpoint_requests_list")
            .Help("[ALPHA] Number of requests to the PodResource List endpoint. Broken down by "
                  "server api version.")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_pod_resources_endpoint_requests_get_allocatable")
            .Help("[ALPHA] Number of requests to the PodResource GetAllocatableResources "
                  "endpoint. Broken down by server api version.")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_pod_resources_endpoint_requests_get")
            .Help("[ALPHA] Number of requests to the PodResource Get endpoint. Broken down by "
                  "server api version.")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_pod_resources_endpoint_errors_list")
            .Help("[ALPHA] Number of requests to the PodResource List endpoint which returned "
                  "error. Broken down by server api version.")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_pod_resources_endpoint_errors_get_allocatable")
            .Help("[ALPHA] Number of requests to the PodResource GetAllocatableResources "
                  "endpoint which returned error. Broken down by server api version.")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_pod_resources_endpoint_errors_get")
            .Help("[ALPHA] Number of requests to the PodResource Get endpoint which returned "
                  "error. Broken down by server api version.")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_cpu_manager_pinning_requests_total")
            .Help("[ALPHA] The number of cpu core allocations which required pinning.")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_cpu_manager_pinning_errors_total")
            .Help("[ALPHA] The number of cpu core allocations which required pinning failed.")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_topology_manager_admission_requests_total")
            .Help("[ALPHA] The number of admission requests where resources have to be aligned.")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_topology_manager_admission_errors_total")
            .Help("[ALPHA] The number of admission request failures where resources could not "
                  "be aligned.")
            .Register(r),
        prometheus::BuildHistogram()
            .Name("kubelet_topology_manager_admission_duration_ms")
            .Help("[ALPHA] Duration in milliseconds to serve a pod admission request.")
            .Register(r),
        prometheus::BuildGauge()
            .Name("kubelet_graceful_shutdown_start_time_seconds")
            .Help("[ALPHA] Last graceful shutdown start time since unix epoch in seconds")
            .Register(r),
        // Upstream's help text of the end time repeats the start time's.
        prometheus::BuildGauge()
            .Name("kubelet_graceful_shutdown_end_time_seconds")
            .Help("[ALPHA] Last graceful shutdown start time since unix epoch in seconds")
            .Register(r),
        prometheus::BuildCounter()
            .Name("kubelet_credential_provider_plugin_errors")
            .Help("[ALPHA] Number of errors from credential provider plugin")
            .Register(r),
        prometheus::BuildHistogram()
            .Name("kubelet_credential_provider_plugin_duration")
            .Help("[ALPHA] Duration of execution in seconds for credential provider plugin")
            .Register(r),
    };
  }();
  return *m;
}

ProberMetrics& Prober() {
  static auto* m = [] {
    auto& r = ProbesRegistry();
    return new ProberMetrics{
        prometheus::BuildCounter()
            .Name("prober_probe_total")
            .Help("[ALPHA] Cumulative number of a liveness, readiness or startup probe for a "
                  "container by result.")
            .Register(r),
        prometheus::BuildHistogram()
            .Name("prober_probe_duration_seconds")
            .Help("[ALPHA] Duration in seconds for a probe response.")
            .Register(r),
    };
  }();
  return *m;
}

void Init(const std::string& node_name, const std::string& git_version,
          const std::string& git_commit) {
  Kubelet().node_name.Add({{"node", node_name}}).Set(1);
  // Unlabelled counters are shown from the start, as upstream registers them.
  Kubelet().cpu_manager_pinning_requests.Add({});
  Kubelet().cpu_manager_pinning_errors.Add({});
  Kubelet().topology_manager_admission_requests.Add({});
  Kubelet().topology_manager_admission_errors.Add({});
  auto& info = prometheus::BuildGauge()
                   .Name("kubernetes_build_info")
                   .Help(
                       "[ALPHA] A metric with a constant '1' value labeled by major, minor, git "
                       "version, git commit, git tree state, build date, Go version, and "
                       "compiler from which Kubernetes was built, and platform on which it is "
                       "running.")
                   .Register(KubeletRegistry());
  std::string major = "1", minor = "28";
  info.Add({{"major", major},
            {"minor", minor},
            {"git_version", git_version},
            {"git_commit", git_commit},
            {"git_tree_state", "clean"},
            {"build_date", ""},
            {"go_version", ""},
            {"compiler", "gc"},
            {"platform", "linux/amd64"}})
      .Set(1);
}

void ObservePodStart(double seconds) {
  static const auto buckets = prometheus::Histogram::BucketBoundaries{
      0.5, 1,   2,   3,   4,   5,   6,   8,   10,   20,   30,   45,  60,
      120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600};
  Kubelet().pod_start_duration.Add({}, buckets).Observe(seconds);
}

void ObservePodWorker(const std::string& operation_type, double seconds) {
  Kubelet()
      .pod_worker_duration.Add({{"operation_type", operation_type}}, DefBuckets())
      .Observe(seconds);
}

void ObservePodWorkerStart(double seconds) {
  Kubelet().pod_worker_start_duration.Add({}, DefBuckets()).Observe(seconds);
}

void ObservePlegEventToPodWorker(double seconds) {
  // 1 ms .. 8 s: the figure is a few milliseconds when the worker is free.
  static const auto buckets = ExponentialBuckets(0.001, 2, 14);
  Kubelet().pleg_event_to_pod_worker.Add({}, buckets).Observe(seconds);
}

void ObserveRelist(double duration_seconds, double interval_seconds) {
  Kubelet().pleg_relist_duration.Add({}, DefBuckets()).Observe(duration_seconds);
  // Exposed from the first relist on (with no sample yet), as upstream's unlabelled histogram.
  auto& interval = Kubelet().pleg_relist_interval.Add({}, DefBuckets());
  if (interval_seconds >= 0) interval.Observe(interval_seconds);
}

void ObserveRuntimeOperation(const std::string& operation_type, double seconds, bool error) {
  static const auto buckets = ExponentialBuckets(.005, 2.5, 14);
  auto& k = Kubelet();
  k.runtime_operations.Add({{"operation_type", operation_type}}).Increment();
  k.runtime_operations_duration.Add({{"operation_type", operation_type}}, buckets).Observe(seconds);
  if (error) k.runtime_operations_errors.Add({{"operation_type", operation_type}}).Increment();
}

namespace {
const prometheus::Histogram::BucketBoundaries& StorageBuckets() {
  static const auto* b = new prometheus::Histogram::BucketBoundaries{.1, .25, .5, 1,   2.5, 5,  10,
                                                                     15, 25,  50, 120, 300, 600};
  return *b;
}
}  // namespace

void ObserveStorageOperation(const std::string& volume_plugin, const std::string& operation_name,
                             bool success, double seconds) {
  Kubelet()
      .storage_operation_duration
      .Add({{"volume_plugin", volume_plugin},
            {"operation_name", operation_name},
            {"status", success ? "success" : "fail-unknown"},
            {"migrated", "false"}},
           StorageBuckets())
      .Observe(seconds);
}

void ObserveCsiOperation(const std::string& driver_name, const std::string& method_name,
                         const std::string& grpc_status_code, double seconds) {
  Kubelet()
      .csi_operations
      .Add({{"driver_name", driver_name},
            {"method_name", method_name},
            {"grpc_status_code", grpc_status_code},
            {"migrated", "false"}},
           StorageBuckets())
      .Observe(seconds);
}

void ObserveDevicePluginAllocation(const std::string& resource_name, double seconds) {
  static const auto buckets = DefBuckets();
  Kubelet()
      .device_plugin_alloc_duration.Add({{"resource_name", resource_name}}, buckets)
      .Observe(seconds);
}

void ObserveTopologyManagerAdmission(double milliseconds) {
  static const auto buckets = ExponentialBuckets(.05, 2, 15);
  Kubelet().topology_manager_admission_duration.Add({}, buckets).Observe(milliseconds);
}

void ObserveCredentialProviderPlugin(const std::string& plugin_name, double seconds, bool error) {
  auto& k = Kubelet();
  k.credential_provider_plugin_duration.Add({{"plugin_name", plugin_name}}, DefBuckets())
      .Observe(seconds);
  if (error) k.credential_provider_plugin_errors.Add({{"plugin_name", plugin_name}}).Increment();
}

void ObserveProbe(const std::string& probe_type, const std::string& result,
                  const std::string& container, const std::string& pod,
                  const std::string& namespace_, const std::string& pod_uid, double seconds) {
  static const auto buckets = ExponentialBuckets(.001, 2, 16);
  auto& p = Prober();
  p.probe_total
      .Add({{"probe_type", probe_type},
            {"result", result},
            {"container", container},
            {"pod", pod},
            {"namespace", namespace_},
            {"pod_uid", pod_uid}})
      .Increment();
  if (result == "successful") {
    p.probe_duration
        .Add({{"probe_type", probe_type},
              {"container", container},
              {"pod", pod},
              {"namespace", namespace_}},
             buckets)
        .Observe(seconds);
  }
}

}  // namespace kubelet::metrics
