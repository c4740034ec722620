#include "kubelet/lifecycle/probe_executors.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "cri/testing/fake_runtime.h"
#include "gtest/gtest.h"

namespace kubelet::lifecycle {
namespace {

// A tiny blocking HTTP/1.1 server on 127.0.0.1: one thread, one connection at a time; the
// handler maps a request's head to a full response (or "" to hold the connection open
// without answering until the server stops).
class TestServer {
 public:
  using Handler = std::function<std::string(const std::string& request_head)>;

  explicit TestServer(Handler handler) : handler_(std::move(handler)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(fd_, 16);
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Loop(); });
  }
  ~TestServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  int port() const { return port_; }
  std::vector<std::string> requests() {
    absl::MutexLock lock(&mu_);
    return requests_;
  }

 private:
  void Loop() {
    while (!stop_) {
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      std::string head;
      char buf[4096];
      while (head.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = ::read(c, buf, sizeof(buf));
        if (n <= 0) break;
        head.append(buf, n);
        if (head[0] == 0x16) break;  // a TLS ClientHello: answer in plain HTTP at once
      }
      {
        absl::MutexLock lock(&mu_);
        requests_.push_back(head);
      }
      std::string resp = handler_(head);
      if (resp.empty()) {
        // Hold the connection until the client gives up.
        while (::read(c, buf, sizeof(buf)) > 0) {
        }
      } else {
        size_t off = 0;
        while (off < resp.size()) {
          ssize_t n = ::write(c, resp.data() + off, resp.size() - off);
          if (n <= 0) break;
          off += n;
        }
      }
      ::close(c);
    }
  }

  Handler handler_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  absl::Mutex mu_;
  std::vector<std::string> requests_ ABSL_GUARDED_BY(mu_);
};

std::string Response(int code, const std::string& body, const std::string& extra = "") {
  return absl::StrCat("HTTP/1.1 ", code, " X\r\nContent-Length: ", body.size(), "\r\n", extra,
                      "Connection: close\r\n\r\n", body);
}

HttpGetRequest Req(int port, const std::string& path) {
  HttpGetRequest r;
  r.host = "127.0.0.1";
  r.port = port;
  r.path = path;
  r.user_agent = DefaultUserAgent("probe");
  return r;
}

int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

TEST(HttpProbeTest, SuccessReturnsBodyAndSendsHeaders) {
  TestServer server([](const std::string&) { return Response(200, "ok"); });
  HttpGetRequest req = Req(server.port(), "/healthz?x=1");
  req.headers.push_back({"X-Custom", "v1"});
  ProbeOutcome out = HttpProbe(req, absl::Seconds(5));
  EXPECT_EQ(out.result, ProbeResult::kSuccess);
  EXPECT_EQ(out.output, "ok");
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(reqs[0], "GET /healthz?x=1 HTTP/1.1\r\n")) << reqs[0];
  EXPECT_TRUE(absl::StrContains(reqs[0], "User-Agent: kube-probe/1.28\r\n")) << reqs[0];
  EXPECT_TRUE(absl::StrContains(reqs[0], "X-Custom: v1\r\n")) << reqs[0];
  EXPECT_TRUE(absl::StrContains(reqs[0], "Accept: */*\r\n")) << reqs[0];
}

TEST(HttpProbeTest, HostAndUserAgentHeadersOverride) {
  TestServer server([](const std::string&) { return Response(200, ""); });
  HttpGetRequest req = Req(server.port(), "/");
  req.headers.push_back({"Host", "example.com"});
  req.headers.push_back({"User-Agent", "mine"});
  EXPECT_EQ(HttpProbe(req, absl::Seconds(5)).result, ProbeResult::kSuccess);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_TRUE(absl::StrContains(reqs[0], "Host: example.com\r\n")) << reqs[0];
  EXPECT_TRUE(absl::StrContains(reqs[0], "User-Agent: mine\r\n")) << reqs[0];
  EXPECT_FALSE(absl::StrContains(reqs[0], "kube-probe")) << reqs[0];
}

TEST(HttpProbeTest, ServerErrorFails) {
  TestServer server([](const std::string&) { return Response(500, "boom"); });
  ProbeOutcome out = HttpProbe(Req(server.port(), "/"), absl::Seconds(5));
  EXPECT_EQ(out.result, ProbeResult::kFailure);
  EXPECT_EQ(out.output, "HTTP probe failed with statuscode: 500");
}

// Beast keeps a header field in 16 bits and throws std::length_error for a longer one; a
// response's header is bounded by the parser before it gets there.
constexpr size_t kOverBeastFieldLimit = 70 * 1024;

TEST(HttpProbeTest, HugeResponseHeaderFailsTheProbe) {
  TestServer server([](const std::string&) {
    return Response(200, "ok", "X-Hostile: " + std::string(kOverBeastFieldLimit, 'a') + "\r\n");
  });
  ProbeOutcome out = HttpProbe(Req(server.port(), "/"), absl::Seconds(5));
  EXPECT_EQ(out.result, ProbeResult::kFailure);
  EXPECT_TRUE(absl::StrContains(out.output, "header limit exceeded")) << out.output;
}

TEST(HttpProbeTest, HugeRequestHeaderFailsTheProbeInsteadOfThrowing) {
  TestServer server([](const std::string&) { return Response(200, "ok"); });
  HttpGetRequest req = Req(server.port(), "/");
  req.headers.push_back({"X-Big", std::string(kOverBeastFieldLimit, 'b')});
  ProbeOutcome out = HttpProbe(req, absl::Seconds(5));
  EXPECT_EQ(out.result, ProbeResult::kFailure);
  EXPECT_TRUE(absl::StrContains(out.output, "field value too large")) << out.output;
  req.headers = {{"Host", std::string(kOverBeastFieldLimit, 'h')}};
  out = HttpProbe(req, absl::Seconds(5));
  EXPECT_EQ(out.result, ProbeResult::kFailure);
  EXPECT_TRUE(absl::StartsWith(out.output, "Get ")) << out.output;
}

TEST(HttpProbeTest, FollowsRedirectToSameHost) {
  TestServer server([](const std::string& head) {
    if (absl::StartsWith(head, "GET /old ")) return Response(302, "", "Location: /new\r\n");
    return Response(200, "moved-here");
  });
  ProbeOutcome out = HttpProbe(Req(server.port(), "/old"), absl::Seconds(5));
  EXPECT_EQ(out.result, ProbeResult::kSuccess);
  EXPECT_EQ(out.output, "moved-here");
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST(HttpProbeTest, RedirectToOtherHostIsAWarning) {
  TestServer server([](const std::string&) {
    return Response(301, "elsewhere", "Location: http://other.invalid/\r\n");
  });
  ProbeOutcome out = HttpProbe(Req(server.port(), "/"), absl::Seconds(5));
  EXPECT_EQ(out.result, ProbeResult::kWarning);
  EXPECT_EQ(out.output, "Probe terminated redirects, Response body: elsewhere");
}

TEST(HttpProbeTest, TooManyRedirectsFail) {
  TestServer server([](const std::string&) { return Response(302, "", "Location: /loop\r\n"); });
  ProbeOutcome out = HttpProbe(Req(server.port(), "/loop"), absl::Seconds(5));
  EXPECT_EQ(out.result, ProbeResult::kFailure);
  EXPECT_TRUE(absl::StrContains(out.output, "stopped after 10 redirects")) << out.output;
}

TEST(HttpProbeTest, BodyIsBoundedTo10KiB) {
  const std::string big(50 * 1024, 'a');
  TestServer server([&](const std::string&) { return Response(200, big); });
  ProbeOutcome out = HttpProbe(Req(server.port(), "/"), absl::Seconds(5));
  EXPECT_EQ(out.result, ProbeResult::kSuccess);
  EXPECT_EQ(out.output.size(), kMaxProbeOutputBytes);
}

TEST(HttpProbeTest, ChunkedBody) {
  TestServer server([](const std::string&) {
    return std::string(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
  });
  ProbeOutcome out = HttpProbe(Req(server.port(), "/"), absl::Seconds(5));
  EXPECT_EQ(out.result, ProbeResult::kSuccess);
  EXPECT_EQ(out.output, "abcde");
}

TEST(HttpProbeTest, TimeoutFails) {
  TestServer server([](const std::string&) { return std::string(); });
  ProbeOutcome out = HttpProbe(Req(server.port(), "/"), absl::Milliseconds(300));
  EXPECT_EQ(out.result, ProbeResult::kFailure);
  EXPECT_TRUE(absl::StrContains(out.output, "Client.Timeout exceeded")) << out.output;
}

TEST(HttpProbeTest, ConnectionRefused) {
  const int port = ClosedPort();
  ProbeOutcome out = HttpProbe(Req(port, "/healthz"), absl::Seconds(2));
  EXPECT_EQ(out.result, ProbeResult::kFailure);
  EXPECT_EQ(out.output,
            absl::StrCat("Get \"http://127.0.0.1:", port, "/healthz\": dial tcp 127.0.0.1:", port,
                         ": connect: connection refused"));
}

TEST(HttpGetTest, HttpsToPlainServerIsDetected) {
  TestServer server([](const std::string&) { return Response(400, "plain"); });
  HttpGetRequest req = Req(server.port(), "/");
  req.scheme = "https";
  bool tls_got_http = false;
  auto res = HttpGet(req, absl::Seconds(5), &tls_got_http);
  EXPECT_FALSE(res.ok());
  EXPECT_TRUE(tls_got_http) << res.status();
}

TEST(TcpProbeTest, OpenAndClosedPorts) {
  TestServer server([](const std::string&) { return Response(200, ""); });
  EXPECT_EQ(TcpProbe("127.0.0.1", server.port(), absl::Seconds(2)).result, ProbeResult::kSuccess);
  const int port = ClosedPort();
  ProbeOutcome out = TcpProbe("127.0.0.1", port, absl::Seconds(2));
  EXPECT_EQ(out.result, ProbeResult::kFailure);
  EXPECT_EQ(out.output, absl::StrCat("dial tcp 127.0.0.1:", port, ": connect: connection refused"));
}

TEST(PortTest, NamedAndNumbered) {
  api::Container c;
  c.name = "main";
  c.ports.push_back({"http", 0, 8080, "TCP", ""});
  EXPECT_EQ(*ResolveContainerPort(api::IntOrString::FromString("http"), c), 8080);
  EXPECT_EQ(*ResolveContainerPort(api::IntOrString::FromInt(81), c), 81);
  EXPECT_EQ(*ResolveContainerPort(api::IntOrString::FromString("82"), c), 82);
  auto missing = ResolveContainerPort(api::IntOrString::FromString("grpc"), c);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "couldn't find port: grpc in main");
  EXPECT_FALSE(ResolveContainerPort(api::IntOrString::FromInt(70000), c).ok());
  EXPECT_EQ(FormatURL("http", "::1", 80, "x"), "http://[::1]:80/x");
}

// A running container in the fake runtime.
std::string StartContainer(cri::FakeRuntime& rt) {
  runtime::v1::PodSandboxConfig sc;
  sc.mutable_metadata()->set_name("p");
  sc.mutable_metadata()->set_uid("uid-1");
  sc.mutable_metadata()->set_namespace_("default");
  auto sb = rt.RunPodSandbox(sc, "");
  EXPECT_TRUE(sb.ok()) << sb.status();
  runtime::v1::ContainerConfig cc;
  cc.mutable_metadata()->set_name("main");
  cc.mutable_image()->set_image("busybox");
  auto id = rt.CreateContainer(*sb, cc, sc);
  EXPECT_TRUE(id.ok()) << id.status();
  EXPECT_TRUE(rt.StartContainer(*id).ok());
  return *id;
}

TEST(ExecProbeTest, ExitCodesOutputAndTimeout) {
  cri::FakeRuntime rt;
  const std::string id = StartContainer(rt);
  rt.SetExecSyncHandler([](const std::string&, const std::vector<std::string>& cmd,
                           absl::Duration) -> absl::StatusOr<runtime::v1::ExecSyncResponse> {
    runtime::v1::ExecSyncResponse r;
    if (cmd[0] == "sleep") return absl::DeadlineExceededError("timed out");
    if (cmd[0] == "broken") return absl::UnavailableError("runtime down");
    r.set_stdout("out;");
    r.set_stderr("err");
    r.set_exit_code(cmd[0] == "true" ? 0 : 1);
    return r;
  });
  ProbeOutcome ok = ExecProbe(rt, id, {"true"}, absl::Seconds(1));
  EXPECT_EQ(ok.result, ProbeResult::kSuccess);
  EXPECT_EQ(ok.output, "out;err");
  ProbeOutcome bad = ExecProbe(rt, id, {"false"}, absl::Seconds(1));
  EXPECT_EQ(bad.result, ProbeResult::kFailure);
  EXPECT_EQ(bad.output, "out;err");
  ProbeOutcome slow = ExecProbe(rt, id, {"sleep", "10"}, absl::Seconds(1));
  EXPECT_EQ(slow.result, ProbeResult::kFailure);
  EXPECT_EQ(slow.output, "command \"sleep 10\" timed out");
  ProbeOutcome err = ExecProbe(rt, id, {"broken"}, absl::Seconds(1));
  EXPECT_EQ(err.result, ProbeResult::kUnknown);
  EXPECT_FALSE(err.error.ok());
}

}  // namespace
}  // namespace kubelet::lifecycle
