#include "cri/grpc_client.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/strings.h"

namespace kubelet::cri {

std::string_view GoCodeName(absl::StatusCode code) {
  static constexpr std::string_view kNames[] = {
      "OK",       "Canceled",       "Unknown",          "InvalidArgument",   "DeadlineExceeded",
      "NotFound", "AlreadyExists",  "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
      "Aborted",  "OutOfRange",     "Unimplemented",    "Internal",          "Unavailable",
      "DataLoss", "Unauthenticated"};
  const int i = static_cast<int>(code);
  return i >= 0 && i < 17 ? kNames[i] : "Unknown";
}

std::string GoRpcErrorText(absl::StatusCode code, std::string_view message) {
  return absl::StrCat("rpc error: code = ", AV(GoCodeName(code)), " desc = ", AV(message));
}

std::shared_ptr<grpc::Channel> DialUnixSocket(std::string_view path) {
  if (absl::StartsWith(AV(path), "unix://")) path.remove_prefix(7);
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetString(GRPC_ARG_DEFAULT_AUTHORITY, "localhost");
  return grpc::CreateCustomChannel(absl::StrCat("unix:", AV(path)),
                                   grpc::InsecureChannelCredentials(), args);
}

}  // namespace kubelet::cri
