#include "kubelet/stats/resource_metrics.h"

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

std::vector<MetricFamily> CadvisorMetricFamilies(const Summary& s) {
  MetricFamily cpu = Family("container_cpu_usage_seconds_total",
                            "Cumulative cpu time consumed in seconds.", MetricType::Counter);
  MetricFamily ws = Family("container_memory_working_set_bytes", "Current working set in bytes.",
                           MetricType::Gauge);
  MetricFamily usage = Family("container_memory_usage_bytes",
                              "Current memory usage in bytes, including all memory regardless of "
                              "when it was accessed",
                              MetricType::Gauge);
  MetricFamily rss = Family("container_memory_rss", "Size of RSS in bytes.", MetricType::Gauge);
  MetricFamily start =
      Family("container_start_time_seconds",
             "Start time of the container since unix epoch in seconds.", MetricType::Gauge);
  MetricFamily rx = Family("container_network_receive_bytes_total",
                           "Cumulative count of bytes received", MetricType::Counter);
  MetricFamily tx = Family("container_network_transmit_bytes_total",
                           "Cumulative count of bytes transmitted", MetricType::Counter);
  MetricFamily rx_err =
      Family("container_network_receive_errors_total",
             "Cumulative count of errors encountered while receiving", MetricType::Counter);
  MetricFamily tx_err =
      Family("container_network_transmit_errors_total",
             "Cumulative count of errors encountered while transmitting", MetricType::Counter);

  // One cAdvisor "container" (a cgroup): labels in cAdvisor's order.
  auto emit = [&](const Labels& base, const std::optional<CPUStats>& c,
                  const std::optional<MemoryStats>& m, absl::Time started,
                  const std::optional<NetworkStats>& net) {
    if (c && c->usage_core_nano_seconds) {
      Labels l = base;
      l.insert(l.begin() + 1, {"cpu", "total"});
      Add(cpu, l, Seconds(*c->usage_core_nano_seconds), c->time);
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
        Labels l = base;
        l.insert(l.begin() + 3, {"interface", i.name});
        if (i.rx_bytes) Add(rx, l, static_cast<double>(*i.rx_bytes), net->time);
        if (i.tx_bytes) Add(tx, l, static_cast<double>(*i.tx_bytes), net->time);
        if (i.rx_errors) Add(rx_err, l, static_cast<double>(*i.rx_errors), net->time);
        if (i.tx_errors) Add(tx_err, l, static_cast<double>(*i.tx_errors), net->time);
      }
    }
  };
  auto labels = [](const std::string& container, const std::string& id, const std::string& image,
                   const std::string& name, const std::string& ns, const std::string& pod) {
    return Labels{{"container", container}, {"id", id},        {"image", image},
                  {"name", name},           {"namespace", ns}, {"pod", pod}};
  };
  const NodeStats& n = s.node;
  emit(labels("", "/", "", "", "", ""), n.cpu, n.memory, n.start_time, n.network);
  for (const ContainerStats& c : n.system_containers) {
    emit(labels("", c.cgroup, "", "", "", ""), c.cpu, c.memory, c.start_time, std::nullopt);
  }
  for (const PodStats& p : s.pods) {
    emit(labels("", p.cgroup, "", "", p.pod_ref.namespace_, p.pod_ref.name), p.cpu, p.memory,
         p.start_time, p.network);
    for (const ContainerStats& c : p.containers) {
      const std::string id = c.cgroup.empty() ? "/" + c.id : c.cgroup;
      emit(labels(c.name, id, c.image, c.id, p.pod_ref.namespace_, p.pod_ref.name), c.cpu, c.memory,
           c.start_time, std::nullopt);
    }
  }
  std::vector<MetricFamily> out;
  for (MetricFamily* f : {&cpu, &ws, &usage, &rss, &start, &rx, &tx, &rx_err, &tx_err}) {
    out.push_back(std::move(*f));
  }
  return NonEmpty(std::move(out));
}

void RegisterStatsCollectors(std::shared_ptr<CRIStatsProvider> provider) {
  metrics::AddCollector(metrics::ResourceRegistry(), [provider] {
    return ResourceMetricFamilies(provider->GetSummary(/*only_cpu_and_memory=*/true));
  });
  metrics::AddCollector(metrics::CadvisorRegistry(),
                        [provider]() -> std::vector<prometheus::MetricFamily> {
                          absl::StatusOr<Summary> s = provider->GetSummary(false);
                          if (!s.ok()) {
                            KLOG_ERROR(s.status(), "Error getting summary for cadvisor metrics");
                            return {};
                          }
                          return CadvisorMetricFamilies(*s);
                        });
}

}  // namespace kubelet::stats
