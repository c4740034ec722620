#include "cri/remote/grpc_util.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>
#include <sys/un.h>

#include <cctype>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "common/log.h"
#include "cri/remote/remote_runtime.h"

namespace kubelet::cri {
namespace {

// Reconnect backoff the upstream kubelet uses for its CRI connections.
constexpr int kBaseBackoffMs = 100;
constexpr int kMaxBackoffMs = 3000;
constexpr int kMinConnectTimeoutMs = 5000;

// Returns the URI scheme of `s` ("" if it has none), per RFC 3986: ALPHA *( ALPHA / DIGIT / "+"
// / "-" / "." ) followed by ':'.
absl::string_view SchemeOf(absl::string_view s) {
  if (s.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(s[0]))) return "";
  for (size_t i = 1; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == ':') return s.substr(0, i);
    if (!absl::ascii_isalnum(c) && c != '+' && c != '-' && c != '.') return "";
  }
  return "";
}

}  // namespace

absl::StatusOr<std::string> UnixSocketPathFromEndpoint(absl::string_view endpoint) {
  if (endpoint.empty()) {
    return absl::InvalidArgumentError("container runtime endpoint is empty");
  }
  std::string path;
  const absl::string_view scheme = SchemeOf(endpoint);
  if (scheme.empty()) {
    // A bare path; upstream falls back to unix for it (with a deprecation warning).
    path = std::string(endpoint);
  } else if (absl::AsciiStrToLower(scheme) != "unix") {
    return absl::InvalidArgumentError(
        absl::StrFormat("container runtime endpoint \"%s\" uses protocol \"%s\": only unix socket "
                        "endpoints (unix:///path/to/socket) are supported",
                        endpoint, scheme));
  } else {
    absl::string_view rest = endpoint.substr(scheme.size() + 1);
    if (absl::ConsumePrefix(&rest, "//")) {
      // unix://authority/path: like a URL parser, keep only the path.
      const size_t slash = rest.find('/');
      rest = slash == absl::string_view::npos ? absl::string_view() : rest.substr(slash);
    }
    const size_t query = rest.find_first_of("?#");
    if (query != absl::string_view::npos) rest = rest.substr(0, query);
    path = std::string(rest);
  }
  if (path.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("container runtime endpoint \"%s\" names no socket path", endpoint));
  }
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("container runtime endpoint \"%s\": socket path is longer than %d bytes",
                        endpoint, static_cast<int>(sizeof(sockaddr_un{}.sun_path)) - 1));
  }
  return path;
}

namespace internal {

absl::StatusOr<std::shared_ptr<grpc::Channel>> DialEndpoint(const std::string& endpoint) {
  absl::StatusOr<std::string> path = UnixSocketPathFromEndpoint(endpoint);
  if (!path.ok()) return path.status();
  if (SchemeOf(endpoint).empty()) {
    // Upstream (util.GetAddressAndDialer) says so once per connection it dials.
    KLOG_INFO("Using this endpoint is deprecated, please consider using full URL format",
              "endpoint", endpoint, "URL", absl::StrCat("unix://", endpoint));
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMsgSize);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, kBaseBackoffMs);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kMaxBackoffMs);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, kMinConnectTimeoutMs);
  std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(
      absl::StrCat("unix:", *path), grpc::InsecureChannelCredentials(), args);
  if (channel == nullptr) {
    return absl::InternalError(
        absl::StrFormat("cannot create a gRPC channel for endpoint \"%s\"", endpoint));
  }
  return channel;
}

absl::Status FromGrpc(absl::string_view method, const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat(method, ": ", status.error_message()));
}

absl::Status ContractError(absl::string_view method, absl::string_view message) {
  return absl::UnknownError(absl::StrCat(method, ": ", message));
}

void SetTimeout(grpc::ClientContext& context, absl::Duration timeout) {
  if (timeout == absl::InfiniteDuration()) return;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
}

}  // namespace internal
}  // namespace kubelet::cri
