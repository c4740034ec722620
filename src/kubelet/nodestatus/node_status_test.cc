#include "kubelet/nodestatus/node_status.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apiclient/testing/fake_rest_client.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "kubelet/events/testing/fake_recorder.h"
#include "nlohmann/json.hpp"

namespace kubelet::nodestatus {
namespace {

using apiclient::testing::FakeRestClient;
using nlohmann::json;

constexpr char kNodes[] = "/api/v1/nodes";
constexpr char kLeases[] = "/apis/coordination.k8s.io/v1/leases";

NodeStatusOptions TestOptions() {
  NodeStatusOptions o;
  o.node_name = "node-a";
  o.node_ip = "10.1.2.3";
  o.kubelet_port = 10250;
  o.node_labels = {{"role", "worker"}};
  o.register_with_taints = {api::Taint{.key = "dedicated", .value = "x", .effect = "NoSchedule"}};
  o.provider_id = "fake://node-a";
  o.kubelet_version = "v1.28.15";
  o.machine = [] {
    MachineFacts m;
    m.capacity = {{"cpu", api::Quantity::FromValue(4)},
                  {"memory", *api::Quantity::Parse("8Gi")},
                  {"pods", api::Quantity::FromValue(110)},
                  {"ephemeral-storage", *api::Quantity::Parse("100Gi")}};
    m.allocatable = m.capacity;
    m.allocatable["memory"] = *api::Quantity::Parse("7Gi");
    m.machine_id = "mid";
    m.system_uuid = "uuid";
    m.boot_id = "boot";
    m.kernel_version = "6.1.0";
    m.os_image = "Debian GNU/Linux 12 (bookworm)";
    return m;
  };
  o.runtime_version = []() -> absl::StatusOr<std::string> { return "containerd://1.6.20"; };
  return o;
}

class NodeStatusTest : public ::testing::Test {
 protected:
  void Build() {
    NodeStatusOptions o = options_;
    o.readiness_errors = [this] { return errors_; };
    o.images = [this]() -> absl::StatusOr<std::vector<ImageInfo>> { return images_; };
    manager_ = NewNodeStatusManager(o, fake_, clock_);
  }
  json StoredNode() { return fake_->Get(kNodes, "", "node-a").value_or(json()); }
  int Count(const std::string& method, const std::string& path_contains) {
    int n = 0;
    for (const auto& r : fake_->requests()) {
      if (r.method == method && r.path.find(path_contains) != std::string::npos) ++n;
    }
    return n;
  }
  static json Condition(const json& node, const std::string& type) {
    for (const json& c : node["status"]["conditions"]) {
      if (c["type"] == type) return c;
    }
    return json();
  }

  NodeStatusOptions options_ = TestOptions();
  std::vector<std::string> errors_;
  std::vector<ImageInfo> images_;
  std::shared_ptr<FakeRestClient> fake_ = std::make_shared<FakeRestClient>();
  FakeClock clock_;
  std::unique_ptr<NodeStatusManager> manager_;
};

TEST_F(NodeStatusTest, RegistersNodeWithLabelsTaintsAndStatus) {
  images_ = {{{"small:1"}, {}, 10},
             {{"big:1", "big:latest"}, {"big@sha256:1"}, 1000},
             {{"mid:1"}, {}, 100}};
  Build();
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  EXPECT_TRUE(manager_->Registered());
  EXPECT_FALSE(manager_->NodeUID().empty());
  json n = StoredNode();
  ASSERT_TRUE(n.is_object());
  const json& labels = n["metadata"]["labels"];
  EXPECT_EQ(labels["kubernetes.io/hostname"], "node-a");
  EXPECT_EQ(labels["kubernetes.io/os"], "linux");
  EXPECT_EQ(labels["kubernetes.io/arch"], "amd64");
  EXPECT_EQ(labels["beta.kubernetes.io/os"], "linux");
  EXPECT_EQ(labels["beta.kubernetes.io/arch"], "amd64");
  EXPECT_EQ(labels["role"], "worker");
  EXPECT_EQ(n["metadata"]["annotations"][kAnnotationCMAD], "true");
  EXPECT_EQ(n["spec"]["providerID"], "fake://node-a");
  ASSERT_EQ(n["spec"]["taints"].size(), 1u);
  EXPECT_EQ(n["spec"]["taints"][0]["key"], "dedicated");
  EXPECT_FALSE(n["spec"].contains("unschedulable"));

  const json& st = n["status"];
  EXPECT_EQ(st["capacity"]["cpu"], "4");
  EXPECT_EQ(st["capacity"]["memory"], "8Gi");
  EXPECT_EQ(st["allocatable"]["memory"], "7Gi");
  EXPECT_EQ(st["capacity"]["pods"], "110");
  EXPECT_EQ(st["addresses"], json::parse(R"([{"type":"InternalIP","address":"10.1.2.3"},)"
                                         R"({"type":"Hostname","address":"node-a"}])"));
  EXPECT_EQ(st["daemonEndpoints"]["kubeletEndpoint"]["Port"], 10250);
  EXPECT_EQ(st["nodeInfo"]["machineID"], "mid");
  EXPECT_EQ(st["nodeInfo"]["bootID"], "boot");
  EXPECT_EQ(st["nodeInfo"]["systemUUID"], "uuid");
  EXPECT_EQ(st["nodeInfo"]["containerRuntimeVersion"], "containerd://1.6.20");
  EXPECT_EQ(st["nodeInfo"]["kubeletVersion"], "v1.28.15");
  EXPECT_EQ(st["nodeInfo"]["kubeProxyVersion"], "v1.28.15");
  EXPECT_EQ(st["nodeInfo"]["operatingSystem"], "linux");
  EXPECT_EQ(st["nodeInfo"]["osImage"], "Debian GNU/Linux 12 (bookworm)");
  ASSERT_EQ(st["images"].size(), 3u);
  EXPECT_EQ(st["images"][0]["names"], json::parse(R"(["big@sha256:1","big:1","big:latest"])"));
  EXPECT_EQ(st["images"][1]["sizeBytes"], 100);
  json ready = Condition(n, "Ready");
  EXPECT_EQ(ready["status"], "True");
  EXPECT_EQ(ready["reason"], "KubeletReady");
  EXPECT_EQ(ready["message"], "kubelet is posting ready status");
  EXPECT_EQ(Condition(n, "MemoryPressure")["reason"], "KubeletHasSufficientMemory");
  EXPECT_EQ(Condition(n, "DiskPressure")["reason"], "KubeletHasNoDiskPressure");
  EXPECT_EQ(Condition(n, "PIDPressure")["reason"], "KubeletHasSufficientPID");
  EXPECT_EQ(Condition(n, "PIDPressure")["status"], "False");
}

TEST_F(NodeStatusTest, ImagesLimitedToMaxImages) {
  options_.max_images = 2;
  images_ = {{{"a"}, {}, 1}, {{"b"}, {}, 3}, {{"c"}, {}, 2}};
  Build();
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  json images = StoredNode()["status"]["images"];
  ASSERT_EQ(images.size(), 2u);
  EXPECT_EQ(images[0]["names"][0], "b");
  EXPECT_EQ(images[1]["names"][0], "c");
}

TEST_F(NodeStatusTest, UnschedulableNodeIsTainted) {
  options_.register_schedulable = false;
  options_.register_with_taints.clear();
  api::Node n = InitialNode(options_);
  EXPECT_TRUE(n.spec.unschedulable);
  ASSERT_EQ(n.spec.taints.size(), 1u);
  EXPECT_EQ(n.spec.taints[0].key, "node.kubernetes.io/unschedulable");
  EXPECT_EQ(n.spec.taints[0].effect, "NoSchedule");
}

TEST_F(NodeStatusTest, NotReadyWithUpstreamMessages) {
  errors_ = {"container runtime is down"};
  Build();
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  json ready = Condition(StoredNode(), "Ready");
  EXPECT_EQ(ready["status"], "False");
  EXPECT_EQ(ready["reason"], "KubeletNotReady");
  EXPECT_EQ(ready["message"], "container runtime is down");
  const std::string first_transition = ready["lastTransitionTime"];

  errors_ = {"container runtime is down", "PLEG is not healthy: pleg has yet to be successful"};
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  ready = Condition(StoredNode(), "Ready");
  EXPECT_EQ(ready["message"],
            "[container runtime is down, PLEG is not healthy: pleg has yet to be successful]");
  EXPECT_EQ(ready["lastTransitionTime"], first_transition);

  errors_.clear();
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  ready = Condition(StoredNode(), "Ready");
  EXPECT_EQ(ready["status"], "True");
  EXPECT_NE(ready["lastTransitionTime"], first_transition);
  EXPECT_EQ(ready["lastTransitionTime"], ready["lastHeartbeatTime"]);
}

TEST_F(NodeStatusTest, ConditionTransitionsAreRecordedAsNodeEvents) {
  events::FakeRecorder recorder;
  options_.recorder = &recorder;
  Build();
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  // Registration: the pressure conditions are new; a new Ready=True condition records
  // NodeReady (what upstream's node shows once its first runtime check passed).
  EXPECT_EQ(recorder.Strings(),
            (std::vector<std::string>{
                "Normal NodeHasSufficientMemory Node node-a status is now: NodeHasSufficientMemory",
                "Normal NodeHasNoDiskPressure Node node-a status is now: NodeHasNoDiskPressure",
                "Normal NodeHasSufficientPID Node node-a status is now: NodeHasSufficientPID",
                "Normal NodeReady Node node-a status is now: NodeReady"}));
  const events::ObjectReference ref = recorder.Events()[0].object;
  EXPECT_EQ(ref.kind, "Node");
  EXPECT_EQ(ref.name, "node-a");
  EXPECT_EQ(ref.uid, "node-a");
  EXPECT_EQ(ref.namespace_, "");
  EXPECT_EQ(ref.api_version, "");

  // Nothing changed: no event.
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  EXPECT_EQ(recorder.Events().size(), 4u);

  errors_ = {"container runtime is down"};
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  errors_.clear();
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  auto strings = recorder.Strings();
  ASSERT_EQ(strings.size(), 6u);
  EXPECT_EQ(strings[4], "Normal NodeNotReady Node node-a status is now: NodeNotReady");
  EXPECT_EQ(strings[5], "Normal NodeReady Node node-a status is now: NodeReady");
}

TEST_F(NodeStatusTest, ExistingNodeIsReconciled) {
  fake_->Upsert(kNodes, json::parse(R"({"apiVersion":"v1","kind":"Node","metadata":{
      "name":"node-a","uid":"u-1","labels":{"kubernetes.io/hostname":"old","custom":"kept"}},
      "spec":{"podCIDR":"10.9.0.0/24"}})"));
  Build();
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  EXPECT_TRUE(manager_->Registered());
  json n = StoredNode();
  EXPECT_EQ(n["metadata"]["labels"]["kubernetes.io/hostname"], "node-a");
  EXPECT_EQ(n["metadata"]["labels"]["kubernetes.io/os"], "linux");
  EXPECT_EQ(n["metadata"]["labels"]["custom"], "kept");
  EXPECT_EQ(n["metadata"]["annotations"][kAnnotationCMAD], "true");
  EXPECT_EQ(n["spec"]["podCIDR"], "10.9.0.0/24");
  EXPECT_EQ(Condition(n, "Ready")["status"], "True");
  EXPECT_EQ(manager_->NodeUID(), n["metadata"]["uid"]);
}

TEST_F(NodeStatusTest, RegistrationFailsWhileApiServerIsDown) {
  Build();
  fake_->InjectFault({.method = "POST", .path_contains = "/nodes"});
  EXPECT_FALSE(manager_->SyncNodeStatus().ok());
  EXPECT_FALSE(manager_->Registered());
  EXPECT_TRUE(manager_->SyncNodeStatus().ok());
  EXPECT_TRUE(manager_->Registered());
}

TEST_F(NodeStatusTest, StatusSentOnlyWhenChangedOrAtReportFrequency) {
  Build();
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  const int patches = Count("PATCH", "/status");
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  EXPECT_EQ(Count("PATCH", "/status"), patches);  // nothing changed

  images_ = {{{"new:1"}, {}, 5}};
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  EXPECT_EQ(Count("PATCH", "/status"), patches + 1);  // changed
  EXPECT_EQ(StoredNode()["status"]["images"][0]["names"][0], "new:1");

  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  EXPECT_EQ(Count("PATCH", "/status"), patches + 1);

  const std::string heartbeat = Condition(StoredNode(), "Ready")["lastHeartbeatTime"];
  clock_.Advance(absl::Minutes(5));
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  EXPECT_EQ(Count("PATCH", "/status"), patches + 2);  // report frequency
  EXPECT_NE(Condition(StoredNode(), "Ready")["lastHeartbeatTime"], heartbeat);
}

TEST_F(NodeStatusTest, VolumesInUseAreReportedAndConfirmed) {
  std::vector<std::string> in_use = {"kubernetes.io/csi/d^a", "kubernetes.io/csi/d^b"};
  std::vector<std::vector<std::string>> reported;
  options_.volumes_in_use = [&] { return in_use; };
  options_.volumes_reported = [&](const std::vector<std::string>& v) { reported.push_back(v); };
  Build();
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  EXPECT_EQ(StoredNode()["status"]["volumesInUse"],
            json::array({"kubernetes.io/csi/d^a", "kubernetes.io/csi/d^b"}));
  ASSERT_FALSE(reported.empty());
  EXPECT_EQ(reported.back(), in_use);

  // The last volume goes: the list leaves the Node, and the plugins hear it is gone.
  in_use.clear();
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  EXPECT_FALSE(StoredNode()["status"].contains("volumesInUse")) << StoredNode()["status"].dump();
  EXPECT_TRUE(reported.back().empty());
}

TEST_F(NodeStatusTest, ConflictIsRetried) {
  Build();
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  fake_->InjectFault(
      {.method = "PATCH", .path_contains = "/status", .code = 409, .reason = "Conflict"});
  errors_ = {"container runtime is down"};
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  EXPECT_EQ(Condition(StoredNode(), "Ready")["status"], "False");

  fake_->InjectFault({.method = "PATCH",
                      .path_contains = "/status",
                      .code = 409,
                      .reason = "Conflict",
                      .times = 5});
  errors_.clear();
  clock_.Advance(absl::Seconds(10));
  EXPECT_FALSE(manager_->SyncNodeStatus().ok());  // 5 tries, all conflicts
  EXPECT_EQ(Condition(StoredNode(), "Ready")["status"], "False");
}

TEST_F(NodeStatusTest, FirstTryReadsTheApiServerCacheRetriesReadEtcd) {
  Build();
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  fake_->ClearRequests();
  fake_->InjectFault(
      {.method = "PATCH", .path_contains = "/status", .code = 409, .reason = "Conflict"});
  errors_ = {"container runtime is down"};
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  std::vector<std::string> gets;
  for (const auto& r : fake_->requests()) {
    if (r.method == "GET" && r.path.find("/nodes/") != std::string::npos) gets.push_back(r.path);
  }
  EXPECT_EQ(gets, (std::vector<std::string>{"/api/v1/nodes/node-a?resourceVersion=0",
                                            "/api/v1/nodes/node-a"}));
}

TEST_F(NodeStatusTest, ANodeTheApiServersCacheHasNotSeenYetIsNotRegisteredAgain) {
  Build();
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  const std::string uid = manager_->NodeUID();
  fake_->ClearRequests();
  // The cache answers 404 for a Node registered a moment ago; etcd has it.
  fake_->InjectFault(
      {.method = "GET", .path_contains = "resourceVersion=0", .code = 404, .reason = "NotFound"});
  errors_ = {"container runtime is down"};
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  EXPECT_TRUE(manager_->Registered());
  EXPECT_EQ(manager_->NodeUID(), uid);
  EXPECT_EQ(Count("POST", kNodes), 0);
  EXPECT_EQ(Condition(StoredNode(), "Ready")["status"], "False");
  std::vector<std::string> gets;
  for (const auto& r : fake_->requests()) {
    if (r.method == "GET" && r.path.find("/nodes/") != std::string::npos) gets.push_back(r.path);
  }
  EXPECT_EQ(gets, (std::vector<std::string>{"/api/v1/nodes/node-a?resourceVersion=0",
                                            "/api/v1/nodes/node-a"}));
}

TEST_F(NodeStatusTest, FirstTryStartsFromTheWatchedNode) {
  std::optional<api::Node> watched;
  options_.watched_node = [&] { return watched; };
  Build();
  // Not seen by the watch yet: a GET.
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  fake_->ClearRequests();
  auto decoded = api::FromJson<api::Node>(StoredNode());
  ASSERT_TRUE(decoded.ok());
  watched = *decoded;
  // Unchanged: no request at all for the Node.
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  EXPECT_EQ(Count("GET", "/nodes/"), 0);
  EXPECT_EQ(Count("PATCH", "/status"), 0);
  // A change is patched, still without a GET.
  errors_ = {"container runtime is down"};
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  EXPECT_EQ(Count("GET", "/nodes/"), 0);
  EXPECT_EQ(Count("PATCH", "/status"), 1);
  EXPECT_EQ(Condition(StoredNode(), "Ready")["status"], "False");
  // The Node was deleted (the watch saw it go): a GET finds it gone, it is registered again.
  watched.reset();
  ASSERT_TRUE(fake_->Remove(kNodes, "", "node-a"));
  clock_.Advance(absl::Seconds(10));
  EXPECT_TRUE(absl::IsNotFound(manager_->SyncNodeStatus()));
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  EXPECT_TRUE(StoredNode().is_object());
}

TEST_F(NodeStatusTest, DeletedNodeIsRegisteredAgain) {
  Build();
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  const std::string uid = manager_->NodeUID();
  ASSERT_TRUE(fake_->Remove(kNodes, "", "node-a"));
  clock_.Advance(absl::Seconds(10));
  absl::Status st = manager_->SyncNodeStatus();
  EXPECT_TRUE(absl::IsNotFound(st)) << st;
  EXPECT_FALSE(manager_->Registered());
  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  EXPECT_TRUE(manager_->Registered());
  json n = StoredNode();
  ASSERT_TRUE(n.is_object());
  EXPECT_NE(manager_->NodeUID(), uid);
  EXPECT_EQ(Condition(n, "Ready")["status"], "True");
}

TEST_F(NodeStatusTest, LeaseCreatedRenewedAndOwned) {
  Build();
  // Before registration: created without an owner.
  ASSERT_TRUE(manager_->RenewLease().ok());
  auto lease = fake_->Get(kLeases, "kube-node-lease", "node-a");
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ((*lease)["spec"]["holderIdentity"], "node-a");
  EXPECT_EQ((*lease)["spec"]["leaseDurationSeconds"], 40);
  EXPECT_FALSE((*lease)["metadata"].contains("ownerReferences"));
  const std::string first = (*lease)["spec"]["renewTime"];

  ASSERT_TRUE(manager_->SyncNodeStatus().ok());
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->RenewLease().ok());
  lease = fake_->Get(kLeases, "kube-node-lease", "node-a");
  EXPECT_NE((*lease)["spec"]["renewTime"], first);
  ASSERT_EQ((*lease)["metadata"]["ownerReferences"].size(), 1u);
  const json& owner = (*lease)["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "Node");
  EXPECT_EQ(owner["apiVersion"], "v1");
  EXPECT_EQ(owner["name"], "node-a");
  EXPECT_EQ(owner["uid"], manager_->NodeUID());
  // Renewal needs no GET once the Lease is known.
  const int gets = Count("GET", "/leases/");
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->RenewLease().ok());
  EXPECT_EQ(Count("GET", "/leases/"), gets);
}

TEST_F(NodeStatusTest, LeaseConflictAndDeletionRecover) {
  Build();
  ASSERT_TRUE(manager_->RenewLease().ok());
  // Someone else wrote it: 409, re-read, renewed.
  auto lease = fake_->Get(kLeases, "kube-node-lease", "node-a");
  (*lease)["spec"]["holderIdentity"] = "other";
  fake_->Upsert(kLeases, *lease);
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->RenewLease().ok());
  lease = fake_->Get(kLeases, "kube-node-lease", "node-a");
  EXPECT_EQ((*lease)["spec"]["holderIdentity"], "node-a");
  // Deleted (garbage collected with its Node): created again.
  ASSERT_TRUE(fake_->Remove(kLeases, "kube-node-lease", "node-a"));
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(manager_->RenewLease().ok());
  EXPECT_TRUE(fake_->Get(kLeases, "kube-node-lease", "node-a").has_value());
  // API server down: an error (the loop backs off).
  fake_->InjectFault({.method = "PUT", .path_contains = "/leases/"});
  EXPECT_FALSE(manager_->RenewLease().ok());
  EXPECT_TRUE(manager_->RenewLease().ok());
}

TEST_F(NodeStatusTest, LoopRegistersAndStopsPromptly) {
  RealClock real;
  NodeStatusOptions o = options_;
  auto manager = NewNodeStatusManager(o, fake_, real);
  manager->Start();
  for (int i = 0; i < 200 && !manager->Registered(); ++i) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_TRUE(manager->Registered());
  for (int i = 0; i < 200 && !fake_->Get(kLeases, "kube-node-lease", "node-a"); ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_TRUE(fake_->Get(kLeases, "kube-node-lease", "node-a").has_value());
  absl::Time start = absl::Now();
  manager->Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
}

}  // namespace
}  // namespace kubelet::nodestatus

namespace kubelet::nodestatus {
namespace {

TEST(RuntimeVersionString, ParsedAsUpstreamPrintsIt) {
  EXPECT_EQ(RuntimeVersionString("containerd", "1.7.13"), "containerd://1.7.13");
  EXPECT_EQ(RuntimeVersionString("containerd", "v1.7.13"), "containerd://1.7.13");
  // Debian's containerd: not semantic, so generic, and the rest dropped.
  EXPECT_EQ(RuntimeVersionString("containerd", "1.6.20~ds1"), "containerd://1.6.20");
  EXPECT_EQ(RuntimeVersionString("cri-o", "1.28.11"), "cri-o://1.28.11");
  EXPECT_EQ(RuntimeVersionString("x", "1.2.3-rc.1+build.5"), "x://1.2.3-rc.1+build.5");
  EXPECT_EQ(RuntimeVersionString("x", "1.2"), "x://1.2");
  EXPECT_EQ(RuntimeVersionString("x", "1.2.3.4"), "x://1.2.3.4");
  EXPECT_EQ(RuntimeVersionString("x", "1.02.3"), "x://1.2.3");  // generic: only the first
  EXPECT_EQ(RuntimeVersionString("x", "01.2.3"), "x://Unknown");
  EXPECT_EQ(RuntimeVersionString("x", "1"), "x://Unknown");
  EXPECT_EQ(RuntimeVersionString("x", "devel"), "x://Unknown");
  EXPECT_EQ(RuntimeVersionString("x", ""), "x://Unknown");
}

}  // namespace
}  // namespace kubelet::nodestatus
