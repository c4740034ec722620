// The shared fixture of the API-server-mode end-to-end tests: StaticPodTest (real containerd,
// a node name of the test's own, the kubelet binary) plus the real control plane of the
// "controlplane" CTest fixture, the node's kubeconfig (identity system:node:<node>) and helpers
// reading objects back with the admin kubectl.
//
//   class MyTest : public ApiModeTest {};
//   TEST_F(MyTest, X) {
//     StartKubelet({"--kubeconfig", kubeconfig_});
//     ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok());
//     json pod = GetJson({"get", "pod", "p", "-n", "default"});
//   }
//
// SetUp() skips (or, with KUBELET_CP_REQUIRED=1, fails) when the control plane is unavailable.
// With `precreate_node_` set (in the suite's constructor) SetUp() creates the Node object as
// admin, so pods bound to it are accepted before the kubelet registers. TearDown() force-deletes
// the node's pods, stops the kubelet (StaticPodTest::TearDown) and deletes the Node and its Lease.
//
// For tests only: blocking, polling, not thread-safe.
#ifndef KUBELET_TEST_E2E_API_MODE_FIXTURE_H_
#define KUBELET_TEST_E2E_API_MODE_FIXTURE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/controlplane.h"
#include "test/e2e/static_pod_fixture.h"

namespace kubelet::e2e {

class ApiModeTest : public StaticPodTest {
 protected:
  using json = nlohmann::json;

  void SetUp() override {
    StaticPodTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    absl::StatusOr<ControlPlane> cp = ControlPlane::FromEnv();
    KUBELET_CP_SKIP_OR_FAIL(cp);
    cp_ = std::move(*cp);
    absl::StatusOr<std::string> kubeconfig = cp_->NodeKubeconfig(node_);
    ASSERT_TRUE(kubeconfig.ok()) << kubeconfig.status();
    kubeconfig_ = *kubeconfig;
    if (precreate_node_) {
      std::string node =
          json{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", node_}}}}.dump();
      auto r = cp_->Kubectl({"apply", "-f", "-"}, node);
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ(r->exit_code, 0) << r->err;
    }
  }

  void TearDown() override {
    if (cp_) {
      (void)cp_->Kubectl({"delete", "pod", "--all-namespaces", "--field-selector",
                          "spec.nodeName=" + node_, "--grace-period=0", "--force", "--wait=false"});
    }
    StaticPodTest::TearDown();
    if (cp_) {
      (void)cp_->Kubectl({"delete", "node", node_, "--wait=false"});
      (void)cp_->Kubectl({"delete", "lease", "-n", "kube-node-lease", node_, "--wait=false"});
    }
  }

  // `kubectl <args> -o json` as admin; null when it failed.
  json GetJson(const std::vector<std::string>& args) { return cp_->KubectlJson(args); }
  json GetNode() { return GetJson({"get", "node", node_}); }
  json GetLease() { return GetJson({"get", "lease", "-n", "kube-node-lease", node_}); }
  // The pod as the API server has it; null when it does not exist.
  json GetPod(const std::string& name, const std::string& ns = "default") {
    json j = GetJson({"get", "pod", name, "-n", ns});
    return j.is_object() ? j : json();
  }
  // Whether the API server answers NotFound for the pod.
  bool PodGone(const std::string& name, const std::string& ns = "default") {
    auto r = cp_->Kubectl({"get", "pod", name, "-n", ns, "-o", "name"});
    return r.ok() && r->exit_code != 0 && r->err.find("NotFound") != std::string::npos;
  }
  // `kubectl apply -f -` of `manifest` as admin; the command's error when it failed.
  absl::Status Apply(const std::string& manifest) {
    auto r = cp_->Kubectl({"apply", "-f", "-"}, manifest);
    if (!r.ok()) return r.status();
    if (r->exit_code != 0) return absl::InternalError(r->err);
    return absl::OkStatus();
  }

  // The condition of `type` in an object's status.conditions; null when absent.
  static json Condition(const json& object, const std::string& type) {
    if (!object.is_object() || !object.contains("status")) return json();
    for (const json& c : object["status"].value("conditions", json::array())) {
      if (c.value("type", "") == type) return c;
    }
    return json();
  }
  static bool ConditionTrue(const json& object, const std::string& type) {
    json c = Condition(object, type);
    return c.is_object() && c.value("status", "") == "True";
  }

  // Waits until the Node reports Ready=True.
  absl::Status WaitNodeReady(absl::Duration timeout) {
    return WaitFor(
        [&]() -> absl::Status {
          json n = GetNode();
          if (!n.is_object()) return absl::NotFoundError("no node yet");
          json ready = Condition(n, "Ready");
          if (ready.value("status", "") != "True") {
            return absl::UnavailableError(absl::StrCat("Ready: ", ready.dump()));
          }
          return absl::OkStatus();
        },
        timeout, absl::Seconds(1));
  }

  bool precreate_node_ = false;
  std::optional<ControlPlane> cp_;
  std::string kubeconfig_;
};

}  // namespace kubelet::e2e

#endif  // KUBELET_TEST_E2E_API_MODE_FIXTURE_H_
