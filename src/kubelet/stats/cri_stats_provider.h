// CRIStatsProvider: the StatsProvider built on the CRI stats calls plus the host's own figures
// (upstream's CRI stats provider with the node part cAdvisor gives it).
//
// Where figures come from:
//   node        /proc/stat, /proc/meminfo and the root cgroup (working set = usage -
//               inactive_file); /proc/net/dev; statfs of the root dir; CRI ImageFsInfo + statfs
//               of its mount point; kernel.pid_max and the task count.
//   system      "kubelet" (kubelet_cgroup, or the process's own cgroup), "runtime"
//   containers  (runtime_cgroup, when set), "misc" (system_cgroup, when set), "pods"
//               (pods_cgroup): cgroup cpu and memory.
//   pods        cpu and memory of each pod and container from its cgroup (the pod's below
//               pods_cgroup, the container's below it as the runtime names it), as cAdvisor
//               reads them; one ListPodSandbox + ListContainers per call. The runtime's
//               figures are asked for only when they are needed, never per container:
//               ListContainerStats at once when a container's cgroup does not answer (a VM
//               runtime, a missing cgroup), else for the writable layers only, at most once
//               per du_cache_ttl or when a container is new (the last answer is reused in
//               between);
//               ListPodSandboxStats only when a pod's cgroup does not answer. A runtime that
//               answers ListPodSandboxStats with Unimplemented is not asked again, one that
//               fails it (containerd 1.6 fails the whole list when a sandbox has no cgroup
//               path) is asked again after 5 minutes; the pod's cpu/memory then come from the
//               sum of its containers. Network: the runtime's pod figures when it gave them,
//               else /proc/<pid>/net/dev of a process of the pod. Only the newest sandbox of a
//               pod and its non-exited containers count.
//   usage       usageNanoCores: the runtime's figure when it gives one, else the rate between
//   NanoCores   this call's and the previous call's cumulative usage of the same container, pod
//               or node (absent on the first sample).
//   disk        logs: du of <pod_logs_dir>/<ns>_<name>_<uid>/<container>; volumes: du of
//               <root_dir>/pods/<uid>/volumes/<plugin>/<name>; results cached for du_cache_ttl;
//               CSI and claim-backed volumes from external_volume_stats (with pvcRef), never in
//               the pod's ephemeral storage.
//   cadvisor    GetCadvisorSnapshot adds, per cgroup of the Summary, the cgroup files
//   extras      HostReader::CgroupDetail reads, the machine facts and the devices of the root
//               and image file systems (/proc/self/mounts).
//
// Thread-safety: thread-safe; concurrent calls may run side by side. Ownership: borrows the
// runtime, image service and clock given in Options, which must outlive the provider.
#ifndef KUBELET_KUBELET_STATS_CRI_STATS_PROVIDER_H_
#define KUBELET_KUBELET_STATS_CRI_STATS_PROVIDER_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "api/pod.h"
#include "common/clock.h"
#include "config/kubelet_configuration.h"
#include "cri/runtime_service.h"
#include "kubelet/stats/host_stats.h"
#include "kubelet/stats/stats_provider.h"
#include "kubelet/stats/summary.h"

namespace kubelet::stats {

struct CRIStatsProviderOptions {
  cri::RuntimeService* runtime = nullptr;      // required
  cri::ImageManagerService* images = nullptr;  // required
  Clock* clock = nullptr;                      // required
  std::string node_name;
  std::string root_dir = "/var/lib/kubelet";
  std::string pod_logs_dir = "/var/log/pods";
  // The desired pods (with status); used for volume names and container images. May be empty.
  std::function<std::vector<api::Pod>()> get_pods;
  // The pod's volumes on storage of their own (claim-backed and CSI volumes), measured by their
  // plugins; their directories below the pod's volumes dir (kubernetes.io~csi) are not walked.
  // Unset: none.
  std::function<std::vector<VolumeStats>(const std::string& pod_uid)> external_volume_stats;
  std::string proc_root = "/proc";
  std::string cgroup_root = "/sys/fs/cgroup";
  // The machine as /metrics/cadvisor's machine_* families describe it. Static: the wiring
  // fills it once from the container manager's machine info.
  MachineFacts machine;
  // cgroupfs-style path of the pods' cgroup root ("/kubepods", or "/kubepods.slice" with the
  // systemd driver); "" leaves out the "pods" system container and pod cgroup reading.
  std::string pods_cgroup = "/kubepods";
  bool systemd_cgroup_names = false;
  std::string kubelet_cgroup;  // "" : the kubelet process's own cgroup
  std::string runtime_cgroup;  // --runtime-cgroups
  std::string system_cgroup;   // systemCgroups
  absl::Duration du_cache_ttl = absl::Minutes(1);
  // statfs; tests replace it.
  std::function<absl::StatusOr<FsInfo>(const std::string& path)> statfs = StatFs;
};

// Reads cgroupRoot, cgroupsPerQOS and cgroupDriver: the pods' cgroup as the container manager lays
// it out, "/kubepods" ("/kubepods.slice" with systemd) below cgroupRoot, or cgroupRoot itself.
std::string PodsCgroupPath(const config::KubeletConfiguration& c);

// Reads the system containers (kubeletCgroups, systemCgroups), the pods' cgroup (PodsCgroupPath,
// systemd names) and volumeStatsAggPeriod (zero keeps the default TTL).
CRIStatsProviderOptions CRIStatsProviderOptionsFromConfig(const config::KubeletConfiguration& c);
inline constexpr std::string_view kCRIStatsProviderConfigFields[] = {
    "kubeletCgroups", "systemCgroups", "volumeStatsAggPeriod",
    "cgroupDriver",   "cgroupRoot",    "cgroupsPerQOS"};

// What /metrics/cadvisor renders: the full Summary plus the figures only cAdvisor reports.
struct CadvisorSnapshot {
  Summary summary;
  // By cgroup path (the "id" label): the node's root "/", the system containers, the pods'
  // and the containers' cgroups that exist.
  std::map<std::string, CgroupDetails> cgroups;
  MachineFacts machine;
  // Source devices of the node's root file system and of the image file system ("" when
  // unknown; the same device is reported once).
  std::string root_fs_device;
  std::string image_fs_device;
  absl::Time time = absl::InfinitePast();
};

class CRIStatsProvider final : public StatsProvider {
 public:
  explicit CRIStatsProvider(CRIStatsProviderOptions options);

  absl::StatusOr<std::string> SummaryJson(bool only_cpu_and_memory) override;
  // The Summary as values (also what the /metrics collectors read). Fails only when the runtime
  // cannot list its pods; partial host figures are simply left out.
  absl::StatusOr<Summary> GetSummary(bool only_cpu_and_memory);
  // The node-level part of GetSummary(false) alone: node CPU, memory, network, fs, image fs,
  // rlimit and the system containers; no pods, so no pod listing or per-pod cgroup reads (what
  // the eviction manager observes every 10 s).
  absl::StatusOr<Summary> GetNodeSummary();
  // The image file system: used bytes/inodes from CRI ImageFsInfo, capacity and free space from
  // statfs of its mount point.
  absl::StatusOr<FsStats> ImageFsStats();
  // GetSummary(false) plus the cgroup details, machine facts and devices, read in the same call
  // (no CRI calls beyond GetSummary's).
  absl::StatusOr<CadvisorSnapshot> GetCadvisorSnapshot();

 private:
  struct CpuSample {
    uint64_t usage_core_nano_seconds = 0;
    int64_t timestamp_ns = 0;
  };
  struct DuEntry {
    DiskUsage usage;
    absl::Time measured;
    bool ok = false;
  };

  void FillNode(bool only_cpu_and_memory, absl::Time now, NodeStats& node);
  std::optional<ContainerStats> SystemContainer(const std::string& name, const std::string& cgroup,
                                                absl::Time now);
  // Fills `cpu.usage_nano_cores` from the cached previous sample of `key` unless set; records
  // this sample.
  void UpdateNanoCores(const std::string& key, CPUStats& cpu);
  // Drops cached samples of keys not in `seen` (containers and pods gone).
  void PruneSamples(const std::vector<std::string>& seen);
  std::optional<DiskUsage> CachedDu(const std::string& path, absl::Time now);
  std::string PodCgroup(const std::string& uid) const;
  // The cgroup of container `id` below `pod_cgroup`, named as the runtime names it: `<id>`
  // (containerd, cgroupfs), `crio-<id>` (CRI-O, cgroupfs), `cri-containerd-<id>.scope` /
  // `crio-<id>.scope` (systemd); `pod_cgroup/<id>` when none exists (yet).
  std::string ContainerCgroup(const std::string& pod_cgroup, const std::string& id) const;
  bool SandboxStatsDue(absl::Time now);

  // GetSummary's phases, in call order, and the state they hand on; the types are defined and
  // the phases' contracts given in cri_stats_provider.cc.
  struct CgroupFigures;
  struct PodTotals;
  struct SummaryState;
  void ReadWorkloadCgroups(SummaryState& s);
  void FetchContainerStats(bool only_cpu_and_memory, absl::Time now, SummaryState& s);
  void FetchSandboxStats(absl::Time now, SummaryState& s);
  void CollectDesiredPods(SummaryState& s) const;
  void StatPodFilesystems(bool only_cpu_and_memory, const std::optional<FsStats>& image_fs,
                          SummaryState& s) const;
  PodStats BuildPodStats(const std::string& uid, const runtime::v1::PodSandbox& sandbox,
                         const SummaryState& s, bool only_cpu_and_memory, absl::Time now,
                         std::vector<std::string>& seen_keys);
  ContainerStats BuildContainerStats(const std::string& name, const runtime::v1::Container& c,
                                     const api::Pod* api_pod, const std::string& pod_log_dir,
                                     const SummaryState& s, bool only_cpu_and_memory,
                                     absl::Time now, PodTotals& totals,
                                     std::vector<std::string>& seen_keys);
  void FillPodCpuMemory(const CgroupFigures& pf, const runtime::v1::PodSandboxStats* sb_stats,
                        const PodTotals& totals, const std::string& sandbox_id, absl::Time now,
                        PodStats& pod, std::vector<std::string>& seen_keys);
  pid_t FillPodProcesses(const runtime::v1::PodSandboxStats* sb_stats, PodStats& pod) const;
  void FillPodNetwork(const runtime::v1::PodSandboxStats* sb_stats, pid_t net_pid,
                      const runtime::v1::PodSandbox& sandbox, absl::Time now, PodStats& pod) const;
  void FillPodStorage(const std::string& uid, const std::optional<FsInfo>& root_fs,
                      const PodTotals& totals, absl::Time now, PodStats& pod);

  const CRIStatsProviderOptions options_;
  const HostReader host_;
  std::atomic<bool> sandbox_stats_unimplemented_{false};

  absl::Mutex mu_;
  std::map<std::string, CpuSample> cpu_samples_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, DuEntry> du_cache_ ABSL_GUARDED_BY(mu_);
  absl::Time sandbox_stats_retry_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // The last ListContainerStats answer (for the writable layers between calls), by container ID.
  std::shared_ptr<const std::map<std::string, runtime::v1::ContainerStats>> container_stats_cache_
      ABSL_GUARDED_BY(mu_);
  absl::Time container_stats_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // The cgroups found by the last call: "pod/<uid>" and "ctr/<container id>" -> cgroup path.
  std::map<std::string, std::string> cgroup_names_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet::stats

#endif  // KUBELET_KUBELET_STATS_CRI_STATS_PROVIDER_H_
