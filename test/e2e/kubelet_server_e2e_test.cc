// The kubelet API on its secure port, through the real binary on the real containerd: HTTPS with
// the self-signed certificate generated in --cert-dir (and reused on restart), /pods with status,
// /runningpods/, /configz, /metrics in the Prometheus text format, anonymous auth on and off,
// 404 and 405. HTTPS requests go through curl (-k: the certificate is self-signed).
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "test/e2e/kubelet_process.h"

namespace kubelet::e2e {
namespace {

struct Response {
  int status = 0;
  std::string body;
};

// curl -k; the status code is appended on a line of its own.
Response Https(int port, const std::string& path, const std::string& method = "GET") {
  std::string cmd = absl::StrCat("curl -sk --max-time 30 -X ", method, " -w '\\n%{http_code}' ",
                                 "'https://127.0.0.1:", port, path, "' 2>/dev/null");
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; p && (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  if (p) ::pclose(p);
  Response r;
  size_t nl = out.rfind('\n');
  if (nl == std::string::npos) return r;
  r.status = std::atoi(out.c_str() + nl + 1);
  r.body = out.substr(0, nl);
  return r;
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool WaitUntil(const std::function<bool()>& cond, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (cond()) return true;
    absl::SleepFor(absl::Milliseconds(250));
  }
  return cond();
}

class KubeletServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* endpoint = std::getenv("KUBELET_E2E_CONTAINERD_ENDPOINT");
    if (endpoint == nullptr || *endpoint == '\0') GTEST_SKIP() << "no e2e containerd";
    endpoint_ = endpoint;
    const char* busybox = std::getenv("KUBELET_E2E_BUSYBOX_IMAGE");
    busybox_ = busybox && *busybox ? busybox : "docker.io/library/busybox:1.36";
    dir_ = MakeTempDir("kubelet-server-");
    manifests_ = dir_ + "/manifests";
    std::filesystem::create_directories(manifests_);
    node_ = "e2e-server-" + std::to_string(::getpid());
    port_ = FreePort();
    healthz_port_ = FreePort();
  }

  void TearDown() override {
    if (kubelet_ == nullptr) return;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(manifests_, ec)) {
      std::filesystem::remove(e.path(), ec);
    }
    // Let the kubelet stop the pod before it exits (a hang detector bound, not a timing).
    if (anonymous_) {
      WaitUntil([&] { return Https(port_, "/runningpods/").body.find(pod_) == std::string::npos; },
                absl::Seconds(60));
    } else {
      absl::SleepFor(absl::Seconds(10));
    }
    kubelet_->Signal(SIGTERM);
    kubelet_->Wait(absl::Seconds(30));
  }

  void WriteConfig(bool anonymous) {
    anonymous_ = anonymous;
    WriteFile(dir_ + "/kubelet.yaml",
              absl::StrCat("apiVersion: kubelet.config.k8s.io/v1beta1\n"
                           "kind: KubeletConfiguration\n"
                           "containerRuntimeEndpoint: ",
                           endpoint_, "\nstaticPodPath: ", manifests_,
                           "\nhealthzPort: ", healthz_port_, "\nport: ", port_,
                           "\naddress: 127.0.0.1\n"
                           "readOnlyPort: 0\n"
                           "failSwapOn: false\n"
                           "fileCheckFrequency: 20s\n"
                           "authentication:\n"
                           "  anonymous:\n    enabled: ",
                           anonymous ? "true" : "false",
                           "\n  webhook:\n    enabled: false\n"
                           "authorization:\n  mode: AlwaysAllow\n"));
  }

  void StartKubelet(bool anonymous) {
    WriteConfig(anonymous);
    auto p =
        KubeletProcess::Start(KubeletBinary(),
                              {"--config", dir_ + "/kubelet.yaml", "--hostname-override", node_,
                               "--root-dir", dir_ + "/root", "--cert-dir", dir_ + "/pki", "--v=2"},
                              {}, dir_ + "/kubelet.log");
    ASSERT_TRUE(p.ok()) << p.status();
    kubelet_ = std::move(*p);
    ASSERT_TRUE(kubelet_->WaitForLog("\"Starting to listen\"", absl::Seconds(60)))
        << kubelet_->Log();
    ASSERT_TRUE(WaitUntil([&] { return Https(port_, "/healthz").status != 0; }, absl::Seconds(30)))
        << kubelet_->Log();
  }

  void StopKubelet() {
    kubelet_->Signal(SIGTERM);
    ASSERT_TRUE(kubelet_->Wait(absl::Seconds(30)).has_value()) << kubelet_->Log();
    kubelet_.reset();
  }

  void WritePod() {
    pod_ = "web-" + node_;
    WriteFile(manifests_ + "/web.yaml",
              absl::StrCat("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n"
                           "  namespace: default\nspec:\n  containers:\n  - name: main\n"
                           "    image: ",
                           busybox_,
                           "\n    command: [\"sh\", \"-c\", \"trap 'exit 0' TERM; echo hello; "
                           "while true; do sleep 1; done\"]\n"));
  }

  std::string endpoint_, busybox_, dir_, manifests_, node_, pod_;
  int port_ = 0, healthz_port_ = 0;
  bool anonymous_ = true;
  std::unique_ptr<KubeletProcess> kubelet_;
};

TEST_F(KubeletServerTest, ServesTheApiOverTlsWithAGeneratedCertificate) {
  StartKubelet(/*anonymous=*/true);
  WritePod();
  std::string log = kubelet_->Log();
  EXPECT_NE(log.find("\"Starting to listen\" address=\"127.0.0.1\" port=" + std::to_string(port_)),
            std::string::npos)
      << log;

  // /pods: the static pod with its status once the container runs.
  Response pods;
  ASSERT_TRUE(WaitUntil(
      [&] {
        pods = Https(port_, "/pods");
        return pods.body.find("\"running\":{") != std::string::npos;
      },
      absl::Seconds(90)))
      << pods.status << " " << pods.body << "\n"
      << kubelet_->Log();
  EXPECT_EQ(pods.status, 200);
  EXPECT_EQ(
      pods.body.rfind("{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":[", 0),
      0u)
      << pods.body;
  EXPECT_NE(pods.body.find("\"name\":\"" + pod_ + "\""), std::string::npos);
  EXPECT_NE(pods.body.find("\"phase\":\"Running\""), std::string::npos) << pods.body;

  // /runningpods/: the runtime's view.
  Response running = Https(port_, "/runningpods/");
  EXPECT_EQ(running.status, 200);
  EXPECT_NE(running.body.find("\"name\":\"" + pod_ + "\""), std::string::npos) << running.body;
  EXPECT_NE(running.body.find("\"name\":\"main\""), std::string::npos) << running.body;

  // /configz.
  Response configz = Https(port_, "/configz");
  EXPECT_EQ(configz.status, 200);
  EXPECT_EQ(configz.body.rfind("{\"kubeletconfig\":{", 0), 0u) << configz.body;
  EXPECT_NE(configz.body.find("\"port\":" + std::to_string(port_)), std::string::npos);

  // /healthz on the secure port.
  EXPECT_EQ(Https(port_, "/healthz?verbose").body,
            "[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n");

  // /metrics: every sample line follows the text exposition grammar.
  Response metrics = Https(port_, "/metrics");
  EXPECT_EQ(metrics.status, 200);
  const std::regex sample(
      R"(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? )"
      R"(([-+]?[0-9.eE+-]+|NaN|[-+]Inf)( -?[0-9]+)?$)");
  const std::regex comment(R"(^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]*( .*)?$)");
  std::set<std::string> names;
  for (absl::string_view line : absl::StrSplit(metrics.body, '\n')) {
    std::string l(line);
    if (l.empty()) continue;
    if (l[0] == '#') {
      EXPECT_TRUE(std::regex_match(l, comment)) << l;
      continue;
    }
    EXPECT_TRUE(std::regex_match(l, sample)) << l;
    names.insert(l.substr(0, l.find_first_of("{ ")));
  }
  for (const char* want : {"kubelet_running_pods", "kubelet_running_containers",
                           "kubelet_node_name", "process_start_time_seconds"}) {
    EXPECT_TRUE(names.count(want)) << want;
  }
  EXPECT_EQ(Https(port_, "/metrics/probes").status, 200);
  EXPECT_EQ(Https(port_, "/metrics/resource").status, 200);

  // 404 / 405.
  EXPECT_EQ(Https(port_, "/no-such-endpoint").status, 404);
  Response post = Https(port_, "/pods", "POST");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.body, "405: Method Not Allowed");

  // The generated certificate: leaf + CA in kubelet.crt, kept across a restart.
  std::string crt = ReadAll(dir_ + "/pki/kubelet.crt");
  std::string key = ReadAll(dir_ + "/pki/kubelet.key");
  size_t certs = 0;
  for (size_t p = 0; (p = crt.find("BEGIN CERTIFICATE", p)) != std::string::npos; ++p) ++certs;
  EXPECT_EQ(certs, 2u);
  ASSERT_FALSE(key.empty());
  StopKubelet();
  StartKubelet(/*anonymous=*/true);
  EXPECT_EQ(ReadAll(dir_ + "/pki/kubelet.crt"), crt);
  EXPECT_EQ(ReadAll(dir_ + "/pki/kubelet.key"), key);
  EXPECT_EQ(Https(port_, "/pods").status, 200);
}

TEST_F(KubeletServerTest, AnonymousDisabledRefusesUnauthenticatedRequests) {
  StartKubelet(/*anonymous=*/false);
  Response r = Https(port_, "/pods");
  EXPECT_EQ(r.status, 401) << kubelet_->Log();
  EXPECT_EQ(r.body, "Unauthorized");
  EXPECT_EQ(Https(port_, "/metrics").status, 401);
  EXPECT_EQ(Https(port_, "/healthz").status, 401);
}

TEST_F(KubeletServerTest, WebhookAuthWithoutKubeconfigRefusesToStart) {
  WriteFile(dir_ + "/kubelet.yaml", absl::StrCat("apiVersion: kubelet.config.k8s.io/v1beta1\n"
                                                 "kind: KubeletConfiguration\n"
                                                 "containerRuntimeEndpoint: ",
                                                 endpoint_, "\nhealthzPort: ", healthz_port_,
                                                 "\nport: ", port_, "\nfailSwapOn: false\n"));
  auto p = KubeletProcess::Start(KubeletBinary(),
                                 {"--config", dir_ + "/kubelet.yaml", "--hostname-override", node_,
                                  "--root-dir", dir_ + "/root", "--cert-dir", dir_ + "/pki"},
                                 {}, dir_ + "/kubelet.log");
  ASSERT_TRUE(p.ok());
  std::optional<int> code = (*p)->Wait(absl::Seconds(60));
  ASSERT_TRUE(code.has_value()) << (*p)->Log();
  EXPECT_NE(*code, 0);
  EXPECT_NE((*p)->Log().find("no client provided, cannot use webhook authentication"),
            std::string::npos)
      << (*p)->Log();
}

}  // namespace
}  // namespace kubelet::e2e
