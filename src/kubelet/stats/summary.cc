#include "kubelet/stats/summary.h"

#include "nlohmann/json.hpp"

namespace kubelet::stats {
namespace {

using nlohmann::json;

json TimeJson(absl::Time t) {
  if (t == absl::InfinitePast()) return nullptr;
  return stats::FormatTime(t);
}

template <typename T>
void Put(json& j, const char* key, const std::optional<T>& v) {
  if (v.has_value()) j[key] = *v;
}

json CpuJson(const CPUStats& s) {
  json j = json::object();
  j["time"] = TimeJson(s.time);
  Put(j, "usageNanoCores", s.usage_nano_cores);
  Put(j, "usageCoreNanoSeconds", s.usage_core_nano_seconds);
  return j;
}

json MemoryJson(const MemoryStats& s) {
  json j = json::object();
  j["time"] = TimeJson(s.time);
  Put(j, "availableBytes", s.available_bytes);
  Put(j, "usageBytes", s.usage_bytes);
  Put(j, "workingSetBytes", s.working_set_bytes);
  Put(j, "rssBytes", s.rss_bytes);
  Put(j, "pageFaults", s.page_faults);
  Put(j, "majorPageFaults", s.major_page_faults);
  return j;
}

void PutInterface(json& j, const InterfaceStats& s) {
  j["name"] = s.name;
  Put(j, "rxBytes", s.rx_bytes);
  Put(j, "rxErrors", s.rx_errors);
  Put(j, "txBytes", s.tx_bytes);
  Put(j, "txErrors", s.tx_errors);
}

json NetworkJson(const NetworkStats& s) {
  json j = json::object();
  j["time"] = TimeJson(s.time);
  PutInterface(j, s.default_interface);
  if (!s.interfaces.empty()) {
    json list = json::array();
    for (const InterfaceStats& i : s.interfaces) {
      json e = json::object();
      PutInterface(e, i);
      list.push_back(std::move(e));
    }
    j["interfaces"] = std::move(list);
  }
  return j;
}

json FsJson(const FsStats& s) {
  json j = json::object();
  j["time"] = TimeJson(s.time);
  Put(j, "availableBytes", s.available_bytes);
  Put(j, "capacityBytes", s.capacity_bytes);
  Put(j, "usedBytes", s.used_bytes);
  Put(j, "inodesFree", s.inodes_free);
  Put(j, "inodes", s.inodes);
  Put(j, "inodesUsed", s.inodes_used);
  return j;
}

json ContainerJson(const ContainerStats& c) {
  json j = json::object();
  j["name"] = c.name;
  j["startTime"] = TimeJson(c.start_time);
  if (c.cpu) j["cpu"] = CpuJson(*c.cpu);
  if (c.memory) j["memory"] = MemoryJson(*c.memory);
  if (c.rootfs) j["rootfs"] = FsJson(*c.rootfs);
  if (c.logs) j["logs"] = FsJson(*c.logs);
  return j;
}

json PodJson(const PodStats& p) {
  json j = json::object();
  j["podRef"] = {
      {"name", p.pod_ref.name}, {"namespace", p.pod_ref.namespace_}, {"uid", p.pod_ref.uid}};
  j["startTime"] = TimeJson(p.start_time);
  json containers = json::array();
  for (const ContainerStats& c : p.containers) containers.push_back(ContainerJson(c));
  j["containers"] = std::move(containers);
  if (p.cpu) j["cpu"] = CpuJson(*p.cpu);
  if (p.memory) j["memory"] = MemoryJson(*p.memory);
  if (p.network) j["network"] = NetworkJson(*p.network);
  if (!p.volumes.empty()) {
    json vols = json::array();
    for (const VolumeStats& v : p.volumes) {
      json e = FsJson(v.fs);
      e["name"] = v.name;
      if (v.pvc_ref)
        e["pvcRef"] = {{"name", v.pvc_ref->name}, {"namespace", v.pvc_ref->namespace_}};
      if (v.abnormal) e["volumeHealthStats"] = {{"abnormal", *v.abnormal}};
      vols.push_back(std::move(e));
    }
    j["volume"] = std::move(vols);
  }
  if (p.ephemeral_storage) j["ephemeral-storage"] = FsJson(*p.ephemeral_storage);
  if (p.process_count) j["process_stats"] = {{"process_count", *p.process_count}};
  return j;
}

}  // namespace

std::string FormatTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%SZ", t, absl::UTCTimeZone());
}

std::string SummaryToJson(const Summary& summary) {
  const NodeStats& n = summary.node;
  json node = json::object();
  node["nodeName"] = n.node_name;
  if (!n.system_containers.empty()) {
    json sys = json::array();
    for (const ContainerStats& c : n.system_containers) sys.push_back(ContainerJson(c));
    node["systemContainers"] = std::move(sys);
  }
  node["startTime"] = TimeJson(n.start_time);
  if (n.cpu) node["cpu"] = CpuJson(*n.cpu);
  if (n.memory) node["memory"] = MemoryJson(*n.memory);
  if (n.network) node["network"] = NetworkJson(*n.network);
  if (n.fs) node["fs"] = FsJson(*n.fs);
  if (n.image_fs) node["runtime"] = {{"imageFs", FsJson(*n.image_fs)}};
  if (n.rlimit) {
    json r = json::object();
    r["time"] = TimeJson(n.rlimit->time);
    Put(r, "maxpid", n.rlimit->max_pid);
    Put(r, "curproc", n.rlimit->num_of_running_processes);
    node["rlimit"] = std::move(r);
  }
  json pods = json::array();
  for (const PodStats& p : summary.pods) pods.push_back(PodJson(p));
  json doc = json::object();
  doc["node"] = std::move(node);
  doc["pods"] = std::move(pods);
  // Names come from the runtime and /proc (interfaces, container labels) and may hold any bytes:
  // invalid UTF-8 is replaced with U+FFFD, as Go's encoding/json does, instead of the default
  // strict dump throwing.
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace kubelet::stats
