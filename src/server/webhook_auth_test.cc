// Webhook authentication and authorization against a scripted API client: the review bodies,
// the answers' mapping, caching by TTL, and retries.
#include "server/webhook_auth.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace kubelet::server {
namespace {

using json = nlohmann::json;

class ScriptedClient final : public apiclient::RestClient {
 public:
  using Fn = std::function<absl::StatusOr<apiclient::Response>(const apiclient::Request&)>;
  explicit ScriptedClient(Fn fn) : fn_(std::move(fn)) {}
  absl::StatusOr<apiclient::Response> Do(const apiclient::Request& request) override {
    requests.push_back(request);
    return fn_(request);
  }
  absl::StatusOr<apiclient::Response> Watch(const apiclient::Request&,
                                            const apiclient::WatchEventFn&) override {
    return absl::UnimplementedError("watch");
  }
  std::vector<apiclient::Request> requests;

 private:
  Fn fn_;
};

apiclient::Response Json(int code, const json& body) {
  apiclient::Response r;
  r.code = code;
  r.body = body.dump();
  return r;
}

constexpr WebhookRetry kFastRetry{.tries = 3, .initial = absl::Milliseconds(1), .factor = 1};

TEST(WebhookTokenAuthenticator, ReviewsTokensAndCachesAnswers) {
  auto client = std::make_shared<ScriptedClient>([](const apiclient::Request& req) {
    json in = json::parse(req.body);
    json out = in;
    const std::string token = in["spec"]["token"];
    if (token == "good") {
      json user = {{"username", "system:serviceaccount:ns:sa"}, {"uid", "u-1"}};
      user["groups"] = json::array({"system:serviceaccounts"});
      user["extra"]["authentication.kubernetes.io/pod-name"] = json::array({"p"});
      out["status"] = {{"authenticated", true}, {"user", user}};
    } else if (token == "error") {
      out["status"] = {{"error", "token has expired"}};
    } else {
      out["status"] = json::object();
    }
    return Json(201, out);
  });
  FakeClock clock;
  WebhookTokenAuthenticator auth(client, clock, absl::Minutes(2), kFastRetry);
  auto u = auth.Authenticate("good");
  ASSERT_TRUE(u.ok() && u->has_value()) << u.status();
  EXPECT_EQ((*u)->name, "system:serviceaccount:ns:sa");
  EXPECT_EQ((*u)->uid, "u-1");
  EXPECT_EQ((*u)->groups, std::vector<std::string>{"system:serviceaccounts"});
  EXPECT_EQ((*u)->extra.at("authentication.kubernetes.io/pod-name"), std::vector<std::string>{"p"});
  ASSERT_EQ(client->requests.size(), 1u);
  EXPECT_EQ(client->requests[0].path, "/apis/authentication.k8s.io/v1/tokenreviews");
  json sent = json::parse(client->requests[0].body);
  EXPECT_EQ(sent["apiVersion"], "authentication.k8s.io/v1");
  EXPECT_EQ(sent["kind"], "TokenReview");
  EXPECT_FALSE(sent["spec"].contains("audiences"));

  // Accepted and refused answers are cached for the TTL; errors are not.
  ASSERT_TRUE(auth.Authenticate("good").ok());
  auto bad = auth.Authenticate("bad");
  ASSERT_TRUE(bad.ok());
  EXPECT_FALSE(bad->has_value());
  ASSERT_TRUE(auth.Authenticate("bad").ok());
  EXPECT_EQ(client->requests.size(), 2u);
  EXPECT_EQ(auth.Authenticate("error").status().message(), "token has expired");
  EXPECT_FALSE(auth.Authenticate("error").ok());
  EXPECT_EQ(client->requests.size(), 4u);
  clock.Advance(absl::Minutes(2));
  ASSERT_TRUE(auth.Authenticate("good").ok());
  EXPECT_EQ(client->requests.size(), 5u);
}

TEST(WebhookTokenAuthenticator, RetriesServerErrorsThenFails) {
  auto client = std::make_shared<ScriptedClient>([](const apiclient::Request&) {
    return Json(503, json{{"kind", "Status"}});
  });
  FakeClock clock;
  WebhookTokenAuthenticator auth(client, clock, absl::Minutes(2), kFastRetry);
  EXPECT_FALSE(auth.Authenticate("t").ok());
  EXPECT_EQ(client->requests.size(), 3u);
}

TEST(WebhookAuthorizer, SubjectAccessReviewAndTtls) {
  int allowed_calls = 0;
  auto client = std::make_shared<ScriptedClient>([&](const apiclient::Request& req) {
    json in = json::parse(req.body);
    json out = in;
    const std::string sub = in["spec"]["resourceAttributes"].value("subresource", "");
    if (sub == "both") {
      out["status"] = {{"allowed", true}, {"denied", true}};
    } else if (sub == "stats") {
      ++allowed_calls;
      out["status"] = {{"allowed", true}};
    } else {
      out["status"] = {{"allowed", false}, {"reason", "no RBAC policy matched"}};
    }
    return Json(201, out);
  });
  FakeClock clock;
  WebhookAuthorizer authz(client, clock, absl::Minutes(5), absl::Seconds(30), kFastRetry);
  server::UserInfo user{"alice", {"devs", "system:authenticated"}, "u-1", {{"k", {"v"}}}};
  server::RequestAttributes attrs;
  attrs.verb = "get";
  attrs.subresource = "stats";
  attrs.name = "node-1";
  auto d = authz.Authorize(user, attrs);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->allowed);
  json sent = json::parse(client->requests[0].body);
  EXPECT_EQ(client->requests[0].path, "/apis/authorization.k8s.io/v1/subjectaccessreviews");
  EXPECT_EQ(sent["apiVersion"], "authorization.k8s.io/v1");
  EXPECT_EQ(sent["spec"]["user"], "alice");
  EXPECT_EQ(sent["spec"]["uid"], "u-1");
  EXPECT_EQ(sent["spec"]["groups"], json({"devs", "system:authenticated"}));
  EXPECT_EQ(sent["spec"]["extra"]["k"], json({"v"}));
  EXPECT_EQ(sent["spec"]["resourceAttributes"], json({{"verb", "get"},
                                                      {"version", "v1"},
                                                      {"resource", "nodes"},
                                                      {"subresource", "stats"},
                                                      {"name", "node-1"}}));

  attrs.subresource = "proxy";
  d = authz.Authorize(user, attrs);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->allowed);
  EXPECT_EQ(d->reason, "no RBAC policy matched");

  // Allowed for 5 minutes, denied for 30 seconds.
  clock.Advance(absl::Seconds(31));
  const size_t before = client->requests.size();
  attrs.subresource = "stats";
  ASSERT_TRUE(authz.Authorize(user, attrs).ok());
  EXPECT_EQ(client->requests.size(), before);
  attrs.subresource = "proxy";
  ASSERT_TRUE(authz.Authorize(user, attrs).ok());
  EXPECT_EQ(client->requests.size(), before + 1);
  clock.Advance(absl::Minutes(5));
  attrs.subresource = "stats";
  ASSERT_TRUE(authz.Authorize(user, attrs).ok());
  EXPECT_EQ(allowed_calls, 2);

  attrs.subresource = "both";
  EXPECT_FALSE(authz.Authorize(user, attrs).ok());
}

}  // namespace
}  // namespace kubelet::server
