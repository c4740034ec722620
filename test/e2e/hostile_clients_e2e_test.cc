// Hostile clients against a running kubelet with a pod, on all three of its ports: healthz
// (plain), the read-only port (plain) and the kubelet API (TLS, anonymous off or on). Each
// attack is one a remote client could make without credentials (or, where marked, with
// anonymous access): garbage, oversized request lines, header values and header counts, bad
// methods, traversal paths, bad query values, lying Content-Length, broken chunked bodies, TLS
// garbage, and 300 slow clients held open. During and after, /healthz answers, the kubelet is
// the same process, and the pod's sandbox and container are the ones from before, never
// restarted.
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/raw_http_test_util.h"
#include "test/e2e/static_pod_fixture.h"

namespace kubelet::e2e {
namespace {

namespace raw = kubelet::server::testing;

// A TLS client that sends exact bytes after the handshake (certificate not verified: the
// kubelet's is self-signed) and returns what the server answers until it closes. "" when the
// handshake failed.
std::string TlsExchange(int port, const std::string& request, int idle_ms = 10000) {
  int fd = raw::Connect(port);
  if (fd < 0) return "connect failed";
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  std::string out;
  if (SSL_connect(ssl) == 1) {
    size_t off = 0;
    while (off < request.size()) {
      int n = SSL_write(ssl, request.data() + off, static_cast<int>(request.size() - off));
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    timeval tv{idle_ms / 1000, (idle_ms % 1000) * 1000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char buf[4096];
    for (;;) {
      int n = SSL_read(ssl, buf, sizeof(buf));
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
  }
  ERR_clear_error();
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  ::close(fd);
  return out;
}

std::string Noise(size_t n, unsigned seed) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    out.push_back(static_cast<char>(seed >> 16));
  }
  return out;
}

class HostileClientsTest : public StaticPodTest {
 protected:
  HostileClientsTest() : read_only_port_(FreePort()) {}
  std::string ExtraConfig() override {
    return absl::StrCat("address: 127.0.0.1\nreadOnlyPort: ", read_only_port_, "\n");
  }

  // Starts the kubelet and a pod, and records what must not change.
  void StartWithPod(bool anonymous) {
    // The server closes on clients mid-write (431, 413): that must cost this test an EPIPE.
    ::signal(SIGPIPE, SIG_IGN);
    anonymous_auth_ = anonymous;
    StartKubelet();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(kubelet_->WaitForLog("\"Starting to listen\"", absl::Seconds(60)));
    WriteManifest("web.yaml", BusyboxPod("web", kSleepForever));
    ASSERT_TRUE(WaitUntil([&] { return Running("web").size() == 1; }, absl::Seconds(90)))
        << kubelet_->Log();
    pid_ = kubelet_->pid();
    sandbox_ = ReadySandboxes("web").at(0).id();
    container_ = Running("web").at(0).id();
  }

  // /healthz answers on the healthz port and the read-only port.
  void ExpectHealthy(const std::string& when) {
    HttpResult h = HttpGet(healthz_port_, "/healthz");
    EXPECT_EQ(h.status, 200) << when;
    EXPECT_EQ(h.body, "ok") << when;
    EXPECT_EQ(HttpGet(read_only_port_, "/healthz").status, 200) << when;
  }

  // The kubelet is the same process, and the pod was never touched.
  void ExpectUntouched() {
    EXPECT_FALSE(kubelet_->Wait(absl::ZeroDuration()).has_value()) << kubelet_->Log();
    EXPECT_EQ(kubelet_->pid(), pid_);
    ASSERT_EQ(ReadySandboxes("web").size(), 1u);
    EXPECT_EQ(ReadySandboxes("web")[0].id(), sandbox_);
    auto running = Running("web");
    ASSERT_EQ(running.size(), 1u);
    EXPECT_EQ(running[0].id(), container_);
    EXPECT_EQ(Containers("web").size(), 1u);  // no restart ever happened
    std::string log = kubelet_->Log();
    EXPECT_EQ(log.find("terminate called"), std::string::npos) << log;
  }

  // Every pre-authentication attack, on a plain port (`tls` false) or the TLS port.
  void Attack(int port, bool tls) {
    auto send = [&](const std::string& bytes) {
      return tls ? TlsExchange(port, bytes) : raw::RawExchange(port, bytes);
    };
    const std::string where = absl::StrCat(tls ? "tls" : "plain", " port ", port);
    // The reported crash: one 1 MB header value.
    std::string r = send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(1000000, 'b') +
                         "\r\nConnection: close\r\n\r\n");
    EXPECT_TRUE(raw::HasStatus(r, 200) || raw::HasStatus(r, 401)) << where << r.substr(0, 100);
    // A header block over 1 MiB.
    r = send("GET /healthz HTTP/1.1\r\nX-Big: " + std::string(3 << 20, 'b') + "\r\n\r\n");
    EXPECT_TRUE(r.empty() || raw::HasStatus(r, 431)) << where << r.substr(0, 100);
    // A 1 MB request line, 20000 headers.
    r = send("GET /" + std::string(1000000, 'a') + " HTTP/1.1\r\nConnection: close\r\n\r\n");
    EXPECT_TRUE(r.empty() || raw::HasStatus(r, 404) || raw::HasStatus(r, 401))
        << where << r.substr(0, 100);
    std::string many = "GET /healthz HTTP/1.1\r\nConnection: close\r\n";
    for (int i = 0; i < 20000; ++i) many += absl::StrCat("X-", i, ": v\r\n");
    r = send(many + "\r\n");
    EXPECT_TRUE(raw::HasStatus(r, 200) || raw::HasStatus(r, 401)) << where << r.substr(0, 100);
    // Garbage, bad methods and versions.
    for (unsigned seed = 1; seed <= 5; ++seed) send(Noise(4096 * seed, seed));
    EXPECT_TRUE(raw::HasStatus(send("\x01\x02\x03 / HTTP/1.1\r\n\r\n"), 400)) << where;
    EXPECT_TRUE(raw::HasStatus(send("GET /healthz HTTP/7.0\r\n\r\n"), 400)) << where;
    r = send("DELETE /pods HTTP/1.1\r\nConnection: close\r\n\r\n");  // 404 on healthz
    EXPECT_TRUE(raw::HasStatus(r, 405) || raw::HasStatus(r, 401) || raw::HasStatus(r, 404))
        << where << r.substr(0, 100);
    // Traversal.
    r = send("GET /containerLogs/../../etc/passwd HTTP/1.1\r\nConnection: close\r\n\r\n");
    EXPECT_TRUE(raw::HasStatus(r, 301)) << where << r.substr(0, 200);
    EXPECT_NE(r.find("Location: /etc/passwd\r\n"), std::string::npos) << where;
    EXPECT_EQ(r.find("root:"), std::string::npos);
    // Lying Content-Length (claims a petabyte, sends nothing) and broken chunked bodies.
    // (The healthz port has no /stats/summary: 404, also without reading the body.)
    r = send("POST /stats/summary HTTP/1.1\r\nContent-Length: 1000000000000000\r\n\r\n");
    EXPECT_TRUE(raw::HasStatus(r, 413) || raw::HasStatus(r, 401) || raw::HasStatus(r, 404))
        << where << r.substr(0, 100);
    r = send("POST /stats/summary HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n");
    EXPECT_TRUE(raw::HasStatus(r, 400)) << where << r.substr(0, 100);
    r = send("POST /stats/summary HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n");
    EXPECT_TRUE(raw::HasStatus(r, 400) || raw::HasStatus(r, 401) || raw::HasStatus(r, 404))
        << where << r.substr(0, 100);
    r = send(
        "POST /stats/summary HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        "ffffffffffffffffffffffff\r\n");
    EXPECT_TRUE(raw::HasStatus(r, 400) || raw::HasStatus(r, 413) || raw::HasStatus(r, 401) ||
                raw::HasStatus(r, 404))
        << where << r.substr(0, 100);
    ExpectHealthy(where);
  }

  // 300 clients that open a connection, send half a request and hold it, on every port at
  // once; meanwhile and afterwards /healthz answers everywhere.
  void SlowClients() {
    std::vector<int> fds;
    for (int port : {healthz_port_, read_only_port_, api_port_}) {
      for (int i = 0; i < 100; ++i) {
        int fd = raw::Connect(port);
        if (fd < 0) continue;
        // On the TLS port half a ClientHello; on the plain ports half a request header.
        raw::SendAll(fd, port == api_port_ ? std::string("\x16\x03\x01\x02\x00", 5)
                                           : std::string("GET /healthz HTTP/1.1\r\nX-Slow: "));
        fds.push_back(fd);
      }
    }
    EXPECT_EQ(fds.size(), 300u);
    ExpectHealthy("with 300 slow clients held open");
    std::string r = TlsExchange(api_port_, "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n");
    EXPECT_TRUE(raw::HasStatus(r, 200) || raw::HasStatus(r, 401)) << r.substr(0, 100);
    for (int fd : fds) ::close(fd);
  }

  int read_only_port_;
  pid_t pid_ = 0;
  std::string sandbox_, container_;
};

TEST_F(HostileClientsTest, UnauthenticatedAttacksOnEveryPortLeaveKubeletAndPodsAlone) {
  StartWithPod(/*anonymous=*/false);
  if (HasFatalFailure()) return;
  Attack(healthz_port_, /*tls=*/false);
  Attack(read_only_port_, /*tls=*/false);
  Attack(api_port_, /*tls=*/true);
  // TLS garbage: not a handshake at all, a truncated one, and garbage after a good one.
  for (unsigned seed = 1; seed <= 5; ++seed) {
    raw::RawExchange(api_port_, Noise(2048 * seed, seed));
  }
  raw::RawExchange(api_port_, std::string("\x16\x03\x01\xff\xff", 5) + Noise(600, 9));
  EXPECT_EQ(TlsExchange(api_port_, Noise(8192, 11)).substr(0, 12), "HTTP/1.1 400");
  // Without credentials the API answers 401 and nothing else.
  std::string r = TlsExchange(api_port_, "GET /pods HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(raw::HasStatus(r, 401)) << r;
  SlowClients();
  ExpectUntouched();
}

// With anonymous access the attacks reach the handlers: bad query values, traversal inside the
// container logs path, and bodies on every endpoint.
TEST_F(HostileClientsTest, AuthenticatedBadQueriesAndPathsReachHandlersSafely) {
  StartWithPod(/*anonymous=*/true);
  if (HasFatalFailure()) return;
  const std::string pod = PodName("web");
  auto get = [&](const std::string& target) {
    return TlsExchange(api_port_, "GET " + target + " HTTP/1.1\r\nConnection: close\r\n\r\n");
  };
  const std::string logs = "/containerLogs/default/" + pod + "/main";
  for (const char* q : {"?tailLines=-99999999999999999999", "?sinceSeconds=abc",
                        "?limitBytes=99999999999999999999999", "?sinceTime=not-a-time",
                        "?tailLines=%zz", "?follow=%00&previous=\xff"}) {
    std::string r = get(logs + q);
    EXPECT_TRUE(raw::HasStatus(r, 400)) << q << " -> " << r.substr(0, 200);
  }
  EXPECT_TRUE(raw::HasStatus(get(logs + "?tailLines=-1"), 422));
  EXPECT_TRUE(raw::HasStatus(get(logs + "?sinceSeconds=0"), 422));
  EXPECT_TRUE(raw::HasStatus(get(logs + "?tailLines=1"), 200));
  // Escaped dots and slashes are decoded before the path is cleaned, as Go's ServeMux does.
  EXPECT_TRUE(raw::HasStatus(get("/containerLogs/default/" + pod + "/..%2f..%2fetc"), 301));
  EXPECT_TRUE(raw::HasStatus(get("/containerLogs/%2e%2e/%2e%2e/passwd"), 301));
  EXPECT_TRUE(raw::HasStatus(get("/containerLogs/default/" + pod + "/main/extra"), 404));
  EXPECT_TRUE(raw::HasStatus(get("/containerLogs/" + std::string(100000, 'n') + "/p/c"), 404));
  // A body over the limit on an endpoint that takes one, and bodies where none is expected.
  std::string r = TlsExchange(
      api_port_, "POST /stats/summary HTTP/1.1\r\nContent-Length: " + std::to_string(2 << 20) +
                     "\r\n\r\n" + std::string(2 << 20, '{'));
  EXPECT_TRUE(r.empty() || raw::HasStatus(r, 413)) << r.substr(0, 100);
  r = TlsExchange(api_port_,
                  "GET /pods HTTP/1.1\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
  EXPECT_TRUE(raw::HasStatus(r, 200)) << r.substr(0, 100);
  Attack(api_port_, /*tls=*/true);
  SlowClients();
  ExpectUntouched();
}

}  // namespace
}  // namespace kubelet::e2e
