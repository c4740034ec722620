// End-to-end: probes and lifecycle hooks through the kubelet binary on the harness's real
// containerd. Static pods carry the probes; effects are observed through CRI (restarts by the
// container's attempt number, files inside containers through ExecSync, container log files)
// and through the kubelet's log.
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cri/remote/remote_runtime.h"
#include "gtest/gtest.h"
#include "test/e2e/kubelet_process.h"

namespace kubelet::e2e {
namespace {

using runtime::v1::Container;
using runtime::v1::PodSandbox;

template <typename Pred>
bool WaitUntil(Pred pred, absl::Duration timeout, absl::Duration poll = absl::Milliseconds(100)) {
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (pred()) return true;
    absl::SleepFor(poll);
  }
  return pred();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ProbesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* endpoint = std::getenv("KUBELET_E2E_CONTAINERD_ENDPOINT");
    if (endpoint == nullptr || *endpoint == '\0') GTEST_SKIP() << "no e2e containerd";
    endpoint_ = endpoint;
    dir_ = MakeTempDir("kubelet-probes-");
    manifests_ = dir_ + "/manifests";
    std::filesystem::create_directories(manifests_);
    healthz_port_ = FreePort();
    node_ = absl::StrCat("e2e-", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    for (char& c : node_) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto rt = cri::NewRemoteRuntimeService(endpoint_, absl::Seconds(30));
    ASSERT_TRUE(rt.ok()) << rt.status();
    cri_ = std::move(*rt);
    config_path_ = dir_ + "/kubelet.yaml";
    WriteFile(config_path_,
              "apiVersion: kubelet.config.k8s.io/v1beta1\n"
              "kind: KubeletConfiguration\n"
              "containerRuntimeEndpoint: " +
                  endpoint_ + "\nstaticPodPath: " + manifests_ +
                  "\nhealthzPort: " + std::to_string(healthz_port_) +
                  "\nfailSwapOn: false\nfileCheckFrequency: 1s\n"
                  // Standalone: no API server to authenticate against; a port of our own so
                  // parallel kubelets do not collide.
                  "authentication:\n  webhook:\n    enabled: false\n"
                  "  anonymous:\n    enabled: true\n"
                  "authorization:\n  mode: AlwaysAllow\n"
                  "readOnlyPort: 0\nport: " +
                  std::to_string(FreePort()) + "\n");
  }

  void TearDown() override {
    if (cri_ == nullptr) return;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(manifests_, ec)) {
      std::filesystem::remove(e.path(), ec);
    }
    if (kubelet_) {
      WaitUntil([&] { return ReadySandboxes().empty(); }, absl::Seconds(60));
      kubelet_->Signal(SIGTERM);
      kubelet_->Wait(absl::Seconds(30));
    }
    for (const PodSandbox& s : Sandboxes()) {
      (void)cri_->StopPodSandbox(s.id());
      (void)cri_->RemovePodSandbox(s.id());
    }
  }

  void StartKubelet() {
    std::vector<std::string> args = {"--config", config_path_, "--hostname-override",
                                     node_,      "--root-dir", dir_ + "/root",
                                     "--v=2"};
    auto p = KubeletProcess::Start(KubeletBinary(), args, {}, dir_ + "/kubelet.log");
    ASSERT_TRUE(p.ok()) << p.status();
    kubelet_ = std::move(*p);
    ASSERT_TRUE(kubelet_->WaitForLog("\"Started healthz server\"", absl::Seconds(60)))
        << kubelet_->Log();
  }

  std::string PodName(const std::string& base) const { return base + "-" + node_; }

  void WriteManifest(const std::string& file, const std::string& yaml) {
    std::string tmp = dir_ + "/." + file + ".tmp";
    WriteFile(tmp, yaml);
    std::filesystem::rename(tmp, manifests_ + "/" + file);
  }

  std::vector<PodSandbox> Sandboxes() {
    std::vector<PodSandbox> out;
    auto list = cri_->ListPodSandbox(nullptr);
    if (!list.ok()) return out;
    for (const auto& s : *list) {
      const std::string& name = s.metadata().name();
      if (name.size() > node_.size() &&
          name.compare(name.size() - node_.size(), node_.size(), node_) == 0) {
        out.push_back(s);
      }
    }
    return out;
  }
  std::vector<PodSandbox> ReadySandboxes() {
    std::vector<PodSandbox> out;
    for (const auto& s : Sandboxes()) {
      if (s.state() == runtime::v1::SANDBOX_READY) out.push_back(s);
    }
    return out;
  }
  std::vector<Container> Containers(const std::string& base) {
    std::vector<Container> out;
    runtime::v1::ContainerFilter filter;
    (*filter.mutable_label_selector())["io.kubernetes.pod.name"] = PodName(base);
    auto list = cri_->ListContainers(&filter);
    if (!list.ok()) return out;
    for (const auto& c : *list) {
      if (c.metadata().name() == "main") out.push_back(c);
    }
    return out;
  }
  // The running "main" container of pod `base`, if any.
  std::optional<Container> RunningMain(const std::string& base) {
    for (const auto& c : Containers(base)) {
      if (c.state() == runtime::v1::CONTAINER_RUNNING) return c;
    }
    return std::nullopt;
  }
  uint32_t MaxAttempt(const std::string& base) {
    uint32_t n = 0;
    for (const auto& c : Containers(base)) n = std::max(n, c.metadata().attempt());
    return n;
  }
  // Runs `cmd` in container `id`; nullopt when the exec failed or exited non-zero.
  std::optional<std::string> Exec(const std::string& id, const std::vector<std::string>& cmd) {
    auto r = cri_->ExecSync(id, cmd, absl::Seconds(10));
    if (!r.ok() || r->exit_code() != 0) return std::nullopt;
    return r->stdout();
  }

  // A pod with one busybox container "main" running `body`; `container_extra` is YAML
  // indented for the container (probes, lifecycle).
  std::string Pod(const std::string& base, const std::string& body,
                  const std::string& container_extra) {
    return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + base +
           "\nspec:\n"
           "  terminationGracePeriodSeconds: 5\n"
           "  containers:\n"
           "  - name: main\n"
           "    image: docker.io/library/busybox:1.36\n"
           "    command: [\"sh\", \"-c\", " +
           body + "]\n" + container_extra;
  }
  static constexpr const char* kSleepForever =
      "\"trap 'exit 0' TERM; while true; do sleep 1; done\"";

  std::string endpoint_, dir_, manifests_, node_, config_path_;
  int healthz_port_ = 0;
  std::unique_ptr<cri::RuntimeService> cri_;
  std::unique_ptr<KubeletProcess> kubelet_;
};

TEST_F(ProbesTest, FailingLivenessProbeRestartsContainer) {
  ASSERT_NO_FATAL_FAILURE(StartKubelet());
  WriteManifest("live.yaml", Pod("live", kSleepForever,
                                 "    livenessProbe:\n"
                                 "      exec:\n"
                                 "        command: [\"sh\", \"-c\", \"echo not-alive; exit 3\"]\n"
                                 "      periodSeconds: 1\n"
                                 "      failureThreshold: 2\n"));
  ASSERT_TRUE(WaitUntil([&] { return MaxAttempt("live") >= 1; }, absl::Seconds(90)))
      << kubelet_->Log();
  const std::string log = kubelet_->Log();
  EXPECT_TRUE(absl::StrContains(
      log, "\"Probe failed\" probeType=\"Liveness\" pod=\"default/" + PodName("live") + "\""))
      << log;
  EXPECT_TRUE(absl::StrContains(log,
                                "containerName=\"main\" probeResult=\"failure\" "
                                "output=\"not-alive\\n\""))
      << log;
  // The first container was stopped by the kubelet (it traps TERM and exits 0).
  for (const auto& c : Containers("live")) {
    if (c.metadata().attempt() != 0) continue;
    auto st = cri_->ContainerStatus(c.id(), false);
    ASSERT_TRUE(st.ok()) << st.status();
    EXPECT_EQ(st->status().state(), runtime::v1::CONTAINER_EXITED);
  }
}

TEST_F(ProbesTest, HttpLivenessProbeOnPodIPRestartsContainer) {
  ASSERT_NO_FATAL_FAILURE(StartKubelet());
  // httpd serves no /healthz: the probe against the pod IP on the CNI network (named port)
  // fails with 404 and the container is restarted.
  WriteManifest("web.yaml", Pod("web",
                                "\"mkdir -p /www && "
                                "trap 'exit 0' TERM; httpd -f -p 8080 -h /www & wait\"",
                                "    ports:\n"
                                "    - name: http\n"
                                "      containerPort: 8080\n"
                                "    livenessProbe:\n"
                                "      httpGet:\n"
                                "        path: /healthz\n"
                                "        port: http\n"
                                "      initialDelaySeconds: 2\n"
                                "      periodSeconds: 1\n"
                                "      failureThreshold: 2\n"));
  ASSERT_TRUE(WaitUntil([&] { return MaxAttempt("web") >= 1; }, absl::Seconds(90)))
      << kubelet_->Log();
  // Early probes may find httpd not listening yet; once it is, the probe sees the 404.
  EXPECT_TRUE(
      kubelet_->WaitForLog("output=\"HTTP probe failed with statuscode: 404\"", absl::Seconds(60)))
      << kubelet_->Log();
  EXPECT_TRUE(
      absl::StrContains(kubelet_->Log(), "probeType=\"Liveness\" pod=\"default/" + PodName("web")));
}

TEST_F(ProbesTest, StartupProbeGatesLivenessAndKillsOnFailure) {
  ASSERT_NO_FATAL_FAILURE(StartKubelet());
  WriteManifest("startup.yaml",
                Pod("startup", kSleepForever,
                    "    startupProbe:\n"
                    "      exec:\n"
                    "        command: [\"sh\", \"-c\", \"echo s >> /tmp/startup-ran; exit 1\"]\n"
                    "      periodSeconds: 1\n"
                    "      failureThreshold: 4\n"
                    "    livenessProbe:\n"
                    "      exec:\n"
                    "        command: [\"sh\", \"-c\", \"echo l >> /tmp/liveness-ran\"]\n"
                    "      periodSeconds: 1\n"));
  // While a container runs, its startup probe runs and its liveness probe never does.
  bool saw_startup = false;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto c = RunningMain("startup");
        if (!c) return false;
        if (!Exec(c->id(), {"cat", "/tmp/startup-ran"})) return false;
        saw_startup = true;
        EXPECT_FALSE(Exec(c->id(), {"cat", "/tmp/liveness-ran"}).has_value())
            << "liveness ran before startup succeeded";
        return true;
      },
      absl::Seconds(60)))
      << kubelet_->Log();
  EXPECT_TRUE(saw_startup);
  // The startup probe never succeeds: the container is killed and restarted.
  ASSERT_TRUE(WaitUntil([&] { return MaxAttempt("startup") >= 1; }, absl::Seconds(90)))
      << kubelet_->Log();
  const std::string log = kubelet_->Log();
  EXPECT_TRUE(absl::StrContains(log, "\"Probe failed\" probeType=\"Startup\"")) << log;
  EXPECT_FALSE(absl::StrContains(log, "probeType=\"Liveness\"")) << log;
}

TEST_F(ProbesTest, PostStartHookOutputIsVisibleToContainer) {
  ASSERT_NO_FATAL_FAILURE(StartKubelet());
  WriteManifest("post.yaml",
                Pod("post",
                    "\"trap 'exit 0' TERM; while [ ! -f /tmp/poststart ]; do sleep 0.1; done; "
                    "cp /tmp/poststart /tmp/main-saw; while true; do sleep 1; done\"",
                    "    lifecycle:\n"
                    "      postStart:\n"
                    "        exec:\n"
                    "          command: [\"sh\", \"-c\", \"echo from-hook > /tmp/poststart\"]\n"));
  std::optional<std::string> seen;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto c = RunningMain("post");
        if (!c) return false;
        seen = Exec(c->id(), {"cat", "/tmp/main-saw"});
        return seen.has_value();
      },
      absl::Seconds(60)))
      << kubelet_->Log();
  EXPECT_EQ(*seen, "from-hook\n");
  EXPECT_EQ(MaxAttempt("post"), 0u);  // the hook succeeded: no restart
}

TEST_F(ProbesTest, PreStopHookRunsBeforeTermOnDeletion) {
  ASSERT_NO_FATAL_FAILURE(StartKubelet());
  WriteManifest(
      "pre.yaml",
      Pod("pre",
          "\"trap 'echo got-term; exit 0' TERM; echo started; while true; do sleep 1; done\"",
          "    lifecycle:\n"
          "      preStop:\n"
          "        exec:\n"
          "          command: [\"sh\", \"-c\", \"echo prestop-ran > /proc/1/fd/1; sleep 1\"]\n"));
  std::optional<Container> c;
  ASSERT_TRUE(WaitUntil(
      [&] {
        c = RunningMain("pre");
        return c.has_value();
      },
      absl::Seconds(60)))
      << kubelet_->Log();
  auto st = cri_->ContainerStatus(c->id(), false);
  ASSERT_TRUE(st.ok()) << st.status();
  const std::string log_path = st->status().log_path();
  ASSERT_FALSE(log_path.empty());
  ASSERT_TRUE(
      WaitUntil([&] { return absl::StrContains(ReadAll(log_path), "started"); }, absl::Seconds(30)))
      << log_path << ": " << ReadAll(log_path);

  std::filesystem::remove(manifests_ + "/pre.yaml");
  // Keep the last content seen: the log file goes away with the pod.
  std::string content;
  ASSERT_TRUE(WaitUntil(
      [&] {
        std::string now = ReadAll(log_path);
        if (!now.empty()) content = now;
        return absl::StrContains(content, "got-term");
      },
      absl::Seconds(60), absl::Milliseconds(50)))
      << content << "\n"
      << kubelet_->Log();
  const size_t pre = content.find("prestop-ran");
  ASSERT_NE(pre, std::string::npos) << content;
  EXPECT_LT(pre, content.find("got-term")) << content;
  // The container stopped on its own TERM trap (exit 0), within the grace period.
  absl::StatusOr<runtime::v1::ContainerStatusResponse> after;
  ASSERT_TRUE(WaitUntil(
      [&] {
        after = cri_->ContainerStatus(c->id(), false);
        return !after.ok() || after->status().state() != runtime::v1::CONTAINER_RUNNING;
      },
      absl::Seconds(30)));
  if (after.ok()) {
    EXPECT_EQ(after->status().state(), runtime::v1::CONTAINER_EXITED);
    EXPECT_EQ(after->status().exit_code(), 0);
  }
}

}  // namespace
}  // namespace kubelet::e2e
