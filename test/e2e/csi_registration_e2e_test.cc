// CSI against the real csi-driver-host-path node plugin and node-driver-registrar
// (KUBEBUILDER_ASSETS, from ../shared/csi), our kubelet and the real control plane:
//  * registration: the registrar's socket in <root-dir>/plugins_registry is found, the driver is
//    validated and registered, its node info lands on the Node (csi.volume.kubernetes.io/nodeid)
//    and in the CSINode; when the registrar goes away the driver is deregistered; when it comes
//    back, registered again;
//  * an inline ephemeral CSI volume is published for its pod (with vol_data.json and the pod
//    info of a CSIDriver with podInfoOnMount), written by the container, and unpublished and
//    removed when the pod is deleted.
//
// Without the CSI binaries the suite skips, unless KUBELET_CSI_REQUIRED=1 (set by the test
// script when they are at hand): then that is a failure.
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "test/e2e/csi_fixture.h"

namespace kubelet::e2e {
namespace {

using CsiRegistrationTest = CsiTest;

TEST_F(CsiRegistrationTest, TheDriverRegistersDeregistersAndRegistersAgain) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok());
  StartDriver();
  StartRegistrar();

  const std::string want_annotation = absl::StrCat("{\"", kDriver, "\":\"", node_, "\"}");
  ASSERT_TRUE(WaitUntil(
      [&] {
        json d = Drivers();
        return d.is_array() && d.size() == 1 && d[0].value("name", "") == kDriver &&
               d[0].value("nodeID", "") == node_;
      },
      absl::Seconds(60)))
      << "CSINode: " << GetJson({"get", "csinode", node_}).dump() << "\nregistrar log:\n"
      << registrar_proc_->Log();
  EXPECT_EQ(NodeIdAnnotation(), want_annotation);
  json csinode = GetJson({"get", "csinode", node_});
  EXPECT_EQ(csinode["metadata"]["ownerReferences"][0]["kind"], "Node");
  EXPECT_EQ(csinode["spec"]["drivers"][0]["topologyKeys"],
            json::array({"topology.hostpath.csi/node"}));
  EXPECT_EQ(GetNode()["metadata"]["labels"].value("topology.hostpath.csi/node", ""), node_);
  EXPECT_TRUE(registrar_proc_->WaitForLog("PluginRegistered:true", absl::Seconds(10)))
      << registrar_proc_->Log();
  EXPECT_NE(kubelet_->Log().find(absl::StrCat("kubernetes.io/csi: Register new plugin with name: ",
                                              kDriver, " at endpoint: ", DriverSocket())),
            std::string::npos);

  // The registrar stops and takes its socket away: the driver is deregistered.
  registrar_proc_->Signal(SIGTERM);
  registrar_proc_->Wait(absl::Seconds(20));
  std::filesystem::remove(Root() + "/plugins_registry/" + kDriver + "-reg.sock");
  ASSERT_TRUE(
      WaitUntil([&] { return Drivers().is_array() && Drivers().empty(); }, absl::Seconds(30)))
      << GetJson({"get", "csinode", node_}).dump();
  EXPECT_EQ(NodeIdAnnotation(), "");

  // It comes back: registered again.
  StartRegistrar();
  ASSERT_TRUE(
      WaitUntil([&] { return Drivers().is_array() && Drivers().size() == 1; }, absl::Seconds(60)))
      << registrar_proc_->Log();
  EXPECT_EQ(NodeIdAnnotation(), want_annotation);
}

TEST_F(CsiRegistrationTest, AnInlineEphemeralVolumeComesAndGoesWithItsPod) {
  ApplyCSIDriver(/*attach_required=*/false);
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok());
  StartDriver();
  StartRegistrar();
  ASSERT_TRUE(
      WaitUntil([&] { return Drivers().is_array() && Drivers().size() == 1; }, absl::Seconds(60)))
      << registrar_proc_->Log();

  const std::string pod = "inline-csi";
  PodParts parts;
  parts.spec = absl::StrCat("  nodeName: ", node_,
                            "\n"
                            "  volumes:\n"
                            "  - name: scratch\n"
                            "    csi:\n"
                            "      driver: ",
                            kDriver,
                            "\n"
                            "      volumeAttributes:\n"
                            "        size: 1Mi\n");
  parts.container = "    volumeMounts:\n    - name: scratch\n      mountPath: /data\n";
  ASSERT_TRUE(Apply(BusyboxPod(pod,
                               "\"echo hello > /data/f; trap 'exit 0' TERM; "
                               "while true; do sleep 1; done\"",
                               parts))
                  .ok());
  ASSERT_TRUE(WaitUntil(
      [&] {
        json p = GetPod(pod);
        return p.is_object() && p["status"].value("phase", "") == "Running";
      },
      absl::Seconds(90)))
      << GetPod(pod).dump() << "\nkubelet log tail:\n"
      << kubelet_->Log().substr(kubelet_->Log().size() > 4000 ? kubelet_->Log().size() - 4000 : 0);
  const std::string uid = GetPod(pod)["metadata"].value("uid", "");
  const std::string vol = Root() + "/pods/" + uid + "/volumes/kubernetes.io~csi/scratch";
  ASSERT_TRUE(
      WaitUntil([&] { return std::filesystem::exists(vol + "/mount/f"); }, absl::Seconds(30)));
  json vd = json::parse(ReadFile(vol + "/vol_data.json"), nullptr, false);
  EXPECT_EQ(vd.value("driverName", ""), kDriver);
  EXPECT_EQ(vd.value("volumeLifecycleMode", ""), "Ephemeral");
  EXPECT_EQ(vd.value("nodeName", ""), node_);

  ASSERT_TRUE(cp_->Kubectl({"delete", "pod", pod, "--wait=false"}).ok());
  ASSERT_TRUE(
      WaitUntil([&] { return PodGone(pod) && !std::filesystem::exists(vol); }, absl::Seconds(90)))
      << "volume dir still there: " << std::filesystem::exists(vol) << "\nhostpathplugin log:\n"
      << driver_proc_->Log();
  (void)cp_->Kubectl({"delete", "csidriver", kDriver, "--wait=false"});
}

}  // namespace
}  // namespace kubelet::e2e
