// The "controlplane" CTest fixture itself, against the real v1.28.7 binaries and no kubelet:
// the apiserver's version, the Node authorizer and NodeRestriction acting on a minted node
// identity, pods bound by spec.nodeName, a Deployment's pods made by the controller manager and
// marked unschedulable by the scheduler, the root CA configmap, and the components' /healthz.
#include <unistd.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/controlplane.h"
#include "test/e2e/http_client.h"

namespace kubelet::e2e {
namespace {

using nlohmann::json;

class ControlPlaneE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<ControlPlane> cp = ControlPlane::FromEnv();
    KUBELET_CP_SKIP_OR_FAIL(cp);
    cp_.emplace(*std::move(cp));
  }

  // kubectl as admin; fails the test (and returns a result with exit_code -1) on a run error.
  CommandResult Kubectl(const std::vector<std::string>& args, std::string_view stdin_data = {}) {
    absl::StatusOr<CommandResult> r = cp_->Kubectl(args, stdin_data);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }

  // The object kubectl prints with `-o json`; null when the call failed.
  json GetJson(const std::vector<std::string>& args) { return cp_->KubectlJson(args); }

  // A namespace of this test, deleted (without waiting) when the test ends.
  std::string MakeNamespace(const std::string& base) {
    std::string ns = absl::StrCat(base, "-", ::getpid());
    CommandResult r = Kubectl({"create", "namespace", ns});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    namespaces_.push_back(ns);
    return ns;
  }

  void TearDown() override {
    if (!cp_) return;
    for (const std::string& ns : namespaces_) {
      (void)cp_->Kubectl({"delete", "namespace", ns, "--wait=false"});
    }
  }

  std::optional<ControlPlane> cp_;
  std::vector<std::string> namespaces_;
};

TEST_F(ControlPlaneE2ETest, ServesV1287) {
  CommandResult r = Kubectl({"version", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json v = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(v.is_discarded()) << r.out;
  EXPECT_EQ(v["serverVersion"]["gitVersion"], "v1.28.7") << r.out;
  EXPECT_EQ(v["clientVersion"]["gitVersion"], "v1.28.7") << r.out;
  EXPECT_EQ(cp_->Get("KUBELET_CP_VERSION"), "v1.28.7");
  EXPECT_EQ(cp_->server().rfind("https://127.0.0.1:", 0), 0u) << cp_->server();
}

TEST_F(ControlPlaneE2ETest, NodeIdentityIsBoundByNodeAuthorizerAndNodeRestriction) {
  const std::string node = absl::StrCat("cp-e2e-node-", ::getpid());
  absl::StatusOr<std::string> kubeconfig = cp_->NodeKubeconfig(node);
  ASSERT_TRUE(kubeconfig.ok()) << kubeconfig.status();
  // node-cert maps the name to loopback, where the apiserver looks for the node's kubelet.
  absl::StatusOr<CommandResult> hosts = RunCommand({"getent", "hosts", node});
  ASSERT_TRUE(hosts.ok()) << hosts.status();
  EXPECT_EQ(hosts->out.rfind("127.0.0.1 ", 0), 0u) << hosts->out << hosts->err;

  // Its own Lease in kube-node-lease: what a kubelet's heartbeat does; allowed.
  const std::string lease =
      absl::StrCat("apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: ", node,
                   "\n  namespace: kube-node-lease\nspec:\n  holderIdentity: ", node,
                   "\n  leaseDurationSeconds: 40\n");
  absl::StatusOr<CommandResult> r = cp_->KubectlAs(*kubeconfig, {"create", "-f", "-"}, lease);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 0) << r->err;
  r = cp_->KubectlAs(*kubeconfig, {"get", "lease", "-n", "kube-node-lease", node, "-o", "name"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 0) << r->err;

  // Another node's Lease: refused (the Node authorizer binds a node to its own objects).
  const std::string other = absl::StrCat(node, "-other");
  std::string other_lease = lease;
  for (size_t pos; (pos = other_lease.find(absl::StrCat(node, "\n"))) != std::string::npos;) {
    other_lease.replace(pos, node.size() + 1, absl::StrCat(other, "\n"));
  }
  r = cp_->KubectlAs(*kubeconfig, {"create", "-f", "-"}, other_lease);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(r->exit_code, 0) << r->out;
  EXPECT_NE(r->err.find("forbidden"), std::string::npos) << r->err;

  // Secrets of kube-system: 403, naming the node's user, which proves the identity.
  r = cp_->KubectlAs(*kubeconfig, {"get", "secrets", "-n", "kube-system"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(r->exit_code, 0) << r->out;
  EXPECT_NE(r->err.find(absl::StrCat("User \"system:node:", node,
                                     "\" cannot list resource "
                                     "\"secrets\"")),
            std::string::npos)
      << r->err;

  CommandResult d = Kubectl({"delete", "lease", "-n", "kube-node-lease", node});
  EXPECT_EQ(d.exit_code, 0) << d.err;
}

TEST_F(ControlPlaneE2ETest, PodBoundByNodeNameIsAccepted) {
  const std::string ns = MakeNamespace("cp-e2e-pod");
  const std::string node = absl::StrCat("cp-e2e-absent-", ::getpid());
  const std::string pod =
      absl::StrCat("apiVersion: v1\nkind: Pod\nmetadata:\n  name: bound\n  namespace: ", ns,
                   "\nspec:\n  nodeName: ", node,
                   "\n  containers:\n  - name: c\n    image: registry.k8s.io/pause:3.9\n");
  CommandResult r = Kubectl({"create", "-f", "-"}, pod);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json p = GetJson({"get", "pod", "-n", ns, "bound"});
  ASSERT_TRUE(p.is_object());
  EXPECT_EQ(p["spec"]["nodeName"], node);
  EXPECT_EQ(p["status"]["phase"], "Pending");
}

TEST_F(ControlPlaneE2ETest, ControllerManagerAndSchedulerWork) {
  const std::string ns = MakeNamespace("cp-e2e-deploy");
  const std::string deployment = absl::StrCat(
      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: ", ns,
      "\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n"
      "    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n"
      "      - name: c\n        image: registry.k8s.io/pause:3.9\n");
  CommandResult r = Kubectl({"create", "-f", "-"}, deployment);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // Deployment -> ReplicaSet -> 2 Pods: the controller manager. With no node to run on, the
  // scheduler marks each PodScheduled=False/Unschedulable and they stay Pending.
  absl::Status s = WaitFor(
      [&]() -> absl::Status {
        json pods = GetJson({"get", "pods", "-n", ns, "-l", "app=web"});
        if (!pods.is_object()) return absl::UnavailableError("no pod list");
        const json& items = pods["items"];
        if (items.size() != 2) {
          return absl::NotFoundError(absl::StrCat(items.size(), " pods so far"));
        }
        for (const json& pod : items) {
          if (pod["metadata"]["ownerReferences"][0]["kind"] != "ReplicaSet") {
            return absl::InternalError("pod not owned by a ReplicaSet");
          }
          if (pod["status"]["phase"] != "Pending") {
            return absl::InternalError(absl::StrCat("phase ", pod["status"]["phase"].dump()));
          }
          bool unschedulable = false;
          for (const json& c : pod["status"].value("conditions", json::array())) {
            unschedulable |= c["type"] == "PodScheduled" && c["status"] == "False" &&
                             c["reason"] == "Unschedulable";
          }
          if (!unschedulable) return absl::NotFoundError("not yet marked Unschedulable");
        }
        return absl::OkStatus();
      },
      absl::Seconds(60));
  EXPECT_TRUE(s.ok()) << s;

  // The root CA publisher (controller manager) fills every namespace, ours included, with
  // the cluster CA; the service account controller gives it a default ServiceAccount.
  s = WaitFor(
      [&]() -> absl::Status {
        json cm = GetJson({"get", "configmap", "-n", ns, "kube-root-ca.crt"});
        if (!cm.is_object()) return absl::NotFoundError("no kube-root-ca.crt yet");
        if (cm["data"].value("ca.crt", "").find("BEGIN CERTIFICATE") == std::string::npos) {
          return absl::InternalError("kube-root-ca.crt holds no certificate");
        }
        if (!GetJson({"get", "serviceaccount", "-n", ns, "default"}).is_object()) {
          return absl::NotFoundError("no default ServiceAccount yet");
        }
        return absl::OkStatus();
      },
      absl::Seconds(60));
  EXPECT_TRUE(s.ok()) << s;
  json cm = GetJson({"get", "configmap", "-n", "default", "kube-root-ca.crt"});
  EXPECT_TRUE(cm.is_object());
}

TEST_F(ControlPlaneE2ETest, ComponentsAreHealthy) {
  for (const char* key : {"KUBELET_CP_CONTROLLER_MANAGER_PORT", "KUBELET_CP_SCHEDULER_PORT"}) {
    const std::string url = absl::StrCat("https://127.0.0.1:", cp_->Get(key), "/healthz");
    HttpAnswer a = HttpRequest(url, HttpOptions{.ca_file = cp_->ca_file()});
    EXPECT_EQ(a.code, 200) << key << ": curl exit " << a.curl_exit;
    EXPECT_EQ(a.body, "ok") << key;
  }
  CommandResult r = Kubectl({"get", "--raw", "/readyz"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ok");
}

}  // namespace
}  // namespace kubelet::e2e
