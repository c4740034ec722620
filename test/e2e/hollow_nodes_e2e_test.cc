// Hollow nodes (`kubelet hollow`) against the real v1.28.7 control plane: 50 hollow nodes in one
// process, each bootstrapping its own client certificate with a bootstrap token (one CSR per
// node, approved and signed by the controller manager), register and turn Ready with their
// Leases renewed; a Deployment of 100 pods spreads over them and reaches Running in the API;
// deleting it removes every pod; a 30 s API server outage ends with every node Ready again and
// its Lease renewed after it, the same process running; a deleted Node is registered again; and
// SIGTERM stops the process cleanly.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/controlplane.h"
#include "test/e2e/kubelet_process.h"

namespace kubelet::e2e {
namespace {

using nlohmann::json;

constexpr int kNodes = 50;
constexpr int kReplicas = 100;

class HollowNodesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<ControlPlane> cp = ControlPlane::FromEnv();
    KUBELET_CP_SKIP_OR_FAIL(cp);
    cp_.emplace(*std::move(cp));
    tag_ = absl::StrCat(::getpid());
    prefix_ = absl::StrCat("hollow-", tag_, "-");
    dir_ = MakeTempDir("hollow-nodes-e2e");
    ns_ = absl::StrCat("hollow-", tag_);
    ASSERT_EQ(Kubectl({"create", "namespace", ns_}).exit_code, 0);
    CreateBootstrapToken();
  }

  void TearDown() override {
    if (!cp_) return;
    if (hollow_) {
      hollow_->Signal(SIGTERM);
      (void)hollow_->Wait(absl::Seconds(60));
      hollow_.reset();
    }
    (void)cp_->Kubectl({"delete", "namespace", ns_, "--wait=false"});
    (void)cp_->Kubectl({"delete", "nodes", "-l", "hollow.e2e/fleet=" + tag_, "--wait=false"});
    if (!token_.id.empty()) cp_->DeleteBootstrapToken(token_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    // The next test gets a control plane that has recovered from the outage: the controller
    // manager makes a new namespace's default service account again.
    const std::string probe = ns_ + "-after";
    (void)cp_->Kubectl({"create", "namespace", probe});
    (void)cp_->WaitForDefaultServiceAccount(probe, absl::Seconds(120));
    (void)cp_->Kubectl({"delete", "namespace", probe, "--wait=false"});
  }

  CommandResult Kubectl(const std::vector<std::string>& args, std::string_view in = {}) {
    absl::StatusOr<CommandResult> r = cp_->Kubectl(args, in);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }

  // A bootstrap token whose group may create node client CSRs and have them approved, and the
  // kubeconfig carrying it.
  void CreateBootstrapToken() {
    absl::StatusOr<ControlPlane::BootstrapToken> t = cp_->CreateBootstrapToken(ns_);
    ASSERT_TRUE(t.ok()) << t.status();
    token_ = *t;
    bootstrap_ = dir_ + "/bootstrap.kubeconfig";
    WriteFile(bootstrap_, cp_->BootstrapKubeconfig(token_, cp_->server()));
  }

  void StartHollow() {
    // Every hollow node is tainted and labelled for this test, so no other test's pod lands on
    // them and this test's Deployment lands only there.
    WriteFile(dir_ + "/config.yaml",
              absl::StrCat("apiVersion: kubelet.config.k8s.io/v1beta1\n"
                           "kind: KubeletConfiguration\n"
                           "registerWithTaints:\n- key: hollow.e2e/fleet\n  value: \"",
                           tag_, "\"\n  effect: NoSchedule\n"));
    metrics_port_ = FreePort();
    absl::StatusOr<std::unique_ptr<KubeletProcess>> p = KubeletProcess::Start(
        KubeletBinary(),
        {"hollow", "--nodes", absl::StrCat(kNodes), "--name-prefix", prefix_,
         "--bootstrap-kubeconfig", bootstrap_, "--config", dir_ + "/config.yaml", "--root-dir",
         dir_ + "/root", "--node-labels", "hollow.e2e/fleet=" + tag_, "--healthz-port",
         absl::StrCat(metrics_port_), "--start-concurrency", "8"},
        {}, dir_ + "/hollow.log");
    ASSERT_TRUE(p.ok()) << p.status();
    hollow_ = *std::move(p);
  }

  // Our nodes by name.
  std::map<std::string, json> Nodes() {
    std::map<std::string, json> out;
    json list = cp_->KubectlJson({"get", "nodes", "-l", "hollow.e2e/fleet=" + tag_});
    for (const json& n : list.value("items", json::array())) {
      out[n["metadata"].value("name", "")] = n;
    }
    return out;
  }

  static bool Ready(const json& node) {
    for (const json& c : node["status"].value("conditions", json::array())) {
      if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
    }
    return false;
  }

  // How many of our nodes are Ready (and, when `after` is given, have a Ready heartbeat and a
  // Lease renewal later than it).
  int ReadyNodes(std::optional<absl::Time> after = std::nullopt) {
    std::map<std::string, absl::Time> renewed;
    if (after) {
      json leases = cp_->KubectlJson({"get", "leases", "-n", "kube-node-lease"});
      for (const json& l : leases.value("items", json::array())) {
        absl::Time t;
        std::string err;
        if (absl::ParseTime("%Y-%m-%dT%H:%M:%E*SZ", l["spec"].value("renewTime", ""), &t, &err)) {
          renewed[l["metadata"].value("name", "")] = t;
        }
      }
    }
    int ready = 0;
    for (const auto& [name, node] : Nodes()) {
      if (!Ready(node)) continue;
      if (after) {
        auto it = renewed.find(name);
        if (it == renewed.end() || it->second <= *after) continue;
      }
      ++ready;
    }
    return ready;
  }

  bool WaitUntil(const std::function<bool()>& pred, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      if (pred()) return true;
      absl::SleepFor(absl::Seconds(1));
    }
    return pred();
  }

  bool Alive() { return !hollow_->Wait(absl::ZeroDuration()).has_value(); }

  std::optional<ControlPlane> cp_;
  std::string tag_, prefix_, dir_, ns_, bootstrap_;
  ControlPlane::BootstrapToken token_;
  int metrics_port_ = 0;
  std::unique_ptr<KubeletProcess> hollow_;
};

TEST_F(HollowNodesTest, FiftyNodesRegisterRunADeploymentAndSurviveAnApiServerOutage) {
  StartHollow();
  ASSERT_TRUE(WaitUntil([&] { return ReadyNodes() == kNodes; }, absl::Seconds(240)))
      << ReadyNodes() << " of " << kNodes << " Ready\n"
      << hollow_->Log().substr(0, 20000);

  // Shared, not copied: at rest a node holds no thread of its own (its loops run on the
  // process's shared runner, its watches on the API client's I/O threads) and a few
  // descriptors (its connections). Threads that start with work (event senders after the
  // start-up events, start workers) leave when idle, and connections a burst opened close
  // after 90 s idle, so this waits for them.
  auto count = [&](const std::string& what) {
    int n = 0;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(
             absl::StrCat("/proc/", hollow_->pid(), "/", what), ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      ++n;
    }
    return n;
  };
  EXPECT_TRUE(WaitUntil([&] { return count("task") < kNodes; }, absl::Seconds(120)))
      << count("task") << " threads for " << kNodes << " nodes";
  EXPECT_TRUE(WaitUntil([&] { return count("fd") < 5 * kNodes; }, absl::Seconds(120)))
      << count("fd") << " open descriptors for " << kNodes << " nodes";

  // Each node its own identity: a CSR per node from the bootstrap token, and the certificate
  // it got names the node.
  json csrs = cp_->KubectlJson({"get", "csr"});
  int ours = 0;
  for (const json& c : csrs.value("items", json::array())) {
    if (c["spec"].value("username", "") == "system:bootstrap:" + token_.id) ++ours;
  }
  EXPECT_GE(ours, kNodes);
  const std::string pem = dir_ + "/root/" + prefix_ + "7/pki/kubelet-client-current.pem";
  absl::StatusOr<CommandResult> subject =
      RunCommand({"openssl", "x509", "-noout", "-subject", "-in", pem});
  ASSERT_TRUE(subject.ok()) << subject.status();
  EXPECT_TRUE(absl::StrContains(subject->out, "system:node:" + prefix_ + "7")) << subject->out;
  EXPECT_TRUE(absl::StrContains(subject->out, "system:nodes")) << subject->out;

  // What a node reports: the simulated machine and runtime, its own address.
  std::map<std::string, json> nodes = Nodes();
  ASSERT_EQ(nodes.size(), static_cast<size_t>(kNodes));
  const json& n0 = nodes[prefix_ + "0"];
  EXPECT_EQ(n0["status"]["capacity"].value("cpu", ""), "4");
  EXPECT_EQ(n0["status"]["capacity"].value("pods", ""), "110");
  EXPECT_EQ(n0["status"]["nodeInfo"].value("osImage", ""), "Hollow Node");
  EXPECT_EQ(n0["status"]["nodeInfo"].value("containerRuntimeVersion", ""), "hollow://1.0.0");
  std::set<std::string> addresses;
  for (const auto& [name, node] : nodes) {
    for (const json& a : node["status"].value("addresses", json::array())) {
      if (a.value("type", "") == "InternalIP") addresses.insert(a.value("address", ""));
    }
  }
  EXPECT_EQ(addresses.size(), static_cast<size_t>(kNodes));

  // A Deployment spreads over the nodes and runs.
  CommandResult r = Kubectl(
      {"apply", "-f", "-"},
      absl::StrCat("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: ",
                   ns_, "\nspec:\n  replicas: ", kReplicas,
                   "\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n"
                   "      labels: {app: web}\n    spec:\n      nodeSelector:\n"
                   "        hollow.e2e/fleet: \"",
                   tag_,
                   "\"\n      tolerations:\n      - {key: hollow.e2e/fleet, operator: Exists}\n"
                   "      automountServiceAccountToken: false\n      containers:\n"
                   "      - name: web\n        image: registry.invalid/web:1\n"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto running = [&](std::set<std::string>* on_nodes) {
    json pods = cp_->KubectlJson({"get", "pods", "-n", ns_, "-l", "app=web"});
    int n = 0;
    for (const json& p : pods.value("items", json::array())) {
      if (p["status"].value("phase", "") != "Running") continue;
      bool ready = false;
      for (const json& c : p["status"].value("conditions", json::array())) {
        if (c.value("type", "") == "Ready") ready = c.value("status", "") == "True";
      }
      if (!ready || p["status"].value("podIP", "").empty()) continue;
      ++n;
      if (on_nodes) on_nodes->insert(p["spec"].value("nodeName", ""));
    }
    return n;
  };
  ASSERT_TRUE(WaitUntil([&] { return running(nullptr) == kReplicas; }, absl::Seconds(240)))
      << running(nullptr) << " of " << kReplicas << " running";
  std::set<std::string> used;
  running(&used);
  EXPECT_GE(used.size(), static_cast<size_t>(kNodes / 2)) << "the pods did not spread";

  // Deleting it removes every pod (each node's kubelet stops them and confirms the deletion).
  ASSERT_EQ(Kubectl({"delete", "deployment", "web", "-n", ns_, "--wait=false"}).exit_code, 0);
  auto left = [&] {
    json pods = cp_->KubectlJson({"get", "pods", "-n", ns_});
    return pods.value("items", json::array()).size();
  };
  EXPECT_TRUE(WaitUntil([&] { return left() == 0; }, absl::Seconds(180))) << left() << " left";

  // A 30 s API server outage: the same process brings every node back, Lease renewed after.
  const pid_t pid = hollow_->pid();
  ASSERT_TRUE(cp_->StopApiServer().ok());
  ControlPlane::ApiServerRestart restart(*cp_);
  absl::SleepFor(absl::Seconds(30));
  ASSERT_TRUE(Alive()) << hollow_->Log().substr(0, 20000);
  absl::Status started = cp_->StartApiServer();
  restart.Release();
  ASSERT_TRUE(started.ok()) << started;
  const absl::Time back = absl::Now();
  EXPECT_TRUE(WaitUntil([&] { return ReadyNodes(back) == kNodes; }, absl::Seconds(180)))
      << ReadyNodes(back) << " of " << kNodes << " Ready with a Lease renewed since";
  EXPECT_EQ(hollow_->pid(), pid);
  ASSERT_TRUE(Alive());

  // A deleted Node is registered again, with a new uid.
  const std::string victim = prefix_ + "3";
  const std::string old_uid = Nodes()[victim]["metadata"].value("uid", "");
  ASSERT_EQ(Kubectl({"delete", "node", victim}).exit_code, 0);
  EXPECT_TRUE(WaitUntil(
      [&] {
        std::map<std::string, json> now = Nodes();
        auto it = now.find(victim);
        return it != now.end() && it->second["metadata"].value("uid", "") != old_uid &&
               Ready(it->second);
      },
      absl::Seconds(120)));

  // The process's metrics count the nodes.
  HttpResult metrics = HttpGet(metrics_port_, "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_TRUE(
      absl::StrContains(metrics.body, absl::StrCat("kubelet_hollow_nodes_started ", kNodes)))
      << metrics.body.substr(0, 2000);
  // ... their API requests by verb and resource (every node renewed its Lease more than once),
  // and the heap per node.
  auto sample = [&](absl::string_view series) -> double {
    for (absl::string_view line : absl::StrSplit(metrics.body, '\n')) {
      if (absl::ConsumePrefix(&line, series) && absl::ConsumePrefix(&line, " ")) {
        double v = 0;
        if (absl::SimpleAtod(line, &v)) return v;
      }
    }
    return -1;
  };
  EXPECT_GT(sample(R"(kubelet_hollow_api_requests_total{resource="leases",subresource="",)"
                   R"(verb="update"})"),
            kNodes);
  EXPECT_GT(sample(R"(kubelet_hollow_api_requests_total{resource="nodes",subresource="status",)"
                   R"(verb="patch"})"),
            0);
  EXPECT_GT(sample("kubelet_hollow_heap_bytes_per_node"), 0);

  // SIGTERM: every node stops, the process exits 0.
  hollow_->Signal(SIGTERM);
  std::optional<int> code = hollow_->Wait(absl::Seconds(60));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0) << hollow_->Log().substr(
      hollow_->Log().size() > 5000 ? hollow_->Log().size() - 5000 : 0);
  hollow_.reset();
}

}  // namespace
}  // namespace kubelet::e2e
