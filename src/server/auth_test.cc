// The authentication chain and the authorization answers of the kubelet API's filter, without
// a network: x509 first, then bearer tokens through the token authenticator, then anonymous;
// 401 / 403 / 500 bodies as upstream's.
#include "server/auth.h"

#include <string>

#include "gtest/gtest.h"

namespace kubelet::server {
namespace {

HttpRequest Request(const std::string& authorization = "") {
  HttpRequest req;
  req.method = "GET";
  req.path = "/pods";
  if (!authorization.empty()) req.headers.emplace("authorization", authorization);
  return req;
}

TokenAuthenticator Tokens() {
  return [](const std::string& token) -> absl::StatusOr<std::optional<UserInfo>> {
    if (token == "good") return std::optional<UserInfo>(UserInfo{"alice", {"devs"}, "u1", {}});
    if (token == "broken") return absl::UnavailableError("webhook down");
    return std::optional<UserInfo>();
  };
}

TEST(AuthenticateTest, BearerTokenThroughTheAuthenticator) {
  AuthOptions o{.anonymous = true, .token_authenticator = Tokens()};
  auto u = Authenticate(o, Request("Bearer good"));
  ASSERT_TRUE(u.ok() && u->has_value());
  EXPECT_EQ((*u)->name, "alice");
  EXPECT_EQ((*u)->uid, "u1");
  EXPECT_EQ((*u)->groups, (std::vector<std::string>{"devs", "system:authenticated"}));
  // The scheme in any case, surrounding white space trimmed.
  u = Authenticate(o, Request("  bEaReR good "));
  ASSERT_TRUE(u.ok() && u->has_value());
  EXPECT_EQ((*u)->name, "alice");
}

TEST(AuthenticateTest, RefusedTokenIsAnErrorEvenWithAnonymous) {
  AuthOptions o{.anonymous = true, .token_authenticator = Tokens()};
  auto u = Authenticate(o, Request("Bearer bad"));
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.status().message(), "invalid bearer token");
  u = Authenticate(o, Request("Bearer broken"));
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.status().message(), "webhook down");
}

TEST(AuthenticateTest, NoTokenFallsToAnonymousOrNothing) {
  AuthOptions o{.anonymous = true, .token_authenticator = Tokens()};
  for (const char* h : {"", "Basic Zm9vOmJhcg==", "Bearer", "Bearer  two-spaces"}) {
    auto u = Authenticate(o, Request(h));
    ASSERT_TRUE(u.ok() && u->has_value()) << h;
    EXPECT_EQ((*u)->name, "system:anonymous") << h;
    EXPECT_EQ((*u)->groups, std::vector<std::string>{"system:unauthenticated"});
  }
  o.anonymous = false;
  auto u = Authenticate(o, Request());
  ASSERT_TRUE(u.ok());
  EXPECT_FALSE(u->has_value());
  // Without a token authenticator a bearer token is no credential.
  AuthOptions plain{.anonymous = true};
  u = Authenticate(plain, Request("Bearer good"));
  ASSERT_TRUE(u.ok() && u->has_value());
  EXPECT_EQ((*u)->name, "system:anonymous");
}

TEST(AuthFilterTest, UnauthorizedForbiddenAndAuthorizationError) {
  AuthOptions o{.anonymous = false,
                .token_authenticator = Tokens(),
                .authorizer = [](const UserInfo& u,
                                 const RequestAttributes& a) -> absl::StatusOr<AuthzDecision> {
                  if (a.subresource == "stats") return absl::UnavailableError("sar down");
                  return AuthzDecision{u.name == "alice" && a.verb == "get", "rbac"};
                },
                .node_name = "node-1"};
  HttpFilter filter = MakeAuthFilter(o);

  HttpRequest req = Request();
  HttpResponse res;
  EXPECT_FALSE(filter(&req, &res));
  EXPECT_EQ(res.status, 401);
  EXPECT_EQ(res.body, "Unauthorized");

  req = Request("Bearer good");
  res = HttpResponse();
  EXPECT_TRUE(filter(&req, &res));
  EXPECT_EQ(req.user.name, "alice");

  req = Request("Bearer good");
  req.method = "POST";
  req.path = "/exec/ns/pod/c";
  res = HttpResponse();
  EXPECT_FALSE(filter(&req, &res));
  EXPECT_EQ(res.status, 403);
  EXPECT_EQ(res.body, "Forbidden (user=alice, verb=create, resource=nodes, subresource=proxy)");

  req = Request("Bearer good");
  req.path = "/stats/summary";
  res = HttpResponse();
  EXPECT_FALSE(filter(&req, &res));
  EXPECT_EQ(res.status, 500);
  EXPECT_EQ(res.body,
            "Authorization error (user=alice, verb=get, resource=nodes, subresource=stats)");
}

TEST(RequestAttributesTest, VerbAndSubresourceByMethodAndPath) {
  HttpRequest req = Request();
  req.method = "HEAD";
  req.path = "/metrics/cadvisor";
  RequestAttributes a = GetRequestAttributes("n", req);
  EXPECT_EQ(a.verb, "");
  EXPECT_EQ(a.subresource, "metrics");
  EXPECT_EQ(a.name, "n");
  req.method = "PUT";
  req.path = "/logs/syslog";
  a = GetRequestAttributes("n", req);
  EXPECT_EQ(a.verb, "update");
  EXPECT_EQ(a.subresource, "log");
  req.path = "/statsx";
  EXPECT_EQ(GetRequestAttributes("n", req).subresource, "proxy");
}

}  // namespace
}  // namespace kubelet::server
