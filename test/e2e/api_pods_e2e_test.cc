// API-server mode pods on the real control plane and containerd: a pod created with kubectl for
// this node runs through OUR kubelet binary (started with --kubeconfig, the node's identity), its
// status reaches the API server (phase, conditions, container statuses), and `kubectl delete
// pod` stops it within its grace period and the object disappears (the kubelet's final DELETE).
//
// The test creates the Node object up front with the admin identity, so the API server accepts
// pods bound to it whether or not the kubelet has registered yet.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/api_mode_fixture.h"

namespace kubelet::e2e {
namespace {

class ApiPodsTest : public ApiModeTest {
 protected:
  ApiPodsTest() { precreate_node_ = true; }
};

TEST_F(ApiPodsTest, PodRunsReportsStatusAndIsDeleted) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  const std::string name = PodName("sleeper");
  PodParts parts;
  // No service account token: projected volumes are not supported yet.
  parts.spec = absl::StrCat("  nodeName: ", node_, "\n  automountServiceAccountToken: false\n");
  parts.termination_grace_seconds = 30;
  auto created =
      cp_->Kubectl({"apply", "-n", "default", "-f", "-"}, BusyboxPod(name, kSleepForever, parts));
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_EQ(created->exit_code, 0) << created->err;

  // It runs on the node.
  ASSERT_TRUE(WaitUntil([&] { return !Running("sleeper", "main").empty(); }, absl::Seconds(120)))
      << kubelet_->Log();
  EXPECT_TRUE(kubelet_->WaitForLog("\"SyncLoop ADD\" source=\"api\"", absl::Seconds(5)));
  const std::string container_id = Running("sleeper", "main")[0].id();

  // Its status reaches the API server.
  nlohmann::json pod;
  bool reported = WaitUntil(
      [&] {
        pod = GetPod(name);
        if (!pod.is_object()) return false;
        const auto& st = pod["status"];
        if (st.value("phase", "") != "Running" || !ConditionTrue(pod, "Ready")) return false;
        auto cs = st.value("containerStatuses", nlohmann::json::array());
        return cs.size() == 1 && cs[0].contains("state") && cs[0]["state"].contains("running");
      },
      absl::Seconds(60), absl::Milliseconds(500));
  ASSERT_TRUE(reported) << pod.dump(2) << "\n" << kubelet_->Log();
  const auto& cs = pod["status"]["containerStatuses"][0];
  EXPECT_EQ(cs.value("name", ""), "main");
  EXPECT_EQ(cs.value("containerID", ""), "containerd://" + container_id);
  EXPECT_TRUE(cs.value("ready", false));
  EXPECT_TRUE(cs.value("started", false));
  EXPECT_FALSE(cs.value("imageID", "").empty());
  EXPECT_TRUE(ConditionTrue(pod, "Initialized"));
  EXPECT_TRUE(ConditionTrue(pod, "ContainersReady"));
  EXPECT_TRUE(ConditionTrue(pod, "PodScheduled"));
  EXPECT_EQ(pod["status"].value("qosClass", ""), "BestEffort");
  EXPECT_FALSE(pod["status"].value("startTime", "").empty());

  // kubectl delete: the container stops (its TERM trap exits at once, well within the 30 s
  // grace period) and the kubelet removes the object.
  const absl::Time deleted_at = absl::Now();
  auto del = cp_->Kubectl({"delete", "pod", name, "-n", "default", "--wait=false"});
  ASSERT_TRUE(del.ok()) << del.status();
  ASSERT_EQ(del->exit_code, 0) << del->err;
  ASSERT_TRUE(WaitUntil([&] { return Running("sleeper").empty(); }, absl::Seconds(30)))
      << kubelet_->Log();
  EXPECT_LT(absl::Now() - deleted_at, absl::Seconds(30));
  ASSERT_TRUE(WaitUntil([&] { return PodGone(name); }, absl::Seconds(40), absl::Milliseconds(500)))
      << kubelet_->Log();
  EXPECT_TRUE(kubelet_->WaitForLog("\"SyncLoop DELETE\" source=\"api\"", absl::Seconds(1)));
  EXPECT_TRUE(kubelet_->WaitForLog("\"SyncLoop REMOVE\" source=\"api\"", absl::Seconds(20)));
  // Its sandbox goes too.
  EXPECT_TRUE(WaitUntil([&] { return ReadySandboxes("sleeper").empty(); }, absl::Seconds(30)));
}

}  // namespace
}  // namespace kubelet::e2e
