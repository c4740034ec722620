// Container-level operations of KubeGenericRuntimeManager (upstream kuberuntime_container.go,
// kuberuntime_termination_order.go and the kubelet's makeMounts/ensureHostsFile).
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/cancellation.h"
#include "common/guarded.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/kuberuntime/dns.h"
#include "kubelet/kuberuntime/helpers.h"
#include "kubelet/kuberuntime/kuberuntime_manager.h"
#include "kubelet/kuberuntime/labels.h"
#include "kubelet/kuberuntime/manager_internal.h"
#include "kubelet/kuberuntime/resources.h"

namespace kubelet::kuberuntime {

namespace v1 = ::runtime::v1;
using container::ContainerStatus;
using container::PodSyncResult;
using container::State;
using container::SyncResult;

namespace {

constexpr char kEtcHostsPath[] = "/etc/hosts";
constexpr char kManagedHostsHeader[] = "# Kubernetes-managed hosts file.\n";
constexpr char kManagedHostsHeaderWithHostNetwork[] =
    "# Kubernetes-managed hosts file (host network).\n";

std::string MakeUID() {
  static thread_local std::mt19937 gen(std::random_device{}());
  return absl::StrFormat("%08x", static_cast<uint32_t>(gen()));
}

bool IsIP(const std::string& s) {
  unsigned char buf[sizeof(struct in6_addr)];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

// The last `max` bytes of a file.
absl::StatusOr<std::string> ReadAtMost(const std::string& path, size_t max) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::Status(errno == ENOENT ? absl::StatusCode::kNotFound : absl::StatusCode::kInternal,
                        absl::StrCat("open ", path, ": ", std::strerror(errno)));
  }
  struct stat st;
  std::string out;
  if (fstat(fd, &st) == 0 && st.st_size > static_cast<off_t>(max)) {
    lseek(fd, st.st_size - static_cast<off_t>(max), SEEK_SET);
  }
  char buf[4096];
  while (out.size() < max) {
    ssize_t n = read(fd, buf, std::min(sizeof(buf), max - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

// The content of the last `lines` CRI log lines ("<time> <stream> <P|F> <content>"), at most
// `max_bytes` from the end.
std::string TailCRILog(const std::string& path, int lines, size_t max_bytes) {
  constexpr size_t kWindow = 64 * 1024;
  absl::StatusOr<std::string> data = ReadAtMost(path, kWindow);
  if (!data.ok()) {
    return absl::StrCat("Error on reading termination message from logs: ",
                        data.status().message());
  }
  std::vector<absl::string_view> all = absl::StrSplit(*data, '\n');
  if (!all.empty() && all.back().empty()) all.pop_back();
  struct stat st;
  // The window may start mid-line; drop that fragment unless it is the file's start.
  if (!all.empty() && stat(path.c_str(), &st) == 0 && static_cast<size_t>(st.st_size) > kWindow) {
    all.erase(all.begin());
  }
  const size_t first = all.size() > static_cast<size_t>(lines) ? all.size() - lines : 0;
  std::string out;
  for (size_t i = first; i < all.size(); ++i) {
    std::vector<absl::string_view> parts = absl::StrSplit(all[i], absl::MaxSplits(' ', 3));
    if (parts.size() < 4) continue;
    absl::StrAppend(&out, parts[3]);
    if (parts[2] != "P") out.push_back('\n');
  }
  if (out.size() > max_bytes) out = out.substr(out.size() - max_bytes);
  return out;
}

const api::Container* GetContainerSpec(const api::Pod& pod, const std::string& name) {
  for (const api::Container& c : pod.spec.containers) {
    if (c.name == name) return &c;
  }
  for (const api::Container& c : pod.spec.init_containers) {
    if (c.name == name) return &c;
  }
  for (const api::EphemeralContainer& c : pod.spec.ephemeral_containers) {
    if (c.common.name == name) return &c.common;
  }
  return nullptr;
}

bool HasRestartableInitContainer(const api::Pod& pod) {
  return std::any_of(pod.spec.init_containers.begin(), pod.spec.init_containers.end(),
                     [](const api::Container& c) { return api::IsRestartableInitContainer(c); });
}

bool WriteFile(const std::string& path, const std::string& content, mode_t mode, std::string* err) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) {
    *err = absl::StrCat("open ", path, ": ", std::strerror(errno));
    return false;
  }
  size_t off = 0;
  while (off < content.size()) {
    ssize_t n = write(fd, content.data() + off, content.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *err = absl::StrCat("write ", path, ": ", std::strerror(errno));
      close(fd);
      return false;
    }
    off += static_cast<size_t>(n);
  }
  close(fd);
  return true;
}

}  // namespace

namespace internal {

bool RemoveAll(const std::string& path, std::string* err) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) {
    if (err != nullptr) *err = absl::StrCat("remove ", path, ": ", ec.message());
    return false;
  }
  return true;
}

std::vector<std::string> DeterminePodSandboxIPs(const v1::PodSandboxStatus& status) {
  std::vector<std::string> ips;
  if (!status.has_network()) return ips;
  if (!status.network().ip().empty()) {
    if (!IsIP(status.network().ip())) {
      KLOG_INFO("Pod Sandbox reported an unparseable primary IP", "IP", status.network().ip());
      return {};
    }
    ips.push_back(status.network().ip());
  }
  for (const v1::PodIP& ip : status.network().additional_ips()) {
    if (!IsIP(ip.ip())) {
      KLOG_INFO("Pod Sandbox reported an unparseable additional IP", "IP", ip.ip());
      return {};
    }
    ips.push_back(ip.ip());
  }
  return ips;
}

std::string ReadTerminationMessage(const v1::ContainerStatus& status,
                                   const std::string& termination_message_path,
                                   bool fallback_to_logs) {
  bool check_logs = fallback_to_logs;
  std::string message;
  if (!termination_message_path.empty()) {
    for (const v1::Mount& m : status.mounts()) {
      if (m.container_path() != termination_message_path) continue;
      absl::StatusOr<std::string> data = ReadAtMost(m.host_path(), kMaxTerminationMessageLength);
      if (!data.ok()) {
        if (absl::IsNotFound(data.status())) break;
        return absl::StrCat("Error on reading termination log ", m.host_path(), ": ",
                            data.status().message());
      }
      message = *std::move(data);
      check_logs = fallback_to_logs && message.empty();
      break;
    }
  }
  if (check_logs && !status.log_path().empty()) {
    message = TailCRILog(status.log_path(), kMaxTerminationMessageLogLines,
                         kMaxTerminationMessageLogLength);
  }
  return message;
}

std::string HostsEntriesFromHostAliases(const std::vector<api::HostAlias>& aliases) {
  if (aliases.empty()) return "";
  std::string out = "\n# Entries added by HostAliases.\n";
  for (const api::HostAlias& a : aliases) {
    absl::StrAppend(&out, a.ip, "\t", absl::StrJoin(a.hostnames, "\t"), "\n");
  }
  return out;
}

std::string ManagedHostsFileContent(const std::vector<std::string>& ips,
                                    const std::string& hostname, const std::string& domain,
                                    const std::vector<api::HostAlias>& aliases) {
  std::string out = kManagedHostsHeader;
  out += "127.0.0.1\tlocalhost\n";
  out += "::1\tlocalhost ip6-localhost ip6-loopback\n";
  out += "fe00::0\tip6-localnet\n";
  out += "fe00::0\tip6-mcastprefix\n";
  out += "fe00::1\tip6-allnodes\n";
  out += "fe00::2\tip6-allrouters\n";
  for (const std::string& ip : ips) {
    if (!domain.empty()) {
      absl::StrAppend(&out, ip, "\t", hostname, ".", domain, "\t", hostname, "\n");
    } else {
      absl::StrAppend(&out, ip, "\t", hostname, "\n");
    }
  }
  out += HostsEntriesFromHostAliases(aliases);
  return out;
}

}  // namespace internal

// ---- Termination ordering (sidecars stop after the main containers, in reverse order) --------

class KubeGenericRuntimeManager::TerminationOrdering {
 public:
  TerminationOrdering(const api::Pod& pod, const std::vector<std::string>& running) {
    const std::set<std::string> is_running(running.begin(), running.end());
    std::vector<std::string> mains;
    absl::MutexLock lock(&mu_);
    for (const api::Container& c : pod.spec.containers) {
      terminated_[c.name] = is_running.count(c.name) == 0;
      mains.push_back(c.name);
    }
    std::string previous_sidecar;
    for (auto it = pod.spec.init_containers.rbegin(); it != pod.spec.init_containers.rend(); ++it) {
      terminated_[it->name] = is_running.count(it->name) == 0;
      if (!api::IsRestartableInitContainer(*it)) continue;
      std::vector<std::string>& pre = prereqs_[it->name];
      pre = mains;
      if (!previous_sidecar.empty()) pre.push_back(previous_sidecar);
      previous_sidecar = it->name;
    }
  }

  // Waits (real time) until every container that must stop before `name` did, or `grace`
  // seconds passed. Returns the seconds waited.
  double WaitForTurn(const std::string& name, int64_t grace) {
    if (grace <= 0) return 0;
    auto it = prereqs_.find(name);
    if (it == prereqs_.end() || it->second.empty()) return 0;
    const absl::Time start = absl::Now();
    struct Args {
      TerminationOrdering* self;
      const std::vector<std::string>* names;
    } args{this, &it->second};
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(
                             +[](Args* a) {
                               for (const std::string& n : *a->names) {
                                 auto t = a->self->terminated_.find(n);
                                 if (t != a->self->terminated_.end() && !t->second) return false;
                               }
                               return true;
                             },
                             &args),
                         absl::Seconds(grace));
    return absl::ToDoubleSeconds(absl::Now() - start);
  }

  void ContainerTerminated(const std::string& name) {
    absl::MutexLock lock(&mu_);
    if (auto it = terminated_.find(name); it != terminated_.end()) it->second = true;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, bool> terminated_;                   // guarded by mu_
  std::map<std::string, std::vector<std::string>> prereqs_;  // immutable after construction
};

// ---- Container config -----------------------------------------------------------------------

absl::StatusOr<std::vector<v1::Mount>> KubeGenericRuntimeManager::MakeMounts(
    const api::Pod& pod, const api::Container& container, const std::vector<std::string>& pod_ips) {
  std::vector<v1::Mount> mounts;
  if (options_.container_mounts) {
    absl::StatusOr<std::vector<v1::Mount>> vols = options_.container_mounts(pod, container);
    if (!vols.ok()) return vols.status();
    mounts = *std::move(vols);
  }
  const std::string pod_dir = absl::StrCat(options_.root_dir, "/pods/", pod.metadata.uid);

  // /etc/hosts, unless the container mounts something there itself.
  bool mount_hosts = options_.manage_etc_hosts && !pod_ips.empty();
  for (const api::VolumeMount& vm : container.volume_mounts) {
    if (vm.mount_path == kEtcHostsPath) mount_hosts = false;
  }
  for (const v1::Mount& m : mounts) {
    if (m.container_path() == kEtcHostsPath) mount_hosts = false;
  }
  if (mount_hosts) {
    absl::StatusOr<PodHostname> hn = GeneratePodHostNameAndDomain(pod, options_.cluster_domain);
    if (!hn.ok()) return hn.status();
    std::string content;
    if (pod.spec.host_network) {
      std::ifstream in(kEtcHostsPath);
      if (!in) return absl::InternalError(absl::StrCat("open ", kEtcHostsPath, ": failed"));
      std::stringstream ss;
      ss << in.rdbuf();
      content = absl::StrCat(kManagedHostsHeaderWithHostNetwork, ss.str(),
                             internal::HostsEntriesFromHostAliases(pod.spec.host_aliases));
    } else {
      content = internal::ManagedHostsFileContent(pod_ips, hn->hostname, hn->domain,
                                                  pod.spec.host_aliases);
    }
    std::string err;
    const std::string hosts_path = absl::StrCat(pod_dir, "/etc-hosts");
    if (!internal::MkdirAll(pod_dir, 0750, &err) || !WriteFile(hosts_path, content, 0644, &err)) {
      return absl::InternalError(err);
    }
    v1::Mount& m = mounts.emplace_back();
    m.set_host_path(hosts_path);
    m.set_container_path(kEtcHostsPath);
  }

  // The termination-message file: a fresh file per instance, bound at terminationMessagePath.
  if (!container.termination_message_path.empty()) {
    const std::string dir = absl::StrCat(pod_dir, "/containers/", container.name);
    std::string err;
    if (!internal::MkdirAll(dir, 0750, &err)) {
      KLOG_ERROR(absl::InternalError(err), "Error on creating dir", "path", dir);
    } else {
      const std::string path = absl::StrCat(dir, "/", MakeUID());
      if (!WriteFile(path, "", 0666, &err)) {
        KLOG_ERROR(absl::InternalError(err), "Error on creating termination-log file", "path",
                   path);
      } else {
        if (chmod(path.c_str(), 0666) != 0) {
          KLOG_ERROR(absl::InternalError(std::strerror(errno)),
                     "Unable to set termination-log file permissions", "path", path);
        }
        v1::Mount& m = mounts.emplace_back();
        m.set_host_path(path);
        m.set_container_path(container.termination_message_path);
      }
    }
  }
  return mounts;
}

absl::StatusOr<v1::ContainerConfig> KubeGenericRuntimeManager::GenerateContainerConfig(
    const api::Pod& pod, const api::Container& container, int restart_count,
    const std::vector<std::string>& pod_ips, const std::string& image_ref,
    const container::ContainerID* ns_target) {
  absl::StatusOr<std::vector<EnvVar>> envs =
      MakeEnvironmentVariables(pod, container, pod_ips, MakeEnvContext());
  if (!envs.ok()) return envs.status();

  // The image's user, for runAsNonRoot and the default run_as_user.
  std::optional<int64_t> image_uid = 0;
  std::string image_user;
  v1::ImageSpec spec;
  spec.set_image(container.image);
  absl::StatusOr<v1::ImageStatusResponse> image_status = images_.ImageStatus(spec, false);
  if (!image_status.ok()) return image_status.status();
  if (image_status->has_image()) {
    if (image_status->image().has_uid()) {
      image_uid = image_status->image().uid().value();
    } else if (!image_status->image().username().empty()) {
      image_uid.reset();
      image_user = image_status->image().username();
    }
  }
  if (absl::Status s = VerifyRunAsNonRoot(pod, container, image_uid, image_user); !s.ok()) {
    return s;
  }

  auto [command, args] = ExpandContainerCommandAndArgs(container, *envs);
  const std::string log_dir =
      BuildContainerLogsDirectory(options_.pod_logs_dir, pod.metadata.namespace_, pod.metadata.name,
                                  pod.metadata.uid, container.name);
  std::string err;
  if (!internal::MkdirAll(log_dir, 0755, &err)) {
    return absl::InternalError(absl::StrCat("create container log directory for container ",
                                            container.name, " failed: ", err));
  }

  v1::ContainerConfig config;
  config.mutable_metadata()->set_name(container.name);
  config.mutable_metadata()->set_attempt(static_cast<uint32_t>(restart_count));
  config.mutable_image()->set_image(image_ref);
  for (std::string& c : command) config.add_command(std::move(c));
  for (std::string& a : args) config.add_args(std::move(a));
  config.set_working_dir(container.working_dir);
  for (const auto& [k, v] : NewContainerLabels(container, pod)) {
    (*config.mutable_labels())[k] = v;
  }
  ContainerResources res;
  if (options_.container_resources) {
    absl::StatusOr<ContainerResources> r = options_.container_resources(pod, container);
    if (!r.ok()) return r.status();
    res = *std::move(r);
  }
  for (const auto& [k, v] : NewContainerAnnotations(
           container, pod, restart_count, StringMap(res.annotations.begin(), res.annotations.end()),
           options_.in_place_pod_vertical_scaling)) {
    (*config.mutable_annotations())[k] = v;
  }
  absl::StatusOr<std::vector<v1::Mount>> mounts = MakeMounts(pod, container, pod_ips);
  if (!mounts.ok()) return mounts.status();
  for (v1::Mount& m : res.mounts) *config.add_mounts() = std::move(m);
  for (v1::Mount& m : *mounts) *config.add_mounts() = std::move(m);
  for (v1::Device& d : res.devices) *config.add_devices() = std::move(d);
  for (const std::string& name : res.cdi_devices) config.add_cdi_devices()->set_name(name);
  config.set_log_path(BuildContainerLogsPath(container.name, restart_count));
  config.set_stdin(container.stdin_);
  config.set_stdin_once(container.stdin_once);
  config.set_tty(container.tty);

  SecurityOptions sec{absl::StrCat(options_.root_dir, "/seccomp"), options_.seccomp_default};
  absl::StatusOr<v1::LinuxContainerSecurityContext> sc =
      GenerateContainerSecurityContext(pod, container, image_uid, image_user, sec);
  if (!sc.ok()) return sc.status();
  v1::LinuxContainerConfig* lc = config.mutable_linux();
  *lc->mutable_security_context() = *std::move(sc);
  if (ns_target != nullptr && lc->security_context().namespace_options().pid() == v1::CONTAINER) {
    lc->mutable_security_context()->mutable_namespace_options()->set_pid(v1::TARGET);
    lc->mutable_security_context()->mutable_namespace_options()->set_target_id(ns_target->id);
  }
  *lc->mutable_resources() =
      GenerateLinuxContainerResources(pod, container, MakeResourceSettings());

  for (const auto& [k, v] : res.envs) {
    v1::KeyValue* kv = config.add_envs();
    kv->set_key(k);
    kv->set_value(v);
  }
  for (const EnvVar& e : *envs) {
    v1::KeyValue* kv = config.add_envs();
    kv->set_key(e.name);
    kv->set_value(e.value);
  }
  return config;
}

// ---- Killing ----------------------------------------------------------------------------------

int64_t SetTerminationGracePeriod(const api::Pod& pod, const api::Container& container,
                                  const std::string& reason) {
  if (pod.metadata.deletion_grace_period_seconds.has_value()) {
    return *pod.metadata.deletion_grace_period_seconds;
  }
  if (pod.spec.termination_grace_period_seconds.has_value()) {
    if (reason == kReasonStartupProbe && container.startup_probe.has_value() &&
        container.startup_probe->termination_grace_period_seconds.has_value()) {
      return *container.startup_probe->termination_grace_period_seconds;
    }
    if (reason == kReasonLivenessProbe && container.liveness_probe.has_value() &&
        container.liveness_probe->termination_grace_period_seconds.has_value()) {
      return *container.liveness_probe->termination_grace_period_seconds;
    }
    return *pod.spec.termination_grace_period_seconds;
  }
  return kMinimumGracePeriodSeconds;
}

int64_t KubeGenericRuntimeManager::ExecutePreStopHook(const api::Pod& pod,
                                                      const container::ContainerID& id,
                                                      const api::Container& spec, int64_t grace) {
  if (!options_.run_lifecycle_handler) return 0;
  KLOG_V(3, "Running preStop hook", "pod", FormatPod(pod), "podUID", pod.metadata.uid,
         "containerName", spec.name, "containerID", id.String());
  const absl::Time start = clock_.Now();
  absl::Status s = options_.run_lifecycle_handler(id, pod, spec, *spec.lifecycle->pre_stop,
                                                  absl::Seconds(grace));
  if (!s.ok()) {
    KLOG_ERROR(s, "PreStop hook failed", "pod", FormatPod(pod), "podUID", pod.metadata.uid,
               "containerName", spec.name, "containerID", id.String());
    Recorder().Record(events::ContainerRef(pod, spec.name), events::kWarning,
                      events::kFailedPreStopHook, std::string(s.message()));
  } else {
    KLOG_V(3, "PreStop hook completed", "pod", FormatPod(pod), "containerName", spec.name,
           "containerID", id.String());
  }
  const int64_t took = absl::ToInt64Seconds(clock_.Now() - start);
  return std::clamp<int64_t>(took, 0, grace);
}

absl::Status KubeGenericRuntimeManager::KillContainer(const api::Pod* pod,
                                                      const container::ContainerID& id,
                                                      const std::string& name, std::string message,
                                                      const std::string& reason,
                                                      std::optional<int64_t> grace_override,
                                                      TerminationOrdering* ordering) {
  api::Pod restored_pod;
  api::Container restored_container;
  const api::Container* spec = nullptr;
  if (pod != nullptr) {
    spec = GetContainerSpec(*pod, name);
    if (spec == nullptr) {
      return absl::NotFoundError(absl::StrCat(
          "failed to get containerSpec \"", name, "\" (id=\"", id.String(), "\") in pod \"",
          FormatPod(*pod), "\" when killing container for reason \"", message, "\""));
    }
  } else {
    // The spec is gone (kubelet restarted, pod deleted): rebuild what killing needs from the
    // container's labels and annotations.
    absl::StatusOr<v1::ContainerStatusResponse> resp = runtime_.ContainerStatus(id.id, false);
    if (!resp.ok()) return resp.status();
    if (!resp->has_status()) return absl::UnknownError("container status is nil");
    const LabeledContainerInfo l = GetContainerInfoFromLabels(ToStringMap(resp->status().labels()));
    const AnnotatedContainerInfo a =
        GetContainerInfoFromAnnotations(ToStringMap(resp->status().annotations()));
    restored_pod.metadata.uid = l.pod_uid;
    restored_pod.metadata.name = l.pod_name;
    restored_pod.metadata.namespace_ = l.pod_namespace;
    restored_pod.metadata.deletion_grace_period_seconds = a.pod_deletion_grace_period;
    restored_pod.spec.termination_grace_period_seconds = a.pod_termination_grace_period;
    restored_container.name = l.container_name.empty() ? name : l.container_name;
    restored_container.ports = a.container_ports;
    restored_container.termination_message_path = a.termination_message_path;
    if (a.pre_stop_handler.has_value()) {
      restored_container.lifecycle = api::Lifecycle{};
      restored_container.lifecycle->pre_stop = a.pre_stop_handler;
    }
    pod = &restored_pod;
    spec = &restored_container;
  }

  int64_t grace = SetTerminationGracePeriod(*pod, *spec, reason);
  if (message.empty()) {
    message = absl::StrCat("Stopping container ", spec->name);
    KLOG_V(2, message, "pod", FormatPod(*pod), "containerName", name, "containerID", id.String());
  } else {
    // A kill with a cause (failed liveness/startup probe, changed definition) is what upstream
    // records as a "Killing" event: log it at the default level.
    KLOG_INFO(message, "pod", FormatPod(*pod), "containerName", name, "containerID", id.String(),
              "reason", "Killing");
  }
  Recorder().Record(events::ContainerRef(*pod, spec->name), events::kNormal,
                    events::kKillingContainer, message);
  if (grace_override.has_value()) {
    grace = *grace_override;
    KLOG_V(3, "Killing container with a grace period override", "pod", FormatPod(*pod), "podUID",
           pod->metadata.uid, "containerName", name, "containerID", id.String(), "gracePeriod",
           grace);
  }
  if (spec->lifecycle.has_value() && spec->lifecycle->pre_stop.has_value() && grace > 0) {
    grace -= ExecutePreStopHook(*pod, id, *spec, grace);
  }
  if (ordering != nullptr && grace > 0) {
    grace -= static_cast<int64_t>(ordering->WaitForTurn(name, grace));
  }
  grace = std::max(grace, kMinimumGracePeriodSeconds);
  KLOG_V(2, "Killing container with a grace period", "pod", FormatPod(*pod), "podUID",
         pod->metadata.uid, "containerName", name, "containerID", id.String(), "gracePeriod",
         grace);
  absl::Status s = runtime_.StopContainer(id.id, grace);
  if (!s.ok() && !absl::IsNotFound(s)) {
    KLOG_ERROR(s, "Container termination failed with gracePeriod", "pod", FormatPod(*pod),
               "containerName", name, "containerID", id.String(), "gracePeriod", grace);
    return s;
  }
  KLOG_V(3, "Container exited normally", "pod", FormatPod(*pod), "containerName", name,
         "containerID", id.String());
  if (ordering != nullptr) ordering->ContainerTerminated(name);
  return absl::OkStatus();
}

std::vector<SyncResult> KubeGenericRuntimeManager::KillContainersWithSyncResult(
    const api::Pod* pod, const container::Pod& running, std::optional<int64_t> grace_override) {
  const size_t n = running.containers.size();
  std::vector<SyncResult> results(n);
  std::unique_ptr<TerminationOrdering> ordering;
  if (pod != nullptr && HasRestartableInitContainer(*pod)) {
    std::vector<std::string> names;
    for (const container::Container& c : running.containers) names.push_back(c.name);
    ordering = std::make_unique<TerminationOrdering>(*pod, names);
  }
  auto kill_one = [&](size_t i) {
    const container::Container& c = running.containers[i];
    results[i] = internal::NewSyncResult(SyncResult::Action::kKillContainer, c.name);
    absl::Status s;
    // Each kill runs on a thread of its own: a throw fails this kill, not the process.
    std::string thrown;
    if (!RunGuarded(
            "kill container",
            [&] {
              s = KillContainer(pod, c.id, c.name, "", kReasonUnknown, grace_override,
                                ordering.get());
            },
            &thrown)) {
      s = absl::InternalError(absl::StrCat("killing the container threw: ", thrown));
    }
    if (!s.ok()) {
      internal::Fail(results[i], kErrKillContainer, std::string(s.message()));
      KLOG_ERROR(s, "Kill container failed", "pod",
                 absl::StrCat(running.namespace_, "/", running.name), "podUID", running.id,
                 "containerName", c.name, "containerID", c.id.String());
    }
  };
  if (n == 1) {
    kill_one(0);
    return results;
  }
  // One thread per container: with sidecar ordering, later containers wait for earlier ones.
  // Each thread works under the caller's cancellation (a shorter grace period cancels the
  // termination in flight); the caller outlives them, so they borrow it.
  Cancellation* parent = CurrentCancellation();
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    threads.emplace_back([&kill_one, parent, i] {
      ScopedCancellation scope(
          std::shared_ptr<Cancellation>(std::shared_ptr<Cancellation>(), parent));
      kill_one(i);
    });
  }
  for (std::thread& t : threads) t.join();
  return results;
}

PodSyncResult KubeGenericRuntimeManager::KillPodWithSyncResult(
    const api::Pod* pod, const container::Pod& running, std::optional<int64_t> grace_override) {
  PodSyncResult result;
  result.results = KillContainersWithSyncResult(pod, running, grace_override);
  // Stop every sandbox of the pod; GC removes them later.
  SyncResult r = internal::NewSyncResult(SyncResult::Action::kKillPodSandbox, running.id);
  for (const container::Container& s : running.sandboxes) {
    absl::Status st = runtime_.StopPodSandbox(s.id.id);
    if (!st.ok() && !absl::IsNotFound(st)) {
      internal::Fail(r, kErrKillPodSandbox, GrpcErrorString(st));
      KLOG_ERROR(st, "Failed to stop sandbox", "podSandboxID", s.id.id);
    }
  }
  result.results.push_back(std::move(r));
  return result;
}

absl::Status KubeGenericRuntimeManager::KillPod(const api::Pod* pod, const container::Pod& running,
                                                std::optional<int64_t> grace_period_override) {
  return KillPodWithSyncResult(pod, running, grace_period_override).Error();
}

// ---- Removal ----------------------------------------------------------------------------------

absl::Status KubeGenericRuntimeManager::RemoveContainer(const std::string& id) {
  KLOG_V(4, "Removing container", "containerID", id);
  absl::StatusOr<v1::ContainerStatusResponse> resp = runtime_.ContainerStatus(id, false);
  if (!resp.ok()) {
    if (absl::IsNotFound(resp.status())) return absl::OkStatus();
    return absl::Status(resp.status().code(), absl::StrCat("failed to get container status \"", id,
                                                           "\": ", resp.status().message()));
  }
  // The log and its rotated siblings (<log>.<timestamp>, <log>.<timestamp>.gz) go first, so a
  // failure leaves the container for the next attempt.
  const std::string& log_path = resp->status().log_path();
  if (!log_path.empty()) {
    const size_t slash = log_path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : log_path.substr(0, slash);
    const std::string base = slash == std::string::npos ? log_path : log_path.substr(slash + 1);
    if (DIR* d = opendir(dir.c_str())) {
      std::vector<std::string> doomed;
      while (struct dirent* ent = readdir(d)) {
        if (absl::StartsWith(ent->d_name, base))
          doomed.push_back(absl::StrCat(dir, "/", ent->d_name));
      }
      closedir(d);
      for (const std::string& f : doomed) {
        if (unlink(f.c_str()) != 0 && errno != ENOENT) {
          return absl::InternalError(absl::StrCat("failed to remove container \"", id, "\" log \"",
                                                  f, "\": ", std::strerror(errno)));
        }
      }
    }
  }
  return runtime_.RemoveContainer(id);
}

void KubeGenericRuntimeManager::PruneInitContainersBeforeStart(const api::Pod& pod,
                                                               const container::PodStatus& status) {
  std::set<std::string> names;
  for (const api::Container& c : pod.spec.init_containers) names.insert(c.name);
  for (const std::string& name : names) {
    int count = 0;
    for (const ContainerStatus& s : status.container_statuses) {
      if (s.name != name || (s.state != State::kExited && s.state != State::kUnknown)) continue;
      if (++count == 1) continue;  // keep the newest terminated instance
      KLOG_V(4, "Removing init container", "containerName", s.name, "containerID", s.id.id, "count",
             count);
      if (absl::Status st = RemoveContainer(s.id.id); !st.ok()) {
        KLOG_ERROR(st, "Failed to remove pod init container", "containerName", s.name, "pod",
                   FormatPod(pod));
      }
    }
  }
}

void KubeGenericRuntimeManager::PurgeInitContainers(const api::Pod& pod,
                                                    const container::PodStatus& status) {
  std::set<std::string> names;
  for (const api::Container& c : pod.spec.init_containers) names.insert(c.name);
  for (const ContainerStatus& s : status.container_statuses) {
    if (names.count(s.name) == 0) continue;
    KLOG_V(4, "Removing init container", "containerName", s.name, "containerID", s.id.id);
    if (absl::Status st = RemoveContainer(s.id.id); !st.ok()) {
      KLOG_ERROR(st, "Failed to remove pod init container", "containerName", s.name, "pod",
                 FormatPod(pod));
    }
  }
}

}  // namespace kubelet::kuberuntime
