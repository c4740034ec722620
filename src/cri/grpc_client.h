// What the kubelet's gRPC clients (CRI, CSI drivers, plugin registration, gRPC probes) share:
// grpc-go's printing of a status, which upstream's messages quote, and the dial of a local
// plugin's unix socket. Pure functions; thread-safe.
#ifndef KUBELET_CRI_GRPC_CLIENT_H_
#define KUBELET_CRI_GRPC_CLIENT_H_

#include <grpcpp/channel.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace kubelet::cri {

// Go's codes.Code String(): "OK", "Canceled", "DeadlineExceeded", ... ("Unknown" for others).
std::string_view GoCodeName(absl::StatusCode code);

// grpc-go's status.Error text: "rpc error: code = <GoCodeName> desc = <message>".
std::string GoRpcErrorText(absl::StatusCode code, std::string_view message);

// A lazily connecting channel to the unix socket at `path` ("unix://" prefix allowed), with
// authority "localhost" and a subchannel of its own, so a plugin restarted on the same path is
// reached anew. Used for one call or one short exchange, as upstream dials plugins per operation.
std::shared_ptr<grpc::Channel> DialUnixSocket(std::string_view path);

}  // namespace kubelet::cri

#endif  // KUBELET_CRI_GRPC_CLIENT_H_
