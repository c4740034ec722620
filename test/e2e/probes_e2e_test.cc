// End-to-end: probes and lifecycle hooks through the kubelet binary on the harness's real
// containerd. Static pods carry the probes; effects are observed through CRI (restarts by the
// container's attempt number, files inside containers through ExecSync, container log files)
// and through the kubelet's log.
#include <algorithm>
#include <filesystem>
#include <optional>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "test/e2e/static_pod_fixture.h"

namespace kubelet::e2e {
namespace {

class ProbesTest : public StaticPodTest {
 protected:
  // Manifest changes reach the kubelet within a second even without inotify.
  ProbesTest() { file_check_frequency_ = "1s"; }

  // The running "main" container of pod `base`, if any.
  std::optional<Container> RunningMain(const std::string& base) {
    auto running = Running(base, "main");
    if (running.empty()) return std::nullopt;
    return running.front();
  }
  uint32_t MaxAttempt(const std::string& base) {
    uint32_t n = 0;
    for (const auto& c : Containers(base, "main")) n = std::max(n, c.metadata().attempt());
    return n;
  }

  // A pod with one busybox container "main" running `body`; `container_extra` is YAML
  // indented for the container (probes, lifecycle).
  static std::string Pod(const std::string& base, const std::string& body,
                         const std::string& container_extra) {
    return BusyboxPod(base, body, PodParts{.container = container_extra});
  }
};

TEST_F(ProbesTest, FailingLivenessProbeRestartsContainer) {
  verbosity_ = 3;  // events are logged at --v=3, as upstream
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
  // The kill, at the default level, and the events `kubectl describe` would show.
  EXPECT_TRUE(absl::StrContains(log, "\"Container main failed liveness probe, will be restarted\""))
      << log;
  const std::string object =
      "object=\"default/" + PodName("live") +
      "\" fieldPath=\"spec.containers{main}\" kind=\"Pod\" apiVersion=\"v1\" ";
  EXPECT_TRUE(absl::StrContains(log, "\"Event occurred\" " + object +
                                         "type=\"Warning\" reason=\"Unhealthy\" "
                                         "message=\"Liveness probe failed: not-alive\\n\""))
      << log;
  EXPECT_TRUE(absl::StrContains(log, "\"Event occurred\" " + object +
                                         "type=\"Normal\" reason=\"Killing\" "
                                         "message=\"Container main failed liveness probe, will be "
                                         "restarted\""))
      << log;
  EXPECT_TRUE(absl::StrContains(log, "\"Event occurred\" " + object +
                                         "type=\"Normal\" reason=\"Started\" "
                                         "message=\"Started container main\""))
      << log;
  // The first container was stopped by the kubelet (it traps TERM and exits 0).
  for (const auto& c : Containers("live", "main")) {
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
  verbosity_ = 3;  // a liveness probe that ran would be logged ("Probe succeeded", V(3))
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
  // The liveness probe never ran in any container (the startup probe never passed).
  EXPECT_FALSE(absl::StrContains(log, "probeType=\"Liveness\"")) << log;
  EXPECT_TRUE(absl::StrContains(log,
                                "message=\"Container main failed startup probe, will be "
                                "restarted\""))
      << log;
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
  ASSERT_TRUE(WaitUntil([&] { return absl::StrContains(ReadFile(log_path), "started"); },
                        absl::Seconds(30)))
      << log_path << ": " << ReadFile(log_path);

  std::filesystem::remove(manifests_ + "/pre.yaml");
  // Keep the last content seen: the log file goes away with the pod.
  std::string content;
  ASSERT_TRUE(WaitUntil(
      [&] {
        std::string now = ReadFile(log_path);
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

namespace kubelet::e2e {
namespace {

// A postStart hook that never returns keeps the container's sync busy; deleting the pod cancels
// that sync (as upstream cancels its context) and the pod stops within its grace period instead
// of waiting for the hook forever.
TEST_F(ProbesTest, HungPostStartHookDoesNotBlockDeletion) {
  ASSERT_NO_FATAL_FAILURE(StartKubelet());
  WriteManifest("hang.yaml", Pod("hang", kSleepForever,
                                 "    lifecycle:\n"
                                 "      postStart:\n"
                                 "        exec:\n"
                                 "          command: [\"sh\", \"-c\", \"touch /tmp/hook-started; "
                                 "sleep 100000\"]\n"));
  // The hook is running inside the container.
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto c = RunningMain("hang");
        return c && Exec(c->id(), {"cat", "/tmp/hook-started"}).has_value();
      },
      absl::Seconds(60)))
      << kubelet_->Log();
  std::filesystem::remove(manifests_ + "/hang.yaml");
  // Without the cancellation the hook would hold the pod's worker for 100000 s.
  ASSERT_TRUE(WaitUntil([&] { return ReadySandboxes("hang").empty() && Running("hang").empty(); },
                        absl::Seconds(90)))
      << kubelet_->Log();
  EXPECT_TRUE(absl::StrContains(kubelet_->Log(), "\"Sync exited with context cancellation error\""))
      << kubelet_->Log();
}

}  // namespace
}  // namespace kubelet::e2e
