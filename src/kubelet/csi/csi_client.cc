#include "kubelet/csi/csi_client.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "cri/grpc_client.h"
#include "kubelet/csi/proto/csi.grpc.pb.h"

namespace kubelet::csi {
namespace {

class GrpcCsiClient final : public CsiClient {
 public:
  absl::StatusOr<NodeInfo> NodeGetInfo(const std::string& endpoint,
                                       absl::Duration timeout) override {
    auto stub = ::csi::v1::Node::NewStub(cri::DialUnixSocket(endpoint));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + absl::ToChronoNanoseconds(timeout));
    ::csi::v1::NodeGetInfoRequest req;
    ::csi::v1::NodeGetInfoResponse resp;
    grpc::Status s = stub->NodeGetInfo(&ctx, req, &resp);
    if (!s.ok()) return FromGrpc(s);
    NodeInfo info;
    info.node_id = resp.node_id();
    info.max_volumes_per_node = resp.max_volumes_per_node();
    if (resp.has_accessible_topology()) {
      info.topology.insert(resp.accessible_topology().segments().begin(),
                           resp.accessible_topology().segments().end());
    }
    return info;
  }

  absl::Status NodePublishVolume(const std::string& endpoint, const PublishRequest& r,
                                 absl::Duration timeout) override {
    auto stub = ::csi::v1::Node::NewStub(cri::DialUnixSocket(endpoint));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + absl::ToChronoNanoseconds(timeout));
    ::csi::v1::NodePublishVolumeRequest req;
    req.set_volume_id(r.volume_id);
    req.set_staging_target_path(r.staging_target_path);
    req.set_target_path(r.target_path);
    req.set_readonly(r.readonly);
    ::csi::v1::VolumeCapability* cap = req.mutable_volume_capability();
    cap->mutable_mount()->set_fs_type(r.fs_type);
    for (const std::string& f : r.mount_flags) cap->mutable_mount()->add_mount_flags(f);
    cap->mutable_access_mode()->set_mode(
        static_cast<::csi::v1::VolumeCapability::AccessMode::Mode>(r.access_mode));
    req.mutable_publish_context()->insert(r.publish_context.begin(), r.publish_context.end());
    req.mutable_volume_context()->insert(r.volume_context.begin(), r.volume_context.end());
    req.mutable_secrets()->insert(r.secrets.begin(), r.secrets.end());
    ::csi::v1::NodePublishVolumeResponse resp;
    return FromGrpc(stub->NodePublishVolume(&ctx, req, &resp));
  }

  absl::Status NodeUnpublishVolume(const std::string& endpoint, const std::string& volume_id,
                                   const std::string& target_path,
                                   absl::Duration timeout) override {
    auto stub = ::csi::v1::Node::NewStub(cri::DialUnixSocket(endpoint));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + absl::ToChronoNanoseconds(timeout));
    ::csi::v1::NodeUnpublishVolumeRequest req;
    req.set_volume_id(volume_id);
    req.set_target_path(target_path);
    ::csi::v1::NodeUnpublishVolumeResponse resp;
    return FromGrpc(stub->NodeUnpublishVolume(&ctx, req, &resp));
  }

 private:
  static absl::Status FromGrpc(const grpc::Status& s) {
    if (s.ok()) return absl::OkStatus();
    const auto code = static_cast<absl::StatusCode>(s.error_code());
    return absl::Status(code, cri::GoRpcErrorText(code, s.error_message()));
  }
};

}  // namespace

std::unique_ptr<CsiClient> NewGrpcCsiClient() { return std::make_unique<GrpcCsiClient>(); }

}  // namespace kubelet::csi
