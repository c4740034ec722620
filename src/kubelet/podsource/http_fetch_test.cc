// Hostile manifest servers: every response below once crashed, wedged or could exhaust the
// kubelet, or is framing a server can get wrong. Each must fail the fetch with a precise error
// while the process (and the URL source's thread) keeps running. All traffic stays on
// 127.0.0.1.
#include "kubelet/podsource/http_fetch.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/strings.h"
#include "gtest/gtest.h"
#include "kubelet/podsource/http_source.h"
#include "kubelet/podsource/podsource_test_util.h"

namespace kubelet::podsource {
namespace {

using kubelet::testing::Eventually;
using testutil::LogCapture;

// Sends all of `data` unless the peer went away or the server is stopping; never raises SIGPIPE.
bool SendAll(int fd, std::string_view data, const std::atomic<bool>& stopping) {
  while (!data.empty()) {
    if (stopping.load()) return false;
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// A server on 127.0.0.1 that runs `behaviour` on each connection after reading the request
// head, then closes the connection. Behaviours that never end watch `stopping`.
class HostileServer {
 public:
  using Behaviour = std::function<void(int fd, const std::atomic<bool>& stopping)>;

  explicit HostileServer(Behaviour behaviour) : behaviour_(std::move(behaviour)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(listen_fd_, 16) != 0) {
      ADD_FAILURE() << "bind/listen failed";
    }
    socklen_t len = sizeof(addr);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~HostileServer() {
    stopping_.store(true);
    thread_.join();
    ::close(listen_fd_);
  }

  std::string Url(std::string_view path = "/pods") const {
    return absl::StrCat("http://127.0.0.1:", port_, AV(path));
  }
  std::string HttpsUrl() const { return absl::StrCat("https://127.0.0.1:", port_, "/pods"); }
  int connections() const { return connections_.load(); }

 private:
  void Serve() {
    while (!stopping_.load()) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      connections_.fetch_add(1);
      // Read what the client sends first (a request head or a TLS ClientHello).
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        pollfd r{fd, POLLIN, 0};
        if (::poll(&r, 1, 100) <= 0) break;
        const ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      behaviour_(fd, stopping_);
      ::shutdown(fd, SHUT_WR);
      ::close(fd);
    }
  }

  Behaviour behaviour_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

// A server that sends `response` and closes.
HostileServer::Behaviour Send(std::string response) {
  return [response = std::move(response)](int fd, const std::atomic<bool>& stopping) {
    SendAll(fd, response, stopping);
  };
}

// A server that sends `head`, then `piece` over and over until the client goes away.
HostileServer::Behaviour Endless(std::string head, std::string piece,
                                 absl::Duration pause = absl::ZeroDuration()) {
  return [head = std::move(head), piece = std::move(piece), pause](
             int fd, const std::atomic<bool>& stopping) {
    if (!SendAll(fd, head, stopping)) return;
    while (SendAll(fd, piece, stopping)) {
      if (pause > absl::ZeroDuration()) absl::SleepFor(pause);
    }
  };
}

absl::StatusOr<HttpFetchResponse> Fetch(const std::string& url,
                                        absl::Duration timeout = absl::Seconds(10)) {
  HttpFetcher fetcher;
  HttpFetchOptions options;
  options.timeout = timeout;
  return fetcher.Get(url, {}, options);
}

std::string Prefix(const HostileServer& s) { return absl::StrCat("Get \"", s.Url(), "\": "); }

TEST(HttpFetchHostileTest, HeaderValueOver64KiBFailsTheFetch) {
  // Beast's field container throws std::length_error for this; it once ended the process.
  HostileServer server(Send(absl::StrCat("HTTP/1.1 200 OK\r\nX-Big: ", std::string(70000, 'v'),
                                         "\r\nContent-Length: 2\r\n\r\n{}")));
  auto resp = Fetch(server.Url());
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(
      resp.status().message(),
      Prefix(server) + "net/http: server response header field exceeded 65536 bytes; aborted");
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(HttpFetchHostileTest, HeaderNameOver64KiBFailsTheFetch) {
  HostileServer server(Send(absl::StrCat("HTTP/1.1 200 OK\r\n", std::string(70000, 'n'),
                                         ": v\r\nContent-Length: 2\r\n\r\n{}")));
  auto resp = Fetch(server.Url());
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(
      resp.status().message(),
      Prefix(server) + "net/http: server response header field exceeded 65536 bytes; aborted");
}

TEST(HttpFetchHostileTest, HeaderJustUnder64KiBIsAccepted) {
  HostileServer server(Send(absl::StrCat("HTTP/1.1 200 OK\r\nX-Big: ", std::string(65536, 'v'),
                                         "\r\nContent-Length: 2\r\n\r\n{}")));
  auto resp = Fetch(server.Url());
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->body, "{}");
}

TEST(HttpFetchHostileTest, HugeHeaderBlockFailsTheFetch) {
  std::string line = absl::StrCat("X-Filler: ", std::string(1000, 'f'), "\r\n");
  HostileServer server(Endless("HTTP/1.1 200 OK\r\n", line));
  auto resp = Fetch(server.Url());
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().message(),
            Prefix(server) + "net/http: server response headers exceeded 1048576 bytes; aborted");
}

TEST(HttpFetchHostileTest, EndlessHeaderLineFailsTheFetch) {
  HostileServer server(Endless("HTTP/1.1 200 OK\r\nX-Endless: ", std::string(8192, 'e')));
  auto resp = Fetch(server.Url());
  ASSERT_FALSE(resp.ok());
  EXPECT_TRUE(absl::StartsWith(resp.status().message(), Prefix(server) + "net/http: server "))
      << resp.status();
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(HttpFetchHostileTest, EndlessBodyIsBounded) {
  HostileServer server(
      Endless("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", std::string(65536, 'b')));
  auto resp = Fetch(server.Url());
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().message(), "the read limit is reached");
}

TEST(HttpFetchHostileTest, EndlessChunkedBodyIsBounded) {
  HostileServer server(Endless("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                               absl::StrCat("8000\r\n", std::string(0x8000, 'c'), "\r\n")));
  auto resp = Fetch(server.Url());
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().message(), "the read limit is reached");
}

TEST(HttpFetchHostileTest, HugeClaimedContentLengthFailsAtOnce) {
  // Nothing may be reserved from the claim: 1 TB would be an allocation failure.
  HostileServer server(Send("HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n{}"));
  auto resp = Fetch(server.Url());
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().message(), "the read limit is reached");
}

TEST(HttpFetchHostileTest, BodyOfExactlyTheLimitIsAccepted) {
  const std::string body(10 << 20, 'x');
  HostileServer server(
      Send(absl::StrCat("HTTP/1.1 200 OK\r\nContent-Length: ", body.size(), "\r\n\r\n", body)));
  auto resp = Fetch(server.Url());
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->body.size(), body.size());
}

TEST(HttpFetchHostileTest, OverflowingOrInvalidContentLength) {
  for (const char* cl : {"99999999999999999999999", "abc", "-1"}) {
    HostileServer server(
        Send(absl::StrCat("HTTP/1.1 200 OK\r\nContent-Length: ", cl, "\r\n\r\n{}")));
    auto resp = Fetch(server.Url());
    ASSERT_FALSE(resp.ok()) << cl;
    EXPECT_EQ(resp.status().message(), Prefix(server) +
                                           "net/http: HTTP/1.x transport connection broken: bad "
                                           "Content-Length")
        << cl;
  }
}

TEST(HttpFetchHostileTest, SlowBodyHitsTheOverallDeadline) {
  HostileServer server(
      Endless("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", "x", absl::Milliseconds(20)));
  const absl::Time start = absl::Now();
  auto resp = Fetch(server.Url(), absl::Milliseconds(400));
  const absl::Duration took = absl::Now() - start;
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().message(),
            "context deadline exceeded (Client.Timeout or context cancellation while reading "
            "body)");
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_LT(took, absl::Seconds(3));
}

TEST(HttpFetchHostileTest, SlowHeaderHitsTheOverallDeadline) {
  HostileServer server(Endless("HTTP/1.1 200 OK\r\n", "X", absl::Milliseconds(20)));
  const absl::Time start = absl::Now();
  auto resp = Fetch(server.Url(), absl::Milliseconds(400));
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().message(),
            Prefix(server) +
                "context deadline exceeded (Client.Timeout exceeded while awaiting headers)");
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
}

TEST(HttpFetchHostileTest, BadChunkedEncoding) {
  for (const char* body : {"zz\r\nabc\r\n0\r\n\r\n", "3\r\nabcXY0\r\n\r\n",
                           "ffffffffffffffffffff\r\nabc\r\n", "3;\x01\r\nabc\r\n0\r\n\r\n"}) {
    HostileServer server(
        Send(absl::StrCat("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body)));
    auto resp = Fetch(server.Url());
    ASSERT_FALSE(resp.ok()) << body;
    EXPECT_EQ(resp.status().message(), "malformed chunked encoding") << body;
  }
}

TEST(HttpFetchHostileTest, ChunkedBodyCutShort) {
  HostileServer server(Send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc"));
  auto resp = Fetch(server.Url());
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().message(), "unexpected EOF");
}

TEST(HttpFetchHostileTest, ServerClosingEarly) {
  {
    HostileServer server(Send(""));
    auto resp = Fetch(server.Url());
    ASSERT_FALSE(resp.ok());
    EXPECT_EQ(resp.status().message(), Prefix(server) + "EOF");
  }
  {
    HostileServer server(Send("HTTP/1.1 200 OK\r\nContent-Le"));
    auto resp = Fetch(server.Url());
    ASSERT_FALSE(resp.ok());
    EXPECT_EQ(resp.status().message(), Prefix(server) + "unexpected EOF");
  }
  {
    HostileServer server(Send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"kind\""));
    auto resp = Fetch(server.Url());
    ASSERT_FALSE(resp.ok());
    EXPECT_EQ(resp.status().message(), "unexpected EOF");
  }
}

TEST(HttpFetchHostileTest, GarbageInsteadOfHttp) {
  {
    HostileServer server(Send("SSH-2.0-OpenSSH_9.2\r\n"));
    auto resp = Fetch(server.Url());
    ASSERT_FALSE(resp.ok());
    EXPECT_EQ(resp.status().message(),
              Prefix(server) +
                  "net/http: HTTP/1.x transport connection broken: malformed HTTP "
                  "response \"SSH-2.0-OpenSSH_9.2\"");
  }
  {
    HostileServer server(Send(std::string("\x00\xff\x16\x03\x01garbage\r\n\r\n", 16)));
    auto resp = Fetch(server.Url());
    ASSERT_FALSE(resp.ok());
    EXPECT_TRUE(absl::StartsWith(resp.status().message(),
                                 Prefix(server) + "net/http: HTTP/1.x transport connection "
                                                  "broken: malformed HTTP response \""))
        << resp.status();
  }
  {
    // The quoted line is bounded.
    HostileServer server(Send(std::string(100000, 'G') + "\r\n\r\n"));
    auto resp = Fetch(server.Url());
    ASSERT_FALSE(resp.ok());
    EXPECT_LT(resp.status().message().size(), 600u) << resp.status();
  }
  {
    HostileServer server(Send("HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n"));
    auto resp = Fetch(server.Url());
    ASSERT_FALSE(resp.ok());
    EXPECT_EQ(resp.status().message(),
              Prefix(server) +
                  "net/http: HTTP/1.x transport connection broken: malformed HTTP "
                  "response \"HTTP/1.1 2x0 OK\"");
  }
  {
    HostileServer server(Send("HTTP/1.1 200 OK\r\nBad Header\r\nContent-Length: 0\r\n\r\n"));
    auto resp = Fetch(server.Url());
    ASSERT_FALSE(resp.ok());
    EXPECT_EQ(resp.status().message(),
              Prefix(server) +
                  "net/http: HTTP/1.x transport connection broken: malformed MIME header line");
  }
}

TEST(HttpFetchHostileTest, TlsGarbage) {
  {
    // A plain HTTP server behind an https:// URL.
    HostileServer server(Send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"));
    auto resp = Fetch(server.HttpsUrl());
    ASSERT_FALSE(resp.ok());
    EXPECT_EQ(resp.status().message(),
              absl::StrCat("Get \"", server.HttpsUrl(),
                           "\": tls: first record does not look like a TLS handshake"));
  }
  {
    // A TLS-looking record header followed by garbage.
    HostileServer server(Send(std::string("\x16\x03\x03\x00\x05zzzzz\x15\x03\x03\xff\xff", 15)));
    auto resp = Fetch(server.HttpsUrl());
    ASSERT_FALSE(resp.ok());
    EXPECT_TRUE(absl::StartsWith(resp.status().message(),
                                 absl::StrCat("Get \"", server.HttpsUrl(), "\": tls: ")))
        << resp.status();
  }
  {
    // Closed during the handshake.
    HostileServer server(Send(""));
    auto resp = Fetch(server.HttpsUrl());
    ASSERT_FALSE(resp.ok());
    EXPECT_EQ(resp.status().message(), absl::StrCat("Get \"", server.HttpsUrl(), "\": EOF"));
  }
}

TEST(HttpFetchHostileTest, RedirectsToOtherSchemesAndLoops) {
  for (const std::string location :
       {"file:///etc/passwd", "ftp://127.0.0.1/pods", "mailto:root@localhost", "gopher://x/"}) {
    HostileServer server(Send(absl::StrCat("HTTP/1.1 302 Found\r\nLocation: ", location,
                                           "\r\nContent-Length: 0\r\n\r\n")));
    auto resp = Fetch(server.Url());
    ASSERT_FALSE(resp.ok()) << location;
    const std::string scheme = location.substr(0, location.find(':'));
    EXPECT_EQ(resp.status().message(),
              absl::StrCat("Get \"", location, "\": unsupported protocol scheme \"", scheme, "\""));
    EXPECT_EQ(server.connections(), 1);
  }
  {
    HostileServer server(
        Send("HTTP/1.1 301 Moved\r\nLocation: /again\r\nContent-Length: 0\r\n\r\n"));
    auto resp = Fetch(server.Url());
    ASSERT_FALSE(resp.ok());
    EXPECT_EQ(resp.status().message(), "Get \"/again\": stopped after 10 redirects");
    EXPECT_EQ(server.connections(), 10);
  }
  {
    // A Location too long for Beast's own field storage.
    HostileServer server(
        Send(absl::StrCat("HTTP/1.1 302 Found\r\nLocation: /", std::string(70000, 'l'),
                          "\r\nContent-Length: 0\r\n\r\n")));
    auto resp = Fetch(server.Url());
    ASSERT_FALSE(resp.ok());
    EXPECT_EQ(
        resp.status().message(),
        Prefix(server) + "net/http: server response header field exceeded 65536 bytes; aborted");
  }
}

TEST(HttpFetchHostileTest, RedirectToAHugeUrlFailsTheNextRequest) {
  // The second request would carry the long URL as its Referer, too long for Beast's fields.
  const std::string long_path = "/long" + std::string(65520, 'a');
  HostileServer server([&](int fd, const std::atomic<bool>& stopping) {
    static std::atomic<int> n{0};
    const std::string location = n.fetch_add(1) == 0 ? long_path : "/short";
    SendAll(
        fd,
        absl::StrCat("HTTP/1.1 302 Found\r\nLocation: ", location, "\r\nContent-Length: 0\r\n\r\n"),
        stopping);
  });
  auto resp = Fetch(server.Url());
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().message(),
            absl::StrCat("Get \"", server.Url("/short"),
                         "\": net/http: request header field exceeded 65536 bytes"));
}

TEST(HttpFetchHostileTest, ParseHttpResponseBytesMatchesTheSocketPath) {
  HttpFetchOptions options;
  const std::string url = "http://127.0.0.1/pods";
  const std::string chunked =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n";
  for (size_t read_size : {1, 7, 65536}) {
    auto resp = ParseHttpResponseBytes(url, chunked, read_size, options);
    ASSERT_TRUE(resp.ok()) << resp.status();
    EXPECT_EQ(resp->status, "200 OK");
    EXPECT_EQ(resp->body, "{}");
  }
  auto redirect = ParseHttpResponseBytes(
      url, "HTTP/1.1 302 Found\r\nLocation:  /next \r\nContent-Length: 0\r\n\r\n", 3, options);
  ASSERT_TRUE(redirect.ok()) << redirect.status();
  EXPECT_EQ(redirect->status_code, 302);
  EXPECT_EQ(redirect->location, "/next");
  auto big = ParseHttpResponseBytes(
      url, absl::StrCat("HTTP/1.1 200 OK\r\nX: ", std::string(70000, 'v'), "\r\n\r\n"), 4096,
      options);
  EXPECT_EQ(big.status().message(),
            "Get \"" + url +
                "\": net/http: server response header field exceeded 65536 bytes; "
                "aborted");
  EXPECT_EQ(ParseHttpResponseBytes(url, "", 1, options).status().message(),
            "Get \"" + url + "\": EOF");
}

TEST(HttpFetchHostileTest, InformationalResponsesAreSkippedUpToFive) {
  HttpFetchOptions options;
  const std::string url = "http://127.0.0.1/pods";
  const std::string ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
  std::string informational;
  for (int i = 0; i < 5; ++i) informational += "HTTP/1.1 100 Continue\r\n\r\n";
  auto resp = ParseHttpResponseBytes(url, informational + ok, 5, options);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->status_code, 200);
  EXPECT_EQ(resp->body, "{}");
  auto endless = ParseHttpResponseBytes(
      url, informational + "HTTP/1.1 103 Early Hints\r\n\r\n" + ok, 64, options);
  EXPECT_EQ(endless.status().message(),
            "Get \"" + url + "\": net/http: too many 1xx informational responses");
  // Over a socket too.
  HostileServer server(Send(informational + ok));
  auto fetched = Fetch(server.Url());
  ASSERT_TRUE(fetched.ok()) << fetched.status();
  EXPECT_EQ(fetched->body, "{}");
}

TEST(HttpFetchHostileTest, UrlSourceThreadSurvivesHostileServer) {
  // The polling thread keeps going through every hostile answer and is stopped promptly.
  LogCapture logs;
  HostileServer server(Send(absl::StrCat("HTTP/1.1 200 OK\r\nX-Big: ", std::string(70000, 'v'),
                                         "\r\nContent-Length: 2\r\n\r\n{}")));
  RealClock clock;
  PodConfig config{clock, PodConfigOptions{100}};
  HttpSourceOptions o;
  o.url = server.Url();
  o.node_name = "node1";
  o.check_frequency = absl::Milliseconds(5);
  HttpSource source(o, config, clock);
  ASSERT_TRUE(source.Start().ok());
  ASSERT_TRUE(Eventually([&] { return source.polls() >= 5; }));
  EXPECT_EQ(logs.Count({"\"Failed to read pods from URL\"",
                        "server response header field exceeded 65536 bytes"}),
            3)
      << logs.Dump();
  EXPECT_EQ(logs.Count({"Dropping verbosity of this message to V(4)",
                        "server response header field exceeded 65536 bytes"}),
            1)
      << logs.Dump();
  source.Stop();
  EXPECT_TRUE(config.MergedState().empty());
}

}  // namespace
}  // namespace kubelet::podsource
