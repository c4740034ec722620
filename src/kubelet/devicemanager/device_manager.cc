#include "kubelet/devicemanager/device_manager.h"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/pod_validation.h"
#include "common/files.h"
#include "common/guarded.h"
#include "common/log.h"
#include "common/strings.h"
#include "cri/grpc_client.h"
#include "kubelet/devicemanager/device_plugin_api.h"
#include "kubelet/devicemanager/proto/deviceplugin.grpc.pb.h"
#include "metrics/metrics.h"

namespace kubelet::devicemanager {

namespace pb = ::v1beta1;
using topologymanager::NUMAMask;
using topologymanager::TopologyHint;
using topologymanager::TopologyHints;

namespace {

// Upstream v1helper.IsExtendedResourceName: a domain-prefixed name outside kubernetes.io that
// is a qualified name once prefixed with "requests.".
bool IsExtendedResourceName(const std::string& name) {
  if (name.find('/') == std::string::npos) return false;
  if (absl::StrContains(name, "kubernetes.io/")) return false;
  if (absl::StartsWith(name, "requests.")) return false;
  return api::IsQualifiedName(absl::StrCat("requests.", name)).empty();
}

absl::Status FromGrpc(const grpc::Status& s) {
  return absl::Status(
      static_cast<absl::StatusCode>(s.error_code()),
      cri::GoRpcErrorText(static_cast<absl::StatusCode>(s.error_code()), s.error_message()));
}

std::string SetString(const std::set<std::string>& s) {
  return absl::StrCat("[", absl::StrJoin(s, " "), "]");
}

}  // namespace

// One connected plugin: its channel and the thread following its ListAndWatch stream.
class DeviceManager::Endpoint {
 public:
  Endpoint(std::string resource, std::string socket, std::shared_ptr<grpc::Channel> channel)
      : resource_(std::move(resource)),
        socket_(std::move(socket)),
        channel_(std::move(channel)),
        stub_(pb::DevicePlugin::NewStub(channel_)) {}
  ~Endpoint() { Stop(); }

  pb::DevicePlugin::Stub& stub() { return *stub_; }
  const std::string& socket() const { return socket_; }

  void Run(DeviceManager* m) {
    thread_ = GuardedThread("device plugin " + resource_, [this, m] { Watch(m); });
  }
  void Stop() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
      if (ctx_ != nullptr) ctx_->TryCancel();
    }
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  }

 private:
  void Watch(DeviceManager* m) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      ctx_ = ctx.get();
    }
    pb::Empty req;
    std::unique_ptr<grpc::ClientReader<pb::ListAndWatchResponse>> reader =
        stub_->ListAndWatch(ctx.get(), req);
    pb::ListAndWatchResponse resp;
    while (reader->Read(&resp)) {
      KLOG_V(2, "State pushed for device plugin", "resource", resource_, "resourceCapacity",
             resp.devices_size());
      std::map<std::string, std::vector<int64_t>> devices;
      std::set<std::string> unhealthy;
      for (const pb::Device& d : resp.devices()) {
        std::vector<int64_t>& numa = devices[d.id()];
        if (d.has_topology()) {
          for (const pb::NUMANode& n : d.topology().nodes()) numa.push_back(n.id());
        }
        if (!IsHealthy(d.health())) unhealthy.insert(d.id());
      }
      m->OnDevices(resource_, this, std::move(devices), std::move(unhealthy));
    }
    grpc::Status st = reader->Finish();
    {
      absl::MutexLock lock(&mu_);
      ctx_ = nullptr;
      if (stopping_) return;
    }
    KLOG_ERROR(FromGrpc(st), "ListAndWatch ended unexpectedly for device plugin", "resource",
               resource_);
    m->OnStreamEnded(resource_, this);
  }

  const std::string resource_;
  const std::string socket_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::DevicePlugin::Stub> stub_;
  absl::Mutex mu_;
  grpc::ClientContext* ctx_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

struct DeviceManager::EndpointInfo {
  std::shared_ptr<Endpoint> endpoint;  // null: restored from the checkpoint, not registered yet
  pb::DevicePluginOptions options;
  std::optional<absl::Time> stopped_at;
};

class DeviceManager::RegistrationService final : public pb::Registration::Service {
 public:
  explicit RegistrationService(DeviceManager* m) : m_(m) {}
  grpc::Status Register(grpc::ServerContext*, const pb::RegisterRequest* req, pb::Empty*) override {
    absl::Status st;
    std::string error;
    if (!RunGuarded(
            "device plugin registration",
            [&] { st = m_->Register(req->version(), req->endpoint(), req->resource_name()); },
            &error)) {
      return grpc::Status(grpc::StatusCode::INTERNAL, error);
    }
    if (!st.ok()) return grpc::Status(grpc::StatusCode::UNKNOWN, std::string(st.message()));
    return grpc::Status::OK;
  }

 private:
  DeviceManager* const m_;
};

DeviceManager::DeviceManager(DeviceManagerOptions options,
                             const topologymanager::AffinityStore* affinity, const Clock& clock)
    : options_(std::move(options)), affinity_(affinity), clock_(clock) {}

DeviceManager::~DeviceManager() { Stop(); }

std::string DeviceManager::SocketPath() const {
  return absl::StrCat(options_.plugin_dir, "/", kKubeletSocket);
}

absl::Status DeviceManager::Start(Hooks hooks) {
  hooks_ = std::move(hooks);
  KLOG_INFO("Starting Device Plugin manager");
  ReadCheckpoint();
  std::error_code ec;
  std::filesystem::create_directories(options_.plugin_dir, ec);
  ::chmod(options_.plugin_dir.c_str(), 0755);
  // Stale sockets go: running plugins watch for this and register with the new kubelet.
  for (const auto& entry : std::filesystem::directory_iterator(options_.plugin_dir, ec)) {
    if (entry.path().filename() == kCheckpointFileName) continue;
    std::error_code e2;
    if (entry.is_directory(e2)) continue;
    std::filesystem::remove(entry.path(), e2);
    if (e2) {
      KLOG_ERROR(absl::InternalError(e2.message()), "Failed to clean up stale content", "path",
                 entry.path().string());
    }
  }
  service_ = std::make_unique<RegistrationService>(this);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat("unix:", SocketPath()), grpc::InsecureServerCredentials());
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "failed to listen to socket while starting device plugin registry: ", SocketPath()));
  }
  KLOG_V(2, "Serving device plugin registration server on socket", "path", SocketPath());
  return absl::OkStatus();
}

void DeviceManager::Stop() {
  std::vector<std::shared_ptr<EndpointInfo>> eps;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    for (auto& [name, info] : endpoints_) eps.push_back(info);
  }
  if (server_ != nullptr) server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
  for (auto& info : eps) {
    if (info->endpoint != nullptr) info->endpoint->Stop();
  }
}

absl::Status DeviceManager::Register(const std::string& version, const std::string& endpoint,
                                     const std::string& resource) {
  KLOG_INFO("Got registration request from device plugin with resource", "resourceName", resource);
  metrics::Kubelet().device_plugin_registration.Add({{"resource_name", resource}}).Increment();
  if (version != kVersion) {
    std::string err =
        absl::StrCat("requested API version \"", version,
                     "\" is not supported by kubelet. Supported versions are [\"", kVersion, "\"]");
    KLOG_INFO("Bad registration request from device plugin", "err", err);
    return absl::InvalidArgumentError(err);
  }
  if (!IsExtendedResourceName(resource)) {
    std::string err = absl::StrCat("the ResourceName \"", resource, "\" is invalid");
    KLOG_INFO("Bad registration request from device plugin", "err", err);
    return absl::InvalidArgumentError(err);
  }
  if (endpoint.empty() || endpoint.find('/') != std::string::npos || endpoint == "." ||
      endpoint == "..") {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid name of device plugin socket: ", endpoint));
  }
  const std::string socket = absl::StrCat(options_.plugin_dir, "/", endpoint);
  std::shared_ptr<grpc::Channel> channel = cri::DialUnixSocket(socket);
  if (!channel->WaitForConnected(absl::ToChronoTime(absl::Now() + options_.dial_timeout))) {
    absl::Status err = absl::DeadlineExceededError(
        absl::StrCat("failed to dial device plugin: context deadline exceeded"));
    KLOG_ERROR(err, "Unable to connect to device plugin client with socket path", "path", socket);
    return err;
  }
  auto ep = std::make_shared<Endpoint>(resource, socket, channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
  pb::Empty empty;
  pb::DevicePluginOptions opts;
  if (grpc::Status s = ep->stub().GetDevicePluginOptions(&ctx, empty, &opts); !s.ok()) {
    return absl::UnavailableError(
        absl::StrCat("failed to get device plugin options: ", FromGrpc(s).message()));
  }
  std::shared_ptr<EndpointInfo> old;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return absl::UnavailableError("device manager stopped");
    auto info = std::make_shared<EndpointInfo>();
    info->endpoint = ep;
    info->options = opts;
    auto it = endpoints_.find(resource);
    if (it != endpoints_.end()) old = it->second;
    endpoints_[resource] = info;
  }
  KLOG_V(2, "Device plugin connected", "resourceName", resource);
  if (old != nullptr && old->endpoint != nullptr) old->endpoint->Stop();
  ep->Run(this);
  return absl::OkStatus();
}

void DeviceManager::OnDevices(const std::string& resource, const Endpoint* from,
                              std::map<std::string, std::vector<int64_t>> devices,
                              std::set<std::string> unhealthy) {
  {
    absl::MutexLock lock(&mu_);
    auto it = endpoints_.find(resource);
    if (it == endpoints_.end() || it->second->endpoint.get() != from) return;
    removed_.erase(resource);
    std::set<std::string>& h = healthy_[resource];
    std::set<std::string>& u = unhealthy_[resource];
    h.clear();
    u.clear();
    for (const auto& [id, numa] : devices) {
      if (unhealthy.count(id) > 0) {
        u.insert(id);
      } else {
        h.insert(id);
      }
    }
    all_devices_[resource] = std::move(devices);
  }
  WriteCheckpoint();
  if (hooks_.devices_changed) hooks_.devices_changed();
}

void DeviceManager::OnStreamEnded(const std::string& resource, const Endpoint* from) {
  {
    absl::MutexLock lock(&mu_);
    auto it = endpoints_.find(resource);
    if (it == endpoints_.end() || it->second->endpoint.get() != from) return;
    KLOG_V(2, "Mark all resources Unhealthy for resource", "resourceName", resource);
    std::set<std::string>& h = healthy_[resource];
    unhealthy_[resource].insert(h.begin(), h.end());
    h.clear();
    it->second->stopped_at = clock_.Now();
    KLOG_V(2, "Endpoint became unhealthy", "resourceName", resource, "endpoint", from->socket());
  }
  if (hooks_.devices_changed) hooks_.devices_changed();
}

void DevicePluginCapacity::ApplyTo(api::ResourceList* node_capacity,
                                   api::ResourceList* node_allocatable) const {
  for (const auto& [r, q] : capacity) (*node_capacity)[r] = q;
  for (const auto& [r, q] : allocatable) (*node_allocatable)[r] = q;
  for (const std::string& r : removed) {
    (*node_capacity)[r] = api::Quantity::FromValue(0);
    (*node_allocatable)[r] = api::Quantity::FromValue(0);
  }
}

DevicePluginCapacity DeviceManager::GetCapacity() {
  DevicePluginCapacity out;
  bool changed = false;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = clock_.Now();
    std::set<std::string> resources;
    for (const auto& [r, s] : healthy_) resources.insert(r);
    for (const auto& [r, s] : unhealthy_) resources.insert(r);
    for (const std::string& r : resources) {
      auto ep = endpoints_.find(r);
      const bool expired =
          ep == endpoints_.end() || (ep->second->stopped_at.has_value() &&
                                     now - *ep->second->stopped_at > options_.stop_grace_period);
      if (expired) {
        if (ep != endpoints_.end()) endpoints_.erase(ep);
        healthy_.erase(r);
        unhealthy_.erase(r);
        all_devices_.erase(r);
        removed_.insert(r);
        changed = true;
        continue;
      }
      const int64_t healthy = healthy_.count(r) > 0 ? healthy_[r].size() : 0;
      const int64_t unhealthy = unhealthy_.count(r) > 0 ? unhealthy_[r].size() : 0;
      out.capacity[r] = api::Quantity::FromValue(healthy + unhealthy);
      out.allocatable[r] = api::Quantity::FromValue(healthy);
    }
    out.removed.assign(removed_.begin(), removed_.end());
  }
  if (changed) WriteCheckpoint();
  return out;
}

bool DeviceManager::IsDevicePluginResource(const std::string& resource) const {
  absl::ReaderMutexLock lock(&mu_);
  if (healthy_.count(resource) > 0) return true;
  for (const auto& [uid, containers] : pod_devices_) {
    for (const auto& [name, resources] : containers) {
      if (resources.count(resource) > 0) return true;
    }
  }
  return false;
}

std::map<std::string, int> DeviceManager::ContainerRequests(const api::Container& container) const {
  std::map<std::string, int> out;
  for (const auto& [name, q] : container.resources.limits) {
    if (q.Value() <= 0 || !IsDevicePluginResource(name)) continue;
    out[name] = static_cast<int>(q.Value());
  }
  return out;
}

std::set<std::string> DeviceManager::AllocatedLocked(const std::string& resource) const {
  std::set<std::string> out;
  if (auto it = in_flight_.find(resource); it != in_flight_.end()) out = it->second;
  for (const auto& [uid, containers] : pod_devices_) {
    for (const auto& [name, resources] : containers) {
      auto r = resources.find(resource);
      if (r == resources.end()) continue;
      for (const auto& [numa, ids] : r->second.device_ids) out.insert(ids.begin(), ids.end());
    }
  }
  return out;
}

std::vector<int64_t> DeviceManager::NumaOf(const std::string& resource,
                                           const std::string& id) const {
  auto r = all_devices_.find(resource);
  if (r == all_devices_.end()) return {};
  auto d = r->second.find(id);
  return d == r->second.end() ? std::vector<int64_t>{} : d->second;
}

void DeviceManager::UpdateAllocatedDevices() {
  absl::MutexLock lock(&mu_);
  UpdateAllocatedDevicesLocked("");
}

void DeviceManager::UpdateAllocatedDevicesLocked(const std::string& pending_uid) {
  if (!hooks_.active_pods || pod_devices_.empty()) return;
  std::optional<std::vector<api::PodPtr>> pods = hooks_.active_pods();
  if (!pods.has_value()) return;
  std::set<std::string> active;
  if (!pending_uid.empty()) active.insert(pending_uid);
  for (const api::PodPtr& p : *pods) active.insert(p->metadata.uid);
  for (auto it = pod_devices_.begin(); it != pod_devices_.end();) {
    if (active.count(it->first) > 0) {
      ++it;
      continue;
    }
    KLOG_V(3, "Pods to be removed", "podUIDs", it->first);
    it = pod_devices_.erase(it);
  }
}

void DeviceManager::RemovePod(const std::string& pod_uid) {
  {
    absl::MutexLock lock(&mu_);
    if (pod_devices_.erase(pod_uid) == 0) return;
    if (reuse_pod_ == pod_uid) {
      reuse_pod_.clear();
      reuse_.clear();
    }
  }
  KLOG_V(3, "Released the devices of a terminated pod", "podUID", pod_uid);
  WriteCheckpoint();
}

absl::Status DeviceManager::Allocate(const api::Pod& pod, const api::Container& container) {
  const std::string& uid = pod.metadata.uid;
  std::map<std::string, std::set<std::string>> reuse;
  {
    absl::MutexLock lock(&mu_);
    if (reuse_pod_ != uid) {
      reuse_pod_ = uid;
      reuse_.clear();
    }
    reuse = reuse_;
  }
  bool is_init = false;
  bool restartable = false;
  for (const api::Container& ic : pod.spec.init_containers) {
    if (ic.name == container.name) {
      is_init = true;
      restartable = api::IsRestartableInitContainer(ic);
    }
  }
  if (absl::Status st = AllocateContainerResources(pod, container, &reuse); !st.ok()) return st;
  absl::MutexLock lock(&mu_);
  // The container's devices: an init container's are reusable by the next containers; an app
  // container's (or a sidecar's) are its own for the pod's life.
  std::map<std::string, std::set<std::string>> mine;
  if (auto p = pod_devices_.find(uid); p != pod_devices_.end()) {
    if (auto c = p->second.find(container.name); c != p->second.end()) {
      for (const auto& [res, alloc] : c->second) {
        for (const auto& [numa, ids] : alloc.device_ids) mine[res].insert(ids.begin(), ids.end());
      }
    }
  }
  for (const auto& [res, ids] : mine) {
    for (const std::string& id : ids) {
      if (is_init && !restartable) {
        reuse_[res].insert(id);
      } else {
        reuse_[res].erase(id);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status DeviceManager::AllocateContainerResources(
    const api::Pod& pod, const api::Container& container,
    std::map<std::string, std::set<std::string>>* reuse) {
  const std::string& uid = pod.metadata.uid;
  bool updated = false;
  bool write = false;
  for (const auto& request : ContainerRequests(container)) {
    const std::string& resource = request.first;
    const int needed = request.second;
    if (!updated) {
      absl::MutexLock lock(&mu_);
      UpdateAllocatedDevicesLocked(uid);
      updated = true;
    }
    absl::StatusOr<std::set<std::string>> picked =
        DevicesToAllocate(uid, container.name, resource, needed, (*reuse)[resource]);
    if (!picked.ok()) return picked.status();
    if (picked->empty()) continue;
    std::shared_ptr<EndpointInfo> info;
    {
      absl::MutexLock lock(&mu_);
      if (auto it = endpoints_.find(resource); it != endpoints_.end()) info = it->second;
    }
    auto release = [&] {
      absl::MutexLock lock(&mu_);
      for (const std::string& id : *picked) in_flight_[resource].erase(id);
    };
    if (info == nullptr || info->endpoint == nullptr) {
      release();
      return absl::UnavailableError(absl::StrCat("unknown Device Plugin ", resource));
    }
    const std::vector<std::string> ids(picked->begin(), picked->end());
    KLOG_V(3, "Making allocation request for device plugin", "devices", SetString(*picked),
           "resourceName", resource);
    pb::AllocateRequest req;
    pb::ContainerAllocateRequest* cr = req.add_container_requests();
    for (const std::string& id : ids) cr->add_devices_ids(id);
    pb::AllocateResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
    const absl::Time start = absl::Now();
    grpc::Status s = info->endpoint->stub().Allocate(&ctx, req, &resp);
    metrics::ObserveDevicePluginAllocation(resource, absl::ToDoubleSeconds(absl::Now() - start));
    if (!s.ok()) {
      release();
      return FromGrpc(s);
    }
    if (resp.container_responses_size() == 0) {
      release();
      // Upstream prints the response here; with its only field empty there is nothing to show.
      return absl::InternalError("no containers return in allocation response");
    }
    {
      absl::MutexLock lock(&mu_);
      ContainerAllocation alloc;
      for (const std::string& id : ids) {
        std::vector<int64_t> numa = NumaOf(resource, id);
        if (numa.empty()) {
          alloc.device_ids[kNodeWithoutTopology].push_back(id);
          continue;
        }
        for (int64_t n : numa) alloc.device_ids[n].push_back(id);
      }
      resp.container_responses(0).SerializeToString(&alloc.alloc_resp);
      pod_devices_[uid][container.name][resource] = std::move(alloc);
      for (const std::string& id : ids) in_flight_[resource].erase(id);
    }
    write = true;
  }
  if (write) WriteCheckpoint();
  return absl::OkStatus();
}

absl::StatusOr<std::set<std::string>> DeviceManager::DevicesToAllocate(
    const std::string& uid, const std::string& container, const std::string& resource, int required,
    const std::set<std::string>& reusable) {
  absl::MutexLock lock(&mu_);
  int needed = required;
  std::set<std::string> existing;
  if (auto p = pod_devices_.find(uid); p != pod_devices_.end()) {
    if (auto c = p->second.find(container); c != p->second.end()) {
      if (auto r = c->second.find(resource); r != c->second.end()) {
        for (const auto& [numa, ids] : r->second.device_ids) {
          existing.insert(ids.begin(), ids.end());
        }
      }
    }
  }
  if (!existing.empty()) {
    KLOG_V(3, "Found pre-allocated devices for resource on pod", "resourceName", resource,
           "containerName", container, "podUID", uid, "devices", SetString(existing));
    needed -= static_cast<int>(existing.size());
    if (needed != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pod \"", uid, "\" container \"", container, "\" changed request for resource \"",
          resource, "\" from ", existing.size(), " to ", required));
    }
    // Already given (a restarted kubelet re-admitting a running pod): nothing to do.
    return std::set<std::string>{};
  }
  KLOG_V(3, "Need devices to allocate for pod", "deviceNumber", needed, "resourceName", resource,
         "podUID", uid, "containerName", container);
  auto healthy_it = healthy_.find(resource);
  if (healthy_it == healthy_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot allocate unregistered device ", resource));
  }
  const std::set<std::string>& healthy = healthy_it->second;
  if (healthy.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("no healthy devices present; cannot allocate unhealthy devices ", resource));
  }
  std::set<std::string> allocated;
  std::set<std::string>& in_flight = in_flight_[resource];
  std::set<std::string> in_use;
  auto take_from = [&](const std::vector<std::string>& from) {
    for (const std::string& d : from) {
      if (needed == 0) break;
      if (allocated.count(d) > 0 || in_use.count(d) > 0) continue;
      allocated.insert(d);
      --needed;
    }
    return needed == 0;
  };
  auto done = [&]() -> absl::StatusOr<std::set<std::string>> {
    in_flight.insert(allocated.begin(), allocated.end());
    return allocated;
  };
  // Devices of the pod's init containers first.
  std::vector<std::string> reuse_list;
  for (const std::string& d : reusable) {
    if (healthy.count(d) > 0) reuse_list.push_back(d);
  }
  if (take_from(reuse_list)) return done();

  in_use = AllocatedLocked(resource);
  std::set<std::string> available;
  for (const std::string& d : healthy) {
    if (in_use.count(d) == 0 && allocated.count(d) == 0) available.insert(d);
  }
  if (static_cast<int>(available.size()) < needed) {
    return absl::ResourceExhaustedError(absl::StrCat("requested number of devices unavailable for ",
                                                     resource, ". Requested: ", needed,
                                                     ", Available: ", available.size()));
  }
  // Split by the topology manager's NUMA affinity.
  std::vector<std::string> aligned, unaligned, no_affinity;
  TopologyHint hint;
  hint.preferred = true;
  if (affinity_ != nullptr) hint = affinity_->GetAffinity(uid, container);
  for (const std::string& d : available) {
    const std::vector<int64_t> numa = NumaOf(resource, d);
    if (!hint.numa_affinity.has_value() || numa.empty()) {
      no_affinity.push_back(d);
      continue;
    }
    bool in = false;
    for (int64_t n : numa) in = in || hint.numa_affinity->IsSet(static_cast<int>(n));
    (in ? aligned : unaligned).push_back(d);
  }
  // The plugin's preference, when it offers one.
  auto preferred = [&](const std::vector<std::string>& pool) -> std::vector<std::string> {
    auto ep = endpoints_.find(resource);
    if (ep == endpoints_.end() || ep->second->endpoint == nullptr ||
        !ep->second->options.get_preferred_allocation_available()) {
      return {};
    }
    std::shared_ptr<Endpoint> e = ep->second->endpoint;
    pb::PreferredAllocationRequest req;
    pb::ContainerPreferredAllocationRequest* cr = req.add_container_requests();
    for (const std::string& d : pool) cr->add_available_deviceids(d);
    for (const std::string& d : allocated) {
      cr->add_available_deviceids(d);
      cr->add_must_include_deviceids(d);
    }
    cr->set_allocation_size(required);
    pb::PreferredAllocationResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
    // The call is made without the lock; what other allocations took meanwhile is skipped.
    mu_.Unlock();
    grpc::Status s = e->stub().GetPreferredAllocation(&ctx, req, &resp);
    mu_.Lock();
    in_use = AllocatedLocked(resource);
    if (!s.ok() || resp.container_responses_size() == 0) {
      if (!s.ok()) {
        KLOG_ERROR(FromGrpc(s), "Unable to get preferred allocation", "resourceName", resource);
      }
      return {};
    }
    std::vector<std::string> out;
    for (const std::string& d : resp.container_responses(0).deviceids()) {
      if (std::find(pool.begin(), pool.end(), d) != pool.end()) out.push_back(d);
    }
    return out;
  };
  if (needed < static_cast<int>(aligned.size())) {
    if (take_from(preferred(aligned))) return done();
    if (take_from(aligned)) return done();
  } else {
    if (take_from(aligned)) return done();
    std::vector<std::string> pool(available.begin(), available.end());
    if (take_from(preferred(pool))) return done();
    if (take_from(unaligned)) return done();
    if (take_from(no_affinity)) return done();
  }
  return absl::InternalError(
      absl::StrCat("unexpectedly allocated less resources than required. Requested: ", required,
                   ", Got: ", required - needed));
}

absl::StatusOr<DeviceRunContainerOptions> DeviceManager::GetDeviceRunContainerOptions(
    const api::Pod& pod, const api::Container& container) {
  const std::string& uid = pod.metadata.uid;
  bool reallocate = false;
  for (const auto& [resource, n] : ContainerRequests(container)) {
    std::shared_ptr<Endpoint> ep;
    std::vector<std::string> ids;
    bool known = false;
    {
      absl::ReaderMutexLock lock(&mu_);
      auto p = pod_devices_.find(uid);
      if (p != pod_devices_.end()) {
        auto c = p->second.find(container.name);
        if (c != p->second.end()) {
          auto r = c->second.find(resource);
          if (r != c->second.end()) {
            known = true;
            for (const auto& [numa, list] : r->second.device_ids) {
              for (const std::string& id : list) {
                if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
              }
            }
          }
        }
      }
      auto e = endpoints_.find(resource);
      if (e != endpoints_.end() && e->second->options.pre_start_required()) {
        if (e->second->endpoint == nullptr) {
          return absl::UnavailableError(
              absl::StrCat("endpoint not found in cache for a registered resource: ", resource));
        }
        ep = e->second->endpoint;
      }
    }
    if (ep != nullptr && known) {
      KLOG_V(4, "Issuing a PreStartContainer call for container", "containerName", container.name,
             "podUID", uid);
      pb::PreStartContainerRequest req;
      for (const std::string& id : ids) req.add_devices_ids(id);
      pb::PreStartContainerResponse resp;
      grpc::ClientContext ctx;
      ctx.set_deadline(
          absl::ToChronoTime(absl::Now() + absl::Seconds(kPreStartContainerTimeoutSeconds)));
      if (grpc::Status s = ep->stub().PreStartContainer(&ctx, req, &resp); !s.ok()) {
        return absl::UnavailableError(absl::StrCat(
            "device plugin PreStartContainer rpc failed with err: ", FromGrpc(s).message()));
      }
    }
    if (!known) reallocate = true;
  }
  if (reallocate) {
    KLOG_V(2, "Needs to re-allocate device plugin resources for pod", "pod",
           absl::StrCat(pod.metadata.namespace_, "/", pod.metadata.name), "containerName",
           container.name);
    if (absl::Status st = Allocate(pod, container); !st.ok()) return st;
  }

  DeviceRunContainerOptions out;
  absl::ReaderMutexLock lock(&mu_);
  auto p = pod_devices_.find(uid);
  if (p == pod_devices_.end()) return out;
  auto c = p->second.find(container.name);
  if (c == p->second.end()) return out;
  std::map<std::string, std::string> envs, devs, mounts;
  std::set<std::string> cdi;
  for (const auto& [resource, alloc] : c->second) {
    pb::ContainerAllocateResponse resp;
    if (!resp.ParseFromString(alloc.alloc_resp)) {
      KLOG_ERROR(absl::DataLossError("cannot parse"), "Invalid allocation response", "resource",
                 resource);
      continue;
    }
    std::map<std::string, std::string> sorted_envs(resp.envs().begin(), resp.envs().end());
    for (const auto& [k, v] : sorted_envs) {
      if (auto e = envs.find(k); e != envs.end()) {
        if (e->second != v) {
          KLOG_ERROR(absl::InvalidArgumentError("conflict"),
                     "Environment variable has conflicting setting", "key", k);
        }
        continue;
      }
      envs[k] = v;
      out.envs.emplace_back(k, v);
    }
    for (const pb::DeviceSpec& d : resp.devices()) {
      if (auto e = devs.find(d.container_path()); e != devs.end()) {
        if (e->second != d.host_path()) {
          KLOG_ERROR(absl::InvalidArgumentError("conflict"),
                     "Container device has conflicting mapping host devices", "containerPath",
                     d.container_path());
        }
        continue;
      }
      devs[d.container_path()] = d.host_path();
      runtime::v1::Device& rd = out.devices.emplace_back();
      rd.set_container_path(d.container_path());
      rd.set_host_path(d.host_path());
      rd.set_permissions(d.permissions());
    }
    for (const pb::Mount& m : resp.mounts()) {
      if (auto e = mounts.find(m.container_path()); e != mounts.end()) {
        if (e->second != m.host_path()) {
          KLOG_ERROR(absl::InvalidArgumentError("conflict"),
                     "Container mount has conflicting mapping host mounts", "containerPath",
                     m.container_path());
        }
        continue;
      }
      mounts[m.container_path()] = m.host_path();
      runtime::v1::Mount& rm = out.mounts.emplace_back();
      rm.set_container_path(m.container_path());
      rm.set_host_path(m.host_path());
      rm.set_readonly(m.read_only());
    }
    std::map<std::string, std::string> sorted_ann(resp.annotations().begin(),
                                                  resp.annotations().end());
    for (const auto& [k, v] : sorted_ann) out.annotations.emplace(k, v);
    if (options_.cdi_devices) {
      for (const pb::CDIDevice& d : resp.cdi_devices()) {
        if (cdi.insert(d.name()).second) out.cdi_devices.push_back(d.name());
      }
    }
  }
  return out;
}

TopologyHints DeviceManager::HintsFor(const std::string& uid, const std::string& container_name,
                                      const std::map<std::string, int>& requests) {
  TopologyHints out;
  absl::MutexLock lock(&mu_);
  UpdateAllocatedDevicesLocked(uid);
  for (const auto& [resource, requested] : requests) {
    bool has_topology = false;
    if (auto r = all_devices_.find(resource); r != all_devices_.end()) {
      for (const auto& [id, numa] : r->second) has_topology = has_topology || !numa.empty();
    }
    if (!has_topology) {
      KLOG_INFO("Resource does not have a topology preference", "resource", resource);
      out[resource] = std::nullopt;
      continue;
    }
    std::set<std::string> allocated;
    if (auto p = pod_devices_.find(uid); p != pod_devices_.end()) {
      for (const auto& [cname, resources] : p->second) {
        if (!container_name.empty() && cname != container_name) continue;
        if (auto a = resources.find(resource); a != resources.end()) {
          for (const auto& [numa, ids] : a->second.device_ids) {
            allocated.insert(ids.begin(), ids.end());
          }
        }
      }
    }
    if (!allocated.empty()) {
      if (static_cast<int>(allocated.size()) != requested) {
        KLOG_ERROR(absl::InvalidArgumentError("mismatch"),
                   "Resource already allocated to pod with different number than request",
                   "resource", resource, "request", requested, "allocated", allocated.size());
        out[resource] = std::vector<TopologyHint>{};
        continue;
      }
      KLOG_INFO("Regenerating TopologyHints for resource already allocated to pod", "resource",
                resource);
      out[resource] = GenerateHints(resource, allocated, {}, requested);
      continue;
    }
    const std::set<std::string> in_use = AllocatedLocked(resource);
    std::set<std::string> available;
    for (const std::string& d : healthy_[resource]) {
      if (in_use.count(d) == 0) available.insert(d);
    }
    std::set<std::string> reusable;
    if (reuse_pod_ == uid) {
      if (auto r = reuse_.find(resource); r != reuse_.end()) reusable = r->second;
    }
    std::set<std::string> both = available;
    both.insert(reusable.begin(), reusable.end());
    if (static_cast<int>(both.size()) < requested) {
      KLOG_ERROR(absl::ResourceExhaustedError("unavailable"),
                 "Unable to generate topology hints: requested number of devices unavailable",
                 "resource", resource, "request", requested, "available", both.size());
      out[resource] = std::vector<TopologyHint>{};
      continue;
    }
    out[resource] = GenerateHints(resource, available, reusable, requested);
  }
  return out;
}

std::vector<TopologyHint> DeviceManager::GenerateHints(const std::string& resource,
                                                       const std::set<std::string>& available,
                                                       const std::set<std::string>& reusable,
                                                       int request) const {
  std::vector<int> nodes = options_.numa_nodes;
  std::sort(nodes.begin(), nodes.end());
  int min_size = static_cast<int>(nodes.size());
  std::vector<TopologyHint> hints;
  auto any_set = [](NUMAMask mask, const std::vector<int64_t>& numa) {
    for (int64_t n : numa) {
      if (mask.IsSet(static_cast<int>(n))) return true;
    }
    return false;
  };
  const auto all = all_devices_.find(resource);
  // Every non-empty combination of the machine's NUMA nodes.
  const uint64_t combos = uint64_t{1} << nodes.size();
  for (uint64_t bits = 1; bits < combos; ++bits) {
    NUMAMask mask;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if ((bits >> i) & 1) mask.Add(nodes[i]);
    }
    int in_mask = 0;
    if (all != all_devices_.end()) {
      for (const auto& [id, numa] : all->second) in_mask += any_set(mask, numa) ? 1 : 0;
    }
    if (in_mask >= request && mask.Count() < min_size) min_size = mask.Count();
    int matching = 0;
    bool skip = false;
    for (const std::string& d : reusable) {
      const std::vector<int64_t> numa = NumaOf(resource, d);
      if (numa.empty()) continue;
      if (!any_set(mask, numa)) {
        skip = true;
        break;
      }
      ++matching;
    }
    if (skip) continue;
    for (const std::string& d : available) matching += any_set(mask, NumaOf(resource, d)) ? 1 : 0;
    if (matching < request) continue;
    hints.push_back(TopologyHint{mask, false});
  }
  for (TopologyHint& h : hints) h.preferred = h.numa_affinity->Count() == min_size;
  return hints;
}

TopologyHints DeviceManager::GetTopologyHints(const api::Pod& pod,
                                              const api::Container& container) {
  return HintsFor(pod.metadata.uid, container.name, ContainerRequests(container));
}

TopologyHints DeviceManager::GetPodTopologyHints(const api::Pod& pod) {
  // The pod's need: the larger of the largest init container's and the app containers' sum.
  std::map<std::string, int> requests;
  for (const api::Container& c : pod.spec.init_containers) {
    for (const auto& [r, n] : ContainerRequests(c)) requests[r] = std::max(requests[r], n);
  }
  std::map<std::string, int> sum;
  for (const api::Container& c : pod.spec.containers) {
    for (const auto& [r, n] : ContainerRequests(c)) sum[r] += n;
  }
  for (const auto& [r, n] : sum) requests[r] = std::max(requests[r], n);
  return HintsFor(pod.metadata.uid, "", requests);
}

ResourceDeviceInstances DeviceManager::GetDevices(const std::string& pod_uid,
                                                  const std::string& container_name) const {
  ResourceDeviceInstances out;
  absl::ReaderMutexLock lock(&mu_);
  auto p = pod_devices_.find(pod_uid);
  if (p == pod_devices_.end()) return out;
  auto c = p->second.find(container_name);
  if (c == p->second.end()) return out;
  for (const auto& [resource, alloc] : c->second) {
    for (const auto& [numa, ids] : alloc.device_ids) {
      for (const std::string& id : ids) {
        std::vector<int64_t>& nodes = out[resource][id];
        if (numa != kNodeWithoutTopology) nodes.push_back(numa);
      }
    }
  }
  return out;
}

ResourceDeviceInstances DeviceManager::GetAllocatableDevices() const {
  absl::ReaderMutexLock lock(&mu_);
  return all_devices_;
}

void DeviceManager::WriteCheckpoint() {
  DeviceCheckpoint cp;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const auto& [uid, containers] : pod_devices_) {
      for (const auto& [name, resources] : containers) {
        for (const auto& [resource, alloc] : resources) {
          cp.entries.push_back(
              PodDevicesEntry{uid, name, resource, alloc.device_ids, alloc.alloc_resp});
        }
      }
    }
    for (const auto& [resource, ids] : healthy_) {
      cp.registered_devices[resource] = std::vector<std::string>(ids.begin(), ids.end());
    }
  }
  absl::MutexLock lock(&checkpoint_mu_);
  const std::string path = absl::StrCat(options_.plugin_dir, "/", kCheckpointFileName);
  if (absl::Status st = WriteFileAtomically(path, MarshalCheckpoint(cp), 0644); !st.ok()) {
    KLOG_ERROR(st, "Failed to write checkpoint file", "path", path);
  }
}

void DeviceManager::ReadCheckpoint() {
  const std::string path = absl::StrCat(options_.plugin_dir, "/", kCheckpointFileName);
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return;
  absl::StatusOr<DeviceCheckpoint> cp = UnmarshalCheckpoint(*text);
  if (!cp.ok()) {
    KLOG_WARNING(
        "Continue after failing to read checkpoint file. Device allocation info may NOT "
        "be up-to-date",
        "err", std::string(cp.status().message()), "path", path);
    return;
  }
  absl::MutexLock lock(&mu_);
  for (const PodDevicesEntry& e : cp->entries) {
    pod_devices_[e.pod_uid][e.container_name][e.resource_name] =
        ContainerAllocation{e.device_ids, e.alloc_resp};
  }
  const absl::Time now = clock_.Now();
  for (const auto& [resource, ids] : cp->registered_devices) {
    // No devices until the plugin registers again; removed after the grace period if it does
    // not.
    healthy_[resource];
    unhealthy_[resource];
    auto info = std::make_shared<EndpointInfo>();
    info->stopped_at = now;
    endpoints_[resource] = std::move(info);
  }
}

}  // namespace kubelet::devicemanager
