// End-to-end: static pods through the kubelet binary on the harness's real containerd.
// Observations go through CRI directly (the kubelet's /pods API arrives later), by the labels
// the kubelet puts on sandboxes and containers.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "cri/remote/remote_runtime.h"
#include "gtest/gtest.h"
#include "test/e2e/kubelet_process.h"
#include "test/e2e/static_pod_fixture.h"

namespace kubelet::e2e {
namespace {

class PodLifecycleTest : public StaticPodTest {};

TEST_F(PodLifecycleTest, HostNetworkPodServesTraffic) {
  StartKubelet();
  int port = FreePort();
  WriteManifest(
      "web.yaml",
      BusyboxPod("web",
                 "\"mkdir -p /www && echo hello-from-pod > /www/index.html && trap 'exit 0' "
                 "TERM; httpd -f -p " +
                     std::to_string(port) + " -h /www & wait\"",
                 "  hostNetwork: true\n"));
  ASSERT_TRUE(WaitUntil([&] { return !Running("web", "main").empty(); }, absl::Seconds(60)))
      << kubelet_->Log();
  HttpResult r;
  ASSERT_TRUE(WaitUntil(
      [&] {
        r = HttpGet(port, "/index.html");
        return r.status == 200;
      },
      absl::Seconds(30)));
  EXPECT_EQ(r.body, "hello-from-pod\n");
  std::string log = kubelet_->Log();
  EXPECT_NE(log.find("\"SyncLoop ADD\" source=\"file\" pods=[\"default/" + PodName("web") + "\"]"),
            std::string::npos)
      << log;
  // The sandbox carries the upstream labels, and the container its log path.
  auto sb = ReadySandboxes("web");
  ASSERT_EQ(sb.size(), 1u);
  EXPECT_EQ(sb[0].labels().at("io.kubernetes.pod.namespace"), "default");
  EXPECT_FALSE(sb[0].labels().at("io.kubernetes.pod.uid").empty());
  auto main = Running("web", "main");
  ASSERT_EQ(main.size(), 1u);
  auto st = Status(main[0].id());
  EXPECT_EQ(st.log_path(), "/var/log/pods/default_" + PodName("web") + "_" +
                               sb[0].labels().at("io.kubernetes.pod.uid") + "/main/0.log");
}

TEST_F(PodLifecycleTest, InitContainersRunInOrderBeforeAppContainers) {
  StartKubelet();
  WriteManifest("init.yaml",
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: init\nspec:\n"
                "  terminationGracePeriodSeconds: 5\n"
                "  initContainers:\n"
                "  - name: first\n    image: docker.io/library/busybox:1.36\n"
                "    command: [\"sh\", \"-c\", \"sleep 1\"]\n"
                "  - name: second\n    image: docker.io/library/busybox:1.36\n"
                "    command: [\"sh\", \"-c\", \"sleep 1\"]\n"
                "  containers:\n"
                "  - name: main\n    image: docker.io/library/busybox:1.36\n"
                "    command: [\"sh\", \"-c\", " +
                    std::string(kSleepForever) + "]\n");
  ASSERT_TRUE(WaitUntil([&] { return !Running("init", "main").empty(); }, absl::Seconds(90)))
      << kubelet_->Log();
  auto first = Containers("init", "first");
  auto second = Containers("init", "second");
  auto main = Containers("init", "main");
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  ASSERT_EQ(main.size(), 1u);
  auto s1 = Status(first[0].id()), s2 = Status(second[0].id()), s3 = Status(main[0].id());
  EXPECT_EQ(s1.state(), runtime::v1::CONTAINER_EXITED);
  EXPECT_EQ(s1.exit_code(), 0);
  EXPECT_EQ(s2.exit_code(), 0);
  // Ordering (not timing): each container started after the previous one finished.
  EXPECT_LE(s1.finished_at(), s2.started_at());
  EXPECT_LE(s2.finished_at(), s3.started_at());
}

TEST_F(PodLifecycleTest, CrashLoopRestartsWithBackOff) {
  StartKubelet();
  WriteManifest("crash.yaml", BusyboxPod("crash", "\"echo boom; exit 3\""));
  // Three attempts: the first run, then restarts after 10 s and 20 s of back-off.
  ASSERT_TRUE(WaitUntil([&] { return Containers("crash", "main").size() >= 2; }, absl::Seconds(90)))
      << kubelet_->Log();
  ASSERT_TRUE(
      kubelet_->WaitForLog("back-off 10s restarting failed container=main", absl::Seconds(60)))
      << kubelet_->Log();
  ASSERT_TRUE(
      kubelet_->WaitForLog("back-off 20s restarting failed container=main", absl::Seconds(90)))
      << kubelet_->Log();
  // The restart count annotation follows the attempts; dead instances are garbage-collected
  // down to the newest per container.
  std::set<uint32_t> attempts;
  for (const auto& c : Containers("crash", "main")) attempts.insert(c.metadata().attempt());
  EXPECT_GE(*attempts.rbegin(), 1u);
  EXPECT_NE(kubelet_->Log().find("CrashLoopBackOff"), std::string::npos);
}

TEST_F(PodLifecycleTest, RestartPolicies) {
  StartKubelet();
  WriteManifest("never.yaml", BusyboxPod("never", "\"exit 1\"", "  restartPolicy: Never\n"));
  WriteManifest("onfail-ok.yaml",
                BusyboxPod("onfail-ok", "\"exit 0\"", "  restartPolicy: OnFailure\n"));
  WriteManifest("onfail-bad.yaml",
                BusyboxPod("onfail-bad", "\"sleep 1; exit 1\"", "  restartPolicy: OnFailure\n"));
  // OnFailure + failure restarts; that takes the first back-off (10 s): meanwhile the other two
  // have long finished.
  ASSERT_TRUE(
      WaitUntil([&] { return Containers("onfail-bad", "main").size() >= 2; }, absl::Seconds(90)))
      << kubelet_->Log();
  EXPECT_EQ(Containers("never", "main").size(), 1u);
  EXPECT_EQ(Containers("onfail-ok", "main").size(), 1u);
  // Terminal pods are torn down: their sandboxes stop.
  EXPECT_TRUE(WaitUntil([&] { return ReadySandboxes("never").empty(); }, absl::Seconds(30)));
  EXPECT_TRUE(WaitUntil([&] { return ReadySandboxes("onfail-ok").empty(); }, absl::Seconds(30)));
  EXPECT_EQ(ReadySandboxes("onfail-bad").size(), 1u);
}

TEST_F(PodLifecycleTest, RemovedManifestStopsPodAndChangedManifestReplacesIt) {
  StartKubelet();
  WriteManifest("a.yaml", BusyboxPod("a", kSleepForever));
  WriteManifest("b.yaml", BusyboxPod("b", kSleepForever));
  ASSERT_TRUE(
      WaitUntil([&] { return !Running("a").empty() && !Running("b").empty(); }, absl::Seconds(60)))
      << kubelet_->Log();
  std::string old_b_uid = ReadySandboxes("b")[0].metadata().uid();

  std::filesystem::remove(manifests_ + "/a.yaml");
  // The container traps TERM, so it stops well within its 5 s grace period; the bound here is
  // only a hang detector.
  ASSERT_TRUE(WaitUntil([&] { return Running("a").empty() && ReadySandboxes("a").empty(); },
                        absl::Seconds(30)))
      << kubelet_->Log();
  auto a = Containers("a", "main");
  for (const auto& c : a) EXPECT_EQ(Status(c.id()).exit_code(), 0);  // exited via TERM
  EXPECT_NE(kubelet_->Log().find("\"SyncLoop REMOVE\" source=\"file\""), std::string::npos);

  // A changed spec is a new pod (new UID): the old one is stopped, the new one runs.
  WriteManifest("b.yaml",
                BusyboxPod("b", "\"trap 'exit 0' TERM; echo v2; while true; do sleep 1; done\""));
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto ready = ReadySandboxes("b");
        return ready.size() == 1 && ready[0].metadata().uid() != old_b_uid && !Running("b").empty();
      },
      absl::Seconds(60)))
      << kubelet_->Log();
}

TEST_F(PodLifecycleTest, KubeletRestartLeavesRunningContainersUntouched) {
  StartKubelet();
  WriteManifest("keep.yaml", BusyboxPod("keep", kSleepForever));
  ASSERT_TRUE(WaitUntil([&] { return Running("keep", "main").size() == 1; }, absl::Seconds(60)))
      << kubelet_->Log();
  std::string id = Running("keep", "main")[0].id();
  std::string sandbox = ReadySandboxes("keep")[0].id();
  kubelet_->Signal(SIGTERM);
  ASSERT_EQ(kubelet_->Wait(absl::Seconds(30)), std::optional<int>(0));
  ASSERT_EQ(Running("keep", "main").size(), 1u);  // stopping the kubelet stops no pod

  StartKubelet();
  ASSERT_TRUE(kubelet_->WaitForLog("\"SyncLoop ADD\"", absl::Seconds(60)));
  // Give the restarted kubelet a few sync rounds to (wrongly) act, then check nothing changed.
  absl::SleepFor(absl::Seconds(5));
  auto running = Running("keep", "main");
  ASSERT_EQ(running.size(), 1u) << kubelet_->Log();
  EXPECT_EQ(running[0].id(), id);
  EXPECT_EQ(Containers("keep", "main").size(), 1u);
  ASSERT_EQ(ReadySandboxes("keep").size(), 1u);
  EXPECT_EQ(ReadySandboxes("keep")[0].id(), sandbox);
}

TEST_F(PodLifecycleTest, PodRemovedWhileKubeletWasDownIsCleanedUpAsOrphan) {
  StartKubelet();
  WriteManifest("gone.yaml", BusyboxPod("gone", kSleepForever));
  WriteManifest("stay.yaml", BusyboxPod("stay", kSleepForever));
  ASSERT_TRUE(WaitUntil([&] { return !Running("gone").empty() && !Running("stay").empty(); },
                        absl::Seconds(60)))
      << kubelet_->Log();
  std::string stay_id = Running("stay", "main")[0].id();
  kubelet_->Signal(SIGTERM);
  ASSERT_EQ(kubelet_->Wait(absl::Seconds(30)), std::optional<int>(0));
  std::filesystem::remove(manifests_ + "/gone.yaml");

  StartKubelet();
  // Housekeeping finds the pod no source wants any more and stops it; the other one stays.
  ASSERT_TRUE(WaitUntil([&] { return Running("gone").empty() && ReadySandboxes("gone").empty(); },
                        absl::Seconds(60)))
      << kubelet_->Log();
  EXPECT_NE(kubelet_->Log().find("\"Clean up orphaned pod containers\""), std::string::npos);
  ASSERT_EQ(Running("stay", "main").size(), 1u);
  EXPECT_EQ(Running("stay", "main")[0].id(), stay_id);
}

TEST_F(PodLifecycleTest, BrokenManifestsAreReportedAndHarmNothing) {
  StartKubelet();
  WriteManifest("good.yaml", BusyboxPod("good", kSleepForever));
  WriteManifest("broken.yaml", "apiVersion: v1\nkind: Pod\nmetadata: [this is not\n");
  WriteManifest("badname.yaml", BusyboxPod("Bad_Name", kSleepForever));
  ASSERT_TRUE(WaitUntil([&] { return Running("good", "main").size() == 1; }, absl::Seconds(60)))
      << kubelet_->Log();
  ASSERT_TRUE(kubelet_->WaitForLog("broken.yaml", absl::Seconds(30))) << kubelet_->Log();
  ASSERT_TRUE(kubelet_->WaitForLog("badname.yaml", absl::Seconds(30))) << kubelet_->Log();
  std::string log = kubelet_->Log();
  EXPECT_NE(log.find("metadata.name"), std::string::npos) << log;
  EXPECT_TRUE(Sandboxes("Bad_Name").empty());
  // Still healthy, still serving.
  EXPECT_EQ(HttpGet(healthz_port_, "/healthz").body, "ok");
  EXPECT_FALSE(kubelet_->Wait(absl::ZeroDuration()).has_value());
}

TEST_F(PodLifecycleTest, TwentyPodsAddedAtOnceAllRun) {
  StartKubelet();
  // Written into a staging directory, then moved in one burst.
  std::string staging = dir_ + "/staging";
  std::filesystem::create_directories(staging);
  for (int i = 0; i < 20; ++i) {
    WriteFile(staging + "/p" + std::to_string(i) + ".yaml",
              BusyboxPod("p" + std::to_string(i), kSleepForever));
  }
  for (int i = 0; i < 20; ++i) {
    std::filesystem::rename(staging + "/p" + std::to_string(i) + ".yaml",
                            manifests_ + "/p" + std::to_string(i) + ".yaml");
  }
  ASSERT_TRUE(WaitUntil(
      [&] {
        for (int i = 0; i < 20; ++i) {
          if (Running("p" + std::to_string(i), "main").empty()) return false;
        }
        return true;
      },
      absl::Seconds(180), absl::Milliseconds(500)))
      << kubelet_->Log();
}

TEST_F(PodLifecycleTest, ImageAbsentLocallyIsPulledFromTheRegistry) {
  if (registry_.empty()) GTEST_SKIP() << "no local registry";
  StartKubelet();
  std::string image = registry_ + "/e2e/busybox:1.36";
  WriteManifest("pulled.yaml",
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: pulled\nspec:\n"
                "  terminationGracePeriodSeconds: 5\n"
                "  containers:\n"
                "  - name: main\n    image: " +
                    image +
                    "\n"
                    "    command: [\"sh\", \"-c\", " +
                    std::string(kSleepForever) + "]\n");
  ASSERT_TRUE(WaitUntil([&] { return Running("pulled", "main").size() == 1; }, absl::Seconds(90)))
      << kubelet_->Log();
  auto st = Status(Running("pulled", "main")[0].id());
  EXPECT_NE(st.image_ref().find("sha256:"), std::string::npos);
}

}  // namespace
}  // namespace kubelet::e2e
