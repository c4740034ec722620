#include "kubelet/pluginmanager/registration_client.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "cri/grpc_client.h"
#include "kubelet/pluginmanager/proto/registration.grpc.pb.h"

namespace kubelet::pluginmanager {
namespace {

std::chrono::system_clock::time_point DeadlineIn(absl::Duration d) {
  return std::chrono::system_clock::now() + absl::ToChronoNanoseconds(d);
}

class GrpcRegistrationClient final : public RegistrationClient {
 public:
  absl::StatusOr<PluginInfo> GetInfo(const std::string& socket_path, absl::Duration dial_timeout,
                                     absl::Duration timeout) override {
    std::shared_ptr<grpc::Channel> channel = cri::DialUnixSocket(socket_path);
    if (!channel->WaitForConnected(DeadlineIn(dial_timeout))) {
      return absl::UnavailableError(absl::StrCat("RegisterPlugin error -- dial failed at socket ",
                                                 socket_path, ", err: context deadline exceeded"));
    }
    auto stub = ::pluginregistration::Registration::NewStub(channel);
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(timeout));
    ::pluginregistration::InfoRequest req;
    ::pluginregistration::PluginInfo resp;
    grpc::Status s = stub->GetInfo(&ctx, req, &resp);
    if (!s.ok()) {
      return absl::Status(
          static_cast<absl::StatusCode>(s.error_code()),
          absl::StrCat("RegisterPlugin error -- failed to get plugin info using RPC GetInfo at "
                       "socket ",
                       socket_path, ", err: ", s.error_message()));
    }
    PluginInfo info;
    info.type = resp.type();
    info.name = resp.name();
    info.endpoint = resp.endpoint();
    info.supported_versions.assign(resp.supported_versions().begin(),
                                   resp.supported_versions().end());
    return info;
  }

  absl::Status NotifyRegistrationStatus(const std::string& socket_path, bool registered,
                                        const std::string& error, absl::Duration timeout) override {
    auto stub = ::pluginregistration::Registration::NewStub(cri::DialUnixSocket(socket_path));
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(timeout));
    ::pluginregistration::RegistrationStatus req;
    req.set_plugin_registered(registered);
    req.set_error(error);
    ::pluginregistration::RegistrationStatusResponse resp;
    grpc::Status s = stub->NotifyRegistrationStatus(&ctx, req, &resp);
    if (!s.ok()) {
      return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
    }
    return absl::OkStatus();
  }
};

}  // namespace

std::unique_ptr<RegistrationClient> NewGrpcRegistrationClient() {
  return std::make_unique<GrpcRegistrationClient>();
}

}  // namespace kubelet::pluginmanager
