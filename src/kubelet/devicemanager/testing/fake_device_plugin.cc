#include "kubelet/devicemanager/testing/fake_device_plugin.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "cri/grpc_client.h"
#include "kubelet/devicemanager/proto/deviceplugin.grpc.pb.h"

namespace kubelet::devicemanager::testing {

namespace pb = ::v1beta1;

class FakeDevicePlugin::Impl final : public pb::DevicePlugin::Service {
 public:
  Impl(std::string dir, std::string name, FakePluginOptions options)
      : dir_(std::move(dir)), name_(std::move(name)), options_(std::move(options)) {}

  grpc::Status GetDevicePluginOptions(grpc::ServerContext*, const pb::Empty*,
                                      pb::DevicePluginOptions* out) override {
    out->set_pre_start_required(options_.pre_start_required);
    out->set_get_preferred_allocation_available(options_.get_preferred_allocation_available);
    return grpc::Status::OK;
  }

  grpc::Status ListAndWatch(grpc::ServerContext* ctx, const pb::Empty*,
                            grpc::ServerWriter<pb::ListAndWatchResponse>* w) override {
    int sent = -1;
    while (true) {
      pb::ListAndWatchResponse resp;
      {
        absl::MutexLock lock(&mu_);
        auto changed = [this, &sent] { return generation_ != sent || stopped_; };
        mu_.AwaitWithTimeout(absl::Condition(&changed), absl::Milliseconds(100));
        if (stopped_) return grpc::Status::OK;
        if (ctx->IsCancelled()) return grpc::Status::CANCELLED;
        if (generation_ == sent) continue;
        sent = generation_;
        for (const FakeDevice& d : options_.devices) {
          pb::Device* pd = resp.add_devices();
          pd->set_id(d.id);
          pd->set_health(d.healthy ? "Healthy" : "Unhealthy");
          for (int64_t n : d.numa) pd->mutable_topology()->add_nodes()->set_id(n);
        }
      }
      if (!w->Write(resp)) return grpc::Status::OK;
    }
  }

  grpc::Status GetPreferredAllocation(grpc::ServerContext*,
                                      const pb::PreferredAllocationRequest* req,
                                      pb::PreferredAllocationResponse* out) override {
    absl::MutexLock lock(&mu_);
    ++preferred_calls_;
    for (const pb::ContainerPreferredAllocationRequest& r : req->container_requests()) {
      pb::ContainerPreferredAllocationResponse* cr = out->add_container_responses();
      for (const std::string& id : options_.preferred) {
        if (cr->deviceids_size() >= r.allocation_size()) break;
        cr->add_deviceids(id);
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status Allocate(grpc::ServerContext*, const pb::AllocateRequest* req,
                        pb::AllocateResponse* out) override {
    absl::MutexLock lock(&mu_);
    for (const pb::ContainerAllocateRequest& r : req->container_requests()) {
      allocate_calls_.emplace_back(r.devices_ids().begin(), r.devices_ids().end());
      pb::ContainerAllocateResponse* cr = out->add_container_responses();
      std::string ids;
      for (const std::string& id : r.devices_ids()) {
        pb::Mount* m = cr->add_mounts();
        m->set_container_path("/dev/" + id);
        m->set_host_path("/tmp/" + id);
        pb::DeviceSpec* d = cr->add_devices();
        d->set_container_path("/dev/fake-" + id);
        d->set_host_path("/dev/null");
        d->set_permissions("rw");
        absl::StrAppend(&ids, ids.empty() ? "" : ",", id);
      }
      (*cr->mutable_envs())["FAKE_DEVICES"] = ids;
      (*cr->mutable_annotations())["example.com/devices"] = ids;
      cr->add_cdi_devices()->set_name("example.com/dev=" + ids);
    }
    return grpc::Status::OK;
  }

  grpc::Status PreStartContainer(grpc::ServerContext*, const pb::PreStartContainerRequest* req,
                                 pb::PreStartContainerResponse*) override {
    absl::MutexLock lock(&mu_);
    prestart_calls_.emplace_back(req->devices_ids().begin(), req->devices_ids().end());
    return grpc::Status::OK;
  }

  const std::string dir_;
  const std::string name_;
  std::unique_ptr<grpc::Server> server_;
  mutable absl::Mutex mu_;
  FakePluginOptions options_ ABSL_GUARDED_BY(mu_);
  int generation_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  int preferred_calls_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::vector<std::string>> allocate_calls_ ABSL_GUARDED_BY(mu_);
  std::vector<std::vector<std::string>> prestart_calls_ ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<std::unique_ptr<FakeDevicePlugin>> FakeDevicePlugin::Start(
    const std::string& dir, const std::string& socket_name, FakePluginOptions options) {
  auto impl = std::make_unique<Impl>(dir, socket_name, std::move(options));
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat("unix:", dir, "/", socket_name),
                           grpc::InsecureServerCredentials());
  builder.RegisterService(impl.get());
  impl->server_ = builder.BuildAndStart();
  if (impl->server_ == nullptr) return absl::UnavailableError("cannot serve the fake plugin");
  return std::unique_ptr<FakeDevicePlugin>(new FakeDevicePlugin(std::move(impl)));
}

FakeDevicePlugin::FakeDevicePlugin(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

FakeDevicePlugin::~FakeDevicePlugin() { Stop(); }

absl::Status FakeDevicePlugin::Register(const std::string& kubelet_socket,
                                        const std::string& version) {
  auto stub = pb::Registration::NewStub(cri::DialUnixSocket(kubelet_socket));
  pb::RegisterRequest req;
  req.set_version(version);
  req.set_endpoint(impl_->name_);
  {
    absl::MutexLock lock(&impl_->mu_);
    req.set_resource_name(impl_->options_.resource);
  }
  pb::Empty resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  grpc::Status s = stub->Register(&ctx, req, &resp);
  if (!s.ok())
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
  return absl::OkStatus();
}

void FakeDevicePlugin::SetDevices(std::vector<FakeDevice> devices) {
  absl::MutexLock lock(&impl_->mu_);
  impl_->options_.devices = std::move(devices);
  ++impl_->generation_;
}

void FakeDevicePlugin::Stop() {
  {
    absl::MutexLock lock(&impl_->mu_);
    if (impl_->stopped_) return;
    impl_->stopped_ = true;
  }
  impl_->server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  ::unlink(absl::StrCat(impl_->dir_, "/", impl_->name_).c_str());
}

std::vector<std::vector<std::string>> FakeDevicePlugin::AllocateCalls() const {
  absl::MutexLock lock(&impl_->mu_);
  return impl_->allocate_calls_;
}

std::vector<std::vector<std::string>> FakeDevicePlugin::PreStartCalls() const {
  absl::MutexLock lock(&impl_->mu_);
  return impl_->prestart_calls_;
}

int FakeDevicePlugin::PreferredCalls() const {
  absl::MutexLock lock(&impl_->mu_);
  return impl_->preferred_calls_;
}

}  // namespace kubelet::devicemanager::testing
