#include "cri/testing/fake_runtime.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cri/in_process.h"

namespace kubelet::cri {
namespace {

namespace v1 = ::runtime::v1;

constexpr char kStreamingUrl[] = "http://127.0.0.1:10010";
constexpr char kImageFsMountpoint[] = "/var/lib/fakeruntime/images";

absl::Status NotFound(absl::string_view method, absl::string_view what, absl::string_view id) {
  return absl::NotFoundError(absl::StrFormat("%s: %s \"%s\": not found", method, what, id));
}

// A stable pseudo digest of `s` (FNV-1a, widened to 64 hex digits).
std::string FakeDigest(absl::string_view s) {
  std::string out = "sha256:";
  for (uint64_t seed : {0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL, 0x1234567890abcdefULL,
                        0xfedcba0987654321ULL}) {
    uint64_t h = seed;
    for (unsigned char c : s) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
    absl::StrAppendFormat(&out, "%016x", h);
  }
  return out;
}

std::string DefaultReason(int exit_code) { return exit_code == 0 ? "Completed" : "Error"; }

}  // namespace

FakeRuntime::FakeRuntime() {
  absl::MutexLock lock(&mu_);
  now_ = [] { return absl::Now(); };
  version_.set_version(kKubeRuntimeAPIVersion);
  version_.set_runtime_name(kRuntimeName);
  version_.set_runtime_version(kRuntimeVersion);
  version_.set_runtime_api_version(kRuntimeApiVersion);
  for (const char* type : {"RuntimeReady", "NetworkReady"}) {
    v1::RuntimeCondition* cond = status_.mutable_status()->add_conditions();
    cond->set_type(type);
    cond->set_status(true);
  }
  exec_sync_handler_ = [](const std::string&, const std::vector<std::string>&, absl::Duration) {
    return v1::ExecSyncResponse();
  };
}

FakeRuntime::~FakeRuntime() = default;

// ---- Test controls ------------------------------------------------------------------------

void FakeRuntime::InjectError(absl::string_view method, absl::Status status) {
  absl::MutexLock lock(&mu_);
  injected_[method].push_back(std::move(status));
}

void FakeRuntime::SetPersistentError(absl::string_view method, absl::Status status) {
  absl::MutexLock lock(&mu_);
  persistent_[method] = std::move(status);
}

void FakeRuntime::ClearErrors() {
  absl::MutexLock lock(&mu_);
  injected_.clear();
  persistent_.clear();
}

std::vector<std::string> FakeRuntime::calls() const {
  absl::MutexLock lock(&mu_);
  return calls_;
}

int FakeRuntime::CallCount(absl::string_view method) const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(std::count(calls_.begin(), calls_.end(), method));
}

void FakeRuntime::ClearCalls() {
  absl::MutexLock lock(&mu_);
  calls_.clear();
}

void FakeRuntime::SetClock(std::function<absl::Time()> now) {
  absl::MutexLock lock(&mu_);
  now_ = std::move(now);
}

absl::Status FakeRuntime::SetContainerExited(const std::string& container_id, int exit_code,
                                             absl::string_view reason, absl::string_view message) {
  absl::MutexLock lock(&mu_);
  Container* c = FindContainer(container_id);
  if (c == nullptr) return NotFound("SetContainerExited", "container", container_id);
  ExitContainer(*c, exit_code, reason.empty() ? DefaultReason(exit_code) : std::string(reason),
                message);
  return absl::OkStatus();
}

absl::Status FakeRuntime::SetContainerState(const std::string& container_id,
                                            v1::ContainerState state) {
  absl::MutexLock lock(&mu_);
  Container* c = FindContainer(container_id);
  if (c == nullptr) return NotFound("SetContainerState", "container", container_id);
  c->status.set_state(state);
  return absl::OkStatus();
}

absl::Status FakeRuntime::SetSandboxState(const std::string& pod_sandbox_id,
                                          v1::PodSandboxState state) {
  absl::MutexLock lock(&mu_);
  Sandbox* s = FindSandbox(pod_sandbox_id);
  if (s == nullptr) return NotFound("SetSandboxState", "sandbox", pod_sandbox_id);
  s->status.set_state(state);
  return absl::OkStatus();
}

absl::Status FakeRuntime::SetSandboxIP(const std::string& pod_sandbox_id, const std::string& ip) {
  absl::MutexLock lock(&mu_);
  Sandbox* s = FindSandbox(pod_sandbox_id);
  if (s == nullptr) return NotFound("SetSandboxIP", "sandbox", pod_sandbox_id);
  s->status.mutable_network()->set_ip(ip);
  return absl::OkStatus();
}

void FakeRuntime::SetVersion(v1::VersionResponse version) {
  absl::MutexLock lock(&mu_);
  version_ = std::move(version);
}

void FakeRuntime::SetRuntimeStatus(v1::StatusResponse status) {
  absl::MutexLock lock(&mu_);
  status_ = std::move(status);
}

v1::RuntimeConfig FakeRuntime::runtime_config() const {
  absl::MutexLock lock(&mu_);
  return runtime_config_;
}

void FakeRuntime::SetExecSyncHandler(ExecSyncHandler handler) {
  absl::MutexLock lock(&mu_);
  exec_sync_handler_ = std::move(handler);
}

void FakeRuntime::SetContainerStats(const std::string& container_id, v1::ContainerStats stats) {
  absl::MutexLock lock(&mu_);
  stats_[container_id] = std::move(stats);
}

void FakeRuntime::SetMetrics(std::vector<v1::MetricDescriptor> descriptors,
                             std::vector<v1::PodSandboxMetrics> metrics) {
  absl::MutexLock lock(&mu_);
  metric_descriptors_ = std::move(descriptors);
  metrics_ = std::move(metrics);
}

void FakeRuntime::set_events_supported(bool supported) {
  absl::MutexLock lock(&mu_);
  events_supported_ = supported;
}

int FakeRuntime::event_subscriber_count() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(subscribers_.size());
}

void FakeRuntime::set_stop_exit_code(int exit_code) {
  absl::MutexLock lock(&mu_);
  stop_exit_code_ = exit_code;
}

void FakeRuntime::AddImage(v1::Image image) {
  absl::MutexLock lock(&mu_);
  std::string id = image.id();
  images_[id] = std::move(image);
}

void FakeRuntime::SetImageFsInfo(std::vector<v1::FilesystemUsage> usage) {
  absl::MutexLock lock(&mu_);
  image_fs_ = std::move(usage);
}

std::vector<v1::PullImageRequest> FakeRuntime::pull_requests() const {
  absl::MutexLock lock(&mu_);
  return pull_requests_;
}

std::vector<std::string> FakeRuntime::sandbox_ids() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> ids;
  for (const auto& [id, s] : sandboxes_) ids.push_back(id);
  return ids;
}

std::vector<std::string> FakeRuntime::container_ids() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> ids;
  for (const auto& [id, c] : containers_) ids.push_back(id);
  return ids;
}

std::optional<v1::PodSandboxStatus> FakeRuntime::GetSandbox(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  auto it = sandboxes_.find(id);
  if (it == sandboxes_.end()) return std::nullopt;
  return it->second.status;
}

std::optional<v1::ContainerStatus> FakeRuntime::GetContainer(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  auto it = containers_.find(id);
  if (it == containers_.end()) return std::nullopt;
  return it->second.status;
}

std::optional<v1::ContainerConfig> FakeRuntime::GetContainerConfig(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  auto it = containers_.find(id);
  if (it == containers_.end()) return std::nullopt;
  return it->second.config;
}

// ---- Internals ----------------------------------------------------------------------------

absl::Status FakeRuntime::Begin(absl::string_view method) {
  absl::MutexLock lock(&mu_);
  calls_.emplace_back(method);
  if (auto it = persistent_.find(method); it != persistent_.end()) return it->second;
  if (auto it = injected_.find(method); it != injected_.end() && !it->second.empty()) {
    absl::Status status = std::move(it->second.front());
    it->second.pop_front();
    return status;
  }
  return absl::OkStatus();
}

int64_t FakeRuntime::NowNanos() const { return absl::ToUnixNanos(now_()); }

FakeRuntime::Container* FakeRuntime::FindContainer(const std::string& id) {
  auto it = containers_.find(id);
  return it == containers_.end() ? nullptr : &it->second;
}

FakeRuntime::Sandbox* FakeRuntime::FindSandbox(const std::string& id) {
  auto it = sandboxes_.find(id);
  return it == sandboxes_.end() ? nullptr : &it->second;
}

void FakeRuntime::ExitContainer(Container& c, int exit_code, absl::string_view reason,
                                absl::string_view message) {
  c.status.set_state(v1::CONTAINER_EXITED);
  c.status.set_finished_at(NowNanos());
  c.status.set_exit_code(exit_code);
  c.status.set_reason(std::string(reason));
  c.status.set_message(std::string(message));
  EmitEvent(c, v1::CONTAINER_STOPPED_EVENT);
}

void FakeRuntime::EmitEvent(const Container& c, v1::ContainerEventType type) {
  if (subscribers_.empty()) return;
  v1::ContainerEventResponse event;
  event.set_container_id(c.status.id());
  event.set_container_event_type(type);
  event.set_created_at(NowNanos());
  if (const Sandbox* s = FindSandbox(c.pod_sandbox_id); s != nullptr) {
    *event.mutable_pod_sandbox_status() = s->status;
  }
  for (const auto& [id, other] : containers_) {
    if (other.pod_sandbox_id == c.pod_sandbox_id) *event.add_containers_statuses() = other.status;
  }
  // A deleted container is already gone from containers_; report its last status anyway.
  if (type == v1::CONTAINER_DELETED_EVENT) *event.add_containers_statuses() = c.status;
  for (Subscriber* sub : subscribers_) sub->queue.push_back(event);
}

v1::ContainerStats FakeRuntime::StatsFor(const Container& c) const {
  if (auto it = stats_.find(c.status.id()); it != stats_.end()) return it->second;
  const int64_t now = NowNanos();
  v1::ContainerStats stats;
  v1::ContainerAttributes* attrs = stats.mutable_attributes();
  attrs->set_id(c.status.id());
  *attrs->mutable_metadata() = c.status.metadata();
  *attrs->mutable_labels() = c.status.labels();
  *attrs->mutable_annotations() = c.status.annotations();
  stats.mutable_cpu()->set_timestamp(now);
  stats.mutable_cpu()->mutable_usage_core_nano_seconds()->set_value(0);
  stats.mutable_memory()->set_timestamp(now);
  stats.mutable_memory()->mutable_working_set_bytes()->set_value(0);
  stats.mutable_writable_layer()->set_timestamp(now);
  stats.mutable_writable_layer()->mutable_fs_id()->set_mountpoint(kImageFsMountpoint);
  stats.mutable_writable_layer()->mutable_used_bytes()->set_value(0);
  stats.mutable_writable_layer()->mutable_inodes_used()->set_value(0);
  return stats;
}

v1::PodSandboxStats FakeRuntime::SandboxStatsFor(const std::string& id, const Sandbox& s) const {
  const int64_t now = NowNanos();
  v1::PodSandboxStats stats;
  v1::PodSandboxAttributes* attrs = stats.mutable_attributes();
  attrs->set_id(id);
  *attrs->mutable_metadata() = s.status.metadata();
  *attrs->mutable_labels() = s.status.labels();
  *attrs->mutable_annotations() = s.status.annotations();
  v1::LinuxPodSandboxStats* linux_stats = stats.mutable_linux();
  linux_stats->mutable_cpu()->set_timestamp(now);
  linux_stats->mutable_memory()->set_timestamp(now);
  linux_stats->mutable_network()->set_timestamp(now);
  linux_stats->mutable_network()->mutable_default_interface()->set_name("eth0");
  linux_stats->mutable_process()->set_timestamp(now);
  uint64_t processes = 0;
  for (const auto& [cid, c] : containers_) {
    if (c.pod_sandbox_id != id) continue;
    *linux_stats->add_containers() = StatsFor(c);
    if (c.status.state() == v1::CONTAINER_RUNNING) ++processes;
  }
  linux_stats->mutable_process()->mutable_process_count()->set_value(processes);
  return stats;
}

const v1::Image* FakeRuntime::FindImage(const std::string& ref) const {
  if (ref.empty()) return nullptr;
  if (auto it = images_.find(ref); it != images_.end()) return &it->second;
  const std::string normalized = NormalizeImageRef(ref);
  for (const auto& [id, image] : images_) {
    for (const std::string& tag : image.repo_tags()) {
      if (tag == ref || tag == normalized) return &image;
    }
    for (const std::string& digest : image.repo_digests()) {
      if (digest == ref || digest == normalized) return &image;
    }
  }
  return nullptr;
}

void FakeRuntime::RemoveContainerLocked(const std::string& id) {
  auto it = containers_.find(id);
  if (it == containers_.end()) return;
  Container c = std::move(it->second);
  containers_.erase(it);
  stats_.erase(id);
  EmitEvent(c, v1::CONTAINER_DELETED_EVENT);
}

// ---- RuntimeService -----------------------------------------------------------------------

absl::StatusOr<v1::VersionResponse> FakeRuntime::Version(const std::string& api_version) {
  if (absl::Status s = Begin("Version"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  return version_;
}

absl::StatusOr<std::string> FakeRuntime::RunPodSandbox(const v1::PodSandboxConfig& config,
                                                       const std::string& runtime_handler) {
  if (absl::Status s = Begin("RunPodSandbox"); !s.ok()) return s;
  if (!config.has_metadata()) {
    return absl::InvalidArgumentError("RunPodSandbox: sandbox config must include metadata");
  }
  absl::MutexLock lock(&mu_);
  const v1::PodSandboxMetadata& md = config.metadata();
  for (const auto& [id, s] : sandboxes_) {
    const v1::PodSandboxMetadata& other = s.status.metadata();
    if (other.name() == md.name() && other.namespace_() == md.namespace_() &&
        other.uid() == md.uid() && other.attempt() == md.attempt()) {
      return absl::AlreadyExistsError(absl::StrFormat(
          "RunPodSandbox: failed to reserve sandbox name \"%s\": name is reserved for \"%s\"",
          absl::StrCat(md.name(), "_", md.namespace_(), "_", md.uid(), "_", md.attempt()), id));
    }
  }
  const int64_t n = next_id_++;
  std::string id = absl::StrFormat("sandbox-%08d", n);
  Sandbox& s = sandboxes_[id];
  s.config = config;
  v1::PodSandboxStatus& st = s.status;
  st.set_id(id);
  *st.mutable_metadata() = md;
  st.set_state(v1::SANDBOX_READY);
  st.set_created_at(NowNanos());
  const v1::NamespaceOption& ns = config.linux().security_context().namespace_options();
  st.mutable_network()->set_ip(
      ns.network() == v1::NODE ? "" : absl::StrFormat("10.88.%d.%d", (n / 250) % 250, n % 250 + 2));
  *st.mutable_linux()->mutable_namespaces()->mutable_options() = ns;
  *st.mutable_labels() = config.labels();
  *st.mutable_annotations() = config.annotations();
  st.set_runtime_handler(runtime_handler);
  return id;
}

absl::Status FakeRuntime::StopPodSandbox(const std::string& pod_sandbox_id) {
  if (absl::Status s = Begin("StopPodSandbox"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  Sandbox* s = FindSandbox(pod_sandbox_id);
  if (s == nullptr) return NotFound("StopPodSandbox", "sandbox", pod_sandbox_id);
  for (auto& [id, c] : containers_) {
    if (c.pod_sandbox_id == pod_sandbox_id && c.status.state() == v1::CONTAINER_RUNNING) {
      ExitContainer(c, kKilledExitCode, "Error", "");
    }
  }
  s->status.set_state(v1::SANDBOX_NOTREADY);
  return absl::OkStatus();
}

absl::Status FakeRuntime::RemovePodSandbox(const std::string& pod_sandbox_id) {
  if (absl::Status s = Begin("RemovePodSandbox"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  if (FindSandbox(pod_sandbox_id) == nullptr) return absl::OkStatus();
  std::vector<std::string> doomed;
  for (auto& [id, c] : containers_) {
    if (c.pod_sandbox_id != pod_sandbox_id) continue;
    if (c.status.state() == v1::CONTAINER_RUNNING) ExitContainer(c, kKilledExitCode, "Error", "");
    doomed.push_back(id);
  }
  for (const std::string& id : doomed) RemoveContainerLocked(id);
  sandboxes_.erase(pod_sandbox_id);
  return absl::OkStatus();
}

absl::StatusOr<v1::PodSandboxStatusResponse> FakeRuntime::PodSandboxStatus(
    const std::string& pod_sandbox_id, bool verbose) {
  if (absl::Status s = Begin("PodSandboxStatus"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  const Sandbox* s = FindSandbox(pod_sandbox_id);
  if (s == nullptr) return NotFound("PodSandboxStatus", "sandbox", pod_sandbox_id);
  v1::PodSandboxStatusResponse resp;
  *resp.mutable_status() = s->status;
  for (const auto& [id, c] : containers_) {
    if (c.pod_sandbox_id == pod_sandbox_id) *resp.add_containers_statuses() = c.status;
  }
  resp.set_timestamp(NowNanos());
  if (verbose) (*resp.mutable_info())["info"] = "{}";
  return resp;
}

absl::StatusOr<std::vector<v1::PodSandbox>> FakeRuntime::ListPodSandbox(
    const v1::PodSandboxFilter* filter) {
  if (absl::Status s = Begin("ListPodSandbox"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  std::vector<v1::PodSandbox> out;
  for (const auto& [id, s] : sandboxes_) {
    if (SandboxMatches(id, s.status, filter)) out.push_back(SandboxListItem(id, s.status));
  }
  return out;
}

absl::StatusOr<v1::PortForwardResponse> FakeRuntime::PortForward(
    const v1::PortForwardRequest& request) {
  if (absl::Status s = Begin("PortForward"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  const Sandbox* s = FindSandbox(request.pod_sandbox_id());
  if (s == nullptr) return NotFound("PortForward", "sandbox", request.pod_sandbox_id());
  if (s->status.state() != v1::SANDBOX_READY) {
    return absl::FailedPreconditionError(
        absl::StrFormat("PortForward: sandbox \"%s\" is not running", request.pod_sandbox_id()));
  }
  v1::PortForwardResponse resp;
  resp.set_url(absl::StrCat(kStreamingUrl, "/portforward/", next_id_++));
  return resp;
}

absl::StatusOr<std::string> FakeRuntime::CreateContainer(
    const std::string& pod_sandbox_id, const v1::ContainerConfig& config,
    const v1::PodSandboxConfig& sandbox_config) {
  if (absl::Status s = Begin("CreateContainer"); !s.ok()) return s;
  if (!config.has_metadata()) {
    return absl::InvalidArgumentError("CreateContainer: container config must include metadata");
  }
  if (config.image().image().empty()) {
    return absl::InvalidArgumentError("CreateContainer: container config must include an image");
  }
  absl::MutexLock lock(&mu_);
  const Sandbox* s = FindSandbox(pod_sandbox_id);
  if (s == nullptr) return NotFound("CreateContainer", "sandbox", pod_sandbox_id);
  if (s->status.state() != v1::SANDBOX_READY) {
    return absl::FailedPreconditionError(
        absl::StrFormat("CreateContainer: sandbox \"%s\" is not running", pod_sandbox_id));
  }
  for (const auto& [id, c] : containers_) {
    if (c.pod_sandbox_id == pod_sandbox_id &&
        c.status.metadata().name() == config.metadata().name() &&
        c.status.metadata().attempt() == config.metadata().attempt()) {
      return absl::AlreadyExistsError(absl::StrFormat(
          "CreateContainer: failed to reserve container name \"%s\": name is reserved for \"%s\"",
          absl::StrCat(config.metadata().name(), "_", config.metadata().attempt()), id));
    }
  }
  std::string id = absl::StrFormat("container-%08d", next_id_++);
  Container& c = containers_[id];
  c.config = config;
  c.pod_sandbox_id = pod_sandbox_id;
  v1::ContainerStatus& st = c.status;
  st.set_id(id);
  *st.mutable_metadata() = config.metadata();
  st.set_state(v1::CONTAINER_CREATED);
  st.set_created_at(NowNanos());
  *st.mutable_image() = config.image();
  const v1::Image* image = FindImage(config.image().image());
  st.set_image_ref(image != nullptr ? image->id() : config.image().image());
  *st.mutable_labels() = config.labels();
  *st.mutable_annotations() = config.annotations();
  *st.mutable_mounts() = config.mounts();
  const std::string& log_dir = sandbox_config.log_directory().empty()
                                   ? s->config.log_directory()
                                   : sandbox_config.log_directory();
  if (!config.log_path().empty()) {
    st.set_log_path(log_dir.empty() ? config.log_path()
                                    : absl::StrCat(log_dir, "/", config.log_path()));
  }
  if (config.linux().has_resources()) {
    *st.mutable_resources()->mutable_linux() = config.linux().resources();
  }
  EmitEvent(c, v1::CONTAINER_CREATED_EVENT);
  return id;
}

absl::Status FakeRuntime::StartContainer(const std::string& container_id) {
  if (absl::Status s = Begin("StartContainer"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  Container* c = FindContainer(container_id);
  if (c == nullptr) return NotFound("StartContainer", "container", container_id);
  if (c->status.state() != v1::CONTAINER_CREATED) {
    return absl::FailedPreconditionError(
        absl::StrFormat("StartContainer: container \"%s\" is in %s state", container_id,
                        v1::ContainerState_Name(c->status.state())));
  }
  const Sandbox* s = FindSandbox(c->pod_sandbox_id);
  if (s == nullptr || s->status.state() != v1::SANDBOX_READY) {
    return absl::FailedPreconditionError(
        absl::StrFormat("StartContainer: sandbox \"%s\" is not running", c->pod_sandbox_id));
  }
  c->status.set_state(v1::CONTAINER_RUNNING);
  c->status.set_started_at(NowNanos());
  EmitEvent(*c, v1::CONTAINER_STARTED_EVENT);
  return absl::OkStatus();
}

absl::Status FakeRuntime::StopContainer(const std::string& container_id, int64_t timeout_seconds) {
  if (absl::Status s = Begin("StopContainer"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  Container* c = FindContainer(container_id);
  if (c == nullptr) return NotFound("StopContainer", "container", container_id);
  if (c->status.state() != v1::CONTAINER_RUNNING) return absl::OkStatus();
  ExitContainer(*c, stop_exit_code_, DefaultReason(stop_exit_code_), "");
  return absl::OkStatus();
}

absl::Status FakeRuntime::RemoveContainer(const std::string& container_id) {
  if (absl::Status s = Begin("RemoveContainer"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  Container* c = FindContainer(container_id);
  if (c == nullptr) return absl::OkStatus();
  if (c->status.state() == v1::CONTAINER_RUNNING) ExitContainer(*c, kKilledExitCode, "Error", "");
  RemoveContainerLocked(container_id);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::Container>> FakeRuntime::ListContainers(
    const v1::ContainerFilter* filter) {
  if (absl::Status s = Begin("ListContainers"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  std::vector<v1::Container> out;
  for (const auto& [id, c] : containers_) {
    if (ContainerMatches(id, c.pod_sandbox_id, c.status, filter)) {
      out.push_back(ContainerListItem(id, c.pod_sandbox_id, c.status));
    }
  }
  return out;
}

absl::StatusOr<v1::ContainerStatusResponse> FakeRuntime::ContainerStatus(
    const std::string& container_id, bool verbose) {
  if (absl::Status s = Begin("ContainerStatus"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  const Container* c = FindContainer(container_id);
  if (c == nullptr) return NotFound("ContainerStatus", "container", container_id);
  v1::ContainerStatusResponse resp;
  *resp.mutable_status() = c->status;
  if (verbose) (*resp.mutable_info())["info"] = "{}";
  return resp;
}

absl::Status FakeRuntime::UpdateContainerResources(const std::string& container_id,
                                                   const v1::ContainerResources& resources) {
  if (absl::Status s = Begin("UpdateContainerResources"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  Container* c = FindContainer(container_id);
  if (c == nullptr) return NotFound("UpdateContainerResources", "container", container_id);
  if (resources.has_linux()) {
    *c->status.mutable_resources()->mutable_linux() = resources.linux();
    *c->config.mutable_linux()->mutable_resources() = resources.linux();
  }
  if (resources.has_windows()) {
    *c->status.mutable_resources()->mutable_windows() = resources.windows();
  }
  return absl::OkStatus();
}

absl::Status FakeRuntime::ReopenContainerLog(const std::string& container_id) {
  if (absl::Status s = Begin("ReopenContainerLog"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  const Container* c = FindContainer(container_id);
  if (c == nullptr) return NotFound("ReopenContainerLog", "container", container_id);
  if (c->status.state() != v1::CONTAINER_RUNNING) {
    return absl::FailedPreconditionError(
        absl::StrFormat("ReopenContainerLog: container \"%s\" is not running", container_id));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::ExecSyncResponse> FakeRuntime::ExecSync(const std::string& container_id,
                                                           const std::vector<std::string>& cmd,
                                                           absl::Duration timeout) {
  if (absl::Status s = Begin("ExecSync"); !s.ok()) return s;
  ExecSyncHandler handler;
  {
    absl::MutexLock lock(&mu_);
    const Container* c = FindContainer(container_id);
    if (c == nullptr) return NotFound("ExecSync", "container", container_id);
    if (c->status.state() != v1::CONTAINER_RUNNING) {
      return absl::FailedPreconditionError(
          absl::StrFormat("ExecSync: container \"%s\" is in %s state", container_id,
                          v1::ContainerState_Name(c->status.state())));
    }
    handler = exec_sync_handler_;
  }
  return handler(container_id, cmd, timeout);
}

absl::StatusOr<v1::ExecResponse> FakeRuntime::Exec(const v1::ExecRequest& request) {
  if (absl::Status s = Begin("Exec"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  const Container* c = FindContainer(request.container_id());
  if (c == nullptr) return NotFound("Exec", "container", request.container_id());
  if (c->status.state() != v1::CONTAINER_RUNNING) {
    return absl::FailedPreconditionError(
        absl::StrFormat("Exec: container \"%s\" is not running", request.container_id()));
  }
  v1::ExecResponse resp;
  resp.set_url(absl::StrCat(kStreamingUrl, "/exec/", next_id_++));
  return resp;
}

absl::StatusOr<v1::AttachResponse> FakeRuntime::Attach(const v1::AttachRequest& request) {
  if (absl::Status s = Begin("Attach"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  const Container* c = FindContainer(request.container_id());
  if (c == nullptr) return NotFound("Attach", "container", request.container_id());
  if (c->status.state() != v1::CONTAINER_RUNNING) {
    return absl::FailedPreconditionError(
        absl::StrFormat("Attach: container \"%s\" is not running", request.container_id()));
  }
  v1::AttachResponse resp;
  resp.set_url(absl::StrCat(kStreamingUrl, "/attach/", next_id_++));
  return resp;
}

absl::Status FakeRuntime::CheckpointContainer(const v1::CheckpointContainerRequest& request) {
  if (absl::Status s = Begin("CheckpointContainer"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  if (FindContainer(request.container_id()) == nullptr) {
    return NotFound("CheckpointContainer", "container", request.container_id());
  }
  return absl::OkStatus();
}

absl::Status FakeRuntime::GetContainerEvents(const ContainerEventCallback& on_event,
                                             StreamCancellation& cancel) {
  if (absl::Status s = Begin("GetContainerEvents"); !s.ok()) return s;
  Subscriber sub;
  {
    absl::MutexLock lock(&mu_);
    if (!events_supported_) {
      return absl::UnimplementedError(
          "GetContainerEvents: unknown method GetContainerEvents for service "
          "runtime.v1.RuntimeService");
    }
    subscribers_.push_back(&sub);
  }
  cancel.SetCancelHook([this, &sub] {
    absl::MutexLock lock(&mu_);
    sub.cancelled = true;
  });
  for (;;) {
    v1::ContainerEventResponse event;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](Subscriber* s) { return s->cancelled || !s->queue.empty(); }, &sub));
      if (sub.cancelled) break;
      event = std::move(sub.queue.front());
      sub.queue.pop_front();
    }
    on_event(event);
  }
  cancel.ClearCancelHook();
  absl::MutexLock lock(&mu_);
  subscribers_.erase(std::remove(subscribers_.begin(), subscribers_.end(), &sub),
                     subscribers_.end());
  return absl::CancelledError("GetContainerEvents: cancelled");
}

absl::StatusOr<v1::ContainerStats> FakeRuntime::ContainerStats(const std::string& container_id) {
  if (absl::Status s = Begin("ContainerStats"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  const Container* c = FindContainer(container_id);
  if (c == nullptr) return NotFound("ContainerStats", "container", container_id);
  return StatsFor(*c);
}

absl::StatusOr<std::vector<v1::ContainerStats>> FakeRuntime::ListContainerStats(
    const v1::ContainerStatsFilter* filter) {
  if (absl::Status s = Begin("ListContainerStats"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  std::vector<v1::ContainerStats> out;
  for (const auto& [id, c] : containers_) {
    if (filter != nullptr) {
      if (!filter->id().empty() && filter->id() != id) continue;
      if (!filter->pod_sandbox_id().empty() && filter->pod_sandbox_id() != c.pod_sandbox_id) {
        continue;
      }
      if (!LabelsMatch(c.status.labels(), filter->label_selector())) continue;
    }
    out.push_back(StatsFor(c));
  }
  return out;
}

absl::StatusOr<v1::PodSandboxStats> FakeRuntime::PodSandboxStats(
    const std::string& pod_sandbox_id) {
  if (absl::Status s = Begin("PodSandboxStats"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  const Sandbox* s = FindSandbox(pod_sandbox_id);
  if (s == nullptr) return NotFound("PodSandboxStats", "sandbox", pod_sandbox_id);
  return SandboxStatsFor(pod_sandbox_id, *s);
}

absl::StatusOr<std::vector<v1::PodSandboxStats>> FakeRuntime::ListPodSandboxStats(
    const v1::PodSandboxStatsFilter* filter) {
  if (absl::Status s = Begin("ListPodSandboxStats"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  std::vector<v1::PodSandboxStats> out;
  for (const auto& [id, s] : sandboxes_) {
    if (filter != nullptr) {
      if (!filter->id().empty() && filter->id() != id) continue;
      if (!LabelsMatch(s.status.labels(), filter->label_selector())) continue;
    }
    out.push_back(SandboxStatsFor(id, s));
  }
  return out;
}

absl::StatusOr<std::vector<v1::MetricDescriptor>> FakeRuntime::ListMetricDescriptors() {
  if (absl::Status s = Begin("ListMetricDescriptors"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  return metric_descriptors_;
}

absl::StatusOr<std::vector<v1::PodSandboxMetrics>> FakeRuntime::ListPodSandboxMetrics() {
  if (absl::Status s = Begin("ListPodSandboxMetrics"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  return metrics_;
}

absl::Status FakeRuntime::UpdateRuntimeConfig(const v1::RuntimeConfig& runtime_config) {
  if (absl::Status s = Begin("UpdateRuntimeConfig"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  runtime_config_ = runtime_config;
  return absl::OkStatus();
}

absl::StatusOr<v1::StatusResponse> FakeRuntime::Status(bool verbose) {
  if (absl::Status s = Begin("Status"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  v1::StatusResponse resp = status_;
  if (verbose) (*resp.mutable_info())["config"] = "{}";
  return resp;
}

// ---- ImageManagerService ------------------------------------------------------------------

absl::StatusOr<std::vector<v1::Image>> FakeRuntime::ListImages(const v1::ImageFilter* filter) {
  if (absl::Status s = Begin("ListImages"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  std::vector<v1::Image> out;
  if (filter != nullptr && !filter->image().image().empty()) {
    if (const v1::Image* image = FindImage(filter->image().image()); image != nullptr) {
      out.push_back(*image);
    }
    return out;
  }
  for (const auto& [id, image] : images_) out.push_back(image);
  return out;
}

absl::StatusOr<v1::ImageStatusResponse> FakeRuntime::ImageStatus(const v1::ImageSpec& image,
                                                                 bool verbose) {
  if (absl::Status s = Begin("ImageStatus"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  v1::ImageStatusResponse resp;
  if (const v1::Image* found = FindImage(image.image()); found != nullptr) {
    *resp.mutable_image() = *found;
    if (verbose) (*resp.mutable_info())["info"] = "{}";
  }
  return resp;
}

absl::StatusOr<std::string> FakeRuntime::PullImage(const v1::ImageSpec& image,
                                                   const v1::AuthConfig* auth,
                                                   const v1::PodSandboxConfig* sandbox_config) {
  {
    absl::MutexLock lock(&mu_);
    v1::PullImageRequest& req = pull_requests_.emplace_back();
    *req.mutable_image() = image;
    if (auth != nullptr) *req.mutable_auth() = *auth;
    if (sandbox_config != nullptr) *req.mutable_sandbox_config() = *sandbox_config;
  }
  if (absl::Status s = Begin("PullImage"); !s.ok()) return s;
  if (image.image().empty()) {
    return absl::InvalidArgumentError("PullImage: image spec must name an image");
  }
  absl::MutexLock lock(&mu_);
  if (const v1::Image* found = FindImage(image.image()); found != nullptr) return found->id();
  const std::string name = NormalizeImageRef(image.image());
  v1::Image& added = images_[FakeDigest(name)];
  added.set_id(FakeDigest(name));
  if (!absl::StrContains(name, '@')) added.add_repo_tags(name);
  const size_t at = name.find('@');
  const size_t colon = name.rfind(':');
  const std::string repo =
      at != std::string::npos
          ? name.substr(0, at)
          : (colon != std::string::npos && colon > name.rfind('/') ? name.substr(0, colon) : name);
  added.add_repo_digests(absl::StrCat(repo, "@", FakeDigest(absl::StrCat("manifest:", name))));
  added.set_size(1 << 20);
  *added.mutable_spec() = image;
  return added.id();
}

absl::Status FakeRuntime::RemoveImage(const v1::ImageSpec& image) {
  if (absl::Status s = Begin("RemoveImage"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  if (const v1::Image* found = FindImage(image.image()); found != nullptr) {
    const std::string id = found->id();
    images_.erase(id);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::FilesystemUsage>> FakeRuntime::ImageFsInfo() {
  if (absl::Status s = Begin("ImageFsInfo"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  if (image_fs_.has_value()) return *image_fs_;
  v1::FilesystemUsage usage;
  usage.set_timestamp(NowNanos());
  usage.mutable_fs_id()->set_mountpoint(kImageFsMountpoint);
  uint64_t bytes = 0;
  for (const auto& [id, image] : images_) bytes += image.size();
  usage.mutable_used_bytes()->set_value(bytes);
  usage.mutable_inodes_used()->set_value(images_.size());
  return std::vector<v1::FilesystemUsage>{usage};
}

}  // namespace kubelet::cri
