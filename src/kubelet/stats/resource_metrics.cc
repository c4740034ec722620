#include "kubelet/stats/resource_metrics.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "common/log.h"
#include "metrics/metrics.h"

namespace kubelet::stats {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<std::pair<std::string, std::string>>;

MetricFamily Family(const std::string& name, const std::string& help, MetricType type) {
  MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

void Add(MetricFamily& f, const Labels& labels, double value, absl::Time ts) {
  ClientMetric m;
  for (const auto& [k, v] : labels) m.label.push_back({k, v});
  if (f.type == MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  if (ts != absl::InfinitePast()) m.timestamp_ms = absl::ToUnixMillis(ts);
  f.metric.push_back(std::move(m));
}

double Seconds(uint64_t nanos) { return static_cast<double>(nanos) / 1e9; }

std::vector<MetricFamily> NonEmpty(std::vector<MetricFamily> in) {
  std::vector<MetricFamily> out;
  for (MetricFamily& f : in) {
    if (!f.metric.empty()) out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::vector<MetricFamily> ResourceMetricFamilies(const absl::StatusOr<Summary>& s) {
  MetricFamily node_cpu = Family(
      "node_cpu_usage_seconds_total",
      "[STABLE] Cumulative cpu time consumed by the node in core-seconds", MetricType::Counter);
  MetricFamily node_mem =
      Family("node_memory_working_set_bytes", "[STABLE] Current working set of the node in bytes",
             MetricType::Gauge);
  MetricFamily start =
      Family("container_start_time_seconds",
             "[STABLE] Start time of the container since unix epoch in seconds", MetricType::Gauge);
  MetricFamily ctr_cpu = Family("container_cpu_usage_seconds_total",
                                "[STABLE] Cumulative cpu time consumed by the container in "
                                "core-seconds",
                                MetricType::Counter);
  MetricFamily ctr_mem =
      Family("container_memory_working_set_bytes",
             "[STABLE] Current working set of the container in bytes", MetricType::Gauge);
  MetricFamily pod_cpu = Family("pod_cpu_usage_seconds_total",
                                "[STABLE] Cumulative cpu time consumed by the pod in core-seconds",
                                MetricType::Counter);
  MetricFamily pod_mem =
      Family("pod_memory_working_set_bytes", "[STABLE] Current working set of the pod in bytes",
             MetricType::Gauge);
  MetricFamily scrape = Family("scrape_error",
                               "[ALPHA] 1 if there was an error while getting container metrics, "
                               "0 otherwise",
                               MetricType::Gauge);
  if (!s.ok()) {
    KLOG_ERROR(s.status(), "Error getting summary for resourceMetric prometheus endpoint");
    Add(scrape, {}, 1, absl::InfinitePast());
    return {std::move(scrape)};
  }
  const NodeStats& n = s->node;
  if (n.cpu && n.cpu->usage_core_nano_seconds) {
    Add(node_cpu, {}, Seconds(*n.cpu->usage_core_nano_seconds), n.cpu->time);
  }
  if (n.memory && n.memory->working_set_bytes) {
    Add(node_mem, {}, static_cast<double>(*n.memory->working_set_bytes), n.memory->time);
  }
  for (const PodStats& p : s->pods) {
    for (const ContainerStats& c : p.containers) {
      const Labels labels = {
          {"container", c.name}, {"namespace", p.pod_ref.namespace_}, {"pod", p.pod_ref.name}};
      if (c.start_time != absl::InfinitePast() && absl::ToUnixSeconds(c.start_time) > 0) {
        Add(start, labels, absl::ToDoubleSeconds(c.start_time - absl::UnixEpoch()),
            absl::InfinitePast());
      }
      if (c.cpu && c.cpu->usage_core_nano_seconds) {
        Add(ctr_cpu, labels, Seconds(*c.cpu->usage_core_nano_seconds), c.cpu->time);
      }
      if (c.memory && c.memory->working_set_bytes) {
        Add(ctr_mem, labels, static_cast<double>(*c.memory->working_set_bytes), c.memory->time);
      }
    }
    const Labels labels = {{"namespace", p.pod_ref.namespace_}, {"pod", p.pod_ref.name}};
    if (p.cpu && p.cpu->usage_core_nano_seconds) {
      Add(pod_cpu, labels, Seconds(*p.cpu->usage_core_nano_seconds), p.cpu->time);
    }
    if (p.memory && p.memory->working_set_bytes) {
      Add(pod_mem, labels, static_cast<double>(*p.memory->working_set_bytes), p.memory->time);
    }
  }
  Add(scrape, {}, 0, absl::InfinitePast());
  std::vector<MetricFamily> out;
  for (MetricFamily* f :
       {&ctr_cpu, &ctr_mem, &start, &node_cpu, &node_mem, &pod_cpu, &pod_mem, &scrape}) {
    out.push_back(std::move(*f));
  }
  return NonEmpty(std::move(out));
}

std::vector<MetricFamily> CadvisorMetricFamilies(const CadvisorSnapshot& snap) {
  const Summary& s = snap.summary;
  const absl::Time now = snap.time;
  using MT = MetricType;
  MetricFamily cpu = Family("container_cpu_usage_seconds_total",
                            "Cumulative cpu time consumed in seconds.", MT::Counter);
  MetricFamily cpu_user = Family("container_cpu_user_seconds_total",
                                 "Cumulative user cpu time consumed in seconds.", MT::Counter);
  MetricFamily cpu_system = Family("container_cpu_system_seconds_total",
                                   "Cumulative system cpu time consumed in seconds.", MT::Counter);
  MetricFamily cfs_periods = Family("container_cpu_cfs_periods_total",
                                    "Number of elapsed enforcement period intervals.", MT::Counter);
  MetricFamily cfs_throttled = Family("container_cpu_cfs_throttled_periods_total",
                                      "Number of throttled period intervals.", MT::Counter);
  MetricFamily cfs_throttled_s =
      Family("container_cpu_cfs_throttled_seconds_total",
             "Total time duration the container has been throttled.", MT::Counter);
  MetricFamily ws =
      Family("container_memory_working_set_bytes", "Current working set in bytes.", MT::Gauge);
  MetricFamily usage = Family("container_memory_usage_bytes",
                              "Current memory usage in bytes, including all memory regardless of "
                              "when it was accessed",
                              MT::Gauge);
  MetricFamily rss = Family("container_memory_rss", "Size of RSS in bytes.", MT::Gauge);
  MetricFamily cache =
      Family("container_memory_cache", "Number of bytes of page cache memory.", MT::Gauge);
  MetricFamily swap = Family("container_memory_swap", "Container swap usage in bytes.", MT::Gauge);
  MetricFamily failcnt =
      Family("container_memory_failcnt", "Number of memory usage hits limits", MT::Counter);
  MetricFamily max_usage = Family("container_memory_max_usage_bytes",
                                  "Maximum memory usage recorded in bytes", MT::Gauge);
  MetricFamily oom =
      Family("container_oom_events_total",
             "Count of out of memory events observed for the container", MT::Counter);
  MetricFamily start =
      Family("container_start_time_seconds",
             "Start time of the container since unix epoch in seconds.", MT::Gauge);
  MetricFamily last_seen =
      Family("container_last_seen", "Last time a container was seen by the exporter", MT::Gauge);
  MetricFamily spec_period =
      Family("container_spec_cpu_period", "CPU period of the container.", MT::Gauge);
  MetricFamily spec_quota =
      Family("container_spec_cpu_quota", "CPU quota of the container.", MT::Gauge);
  MetricFamily spec_shares =
      Family("container_spec_cpu_shares", "CPU share of the container.", MT::Gauge);
  MetricFamily spec_memory =
      Family("container_spec_memory_limit_bytes", "Memory limit for the container.", MT::Gauge);
  MetricFamily fs_usage = Family("container_fs_usage_bytes",
                                 "Number of bytes that are consumed by the container on this "
                                 "filesystem.",
                                 MT::Gauge);
  MetricFamily fs_limit = Family("container_fs_limit_bytes",
                                 "Number of bytes that can be consumed by the container on this "
                                 "filesystem.",
                                 MT::Gauge);
  MetricFamily rx = Family("container_network_receive_bytes_total",
                           "Cumulative count of bytes received", MT::Counter);
  MetricFamily tx = Family("container_network_transmit_bytes_total",
                           "Cumulative count of bytes transmitted", MT::Counter);
  MetricFamily rx_err =
      Family("container_network_receive_errors_total",
             "Cumulative count of errors encountered while receiving", MT::Counter);
  MetricFamily tx_err =
      Family("container_network_transmit_errors_total",
             "Cumulative count of errors encountered while transmitting", MT::Counter);
  MetricFamily machine_cores =
      Family("machine_cpu_cores", "Number of logical CPU cores.", MT::Gauge);
  MetricFamily machine_memory =
      Family("machine_memory_bytes", "Amount of memory installed on the machine.", MT::Gauge);

  // A label list with `extra` inserted where it sorts among cAdvisor's base labels.
  auto with = [](Labels l, const std::string& key, const std::string& value) {
    auto it = l.begin();
    while (it != l.end() && it->first < key) ++it;
    l.insert(it, {key, value});
    return l;
  };
  // One file system a cAdvisor "container" uses.
  struct Fs {
    std::string device;
    const FsStats* stats;
  };

  // One cAdvisor "container" (a cgroup): labels in cAdvisor's (sorted) order.
  auto emit = [&](const Labels& base, const std::string& cgroup, const std::optional<CPUStats>& c,
                  const std::optional<MemoryStats>& m, absl::Time started,
                  const std::optional<NetworkStats>& net, const std::vector<Fs>& fs) {
    Add(last_seen, base, static_cast<double>(absl::ToUnixSeconds(now)), now);
    if (c && c->usage_core_nano_seconds) {
      Add(cpu, with(base, "cpu", "total"), Seconds(*c->usage_core_nano_seconds), c->time);
    }
    if (m) {
      if (m->working_set_bytes) Add(ws, base, static_cast<double>(*m->working_set_bytes), m->time);
      if (m->usage_bytes) Add(usage, base, static_cast<double>(*m->usage_bytes), m->time);
      if (m->rss_bytes) Add(rss, base, static_cast<double>(*m->rss_bytes), m->time);
    }
    if (started != absl::InfinitePast() && absl::ToUnixSeconds(started) > 0) {
      Add(start, base, absl::ToDoubleSeconds(started - absl::UnixEpoch()), absl::InfinitePast());
    }
    if (net) {
      for (const InterfaceStats& i : net->interfaces) {
        const Labels l = with(base, "interface", i.name);
        if (i.rx_bytes) Add(rx, l, static_cast<double>(*i.rx_bytes), net->time);
        if (i.tx_bytes) Add(tx, l, static_cast<double>(*i.tx_bytes), net->time);
        if (i.rx_errors) Add(rx_err, l, static_cast<double>(*i.rx_errors), net->time);
        if (i.tx_errors) Add(tx_err, l, static_cast<double>(*i.tx_errors), net->time);
      }
    }
    for (const Fs& f : fs) {
      const Labels l = with(base, "device", f.device);
      if (f.stats->used_bytes) {
        Add(fs_usage, l, static_cast<double>(*f.stats->used_bytes), f.stats->time);
      }
      if (f.stats->capacity_bytes) {
        Add(fs_limit, l, static_cast<double>(*f.stats->capacity_bytes), f.stats->time);
      }
    }
    auto it = snap.cgroups.find(cgroup);
    if (it == snap.cgroups.end()) return;
    const CgroupDetails& d = it->second;
    // `divisor` converts nanoseconds to seconds.
    auto put = [&](MetricFamily& f, const std::optional<uint64_t>& v, double divisor = 1) {
      if (v) Add(f, base, static_cast<double>(*v) / divisor, now);
    };
    put(cpu_user, d.cpu_user_nanos, 1e9);
    put(cpu_system, d.cpu_system_nanos, 1e9);
    // cAdvisor reports CFS figures only for cgroups with a quota.
    if (d.cpu_quota_us != 0) {
      put(cfs_periods, d.cfs_periods);
      put(cfs_throttled, d.cfs_throttled_periods);
      put(cfs_throttled_s, d.cfs_throttled_nanos, 1e9);
    }
    put(cache, d.memory_cache_bytes);
    put(swap, d.memory_swap_bytes);
    put(failcnt, d.memory_failcnt);
    put(max_usage, d.memory_max_usage_bytes);
    put(oom, d.oom_kills);
    // Spec figures carry no timestamp.
    if (d.cpu_period_us) {
      Add(spec_period, base, static_cast<double>(*d.cpu_period_us), absl::InfinitePast());
    }
    if (d.cpu_quota_us != 0) {
      Add(spec_quota, base, static_cast<double>(d.cpu_quota_us), absl::InfinitePast());
    }
    if (d.cpu_shares) {
      Add(spec_shares, base, static_cast<double>(*d.cpu_shares), absl::InfinitePast());
    }
    if (d.memory_limit_bytes) {
      // A limit beyond 2^62 is "unlimited" (the kernel rounds the maximum down): 0.
      const uint64_t v = *d.memory_limit_bytes > (uint64_t{1} << 62) ? 0 : *d.memory_limit_bytes;
      Add(spec_memory, base, static_cast<double>(v), absl::InfinitePast());
    }
  };
  auto labels = [](const std::string& container, const std::string& id, const std::string& image,
                   const std::string& name, const std::string& ns, const std::string& pod) {
    return Labels{{"container", container}, {"id", id},        {"image", image},
                  {"name", name},           {"namespace", ns}, {"pod", pod}};
  };
  const NodeStats& n = s.node;
  std::vector<Fs> node_fs;
  if (n.fs) node_fs.push_back({snap.root_fs_device, &*n.fs});
  if (n.image_fs && (!n.fs || snap.image_fs_device != snap.root_fs_device)) {
    node_fs.push_back({snap.image_fs_device, &*n.image_fs});
  }
  emit(labels("", "/", "", "", "", ""), "/", n.cpu, n.memory, n.start_time, n.network, node_fs);
  for (const ContainerStats& c : n.system_containers) {
    emit(labels("", c.cgroup, "", "", "", ""), c.cgroup, c.cpu, c.memory, c.start_time,
         std::nullopt, {});
  }
  for (const PodStats& p : s.pods) {
    emit(labels("", p.cgroup, "", "", p.pod_ref.namespace_, p.pod_ref.name), p.cgroup, p.cpu,
         p.memory, p.start_time, p.network, {});
    for (const ContainerStats& c : p.containers) {
      const std::string id = c.cgroup.empty() ? "/" + c.id : c.cgroup;
      std::vector<Fs> fs;
      if (c.rootfs) fs.push_back({snap.image_fs_device, &*c.rootfs});
      emit(labels(c.name, id, c.image, c.id, p.pod_ref.namespace_, p.pod_ref.name), c.cgroup, c.cpu,
           c.memory, c.start_time, std::nullopt, fs);
    }
  }
  // Machine figures carry cAdvisor's machine labels, no container labels.
  const Labels machine = {{"boot_id", snap.machine.boot_id},
                          {"machine_id", snap.machine.machine_id},
                          {"system_uuid", snap.machine.system_uuid}};
  if (snap.machine.num_cores > 0) {
    Add(machine_cores, machine, snap.machine.num_cores, absl::InfinitePast());
  }
  if (snap.machine.memory_capacity_bytes > 0) {
    Add(machine_memory, machine, static_cast<double>(snap.machine.memory_capacity_bytes),
        absl::InfinitePast());
  }
  std::vector<MetricFamily> out;
  for (MetricFamily* f : {&cpu,
                          &cpu_user,
                          &cpu_system,
                          &cfs_periods,
                          &cfs_throttled,
                          &cfs_throttled_s,
                          &ws,
                          &usage,
                          &rss,
                          &cache,
                          &swap,
                          &failcnt,
                          &max_usage,
                          &oom,
                          &start,
                          &last_seen,
                          &spec_period,
                          &spec_quota,
                          &spec_shares,
                          &spec_memory,
                          &fs_usage,
                          &fs_limit,
                          &rx,
                          &tx,
                          &rx_err,
                          &tx_err,
                          &machine_cores,
                          &machine_memory}) {
    out.push_back(std::move(*f));
  }
  // Go's client renders families sorted by name.
  std::sort(out.begin(), out.end(),
            [](const MetricFamily& a, const MetricFamily& b) { return a.name < b.name; });
  return NonEmpty(std::move(out));
}

std::vector<MetricFamily> VolumeStatsMetricFamilies(const std::vector<PodStats>& pods) {
  struct Gauge {
    const char* name;
    const char* help;
    std::optional<uint64_t> FsStats::*field;
  };
  static const Gauge kGauges[] = {
      {"kubelet_volume_stats_available_bytes", "[ALPHA] Number of available bytes in the volume",
       &FsStats::available_bytes},
      {"kubelet_volume_stats_capacity_bytes", "[ALPHA] Capacity in bytes of the volume",
       &FsStats::capacity_bytes},
      {"kubelet_volume_stats_inodes", "[ALPHA] Maximum number of inodes in the volume",
       &FsStats::inodes},
      {"kubelet_volume_stats_inodes_free", "[ALPHA] Number of free inodes in the volume",
       &FsStats::inodes_free},
      {"kubelet_volume_stats_inodes_used", "[ALPHA] Number of used inodes in the volume",
       &FsStats::inodes_used},
      {"kubelet_volume_stats_used_bytes", "[ALPHA] Number of used bytes in the volume",
       &FsStats::used_bytes},
  };
  std::vector<MetricFamily> out;
  for (const Gauge& g : kGauges) out.push_back(Family(g.name, g.help, MetricType::Gauge));
  MetricFamily abnormal = Family("kubelet_volume_stats_health_status_abnormal",
                                 "[ALPHA] Abnormal volume health status. The count is either 1 or "
                                 "0. 1 indicates the volume is unhealthy, 0 indicates volume is "
                                 "healthy",
                                 MetricType::Gauge);
  std::set<std::string> seen;
  for (const PodStats& p : pods) {
    for (const VolumeStats& v : p.volumes) {
      if (!v.pvc_ref) continue;
      if (!seen.insert(v.pvc_ref->namespace_ + "/" + v.pvc_ref->name).second) continue;
      const Labels labels = {{"namespace", v.pvc_ref->namespace_},
                             {"persistentvolumeclaim", v.pvc_ref->name}};
      for (size_t i = 0; i < std::size(kGauges); ++i) {
        const std::optional<uint64_t>& value = v.fs.*kGauges[i].field;
        if (value) Add(out[i], labels, static_cast<double>(*value), absl::InfinitePast());
      }
      if (v.abnormal) Add(abnormal, labels, *v.abnormal ? 1 : 0, absl::InfinitePast());
    }
  }
  out.push_back(std::move(abnormal));
  return NonEmpty(std::move(out));
}

void RegisterVolumeStatsCollector(std::function<std::vector<PodStats>()> pods) {
  metrics::AddCollector(metrics::KubeletRegistry(),
                        [pods = std::move(pods)] { return VolumeStatsMetricFamilies(pods()); });
}

void RegisterStatsCollectors(std::shared_ptr<CRIStatsProvider> provider) {
  metrics::AddCollector(metrics::ResourceRegistry(), [provider] {
    return ResourceMetricFamilies(provider->GetSummary(/*only_cpu_and_memory=*/true));
  });
  metrics::AddCollector(metrics::CadvisorRegistry(),
                        [provider]() -> std::vector<prometheus::MetricFamily> {
                          absl::StatusOr<CadvisorSnapshot> s = provider->GetCadvisorSnapshot();
                          if (!s.ok()) {
                            KLOG_ERROR(s.status(), "Error getting summary for cadvisor metrics");
                            return {};
                          }
                          return CadvisorMetricFamilies(*s);
                        });
}

}  // namespace kubelet::stats
