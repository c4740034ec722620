#include "server/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/log.h"
#include "gtest/gtest.h"
#include "server/configz.h"
#include "server/healthz.h"
#include "server/kubelet_server.h"
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

// A filter that blocks (webhook calls) runs on the filter pool: while one request waits in it,
// another connection is served, and the waiting request then goes on to its handler (its
// user, set by the filter, included) or to the filter's answer; a request body is read only
// after the filter passed.
TEST(HttpServer, BlockingFilterRunsOffTheIoThread) {
  HttpServer server(HttpServerOptions{.port = 0, .filter_threads = 2});
  absl::Mutex mu;
  bool entered = false;
  bool release = false;
  server.SetFilter([&](HttpRequest* req, HttpResponse* res) {
    if (req->path == "/slow") {
      absl::MutexLock lock(&mu);
      entered = true;
      mu.Await(absl::Condition(&release));
    }
    if (req->path == "/denied") {
      res->status = 403;
      res->body = "no";
      return false;
    }
    req->user.name = "user-of-" + req->path;
    return true;
  });
  auto echo = [](const HttpRequest& req, HttpResponse* res) {
    res->body = req.user.name + "|" + req.body;
  };
  server.Handle("/slow", echo);
  server.Handle("/fast", echo);
  server.Handle("/denied", echo);
  ASSERT_TRUE(server.Start().ok());
  std::string slow;
  std::thread t([&] {
    slow = RawExchange(server.port(),
                       "POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
                       "Connection: close\r\n\r\nbody");
  });
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(&entered));
  }
  // Served while /slow is held in its filter.
  EXPECT_EQ(Body(Get(server.port(), "/fast")), "user-of-/fast|");
  std::string r = Get(server.port(), "/denied");
  EXPECT_EQ(r.rfind("HTTP/1.1 403", 0), 0u) << r;
  EXPECT_EQ(Body(r), "no");
  {
    absl::MutexLock lock(&mu);
    release = true;
  }
  t.join();
  EXPECT_EQ(Body(slow), "user-of-/slow|body");
  server.Stop();
}

// PUT /debug/flags/v changes the log verbosity at run time, with upstream's answers.
TEST(DebugFlags, VerbosityPut) {
  HttpServer server(HttpServerOptions{.port = 0});
  InstallDebuggingHandlers(server, nullptr);
  ASSERT_TRUE(server.Start().ok());
  const int before = log::Verbosity();
  auto put = [&](const std::string& body) {
    return RawExchange(server.port(),
                       "PUT /debug/flags/v HTTP/1.1\r\nHost: x\r\n"
                       "Content-Length: " +
                           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  };
  std::string r = put("7");
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;
  EXPECT_EQ(Body(r), "successfully set klog.logging.verbosity to 7\n");
  EXPECT_EQ(log::Verbosity(), 7);
  r = put("seven");
  EXPECT_EQ(r.rfind("HTTP/1.1 400", 0), 0u) << r;
  EXPECT_EQ(Body(r),
            "failed set klog.logging.verbosity seven: strconv.ParseInt: parsing \"seven\": "
            "invalid syntax\n");
  r = put("99999999999");
  EXPECT_EQ(Body(r),
            "failed set klog.logging.verbosity 99999999999: strconv.ParseInt: parsing "
            "\"99999999999\": value out of range\n");
  EXPECT_EQ(log::Verbosity(), 7);
  r = Get(server.port(), "/debug/flags/v");
  EXPECT_EQ(r.rfind("HTTP/1.1 406", 0), 0u) << r;
  EXPECT_EQ(Body(r), "unsupported http method\n");
  log::SetVerbosity(before);
  server.Stop();
}

// A tunnel proxies the request to the backend the resolver names: the backend sees the
// client's head with its own target and without Authorization, bytes flow both ways, the
// client's half-close reaches the backend, and the backend's close ends the client's
// connection. A resolver's error is answered instead.
TEST(HttpServer, TunnelProxiesBothWays) {
  // The backend: reads the head, answers 101, then upper-cases what it reads until EOF.
  int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(lfd, 4), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len);
  const uint16_t backend_port = ntohs(addr.sin_port);
  std::string backend_head;
  std::thread backend([&] {
    int fd = ::accept(lfd, nullptr, nullptr);
    std::string got;
    char buf[4096];
    while (got.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    const size_t end = got.find("\r\n\r\n") + 4;
    backend_head = got.substr(0, end);
    std::string rest = got.substr(end);
    testing::SendAll(fd, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\n\r\n");
    for (;;) {
      for (char& c : rest) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      testing::SendAll(fd, rest);
      ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      rest.assign(buf, static_cast<size_t>(n));
    }
    testing::SendAll(fd, "|bye");
    ::close(fd);
  });

  HttpServer server(HttpServerOptions{.port = 0});
  server.Handle("/stream/", [&](const HttpRequest& req, HttpResponse* res) {
    const bool fail = req.path == "/stream/missing";
    res->tunnel = [fail, backend_port](HttpResponse* error) -> std::optional<TunnelTarget> {
      if (fail) {
        error->Error(404, "pod does not exist");
        return std::nullopt;
      }
      return TunnelTarget{"127.0.0.1", backend_port, "/exec/token123"};
    };
  });
  ASSERT_TRUE(server.Start().ok());

  std::string r = testing::Get(server.port(), "/stream/missing");
  EXPECT_EQ(r.rfind("HTTP/1.1 404", 0), 0u) << r;
  EXPECT_EQ(testing::Body(r), "pod does not exist\n");

  int fd = testing::Connect(server.port());
  ASSERT_GE(fd, 0);
  testing::SendAll(fd,
                   "POST /stream/x HTTP/1.1\r\nHost: kubelet\r\nAuthorization: Bearer secret\r\n"
                   "Connection: Upgrade\r\nUpgrade: test\r\n\r\nhello ");
  testing::SendAll(fd, "world");
  ::shutdown(fd, SHUT_WR);
  std::string out = testing::ReadUntilClose(fd);
  ::close(fd);
  backend.join();
  ::close(lfd);
  EXPECT_EQ(out, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\n\r\nHELLO WORLD|bye");
  EXPECT_EQ(backend_head.rfind("POST /exec/token123 HTTP/1.1\r\n", 0), 0u) << backend_head;
  EXPECT_NE(backend_head.find(absl::StrCat("Host: 127.0.0.1:", backend_port, "\r\n")),
            std::string::npos)
      << backend_head;
  EXPECT_NE(backend_head.find("upgrade: test\r\n"), std::string::npos) << backend_head;
  EXPECT_EQ(backend_head.find("secret"), std::string::npos) << backend_head;
  server.Stop();
}

}  // namespace
}  // namespace kubelet::server
