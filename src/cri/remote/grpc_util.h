// Internal helpers shared by the remote runtime and image services. Not part of the public
// surface of the cri library.
#ifndef KUBELET_CRI_REMOTE_GRPC_UTIL_H_
#define KUBELET_CRI_REMOTE_GRPC_UTIL_H_

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/support/status.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/cancellation.h"

namespace kubelet::cri::internal {

// Creates a lazily connecting channel to the unix socket `endpoint` names.
absl::StatusOr<std::shared_ptr<grpc::Channel>> DialEndpoint(const std::string& endpoint);

// Maps a gRPC status to an absl::Status with the same code and "<method>: <message>".
absl::Status FromGrpc(absl::string_view method, const grpc::Status& status);

// A kUnknown error "<method>: <message>" for a response that breaks the CRI contract.
absl::Status ContractError(absl::string_view method, absl::string_view message);

// Sets a deadline `timeout` from now; an infinite timeout leaves the call without deadline.
void SetTimeout(grpc::ClientContext& context, absl::Duration timeout);

// Makes one unary call `fn` on `stub` with `timeout` and maps its status (see FromGrpc). The
// thread's CurrentCancellation(), if any, cancels the call.
template <typename Stub, typename Request, typename Response>
absl::StatusOr<Response> CallUnary(
    Stub& stub, grpc::Status (Stub::*fn)(grpc::ClientContext*, const Request&, Response*),
    absl::string_view method, const Request& request, absl::Duration timeout) {
  grpc::ClientContext context;
  SetTimeout(context, timeout);
  // The work this call is part of (a pod's sync) may be cancelled meanwhile: the call then ends
  // with CANCELLED, as upstream's calls do when their context is cancelled.
  OnCancel on_cancel([&context] { context.TryCancel(); });
  if (on_cancel.cancelled()) {
    return FromGrpc(method, grpc::Status(grpc::StatusCode::CANCELLED, "context canceled"));
  }
  Response response;
  grpc::Status status = (stub.*fn)(&context, request, &response);
  if (!status.ok()) return FromGrpc(method, status);
  return response;
}

}  // namespace kubelet::cri::internal

#endif  // KUBELET_CRI_REMOTE_GRPC_UTIL_H_
