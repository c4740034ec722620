#include "kubelet/lifecycle/handler_runner.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "api/testing/pod_builder.h"
#include "cri/testing/fake_runtime.h"
#include "gtest/gtest.h"

namespace kubelet::lifecycle {
namespace {

api::Pod MakePod() { return api::testing::PodBuilder("web").Uid("uid-1"); }

class HandlerRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime::v1::PodSandboxConfig sc;
    sc.mutable_metadata()->set_name("web");
    sc.mutable_metadata()->set_uid("uid-1");
    sc.mutable_metadata()->set_namespace_("default");
    auto sb = rt_.RunPodSandbox(sc, "");
    ASSERT_TRUE(sb.ok());
    runtime::v1::ContainerConfig cc;
    cc.mutable_metadata()->set_name("main");
    cc.mutable_image()->set_image("busybox");
    auto id = rt_.CreateContainer(*sb, cc, sc);
    ASSERT_TRUE(id.ok());
    ASSERT_TRUE(rt_.StartContainer(*id).ok());
    id_ = container::ContainerID{"fakeruntime", *id};
    container_.name = "main";
  }

  cri::FakeRuntime rt_;
  container::ContainerID id_;
  api::Container container_;
};

TEST_F(HandlerRunnerTest, ExecSuccessAndFailureMessage) {
  std::vector<std::string> seen;
  absl::Duration seen_timeout;
  rt_.SetExecSyncHandler(
      [&](const std::string&, const std::vector<std::string>& cmd,
          absl::Duration timeout) -> absl::StatusOr<runtime::v1::ExecSyncResponse> {
        seen = cmd;
        seen_timeout = timeout;
        runtime::v1::ExecSyncResponse r;
        if (cmd.back() == "fail") {
          r.set_stdout("some output");
          r.set_stderr("bad thing");
          r.set_exit_code(2);
        }
        return r;
      });
  HandlerRunner runner(rt_, {});
  api::LifecycleHandler h;
  h.exec = api::ExecAction{{"sh", "-c", "ok"}};
  EXPECT_TRUE(runner.Run(id_, MakePod(), container_, h, absl::InfiniteDuration()).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"sh", "-c", "ok"}));
  EXPECT_EQ(seen_timeout, absl::ZeroDuration());

  h.exec = api::ExecAction{{"sh", "-c", "fail"}};
  absl::Status s = runner.Run(id_, MakePod(), container_, h, absl::Seconds(7));
  EXPECT_EQ(seen_timeout, absl::Seconds(7));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "Exec lifecycle hook ([sh -c fail]) for Container \"main\" in Pod "
            "\"web_default(uid-1)\" failed - error: command 'sh -c fail' exited with 2: bad "
            "thing, message: \"some outputbad thing\"");
}

TEST_F(HandlerRunnerTest, TcpSocketIsRejected) {
  HandlerRunner runner(rt_, {});
  api::LifecycleHandler h;
  h.tcp_socket = api::TCPSocketAction{api::IntOrString::FromInt(80), ""};
  absl::Status s = runner.Run(id_, MakePod(), container_, h, absl::Seconds(1));
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StartsWith(s.message(), "Cannot run handler: invalid handler: "))
      << s.message();
}

// One-shot HTTP listener answering every connection with `status`.
class OneServer {
 public:
  explicit OneServer(int status) : status_(status) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(fd_, 4);
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) return;
        char buf[4096];
        std::string head;
        while (head.find("\r\n\r\n") == std::string::npos) {
          ssize_t n = ::read(c, buf, sizeof(buf));
          if (n <= 0) break;
          head.append(buf, n);
          if (head[0] == 0x16) break;  // a TLS ClientHello: answer in plain HTTP at once
        }
        last_ = head;
        // Counted before answering: the client may check the count as soon as it has the answer.
        ++hits_;
        std::string resp = "HTTP/1.1 " + std::to_string(status_) +
                           " X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        (void)!::write(c, resp.data(), resp.size());
        ::close(c);
      }
    });
  }
  ~OneServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  int port() const { return port_; }
  int hits() const { return hits_; }
  std::string last() const { return last_; }

 private:
  int status_;
  int fd_;
  int port_;
  std::atomic<int> hits_{0};
  std::string last_;
  std::thread thread_;
};

TEST_F(HandlerRunnerTest, HttpGetUsesPodIPAndNamedPort) {
  OneServer server(500);  // hook responses' status codes are not checked (upstream 1.28)
  HandlerRunner::Options opts;
  opts.pod_ip = [](const api::Pod&) -> absl::StatusOr<std::string> { return "127.0.0.1"; };
  HandlerRunner runner(rt_, opts);
  container_.ports.push_back({"web", 0, server.port(), "TCP", ""});
  api::LifecycleHandler h;
  h.http_get = api::HTTPGetAction{"/hook", api::IntOrString::FromString("web"), "", "", {}};
  EXPECT_TRUE(runner.Run(id_, MakePod(), container_, h, absl::Seconds(5)).ok());
  EXPECT_EQ(server.hits(), 1);
  EXPECT_TRUE(absl::StrContains(server.last(), "GET /hook HTTP/1.1")) << server.last();
  EXPECT_TRUE(absl::StrContains(server.last(), "User-Agent: kube-lifecycle/1.28")) << server.last();
}

TEST_F(HandlerRunnerTest, HttpsFallsBackToHttp) {
  OneServer server(200);
  HandlerRunner runner(rt_, {});
  api::LifecycleHandler h;
  h.http_get =
      api::HTTPGetAction{"/x", api::IntOrString::FromInt(server.port()), "127.0.0.1", "HTTPS", {}};
  EXPECT_TRUE(runner.Run(id_, MakePod(), container_, h, absl::Seconds(5)).ok());
  EXPECT_EQ(server.hits(), 2);  // the TLS attempt, then plain HTTP
}

TEST_F(HandlerRunnerTest, HttpConnectionErrorFails) {
  HandlerRunner runner(rt_, {});
  api::LifecycleHandler h;
  // Port 1 on loopback: nothing listens there.
  h.http_get = api::HTTPGetAction{"/x", api::IntOrString::FromInt(1), "127.0.0.1", "", {}};
  absl::Status s = runner.Run(id_, MakePod(), container_, h, absl::Seconds(5));
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StartsWith(
      s.message(),
      "HTTP lifecycle hook (/x) for Container \"main\" in Pod \"web_default(uid-1)\" "
      "failed - error: Get \"http://127.0.0.1:1/x\": dial tcp 127.0.0.1:1: connect: "
      "connection refused"))
      << s.message();
}

TEST_F(HandlerRunnerTest, HttpWithoutPodIPFails) {
  HandlerRunner runner(rt_, {});  // the fake sandbox reports no IP
  api::LifecycleHandler h;
  h.http_get = api::HTTPGetAction{"/x", api::IntOrString::FromInt(80), "", "", {}};
  absl::Status s = runner.Run(id_, MakePod(), container_, h, absl::Seconds(1));
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace kubelet::lifecycle
