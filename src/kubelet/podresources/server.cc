#include "kubelet/podresources/server.h"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/guarded.h"
#include "common/log.h"
#include "kubelet/podresources/pod_resources_api.h"
#include "kubelet/podresources/proto/podresources.grpc.pb.h"
#include "metrics/metrics.h"

namespace kubelet::podresources {

namespace pb = ::v1;

TokenBucket::TokenBucket(double qps, int burst, std::function<absl::Time()> now)
    : qps_(qps), burst_(burst), now_(std::move(now)), tokens_(burst) {}

bool TokenBucket::Allow() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = now_();
  if (last_.has_value() && now > *last_) {
    tokens_ = std::min(burst_, tokens_ + absl::ToDoubleSeconds(now - *last_) * qps_);
  }
  if (!last_.has_value() || now > *last_) last_ = now;
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

namespace {

const std::map<std::string, std::string>& V1() {
  static const auto* labels = new std::map<std::string, std::string>{{"server_api_version", "v1"}};
  return *labels;
}

void AddDevices(const std::vector<DeviceInstance>& devices,
                google::protobuf::RepeatedPtrField<pb::ContainerDevices>* out) {
  for (const DeviceInstance& d : devices) {
    if (d.numa.empty()) {
      pb::ContainerDevices* cd = out->Add();
      cd->set_resource_name(d.resource);
      cd->add_device_ids(d.id);
      continue;
    }
    for (int64_t n : d.numa) {
      pb::ContainerDevices* cd = out->Add();
      cd->set_resource_name(d.resource);
      cd->add_device_ids(d.id);
      cd->mutable_topology()->add_nodes()->set_id(n);
    }
  }
}

void AddMemory(const std::vector<MemoryBlock>& blocks,
               google::protobuf::RepeatedPtrField<pb::ContainerMemory>* out) {
  for (const MemoryBlock& b : blocks) {
    pb::ContainerMemory* m = out->Add();
    m->set_memory_type(b.type);
    m->set_size(b.size);
    for (int64_t n : b.numa) m->mutable_topology()->add_nodes()->set_id(n);
  }
}

}  // namespace

class PodResourcesServer::Service final : public pb::PodResourcesLister::Service {
 public:
  Service(const ServerOptions& options, Providers providers)
      : options_(options), providers_(std::move(providers)), limiter_(options.qps, options.burst) {}

  grpc::Status List(grpc::ServerContext*, const pb::ListPodResourcesRequest*,
                    pb::ListPodResourcesResponse* out) override {
    if (!limiter_.Allow()) return Limited();
    auto& m = metrics::Kubelet();
    m.pod_resources_requests_total.Add(V1()).Increment();
    m.pod_resources_requests_list.Add(V1()).Increment();
    return Guarded("List", [&] {
      if (providers_.update_allocated_devices) providers_.update_allocated_devices();
      if (!providers_.pods) return;
      for (const api::PodPtr& pod : providers_.pods()) Fill(*pod, out->add_pod_resources());
    });
  }

  grpc::Status GetAllocatableResources(grpc::ServerContext*, const pb::AllocatableResourcesRequest*,
                                       pb::AllocatableResourcesResponse* out) override {
    if (!limiter_.Allow()) return Limited();
    auto& m = metrics::Kubelet();
    m.pod_resources_requests_total.Add(V1()).Increment();
    m.pod_resources_requests_get_allocatable.Add(V1()).Increment();
    return Guarded("GetAllocatableResources", [&] {
      if (providers_.update_allocated_devices) providers_.update_allocated_devices();
      if (providers_.allocatable_devices) {
        AddDevices(providers_.allocatable_devices(), out->mutable_devices());
      }
      if (providers_.allocatable_cpus) {
        for (int64_t c : providers_.allocatable_cpus()) out->add_cpu_ids(c);
      }
      if (providers_.allocatable_memory) {
        AddMemory(providers_.allocatable_memory(), out->mutable_memory());
      }
    });
  }

  grpc::Status Get(grpc::ServerContext*, const pb::GetPodResourcesRequest* req,
                   pb::GetPodResourcesResponse* out) override {
    if (!limiter_.Allow()) return Limited();
    auto& m = metrics::Kubelet();
    m.pod_resources_requests_total.Add(V1()).Increment();
    m.pod_resources_requests_get.Add(V1()).Increment();
    if (!options_.get_enabled) {
      m.pod_resources_errors_get.Add(V1()).Increment();
      return grpc::Status(grpc::StatusCode::UNKNOWN, "PodResources API Get method disabled");
    }
    api::PodPtr found;
    if (providers_.pods) {
      for (const api::PodPtr& pod : providers_.pods()) {
        if (pod->metadata.name == req->pod_name() &&
            pod->metadata.namespace_ == req->pod_namespace()) {
          found = pod;
        }
      }
    }
    if (found == nullptr) {
      m.pod_resources_errors_get.Add(V1()).Increment();
      return grpc::Status(grpc::StatusCode::UNKNOWN,
                          absl::StrCat("pod ", req->pod_name(), " in namespace ",
                                       req->pod_namespace(), " not found"));
    }
    return Guarded("Get", [&] {
      if (providers_.update_allocated_devices) providers_.update_allocated_devices();
      Fill(*found, out->mutable_pod_resources());
    });
  }

 private:
  static grpc::Status Limited() {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, kRateLimitedMessage);
  }

  template <typename Fn>
  grpc::Status Guarded(const char* what, Fn&& fn) {
    std::string error;
    if (!RunGuarded(absl::StrCat("pod resources ", what), std::forward<Fn>(fn), &error)) {
      return grpc::Status(grpc::StatusCode::INTERNAL, error);
    }
    return grpc::Status::OK;
  }

  void Fill(const api::Pod& pod, pb::PodResources* out) {
    out->set_name(pod.metadata.name);
    out->set_namespace_(pod.metadata.namespace_);
    for (const api::Container& c : pod.spec.containers) {
      pb::ContainerResources* cr = out->add_containers();
      cr->set_name(c.name);
      if (providers_.devices) {
        AddDevices(providers_.devices(pod.metadata.uid, c.name), cr->mutable_devices());
      }
      if (providers_.cpus) {
        for (int64_t id : providers_.cpus(pod.metadata.uid, c.name)) cr->add_cpu_ids(id);
      }
      if (providers_.memory) {
        AddMemory(providers_.memory(pod.metadata.uid, c.name), cr->mutable_memory());
      }
    }
  }

  const ServerOptions& options_;
  const Providers providers_;
  TokenBucket limiter_;
};

PodResourcesServer::PodResourcesServer(ServerOptions options, Providers providers)
    : options_(std::move(options)),
      service_(std::make_unique<Service>(options_, std::move(providers))) {}

PodResourcesServer::~PodResourcesServer() { Stop(); }

absl::Status PodResourcesServer::Start() {
  const std::filesystem::path socket(options_.socket_path);
  std::error_code ec;
  std::filesystem::create_directories(socket.parent_path(), ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("failed to create directory ",
                                            socket.parent_path().string(), ": ", ec.message()));
  }
  ::chmod(socket.parent_path().c_str(), 0750);
  ::unlink(options_.socket_path.c_str());
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat("unix:", options_.socket_path),
                           grpc::InsecureServerCredentials());
  builder.SetMaxReceiveMessageSize(16 * 1024 * 1024);
  builder.SetMaxSendMessageSize(16 * 1024 * 1024);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("failed to serve the pod resources API on ", options_.socket_path));
  }
  KLOG_V(2, "Serving the pod resources API", "endpoint", "unix://" + options_.socket_path);
  return absl::OkStatus();
}

void PodResourcesServer::Stop() {
  if (server_ == nullptr) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server_.reset();
}

}  // namespace kubelet::podresources
