#include "kubelet/csi/csi_client.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "kubelet/csi/proto/csi.grpc.pb.h"

namespace kubelet::csi {
namespace {

class GrpcCsiClient final : public CsiClient {
 public:
  absl::StatusOr<NodeInfo> NodeGetInfo(const std::string& endpoint,
                                       absl::Duration timeout) override {
    auto stub = ::csi::v1::Node::NewStub(Dial(endpoint));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + absl::ToChronoNanoseconds(timeout));
    ::csi::v1::NodeGetInfoRequest req;
    ::csi::v1::NodeGetInfoResponse resp;
    grpc::Status s = stub->NodeGetInfo(&ctx, req, &resp);
    if (!s.ok()) {
      return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                          absl::StrCat("rpc error: code = ", CodeName(s.error_code()),
                                       " desc = ", s.error_message()));
    }
    NodeInfo info;
    info.node_id = resp.node_id();
    info.max_volumes_per_node = resp.max_volumes_per_node();
    if (resp.has_accessible_topology()) {
      info.topology.insert(resp.accessible_topology().segments().begin(),
                           resp.accessible_topology().segments().end());
    }
    return info;
  }

 private:
  static std::shared_ptr<grpc::Channel> Dial(const std::string& endpoint) {
    std::string path = endpoint;
    if (absl::StartsWith(path, "unix://")) path = path.substr(7);
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetString(GRPC_ARG_DEFAULT_AUTHORITY, "localhost");
    return grpc::CreateCustomChannel(absl::StrCat("unix:", path),
                                     grpc::InsecureChannelCredentials(), args);
  }

  // Go's codes.Code String().
  static const char* CodeName(grpc::StatusCode c) {
    static const char* const kNames[] = {
        "OK",       "Canceled",       "Unknown",          "InvalidArgument",   "DeadlineExceeded",
        "NotFound", "AlreadyExists",  "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
        "Aborted",  "OutOfRange",     "Unimplemented",    "Internal",          "Unavailable",
        "DataLoss", "Unauthenticated"};
    const int i = static_cast<int>(c);
    return i >= 0 && i < 17 ? kNames[i] : "Unknown";
  }
};

}  // namespace

std::unique_ptr<CsiClient> NewGrpcCsiClient() { return std::make_unique<GrpcCsiClient>(); }

}  // namespace kubelet::csi
