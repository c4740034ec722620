// Authentication and authorization of kubelet API requests (upstream cmd/kubelet/app/auth.go
// BuildAuth and pkg/kubelet/server's auth filter). The webhook parts (TokenReview,
// SubjectAccessReview) are injected as functions, so this folder needs no API client.
//
// Contract:
// - Authentication, in upstream's order; the first that succeeds wins; when none does but one
//   failed, their errors together answer 401 (a bad credential is never downgraded to
//   anonymous):
//   1. a client certificate verified against authentication.x509.clientCAFile -> user = subject
//      CN, groups = subject O values; a presented certificate that does not verify is an error;
//   2. with a token authenticator (authentication.webhook.enabled), "Authorization: Bearer <t>"
//      (scheme in any case) -> the reviewed user; a token it does not accept is the error
//      "invalid bearer token"; without one a bearer token counts as no credential;
//   3. with authentication.anonymous.enabled, user "system:anonymous" in group
//      "system:unauthenticated"; otherwise 401 "Unauthorized".
//   Authenticated users get the group "system:authenticated" unless they have it (or
//   "system:unauthenticated") already.
// - Authorization: attributes as upstream's GetRequestAttributes (verb from the method, HEAD and
//   others empty, resource "nodes", name = node, subresource stats / metrics / log / checkpoint /
//   proxy by path). The authorizer is AlwaysAllow unless one is given; a denial answers 403
//   "Forbidden (user=..., verb=..., resource=..., subresource=...)", an authorizer error 500
//   "Authorization error (user=..., ...)".
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
// An error when the decision could not be made (the webhook failed): 500.
using Authorizer =
    std::function<absl::StatusOr<AuthzDecision>(const UserInfo&, const RequestAttributes&)>;
// The user a bearer token stands for; nullopt when the token is not accepted; an error when it
// could not be checked. Must be thread-safe.
using TokenAuthenticator =
    std::function<absl::StatusOr<std::optional<UserInfo>>(const std::string& token)>;

struct AuthOptions {
  bool anonymous = false;
  bool x509 = false;                       // a client CA is configured
  TokenAuthenticator token_authenticator;  // empty: bearer tokens are not checked
  Authorizer authorizer;                   // empty: AlwaysAllow
  std::string node_name;
};

// nullopt: no credential and anonymous disabled. An error: a credential that is invalid.
absl::StatusOr<std::optional<UserInfo>> Authenticate(const AuthOptions& options,
                                                     const HttpRequest& req);

HttpFilter MakeAuthFilter(AuthOptions options);

}  // namespace kubelet::server

#endif  // KUBELET_SERVER_AUTH_H_
