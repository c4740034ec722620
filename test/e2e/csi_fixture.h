// The shared fixture of the CSI end-to-end suites: ApiModeTest plus the real
// csi-driver-host-path node plugin, node-driver-registrar and (for persistent volumes)
// external-provisioner and external-attacher from KUBEBUILDER_ASSETS (../shared/csi), run as
// processes beside the kubelet under test (the driver and registrar on the kubelet's root dir,
// the controllers with the admin kubeconfig).
//
// Without the CSI binaries a suite skips, unless KUBELET_CSI_REQUIRED=1 (set by the test script
// when they are at hand): then that is a failure.
//
// For tests only: blocking, polling, not thread-safe.
#ifndef KUBELET_TEST_E2E_CSI_FIXTURE_H_
#define KUBELET_TEST_E2E_CSI_FIXTURE_H_

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "test/e2e/api_mode_fixture.h"
#include "test/e2e/kubelet_process.h"

namespace kubelet::e2e {

inline constexpr char kDriver[] = "hostpath.csi.k8s.io";

class CsiTest : public ApiModeTest {
 protected:
  void SetUp() override {
    ApiModeTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const char* assets = std::getenv("KUBEBUILDER_ASSETS");
    const std::string dir = assets != nullptr ? assets : "";
    plugin_ = dir + "/hostpathplugin";
    registrar_ = dir + "/csi-node-driver-registrar";
    provisioner_ = dir + "/csi-provisioner";
    attacher_ = dir + "/csi-attacher";
    if (!std::filesystem::exists(plugin_) || !std::filesystem::exists(registrar_) ||
        !std::filesystem::exists(provisioner_) || !std::filesystem::exists(attacher_)) {
      const char* required = std::getenv("KUBELET_CSI_REQUIRED");
      if (required != nullptr && std::string(required) == "1") {
        FAIL() << "CSI binaries missing from KUBEBUILDER_ASSETS (" << dir << ")";
      }
      GTEST_SKIP() << kControlPlaneSkipMarker
                   << "hostpathplugin / csi-node-driver-registrar / csi-provisioner / "
                      "csi-attacher not in KUBEBUILDER_ASSETS";
    }
  }

  void TearDown() override {
    attacher_proc_.reset();
    provisioner_proc_.reset();
    registrar_proc_.reset();
    // The pods go first (ApiModeTest::TearDown), so the driver can unpublish their volumes.
    ApiModeTest::TearDown();
    driver_proc_.reset();
    // The driver's mounts go too (the base class unmounted before the driver stopped).
    UnmountAllUnder(dir_);
  }

  std::string Root() const { return dir_ + "/root"; }
  std::string DriverSocket() const { return Root() + "/plugins/csi-hostpath/csi.sock"; }

  // `attach`: the driver requires attach (--enable-attach; run StartControllers() too).
  void StartDriver(bool attach = false) {
    std::filesystem::create_directories(Root() + "/plugins/csi-hostpath");
    std::filesystem::create_directories(dir_ + "/csi-state");
    std::vector<std::string> args = {"--endpoint=unix://" + DriverSocket(), "--nodeid=" + node_,
                                     absl::StrCat("--drivername=", kDriver),
                                     "--statedir=" + dir_ + "/csi-state", "--v=3"};
    if (attach) args.push_back("--enable-attach");
    auto p = KubeletProcess::Start(plugin_, args, {}, dir_ + "/hostpathplugin.log");
    ASSERT_TRUE(p.ok()) << p.status();
    driver_proc_ = std::move(*p);
    ASSERT_TRUE(
        WaitUntil([&] { return std::filesystem::exists(DriverSocket()); }, absl::Seconds(30)))
        << driver_proc_->Log();
  }

  void StartRegistrar() {
    auto p = KubeletProcess::Start(
        registrar_,
        {"--csi-address=" + DriverSocket(), "--kubelet-registration-path=" + DriverSocket(),
         "--plugin-registration-path=" + Root() + "/plugins_registry", "--v=5"},
        {}, dir_ + "/registrar.log");
    ASSERT_TRUE(p.ok()) << p.status();
    registrar_proc_ = std::move(*p);
  }

  // external-provisioner and external-attacher on the driver's socket, as admin.
  void StartControllers() {
    auto p = KubeletProcess::Start(
        provisioner_,
        {"--csi-address=" + DriverSocket(), "--kubeconfig=" + cp_->admin_kubeconfig(),
         "--feature-gates=Topology=true", "--extra-create-metadata", "--v=3"},
        {}, dir_ + "/provisioner.log");
    ASSERT_TRUE(p.ok()) << p.status();
    provisioner_proc_ = std::move(*p);
    auto a = KubeletProcess::Start(
        attacher_,
        {"--csi-address=" + DriverSocket(), "--kubeconfig=" + cp_->admin_kubeconfig(), "--v=3"}, {},
        dir_ + "/attacher.log");
    ASSERT_TRUE(a.ok()) << a.status();
    attacher_proc_ = std::move(*a);
  }

  // The CSIDriver object of the hostpath driver.
  void ApplyCSIDriver(bool attach_required) {
    ASSERT_TRUE(Apply(absl::StrCat("apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata:\n"
                                   "  name: ",
                                   kDriver, "\nspec:\n  attachRequired: ",
                                   attach_required ? "true" : "false",
                                   "\n  podInfoOnMount: true\n"
                                   "  volumeLifecycleModes: [Persistent, Ephemeral]\n"
                                   "  fsGroupPolicy: File\n"))
                    .ok());
  }

  // Waits until the CSINode lists the driver.
  void WaitDriverRegistered() {
    ASSERT_TRUE(
        WaitUntil([&] { return Drivers().is_array() && Drivers().size() == 1; }, absl::Seconds(60)))
        << (registrar_proc_ ? registrar_proc_->Log() : "");
  }

  // The end of the kubelet's log (for failure messages).
  std::string KubeletLogTail(size_t n = 6000) {
    const std::string log = kubelet_->Log();
    return log.substr(log.size() > n ? log.size() - n : 0);
  }

  // The mount points below the kubelet's root dir.
  std::vector<std::string> MountsUnderRoot() { return MountPointsUnder(Root()); }

  // The CSINode's driver entries (null when there is no CSINode; an empty list reads back as
  // null from the API server).
  json Drivers() {
    json c = GetJson({"get", "csinode", node_});
    if (!c.is_object()) return json();
    json d = c["spec"].value("drivers", json::array());
    return d.is_null() ? json::array() : d;
  }
  std::string NodeIdAnnotation() {
    json n = GetNode();
    if (!n.is_object()) return "";
    return n["metadata"]
        .value("annotations", json::object())
        .value("csi.volume.kubernetes.io/nodeid", "");
  }

  std::string plugin_, registrar_, provisioner_, attacher_;
  std::unique_ptr<KubeletProcess> driver_proc_, registrar_proc_, provisioner_proc_, attacher_proc_;
};

}  // namespace kubelet::e2e

#endif  // KUBELET_TEST_E2E_CSI_FIXTURE_H_
