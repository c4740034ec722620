#include "server/http_server.h"

#include <atomic>

#include "gtest/gtest.h"
#include "server/configz.h"
#include "server/healthz.h"
#include "server/raw_http_test_util.h"

namespace kubelet::server {
namespace {

using testing::Body;
using testing::Get;
using testing::RawExchange;

class HealthzTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<HttpServer>(HttpServerOptions{.name = "healthz", .port = 0});
    InstallHealthz(*server_, {{"syncloop", [this] {
                                 return healthy_.load() ? absl::OkStatus()
                                                        : absl::InternalError("sync loop stuck");
                               }}});
    ASSERT_TRUE(server_->Start().ok());
    ASSERT_GT(server_->port(), 0);
  }
  std::atomic<bool> healthy_{true};
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HealthzTest, OkWhenAllChecksPass) {
  std::string r = Get(server_->port(), "/healthz");
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
  EXPECT_EQ(Body(r), "ok");
  EXPECT_NE(r.find("X-Content-Type-Options: nosniff"), std::string::npos);
  EXPECT_EQ(Body(Get(server_->port(), "/healthz?verbose")),
            "[+]ping ok\n[+]syncloop ok\nhealthz check passed\n");
  EXPECT_EQ(Body(Get(server_->port(), "/healthz/ping")), "ok");
}

TEST_F(HealthzTest, FailingCheck) {
  healthy_ = false;
  std::string r = Get(server_->port(), "/healthz");
  EXPECT_EQ(r.rfind("HTTP/1.1 500", 0), 0u) << r;
  EXPECT_EQ(Body(r), "[+]ping ok\n[-]syncloop failed: reason withheld\nhealthz check failed\n");
  r = Get(server_->port(), "/healthz/syncloop");
  EXPECT_EQ(Body(r), "internal server error: sync loop stuck\n");
  r = Get(server_->port(), "/healthz?exclude=syncloop");
  EXPECT_EQ(Body(r), "ok");
}

TEST_F(HealthzTest, UnknownPathIs404) {
  std::string r = Get(server_->port(), "/nope");
  EXPECT_EQ(r.rfind("HTTP/1.1 404", 0), 0u) << r;
  EXPECT_EQ(Body(r), "404 page not found\n");
}

TEST_F(HealthzTest, MalformedRequestsAreRefusedAndServerKeepsServing) {
  EXPECT_EQ(RawExchange(server_->port(), "GARBAGE\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  std::string huge = "GET /healthz HTTP/1.1\r\nX-Big: " + std::string(2 << 20, 'a') + "\r\n\r\n";
  std::string r = RawExchange(server_->port(), huge);
  EXPECT_TRUE(r.empty() || r.rfind("HTTP/1.1 431", 0) == 0) << r.substr(0, 80);
  EXPECT_EQ(
      RawExchange(server_->port(), "GET /healthz%zz HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 400", 0),
      0u);
  EXPECT_EQ(Body(Get(server_->port(), "/healthz")), "ok");
}

TEST(HttpServer, KeepAliveServesSeveralRequests) {
  HttpServer server(HttpServerOptions{.port = 0});
  int calls = 0;
  server.Handle("/x/", [&](const HttpRequest& req, HttpResponse* res) {
    ++calls;
    res->body = req.path + "|" + (req.QueryValues("a").empty() ? "" : req.QueryValues("a")[0]);
  });
  ASSERT_TRUE(server.Start().ok());
  std::string r = RawExchange(server.port(),
                              "GET /x/one?a=b%20c HTTP/1.1\r\nHost: x\r\n\r\n"
                              "GET /x/two HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(r.find("/x/one|b c"), std::string::npos) << r;
  EXPECT_NE(r.find("/x/two|"), std::string::npos) << r;
  EXPECT_EQ(calls, 2);
  server.Stop();
  EXPECT_EQ(Get(server.port(), "/x/"), "connect failed");
}

TEST(HttpServer, BindErrorNamesAddress) {
  HttpServer a(HttpServerOptions{.port = 0});
  ASSERT_TRUE(a.Start().ok());
  HttpServer b(HttpServerOptions{.name = "healthz", .port = a.port()});
  absl::Status st = b.Start();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("127.0.0.1:" + std::to_string(a.port())), std::string::npos)
      << st.message();
  HttpServer c(HttpServerOptions{.address = "not-an-ip"});
  EXPECT_EQ(c.Start().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Configz, RendersSections) {
  Configz c;
  ASSERT_TRUE(c.Register("kubeletconfig", "{\"a\":1}").ok());
  EXPECT_FALSE(c.Register("kubeletconfig", "{}").ok());
  EXPECT_EQ(c.Render(), "{\"kubeletconfig\":{\"a\":1}}");
}

}  // namespace
}  // namespace kubelet::server
