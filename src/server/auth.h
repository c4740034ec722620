// Authentication and authorization of kubelet API requests in the forms that work without an
// API server (upstream cmd/kubelet/app/auth.go BuildAuth and pkg/kubelet/server's auth filter).
//
// Contract:
// - Authentication, in upstream's order: a client certificate verified against
//   authentication.x509.clientCAFile -> user = subject CN, groups = subject O values plus
//   "system:authenticated"; a presented certificate that does not verify is an error (401). A
//   bearer token cannot be checked without the webhook and counts as no credential. Then, with
//   authentication.anonymous.enabled, user "system:anonymous" in group "system:unauthenticated";
//   otherwise 401 "Unauthorized".
// - Authorization: attributes as upstream's GetRequestAttributes (verb from the method, resource
//   "nodes", name = node, subresource stats / metrics / log / checkpoint / proxy by path). The
//   authorizer is AlwaysAllow unless one is given; a denial answers 403 "Forbidden (user=...,
//   verb=..., resource=..., subresource=...)".
// - MakeAuthFilter returns an HttpServer filter that stores the user in HttpRequest::user.
// Thread-safety: the filter is immutable and safe on any thread; the authorizer must be too.
#ifndef KUBELET_SERVER_AUTH_H_
#define KUBELET_SERVER_AUTH_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "server/http_server.h"

namespace kubelet::server {

struct RequestAttributes {
  std::string verb;
  std::string resource = "nodes";
  std::string subresource;
  std::string name;  // the node
  std::string path;
};

RequestAttributes GetRequestAttributes(const std::string& node_name, const HttpRequest& req);

struct AuthzDecision {
  bool allowed = false;
  std::string reason;
};
using Authorizer = std::function<AuthzDecision(const UserInfo&, const RequestAttributes&)>;

struct AuthOptions {
  bool anonymous = false;
  bool x509 = false;      // a client CA is configured
  Authorizer authorizer;  // empty: AlwaysAllow
  std::string node_name;
};

// nullopt: no credential and anonymous disabled. An error: a credential that is invalid.
absl::StatusOr<std::optional<UserInfo>> Authenticate(const AuthOptions& options,
                                                     const HttpRequest& req);

HttpFilter MakeAuthFilter(AuthOptions options);

}  // namespace kubelet::server

#endif  // KUBELET_SERVER_AUTH_H_
