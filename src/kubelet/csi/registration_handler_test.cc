#include "kubelet/csi/registration_handler.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/csi/testing/fake_csi_client.h"

namespace kubelet::csi {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FakeNodeInfo final : public NodeInfoManager {
 public:
  absl::Status InstallDriver(const std::string& driver, const std::string& node_id, int64_t,
                             const std::map<std::string, std::string>&) override {
    calls.push_back(absl::StrCat("install ", driver, " ", node_id));
    return install;
  }
  absl::Status UninstallDriver(const std::string& driver) override {
    calls.push_back(absl::StrCat("uninstall ", driver));
    return absl::OkStatus();
  }
  absl::Status install;
  std::vector<std::string> calls;
};

class RegistrationHandlerTest : public ::testing::Test {
 protected:
  DriverRegistry drivers_;
  RegistrationHandlerTest() {
    client_.node_info = NodeInfo{"node-1", 0, {{"topology.hostpath.csi/node", "n"}}};
  }
  testing::FakeCsiClient client_;
  FakeNodeInfo node_info_;
  RegistrationHandler handler_{drivers_, client_, &node_info_};
};

TEST_F(RegistrationHandlerTest, RegistersTheDriverAndItsNodeInfo) {
  ASSERT_TRUE(handler_.ValidatePlugin("hostpath.csi.k8s.io", "/p/csi.sock", {"1.0.0"}).ok());
  ASSERT_TRUE(handler_.RegisterPlugin("hostpath.csi.k8s.io", "/p/csi.sock", {"1.0.0"}).ok());
  EXPECT_THAT(client_.Calls("NodeGetInfo"), ElementsAre("NodeGetInfo /p/csi.sock"));
  EXPECT_THAT(node_info_.calls, ElementsAre("install hostpath.csi.k8s.io node-1"));
  ASSERT_TRUE(drivers_.Get("hostpath.csi.k8s.io").has_value());
  EXPECT_EQ(drivers_.Get("hostpath.csi.k8s.io")->endpoint, "/p/csi.sock");

  handler_.DeRegisterPlugin("hostpath.csi.k8s.io");
  EXPECT_FALSE(drivers_.Get("hostpath.csi.k8s.io").has_value());
  EXPECT_EQ(node_info_.calls.back(), "uninstall hostpath.csi.k8s.io");
}

TEST_F(RegistrationHandlerTest, VersionsAndNameClashesAreValidated) {
  EXPECT_THAT(std::string(handler_.ValidatePlugin("d", "/e", {}).message()),
              HasSubstr("Plugin returned an empty list for supported versions"));
  EXPECT_THAT(std::string(handler_.ValidatePlugin("d", "/e", {"0.3.0"}).message()),
              HasSubstr("validation failed for CSI Driver d at endpoint /e: kubernetes.io/csi: "
                        "ValidatePlugin for CSI driver \"d\" failed. None of the versions "
                        "specified [\"0.3.0\"] are supported."));
  ASSERT_TRUE(handler_.RegisterPlugin("d", "/e", {"1.0.0"}).ok());
  EXPECT_THAT(std::string(handler_.ValidatePlugin("d", "/e2", {"1.0.0"}).message()),
              HasSubstr("Another driver with the same name is already registered with a higher "
                        "supported version: \"1.0.0\""));
  EXPECT_TRUE(handler_.ValidatePlugin("d", "/e2", {"1.1.0"}).ok());
}

TEST_F(RegistrationHandlerTest, AFailedNodeGetInfoOrInstallUndoesTheRegistration) {
  client_.node_info = absl::UnavailableError("rpc error: code = Unavailable");
  EXPECT_FALSE(handler_.RegisterPlugin("d", "/e", {"1.0.0"}).ok());
  EXPECT_FALSE(drivers_.Get("d").has_value());

  client_.node_info = NodeInfo{"node-1", 0, {}};
  node_info_.install = absl::InvalidArgumentError("collision");
  EXPECT_FALSE(handler_.RegisterPlugin("d", "/e", {"1.0.0"}).ok());
  EXPECT_FALSE(drivers_.Get("d").has_value());
  EXPECT_EQ(node_info_.calls.back(), "uninstall d");
}

}  // namespace
}  // namespace kubelet::csi
