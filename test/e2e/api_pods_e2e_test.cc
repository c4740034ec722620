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
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/api_mode_fixture.h"
#include "test/e2e/e2e_env.h"

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
  EXPECT_EQ(cs.value("containerID", ""), CriRuntimeName() + "://" + container_id);
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
  auto del = cp_->Kubectl({"delete", "pod", name, "-n", "default", "--wait=false"});
  ASSERT_TRUE(del.ok()) << del.status();
  ASSERT_EQ(del->exit_code, 0) << del->err;
  ASSERT_TRUE(WaitUntil([&] { return Running("sleeper").empty(); }, absl::Seconds(30)))
      << kubelet_->Log();
  ASSERT_TRUE(WaitUntil([&] { return PodGone(name); }, absl::Seconds(40), absl::Milliseconds(500)))
      << kubelet_->Log();
  EXPECT_TRUE(kubelet_->WaitForLog("\"SyncLoop DELETE\" source=\"api\"", absl::Seconds(1)));
  EXPECT_TRUE(kubelet_->WaitForLog("\"SyncLoop REMOVE\" source=\"api\"", absl::Seconds(20)));
  // Its sandbox goes too.
  EXPECT_TRUE(WaitUntil([&] { return ReadySandboxes("sleeper").empty(); }, absl::Seconds(30)));
}

// Admission as upstream's predicates, against the node's labels as the API server has them:
// a pod whose nodeSelector the node cannot meet, or whose kubernetes.io/os label differs from
// the node's, ends Failed with upstream's reason and "Pod was rejected: ..." and never runs; once
// the node is labelled (the kubelet watches its Node), a pod selecting the label runs.
TEST_F(ApiPodsTest, AdmissionRejectsWhatTheNodeCannotMeet) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  auto create = [&](const std::string& pod, const std::string& name, const std::string& extra,
                    const std::string& labels) {
    PodParts parts;
    parts.spec =
        absl::StrCat("  nodeName: ", node_, "\n  automountServiceAccountToken: false\n", extra);
    std::string manifest = BusyboxPod(name, kSleepForever, parts);
    if (!labels.empty()) {
      manifest = absl::StrReplaceAll(manifest,
                                     {{absl::StrCat("  name: ", name, "\n"),
                                       absl::StrCat("  name: ", name, "\n  labels:\n", labels)}});
    }
    auto r = cp_->Kubectl({"apply", "-n", "default", "-f", "-"}, manifest);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->exit_code, 0) << r->err << "\n" << pod;
  };
  const std::string selector = PodName("selector");
  const std::string os = PodName("windows");
  create("selector", selector, "  nodeSelector:\n    e2e.example.com/disk: ssd\n", "");
  create("windows", os, "", "    kubernetes.io/os: windows\n");

  auto failed_with = [&](const std::string& name, json* pod) {
    *pod = GetPod(name);
    return pod->is_object() && (*pod)["status"].value("phase", "") == "Failed";
  };
  json pod;
  ASSERT_TRUE(WaitUntil([&] { return failed_with(selector, &pod); }, absl::Seconds(60),
                        absl::Milliseconds(500)))
      << pod.dump(2) << "\n"
      << kubelet_->Log();
  EXPECT_EQ(pod["status"].value("reason", ""), "NodeAffinity");
  EXPECT_EQ(pod["status"].value("message", ""), "Pod was rejected: Predicate NodeAffinity failed");
  ASSERT_TRUE(
      WaitUntil([&] { return failed_with(os, &pod); }, absl::Seconds(60), absl::Milliseconds(500)))
      << pod.dump(2) << "\n"
      << kubelet_->Log();
  EXPECT_EQ(pod["status"].value("reason", ""), "PodOSSelectorNodeLabelDoesNotMatch");
  EXPECT_EQ(pod["status"].value("message", ""),
            "Pod was rejected: Failed to admit pod as the `kubernetes.io/os` label doesn't match "
            "node label");
  EXPECT_TRUE(Running("selector").empty());
  EXPECT_TRUE(Running("windows").empty());
  EXPECT_TRUE(ReadySandboxes("selector").empty());

  // The node gets the label; a new pod selecting it (required node affinity this time) runs.
  auto label = cp_->Kubectl({"label", "node", node_, "e2e.example.com/disk=ssd"});
  ASSERT_TRUE(label.ok()) << label.status();
  ASSERT_EQ(label->exit_code, 0) << label->err;
  // The kubelet learns the label from its watch; a pod that raced ahead of it is rejected like
  // upstream's, so the test tries again with a new pod rather than sleeping.
  std::string fits;
  bool ran = false;
  for (int attempt = 0; attempt < 10 && !ran; ++attempt) {
    const std::string base = absl::StrCat("fits", attempt);
    fits = PodName(base);
    create(base, fits,
           "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
           "        nodeSelectorTerms:\n        - matchExpressions:\n"
           "          - {key: e2e.example.com/disk, operator: In, values: [ssd, nvme]}\n",
           "");
    WaitUntil([&] { return !Running(base, "main").empty() || failed_with(fits, &pod); },
              absl::Seconds(120), absl::Milliseconds(500));
    ran = !Running(base, "main").empty();
  }
  ASSERT_TRUE(ran) << GetPod(fits).dump(2) << "\n" << kubelet_->Log();
  EXPECT_TRUE(ConditionTrue(GetPod(fits), "PodScheduled"));
}

// A second `kubectl delete` with a shorter grace period shortens the termination in flight: a
// container that ignores SIGTERM, deleted with 120 s of grace, is killed within the 2 s of the
// second delete instead.
TEST_F(ApiPodsTest, SecondDeleteWithShorterGraceShortensTermination) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  const std::string name = PodName("stubborn");
  PodParts parts;
  parts.spec = absl::StrCat("  nodeName: ", node_, "\n  automountServiceAccountToken: false\n");
  parts.termination_grace_seconds = 120;
  auto created =
      cp_->Kubectl({"apply", "-n", "default", "-f", "-"},
                   BusyboxPod(name, "\"trap '' TERM; while true; do sleep 1; done\"", parts));
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_EQ(created->exit_code, 0) << created->err;
  ASSERT_TRUE(WaitUntil([&] { return !Running("stubborn", "main").empty(); }, absl::Seconds(120)))
      << kubelet_->Log();

  auto del = cp_->Kubectl({"delete", "pod", name, "-n", "default", "--wait=false"});
  ASSERT_TRUE(del.ok()) << del.status();
  ASSERT_EQ(del->exit_code, 0) << del->err;
  ASSERT_TRUE(kubelet_->WaitForLog("\"SyncLoop DELETE\" source=\"api\"", absl::Seconds(30)));
  // The container ignores TERM: it is still there while the first grace period runs.
  absl::SleepFor(absl::Seconds(3));
  EXPECT_FALSE(Running("stubborn", "main").empty());

  del = cp_->Kubectl({"delete", "pod", name, "-n", "default", "--grace-period=2", "--wait=false"});
  ASSERT_TRUE(del.ok()) << del.status();
  ASSERT_EQ(del->exit_code, 0) << del->err;
  // The wait ends well before the first grace period (120 s) could: the bound is the check.
  ASSERT_TRUE(WaitUntil([&] { return Running("stubborn").empty(); }, absl::Seconds(60)))
      << kubelet_->Log();
  ASSERT_TRUE(WaitUntil([&] { return PodGone(name); }, absl::Seconds(40), absl::Milliseconds(500)))
      << kubelet_->Log();
}

}  // namespace
}  // namespace kubelet::e2e
