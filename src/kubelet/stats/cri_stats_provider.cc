#include "kubelet/stats/cri_stats_provider.h"

#include <dirent.h>

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace kubelet::stats {
namespace {

namespace v1 = runtime::v1;

// Volume plugin directories whose contents live on the node's root file system and count as
// the pod's ephemeral storage (emptyDir, configMap, secret, downwardAPI, projected).
const std::set<std::string>& EphemeralVolumePlugins() {
  static const auto* plugins = new std::set<std::string>{
      "kubernetes.io~empty-dir", "kubernetes.io~configmap", "kubernetes.io~secret",
      "kubernetes.io~downward-api", "kubernetes.io~projected"};
  return *plugins;
}

constexpr absl::Duration kSandboxStatsRetry = absl::Minutes(5);

absl::Time FromNanosOr(int64_t ns, absl::Time fallback) {
  return ns > 0 ? absl::FromUnixNanos(ns) : fallback;
}

std::optional<CPUStats> CpuFromCri(const v1::CpuUsage& u, absl::Time now) {
  if (!u.has_usage_core_nano_seconds() && !u.has_usage_nano_cores()) return std::nullopt;
  CPUStats s;
  s.time = FromNanosOr(u.timestamp(), now);
  if (u.has_usage_core_nano_seconds())
    s.usage_core_nano_seconds = u.usage_core_nano_seconds().value();
  if (u.has_usage_nano_cores()) s.usage_nano_cores = u.usage_nano_cores().value();
  return s;
}

std::optional<MemoryStats> MemoryFromCri(const v1::MemoryUsage& u, absl::Time now) {
  if (!u.has_working_set_bytes() && !u.has_usage_bytes()) return std::nullopt;
  MemoryStats s;
  s.time = FromNanosOr(u.timestamp(), now);
  if (u.has_available_bytes()) s.available_bytes = u.available_bytes().value();
  if (u.has_usage_bytes()) s.usage_bytes = u.usage_bytes().value();
  if (u.has_working_set_bytes()) s.working_set_bytes = u.working_set_bytes().value();
  if (u.has_rss_bytes()) s.rss_bytes = u.rss_bytes().value();
  if (u.has_page_faults()) s.page_faults = u.page_faults().value();
  if (u.has_major_page_faults()) s.major_page_faults = u.major_page_faults().value();
  return s;
}

// A cumulative cpu time read at `at` (cgroup files, /proc/stat, a sum of containers').
CPUStats CpuFromNanos(uint64_t usage_core_nano_seconds, absl::Time at) {
  CPUStats s;
  s.time = at;
  s.usage_core_nano_seconds = usage_core_nano_seconds;
  return s;
}

MemoryStats MemoryFromReading(const MemoryReading& m, absl::Time now) {
  MemoryStats s;
  s.time = now;
  s.usage_bytes = m.usage_bytes;
  s.working_set_bytes = m.working_set_bytes;
  s.rss_bytes = m.rss_bytes;
  s.page_faults = m.page_faults;
  s.major_page_faults = m.major_page_faults;
  // As cAdvisor: with a memory limit, what is left under it.
  if (m.limit_bytes) {
    s.available_bytes =
        *m.limit_bytes > m.working_set_bytes ? *m.limit_bytes - m.working_set_bytes : 0;
  }
  return s;
}

InterfaceStats InterfaceFromCri(const v1::NetworkInterfaceUsage& u) {
  InterfaceStats s;
  s.name = u.name();
  if (u.has_rx_bytes()) s.rx_bytes = u.rx_bytes().value();
  if (u.has_rx_errors()) s.rx_errors = u.rx_errors().value();
  if (u.has_tx_bytes()) s.tx_bytes = u.tx_bytes().value();
  if (u.has_tx_errors()) s.tx_errors = u.tx_errors().value();
  return s;
}

// Network figures from a list of interfaces: the one named `preferred` (else the first) is the
// default.
std::optional<NetworkStats> NetworkFromInterfaces(std::vector<InterfaceStats> ifaces,
                                                  const std::string& preferred, absl::Time now) {
  if (ifaces.empty()) return std::nullopt;
  NetworkStats n;
  n.time = now;
  n.default_interface = ifaces.front();
  for (const InterfaceStats& i : ifaces) {
    if (!preferred.empty() && i.name == preferred) n.default_interface = i;
  }
  n.interfaces = std::move(ifaces);
  return n;
}

FsStats FsFromInfo(const FsInfo& fs, absl::Time now) {
  FsStats s;
  s.time = now;
  s.capacity_bytes = fs.capacity_bytes;
  s.available_bytes = fs.available_bytes;
  s.used_bytes = fs.used_bytes;
  s.inodes = fs.inodes;
  s.inodes_free = fs.inodes_free;
  s.inodes_used = fs.inodes >= fs.inodes_free ? fs.inodes - fs.inodes_free : 0;
  return s;
}

// A figure for a directory tree: its usage, with the capacity of the file system holding it.
FsStats FsForTree(const DiskUsage& du, const std::optional<FsInfo>& fs, absl::Time now) {
  FsStats s;
  s.time = now;
  s.used_bytes = du.bytes;
  s.inodes_used = du.inodes;
  if (fs) {
    s.capacity_bytes = fs->capacity_bytes;
    s.available_bytes = fs->available_bytes;
    s.inodes = fs->inodes;
    s.inodes_free = fs->inodes_free;
  }
  return s;
}

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> out;
  DIR* d = opendir(path.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// The newest sandbox of each pod, a ready one first.
std::map<std::string, const v1::PodSandbox*> NewestSandboxByUid(
    const std::vector<v1::PodSandbox>& sandboxes) {
  std::map<std::string, const v1::PodSandbox*> sandbox_by_uid;
  for (const v1::PodSandbox& s : sandboxes) {
    const v1::PodSandbox*& best = sandbox_by_uid[s.metadata().uid()];
    if (best == nullptr) {
      best = &s;
      continue;
    }
    const bool ready = s.state() == v1::SANDBOX_READY;
    const bool best_ready = best->state() == v1::SANDBOX_READY;
    if ((ready && !best_ready) || (ready == best_ready && s.created_at() > best->created_at())) {
      best = &s;
    }
  }
  return sandbox_by_uid;
}

// Live containers by sandbox, the newest per name.
std::map<std::string, std::map<std::string, const v1::Container*>> LiveContainersBySandbox(
    const std::vector<v1::Container>& containers) {
  std::map<std::string, std::map<std::string, const v1::Container*>> containers_by_sandbox;
  for (const v1::Container& c : containers) {
    if (c.state() == v1::CONTAINER_EXITED || c.state() == v1::CONTAINER_UNKNOWN) continue;
    const v1::Container*& slot = containers_by_sandbox[c.pod_sandbox_id()][c.metadata().name()];
    if (slot == nullptr || c.created_at() > slot->created_at()) slot = &c;
  }
  return containers_by_sandbox;
}

}  // namespace

CRIStatsProvider::CRIStatsProvider(CRIStatsProviderOptions options)
    : options_(std::move(options)), host_(options_.proc_root, options_.cgroup_root) {}

absl::StatusOr<std::string> CRIStatsProvider::SummaryJson(bool only_cpu_and_memory) {
  absl::StatusOr<Summary> s = GetSummary(only_cpu_and_memory);
  if (!s.ok()) return s.status();
  return SummaryToJson(*s);
}

bool CRIStatsProvider::SandboxStatsDue(absl::Time now) {
  absl::MutexLock lock(&mu_);
  return now >= sandbox_stats_retry_at_;
}

void CRIStatsProvider::UpdateNanoCores(const std::string& key, CPUStats& cpu) {
  if (!cpu.usage_core_nano_seconds) return;
  const CpuSample cur{*cpu.usage_core_nano_seconds, absl::ToUnixNanos(cpu.time)};
  absl::MutexLock lock(&mu_);
  auto it = cpu_samples_.find(key);
  if (it == cpu_samples_.end()) {
    cpu_samples_.emplace(key, cur);
    return;
  }
  const CpuSample prev = it->second;
  if (cur.timestamp_ns <= prev.timestamp_ns) return;  // an older or the same sample
  if (!cpu.usage_nano_cores && cur.usage_core_nano_seconds >= prev.usage_core_nano_seconds) {
    const double used =
        static_cast<double>(cur.usage_core_nano_seconds - prev.usage_core_nano_seconds);
    const double elapsed = static_cast<double>(cur.timestamp_ns - prev.timestamp_ns);
    cpu.usage_nano_cores = static_cast<uint64_t>(used / elapsed * 1e9);
  }
  it->second = cur;
}

void CRIStatsProvider::PruneSamples(const std::vector<std::string>& seen) {
  const std::set<std::string> keep(seen.begin(), seen.end());
  absl::MutexLock lock(&mu_);
  for (auto it = cpu_samples_.begin(); it != cpu_samples_.end();) {
    const bool workload = it->first.rfind("pod/", 0) == 0 || it->first.rfind("ctr/", 0) == 0;
    if (workload && !keep.contains(it->first)) {
      it = cpu_samples_.erase(it);
    } else {
      ++it;
    }
  }
}

std::optional<DiskUsage> CRIStatsProvider::CachedDu(const std::string& path, absl::Time now) {
  {
    absl::MutexLock lock(&mu_);
    auto it = du_cache_.find(path);
    if (it != du_cache_.end() && now - it->second.measured < options_.du_cache_ttl) {
      if (!it->second.ok) return std::nullopt;
      return it->second.usage;
    }
  }
  // Measured outside the lock: a slow tree does not hold up other callers.
  absl::StatusOr<DiskUsage> du = MeasureDiskUsage(path);
  absl::MutexLock lock(&mu_);
  // Entries of paths not measured for a long time (pods gone) are dropped.
  for (auto it = du_cache_.begin(); it != du_cache_.end();) {
    if (now - it->second.measured > 10 * options_.du_cache_ttl) {
      it = du_cache_.erase(it);
    } else {
      ++it;
    }
  }
  DuEntry& e = du_cache_[path];
  e.measured = now;
  e.ok = du.ok();
  if (du.ok()) e.usage = *du;
  if (!du.ok()) return std::nullopt;
  return *du;
}

std::string CRIStatsProvider::PodCgroup(const std::string& uid) const {
  if (options_.pods_cgroup.empty() || uid.empty()) return "";
  const std::string& base = options_.pods_cgroup;
  std::vector<std::string> candidates;
  if (options_.systemd_cgroup_names) {
    std::string u = uid;
    std::replace(u.begin(), u.end(), '-', '_');
    candidates = {base + "/kubepods-pod" + u + ".slice",
                  base + "/kubepods-burstable.slice/kubepods-burstable-pod" + u + ".slice",
                  base + "/kubepods-besteffort.slice/kubepods-besteffort-pod" + u + ".slice"};
  } else {
    candidates = {base + "/pod" + uid, base + "/burstable/pod" + uid,
                  base + "/besteffort/pod" + uid};
  }
  for (const std::string& c : candidates) {
    if (host_.CgroupExists(c)) return c;
  }
  return "";
}

std::string CRIStatsProvider::ContainerCgroup(const std::string& pod_cgroup,
                                              const std::string& id) const {
  const std::string plain = pod_cgroup + "/" + id;
  for (const std::string& c :
       {plain, pod_cgroup + "/crio-" + id, pod_cgroup + "/cri-containerd-" + id + ".scope",
        pod_cgroup + "/crio-" + id + ".scope"}) {
    if (host_.CgroupExists(c)) return c;
  }
  return plain;
}

std::optional<ContainerStats> CRIStatsProvider::SystemContainer(const std::string& name,
                                                                const std::string& cgroup,
                                                                absl::Time now) {
  if (cgroup.empty() || !host_.CgroupExists(cgroup)) return std::nullopt;
  ContainerStats c;
  c.name = name;
  c.cgroup = cgroup;
  c.id = cgroup;
  if (auto created = host_.CgroupCreated(cgroup)) c.start_time = *created;
  if (auto cpu = host_.CgroupCpuNanos(cgroup)) {
    CPUStats s = CpuFromNanos(*cpu, now);
    UpdateNanoCores("sys/" + name, s);
    c.cpu = s;
  }
  // With a memory limit, availableBytes is what is left under it (the eviction manager's
  // allocatableMemory.available reads it off the "pods" container).
  if (auto mem = host_.CgroupMemory(cgroup)) c.memory = MemoryFromReading(*mem, now);
  return c;
}

void CRIStatsProvider::FillNode(bool only_cpu_and_memory, absl::Time now, NodeStats& node) {
  node.node_name = options_.node_name;
  if (auto boot = host_.BootTime()) node.start_time = *boot;
  if (auto cpu = host_.NodeCpuNanos()) {
    CPUStats s = CpuFromNanos(*cpu, now);
    UpdateNanoCores("node", s);
    node.cpu = s;
  }
  if (auto mem = host_.NodeMemory()) {
    MemoryStats s = MemoryFromReading(*mem, now);
    if (auto total = host_.MemTotalBytes()) {
      s.available_bytes = *total > mem->working_set_bytes ? *total - mem->working_set_bytes : 0;
    }
    node.memory = s;
  }
  std::string kubelet_cgroup = options_.kubelet_cgroup;
  if (kubelet_cgroup.empty()) kubelet_cgroup = host_.ProcessCgroup().value_or("");
  const std::pair<const char*, std::string> system[] = {{"kubelet", kubelet_cgroup},
                                                        {"runtime", options_.runtime_cgroup},
                                                        {"misc", options_.system_cgroup},
                                                        {"pods", options_.pods_cgroup}};
  for (const auto& [name, cgroup] : system) {
    if (auto c = SystemContainer(name, cgroup, now)) node.system_containers.push_back(*c);
  }
  if (only_cpu_and_memory) return;
  node.network = NetworkFromInterfaces(host_.NetDev(0), host_.DefaultInterface(), now);
  if (auto fs = options_.statfs(options_.root_dir); fs.ok()) {
    node.fs = FsFromInfo(*fs, now);
    node.fs->path = options_.root_dir;
  }
  if (auto image_fs = ImageFsStats(); image_fs.ok()) {
    node.image_fs = *image_fs;
  } else {
    KLOG_V(2, "Unable to get image filesystem stats", "err", image_fs.status());
  }
  RlimitStats r;
  r.time = now;
  r.max_pid = host_.PidMax();
  r.num_of_running_processes = host_.NumTasks();
  node.rlimit = r;
}

absl::StatusOr<FsStats> CRIStatsProvider::ImageFsStats() {
  absl::StatusOr<std::vector<v1::FilesystemUsage>> info = options_.images->ImageFsInfo();
  if (!info.ok()) return info.status();
  if (info->empty()) return absl::NotFoundError("ImageFsInfo: no image filesystem reported");
  const v1::FilesystemUsage& u = info->front();
  const absl::Time now = options_.clock->Now();
  FsStats s;
  s.time = FromNanosOr(u.timestamp(), now);
  if (u.has_used_bytes()) s.used_bytes = u.used_bytes().value();
  if (u.has_inodes_used()) s.inodes_used = u.inodes_used().value();
  s.path = u.fs_id().mountpoint();
  if (!u.fs_id().mountpoint().empty()) {
    if (auto fs = options_.statfs(u.fs_id().mountpoint()); fs.ok()) {
      s.capacity_bytes = fs->capacity_bytes;
      s.available_bytes = fs->available_bytes;
      s.inodes = fs->inodes;
      s.inodes_free = fs->inodes_free;
    }
  }
  return s;
}

absl::StatusOr<Summary> CRIStatsProvider::GetNodeSummary() {
  Summary summary;
  FillNode(/*only_cpu_and_memory=*/false, options_.clock->Now(), summary.node);
  return summary;
}

// A pod's or container's cpu and memory as its cgroup files gave them.
struct CRIStatsProvider::CgroupFigures {
  std::string cgroup;
  std::optional<uint64_t> cpu_nanos;
  std::optional<MemoryReading> memory;
  absl::Time read_at;  // when the files were read (the samples' time)
  bool complete() const { return cpu_nanos.has_value() && memory.has_value(); }
};

// What a pod's containers add up to: the sums its cpu and memory fall back on, and the
// writable layers' and logs' share of its ephemeral storage.
struct CRIStatsProvider::PodTotals {
  uint64_t sum_cpu = 0, sum_ws = 0, sum_usage = 0;
  bool have_cpu = false, have_mem = false;
  uint64_t ephemeral_used = 0, ephemeral_inodes = 0;
};

// What GetSummary's phases hand on to each other, grouped by the phase that fills it. Points into
// the runtime's listings GetSummary holds, and into itself (desired_by_uid): not copyable.
struct CRIStatsProvider::SummaryState {
  SummaryState() = default;
  SummaryState(const SummaryState&) = delete;
  SummaryState& operator=(const SummaryState&) = delete;

  // NewestSandboxByUid, LiveContainersBySandbox.
  std::map<std::string, const v1::PodSandbox*> sandbox_by_uid;
  std::map<std::string, std::map<std::string, const v1::Container*>> containers_by_sandbox;
  // ReadWorkloadCgroups: an entry for every pod of sandbox_by_uid, for its sandbox in
  // containers_by_sandbox, and for each of that sandbox's containers.
  std::map<std::string, CgroupFigures> pod_cgroups;        // by pod UID
  std::map<std::string, CgroupFigures> container_cgroups;  // by container ID
  bool containers_need_runtime = false, pods_need_runtime = false;
  // FetchContainerStats: this call's answer (`fresh`), else the last one, for the layers only.
  std::shared_ptr<const std::map<std::string, v1::ContainerStats>> runtime_stats;
  bool fresh = false;
  // FetchSandboxStats, by sandbox ID.
  std::map<std::string, v1::PodSandboxStats> sandbox_stats;
  // CollectDesiredPods.
  std::vector<api::Pod> desired;
  std::map<std::string, const api::Pod*> desired_by_uid;
  // StatPodFilesystems.
  std::optional<FsStats> image_fs;
  std::optional<FsInfo> logs_fs;
  std::optional<FsInfo> root_fs;
};

absl::StatusOr<Summary> CRIStatsProvider::GetSummary(bool only_cpu_and_memory) {
  const absl::Time now = options_.clock->Now();
  Summary summary;
  FillNode(only_cpu_and_memory, now, summary.node);

  absl::StatusOr<std::vector<v1::PodSandbox>> sandboxes = options_.runtime->ListPodSandbox(nullptr);
  if (!sandboxes.ok()) return sandboxes.status();
  absl::StatusOr<std::vector<v1::Container>> containers = options_.runtime->ListContainers(nullptr);
  if (!containers.ok()) return containers.status();

  SummaryState state;  // points into *sandboxes and *containers
  state.sandbox_by_uid = NewestSandboxByUid(*sandboxes);
  state.containers_by_sandbox = LiveContainersBySandbox(*containers);
  ReadWorkloadCgroups(state);
  FetchContainerStats(only_cpu_and_memory, now, state);
  FetchSandboxStats(now, state);
  CollectDesiredPods(state);
  StatPodFilesystems(only_cpu_and_memory, summary.node.image_fs, state);

  std::vector<std::string> seen_keys;
  for (const auto& [uid, sandbox] : state.sandbox_by_uid) {
    summary.pods.push_back(
        BuildPodStats(uid, *sandbox, state, only_cpu_and_memory, now, seen_keys));
  }
  PruneSamples(seen_keys);
  return summary;
}

// CPU and memory from the cgroups, as cAdvisor reads them: each pod's cgroup and each of its
// containers' (named as the runtime names them). The runtime is asked only for what the cgroups
// do not give: sets s.pods_need_runtime / s.containers_need_runtime when a pod's / container's
// figures are incomplete. Fills s.pod_cgroups and s.container_cgroups.
// A pod's or container's cgroup is named once for its whole life: the names found are kept
// (while they answer) instead of probing each candidate name every call.
void CRIStatsProvider::ReadWorkloadCgroups(SummaryState& s) {
  std::map<std::string, std::string> known_cgroups;
  {
    absl::MutexLock lock(&mu_);
    known_cgroups.swap(cgroup_names_);
  }
  std::map<std::string, std::string> found_cgroups;
  auto read = [&](const std::string& key, CgroupFigures& f, auto resolve) {
    auto try_read = [&](const std::string& cgroup) {
      f.cgroup = cgroup;
      if (cgroup.empty()) return false;
      f.read_at = options_.clock->Now();
      f.cpu_nanos = host_.CgroupCpuNanos(cgroup);
      f.memory = host_.CgroupMemory(cgroup);
      if (!f.cpu_nanos && !f.memory) return false;
      found_cgroups[key] = cgroup;
      return true;
    };
    auto known = known_cgroups.find(key);
    if (known != known_cgroups.end() && try_read(known->second)) return;
    try_read(resolve());  // new, or gone since: probe the candidate names
  };
  for (const auto& [uid, sandbox] : s.sandbox_by_uid) {
    CgroupFigures& pf = s.pod_cgroups[uid];
    read("pod/" + uid, pf, [&, &uid = uid] { return PodCgroup(uid); });
    if (!pf.complete()) s.pods_need_runtime = true;
    for (const auto& [name, c] : s.containers_by_sandbox[sandbox->id()]) {
      CgroupFigures& cf = s.container_cgroups[c->id()];
      if (!pf.cgroup.empty()) {
        read("ctr/" + c->id(), cf, [&, id = c->id()] { return ContainerCgroup(pf.cgroup, id); });
      }
      if (!cf.complete()) s.containers_need_runtime = true;
    }
  }
  {
    absl::MutexLock lock(&mu_);
    cgroup_names_ = std::move(found_cgroups);
  }
}

// The runtime's container stats: at once when a container's cgroup does not answer; else only
// for the writable layers (what only the runtime knows), at most once per du_cache_ttl, as the
// logs' and volumes' disk usage, unless a container is new since the last answer.
// Sets s.runtime_stats: this call's answer (s.fresh), else the last one, for the layers only.
void CRIStatsProvider::FetchContainerStats(bool only_cpu_and_memory, absl::Time now,
                                           SummaryState& s) {
  const bool layers_due = [&] {
    if (only_cpu_and_memory) return false;
    absl::MutexLock lock(&mu_);
    if (!container_stats_cache_ || now - container_stats_at_ >= options_.du_cache_ttl) return true;
    for (const auto& [id, figures] : s.container_cgroups) {
      if (!container_stats_cache_->contains(id)) return true;
    }
    return false;
  }();
  if (s.containers_need_runtime || layers_due) {
    if (auto list = options_.runtime->ListContainerStats(nullptr); list.ok()) {
      auto by_id = std::make_shared<std::map<std::string, v1::ContainerStats>>();
      for (v1::ContainerStats& cs : *list) (*by_id)[cs.attributes().id()] = std::move(cs);
      s.runtime_stats = by_id;
      s.fresh = true;
      absl::MutexLock lock(&mu_);
      container_stats_cache_ = s.runtime_stats;
      container_stats_at_ = now;
    } else {
      KLOG_WARNING("Unable to list container stats", "err", list.status());
    }
  } else if (!only_cpu_and_memory) {
    // Between runtime calls, the last answer stands in for the writable layers only (never for
    // cpu or memory).
    absl::MutexLock lock(&mu_);
    s.runtime_stats = container_stats_cache_;
  }
}

// The runtime's pod sandbox stats (s.sandbox_stats), asked for only when a pod's cgroup does not
// answer. A runtime that answers Unimplemented is not asked again; one that fails is asked again
// after kSandboxStatsRetry.
void CRIStatsProvider::FetchSandboxStats(absl::Time now, SummaryState& s) {
  if (s.pods_need_runtime && !sandbox_stats_unimplemented_.load() && SandboxStatsDue(now)) {
    auto list = options_.runtime->ListPodSandboxStats(nullptr);
    if (list.ok()) {
      for (v1::PodSandboxStats& ps : *list) s.sandbox_stats[ps.attributes().id()] = std::move(ps);
    } else if (list.status().code() == absl::StatusCode::kUnimplemented) {
      sandbox_stats_unimplemented_.store(true);
      KLOG_V(2, "Runtime does not implement ListPodSandboxStats; pod figures come from cgroups");
    } else {
      // containerd 1.6 fails the whole list when one sandbox has no cgroup path: fall back to
      // cgroups and container sums, and ask again only after a while.
      KLOG_WARNING("Unable to list pod sandbox stats; retrying later", "err", list.status(),
                   "retryAfter", kSandboxStatsRetry);
      absl::MutexLock lock(&mu_);
      sandbox_stats_retry_at_ = now + kSandboxStatsRetry;
    }
  }
}

// The desired pods, by UID, for container images and volumes (s.desired, s.desired_by_uid).
void CRIStatsProvider::CollectDesiredPods(SummaryState& s) const {
  if (options_.get_pods) s.desired = options_.get_pods();
  for (const api::Pod& p : s.desired) s.desired_by_uid[p.metadata.uid] = &p;
}

// The file systems the pods' figures are set against: the image file system (`image_fs`, the
// node's) for the writable layers, and (unless only_cpu_and_memory) statfs of the pod logs and
// root directories.
void CRIStatsProvider::StatPodFilesystems(bool only_cpu_and_memory,
                                          const std::optional<FsStats>& image_fs,
                                          SummaryState& s) const {
  s.image_fs = image_fs;
  if (!only_cpu_and_memory) {
    if (auto fs = options_.statfs(options_.pod_logs_dir); fs.ok()) s.logs_fs = *fs;
    if (auto fs = options_.statfs(options_.root_dir); fs.ok()) s.root_fs = *fs;
  }
}

// One pod's stats from the phases' state: its containers, then its cpu and memory, processes
// and (unless only_cpu_and_memory) network, volumes and ephemeral storage. Appends the cpu sample
// keys it updates to `seen_keys`.
PodStats CRIStatsProvider::BuildPodStats(const std::string& uid, const v1::PodSandbox& sandbox,
                                         const SummaryState& s, bool only_cpu_and_memory,
                                         absl::Time now, std::vector<std::string>& seen_keys) {
  PodStats pod;
  pod.pod_ref = {sandbox.metadata().name(), sandbox.metadata().namespace_(), uid};
  pod.start_time = FromNanosOr(sandbox.created_at(), absl::InfinitePast());
  pod.cgroup = s.pod_cgroups.at(uid).cgroup;
  const api::Pod* api_pod = nullptr;
  if (auto it = s.desired_by_uid.find(uid); it != s.desired_by_uid.end()) api_pod = it->second;
  const v1::PodSandboxStats* sb_stats = nullptr;
  if (auto it = s.sandbox_stats.find(sandbox.id()); it != s.sandbox_stats.end()) {
    sb_stats = &it->second;
  }
  const std::string pod_log_dir = absl::StrCat(options_.pod_logs_dir, "/", pod.pod_ref.namespace_,
                                               "_", pod.pod_ref.name, "_", uid);

  PodTotals totals;
  for (const auto& [name, c] : s.containers_by_sandbox.at(sandbox.id())) {
    pod.containers.push_back(BuildContainerStats(name, *c, api_pod, pod_log_dir, s,
                                                 only_cpu_and_memory, now, totals, seen_keys));
  }
  FillPodCpuMemory(s.pod_cgroups.at(uid), sb_stats, totals, sandbox.id(), now, pod, seen_keys);
  const pid_t net_pid = FillPodProcesses(sb_stats, pod);
  if (!only_cpu_and_memory) {
    FillPodNetwork(sb_stats, net_pid, sandbox, now, pod);
    FillPodStorage(uid, s.root_fs, totals, now, pod);
  }
  return pod;
}

// One container's stats: image (the desired pod's spec when known), cpu and memory from its
// cgroup, else from the runtime's fresh answer; (unless only_cpu_and_memory) its writable layer
// from the runtime's answer, fresh or cached, and its logs' disk usage under `pod_log_dir`.
// Adds its figures to `totals` and its cpu sample key to `seen_keys`.
ContainerStats CRIStatsProvider::BuildContainerStats(
    const std::string& name, const v1::Container& c, const api::Pod* api_pod,
    const std::string& pod_log_dir, const SummaryState& s, bool only_cpu_and_memory, absl::Time now,
    PodTotals& totals, std::vector<std::string>& seen_keys) {
  ContainerStats cs;
  cs.name = name;
  cs.id = c.id();
  cs.start_time = FromNanosOr(c.created_at(), absl::InfinitePast());
  cs.image = c.image().image();
  if (api_pod != nullptr) {
    for (const api::Container& spec : api_pod->spec.containers) {
      if (spec.name == name) cs.image = spec.image;
    }
    for (const api::Container& spec : api_pod->spec.init_containers) {
      if (spec.name == name) cs.image = spec.image;
    }
  }
  const CgroupFigures& cf = s.container_cgroups.at(c.id());
  cs.cgroup = cf.cgroup;
  const v1::ContainerStats* layer = nullptr;  // the runtime's figures, maybe cached
  if (s.runtime_stats) {
    if (auto it = s.runtime_stats->find(c.id()); it != s.runtime_stats->end()) layer = &it->second;
  }
  const v1::ContainerStats* st = s.fresh ? layer : nullptr;  // for cpu and memory
  if (cf.cpu_nanos) {
    cs.cpu = CpuFromNanos(*cf.cpu_nanos, cf.read_at);
  } else if (st != nullptr) {
    cs.cpu = CpuFromCri(st->cpu(), now);
  }
  if (cs.cpu) {
    UpdateNanoCores("ctr/" + c.id(), *cs.cpu);
    seen_keys.push_back("ctr/" + c.id());
    if (cs.cpu->usage_core_nano_seconds) {
      totals.sum_cpu += *cs.cpu->usage_core_nano_seconds;
      totals.have_cpu = true;
    }
  }
  if (cf.memory) {
    cs.memory = MemoryFromReading(*cf.memory, cf.read_at);
  } else if (st != nullptr) {
    cs.memory = MemoryFromCri(st->memory(), now);
  }
  if (cs.memory && cs.memory->working_set_bytes) {
    totals.sum_ws += *cs.memory->working_set_bytes;
    totals.sum_usage += cs.memory->usage_bytes.value_or(*cs.memory->working_set_bytes);
    totals.have_mem = true;
  }
  if (layer != nullptr) {
    if (!only_cpu_and_memory && layer->has_writable_layer()) {
      const v1::FilesystemUsage& w = layer->writable_layer();
      FsStats rootfs;
      rootfs.time = FromNanosOr(w.timestamp(), now);
      if (w.has_used_bytes()) rootfs.used_bytes = w.used_bytes().value();
      if (w.has_inodes_used()) rootfs.inodes_used = w.inodes_used().value();
      if (s.image_fs) {
        rootfs.path = s.image_fs->path;
        rootfs.capacity_bytes = s.image_fs->capacity_bytes;
        rootfs.available_bytes = s.image_fs->available_bytes;
        rootfs.inodes = s.image_fs->inodes;
        rootfs.inodes_free = s.image_fs->inodes_free;
      }
      totals.ephemeral_used += rootfs.used_bytes.value_or(0);
      totals.ephemeral_inodes += rootfs.inodes_used.value_or(0);
      cs.rootfs = rootfs;
    }
  }
  if (!only_cpu_and_memory) {
    if (auto du = CachedDu(pod_log_dir + "/" + name, now)) {
      cs.logs = FsForTree(*du, s.logs_fs, now);
      totals.ephemeral_used += du->bytes;
      totals.ephemeral_inodes += du->inodes;
    }
  }
  return cs;
}

// Pod cpu and memory: the pod cgroup, else the runtime's pod figures, else the sum. Appends the
// pod's cpu sample key to `seen_keys` when it has cpu.
void CRIStatsProvider::FillPodCpuMemory(const CgroupFigures& pf,
                                        const v1::PodSandboxStats* sb_stats,
                                        const PodTotals& totals, const std::string& sandbox_id,
                                        absl::Time now, PodStats& pod,
                                        std::vector<std::string>& seen_keys) {
  if (pf.cpu_nanos) pod.cpu = CpuFromNanos(*pf.cpu_nanos, pf.read_at);
  if (pf.memory) pod.memory = MemoryFromReading(*pf.memory, pf.read_at);
  if (sb_stats != nullptr && sb_stats->has_linux()) {
    if (!pod.cpu) pod.cpu = CpuFromCri(sb_stats->linux().cpu(), now);
    if (!pod.memory) pod.memory = MemoryFromCri(sb_stats->linux().memory(), now);
  }
  if (!pod.cpu && totals.have_cpu) pod.cpu = CpuFromNanos(totals.sum_cpu, now);
  if (!pod.memory && totals.have_mem) {
    MemoryStats m;
    m.time = now;
    m.working_set_bytes = totals.sum_ws;
    m.usage_bytes = totals.sum_usage;
    pod.memory = m;
  }
  if (pod.cpu) {
    UpdateNanoCores("pod/" + sandbox_id, *pod.cpu);
    seen_keys.push_back("pod/" + sandbox_id);
  }
}

// The pod's process count: the runtime's figure, else the number of processes in the pod's
// cgroup. Returns a process in the pod's network namespace, for its interfaces (0 when none):
// one of a container's. The pod cgroup's own first process is the pause process on containerd,
// but CRI-O runs no pause process by default (drop_infra_ctr) and keeps its monitors (conmon,
// host network namespace) in the pod cgroup; so it is taken only when no container has one.
pid_t CRIStatsProvider::FillPodProcesses(const v1::PodSandboxStats* sb_stats, PodStats& pod) const {
  std::vector<pid_t> pids;
  if (!pod.cgroup.empty()) pids = host_.CgroupPids(pod.cgroup);
  pid_t net_pid = 0;
  for (const ContainerStats& cs : pod.containers) {
    if (cs.cgroup.empty()) continue;
    if (std::vector<pid_t> p = host_.CgroupPids(cs.cgroup); !p.empty()) {
      net_pid = p.front();
      break;
    }
  }
  if (net_pid == 0 && !pids.empty()) net_pid = pids.front();
  if (sb_stats != nullptr && sb_stats->has_linux() && sb_stats->linux().has_process() &&
      sb_stats->linux().process().has_process_count()) {
    pod.process_count = sb_stats->linux().process().process_count().value();
  } else if (!pod.cgroup.empty()) {
    pod.process_count = pids.size();
  }
  return net_pid;
}

// The pod's network: the runtime's figures when it has them, without loopback (cAdvisor,
// upstream's source of pod network stats, ignores it): CRI-O names `lo` as the default
// interface, containerd `eth0`. "eth0" is the default when present, as cAdvisor's. Else, for a
// ready sandbox, /proc/<net_pid>/net/dev; else left unset.
void CRIStatsProvider::FillPodNetwork(const v1::PodSandboxStats* sb_stats, pid_t net_pid,
                                      const v1::PodSandbox& sandbox, absl::Time now,
                                      PodStats& pod) const {
  std::vector<InterfaceStats> cri_ifaces;
  std::string cri_default;
  absl::Time cri_time = now;
  if (sb_stats != nullptr && sb_stats->has_linux() && sb_stats->linux().has_network()) {
    const v1::NetworkUsage& n = sb_stats->linux().network();
    cri_time = FromNanosOr(n.timestamp(), now);
    auto add = [&](const v1::NetworkInterfaceUsage& u) {
      if (u.name().empty() || u.name() == "lo" || !u.has_rx_bytes()) return;
      for (const InterfaceStats& i : cri_ifaces) {
        if (i.name == u.name()) return;
      }
      cri_ifaces.push_back(InterfaceFromCri(u));
    };
    add(n.default_interface());
    if (!cri_ifaces.empty()) cri_default = cri_ifaces.front().name;
    for (const auto& i : n.interfaces()) add(i);
  }
  if (!cri_ifaces.empty()) {
    const bool has_eth0 = std::any_of(cri_ifaces.begin(), cri_ifaces.end(),
                                      [](const InterfaceStats& i) { return i.name == "eth0"; });
    pod.network =
        NetworkFromInterfaces(std::move(cri_ifaces), has_eth0 ? "eth0" : cri_default, cri_time);
  } else if (net_pid != 0 && sandbox.state() == v1::SANDBOX_READY) {
    pod.network = NetworkFromInterfaces(host_.NetDev(net_pid), "eth0", now);
  }
}

// The pod's volumes (du of <root_dir>/pods/<uid>/volumes/<plugin>/<name>, against statfs of
// each) and its ephemeral storage on the root file system (`root_fs`): the containers' writable
// layers and logs (`totals`) plus the volumes of EphemeralVolumePlugins.
void CRIStatsProvider::FillPodStorage(const std::string& uid, const std::optional<FsInfo>& root_fs,
                                      const PodTotals& totals, absl::Time now, PodStats& pod) {
  uint64_t ephemeral_used = totals.ephemeral_used, ephemeral_inodes = totals.ephemeral_inodes;
  const std::string volumes_dir = absl::StrCat(options_.root_dir, "/pods/", uid, "/volumes");
  for (const std::string& plugin : ListDir(volumes_dir)) {
    if (plugin == "kubernetes.io~csi") continue;  // the driver's storage, not the node's
    for (const std::string& name : ListDir(volumes_dir + "/" + plugin)) {
      const std::string path = volumes_dir + "/" + plugin + "/" + name;
      auto du = CachedDu(path, now);
      if (!du) continue;
      std::optional<FsInfo> fs;
      if (auto f = options_.statfs(path); f.ok()) fs = *f;
      pod.volumes.push_back({name, FsForTree(*du, fs, now)});
      if (EphemeralVolumePlugins().contains(plugin)) {
        ephemeral_used += du->bytes;
        ephemeral_inodes += du->inodes;
      }
    }
  }
  if (options_.external_volume_stats) {
    for (VolumeStats& v : options_.external_volume_stats(uid)) {
      v.fs.time = now;
      pod.volumes.push_back(std::move(v));
    }
  }
  FsStats eph;
  if (root_fs) eph = FsFromInfo(*root_fs, now);
  eph.time = now;
  eph.used_bytes = ephemeral_used;
  eph.inodes_used = ephemeral_inodes;
  pod.ephemeral_storage = eph;
}

absl::StatusOr<CadvisorSnapshot> CRIStatsProvider::GetCadvisorSnapshot() {
  absl::StatusOr<Summary> summary = GetSummary(/*only_cpu_and_memory=*/false);
  if (!summary.ok()) return summary.status();
  CadvisorSnapshot snap;
  snap.summary = *std::move(summary);
  snap.time = options_.clock->Now();
  auto add = [&](const std::string& cgroup) {
    if (cgroup.empty() || snap.cgroups.contains(cgroup)) return;
    if (cgroup != "/" && !host_.CgroupExists(cgroup)) return;
    snap.cgroups.emplace(cgroup, host_.CgroupDetail(cgroup));
  };
  add("/");
  for (const ContainerStats& c : snap.summary.node.system_containers) add(c.cgroup);
  for (const PodStats& p : snap.summary.pods) {
    add(p.cgroup);
    for (const ContainerStats& c : p.containers) add(c.cgroup);
  }
  snap.machine = options_.machine;
  const NodeStats& n = snap.summary.node;
  if (n.fs && !n.fs->path.empty()) snap.root_fs_device = host_.MountDevice(n.fs->path);
  if (n.image_fs && !n.image_fs->path.empty()) {
    snap.image_fs_device = host_.MountDevice(n.image_fs->path);
  }
  return snap;
}

}  // namespace kubelet::stats
