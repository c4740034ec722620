#include "server/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>

#include "gtest/gtest.h"
#include "server/configz.h"
#include "server/healthz.h"

namespace kubelet::server {
namespace {

// Sends raw bytes to 127.0.0.1:port and returns everything the server writes until it closes.
std::string RawExchange(int port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return "connect failed";
  }
  size_t off = 0;
  while (off < request.size()) {
    ssize_t n = ::send(fd, request.data() + off, request.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string Get(int port, const std::string& target) {
  return RawExchange(port, "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
}

std::string Body(const std::string& response) {
  size_t p = response.find("\r\n\r\n");
  return p == std::string::npos ? "" : response.substr(p + 4);
}

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
