#include "kubelet/csi/csi_client.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "cri/grpc_client.h"
#include "kubelet/csi/proto/csi.grpc.pb.h"

namespace kubelet::csi {
namespace {

namespace pb = ::csi::v1;

void FillCapability(const VolumeCapability& c, pb::VolumeCapability* out) {
  if (c.block) {
    out->mutable_block();
  } else {
    pb::VolumeCapability::MountVolume* m = out->mutable_mount();
    m->set_fs_type(c.fs_type);
    for (const std::string& f : c.mount_flags) m->add_mount_flags(f);
    m->set_volume_mount_group(c.volume_mount_group);
  }
  out->mutable_access_mode()->set_mode(
      static_cast<pb::VolumeCapability::AccessMode::Mode>(c.access_mode));
}

class GrpcCsiClient final : public CsiClient {
 public:
  absl::StatusOr<NodeInfo> NodeGetInfo(const std::string& endpoint,
                                       absl::Duration timeout) override {
    auto stub = pb::Node::NewStub(cri::DialUnixSocket(endpoint));
    grpc::ClientContext ctx;
    SetDeadline(&ctx, timeout);
    pb::NodeGetInfoRequest req;
    pb::NodeGetInfoResponse resp;
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

  absl::StatusOr<NodeCapabilities> NodeGetCapabilities(const std::string& endpoint,
                                                       absl::Duration timeout) override {
    auto stub = pb::Node::NewStub(cri::DialUnixSocket(endpoint));
    grpc::ClientContext ctx;
    SetDeadline(&ctx, timeout);
    pb::NodeGetCapabilitiesRequest req;
    pb::NodeGetCapabilitiesResponse resp;
    grpc::Status s = stub->NodeGetCapabilities(&ctx, req, &resp);
    if (!s.ok()) return FromGrpc(s);
    NodeCapabilities caps;
    for (const pb::NodeServiceCapability& c : resp.capabilities()) {
      if (!c.has_rpc()) continue;
      switch (c.rpc().type()) {
        case pb::NodeServiceCapability::RPC::STAGE_UNSTAGE_VOLUME:
          caps.stage_unstage = true;
          break;
        case pb::NodeServiceCapability::RPC::GET_VOLUME_STATS:
          caps.get_volume_stats = true;
          break;
        case pb::NodeServiceCapability::RPC::EXPAND_VOLUME:
          caps.expand = true;
          break;
        case pb::NodeServiceCapability::RPC::VOLUME_CONDITION:
          caps.volume_condition = true;
          break;
        case pb::NodeServiceCapability::RPC::SINGLE_NODE_MULTI_WRITER:
          caps.single_node_multi_writer = true;
          break;
        case pb::NodeServiceCapability::RPC::VOLUME_MOUNT_GROUP:
          caps.volume_mount_group = true;
          break;
        default:
          break;
      }
    }
    return caps;
  }

  absl::Status NodeStageVolume(const std::string& endpoint, const StageRequest& r,
                               absl::Duration timeout) override {
    auto stub = pb::Node::NewStub(cri::DialUnixSocket(endpoint));
    grpc::ClientContext ctx;
    SetDeadline(&ctx, timeout);
    pb::NodeStageVolumeRequest req;
    req.set_volume_id(r.volume_id);
    req.mutable_publish_context()->insert(r.publish_context.begin(), r.publish_context.end());
    req.set_staging_target_path(r.staging_target_path);
    FillCapability(r.capability, req.mutable_volume_capability());
    req.mutable_secrets()->insert(r.secrets.begin(), r.secrets.end());
    req.mutable_volume_context()->insert(r.volume_context.begin(), r.volume_context.end());
    pb::NodeStageVolumeResponse resp;
    return FromGrpc(stub->NodeStageVolume(&ctx, req, &resp));
  }

  absl::Status NodeUnstageVolume(const std::string& endpoint, const std::string& volume_id,
                                 const std::string& staging_target_path,
                                 absl::Duration timeout) override {
    auto stub = pb::Node::NewStub(cri::DialUnixSocket(endpoint));
    grpc::ClientContext ctx;
    SetDeadline(&ctx, timeout);
    pb::NodeUnstageVolumeRequest req;
    req.set_volume_id(volume_id);
    req.set_staging_target_path(staging_target_path);
    pb::NodeUnstageVolumeResponse resp;
    return FromGrpc(stub->NodeUnstageVolume(&ctx, req, &resp));
  }

  absl::Status NodePublishVolume(const std::string& endpoint, const PublishRequest& r,
                                 absl::Duration timeout) override {
    auto stub = pb::Node::NewStub(cri::DialUnixSocket(endpoint));
    grpc::ClientContext ctx;
    SetDeadline(&ctx, timeout);
    pb::NodePublishVolumeRequest req;
    req.set_volume_id(r.volume_id);
    req.mutable_publish_context()->insert(r.publish_context.begin(), r.publish_context.end());
    req.set_staging_target_path(r.staging_target_path);
    req.set_target_path(r.target_path);
    FillCapability(r.capability, req.mutable_volume_capability());
    req.set_readonly(r.readonly);
    req.mutable_secrets()->insert(r.secrets.begin(), r.secrets.end());
    req.mutable_volume_context()->insert(r.volume_context.begin(), r.volume_context.end());
    pb::NodePublishVolumeResponse resp;
    return FromGrpc(stub->NodePublishVolume(&ctx, req, &resp));
  }

  absl::Status NodeUnpublishVolume(const std::string& endpoint, const std::string& volume_id,
                                   const std::string& target_path,
                                   absl::Duration timeout) override {
    auto stub = pb::Node::NewStub(cri::DialUnixSocket(endpoint));
    grpc::ClientContext ctx;
    SetDeadline(&ctx, timeout);
    pb::NodeUnpublishVolumeRequest req;
    req.set_volume_id(volume_id);
    req.set_target_path(target_path);
    pb::NodeUnpublishVolumeResponse resp;
    return FromGrpc(stub->NodeUnpublishVolume(&ctx, req, &resp));
  }

  absl::StatusOr<VolumeStats> NodeGetVolumeStats(const std::string& endpoint,
                                                 const std::string& volume_id,
                                                 const std::string& volume_path,
                                                 absl::Duration timeout) override {
    auto stub = pb::Node::NewStub(cri::DialUnixSocket(endpoint));
    grpc::ClientContext ctx;
    SetDeadline(&ctx, timeout);
    pb::NodeGetVolumeStatsRequest req;
    req.set_volume_id(volume_id);
    req.set_volume_path(volume_path);
    pb::NodeGetVolumeStatsResponse resp;
    grpc::Status s = stub->NodeGetVolumeStats(&ctx, req, &resp);
    if (!s.ok()) return FromGrpc(s);
    VolumeStats out;
    for (const pb::VolumeUsage& u : resp.usage()) {
      VolumeUsage v{u.available(), u.total(), u.used()};
      if (u.unit() == pb::VolumeUsage::BYTES) out.bytes = v;
      if (u.unit() == pb::VolumeUsage::INODES) out.inodes = v;
    }
    if (resp.has_volume_condition()) {
      out.abnormal = resp.volume_condition().abnormal();
      out.message = resp.volume_condition().message();
    }
    return out;
  }

 private:
  static void SetDeadline(grpc::ClientContext* ctx, absl::Duration timeout) {
    ctx->set_deadline(std::chrono::system_clock::now() + absl::ToChronoNanoseconds(timeout));
  }
  static absl::Status FromGrpc(const grpc::Status& s) {
    if (s.ok()) return absl::OkStatus();
    const auto code = static_cast<absl::StatusCode>(s.error_code());
    return absl::Status(code, cri::GoRpcErrorText(code, s.error_message()));
  }
};

}  // namespace

std::unique_ptr<CsiClient> NewGrpcCsiClient() { return std::make_unique<GrpcCsiClient>(); }

}  // namespace kubelet::csi
