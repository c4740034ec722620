#include "kubelet/pluginmanager/testing/fake_plugin.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "kubelet/pluginmanager/proto/registration.grpc.pb.h"

namespace kubelet::pluginmanager::testing {

class FakePlugin::Impl final : public ::pluginregistration::Registration::Service {
 public:
  Impl(std::string socket, PluginInfo info) : socket_(std::move(socket)), info_(std::move(info)) {}

  grpc::Status GetInfo(grpc::ServerContext*, const ::pluginregistration::InfoRequest*,
                       ::pluginregistration::PluginInfo* resp) override {
    absl::MutexLock lock(&mu_);
    ++get_info_calls_;
    resp->set_type(info_.type);
    resp->set_name(info_.name);
    resp->set_endpoint(info_.endpoint);
    for (const std::string& v : info_.supported_versions) resp->add_supported_versions(v);
    return grpc::Status::OK;
  }

  grpc::Status NotifyRegistrationStatus(
      grpc::ServerContext*, const ::pluginregistration::RegistrationStatus* req,
      ::pluginregistration::RegistrationStatusResponse*) override {
    absl::MutexLock lock(&mu_);
    notified_.push_back({req->plugin_registered(), req->error()});
    return grpc::Status::OK;
  }

  const std::string socket_;
  const PluginInfo info_;
  std::unique_ptr<grpc::Server> server_;
  mutable absl::Mutex mu_;
  std::vector<NotifiedStatus> notified_ ABSL_GUARDED_BY(mu_);
  int get_info_calls_ ABSL_GUARDED_BY(mu_) = 0;
};

absl::StatusOr<std::unique_ptr<FakePlugin>> FakePlugin::Start(const std::string& socket_path,
                                                              PluginInfo info) {
  auto impl = std::make_unique<Impl>(socket_path, std::move(info));
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat("unix:", socket_path), grpc::InsecureServerCredentials());
  builder.RegisterService(impl.get());
  impl->server_ = builder.BuildAndStart();
  if (impl->server_ == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot serve on ", socket_path));
  }
  return std::unique_ptr<FakePlugin>(new FakePlugin(std::move(impl)));
}

FakePlugin::FakePlugin(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

FakePlugin::~FakePlugin() {
  impl_->server_->Shutdown();
  ::unlink(impl_->socket_.c_str());
}

std::vector<NotifiedStatus> FakePlugin::Notified() const {
  absl::MutexLock lock(&impl_->mu_);
  return impl_->notified_;
}

int FakePlugin::GetInfoCalls() const {
  absl::MutexLock lock(&impl_->mu_);
  return impl_->get_info_calls_;
}

const std::string& FakePlugin::socket_path() const { return impl_->socket_; }

}  // namespace kubelet::pluginmanager::testing
