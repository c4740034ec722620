// Faults injected for real, on the real v1.28.7 control plane and containerd with OUR kubelet
// binary:
//   * a containerd outage (the daemon stopped for 30 s; shims and containers keep running): the
//     kubelet keeps running, reports the runtime down on the Node's Ready condition with
//     upstream's message, reconnects without a restart once containerd is back, and the pod that
//     ran before is the same pod (same container, no restart, one sandbox); a new pod runs after;
//   * a runtime that stops answering (containerd SIGSTOPped for over 3 minutes): "PLEG is not
//     healthy" on /healthz and on the Node, recovery when it answers again, the same container;
//   * a full disk under --root-dir (a 64 MiB tmpfs filled up): the kubelet keeps running and
//     serving healthz, the Node reports DiskPressure, a new pod is refused with upstream's
//     reason, the pods checkpoint stays whole (atomic writes), and once space is freed the
//     pressure clears;
//   * offline autonomy (beyond upstream): the kubelet restarted while the API server is down
//     restores its API pods from <root-dir>/api-pods-checkpoint.json and keeps managing them (a
//     killed container is restarted); when the API server returns, a pod deleted meanwhile is
//     stopped and the other keeps running.
// No timing is asserted: every wait is a generous bound.
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/api_mode_fixture.h"

namespace kubelet::e2e {
namespace {

class ResilienceTest : public ApiModeTest {
 protected:
  std::string ExtraConfig() override { return "address: 127.0.0.1\n" + extra_; }
  std::string extra_;

  // containerd-env.sh stop-runtime / start-runtime on the fixture's environment.
  absl::Status Runtime(const std::string& command) {
    const char* harness = std::getenv("KUBELET_E2E_HARNESS");
    const char* dir = std::getenv("KUBELET_E2E_DIR");
    if (harness == nullptr || dir == nullptr) {
      return absl::FailedPreconditionError("KUBELET_E2E_HARNESS / KUBELET_E2E_DIR unset");
    }
    const char* script = RuntimeName() == "crio" ? "/crio-env.sh" : "/containerd-env.sh";
    auto r =
        RunCommand({"bash", absl::StrCat(harness, script), command, dir}, {}, absl::Seconds(90));
    if (!r.ok()) return r.status();
    if (r->exit_code != 0) return absl::InternalError(r->err);
    return absl::OkStatus();
  }

  json Ready() { return Condition(GetNode(), "Ready"); }

  // Creates a sleeping busybox pod `name` bound to this node (no token volume).
  absl::Status ApplySleeper(const std::string& name) {
    return Apply(
        BusyboxPod(name, kSleepForever,
                   PodParts{.spec = absl::StrCat("  nodeName: ", node_,
                                                 "\n  automountServiceAccountToken: false\n")}));
  }
  bool WaitRunning(const std::string& name, absl::Duration timeout = absl::Seconds(120)) {
    return WaitUntil([&] { return GetPod(name)["status"].value("phase", "") == "Running"; },
                     timeout, absl::Seconds(1));
  }
};

// The runtime daemon (containerd, or CRI-O) stopped for 30 s while a pod runs: its containers
// survive (shims, conmon), the kubelet reports the runtime down and recovers without a restart.
TEST_F(ResilienceTest, ContainerdOutage) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok()) << kubelet_->Log();
  const std::string pod = PodName("steady");
  ASSERT_TRUE(ApplySleeper(pod).ok());
  ASSERT_TRUE(WaitRunning(pod));
  const json before = GetPod(pod)["status"]["containerStatuses"][0];
  const std::string container_id = before.value("containerID", "");
  ASSERT_FALSE(container_id.empty());

  // The outage. Whatever happens below, the runtime comes back for the tests after this one.
  const absl::Time down_at = absl::Now();
  ASSERT_TRUE(Runtime("stop-runtime").ok());
  absl::Cleanup restart = [&] { (void)Runtime("start-runtime"); };
  json ready;
  EXPECT_TRUE(WaitUntil(
      [&] {
        ready = Ready();
        return ready.value("status", "") == "False" &&
               absl::StrContains(ready.value("message", ""), "container runtime is down");
      },
      absl::Seconds(90), absl::Seconds(1)))
      << ready.dump() << "\n"
      << kubelet_->Log();
  EXPECT_EQ(ready.value("reason", ""), "KubeletNotReady");
  // The kubelet itself keeps running through it.
  absl::SleepFor(std::max(absl::ZeroDuration(), absl::Seconds(30) - (absl::Now() - down_at)));
  EXPECT_FALSE(kubelet_->Wait(absl::Milliseconds(1)).has_value()) << kubelet_->Log();

  ASSERT_TRUE(Runtime("start-runtime").ok());
  std::move(restart).Cancel();
  EXPECT_TRUE(WaitNodeReady(absl::Seconds(120)).ok()) << Ready().dump() << "\n" << kubelet_->Log();

  // Same pod: same container, no restart, one sandbox.
  json after;
  EXPECT_TRUE(WaitUntil(
      [&] {
        after = GetPod(pod)["status"];
        return after.value("phase", "") == "Running" &&
               after["containerStatuses"][0]["state"].contains("running");
      },
      absl::Seconds(60), absl::Seconds(1)))
      << after.dump();
  EXPECT_EQ(after["containerStatuses"][0].value("containerID", ""), container_id);
  EXPECT_EQ(after["containerStatuses"][0].value("restartCount", -1), 0);
  EXPECT_EQ(Sandboxes("steady").size(), 1u);
  EXPECT_EQ(Running("steady").size(), 1u);

  // And the node works as before.
  const std::string later = PodName("after-outage");
  ASSERT_TRUE(ApplySleeper(later).ok());
  EXPECT_TRUE(WaitRunning(later)) << kubelet_->Log();
}

TEST_F(ResilienceTest, OfflineAutonomyFromTheCheckpoint) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok()) << kubelet_->Log();
  const std::string keep = PodName("keep"), gone = PodName("gone");
  ASSERT_TRUE(ApplySleeper(keep).ok());
  ASSERT_TRUE(ApplySleeper(gone).ok());
  ASSERT_TRUE(WaitUntil(
      [&] {
        return GetPod(keep)["status"].value("phase", "") == "Running" &&
               GetPod(gone)["status"].value("phase", "") == "Running";
      },
      absl::Seconds(120), absl::Seconds(1)));
  const std::string checkpoint = dir_ + "/root/api-pods-checkpoint.json";
  ASSERT_TRUE(WaitUntil(
      [&] {
        std::ifstream in(checkpoint);
        std::stringstream text;
        text << in.rdbuf();
        return absl::StrContains(text.str(), keep) && absl::StrContains(text.str(), gone);
      },
      absl::Seconds(30), absl::Seconds(1)));

  // The kubelet goes down; meanwhile one pod is deleted, then the API server goes down too.
  StopKubelet();
  auto del = cp_->Kubectl(
      {"delete", "pod", gone, "-n", "default", "--grace-period=0", "--force", "--wait=false"});
  ASSERT_TRUE(del.ok() && del->exit_code == 0) << (del.ok() ? del->err : "");
  ASSERT_TRUE(cp_->StopApiServer().ok());
  absl::Cleanup restart = [&] { (void)cp_->StartApiServer(); };

  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(
      kubelet_->WaitForLog("\"Restored pods from the checkpoint while the API server is "
                           "unreachable\"",
                           absl::Seconds(60)))
      << kubelet_->Log();
  // The restored pod is managed: its container, killed, is started again.
  ASSERT_EQ(Running("keep", "main").size(), 1u);
  const std::string old_id = Running("keep", "main")[0].id();
  ASSERT_TRUE(cri_->StopContainer(old_id, 0).ok());
  EXPECT_TRUE(WaitUntil(
      [&] {
        auto r = Running("keep", "main");
        return r.size() == 1 && r[0].id() != old_id;
      },
      absl::Seconds(120), absl::Seconds(1)))
      << kubelet_->Log();

  // The API server returns: the deleted pod is stopped, the other keeps running.
  ASSERT_TRUE(cp_->StartApiServer().ok());
  std::move(restart).Cancel();
  EXPECT_TRUE(WaitUntil([&] { return ReadySandboxes("gone").empty(); }, absl::Seconds(180),
                        absl::Seconds(1)))
      << kubelet_->Log();
  EXPECT_EQ(Running("keep", "main").size(), 1u);
  EXPECT_TRUE(WaitNodeReady(absl::Seconds(120)).ok());
  EXPECT_TRUE(WaitUntil([&] { return GetPod(keep)["status"].value("phase", "") == "Running"; },
                        absl::Seconds(60), absl::Seconds(1)));
}

TEST_F(ResilienceTest, HungRuntimeMakesPlegUnhealthyUntilItAnswers) {
  if (RuntimeName() != "containerd") GTEST_SKIP() << "containerd only";
  // containerd's pid as the harness knows it now (an earlier test may have restarted it).
  std::string pid;
  {
    std::ifstream env(std::string(std::getenv("KUBELET_E2E_DIR")) + "/env");
    std::string line;
    while (std::getline(env, line)) {
      if (absl::StartsWith(line, "KUBELET_E2E_CONTAINERD_PID=")) pid = line.substr(27);
    }
  }
  ASSERT_FALSE(pid.empty());
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok()) << kubelet_->Log();
  const std::string pod = PodName("steady");
  ASSERT_TRUE(ApplySleeper(pod).ok());
  ASSERT_TRUE(WaitRunning(pod));
  const std::string container_id =
      GetPod(pod)["status"]["containerStatuses"][0].value("containerID", "");

  auto healthz = [&] {
    HttpResult h = HttpGet(healthz_port_, "/healthz");
    return absl::StrCat(h.body, "\n", h.status);
  };
  ASSERT_TRUE(absl::EndsWith(healthz(), "\n200"));

  // The runtime hangs: every CRI call stalls (up to runtimeRequestTimeout).
  ASSERT_EQ(::kill(std::stoi(pid), SIGSTOP), 0);
  absl::Cleanup resume = [&] { ::kill(std::stoi(pid), SIGCONT); };
  std::string answer;
  EXPECT_TRUE(WaitUntil(
      [&] {
        answer = healthz();
        return absl::StrContains(answer, "[-]pleg failed") && absl::EndsWith(answer, "\n500");
      },
      absl::Seconds(300), absl::Seconds(5)))
      << answer << "\n"
      << kubelet_->Log();
  // The node's Ready condition follows at the next status update (nodeStatusUpdateFrequency).
  json ready;
  EXPECT_TRUE(WaitUntil(
      [&] {
        ready = Ready();
        return absl::StrContains(ready.value("message", ""), "PLEG is not healthy");
      },
      absl::Seconds(60), absl::Seconds(2)))
      << ready.dump();
  EXPECT_EQ(ready.value("status", ""), "False");
  EXPECT_FALSE(kubelet_->Wait(absl::Milliseconds(1)).has_value()) << kubelet_->Log();

  ASSERT_EQ(::kill(std::stoi(pid), SIGCONT), 0);
  std::move(resume).Cancel();
  EXPECT_TRUE(WaitUntil([&] { return absl::EndsWith(healthz(), "\n200"); }, absl::Seconds(180),
                        absl::Seconds(2)))
      << healthz();
  EXPECT_TRUE(WaitNodeReady(absl::Seconds(120)).ok()) << Ready().dump();
  json after = GetPod(pod)["status"];
  EXPECT_EQ(after["containerStatuses"][0].value("containerID", ""), container_id);
  EXPECT_EQ(after["containerStatuses"][0].value("restartCount", -1), 0);
}

TEST_F(ResilienceTest, FullDiskUnderTheRootDir) {
  const std::string root = dir_ + "/root";
  std::filesystem::create_directories(root);
  auto mount =
      RunCommand({"mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", root}, {}, absl::Seconds(20));
  ASSERT_TRUE(mount.ok() && mount->exit_code == 0) << (mount.ok() ? mount->err : "");
  absl::Cleanup unmount = [&] { (void)RunCommand({"umount", "-l", root}, {}, absl::Seconds(20)); };
  extra_ = "evictionPressureTransitionPeriod: 10s\n";
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok()) << kubelet_->Log();
  const std::string first = PodName("before-full");
  ASSERT_TRUE(ApplySleeper(first).ok());
  ASSERT_TRUE(WaitRunning(first));
  const std::string checkpoint = root + "/api-pods-checkpoint.json";
  ASSERT_TRUE(WaitUntil([&] { return std::filesystem::exists(checkpoint); }, absl::Seconds(30),
                        absl::Seconds(1)));

  // Fill the file system.
  (void)RunCommand({"dd", "if=/dev/zero", "of=" + root + "/filler", "bs=1M", "count=100"}, {},
                   absl::Seconds(60));
  EXPECT_TRUE(WaitUntil([&] { return ConditionTrue(GetNode(), "DiskPressure"); }, absl::Seconds(90),
                        absl::Seconds(1)))
      << GetNode().dump() << "\n"
      << kubelet_->Log();
  // A new pod is refused while the pressure lasts.
  const std::string refused = PodName("while-full");
  ASSERT_TRUE(ApplySleeper(refused).ok());
  json st;
  EXPECT_TRUE(WaitUntil(
      [&] {
        st = GetPod(refused)["status"];
        return st.is_object() && st.value("phase", "") == "Failed";
      },
      absl::Seconds(60), absl::Seconds(1)))
      << st.dump();
  EXPECT_EQ(st.value("reason", ""), "Evicted");
  EXPECT_TRUE(absl::StrContains(st.value("message", ""), "DiskPressure")) << st.dump();
  // The kubelet runs on and serves; its checkpoint is still a whole document.
  EXPECT_FALSE(kubelet_->Wait(absl::Milliseconds(1)).has_value()) << kubelet_->Log();
  EXPECT_EQ(HttpGet(healthz_port_, "/healthz").body, "ok");
  {
    std::ifstream in(checkpoint);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_TRUE(json::parse(text.str(), nullptr, false).is_object()) << text.str().size();
  }

  // Space comes back: the pressure clears.
  std::filesystem::remove(root + "/filler");
  EXPECT_TRUE(WaitUntil([&] { return !ConditionTrue(GetNode(), "DiskPressure"); },
                        absl::Seconds(120), absl::Seconds(2)))
      << GetNode().dump();
  StopKubelet();
  // The pods' containers are stopped through CRI by the fixture; the tmpfs goes after.
  (void)cp_->Kubectl({"delete", "pod", "--all-namespaces", "--field-selector",
                      "spec.nodeName=" + node_, "--grace-period=0", "--force", "--wait=false"});
  for (const PodSandbox& s : Sandboxes("")) {
    (void)cri_->StopPodSandbox(s.id());
    (void)cri_->RemovePodSandbox(s.id());
  }
}

}  // namespace
}  // namespace kubelet::e2e
