// HttpServer against clients that break the rules: each test is a request that once could crash
// or wedge the server, and ends by proving the server still answers.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "server/healthz.h"
#include "server/http_server.h"
#include "server/raw_http_test_util.h"

namespace kubelet::server {
namespace {

using testing::Body;
using testing::Connect;
using testing::Get;
using testing::HasStatus;
using testing::PeerClosed;
using testing::RawExchange;
using testing::ReadUntilClose;
using testing::SendAll;

class HostileClientTest : public ::testing::Test {
 protected:
  void Start(HttpServerOptions o = {}) {
    o.port = 0;
    server_ = std::make_unique<HttpServer>(o);
    InstallHealthz(*server_, {});
    server_->Handle(
        "/echo",
        [this](const HttpRequest& req, HttpResponse* res) {
          ++echo_calls_;
          res->body = req.body;
        },
        {"POST"}, /*max_body_bytes=*/1024);
    server_->Handle("/throw", [](const HttpRequest&, HttpResponse*) {
      throw std::runtime_error("handler bug");
    });
    server_->Handle("/throw-int", [](const HttpRequest&, HttpResponse*) { throw 42; });
    server_->Handle("/stream-throw", [](const HttpRequest&, HttpResponse* res) {
      res->stream = [](ResponseStream&) { throw std::out_of_range("producer bug"); };
    });
    server_->Handle("/header", [](const HttpRequest& req, HttpResponse* res) {
      res->SetHeader("X-Echo", req.Header("x-in"));
      res->body = std::to_string(req.Header("x-in").size());
    });
    ASSERT_TRUE(server_->Start().ok());
  }
  void ExpectHealthy() {
    std::string r = Get(server_->port(), "/healthz");
    EXPECT_TRUE(HasStatus(r, 200)) << r.substr(0, 200);
    EXPECT_EQ(Body(r), "ok");
  }
  std::unique_ptr<HttpServer> server_;
  std::atomic<int> echo_calls_{0};
};

// The reported crash: Beast 1.74's fields throw std::length_error for a value over 64 KiB.
// Go's net/http accepts a 1 MB header value (under MaxHeaderBytes), so we serve it too.
TEST_F(HostileClientTest, OneMegabyteHeaderValueIsServed) {
  Start();
  std::string r = RawExchange(
      server_->port(), "GET /header HTTP/1.1\r\nHost: x\r\nX-In: " + std::string(1000000, 'b') +
                           "\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(HasStatus(r, 200)) << r.substr(0, 200);
  EXPECT_EQ(Body(r), "1000000");
  // ... and the value echoed back in a response header does not throw either.
  EXPECT_NE(r.find("X-Echo: bbbb"), std::string::npos);
  ExpectHealthy();
}

TEST_F(HostileClientTest, HeaderNameOverSixtyFourKiB) {
  Start();
  std::string r =
      RawExchange(server_->port(), "GET /healthz HTTP/1.1\r\n" + std::string(70000, 'N') +
                                       ": v\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(HasStatus(r, 200)) << r.substr(0, 200);
  ExpectHealthy();
}

TEST_F(HostileClientTest, HeaderBlockOverLimitIs431AndClose) {
  Start(HttpServerOptions{.max_header_bytes = 64 << 10});
  int fd = Connect(server_->port());
  ASSERT_GE(fd, 0);
  std::string head = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 2000; ++i)
    head += "X-H" + std::to_string(i) + ": " + std::string(40, 'v') + "\r\n";
  SendAll(fd, head);  // no end of headers: the limit alone must end it
  std::string r = ReadUntilClose(fd);
  ::close(fd);
  EXPECT_TRUE(HasStatus(r, 431)) << r.substr(0, 200);
  EXPECT_EQ(Body(r), "431 Request Header Fields Too Large");
  EXPECT_NE(r.find("Connection: close"), std::string::npos);
  ExpectHealthy();
}

TEST_F(HostileClientTest, ManySmallHeadersWithinLimitAreServed) {
  Start();
  std::string req = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n";
  for (int i = 0; i < 20000; ++i) req += "A: b\r\n";
  req += "\r\n";
  EXPECT_TRUE(HasStatus(RawExchange(server_->port(), req), 200));
}

TEST_F(HostileClientTest, RequestLineOverLimitIs431) {
  Start(HttpServerOptions{.max_header_bytes = 64 << 10});
  std::string r = RawExchange(server_->port(),
                              "GET /healthz?" + std::string(200000, 'q') + " HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(r.empty() || HasStatus(r, 431)) << r.substr(0, 200);
  ExpectHealthy();
}

TEST_F(HostileClientTest, GarbageAndBadMethodsAre400Or405) {
  Start();
  EXPECT_TRUE(HasStatus(
      RawExchange(server_->port(), std::string("\x16\x03\x01\x02\x00\x01\x00", 7) + "\r\n\r\n"),
      400));
  EXPECT_TRUE(HasStatus(RawExchange(server_->port(), "GET /healthz HTTP/9.9\r\n\r\n"), 400));
  EXPECT_TRUE(HasStatus(RawExchange(server_->port(), "G\x01T /healthz HTTP/1.1\r\n\r\n"), 400));
  EXPECT_TRUE(HasStatus(
      RawExchange(server_->port(), "BREW /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
      405));
  std::string noise;
  for (int i = 0; i < 4096; ++i) noise.push_back(static_cast<char>((i * 7919) & 0xff));
  std::string r = RawExchange(server_->port(), noise);
  EXPECT_TRUE(r.empty() || HasStatus(r, 400)) << r.substr(0, 100);
  ExpectHealthy();
}

TEST_F(HostileClientTest, TraversalPathIsRedirectedToItsCleanForm) {
  Start();
  std::string r = Get(server_->port(), "/containerLogs/../../etc/passwd?x=1");
  EXPECT_TRUE(HasStatus(r, 301)) << r.substr(0, 200);
  EXPECT_NE(r.find("Location: /etc/passwd?x=1\r\n"), std::string::npos) << r;
  r = Get(server_->port(), "//healthz");
  EXPECT_NE(r.find("Location: /healthz\r\n"), std::string::npos) << r;
  // A Location echoing a query over 64 KiB is written without Beast's fields.
  r = Get(server_->port(), "/a/../healthz?" + std::string(100000, 'z'));
  EXPECT_TRUE(HasStatus(r, 301)) << r.substr(0, 100);
  ExpectHealthy();
}

TEST_F(HostileClientTest, LyingContentLengthIsRefusedBeforeAnyAllocation) {
  Start();
  // Claims a petabyte, sends nothing: refused at once, nothing reserved, nothing waited for.
  int fd = Connect(server_->port());
  SendAll(fd, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000000000\r\n\r\n");
  std::string r = ReadUntilClose(fd, 5000);
  ::close(fd);
  EXPECT_TRUE(HasStatus(r, 413)) << r;
  // Over the route's 1 KiB limit.
  r = RawExchange(
      server_->port(),
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n" + std::string(2000, 'x'));
  EXPECT_TRUE(r.empty() || HasStatus(r, 413)) << r.substr(0, 100);
  // Absurd and negative lengths are malformed.
  EXPECT_TRUE(HasStatus(RawExchange(server_->port(),
                                    "POST /echo HTTP/1.1\r\nContent-Length: "
                                    "99999999999999999999999\r\n\r\n"),
                        400));
  EXPECT_TRUE(HasStatus(
      RawExchange(server_->port(), "POST /echo HTTP/1.1\r\nContent-Length: -1\r\n\r\n"), 400));
  EXPECT_TRUE(HasStatus(RawExchange(server_->port(),
                                    "POST /echo HTTP/1.1\r\nContent-Length: 1\r\n"
                                    "Content-Length: 2\r\n\r\nab"),
                        400));
  EXPECT_EQ(echo_calls_.load(), 0);
  ExpectHealthy();
}

TEST_F(HostileClientTest, ShortBodyTimesOutAndClosesWithoutCallingTheHandler) {
  Start(HttpServerOptions{.read_timeout = absl::Milliseconds(300)});
  int fd = Connect(server_->port());
  SendAll(fd, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly-this");
  EXPECT_TRUE(PeerClosed(fd, 10000));
  ::close(fd);
  EXPECT_EQ(echo_calls_.load(), 0);
  ExpectHealthy();
}

TEST_F(HostileClientTest, ChunkedBodies) {
  Start();
  std::string ok = RawExchange(server_->port(),
                               "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                               "Connection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
  EXPECT_TRUE(HasStatus(ok, 200)) << ok;
  EXPECT_EQ(Body(ok), "hello");
  // A chunk size past the route's limit, a bad chunk size, a chunk size overflowing 64 bits.
  for (const char* body : {"ffffffff\r\n", "zz\r\nhello\r\n0\r\n\r\n",
                           "fffffffffffffffffffffff\r\nx\r\n", "5\r\nhelloXX0\r\n\r\n"}) {
    std::string r = RawExchange(server_->port(), std::string("POST /echo HTTP/1.1\r\nHost: x\r\n"
                                                             "Transfer-Encoding: chunked\r\n\r\n") +
                                                     body);
    EXPECT_TRUE(HasStatus(r, 400) || HasStatus(r, 413)) << body << " -> " << r.substr(0, 100);
  }
  // Many small chunks adding up past the limit.
  std::string many = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 300; ++i) many += "8\r\n12345678\r\n";
  many += "0\r\n\r\n";
  EXPECT_TRUE(HasStatus(RawExchange(server_->port(), many), 413));
  EXPECT_EQ(echo_calls_.load(), 1);
  ExpectHealthy();
}

TEST_F(HostileClientTest, FilterRunsBeforeTheBodyIsRead) {
  server_ = std::make_unique<HttpServer>(HttpServerOptions{.port = 0});
  std::atomic<int> handled{0};
  server_->Handle(
      "/echo", [&](const HttpRequest&, HttpResponse*) { ++handled; }, {}, 1 << 20);
  server_->SetFilter([](HttpRequest*, HttpResponse* res) {
    res->Error(401, "Unauthorized");
    return false;
  });
  ASSERT_TRUE(server_->Start().ok());
  int fd = Connect(server_->port());
  // The body never comes: the 401 must not wait for it.
  SendAll(fd, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n");
  std::string r = ReadUntilClose(fd, 5000);
  ::close(fd);
  EXPECT_TRUE(HasStatus(r, 401)) << r;
  EXPECT_NE(r.find("Connection: close"), std::string::npos);
  EXPECT_EQ(handled.load(), 0);
}

TEST_F(HostileClientTest, ThrowingHandlersAnswer500AndTheServerLives) {
  Start();
  std::string r = Get(server_->port(), "/throw");
  EXPECT_TRUE(HasStatus(r, 500)) << r;
  EXPECT_TRUE(HasStatus(Get(server_->port(), "/throw-int"), 500));
  r = Get(server_->port(), "/stream-throw");
  EXPECT_TRUE(HasStatus(r, 500)) << r;
  ExpectHealthy();
}

TEST_F(HostileClientTest, HeadGetsNoBody) {
  Start();
  std::string r = RawExchange(server_->port(),
                              "HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(HasStatus(r, 200)) << r;
  EXPECT_EQ(Body(r), "");
  EXPECT_NE(r.find("Content-Length: 2\r\n"), std::string::npos);
}

TEST_F(HostileClientTest, SlowHeaderIsDroppedAtTheHeaderTimeout) {
  Start(HttpServerOptions{.header_timeout = absl::Milliseconds(300)});
  int fd = Connect(server_->port());
  SendAll(fd, "GET /healthz HTTP/1.1\r\nHo");
  EXPECT_TRUE(PeerClosed(fd, 10000));
  ::close(fd);
  ExpectHealthy();
}

// At the connection cap, idle and half-sent connections make room for new clients.
TEST_F(HostileClientTest, ConnectionCapNeverStarvesNewClients) {
  Start(HttpServerOptions{.max_connections = 20});
  std::vector<int> slow;
  for (int i = 0; i < 60; ++i) {
    int fd = Connect(server_->port());
    ASSERT_GE(fd, 0);
    SendAll(fd, "GET /healthz HTTP/1.1\r\nX-Slow: ");  // never finished
    slow.push_back(fd);
  }
  for (int i = 0; i < 5; ++i) ExpectHealthy();
  // The oldest slow clients were dropped to make room.
  EXPECT_TRUE(PeerClosed(slow.front(), 5000));
  for (int fd : slow) ::close(fd);
}

TEST_F(HostileClientTest, ClientsVanishingMidRequestAndMidResponse) {
  Start();
  for (int i = 0; i < 50; ++i) {
    int fd = Connect(server_->port());
    SendAll(fd, i % 2 ? "GET /heal" : "POST /echo HTTP/1.1\r\nContent-Length: 10\r\n\r\nab");
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
  }
  ExpectHealthy();
}

}  // namespace
}  // namespace kubelet::server
