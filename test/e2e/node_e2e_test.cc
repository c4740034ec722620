// Node registration, node status and the node Lease on the real control plane and containerd:
// OUR kubelet binary, started with the node's identity (--kubeconfig), registers its Node, which
// turns Ready with the labels, addresses, resources, node info, daemon endpoints and conditions
// upstream reports; its Lease in kube-node-lease is renewed; a deleted Node is registered again;
// and NodeRestriction never refuses what the kubelet does.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/api_mode_fixture.h"
#include "test/e2e/e2e_env.h"

namespace kubelet::e2e {
namespace {

using nlohmann::json;

class NodeTest : public ApiModeTest {
 protected:
  std::string ExtraConfig() override {
    return "address: 127.0.0.1\nnodeStatusMaxImages: 50\nregisterWithTaints:\n"
           "- key: e2e.example.com/taint\n  value: \"yes\"\n  effect: PreferNoSchedule\n";
  }
  absl::Status WaitReady(absl::Duration timeout) { return WaitNodeReady(timeout); }
};

TEST_F(NodeTest, RegistersTurnsReadyRenewsLeaseAndReregisters) {
  StartKubelet({"--kubeconfig", kubeconfig_, "--node-labels", "e2e.example.com/role=worker"});
  absl::Status ready = WaitReady(absl::Seconds(90));
  ASSERT_TRUE(ready.ok()) << ready << "\n" << kubelet_->Log();

  json n = GetNode();
  const json& labels = n["metadata"]["labels"];
  EXPECT_EQ(labels.value("kubernetes.io/hostname", ""), node_);
  EXPECT_EQ(labels.value("kubernetes.io/os", ""), "linux");
  EXPECT_FALSE(labels.value("kubernetes.io/arch", "").empty());
  EXPECT_EQ(labels.value("beta.kubernetes.io/os", ""), "linux");
  EXPECT_EQ(labels.value("beta.kubernetes.io/arch", ""), labels.value("kubernetes.io/arch", ""));
  EXPECT_EQ(labels.value("e2e.example.com/role", ""), "worker");
  EXPECT_EQ(n["metadata"]["annotations"].value(
                "volumes.kubernetes.io/controller-managed-attach-detach", ""),
            "true");
  bool tainted = false;
  for (const json& t : n["spec"].value("taints", json::array())) {
    tainted |= t.value("key", "") == "e2e.example.com/taint" &&
               t.value("effect", "") == "PreferNoSchedule";
  }
  EXPECT_TRUE(tainted) << n["spec"].dump();

  const json& st = n["status"];
  bool hostname_address = false;
  for (const json& a : st.value("addresses", json::array())) {
    hostname_address |= a.value("type", "") == "Hostname" && a.value("address", "") == node_;
  }
  EXPECT_TRUE(hostname_address) << st["addresses"].dump();
  for (const char* r : {"cpu", "memory", "pods", "ephemeral-storage"}) {
    EXPECT_TRUE(st["capacity"].contains(r)) << r << " " << st["capacity"].dump();
    EXPECT_TRUE(st["allocatable"].contains(r)) << r << " " << st["allocatable"].dump();
  }
  EXPECT_EQ(st["capacity"].value("pods", ""), "110");
  EXPECT_EQ(st["daemonEndpoints"]["kubeletEndpoint"].value("Port", 0), api_port_);
  const json& info = st["nodeInfo"];
  EXPECT_EQ(info.value("containerRuntimeVersion", "").rfind(CriRuntimeName() + "://", 0), 0u)
      << info.dump();
  EXPECT_EQ(info.value("kubeletVersion", "").rfind("v1.28.", 0), 0u) << info.dump();
  EXPECT_EQ(info.value("operatingSystem", ""), "linux");
  EXPECT_FALSE(info.value("bootID", "").empty());
  EXPECT_FALSE(info.value("kernelVersion", "").empty());
  EXPECT_FALSE(info.value("osImage", "").empty());
  EXPECT_FALSE(st.value("images", json::array()).empty()) << "no images reported";
  json ready_cond = Condition(n, "Ready");
  EXPECT_EQ(ready_cond.value("reason", ""), "KubeletReady");
  EXPECT_EQ(ready_cond.value("message", ""), "kubelet is posting ready status");
  EXPECT_EQ(Condition(n, "MemoryPressure").value("reason", ""), "KubeletHasSufficientMemory");
  EXPECT_EQ(Condition(n, "DiskPressure").value("reason", ""), "KubeletHasNoDiskPressure");
  EXPECT_EQ(Condition(n, "PIDPressure").value("reason", ""), "KubeletHasSufficientPID");
  EXPECT_EQ(Condition(n, "PIDPressure").value("status", ""), "False");

  // The Lease: held by the node, owned by its Node, renewed every 10 s.
  json lease;
  absl::Status s = WaitFor(
      [&]() -> absl::Status {
        lease = GetLease();
        if (!lease.is_object()) return absl::NotFoundError("no lease yet");
        if (lease["metadata"].value("ownerReferences", json::array()).empty()) {
          return absl::NotFoundError("no owner yet");
        }
        return absl::OkStatus();
      },
      absl::Seconds(30), absl::Seconds(1));
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(lease["spec"].value("holderIdentity", ""), node_);
  EXPECT_EQ(lease["spec"].value("leaseDurationSeconds", 0), 40);
  const json& owner = lease["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner.value("kind", ""), "Node");
  EXPECT_EQ(owner.value("uid", ""), n["metadata"].value("uid", ""));
  const std::string renew = lease["spec"].value("renewTime", "");
  s = WaitFor(
      [&]() -> absl::Status {
        json l = GetLease();
        if (l.is_object() && l["spec"].value("renewTime", "") != renew) return absl::OkStatus();
        return absl::UnavailableError("not renewed yet");
      },
      absl::Seconds(30), absl::Seconds(1));
  EXPECT_TRUE(s.ok()) << s;

  // Deleted: registered again (new uid), Ready again.
  const std::string uid = n["metadata"].value("uid", "");
  auto del = cp_->Kubectl({"delete", "node", node_});
  ASSERT_TRUE(del.ok()) << del.status();
  ASSERT_EQ(del->exit_code, 0) << del->err;
  s = WaitFor(
      [&]() -> absl::Status {
        json again = GetNode();
        if (!again.is_object()) return absl::NotFoundError("not registered again yet");
        if (again["metadata"].value("uid", "") == uid) return absl::NotFoundError("old node");
        if (Condition(again, "Ready").value("status", "") != "True") {
          return absl::UnavailableError("not ready yet");
        }
        return absl::OkStatus();
      },
      absl::Seconds(60), absl::Seconds(1));
  EXPECT_TRUE(s.ok()) << s << "\n" << kubelet_->Log();

  // Nothing the kubelet sent was refused by the Node authorizer or NodeRestriction.
  const std::string log = kubelet_->Log();
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (!absl::StrContains(line, "node_status_manager.cc")) continue;
    EXPECT_FALSE(absl::StrContains(line, "orbidden")) << line;
    EXPECT_FALSE(absl::StrContains(line, "NodeRestriction")) << line;
  }
  EXPECT_EQ(log.find("NodeRestriction"), std::string::npos) << log;
  EXPECT_EQ(log.find("Unable to register node"), std::string::npos) << log;
  EXPECT_EQ(log.find("Error updating node status"), std::string::npos) << log;
  EXPECT_EQ(log.find("Failed to update lease"), std::string::npos) << log;
}

// OpenShift's unit passes role labels upstream v1.28 refuses: ours takes them with a warning and,
// as the API server's NodeRestriction admission refuses them, registers without them.
TEST_F(NodeTest, RefusedRoleLabelsAreDropped) {
  StartKubelet({"--kubeconfig", kubeconfig_,
                "--node-labels=node-role.kubernetes.io/master,node.openshift.io/os_id=debian"});
  ASSERT_TRUE(WaitReady(absl::Seconds(90)).ok()) << kubelet_->Log();
  json labels = GetNode()["metadata"]["labels"];
  EXPECT_EQ(labels.value("node.openshift.io/os_id", ""), "debian") << labels.dump();
  EXPECT_FALSE(labels.contains("node-role.kubernetes.io/master")) << labels.dump();
  const std::string log = kubelet_->Log();
  EXPECT_TRUE(absl::StrContains(log, "a node role label, refused by upstream v1.28, is accepted"))
      << log;
  EXPECT_TRUE(absl::StrContains(
      log, "\"The API server refused labels of this node; registering without them\""))
      << log;
  EXPECT_TRUE(absl::StrContains(log, "labels=\"node-role.kubernetes.io/master\"")) << log;
}

}  // namespace
}  // namespace kubelet::e2e
