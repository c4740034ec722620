// Configuration and extension hooks of the CRI-backed runtime manager (KubeGenericRuntimeManager).
//
// Plain value struct: RuntimeOptionsFromConfig fills what comes from the KubeletConfiguration, the
// wiring code (app::Run) the flags, the node and the hooks, once at start-up. Every hook is
// optional; an unset hook means "the subsystem does not exist yet" and the documented default
// applies. Hooks are called from pod-worker threads (possibly several at once for different pods)
// and must be thread-safe; they are never called with a manager lock held.
#ifndef KUBELET_KUBELET_KUBERUNTIME_OPTIONS_H_
#define KUBELET_KUBELET_KUBERUNTIME_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/pod.h"
#include "config/feature_gates.h"
#include "config/kubelet_configuration.h"
#include "cri/proto/api.pb.h"
#include "kubelet/container/runtime.h"
#include "kubelet/events/event_recorder.h"

namespace kubelet::kuberuntime {

// Devices, mounts, environment, annotations and CDI devices a container gets from the resource
// managers (upstream DeviceRunContainerOptions).
struct ContainerResources {
  std::vector<runtime::v1::Mount> mounts;
  std::vector<runtime::v1::Device> devices;
  std::vector<std::pair<std::string, std::string>> envs;
  std::map<std::string, std::string> annotations;
  std::vector<std::string> cdi_devices;  // fully qualified CDI names
};

// A pod cgroup's CPU and memory settings (the container manager's ResourceConfig); unset fields
// are not read or not written.
struct PodCgroupConfig {
  std::optional<int64_t> cpu_shares;
  std::optional<int64_t> cpu_quota;   // microseconds per period; -1 unlimited
  std::optional<int64_t> cpu_period;  // microseconds
  std::optional<int64_t> memory;      // bytes
  bool operator==(const PodCgroupConfig&) const = default;
};

struct Options {
  // --root-dir: pod data lives under <root_dir>/pods/<uid>/ (termination-log files, etc-hosts),
  // seccomp Localhost profiles under <root_dir>/seccomp/.
  std::string root_dir = "/var/lib/kubelet";
  // podLogsDir: /var/log/pods/<ns>_<name>_<uid>/<container>/<restartCount>.log.
  std::string pod_logs_dir = "/var/log/pods";

  std::string node_name;
  // The node's IPs, primary first (status.hostIP / status.hostIPs, host-network pod IPs, the
  // localhost nameserver family when resolv_conf is "").
  std::vector<std::string> node_ips;

  // --- DNS (KubeletConfiguration clusterDNS / clusterDomain / resolvConf) --------------------
  std::vector<std::string> cluster_dns;
  std::string cluster_domain;
  // "" disables host DNS: pods with dnsPolicy Default get nameserver 127.0.0.1 (or ::1).
  std::string resolv_conf = "/etc/resolv.conf";

  // --- Resources ------------------------------------------------------------------------------
  bool cpu_cfs_quota = true;
  // cpu.cfs_period_us for containers with CPU limits. Upstream uses 100ms unless the
  // CustomCPUCFSQuotaPeriod feature gate is on: pass cpuCFSQuotaPeriod only in that case.
  absl::Duration cpu_cfs_quota_period = absl::Milliseconds(100);
  // Machine memory in bytes (burstable oom_score_adj). 0: read MemTotal from /proc/meminfo.
  int64_t memory_capacity_bytes = 0;
  // Node allocatable (downward API fallback for unset limits). Unset: capacity (all CPUs of the
  // machine, memory_capacity_bytes).
  std::function<api::ResourceList()> node_allocatable;
  // Whether /sys/fs/cgroup is cgroup v2 ("memory.oom.group" is then set). nullopt: detect.
  std::optional<bool> cgroup2_unified;
  // seccompDefault: RuntimeDefault instead of Unconfined for containers without a profile.
  bool seccomp_default = false;
  // PodHostIPs feature gate (status.hostIPs in the downward API; "" when off, as upstream).
  bool pod_host_ips = false;
  // InPlacePodVerticalScaling (alpha, off by default): containers get the hash-without-resources
  // annotation; for API pods a change of resources alone no longer restarts a container: per
  // resizePolicy it is restarted (RestartContainer) or resized in place (the pod cgroup through
  // the pod_cgroup hooks below, each container with UpdateContainerResources); container statuses
  // carry the resources the runtime reports. The pod given to SyncPod must carry its current API
  // status (allocatedResources and resources of its containers).
  bool in_place_pod_vertical_scaling = false;

  // --- Images -----------------------------------------------------------------------------------
  bool serialize_image_pulls = true;
  // With serialize_image_pulls false: at most this many pulls at once (nullopt/<1: unbounded).
  std::optional<int32_t> max_parallel_image_pulls;
  // registryPullQPS / registryBurst (0 QPS: unlimited).
  double registry_pull_qps = 5;
  int32_t registry_burst = 10;
  absl::Duration image_backoff_initial = absl::Seconds(10);
  absl::Duration image_backoff_max = absl::Seconds(300);
  // Crash-loop back-off (upstream backOffPeriod / MaxContainerBackOff).
  absl::Duration crash_backoff_initial = absl::Seconds(10);
  absl::Duration crash_backoff_max = absl::Seconds(300);

  // --- Hooks --------------------------------------------------------------------------------
  // Where the manager records upstream's container, image and sandbox events (Created,
  // Started, Killing, BackOff, Pulling, Pulled, FailedPostStartHook, ...). Unset: dropped.
  // Borrowed; must outlive the manager.
  events::EventRecorder* recorder = nullptr;
  // Pod cgroup parent (container manager): a cgroupfs path such as /kubepods/burstable/pod<uid>,
  // or the systemd slice path with the systemd driver, as upstream passes it. Unset: "" (the
  // runtime decides).
  std::function<std::string(const api::Pod&)> cgroup_parent;
  // RuntimeClass -> CRI runtime handler. Unset: "" (default handler).
  std::function<absl::StatusOr<std::string>(const api::Pod&)> runtime_handler;
  // Volume mounts for a container (volume manager: volumes, subPaths). They come first in the
  // container's mount list; the kubelet adds /etc/hosts (unless a mount targets it) and the
  // termination-message file. An error fails the start with CreateContainerConfigError.
  std::function<absl::StatusOr<std::vector<runtime::v1::Mount>>(const api::Pod&,
                                                                const api::Container&)>
      container_mounts;
  // Write <root_dir>/pods/<uid>/etc-hosts and mount it at /etc/hosts (upstream makeMounts).
  bool manage_etc_hosts = true;
  // ConfigMap / Secret data for env/envFrom (API client). Unset: "no kubeClient defined" errors,
  // as a standalone upstream kubelet reports. Return NotFound for missing objects (optional
  // references then skip them).
  std::function<absl::StatusOr<std::map<std::string, std::string>>(const std::string& ns,
                                                                   const std::string& name)>
      get_config_map;
  std::function<absl::StatusOr<std::map<std::string, std::string>>(const std::string& ns,
                                                                   const std::string& name)>
      get_secret;
  // Service environment variables for a pod's containers (API-server mode: the services
  // cache, service_env.h). An error (services not read yet) fails the start with
  // CreateContainerConfigError. Unset: none, as a standalone upstream kubelet.
  std::function<absl::StatusOr<std::map<std::string, std::string>>(const api::Pod&)> service_env;
  // Registry credentials to try, in order, for pulling `image` (the pod's pull secrets, then the
  // node's docker config). Unset or empty: anonymous pull. An error (a pull secret that does
  // not parse) fails the pull with ErrImagePull.
  std::function<absl::StatusOr<std::vector<runtime::v1::AuthConfig>>(const api::Pod&,
                                                                     const std::string& image)>
      pull_credentials;
  // Runs a lifecycle handler (postStart, preStop) for a container; returns an error message on
  // failure. `timeout` bounds the call for preStop (the remaining grace period); the hook must
  // honour it. Unset: handlers are skipped.
  std::function<absl::Status(const container::ContainerID& id, const api::Pod& pod,
                             const api::Container& container, const api::LifecycleHandler& handler,
                             absl::Duration timeout)>
      run_lifecycle_handler;
  // Probe results (prober manager). True when the last liveness / startup result for the
  // container is Failure: the container is killed and restarted per restartPolicy.
  std::function<bool(const container::ContainerID& id)> liveness_failed;
  std::function<bool(const container::ContainerID& id)> startup_failed;
  // True while a container with a startup probe has no successful startup result yet; a sidecar
  // (restartable init container) then does not count as started. Unset: never pending.
  std::function<bool(const container::ContainerID& id)> startup_pending;
  // What the resource managers give a container (upstream containerManager.GetResources: the
  // device plugins' Allocate results). Its mounts come before the volume mounts, its envs before
  // the container's own; its annotations join the container's. An error fails the start with
  // CreateContainerConfigError. Unset: nothing.
  std::function<absl::StatusOr<ContainerResources>(const api::Pod&, const api::Container&)>
      container_resources;
  // Upstream's internal container lifecycle. PreCreateContainer: may amend the config before
  // CreateContainer (the CPU and memory managers' cpuset.cpus / cpuset.mems).
  // PreStartContainer: the container exists and is about to start; an error fails the start
  // (PreStartHookError; event "Internal PreStartContainer hook failed: <error>"). Unset: nothing.
  std::function<void(const api::Pod&, const api::Container&, runtime::v1::ContainerConfig*)>
      pre_create_container;
  std::function<absl::Status(const api::Pod&, const api::Container&,
                             const std::string& container_id)>
      pre_start_container;
  // The pod cgroup, for in-place resize (upstream's pod container manager): the settings the
  // pod's spec asks for (ResourceConfigForPod), the current settings of one resource ("cpu":
  // shares, quota, period; "memory": the limit), writing one resource's settings, and the
  // memory the pod uses. Unset (no cgroupsPerQOS): the pod cgroup is left alone.
  std::function<PodCgroupConfig(const api::Pod&)> pod_cgroup_desired;
  std::function<absl::StatusOr<PodCgroupConfig>(const api::Pod&, const std::string& resource)>
      get_pod_cgroup_config;
  std::function<absl::Status(const api::Pod&, const std::string& resource,
                             const PodCgroupConfig& config)>
      set_pod_cgroup_config;
  std::function<absl::StatusOr<int64_t>(const api::Pod&)> pod_cgroup_memory_usage;
};

// Reads DNS (clusterDNS, clusterDomain, resolvConf), CFS quota (cpuCFSQuotaPeriod only with the
// CustomCPUCFSQuotaPeriod gate), seccompDefault, image pulls and the InPlacePodVerticalScaling
// gate; the wiring adds node, flags, hooks.
Options RuntimeOptionsFromConfig(const config::KubeletConfiguration& c,
                                 const config::FeatureGate& gates);
inline constexpr std::string_view kRuntimeConfigFields[] = {
    "clusterDNS",        "clusterDomain",  "resolvConf",          "cpuCFSQuota",
    "cpuCFSQuotaPeriod", "seccompDefault", "serializeImagePulls", "maxParallelImagePulls",
    "registryPullQPS",   "registryBurst",
};

}  // namespace kubelet::kuberuntime

#endif  // KUBELET_KUBELET_KUBERUNTIME_OPTIONS_H_
