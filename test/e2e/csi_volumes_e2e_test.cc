// Persistent volumes through CSI, end to end: the real csi-driver-host-path (requiring attach),
// node-driver-registrar, external-provisioner and external-attacher, the real v1.28.7 control
// plane (the attach/detach, PV binder and ephemeral volume controllers of the controller
// manager, the scheduler) and our kubelet:
//  * a StatefulSet of 2 writes to its claims (WaitForFirstConsumer), is deleted (nothing stays
//    mounted, staged or attached; volumesInUse empties) and recreated, and reads back its data;
//  * a missing claim, an unbound claim and a driver that is not registered each hold their pod
//    with upstream's FailedMount messages;
//  * a generic ephemeral volume (Immediate) comes and goes with its pod;
//  * a local PV is used by a pod the scheduler pins to the node by the PV's node affinity;
//  * the kubelet SIGKILLed with 10 CSI-backed pods running and restarted: nothing remounted,
//    nothing restarted, and a pod deleted while it was down is cleaned up;
//  * the driver's node plugin restarts while pods use its volumes: they keep their data, a new
//    pod's mount waits for the driver and then succeeds.
// The CRI-O variant runs the StatefulSet scenario.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "test/e2e/csi_fixture.h"
#include "test/e2e/http_client.h"

namespace kubelet::e2e {
namespace {

// Whether a line of the exposition starts with `prefix` and holds every one of `parts`.
bool HasMetricLine(const std::string& body, const std::string& prefix,
                   const std::vector<std::string>& parts) {
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    if (std::all_of(parts.begin(), parts.end(),
                    [&](const std::string& p) { return absl::StrContains(line, p); })) {
      return true;
    }
  }
  return false;
}

class CsiVolumesTest : public CsiTest {
 protected:
  // The driver requires attach: CSIDriver, kubelet, driver + registrar, provisioner + attacher
  // and the two StorageClasses.
  void StartStorage() {
    ApplyCSIDriver(/*attach_required=*/true);
    if (HasFatalFailure()) return;
    StartKubelet({"--kubeconfig", kubeconfig_});
    if (HasFatalFailure()) return;
    ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok());
    StartDriver(/*attach=*/true);
    if (HasFatalFailure()) return;
    StartRegistrar();
    if (HasFatalFailure()) return;
    WaitDriverRegistered();
    if (HasFatalFailure()) return;
    StartControllers();
    if (HasFatalFailure()) return;
    for (const char* mode : {"WaitForFirstConsumer", "Immediate"}) {
      const std::string name = std::string(mode) == "Immediate" ? "csi-immediate" : "csi-wffc";
      ASSERT_TRUE(Apply(absl::StrCat("apiVersion: storage.k8s.io/v1\nkind: StorageClass\n"
                                     "metadata:\n  name: ",
                                     name, "\nprovisioner: ", kDriver,
                                     "\nreclaimPolicy: Delete\nvolumeBindingMode: ", mode, "\n"))
                      .ok());
    }
  }

  void TearDown() override {
    if (cp_) {
      (void)cp_->Kubectl({"delete", "statefulset", "--all", "--wait=false"});
      (void)cp_->Kubectl({"delete", "pvc", "--all", "--wait=false"});
    }
    CsiTest::TearDown();
    if (cp_) {
      (void)cp_->Kubectl({"delete", "pv", "--all", "--wait=false"});
      (void)cp_->Kubectl({"delete", "volumeattachments", "--all", "--wait=false"});
      (void)cp_->Kubectl(
          {"delete", "storageclass", "csi-wffc", "csi-immediate", "local-disk", "--wait=false"});
      (void)cp_->Kubectl({"delete", "csidriver", kDriver, "--wait=false"});
    }
  }

  // A StatefulSet `name` of `replicas` busybox pods on this node, each with a claim "data"
  // (csi-wffc) mounted at /data, running `body`.
  std::string StatefulSet(const std::string& name, int replicas, const std::string& body) {
    return absl::StrCat(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: ", name,
        "\nspec:\n  serviceName: ", name, "\n  replicas: ", replicas,
        "\n  podManagementPolicy: Parallel\n  selector:\n    matchLabels:\n      app: ", name,
        "\n  template:\n    metadata:\n      labels:\n        app: ", name,
        "\n    spec:\n      terminationGracePeriodSeconds: 2\n      nodeSelector:\n"
        "        kubernetes.io/hostname: ",
        node_, "\n      containers:\n      - name: main\n        image: ", BusyboxImage(),
        "\n        command: [\"sh\", \"-c\", ", body,
        "]\n        volumeMounts:\n        - name: data\n          mountPath: /data\n"
        "  volumeClaimTemplates:\n  - metadata:\n      name: data\n    spec:\n"
        "      accessModes: [ReadWriteOnce]\n      storageClassName: csi-wffc\n"
        "      resources:\n        requests:\n          storage: 1Mi\n");
  }

  bool Running(const std::string& pod) {
    json p = GetPod(pod);
    return p.is_object() && p["status"].value("phase", "") == "Running";
  }
  void WaitRunning(const std::vector<std::string>& pods, absl::Duration timeout) {
    ASSERT_TRUE(WaitUntil(
        [&] {
          return std::all_of(pods.begin(), pods.end(), [&](const auto& p) { return Running(p); });
        },
        timeout))
        << "pods: " << GetJson({"get", "pods"}).dump().substr(0, 6000)
        << "\nevents: " << GetJson({"get", "events"}).dump().substr(0, 6000)
        << "\nkubelet log tail:\n"
        << KubeletLogTail();
  }

  std::string Uid(const std::string& pod) { return GetPod(pod)["metadata"].value("uid", ""); }
  std::string VolumeOf(const std::string& claim) {
    return GetJson({"get", "pvc", claim})["spec"].value("volumeName", "");
  }
  // Where the pod's PV-backed CSI volume is published on the host.
  std::string Published(const std::string& pod, const std::string& pv) {
    return Root() + "/pods/" + Uid(pod) + "/volumes/kubernetes.io~csi/" + pv + "/mount";
  }
  // VolumeAttachments of this node.
  std::vector<json> Attachments() {
    std::vector<json> out;
    json list = GetJson({"get", "volumeattachments"});
    for (const json& va : list.value("items", json::array())) {
      if (va["spec"].value("nodeName", "") == node_) out.push_back(va);
    }
    return out;
  }
  json VolumesInUse() { return GetNode()["status"].value("volumesInUse", json::array()); }
  // Staged volumes of the driver (dirs below plugins/kubernetes.io/csi/<driver>).
  std::vector<std::string> Staged() {
    std::vector<std::string> out;
    const std::string dir = Root() + "/plugins/kubernetes.io/csi/" + kDriver;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      out.push_back(e.path().string());
    }
    return out;
  }
  // FailedMount messages of a pod.
  std::vector<std::string> FailedMounts(const std::string& pod) {
    std::vector<std::string> out;
    json list = GetJson({"get", "events", "--field-selector",
                         "involvedObject.name=" + pod + ",reason=FailedMount"});
    for (const json& e : list.value("items", json::array())) out.push_back(e.value("message", ""));
    return out;
  }
  bool HasFailedMount(const std::string& pod, const std::string& text) {
    for (const std::string& m : FailedMounts(pod)) {
      if (absl::StrContains(m, text)) return true;
    }
    return false;
  }
  // A bare pod pinned to this node by nodeName (no scheduler), mounting claim `claim`.
  std::string ClaimPod(const std::string& name, const std::string& claim) {
    PodParts parts;
    parts.spec = absl::StrCat("  nodeName: ", node_,
                              "\n  volumes:\n  - name: data\n    persistentVolumeClaim:\n"
                              "      claimName: ",
                              claim, "\n");
    parts.container = "    volumeMounts:\n    - name: data\n      mountPath: /data\n";
    return BusyboxPod(name, kSleepForever, parts);
  }
};

TEST_F(CsiVolumesTest, AStatefulSetKeepsItsDataAcrossRecreation) {
  StartStorage();
  if (HasFatalFailure()) return;
  const std::string body =
      "\"if [ -f /data/id ]; then cp /data/id /data/readback; else hostname > /data/id; fi; "
      "trap 'exit 0' TERM; while true; do sleep 1; done\"";
  ASSERT_TRUE(Apply(StatefulSet("web", 2, body)).ok());
  WaitRunning({"web-0", "web-1"}, absl::Seconds(180));
  if (HasFatalFailure()) return;
  const std::string pv0 = VolumeOf("data-web-0"), pv1 = VolumeOf("data-web-1");
  ASSERT_FALSE(pv0.empty());
  ASSERT_TRUE(WaitUntil([&] { return ReadFile(Published("web-0", pv0) + "/id") == "web-0\n"; },
                        absl::Seconds(30)));
  EXPECT_EQ(ReadFile(Published("web-1", pv1) + "/id"), "web-1\n");
  // Attached through the controller and the attacher, reported in use, staged once each.
  std::vector<json> vas = Attachments();
  ASSERT_EQ(vas.size(), 2u);
  for (const json& va : vas) EXPECT_TRUE(va["status"].value("attached", false)) << va.dump();
  EXPECT_EQ(VolumesInUse().size(), 2u) << GetNode()["status"].dump();
  EXPECT_EQ(Staged().size(), 2u);
  // The claim's volume in /stats/summary (by its pod volume name, with pvcRef and the driver's
  // figures) and on /metrics.
  ASSERT_TRUE(WaitUntil(
      [&] {
        HttpAnswer a = KubeletEndpoint::Https(api_port_).Get("/stats/summary");
        json summary = json::parse(a.body, nullptr, false);
        if (a.code != 200 || !summary.is_object()) return false;
        for (const json& p : summary.value("pods", json::array())) {
          if (p["podRef"].value("name", "") != "web-0") continue;
          for (const json& v : p.value("volume", json::array())) {
            if (v.value("name", "") == "data" && v.contains("pvcRef") &&
                v["pvcRef"].value("name", "") == "data-web-0" &&
                v["pvcRef"].value("namespace", "") == "default" &&
                v.value("capacityBytes", 0.0) > 0 && v.contains("usedBytes")) {
              return true;
            }
          }
        }
        return false;
      },
      absl::Seconds(60)))
      << KubeletEndpoint::Https(api_port_).Get("/stats/summary").body.substr(0, 4000);
  const std::string metrics = KubeletEndpoint::Https(api_port_).Get("/metrics").body;
  EXPECT_TRUE(HasMetricLine(metrics, "kubelet_volume_stats_capacity_bytes{",
                            {"namespace=\"default\"", "persistentvolumeclaim=\"data-web-0\""}));
  EXPECT_TRUE(HasMetricLine(metrics, "kubelet_volume_stats_used_bytes{",
                            {"persistentvolumeclaim=\"data-web-1\""}));
  EXPECT_TRUE(HasMetricLine(metrics, "csi_operations_seconds_count{",
                            {"driver_name=\"hostpath.csi.k8s.io\"", "grpc_status_code=\"OK\"",
                             "method_name=\"/csi.v1.Node/NodePublishVolume\""}));
  EXPECT_TRUE(HasMetricLine(metrics, "storage_operation_duration_seconds_count{",
                            {"operation_name=\"volume_mount\"", "status=\"success\"",
                             "volume_plugin=\"kubernetes.io/csi:hostpath.csi.k8s.io\""}));

  json vd = json::parse(ReadFile(Root() + "/pods/" + Uid("web-0") + "/volumes/kubernetes.io~csi/" +
                                 pv0 + "/vol_data.json"),
                        nullptr, false);
  EXPECT_EQ(vd.value("volumeLifecycleMode", ""), "Persistent");
  EXPECT_EQ(vd.value("specVolID", ""), pv0);

  // Deleted: unpublished, unstaged, no longer in use, detached.
  ASSERT_TRUE(cp_->Kubectl({"delete", "statefulset", "web", "--wait=false"}).ok());
  ASSERT_TRUE(WaitUntil([&] { return PodGone("web-0") && PodGone("web-1"); }, absl::Seconds(90)))
      << KubeletLogTail();
  ASSERT_TRUE(WaitUntil([&] { return Attachments().empty(); }, absl::Seconds(120)))
      << GetNode()["status"].dump() << "\n"
      << KubeletLogTail();
  EXPECT_TRUE(MountsUnderRoot().empty());
  EXPECT_TRUE(Staged().empty());
  EXPECT_TRUE(VolumesInUse().empty());

  // Recreated: the same claims, the data written before.
  ASSERT_TRUE(Apply(StatefulSet("web", 2, body)).ok());
  WaitRunning({"web-0", "web-1"}, absl::Seconds(180));
  if (HasFatalFailure()) return;
  EXPECT_EQ(VolumeOf("data-web-0"), pv0);
  ASSERT_TRUE(
      WaitUntil([&] { return ReadFile(Published("web-0", pv0) + "/readback") == "web-0\n"; },
                absl::Seconds(30)));
  EXPECT_EQ(ReadFile(Published("web-1", pv1) + "/readback"), "web-1\n");
}

TEST_F(CsiVolumesTest, UnusableClaimsHoldThePodWithUpstreamMessages) {
  StartStorage();
  if (HasFatalFailure()) return;
  // No such claim.
  ASSERT_TRUE(Apply(ClaimPod("no-claim", "missing")).ok());
  // A claim nothing will bind (its class does not exist).
  ASSERT_TRUE(Apply("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: unbound\n"
                    "spec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: nothing\n"
                    "  resources:\n    requests:\n      storage: 1Mi\n")
                  .ok());
  ASSERT_TRUE(Apply(ClaimPod("unbound-claim", "unbound")).ok());
  // A claim bound to a PV of a driver that never registered.
  ASSERT_TRUE(
      Apply(absl::StrCat("apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: absent-pv\n"
                         "spec:\n  capacity:\n    storage: 1Mi\n  accessModes: [ReadWriteOnce]\n"
                         "  storageClassName: \"\"\n  claimRef:\n    namespace: default\n"
                         "    name: absent\n  csi:\n    driver: absent.csi.example.com\n"
                         "    volumeHandle: h-1\n"))
          .ok());
  ASSERT_TRUE(Apply("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: absent\n"
                    "spec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: \"\"\n"
                    "  volumeName: absent-pv\n  resources:\n    requests:\n      storage: 1Mi\n")
                  .ok());
  ASSERT_TRUE(Apply(ClaimPod("absent-driver", "absent")).ok());

  ASSERT_TRUE(WaitUntil(
      [&] {
        return HasFailedMount("no-claim",
                              "failed to process volumes=[data]: error processing PVC "
                              "default/missing: failed to fetch PVC from API server: "
                              "persistentvolumeclaims \"missing\" not found") &&
               HasFailedMount("unbound-claim",
                              "failed to process volumes=[data]: error processing PVC "
                              "default/unbound: PVC is not bound") &&
               HasFailedMount("absent-driver",
                              "MountVolume.SetUp failed for volume \"data\" : driver name "
                              "absent.csi.example.com not found in the list of registered CSI "
                              "drivers");
      },
      absl::Seconds(90)))
      << "no-claim: " << absl::StrJoin(FailedMounts("no-claim"), " | ")
      << "\nunbound-claim: " << absl::StrJoin(FailedMounts("unbound-claim"), " | ")
      << "\nabsent-driver: " << absl::StrJoin(FailedMounts("absent-driver"), " | ");
  // The pods wait: nothing started, nothing mounted.
  for (const char* pod : {"no-claim", "unbound-claim", "absent-driver"}) {
    json p = GetPod(pod);
    EXPECT_EQ(p["status"].value("phase", ""), "Pending") << p.dump();
    EXPECT_FALSE(p["status"].contains("containerStatuses") &&
                 p["status"]["containerStatuses"][0]["state"].contains("running"));
  }
  // Their other volumes (the service account token) are set up; nothing of CSI is.
  for (const std::string& m : MountsUnderRoot()) {
    EXPECT_EQ(m.find("csi"), std::string::npos) << m;
  }
}

TEST_F(CsiVolumesTest, AGenericEphemeralVolumeComesAndGoesWithItsPod) {
  StartStorage();
  if (HasFatalFailure()) return;
  PodParts parts;
  parts.spec =
      absl::StrCat("  nodeSelector:\n    kubernetes.io/hostname: ", node_,
                   "\n  volumes:\n  - name: scratch\n    ephemeral:\n      volumeClaimTemplate:\n"
                   "        spec:\n          accessModes: [ReadWriteOnce]\n"
                   "          storageClassName: csi-immediate\n"
                   "          resources:\n            requests:\n              storage: 1Mi\n");
  parts.container = "    volumeMounts:\n    - name: scratch\n      mountPath: /scratch\n";
  ASSERT_TRUE(Apply(BusyboxPod("eph",
                               "\"echo hi > /scratch/f; trap 'exit 0' TERM; "
                               "while true; do sleep 1; done\"",
                               parts))
                  .ok());
  WaitRunning({"eph"}, absl::Seconds(180));
  if (HasFatalFailure()) return;
  json pvc = GetJson({"get", "pvc", "eph-scratch"});
  ASSERT_TRUE(pvc.is_object());
  EXPECT_EQ(pvc["metadata"]["ownerReferences"][0].value("kind", ""), "Pod");
  const std::string pv = pvc["spec"].value("volumeName", "");
  ASSERT_TRUE(WaitUntil([&] { return ReadFile(Published("eph", pv) + "/f") == "hi\n"; },
                        absl::Seconds(30)));

  ASSERT_TRUE(cp_->Kubectl({"delete", "pod", "eph", "--wait=false"}).ok());
  ASSERT_TRUE(WaitUntil(
      [&] {
        return PodGone("eph") && !GetJson({"get", "pvc", "eph-scratch"}).is_object() &&
               !GetJson({"get", "pv", pv}).is_object();
      },
      absl::Seconds(120)))
      << KubeletLogTail();
  ASSERT_TRUE(WaitUntil([&] { return Attachments().empty(); }, absl::Seconds(60)));
  EXPECT_TRUE(MountsUnderRoot().empty());
  EXPECT_TRUE(Staged().empty());
}

TEST_F(CsiVolumesTest, ALocalVolumeIsUsedWherePinnedByNodeAffinity) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok());
  const std::string disk = dir_ + "/local-disk";
  std::filesystem::create_directories(disk);
  ASSERT_TRUE(Apply("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n"
                    "  name: local-disk\nprovisioner: kubernetes.io/no-provisioner\n"
                    "volumeBindingMode: WaitForFirstConsumer\n")
                  .ok());
  ASSERT_TRUE(
      Apply(absl::StrCat("apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: local-", node_,
                         "\nspec:\n  capacity:\n    storage: 1Gi\n  accessModes: [ReadWriteOnce]\n"
                         "  storageClassName: local-disk\n  local:\n    path: ",
                         disk,
                         "\n  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n"
                         "      - matchExpressions:\n        - key: kubernetes.io/hostname\n"
                         "          operator: In\n          values: [",
                         node_, "]\n"))
          .ok());
  ASSERT_TRUE(Apply("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: local\n"
                    "spec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: local-disk\n"
                    "  resources:\n    requests:\n      storage: 1Gi\n")
                  .ok());
  // No nodeName, no nodeSelector: the scheduler places it by the PV's node affinity.
  PodParts parts;
  parts.spec = "  volumes:\n  - name: data\n    persistentVolumeClaim:\n      claimName: local\n";
  parts.container = "    volumeMounts:\n    - name: data\n      mountPath: /data\n";
  ASSERT_TRUE(Apply(BusyboxPod("local-user",
                               "\"echo local > /data/f; trap 'exit 0' TERM; "
                               "while true; do sleep 1; done\"",
                               parts))
                  .ok());
  WaitRunning({"local-user"}, absl::Seconds(120));
  if (HasFatalFailure()) return;
  EXPECT_EQ(GetPod("local-user")["spec"].value("nodeName", ""), node_);
  EXPECT_TRUE(WaitUntil([&] { return ReadFile(disk + "/f") == "local\n"; }, absl::Seconds(30)));
  ASSERT_TRUE(cp_->Kubectl({"delete", "pod", "local-user", "--wait=false"}).ok());
  ASSERT_TRUE(WaitUntil([&] { return PodGone("local-user"); }, absl::Seconds(60)));
  EXPECT_EQ(ReadFile(disk + "/f"), "local\n");  // the disk keeps its data
  (void)cp_->Kubectl({"delete", "pv", "local-" + node_, "--wait=false"});
}

TEST_F(CsiVolumesTest, KubeletKillRemountsNothing) {
  StartStorage();
  if (HasFatalFailure()) return;
  constexpr int kPods = 10;
  ASSERT_TRUE(Apply(StatefulSet("many", kPods, kSleepForever)).ok());
  std::vector<std::string> pods;
  for (int i = 0; i < kPods; ++i) pods.push_back(absl::StrCat("many-", i));
  WaitRunning(pods, absl::Seconds(300));
  if (HasFatalFailure()) return;
  std::map<std::string, std::string> containers;  // pod -> container ID
  for (const std::string& p : pods) {
    containers[p] = GetPod(p)["status"]["containerStatuses"][0].value("containerID", "");
  }
  const std::string deleted_uid = Uid("many-3");
  const std::string deleted_pv = VolumeOf("data-many-3");
  const size_t publishes_before = [&] {
    std::string log = driver_proc_->Log();
    size_t n = 0;
    for (size_t at = log.find("NodePublishVolume"); at != std::string::npos;
         at = log.find("NodePublishVolume", at + 1)) {
      ++n;
    }
    return n;
  }();

  kubelet_->Signal(SIGKILL);
  ASSERT_TRUE(kubelet_->Wait(absl::Seconds(30)).has_value());
  kubelet_.reset();
  ASSERT_TRUE(cp_->Kubectl({"delete", "pod", "many-3", "--wait=false"}).ok());
  StartKubelet({"--kubeconfig", kubeconfig_});
  if (HasFatalFailure()) return;

  // The pod deleted meanwhile is torn down (its volume dir goes) and replaced by the
  // StatefulSet; every other pod keeps its container.
  ASSERT_TRUE(WaitUntil(
      [&] {
        return !std::filesystem::exists(Root() + "/pods/" + deleted_uid) && Running("many-3") &&
               Uid("many-3") != deleted_uid;
      },
      absl::Seconds(180)))
      << KubeletLogTail();
  for (const std::string& p : pods) {
    if (p == "many-3") continue;
    json st = GetPod(p)["status"]["containerStatuses"][0];
    EXPECT_EQ(st.value("containerID", ""), containers[p]) << p;
    EXPECT_EQ(st.value("restartCount", -1), 0) << p;
  }
  // Only the replacement pod was published again.
  std::string log = driver_proc_->Log();
  size_t publishes_after = 0;
  for (size_t at = log.find("NodePublishVolume"); at != std::string::npos;
       at = log.find("NodePublishVolume", at + 1)) {
    ++publishes_after;
  }
  EXPECT_LE(publishes_after - publishes_before, publishes_before / kPods + 1)
      << "the driver saw NodePublishVolume again for volumes already published";
  EXPECT_EQ(VolumeOf("data-many-3"), deleted_pv);
  std::vector<std::string> csi_mounts = MountsUnderRoot();
  std::erase_if(csi_mounts, [](const std::string& m) { return !absl::StrContains(m, "~csi/"); });
  EXPECT_EQ(csi_mounts.size(), static_cast<size_t>(kPods)) << absl::StrJoin(csi_mounts, "\n");
  EXPECT_EQ(VolumesInUse().size(), static_cast<size_t>(kPods));
}

TEST_F(CsiVolumesTest, DriverRestartDelaysNewMountsOnly) {
  StartStorage();
  if (HasFatalFailure()) return;
  ASSERT_TRUE(Apply(StatefulSet("keep", 1,
                                "\"echo before > /data/f; trap 'exit 0' TERM; "
                                "while true; do sleep 1; done\""))
                  .ok());
  WaitRunning({"keep-0"}, absl::Seconds(180));
  if (HasFatalFailure()) return;
  const std::string published = Published("keep-0", VolumeOf("data-keep-0"));
  ASSERT_TRUE(
      WaitUntil([&] { return ReadFile(published + "/f") == "before\n"; }, absl::Seconds(30)));

  // A claim provisioned while the driver runs, for a pod that comes while it does not.
  ASSERT_TRUE(Apply("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: late\n"
                    "spec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: csi-immediate\n"
                    "  resources:\n    requests:\n      storage: 1Mi\n")
                  .ok());
  ASSERT_TRUE(WaitUntil([&] { return !VolumeOf("late").empty(); }, absl::Seconds(60)));

  // The node plugin goes away (registrar first, as a DaemonSet rollout takes both).
  registrar_proc_->Signal(SIGTERM);
  registrar_proc_->Wait(absl::Seconds(20));
  registrar_proc_.reset();
  driver_proc_->Signal(SIGTERM);
  driver_proc_->Wait(absl::Seconds(20));
  driver_proc_.reset();
  std::filesystem::remove(Root() + "/plugins_registry/" + std::string(kDriver) + "-reg.sock");
  ASSERT_TRUE(
      WaitUntil([&] { return Drivers().is_array() && Drivers().empty(); }, absl::Seconds(60)));
  // A new pod has to wait.
  ASSERT_TRUE(Apply(ClaimPod("late-0", "late")).ok());
  ASSERT_TRUE(WaitUntil(
      [&] { return HasFailedMount("late-0", "not found in the list of registered CSI drivers"); },
      absl::Seconds(120)))
      << absl::StrJoin(FailedMounts("late-0"), " | ") << "\n"
      << KubeletLogTail();
  EXPECT_FALSE(Running("late-0"));
  // The running pod keeps its volume and data.
  EXPECT_TRUE(Running("keep-0"));
  EXPECT_EQ(ReadFile(published + "/f"), "before\n");

  // The plugin is back: the waiting pod starts. (The controller sidecars exit when they lose
  // the driver's socket; in a deployment their pod restarts with the driver.)
  attacher_proc_.reset();
  provisioner_proc_.reset();
  StartDriver(/*attach=*/true);
  if (HasFatalFailure()) return;
  StartRegistrar();
  if (HasFatalFailure()) return;
  StartControllers();
  if (HasFatalFailure()) return;
  WaitRunning({"late-0"}, absl::Seconds(180));
  if (HasFatalFailure()) return;
  EXPECT_TRUE(std::filesystem::is_directory(Published("late-0", VolumeOf("late"))));
  EXPECT_EQ(GetPod("keep-0")["status"]["containerStatuses"][0].value("restartCount", -1), 0);
}

}  // namespace
}  // namespace kubelet::e2e
