// End-to-end: the kubelet binary's start-up sequence against the harness's real runtime
// (containerd, or CRI-O in the _crio variant).
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "test/e2e/e2e_env.h"
#include "test/e2e/kubelet_process.h"

namespace kubelet::e2e {
namespace {

class KubeletStartupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* endpoint = std::getenv("KUBELET_E2E_RUNTIME_ENDPOINT");
    if (endpoint == nullptr || *endpoint == '\0') {
      GTEST_SKIP() << kRuntimeSkipMarker << RuntimeUnavailableReason();
    }
    endpoint_ = endpoint;
    dir_ = MakeTempDir("kubelet-startup-");
    healthz_port_ = FreePort();
  }

  std::string WriteConfig(const std::string& extra = "") {
    std::string path = dir_ + "/kubelet.yaml";
    WriteFile(path,
              "apiVersion: kubelet.config.k8s.io/v1beta1\n"
              "kind: KubeletConfiguration\n"
              "containerRuntimeEndpoint: " +
                  endpoint_ +
                  "\n"
                  "healthzPort: " +
                  std::to_string(healthz_port_) +
                  "\n"
                  "failSwapOn: false\n" +
                  StandaloneServingConfig() + extra);
    return path;
  }

  std::unique_ptr<KubeletProcess> StartKubelet(std::vector<std::string> args,
                                               std::map<std::string, std::string> env = {}) {
    // Keep the kubelet's files (pod dirs, generated serving certificate) in the test's dir.
    args.insert(args.end(), {"--root-dir", dir_ + "/root", "--cert-dir", dir_ + "/pki"});
    auto p = KubeletProcess::Start(KubeletBinary(), args, env, dir_ + "/kubelet.log");
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? std::move(*p) : nullptr;
  }

  std::string endpoint_;
  std::string dir_;
  int healthz_port_ = 0;
};

TEST_F(KubeletStartupTest, ServesHealthzNotifiesSystemdAndStopsOnSigterm) {
  // A datagram socket standing in for systemd's notify socket.
  std::string notify_path = dir_ + "/notify.sock";
  int notify_fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", notify_path.c_str());
  ASSERT_EQ(::bind(notify_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  timeval tv{60, 0};
  ::setsockopt(notify_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));

  auto k = StartKubelet({"--config", WriteConfig(), "--hostname-override", "Node-A.Example",
                         "--container-runtime=remote"},
                        {{"NOTIFY_SOCKET", notify_path}});
  ASSERT_NE(k, nullptr);
  char buf[256] = {0};
  ssize_t n = ::recv(notify_fd, buf, sizeof(buf) - 1, 0);
  ::close(notify_fd);
  ASSERT_GT(n, 0) << k->Log();
  EXPECT_STREQ(buf, "READY=1");

  HttpResult h = HttpGet(healthz_port_, "/healthz");
  EXPECT_EQ(h.status, 200) << k->Log();
  EXPECT_EQ(h.body, "ok");
  EXPECT_EQ(HttpGet(healthz_port_, "/healthz/ping").body, "ok");
  EXPECT_EQ(HttpGet(healthz_port_, "/healthz?verbose").body,
            "[+]ping ok\n[+]syncloop ok\n[+]pleg ok\nhealthz check passed\n");

  std::string log = k->Log();
  EXPECT_NE(log.find("\"Standalone mode, no API client\""), std::string::npos) << log;
  EXPECT_NE(log.find("node=\"node-a.example\""), std::string::npos) << log;
  EXPECT_NE(
      log.find("\"Container runtime initialized\" containerRuntime=\"" + CriRuntimeName() + "\""),
      std::string::npos)
      << log;
  if (RuntimeName() == "crio") {
    EXPECT_NE(log.find("containerRuntime=\"cri-o\" version=\"1.28.11\" apiVersion=\"v1\""),
              std::string::npos)
        << log;
  }
  EXPECT_NE(log.find("Flag --container-runtime has been deprecated"), std::string::npos) << log;

  k->Signal(SIGTERM);
  // A hang detector, not a timing assertion: shutdown normally takes milliseconds.
  std::optional<int> code = k->Wait(absl::Seconds(30));
  ASSERT_TRUE(code.has_value()) << "kubelet did not exit on SIGTERM\n" << k->Log();
  EXPECT_EQ(*code, 0) << k->Log();
  EXPECT_NE(k->Log().find("\"Kubelet stopped\""), std::string::npos);
  EXPECT_EQ(HttpGet(healthz_port_, "/healthz").status, 0);  // no longer listening
}

// An endpoint without a scheme (OpenShift's units still say
// --container-runtime-endpoint=/var/run/crio/crio.sock) is taken as a unix socket, with
// upstream's deprecation notice naming the URL it became.
TEST_F(KubeletStartupTest, EndpointWithoutSchemeIsAUnixSocketWithDeprecationNotice) {
  std::string path = endpoint_.substr(std::string("unix://").size());
  ASSERT_EQ(endpoint_, "unix://" + path);
  auto k = StartKubelet({"--config", WriteConfig(), "--container-runtime-endpoint", path});
  ASSERT_NE(k, nullptr);
  ASSERT_TRUE(k->WaitForLog("\"Started healthz server\"", absl::Seconds(60))) << k->Log();
  std::string log = k->Log();
  EXPECT_NE(log.find("\"Using this endpoint is deprecated, please consider using full URL "
                     "format\" endpoint=\"" +
                     path + "\" URL=\"" + endpoint_ + "\""),
            std::string::npos)
      << log;
  EXPECT_NE(
      log.find("\"Container runtime initialized\" containerRuntime=\"" + CriRuntimeName() + "\""),
      std::string::npos)
      << log;
  k->Signal(SIGTERM);
  ASSERT_TRUE(k->Wait(absl::Seconds(30)).has_value()) << k->Log();
}

// OpenShift's unit runs `hyperkube kubelet ...`: the binary under that name is the kubelet.
TEST_F(KubeletStartupTest, RunsAsHyperkubeKubelet) {
  const std::string hyperkube = dir_ + "/hyperkube";
  std::filesystem::create_symlink(KubeletBinary(), hyperkube);
  auto k =
      KubeletProcess::Start(hyperkube,
                            {"kubelet", "--config", WriteConfig(), "--root-dir", dir_ + "/root",
                             "--cert-dir", dir_ + "/pki", "--container-runtime=remote"},
                            {}, dir_ + "/hyperkube.log");
  ASSERT_TRUE(k.ok()) << k.status();
  ASSERT_TRUE((*k)->WaitForLog("\"Started healthz server\"", absl::Seconds(60))) << (*k)->Log();
  (*k)->Signal(SIGTERM);
  ASSERT_TRUE((*k)->Wait(absl::Seconds(30)).has_value()) << (*k)->Log();
  // Any other command is refused.
  auto other = KubeletProcess::Start(hyperkube, {"kube-proxy"}, {}, dir_ + "/other.log");
  ASSERT_TRUE(other.ok());
  std::optional<int> code = (*other)->Wait(absl::Seconds(30));
  ASSERT_TRUE(code.has_value());
  EXPECT_NE(*code, 0);
  EXPECT_TRUE((*other)->Log().find("provides only the \"kubelet\" command") != std::string::npos)
      << (*other)->Log();
}

TEST_F(KubeletStartupTest, UnreachableRuntimeFailsNamingTheEndpoint) {
  std::string bogus = "unix://" + dir_ + "/no-such-runtime.sock";
  auto k = StartKubelet({"--config", WriteConfig(), "--container-runtime-endpoint", bogus,
                         "--runtime-request-timeout=1s"});
  ASSERT_NE(k, nullptr);
  std::optional<int> code = k->Wait(absl::Seconds(60));
  ASSERT_TRUE(code.has_value()) << k->Log();
  EXPECT_EQ(*code, 1);
  std::string log = k->Log();
  EXPECT_NE(log.find("\"command failed\""), std::string::npos) << log;
  EXPECT_NE(log.find(bogus), std::string::npos) << log;
}

TEST_F(KubeletStartupTest, ExitsOnLockContention) {
  std::string lock = dir_ + "/kubelet.lock";
  auto k =
      StartKubelet({"--config", WriteConfig(), "--lock-file", lock, "--exit-on-lock-contention"});
  ASSERT_NE(k, nullptr);
  ASSERT_TRUE(k->WaitForLog("\"Started healthz server\"", absl::Seconds(60))) << k->Log();
  // Another kubelet would open the lock file to take the lock.
  int fd = ::open(lock.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ::close(fd);
  std::optional<int> code = k->Wait(absl::Seconds(30));
  ASSERT_TRUE(code.has_value()) << k->Log();
  EXPECT_EQ(*code, 0);
  EXPECT_NE(k->Log().find("inotify event on the lock file"), std::string::npos) << k->Log();
}

TEST_F(KubeletStartupTest, BadConfigurationIsRefusedNamingFileAndField) {
  std::string path =
      WriteConfig("imageGCHighThresholdPercent: 50\nimageGCLowThresholdPercent: 80\n");
  auto k = StartKubelet({"--config", path});
  ASSERT_NE(k, nullptr);
  ASSERT_EQ(k->Wait(absl::Seconds(30)), std::optional<int>(1));
  EXPECT_NE(k->Log().find("imageGCHighThresholdPercent"), std::string::npos) << k->Log();
  EXPECT_NE(k->Log().find(path), std::string::npos) << k->Log();

  path = WriteConfig("syncFrequncy: 10s\n");
  k = StartKubelet({"--config", path});
  ASSERT_NE(k, nullptr);
  ASSERT_EQ(k->Wait(absl::Seconds(30)), std::optional<int>(1));
  EXPECT_NE(k->Log().find("syncFrequncy"), std::string::npos) << k->Log();
  EXPECT_NE(k->Log().find(path), std::string::npos) << k->Log();

  k = StartKubelet({"--config", path, "--not-a-flag"});
  ASSERT_NE(k, nullptr);
  ASSERT_EQ(k->Wait(absl::Seconds(30)), std::optional<int>(1));
  EXPECT_NE(k->Log().find("unknown flag: --not-a-flag"), std::string::npos) << k->Log();
}

}  // namespace
}  // namespace kubelet::e2e
