// Fuzzes the kubelet API's request path end to end: the fuzzer's bytes are sent, as they are, to
// a real HttpServer on 127.0.0.1 carrying the kubelet's handlers (healthz, /pods,
// /stats/summary, /metrics*, /containerLogs with its query decoding, /configz, /runningpods)
// behind the authentication filter, then the write side is shut and the answer read to the end.
// Parsing, routing, path cleaning, query decoding, the auth filter and the handlers all run on
// the server's own threads, so a crash, sanitizer report or hang anywhere in them fails the run.
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "server/auth.h"
#include "server/http_server.h"
#include "server/kubelet_server.h"
#include "server/raw_http_test_util.h"

namespace {

using kubelet::server::HttpServer;

class FakeHost : public kubelet::server::HostInterface {
 public:
  FakeHost() {
    kubelet::api::Pod p;
    p.metadata.name = "web";
    p.metadata.namespace_ = "default";
    p.metadata.uid = "1234";
    kubelet::api::Container c;
    c.name = "main";
    c.image = "busybox";
    p.spec.containers.push_back(c);
    pods_.push_back(p);
  }
  std::vector<kubelet::api::Pod> GetPods() override { return pods_; }
  absl::StatusOr<std::vector<kubelet::api::Pod>> GetRunningPods() override { return pods_; }
  absl::Status GetContainerLogs(const std::string&, const std::string&, const std::string&,
                                const kubelet::logs::LogOptions& o,
                                const kubelet::logs::LogSink& sink) override {
    if (o.previous) return absl::NotFoundError("no previous container");
    sink("2026-01-01T00:00:00Z stdout F line\n");
    return absl::OkStatus();
  }
  kubelet::stats::StatsProvider* GetStatsProvider() override { return nullptr; }
  absl::Status SyncLoopHealthy() override { return absl::OkStatus(); }
  std::string Configz() override { return "{\"kubeletconfig\":{}}"; }

 private:
  std::vector<kubelet::api::Pod> pods_;
};

HttpServer* Server() {
  static HttpServer* server = [] {
    kubelet::server::HttpServerOptions o;
    o.name = "fuzz";
    o.port = 0;
    o.header_timeout = absl::Seconds(2);
    o.read_timeout = absl::Seconds(2);
    o.idle_timeout = absl::Seconds(2);
    auto* s = new HttpServer(o);
    auto host = std::make_shared<FakeHost>();
    kubelet::server::InstallDefaultHandlers(*s, host);
    kubelet::server::InstallDebuggingHandlers(*s, host);
    kubelet::server::AuthOptions auth;
    auth.anonymous = true;
    auth.node_name = "node";
    // Deny one subresource so both authorization outcomes are reached.
    auth.authorizer = [](const kubelet::server::UserInfo&,
                         const kubelet::server::RequestAttributes& a) {
      return kubelet::server::AuthzDecision{a.subresource != "metrics", "fuzz"};
    };
    s->SetFilter(kubelet::server::MakeAuthFilter(auth));
    if (!s->Start().ok()) std::abort();
    return s;
  }();
  return server;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::signal(SIGPIPE, SIG_IGN);  // as the kubelet does
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = -1;
  // Hundreds of connections a second can briefly exhaust loopback ports; a server that stops
  // accepting for good is a failure.
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    fd = kubelet::server::testing::Connect(Server()->port());
    if (fd < 0) ::usleep(50000);
  }
  if (fd < 0) std::abort();
  // Close with a reset so neither side keeps the connection in TIME_WAIT.
  linger lg{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
  kubelet::server::testing::SendAll(fd, std::string(reinterpret_cast<const char*>(data), size));
  ::shutdown(fd, SHUT_WR);
  // The server must finish every exchange on its own once the input ended.
  kubelet::server::testing::ReadUntilClose(fd, /*idle_ms=*/5000);
  ::close(fd);
  return 0;
}
