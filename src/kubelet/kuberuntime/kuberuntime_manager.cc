#include "kubelet/kuberuntime/kuberuntime_manager.h"

#include <sys/stat.h>
#include <sys/statfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/resource_helpers.h"
#include "api/static_pod.h"
#include "common/duration.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/kuberuntime/helpers.h"
#include "kubelet/kuberuntime/labels.h"
#include "kubelet/kuberuntime/manager_internal.h"
#include "kubelet/kuberuntime/resources.h"
#include "metrics/metrics.h"

namespace kubelet::kuberuntime {

namespace v1 = ::runtime::v1;
using container::ContainerStatus;
using container::PodSyncResult;
using container::State;
using container::SyncResult;

namespace {

constexpr int64_t kCgroup2SuperMagic = 0x63677270;

int64_t ReadMemTotal() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (!absl::StartsWith(line, "MemTotal:")) continue;
    std::vector<absl::string_view> parts =
        absl::StrSplit(line.substr(9), ' ', absl::SkipWhitespace());
    int64_t kb = 0;
    if (!parts.empty() && absl::SimpleAtoi(parts[0], &kb)) return kb * 1024;
  }
  return 0;
}

bool DetectCgroup2Unified() {
  struct statfs fs;
  if (statfs("/sys/fs/cgroup", &fs) != 0) return false;
  return static_cast<int64_t>(fs.f_type) == kCgroup2SuperMagic;
}

const char* ActionName(SyncResult::Action a) {
  switch (a) {
    case SyncResult::Action::kStartContainer:
      return "StartContainer";
    case SyncResult::Action::kKillContainer:
      return "KillContainer";
    case SyncResult::Action::kCreatePodSandbox:
      return "CreatePodSandbox";
    case SyncResult::Action::kKillPodSandbox:
      return "KillPodSandbox";
    case SyncResult::Action::kInitContainer:
      return "InitContainer";
    case SyncResult::Action::kConfigPodSandbox:
      return "ConfigPodSandbox";
  }
  return "Unknown";
}

State ToState(v1::ContainerState s) {
  switch (s) {
    case v1::CONTAINER_CREATED:
      return State::kCreated;
    case v1::CONTAINER_RUNNING:
      return State::kRunning;
    case v1::CONTAINER_EXITED:
      return State::kExited;
    default:
      return State::kUnknown;
  }
}

absl::Time FromNanos(int64_t ns) {
  return ns == 0 ? absl::InfinitePast() : absl::FromUnixNanos(ns);
}

// upstream sharesToMilliCPU: cpu.shares back to millicores (0 below the minimum shares).
int64_t SharesToMilliCPU(int64_t shares) {
  if (shares < api::kMinShares) return 0;
  return (shares * api::kMilliCPUToCPU + api::kSharesPerCPU - 1) / api::kSharesPerCPU;
}

// upstream quotaToMilliCPU.
int64_t QuotaToMilliCPU(int64_t quota, int64_t period) {
  if (quota == -1) return 0;
  return (quota * api::kMilliCPUToCPU) / period;
}

// upstream toKubeContainerResources: what the runtime reports as applied; nullopt when it
// reports nothing usable.
std::optional<container::ContainerResources> ToKubeContainerResources(
    const v1::ContainerStatus& s) {
  if (!s.has_resources() || !s.resources().has_linux()) return std::nullopt;
  const v1::LinuxContainerResources& r = s.resources().linux();
  container::ContainerResources out;
  if (r.cpu_period() > 0) {
    const int64_t milli = QuotaToMilliCPU(r.cpu_quota(), r.cpu_period());
    if (milli > 0) out.cpu_limit = api::Quantity::FromMilli(milli);
  }
  if (r.cpu_shares() > 0) {
    const int64_t milli = SharesToMilliCPU(r.cpu_shares());
    if (milli > 0) out.cpu_request = api::Quantity::FromMilli(milli);
  }
  if (r.memory_limit_in_bytes() > 0) {
    out.memory_limit =
        api::Quantity::FromValue(r.memory_limit_in_bytes(), api::Quantity::Format::kBinarySI);
  }
  if (!out.cpu_limit && !out.cpu_request && !out.memory_limit) return std::nullopt;
  return out;
}

}  // namespace

namespace internal {

SyncResult NewSyncResult(SyncResult::Action action, std::string target) {
  SyncResult r;
  r.action = action;
  r.target = std::move(target);
  return r;
}

void Fail(SyncResult& r, const std::string& reason, const std::string& message) {
  r.reason = reason;
  r.message = message;
  // PodSyncResult.Error() of upstream: failed to "<Action>" for "<target>" with <reason>: "<msg>"
  r.error =
      absl::UnknownError(absl::StrCat("failed to \"", ActionName(r.action), "\" for \"", r.target,
                                      "\" with ", reason, ": ", log::Quote(message)));
}

bool MkdirAll(const std::string& path, mode_t mode, std::string* err) {
  if (path.empty()) return true;
  std::string cur;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty()) {
      if (cur.empty()) cur = "/";
      continue;
    }
    if (!cur.empty() && cur.back() != '/') cur += '/';
    absl::StrAppend(&cur, part);
    if (mkdir(cur.c_str(), mode) != 0 && errno != EEXIST) {
      if (err != nullptr) *err = absl::StrCat("mkdir ", cur, ": ", std::strerror(errno));
      return false;
    }
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    if (err != nullptr) *err = absl::StrCat("mkdir ", path, ": not a directory");
    return false;
  }
  return true;
}

}  // namespace internal

using internal::Fail;
using internal::NewSyncResult;

// ---- Construction ----------------------------------------------------------------------------

KubeGenericRuntimeManager::KubeGenericRuntimeManager(cri::RuntimeService& runtime,
                                                     cri::ImageManagerService& images, Clock& clock,
                                                     Options options,
                                                     const container::PodStateProvider* pod_state)
    : runtime_(runtime),
      images_(images),
      clock_(clock),
      options_(std::move(options)),
      pod_state_(pod_state),
      image_manager_(
          images, clock,
          ImageManagerOptions{options_.serialize_image_pulls, options_.max_parallel_image_pulls,
                              options_.registry_pull_qps, options_.registry_burst,
                              options_.image_backoff_initial, options_.image_backoff_max,
                              options_.pull_credentials, options_.recorder}),
      crash_backoff_(clock, options_.crash_backoff_initial, options_.crash_backoff_max) {
  memory_capacity_ =
      options_.memory_capacity_bytes > 0 ? options_.memory_capacity_bytes : ReadMemTotal();
  cgroup2_unified_ =
      options_.cgroup2_unified.has_value() ? *options_.cgroup2_unified : DetectCgroup2Unified();
}

KubeGenericRuntimeManager::~KubeGenericRuntimeManager() = default;

absl::Status KubeGenericRuntimeManager::Init() {
  absl::StatusOr<v1::VersionResponse> v = runtime_.Version(cri::kKubeRuntimeAPIVersion);
  if (!v.ok()) {
    return absl::Status(v.status().code(), absl::StrCat("get remote runtime typed version failed: ",
                                                        v.status().message()));
  }
  if (v->version() != kRuntimeAPIVersion) {
    KLOG_ERROR(absl::FailedPreconditionError("unsupported"),
               "This runtime api version is not supported", "apiVersion", v->version(),
               "supportedAPIVersion", kRuntimeAPIVersion);
    return absl::FailedPreconditionError("runtime api version is not supported");
  }
  {
    absl::MutexLock lock(&mu_);
    runtime_name_ = v->runtime_name();
  }
  KLOG_INFO("Container runtime initialized", "containerRuntime", v->runtime_name(), "version",
            v->runtime_version(), "apiVersion", v->runtime_api_version());
  return absl::OkStatus();
}

std::string KubeGenericRuntimeManager::RuntimeName() const {
  {
    absl::MutexLock lock(&mu_);
    if (!runtime_name_.empty()) return runtime_name_;
  }
  absl::StatusOr<v1::VersionResponse> v = runtime_.Version(cri::kKubeRuntimeAPIVersion);
  if (!v.ok() || v->runtime_name().empty()) return "";
  absl::MutexLock lock(&mu_);
  runtime_name_ = v->runtime_name();
  return runtime_name_;
}

std::string KubeGenericRuntimeManager::Type() const { return RuntimeName(); }

container::ContainerID KubeGenericRuntimeManager::MakeID(const std::string& id) const {
  return container::ContainerID{RuntimeName(), id};
}

ResourceSettings KubeGenericRuntimeManager::MakeResourceSettings() const {
  ResourceSettings r;
  r.cpu_cfs_quota = options_.cpu_cfs_quota;
  r.cpu_period_us = absl::ToInt64Microseconds(options_.cpu_cfs_quota_period);
  if (r.cpu_period_us <= 0) r.cpu_period_us = kQuotaPeriod;
  r.cgroup2_unified = cgroup2_unified_;
  r.memory_capacity = memory_capacity_;
  return r;
}

SandboxSettings KubeGenericRuntimeManager::MakeSandboxSettings(const api::Pod& pod) const {
  SandboxSettings s;
  s.pod_logs_dir = options_.pod_logs_dir;
  if (options_.cgroup_parent) s.cgroup_parent = options_.cgroup_parent(pod);
  s.dns = DnsSettings{options_.cluster_dns, options_.cluster_domain, options_.resolv_conf,
                      options_.node_ips};
  s.dns.missing_cluster_dns = [this](const api::Pod& p, const std::string& message) {
    Recorder().Record(events::NodeRef(options_.node_name), events::kWarning,
                      events::kMissingClusterDNS, message);
    Recorder().Record(events::PodRef(p), events::kWarning, events::kMissingClusterDNS,
                      absl::StrCat("pod: \"", FormatPod(p), "\". ", message));
  };
  s.resources = MakeResourceSettings();
  return s;
}

EnvContext KubeGenericRuntimeManager::MakeEnvContext() const {
  EnvContext ctx;
  ctx.node_ips = options_.node_ips;
  ctx.pod_host_ips = options_.pod_host_ips;
  if (options_.node_allocatable) {
    ctx.node_allocatable = options_.node_allocatable();
  } else {
    const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    ctx.node_allocatable[api::kResourceCPU] = api::Quantity::FromValue(cpus);
    if (memory_capacity_ > 0) {
      ctx.node_allocatable[api::kResourceMemory] =
          api::Quantity::FromValue(memory_capacity_, api::Quantity::Format::kBinarySI);
    }
  }
  ctx.get_config_map = options_.get_config_map;
  ctx.get_secret = options_.get_secret;
  ctx.service_env = options_.service_env;
  ctx.recorder = options_.recorder;
  return ctx;
}

absl::StatusOr<v1::PodSandboxConfig> KubeGenericRuntimeManager::GeneratePodSandboxConfig(
    const api::Pod& pod, uint32_t attempt) const {
  return kuberuntime::GeneratePodSandboxConfig(pod, attempt, MakeSandboxSettings(pod));
}

// ---- Listing and status ----------------------------------------------------------------------

absl::StatusOr<std::vector<container::Pod>> KubeGenericRuntimeManager::GetPods(bool all) {
  v1::PodSandboxFilter sandbox_filter;
  if (!all) sandbox_filter.mutable_state()->set_state(v1::SANDBOX_READY);
  absl::StatusOr<std::vector<v1::PodSandbox>> sandboxes =
      runtime_.ListPodSandbox(all ? nullptr : &sandbox_filter);
  if (!sandboxes.ok()) {
    KLOG_ERROR(sandboxes.status(), "Failed to list pod sandboxes");
    return sandboxes.status();
  }
  v1::ContainerFilter container_filter;
  if (!all) container_filter.mutable_state()->set_state(v1::CONTAINER_RUNNING);
  absl::StatusOr<std::vector<v1::Container>> containers =
      runtime_.ListContainers(all ? nullptr : &container_filter);
  if (!containers.ok()) {
    KLOG_ERROR(containers.status(), "ListContainers failed");
    return containers.status();
  }
  const std::string runtime_name = RuntimeName();

  std::vector<container::Pod> pods;
  std::map<std::string, size_t> index;
  auto pod_for = [&](const std::string& uid, const std::string& name,
                     const std::string& ns) -> container::Pod& {
    auto [it, inserted] = index.emplace(uid, pods.size());
    if (inserted) {
      container::Pod& p = pods.emplace_back();
      p.id = uid;
      p.name = name;
      p.namespace_ = ns;
    }
    return pods[it->second];
  };

  for (const v1::PodSandbox& s : *sandboxes) {
    if (!s.has_metadata() || s.labels().find(kPodUIDLabel) == s.labels().end()) {
      KLOG_V(4, "Sandbox is not managed by the kubelet, ignoring", "sandbox", s.id());
      continue;
    }
    container::Pod& p = pod_for(s.metadata().uid(), s.metadata().name(), s.metadata().namespace_());
    container::Container c;
    c.id = container::ContainerID{runtime_name, s.id()};
    c.state = s.state() == v1::SANDBOX_READY ? State::kRunning : State::kExited;
    c.created_at = FromNanos(s.created_at());
    p.sandboxes.push_back(std::move(c));
    p.created_at = FromNanos(s.created_at());
  }
  // This runs every relist: only the labels and the annotation it needs are looked up in the
  // runtime's maps (no copies of them, none of the JSON annotations parsed).
  static const std::string kUIDKey = kPodUIDLabel, kNameKey = kPodNameLabel,
                           kNamespaceKey = kPodNamespaceLabel, kHashKey = kContainerHashLabel;
  auto lookup = [](const auto& map, const std::string& key) -> const std::string* {
    auto it = map.find(key);
    return it == map.end() ? nullptr : &it->second;
  };
  static const std::string kEmpty;
  for (const v1::Container& c : *containers) {
    if (!c.has_metadata()) continue;
    const std::string* pod_uid = lookup(c.labels(), kUIDKey);
    if (pod_uid == nullptr || pod_uid->empty()) {
      KLOG_V(4, "Container is not managed by the kubelet, ignoring", "container", c.id());
      continue;
    }
    const std::string* pod_name = lookup(c.labels(), kNameKey);
    const std::string* pod_namespace = lookup(c.labels(), kNamespaceKey);
    container::Pod& p =
        pod_for(*pod_uid, pod_name ? *pod_name : kEmpty, pod_namespace ? *pod_namespace : kEmpty);
    container::Container out;
    out.id = container::ContainerID{runtime_name, c.id()};
    out.name = c.metadata().name();
    out.image = c.image().image();
    out.image_id = c.image_ref();
    if (const std::string* hash = lookup(c.annotations(), kHashKey)) {
      uint64_t value = 0;
      if (absl::SimpleHexAtoi(*hash, &value)) out.hash = value;
    }
    out.state = ToState(c.state());
    out.created_at = FromNanos(c.created_at());
    p.containers.push_back(std::move(out));
  }
  std::stable_sort(pods.begin(), pods.end(), [](const container::Pod& a, const container::Pod& b) {
    return a.created_at > b.created_at;
  });
  KLOG_V(4, "Retrieved pods from runtime", "all", all);
  return pods;
}

container::ContainerStatus KubeGenericRuntimeManager::ToContainerStatus(
    const v1::ContainerStatus& s) const {
  const StringMap annotations = ToStringMap(s.annotations());
  const AnnotatedContainerInfo annotated = GetContainerInfoFromAnnotations(annotations);
  const LabeledContainerInfo labeled = GetContainerInfoFromLabels(ToStringMap(s.labels()));
  ContainerStatus out;
  out.id = MakeID(s.id());
  out.name = !labeled.container_name.empty() ? labeled.container_name : s.metadata().name();
  out.image = s.image().image();
  out.image_id = s.image_ref();
  out.image_ref = s.image_ref();
  out.hash = annotated.hash;
  out.hash_without_resources = annotated.hash_without_resources;
  out.restart_count = annotated.restart_count;
  out.state = ToState(s.state());
  if (options_.in_place_pod_vertical_scaling) out.resources = ToKubeContainerResources(s);
  out.created_at = FromNanos(s.created_at());
  if (s.state() != v1::CONTAINER_CREATED) out.started_at = FromNanos(s.started_at());
  if (s.state() == v1::CONTAINER_EXITED) {
    out.reason = s.reason();
    out.message = s.message();
    out.exit_code = s.exit_code();
    out.finished_at = FromNanos(s.finished_at());
    // The message the application wrote (terminationMessagePath), or the log tail.
    const bool fallback_to_logs =
        annotated.termination_message_policy == api::kTerminationMessageFallbackToLogsOnError &&
        out.exit_code != 0 && out.reason != "ContainerCannotRun";
    std::string msg =
        internal::ReadTerminationMessage(s, annotated.termination_message_path, fallback_to_logs);
    if (!msg.empty()) {
      if (!out.message.empty()) out.message += ": ";
      out.message += msg;
    }
  }
  out.log_path = s.log_path();
  return out;
}

absl::StatusOr<std::vector<ContainerStatus>> KubeGenericRuntimeManager::GetPodContainerStatuses(
    const std::string& uid) {
  v1::ContainerFilter filter;
  (*filter.mutable_label_selector())[kPodUIDLabel] = uid;
  absl::StatusOr<std::vector<v1::Container>> containers = runtime_.ListContainers(&filter);
  if (!containers.ok()) {
    KLOG_ERROR(containers.status(), "ListContainers error");
    return containers.status();
  }
  std::vector<ContainerStatus> out;
  for (const v1::Container& c : *containers) {
    absl::StatusOr<v1::ContainerStatusResponse> resp = runtime_.ContainerStatus(c.id(), false);
    if (absl::IsNotFound(resp.status())) continue;  // removed since the list
    if (!resp.ok()) {
      KLOG_V(4, "ContainerStatus return error", "containerID", c.id(), "err", resp.status());
      return resp.status();
    }
    if (!resp->has_status()) return absl::UnknownError("container status is nil");
    out.push_back(ToContainerStatus(resp->status()));
  }
  // Newest first; equal creation times (coarse clocks) fall back to the restart count.
  std::stable_sort(out.begin(), out.end(), [](const ContainerStatus& a, const ContainerStatus& b) {
    if (a.created_at != b.created_at) return a.created_at > b.created_at;
    return a.restart_count > b.restart_count;
  });
  return out;
}

absl::StatusOr<container::PodStatus> KubeGenericRuntimeManager::GetPodStatus(
    const std::string& uid, const std::string& name, const std::string& namespace_) {
  v1::PodSandboxFilter filter;
  (*filter.mutable_label_selector())[kPodUIDLabel] = uid;
  absl::StatusOr<std::vector<v1::PodSandbox>> sandboxes = runtime_.ListPodSandbox(&filter);
  if (!sandboxes.ok()) {
    KLOG_ERROR(sandboxes.status(), "Failed to list sandboxes for pod", "podUID", uid);
    return sandboxes.status();
  }
  std::stable_sort(sandboxes->begin(), sandboxes->end(),
                   [](const v1::PodSandbox& a, const v1::PodSandbox& b) {
                     if (a.created_at() != b.created_at()) return a.created_at() > b.created_at();
                     return a.metadata().attempt() > b.metadata().attempt();
                   });
  container::PodStatus status;
  status.id = uid;
  status.name = name;
  status.namespace_ = namespace_;
  status.timestamp = clock_.Now();
  for (size_t i = 0; i < sandboxes->size(); ++i) {
    absl::StatusOr<v1::PodSandboxStatusResponse> resp =
        runtime_.PodSandboxStatus((*sandboxes)[i].id(), false);
    if (absl::IsNotFound(resp.status())) continue;
    if (!resp.ok()) {
      KLOG_ERROR(resp.status(), "PodSandboxStatus of sandbox for pod", "podSandboxID",
                 (*sandboxes)[i].id(), "pod", FormatPod(name, namespace_, uid));
      return resp.status();
    }
    if (!resp->has_status()) return absl::UnknownError("pod sandbox status is nil");
    const v1::PodSandboxStatus& s = resp->status();
    container::SandboxStatus out;
    out.id = s.id().empty() ? (*sandboxes)[i].id() : s.id();
    out.ready = s.state() == v1::SANDBOX_READY;
    out.attempt = s.metadata().attempt();
    out.created_at = FromNanos(s.created_at());
    out.ips = internal::DeterminePodSandboxIPs(s);
    out.host_network = s.linux().namespaces().options().network() == v1::NODE;
    if (i == 0 && out.ready) status.ips = out.ips;
    status.sandbox_statuses.push_back(std::move(out));
  }
  absl::StatusOr<std::vector<ContainerStatus>> containers = GetPodContainerStatuses(uid);
  if (!containers.ok()) return containers.status();
  status.container_statuses = *std::move(containers);
  return status;
}

// ---- SyncPod ----------------------------------------------------------------------------------

bool KubeGenericRuntimeManager::DoBackOff(const api::Pod& pod, const api::Container& container,
                                          const container::PodStatus& status,
                                          std::string* message) {
  const ContainerStatus* exited = nullptr;
  for (const ContainerStatus& c : status.container_statuses) {
    if (c.name == container.name && c.state == State::kExited) {
      exited = &c;
      break;
    }
  }
  if (exited == nullptr) return false;
  KLOG_V(3, "Checking backoff for container in pod", "containerName", container.name, "pod",
         FormatPod(pod));
  // The finish time of the latest exited instance is where the back-off counts from.
  const absl::Time ts = exited->finished_at;
  const std::string key = GetStableKey(pod, container);
  if (crash_backoff_.IsInBackOffSince(key, ts)) {
    Recorder().Record(events::ContainerRef(pod, container.name), events::kWarning,
                      events::kBackOffStartContainer,
                      absl::StrCat("Back-off restarting failed container ", container.name,
                                   " in pod ", FormatPod(pod)));
    *message =
        absl::StrCat("back-off ", FormatGoDuration(crash_backoff_.Get(key)),
                     " restarting failed container=", container.name, " pod=", FormatPod(pod));
    KLOG_V(3, "Back-off restarting failed container", "err", *message);
    return true;
  }
  crash_backoff_.Next(key, ts);
  return false;
}

absl::StatusOr<std::string> KubeGenericRuntimeManager::CreatePodSandbox(const api::Pod& pod,
                                                                        uint32_t attempt,
                                                                        std::string* message) {
  absl::StatusOr<v1::PodSandboxConfig> config = GeneratePodSandboxConfig(pod, attempt);
  if (!config.ok()) {
    *message = absl::StrCat("Failed to generate sandbox config for pod \"", FormatPod(pod),
                            "\": ", config.status().message());
    KLOG_ERROR(config.status(), "Failed to generate sandbox config for pod", "pod", FormatPod(pod));
    return config.status();
  }
  std::string err;
  if (!internal::MkdirAll(config->log_directory(), 0755, &err)) {
    *message =
        absl::StrCat("Failed to create log directory for pod \"", FormatPod(pod), "\": ", err);
    KLOG_ERROR(absl::InternalError(err), "Failed to create log directory for pod", "pod",
               FormatPod(pod));
    return absl::InternalError(err);
  }
  std::string handler;
  if (options_.runtime_handler) {
    absl::StatusOr<std::string> h = options_.runtime_handler(pod);
    if (!h.ok()) {
      *message = absl::StrCat("Failed to create sandbox for pod \"", FormatPod(pod),
                              "\": ", h.status().message());
      return h.status();
    }
    handler = *std::move(h);
    if (!handler.empty()) {
      KLOG_V(2, "Running pod with runtime handler", "pod", FormatPod(pod), "runtimeHandler",
             handler);
    }
  }
  metrics::Kubelet().started_pods.Add({}).Increment();
  absl::StatusOr<std::string> id = runtime_.RunPodSandbox(*config, handler);
  if (!id.ok()) {
    metrics::Kubelet().started_pods_errors.Add({}).Increment();
    *message = absl::StrCat("Failed to create sandbox for pod \"", FormatPod(pod),
                            "\": ", GrpcErrorString(id.status()));
    KLOG_ERROR(id.status(), "Failed to create sandbox for pod", "pod", FormatPod(pod));
    Recorder().Record(events::PodRef(pod), events::kWarning, events::kFailedCreatePodSandBox,
                      absl::StrCat("Failed to create pod sandbox: ", GrpcErrorString(id.status())));
    return id.status();
  }
  return id;
}

KubeGenericRuntimeManager::StartOutcome KubeGenericRuntimeManager::StartContainer(
    const std::string& sandbox_id, const v1::PodSandboxConfig& sandbox_config,
    const api::Container& container, const api::Pod& pod, const container::PodStatus& status,
    const std::vector<std::string>& pod_ips, const std::string* ephemeral_target) {
  // Step 1: the image.
  EnsureImageResult image = image_manager_.EnsureImageExists(pod, container, &sandbox_config);
  if (!image.ok()) {
    // Upstream's startContainer: "Error: <the image error's reason>".
    Recorder().Record(events::ContainerRef(pod, container.name), events::kWarning,
                      events::kFailedToCreateContainer, absl::StrCat("Error: ", image.reason));
    return {image.reason, image.message};
  }

  // Step 2: create the container.
  int restart_count = 0;
  if (const ContainerStatus* prev = status.FindContainerStatusByName(container.name)) {
    restart_count = prev->restart_count + 1;
  } else {
    // The runtime may have lost its state (node reboot): continue after the newest N.log so
    // earlier logs are not overwritten.
    restart_count = CalcRestartCountByLogDir(
        BuildContainerLogsDirectory(options_.pod_logs_dir, pod.metadata.namespace_,
                                    pod.metadata.name, pod.metadata.uid, container.name));
  }
  container::ContainerID target;
  if (ephemeral_target != nullptr && !ephemeral_target->empty()) {
    const ContainerStatus* t = status.FindContainerStatusByName(*ephemeral_target);
    if (t == nullptr) {
      return {kErrCreateContainerConfig,
              absl::StrCat("unable to find target container ", *ephemeral_target)};
    }
    target = t->id;
  }
  absl::StatusOr<v1::ContainerConfig> config = GenerateContainerConfig(
      pod, container, restart_count, pod_ips, image.image_ref, target.empty() ? nullptr : &target);
  if (!config.ok()) {
    KLOG_V(2, "Failed to generate container config", "pod", FormatPod(pod), "containerName",
           container.name, "err", config.status());
    Recorder().Record(events::ContainerRef(pod, container.name), events::kWarning,
                      events::kFailedToCreateContainer,
                      absl::StrCat("Error: ", config.status().message()));
    return {kErrCreateContainerConfig, std::string(config.status().message())};
  }
  std::string container_type = "container";
  if (ephemeral_target != nullptr) {
    container_type = "ephemeral_container";
  } else {
    for (const api::Container& ic : pod.spec.init_containers) {
      if (ic.name == container.name) container_type = "init_container";
    }
  }
  auto& km = metrics::Kubelet();
  km.started_containers.Add({{"container_type", container_type}}).Increment();
  auto count_error = [&](const absl::Status& st) {
    km.started_containers_errors
        .Add({{"container_type", container_type}, {"code", GrpcCodeName(st)}})
        .Increment();
  };
  if (options_.pre_create_container) options_.pre_create_container(pod, container, &*config);
  absl::StatusOr<std::string> id = runtime_.CreateContainer(sandbox_id, *config, sandbox_config);
  if (!id.ok()) {
    count_error(id.status());
    KLOG_ERROR(id.status(), "CreateContainer failed", "pod", FormatPod(pod), "containerName",
               container.name);
    Recorder().Record(events::ContainerRef(pod, container.name), events::kWarning,
                      events::kFailedToCreateContainer,
                      absl::StrCat("Error: ", GrpcErrorMessage(id.status())));
    return {kErrCreateContainer, GrpcErrorMessage(id.status())};
  }
  if (options_.pre_start_container) {
    if (absl::Status s = options_.pre_start_container(pod, container, *id); !s.ok()) {
      count_error(s);
      Recorder().Record(events::ContainerRef(pod, container.name), events::kWarning,
                        events::kFailedToStartContainer,
                        absl::StrCat("Internal PreStartContainer hook failed: ", s.message()));
      return {kErrPreStartHook, std::string(s.message())};
    }
  }
  KLOG_V(2, "Created container", "pod", FormatPod(pod), "containerName", container.name,
         "containerID", *id);
  Recorder().Record(events::ContainerRef(pod, container.name), events::kNormal,
                    events::kCreatedContainer, absl::StrCat("Created container ", container.name));

  // Step 3: start it.
  if (absl::Status s = runtime_.StartContainer(*id); !s.ok()) {
    count_error(s);
    KLOG_ERROR(s, "StartContainer failed", "pod", FormatPod(pod), "containerName", container.name,
               "containerID", *id);
    Recorder().Record(events::ContainerRef(pod, container.name), events::kWarning,
                      events::kFailedToStartContainer,
                      absl::StrCat("Error: ", GrpcErrorMessage(s)));
    return {kErrRunContainer, GrpcErrorMessage(s)};
  }
  KLOG_V(2, "Started container", "pod", FormatPod(pod), "containerName", container.name,
         "containerID", *id);
  Recorder().Record(events::ContainerRef(pod, container.name), events::kNormal,
                    events::kStartedContainer, absl::StrCat("Started container ", container.name));

  // Step 4: postStart.
  if (container.lifecycle.has_value() && container.lifecycle->post_start.has_value() &&
      options_.run_lifecycle_handler) {
    const container::ContainerID cid = MakeID(*id);
    absl::Status s = options_.run_lifecycle_handler(
        cid, pod, container, *container.lifecycle->post_start, absl::InfiniteDuration());
    if (!s.ok()) {
      KLOG_ERROR(s, "Failed to execute PostStartHook", "pod", FormatPod(pod), "podUID",
                 pod.metadata.uid, "containerName", container.name, "containerID", cid.String());
      Recorder().Record(events::ContainerRef(pod, container.name), events::kWarning,
                        events::kFailedPostStartHook, std::string(s.message()));
      if (absl::Status k = KillContainer(&pod, cid, container.name, "FailedPostStartHook",
                                         kReasonFailedPostStartHook, std::nullopt, nullptr);
          !k.ok()) {
        KLOG_ERROR(k, "Failed to kill container", "pod", FormatPod(pod), "containerName",
                   container.name, "containerID", cid.String());
      }
      return {kErrPostStartHook, std::string(s.message())};
    }
  }
  return {};
}

PodSyncResult KubeGenericRuntimeManager::SyncPod(const api::Pod& pod,
                                                 const container::PodStatus& status) {
  PodSyncResult result;
  // Step 1: what to do.
  ProbeView probes{options_.liveness_failed, options_.startup_failed, options_.startup_pending};
  ResizeView resize;
  resize.allowed = options_.in_place_pod_vertical_scaling && !api::IsStaticPod(pod);
  std::optional<container::PodStatus> latest;
  if (resize.allowed) {
    // The containers' resources as the runtime reports them now.
    absl::StatusOr<container::PodStatus> s =
        GetPodStatus(status.id.empty() ? pod.metadata.uid : status.id, pod.metadata.name,
                     pod.metadata.namespace_);
    if (s.ok()) latest = *std::move(s);
    resize.latest = latest ? &*latest : nullptr;
  }
  const PodActions actions = ComputePodActions(pod, status, probes, resize);
  KLOG_V(3, "computePodActions got for pod", "podActions", actions.String(), "pod", FormatPod(pod));
  if (actions.create_sandbox) {
    if (!actions.sandbox_id.empty()) {
      KLOG_INFO("Pod sandbox changed, it will be killed and re-created.", "pod", FormatPod(pod));
      Recorder().Record(events::PodRef(pod), events::kNormal, events::kSandboxChanged,
                        "Pod sandbox changed, it will be killed and re-created.");
    } else {
      KLOG_V(4, "SyncPod received new pod, will create a sandbox for it", "pod", FormatPod(pod));
    }
  }

  // Step 2: kill the pod when its sandbox changed or nothing should run.
  if (actions.kill_pod) {
    if (actions.create_sandbox) {
      KLOG_V(4, "Stopping PodSandbox for pod, will start new one", "pod", FormatPod(pod));
    } else {
      KLOG_V(4, "Stopping PodSandbox for pod, because all other containers are dead", "pod",
             FormatPod(pod));
    }
    PodSyncResult kill = KillPodWithSyncResult(
        &pod, ConvertPodStatusToRunningPod(RuntimeName(), status), std::nullopt);
    const absl::Status err = kill.Error();
    for (SyncResult& r : kill.results) result.results.push_back(std::move(r));
    if (!err.ok()) {
      KLOG_ERROR(err, "killPodWithSyncResult failed");
      return result;
    }
    if (actions.create_sandbox) PurgeInitContainers(pod, status);
  } else {
    // Step 3: kill the containers that must not keep running.
    for (const auto& [id, info] : actions.containers_to_kill) {
      KLOG_V(3, "Killing unwanted container for pod", "containerName", info.name, "containerID",
             info.id.String(), "pod", FormatPod(pod));
      SyncResult r = NewSyncResult(SyncResult::Action::kKillContainer, info.name);
      absl::Status s =
          KillContainer(&pod, info.id, info.name, info.message, info.reason, std::nullopt, nullptr);
      if (!s.ok()) {
        Fail(r, kErrKillContainer, std::string(s.message()));
        result.results.push_back(std::move(r));
        KLOG_ERROR(s, "killContainer for pod failed", "containerName", info.name, "containerID",
                   info.id.String(), "pod", FormatPod(pod));
        return result;
      }
      result.results.push_back(std::move(r));
    }
  }

  // Keep only the newest terminated instance of each init container.
  PruneInitContainersBeforeStart(pod, status);

  std::vector<std::string> pod_ips = status.ips;
  if (pod.spec.host_network && pod_ips.empty()) pod_ips = options_.node_ips;

  // Step 4: the sandbox.
  std::string sandbox_id = actions.sandbox_id;
  if (actions.create_sandbox) {
    KLOG_V(4, "Creating PodSandbox for pod", "pod", FormatPod(pod));
    SyncResult r = NewSyncResult(SyncResult::Action::kCreatePodSandbox, FormatPod(pod));
    std::string msg;
    absl::StatusOr<std::string> id = CreatePodSandbox(pod, actions.attempt, &msg);
    if (!id.ok()) {
      Fail(r, kErrCreatePodSandbox, msg);
      result.results.push_back(std::move(r));
      KLOG_ERROR(id.status(), "CreatePodSandbox for pod failed", "pod", FormatPod(pod));
      return result;
    }
    result.results.push_back(std::move(r));
    sandbox_id = *id;
    KLOG_V(4, "Created PodSandbox for pod", "podSandboxID", sandbox_id, "pod", FormatPod(pod));
    absl::StatusOr<v1::PodSandboxStatusResponse> resp =
        runtime_.PodSandboxStatus(sandbox_id, false);
    if (!resp.ok()) {
      KLOG_ERROR(resp.status(), "Failed to get pod sandbox status; Skipping pod", "pod",
                 FormatPod(pod));
      result.sync_error = resp.status();
      return result;
    }
    if (!resp->has_status()) {
      result.sync_error = absl::UnknownError("pod sandbox status is nil");
      return result;
    }
    if (!pod.spec.host_network) {
      pod_ips = internal::DeterminePodSandboxIPs(resp->status());
      KLOG_V(4, "Determined the ip for pod after sandbox changed", "IPs", pod_ips, "pod",
             FormatPod(pod));
    }
  }

  // The sandbox config containers are created with.
  SyncResult config_result = NewSyncResult(SyncResult::Action::kConfigPodSandbox, sandbox_id);
  absl::StatusOr<v1::PodSandboxConfig> sandbox_config =
      GeneratePodSandboxConfig(pod, actions.attempt);
  if (!sandbox_config.ok()) {
    Fail(config_result, kErrConfigPodSandbox,
         absl::StrCat("GeneratePodSandboxConfig for pod \"", FormatPod(pod),
                      "\" failed: ", sandbox_config.status().message()));
    result.results.push_back(std::move(config_result));
    KLOG_ERROR(sandbox_config.status(), "GeneratePodSandboxConfig for pod failed", "pod",
               FormatPod(pod));
    return result;
  }
  result.results.push_back(std::move(config_result));

  // Starts one container; false when it failed.
  auto start = [&](const char* type_name, const api::Container& c,
                   const std::string* ephemeral_target) {
    SyncResult r = NewSyncResult(SyncResult::Action::kStartContainer, c.name);
    std::string msg;
    if (DoBackOff(pod, c, status, &msg)) {
      Fail(r, kErrCrashLoopBackOff, msg);
      result.results.push_back(std::move(r));
      KLOG_V(4, "Backing Off restarting container in pod", "containerType", type_name,
             "containerName", c.name, "pod", FormatPod(pod));
      return false;
    }
    KLOG_V(4, "Creating container in pod", "containerType", type_name, "containerName", c.name,
           "pod", FormatPod(pod));
    StartOutcome out =
        StartContainer(sandbox_id, *sandbox_config, c, pod, status, pod_ips, ephemeral_target);
    if (!out.reason.empty()) {
      Fail(r, out.reason, out.message);
      result.results.push_back(std::move(r));
      if (out.reason == kErrImagePullBackOff) {
        KLOG_V(3, "Container start failed in pod", "containerType", type_name, "containerName",
               c.name, "pod", FormatPod(pod), "containerMessage", out.message, "err", out.reason);
      } else {
        KLOG_ERROR(absl::UnknownError(absl::StrCat(out.reason, ": ", out.message)),
                   absl::StrCat(type_name, " start failed in pod"), "containerName", c.name, "pod",
                   FormatPod(pod));
      }
      return false;
    }
    result.results.push_back(std::move(r));
    return true;
  };

  // Step 5: ephemeral containers (before init containers, so debugging works while init fails).
  for (int idx : actions.ephemeral_containers_to_start) {
    const api::EphemeralContainer& ec = pod.spec.ephemeral_containers[idx];
    start("ephemeral container", ec.common, &ec.target_container_name);
  }
  // Step 6: init containers, in order; a regular init container failing to start stops the sync.
  for (int idx : actions.init_containers_to_start) {
    const api::Container& c = pod.spec.init_containers[idx];
    if (!start("init container", c, nullptr)) {
      if (api::IsRestartableInitContainer(c)) {
        KLOG_V(4, "Failed to start the restartable init container for the pod, skipping",
               "initContainerName", c.name, "pod", FormatPod(pod));
        continue;
      }
      KLOG_V(4, "Failed to initialize the pod, as the init container failed to start, aborting",
             "initContainerName", c.name, "pod", FormatPod(pod));
      return result;
    }
    KLOG_V(4, "Completed init container for pod", "containerName", c.name, "pod", FormatPod(pod));
  }
  // Step 7: resize running containers in place.
  if (resize.allowed && (!actions.containers_to_update.empty() || actions.update_pod_resources)) {
    DoPodResizeAction(pod, actions);
  }
  // Step 8: regular containers.
  for (int idx : actions.containers_to_start) {
    start("container", pod.spec.containers[idx], nullptr);
  }
  return result;
}

// ---- In-place resize ---------------------------------------------------------------------------

void KubeGenericRuntimeManager::DoPodResizeAction(const api::Pod& pod, const PodActions& changes) {
  const std::string& name = pod.metadata.name;
  auto updates = [&](const char* resource) -> const std::vector<ContainerToUpdate>& {
    static const std::vector<ContainerToUpdate> kNone;
    auto it = changes.containers_to_update.find(resource);
    return it == changes.containers_to_update.end() ? kNone : it->second;
  };
  const bool pod_cgroup = options_.pod_cgroup_desired && options_.get_pod_cgroup_config &&
                          options_.set_pod_cgroup_config && options_.pod_cgroup_memory_usage;
  if (!pod_cgroup) {
    // No pod cgroup to manage (no cgroupsPerQOS): only the containers change.
    for (const char* resource : {api::kResourceMemory, api::kResourceCPU}) {
      if (updates(resource).empty()) continue;
      if (absl::Status st = UpdatePodContainerResources(pod, resource, updates(resource));
          !st.ok()) {
        KLOG_ERROR(st, "updatePodContainerResources failed", "pod", FormatPod(pod), "resource",
                   resource);
        return;
      }
    }
    return;
  }
  const PodCgroupConfig desired = options_.pod_cgroup_desired(pod);
  // One resource of the pod cgroup: the CPU quota ("limit") or shares, or the memory limit.
  auto set_pod_cgroup = [&](const std::string& resource, bool limit) {
    PodCgroupConfig config;
    if (resource == api::kResourceCPU) {
      config.cpu_period = desired.cpu_period;
      if (limit) {
        config.cpu_quota = desired.cpu_quota;
      } else {
        config.cpu_shares = desired.cpu_shares;
      }
    } else {
      config.memory = desired.memory;
    }
    absl::Status st = options_.set_pod_cgroup_config(pod, resource, config);
    if (!st.ok()) {
      KLOG_ERROR(st, "Failed to set cgroup config", "resource", resource, "pod", name);
    }
    return st;
  };
  // Growth of the pod cgroup before the containers, shrinking after them; the first error
  // stops (the next sync retries what is left).
  auto resize_containers = [&](const char* resource, int64_t current_limit, int64_t new_limit,
                               int64_t current_request, int64_t new_request) -> absl::Status {
    if (new_limit > current_limit) {
      if (absl::Status st = set_pod_cgroup(resource, true); !st.ok()) return st;
    }
    if (new_request > current_request) {
      if (absl::Status st = set_pod_cgroup(resource, false); !st.ok()) return st;
    }
    if (!updates(resource).empty()) {
      if (absl::Status st = UpdatePodContainerResources(pod, resource, updates(resource));
          !st.ok()) {
        KLOG_ERROR(st, "updatePodContainerResources failed", "pod", FormatPod(pod), "resource",
                   resource);
        return st;
      }
    }
    absl::Status err;
    if (new_limit < current_limit) err = set_pod_cgroup(resource, true);
    if (new_request < current_request) {
      if (absl::Status st = set_pod_cgroup(resource, false); !st.ok()) return st;
    }
    return err;
  };
  if (!updates(api::kResourceMemory).empty() || changes.update_pod_resources) {
    if (!desired.memory) {
      KLOG_ERROR(absl::OkStatus(), "podResources.Memory is nil", "pod", name);
      return;
    }
    absl::StatusOr<PodCgroupConfig> current =
        options_.get_pod_cgroup_config(pod, api::kResourceMemory);
    if (current.ok() && !current->memory) {
      current = absl::InternalError("the pod cgroup's memory limit is unknown");
    }
    if (!current.ok()) {
      KLOG_ERROR(current.status(), "GetPodCgroupConfig for memory failed", "pod", name);
      return;
    }
    absl::StatusOr<int64_t> usage = options_.pod_cgroup_memory_usage(pod);
    if (!usage.ok()) {
      KLOG_ERROR(usage.status(), "GetPodCgroupMemoryUsage failed", "pod", name);
      return;
    }
    if (static_cast<uint64_t>(*usage) >= static_cast<uint64_t>(*desired.memory)) {
      KLOG_ERROR(absl::OkStatus(),
                 "Aborting attempt to set pod memory limit less than current memory usage", "pod",
                 name);
      return;
    }
    if (!resize_containers(api::kResourceMemory, *current->memory, *desired.memory, 0, 0).ok()) {
      return;
    }
  }
  if (!updates(api::kResourceCPU).empty() || changes.update_pod_resources) {
    if (!desired.cpu_quota || !desired.cpu_shares) {
      KLOG_ERROR(absl::OkStatus(), "podResources.CPUQuota or podResources.CPUShares is nil", "pod",
                 name);
      return;
    }
    absl::StatusOr<PodCgroupConfig> current =
        options_.get_pod_cgroup_config(pod, api::kResourceCPU);
    if (current.ok() && (!current->cpu_quota || !current->cpu_shares)) {
      current = absl::InternalError("the pod cgroup's CPU settings are unknown");
    }
    if (!current.ok()) {
      KLOG_ERROR(current.status(), "GetPodCgroupConfig for CPU failed", "pod", name);
      return;
    }
    (void)resize_containers(api::kResourceCPU, *current->cpu_quota, *desired.cpu_quota,
                            *current->cpu_shares, *desired.cpu_shares);
  }
}

absl::Status KubeGenericRuntimeManager::UpdatePodContainerResources(
    const api::Pod& pod, const std::string& resource,
    const std::vector<ContainerToUpdate>& updates) {
  KLOG_V(5, "Updating container resources", "pod", api::PodKey(pod));
  for (const ContainerToUpdate& u : updates) {
    if (u.container_index < 0 ||
        u.container_index >= static_cast<int>(pod.spec.containers.size()) || !u.current) {
      continue;
    }
    api::Container c = pod.spec.containers[u.container_index];
    // The resource being updated at its desired value, the other at its last known one.
    const bool memory = resource == api::kResourceMemory;
    const ContainerResourceValues& mem = memory ? u.desired : *u.current;
    const ContainerResourceValues& cpu = memory ? *u.current : u.desired;
    c.resources.limits = {
        {api::kResourceCPU, api::Quantity::FromMilli(cpu.cpu_limit)},
        {api::kResourceMemory,
         api::Quantity::FromValue(mem.memory_limit, api::Quantity::Format::kBinarySI)}};
    c.resources.requests = {
        {api::kResourceCPU, api::Quantity::FromMilli(cpu.cpu_request)},
        {api::kResourceMemory,
         api::Quantity::FromValue(mem.memory_request, api::Quantity::Format::kBinarySI)}};
    if (absl::Status st = UpdateContainerResources(pod, c, u.id); !st.ok()) {
      // Later updates depend on this one's order: stop here, a later sync retries.
      KLOG_ERROR(st, "updateContainerResources failed", "container", c.name, "cID", u.id.String(),
                 "pod", FormatPod(pod), "resourceName", resource);
      return st;
    }
    // Accepted by the runtime: now the container's configuration as far as the kubelet knows
    // (the runtime's own report may lag).
    if (memory) {
      u.current->memory_limit = u.desired.memory_limit;
      u.current->memory_request = u.desired.memory_request;
    } else {
      u.current->cpu_limit = u.desired.cpu_limit;
      u.current->cpu_request = u.desired.cpu_request;
    }
  }
  return absl::OkStatus();
}

absl::Status KubeGenericRuntimeManager::UpdateContainerResources(const api::Pod& pod,
                                                                 const api::Container& container,
                                                                 const container::ContainerID& id) {
  v1::ContainerResources resources;
  *resources.mutable_linux() =
      GenerateLinuxContainerResources(pod, container, MakeResourceSettings());
  absl::Status st = runtime_.UpdateContainerResources(id.id, resources);
  if (!st.ok()) KLOG_ERROR(st, "UpdateContainerResources failed", "container", id.String());
  return st;
}

void KubeGenericRuntimeManager::ForgetPod(const std::string& uid) {
  const std::string needle = absl::StrCat("_", uid, "_");
  crash_backoff_.DeleteIf([&](std::string_view id) { return absl::StrContains(AV(id), needle); });
  image_manager_.ForgetPod(uid);
}

void KubeGenericRuntimeManager::BackOffGC() {
  crash_backoff_.GC();
  image_manager_.GC();
}

}  // namespace kubelet::kuberuntime
