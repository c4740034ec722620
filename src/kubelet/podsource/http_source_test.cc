#include "kubelet/podsource/http_source.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "api/static_pod.h"
#include "common/strings.h"
#include "gtest/gtest.h"
#include "kubelet/podsource/podsource_test_util.h"

namespace kubelet::podsource {
namespace {

using kubelet::testing::Eventually;
using testutil::LogCapture;
using testutil::MergedNames;
using testutil::PodJson;
using testutil::PodYaml;
using Names = std::vector<std::string>;

std::string Response(int code, std::string_view reason, std::string_view body,
                     std::string_view extra_headers = "") {
  return absl::StrCat("HTTP/1.1 ", code, " ", AV(reason), "\r\nContent-Length: ", body.size(),
                      "\r\nConnection: close\r\n", AV(extra_headers), "\r\n", AV(body));
}

// A tiny HTTP/1.1 server on 127.0.0.1 serving canned responses, one connection at a time. The
// handler gets the raw request head and returns the raw response; "" leaves the connection
// hanging until the server is destroyed.
class TestServer {
 public:
  using Handler = std::function<std::string(const std::string& request)>;

  TestServer() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(listen_fd_, 16) != 0) {
      ADD_FAILURE() << "bind/listen failed";
    }
    socklen_t len = sizeof(addr);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    if (::pipe(stop_pipe_) != 0) ADD_FAILURE() << "pipe failed";
    thread_ = std::thread([this] { Serve(); });
  }
  ~TestServer() {
    char c = 'x';
    ssize_t n = ::write(stop_pipe_[1], &c, 1);
    (void)n;
    thread_.join();
    for (int fd : hanging_) ::close(fd);
    ::close(listen_fd_);
    ::close(stop_pipe_[0]);
    ::close(stop_pipe_[1]);
  }

  int port() const { return port_; }
  std::string Url(std::string_view path = "/pods") const {
    return absl::StrCat("http://127.0.0.1:", port_, AV(path));
  }
  void SetHandler(Handler h) {
    absl::MutexLock lock(&mu_);
    handler_ = std::move(h);
  }
  void Serve(int code, std::string_view reason, std::string body) {
    std::string resp = Response(code, reason, body);
    SetHandler([resp](const std::string&) { return resp; });
  }
  std::vector<std::string> Requests() const {
    absl::MutexLock lock(&mu_);
    return requests_;
  }

 private:
  void Serve() {
    while (true) {
      pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) continue;
      if (fds[1].revents & POLLIN) return;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 500) <= 0) break;
        const ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      Handler handler;
      {
        absl::MutexLock lock(&mu_);
        requests_.push_back(request);
        handler = handler_;
      }
      const std::string response = handler ? handler(request) : Response(404, "Not Found", "");
      if (response.empty()) {
        hanging_.push_back(fd);
        continue;
      }
      size_t off = 0;
      while (off < response.size()) {
        const ssize_t n = ::write(fd, response.data() + off, response.size() - off);
        if (n <= 0) break;
        off += static_cast<size_t>(n);
      }
      ::shutdown(fd, SHUT_WR);
      ::close(fd);
    }
  }

  int listen_fd_ = -1;
  int port_ = 0;
  int stop_pipe_[2] = {-1, -1};
  std::thread thread_;
  std::vector<int> hanging_;  // server thread only
  mutable absl::Mutex mu_;
  Handler handler_;
  std::vector<std::string> requests_;
};

std::string PodListJson(const std::vector<std::string>& names) {
  std::string items;
  for (const auto& n : names) absl::StrAppend(&items, items.empty() ? "" : ",", PodJson(n));
  return absl::StrCat(R"({"apiVersion":"v1","kind":"PodList","items":[)", items, "]}");
}

class HttpSourceTest : public ::testing::Test {
 protected:
  std::unique_ptr<HttpSource> MakeSource(const std::string& url, HttpHeader header = {}) {
    HttpSourceOptions o;
    o.url = url;
    o.header = std::move(header);
    o.node_name = "node1";
    o.timeout = timeout_;
    o.max_body_bytes = max_body_;
    o.check_frequency = check_frequency_;
    return std::make_unique<HttpSource>(o, config_, clock_);
  }

  TestServer server_;
  RealClock clock_;
  PodConfig config_{clock_, PodConfigOptions{10000}};
  absl::Duration timeout_ = absl::Seconds(10);
  absl::Duration check_frequency_ = absl::Seconds(20);
  size_t max_body_ = 10 << 20;
};

TEST_F(HttpSourceTest, PodPodListErrorsAndEmptyBody) {
  auto source = MakeSource(server_.Url());
  server_.Serve(200, "OK", PodJson("web"));
  ASSERT_TRUE(source->ExtractFromURL().ok());
  EXPECT_EQ(MergedNames(config_), Names{"default/web-node1"});
  const api::Pod pod = *config_.MergedState()[0];
  EXPECT_EQ(pod.metadata.annotations.at(api::kConfigSourceAnnotationKey), "http");
  EXPECT_EQ(pod.metadata.annotations.at(api::kConfigHashAnnotationKey), pod.metadata.uid);
  EXPECT_TRUE(config_.SeenAllSources({kHTTPSource}));

  // The same body again: nothing new.
  config_.Drain();
  ASSERT_TRUE(source->ExtractFromURL().ok());
  EXPECT_TRUE(config_.Drain().empty());

  // A PodList in YAML.
  server_.Serve(200, "OK",
                "apiVersion: v1\nkind: PodList\nitems:\n- " +
                    absl::StrReplaceAll(PodYaml("one"), {{"\n", "\n  "}}) + "\n- " +
                    absl::StrReplaceAll(PodYaml("two"), {{"\n", "\n  "}}));
  ASSERT_TRUE(source->ExtractFromURL().ok());
  EXPECT_EQ(MergedNames(config_), (Names{"default/one-node1", "default/two-node1"}));

  // Non-200: an error naming the URL and status; the pods stay.
  server_.Serve(500, "Internal Server Error", "boom");
  absl::Status st = source->ExtractFromURL();
  EXPECT_EQ(st.message(), server_.Url() + ": 500 Internal Server Error");
  EXPECT_EQ(MergedNames(config_), (Names{"default/one-node1", "default/two-node1"}));

  // An empty body is an empty snapshot (and an error report).
  server_.Serve(200, "OK", "");
  st = source->ExtractFromURL();
  EXPECT_EQ(st.message(), "zero-length data received from " + server_.Url());
  EXPECT_TRUE(MergedNames(config_).empty());

  // The previous list coming back is delivered again.
  server_.Serve(200, "OK", PodListJson({"one", "two"}));
  ASSERT_TRUE(source->ExtractFromURL().ok());
  EXPECT_EQ(MergedNames(config_), (Names{"default/one-node1", "default/two-node1"}));
  ASSERT_TRUE(source->ExtractFromURL().ok());
}

TEST_F(HttpSourceTest, InvalidBodiesAreErrorsAndDeliverNothing) {
  auto source = MakeSource(server_.Url());
  server_.Serve(200, "OK", PodJson("web", ""));
  absl::Status st = source->ExtractFromURL();
  EXPECT_TRUE(absl::StrContains(st.message(), "spec.containers[0].image: Required value"))
      << st.message();
  server_.Serve(200, "OK", "this is not a pod");
  st = source->ExtractFromURL();
  EXPECT_TRUE(absl::StrContains(st.message(), "couldn't parse as single")) << st.message();
  server_.Serve(200, "OK", std::string("\xff\x00{{[[", 6));
  EXPECT_FALSE(source->ExtractFromURL().ok());
  EXPECT_TRUE(config_.MergedState().empty());
  EXPECT_FALSE(config_.SeenAllSources({kHTTPSource}));
}

TEST_F(HttpSourceTest, SendsConfiguredHeaders) {
  auto source = MakeSource(server_.Url("/manifest?node=n1"),
                           {{"x-token", {"abc"}}, {"X-Multi", {"1", "2"}}, {"Host", {"evil"}}});
  server_.Serve(200, "OK", PodJson("web"));
  ASSERT_TRUE(source->ExtractFromURL().ok());
  auto reqs = server_.Requests();
  ASSERT_EQ(reqs.size(), 1u);
  const std::string& r = reqs[0];
  EXPECT_TRUE(absl::StartsWith(r, "GET /manifest?node=n1 HTTP/1.1\r\n")) << r;
  EXPECT_TRUE(absl::StrContains(r, "X-Token: abc\r\n")) << r;
  EXPECT_TRUE(absl::StrContains(r, "X-Multi: 1\r\n")) << r;
  EXPECT_TRUE(absl::StrContains(r, "X-Multi: 2\r\n")) << r;
  EXPECT_TRUE(absl::StrContains(r, "User-Agent: Go-http-client/1.1\r\n")) << r;
  EXPECT_TRUE(absl::StrContains(r, absl::StrCat("Host: 127.0.0.1:", server_.port(), "\r\n"))) << r;
  EXPECT_FALSE(absl::StrContains(r, "evil")) << r;
}

TEST_F(HttpSourceTest, FollowsRedirects) {
  const std::string final_url = server_.Url("/new");
  const std::string pod = PodJson("moved");
  server_.SetHandler([&](const std::string& req) {
    if (absl::StartsWith(req, "GET /old ")) {
      return Response(302, "Found", "", "Location: /new\r\n");
    }
    if (absl::StartsWith(req, "GET /loop ")) {
      return Response(307, "Temporary Redirect", "", "Location: /loop\r\n");
    }
    return Response(200, "OK", pod);
  });
  auto source = MakeSource(server_.Url("/old"), {{"X-Token", {"t"}}});
  ASSERT_TRUE(source->ExtractFromURL().ok());
  EXPECT_EQ(MergedNames(config_), Names{"default/moved-node1"});
  auto reqs = server_.Requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_TRUE(absl::StrContains(reqs[1], "X-Token: t\r\n")) << reqs[1];
  EXPECT_TRUE(absl::StrContains(reqs[1], "Referer: " + server_.Url("/old"))) << reqs[1];

  auto looping = MakeSource(server_.Url("/loop"));
  absl::Status st = looping->ExtractFromURL();
  EXPECT_EQ(st.message(), "Get \"/loop\": stopped after 10 redirects");
  EXPECT_EQ(server_.Requests().size(), 12u);  // like Go: 10 requests, then the error
}

TEST_F(HttpSourceTest, TransportErrors) {
  // Body over the limit.
  max_body_ = 64;
  server_.Serve(200, "OK", PodJson("web"));
  EXPECT_EQ(MakeSource(server_.Url())->ExtractFromURL().message(), "the read limit is reached");
  max_body_ = 10 << 20;

  // Nobody listening.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string closed_url = absl::StrCat("http://127.0.0.1:", ntohs(addr.sin_port), "/x");
  ::close(fd);
  absl::Status st = MakeSource(closed_url)->ExtractFromURL();
  EXPECT_EQ(st.message(), absl::StrCat("Get \"", closed_url, "\": dial tcp 127.0.0.1:",
                                       ntohs(addr.sin_port), ": connect: connection refused"));

  // Unsupported scheme, malformed URL, unknown host.
  EXPECT_EQ(MakeSource("ftp://example.com/p")->ExtractFromURL().message(),
            "Get \"ftp://example.com/p\": unsupported protocol scheme \"ftp\"");
  EXPECT_FALSE(MakeSource("http://[::1/p")->ExtractFromURL().ok());
  EXPECT_FALSE(MakeSource("http:///p")->ExtractFromURL().ok());
  EXPECT_FALSE(MakeSource("")->ExtractFromURL().ok());

  // https:// against a plain HTTP server fails cleanly in the TLS handshake.
  st = MakeSource(absl::StrCat("https://127.0.0.1:", server_.port(), "/pods"))->ExtractFromURL();
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(absl::StrContains(st.message(), "tls")) << st.message();

  // A server that never answers: the request times out.
  timeout_ = absl::Milliseconds(200);
  server_.SetHandler([](const std::string&) { return std::string(); });
  st = MakeSource(server_.Url())->ExtractFromURL();
  EXPECT_TRUE(absl::StrContains(st.message(), "context deadline exceeded")) << st.message();
  EXPECT_TRUE(config_.MergedState().empty());
}

TEST_F(HttpSourceTest, PollsLogsFailuresSparinglyAndStopsPromptly) {
  LogCapture logs;
  check_frequency_ = absl::Milliseconds(5);
  server_.Serve(500, "Internal Server Error", "");
  auto source = MakeSource(server_.Url());
  ASSERT_TRUE(source->Start().ok());
  ASSERT_TRUE(Eventually([&] { return source->polls() >= 6; }));
  server_.Serve(200, "OK", PodJson("web"));
  ASSERT_TRUE(Eventually([&] { return MergedNames(config_) == Names{"default/web-node1"}; }));
  ASSERT_TRUE(Eventually([&] { return logs.Count({"Successfully read pods from URL"}) == 1; }))
      << logs.Dump();
  EXPECT_EQ(logs.Count({"\"Failed to read pods from URL\"", "500 Internal Server Error"}), 3)
      << logs.Dump();
  EXPECT_EQ(logs.Count({"Dropping verbosity of this message to V(4)"}), 1) << logs.Dump();

  // Stop interrupts a request that would otherwise wait for its 10 s timeout.
  std::atomic<bool> hanging{false};
  server_.SetHandler([&](const std::string&) {
    hanging = true;
    return std::string();
  });
  ASSERT_TRUE(Eventually([&] { return hanging.load(); }));
  const absl::Time start = absl::Now();
  source->Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

}  // namespace
}  // namespace kubelet::podsource
