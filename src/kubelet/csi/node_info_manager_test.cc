#include "kubelet/csi/node_info_manager.h"

#include <memory>
#include <string>

#include "apiclient/testing/fake_rest_client.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::csi {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

class NodeInfoManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.Upsert("/api/v1/nodes", Json{{"apiVersion", "v1"},
                                      {"kind", "Node"},
                                      {"metadata", {{"name", "n1"}, {"labels", {{"a", "b"}}}}}});
    nim_ = NewApiNodeInfoManager(api_, clock_, "n1");
  }
  Json Node() { return *api_.Get("/api/v1/nodes", "", "n1"); }
  std::optional<Json> CSINode() { return api_.Get("/apis/storage.k8s.io/v1/csinodes", "", "n1"); }

  apiclient::testing::FakeRestClient api_;
  RealClock clock_;
  std::unique_ptr<NodeInfoManager> nim_;
};

TEST_F(NodeInfoManagerTest, InstallAnnotatesLabelsAndCreatesTheCSINode) {
  ASSERT_TRUE(nim_->InstallDriver("b.csi.io", "id-b", 0, {{"zone", "z1"}}).ok());
  ASSERT_TRUE(nim_->InstallDriver("a.csi.io", "id-a", 7, {}).ok());

  Json node = Node();
  EXPECT_EQ(node["metadata"]["annotations"][kNodeIdAnnotation],
            R"({"a.csi.io":"id-a","b.csi.io":"id-b"})");
  EXPECT_EQ(node["metadata"]["labels"]["zone"], "z1");
  EXPECT_EQ(node["metadata"]["labels"]["a"], "b");

  std::optional<Json> csinode = CSINode();
  ASSERT_TRUE(csinode.has_value());
  EXPECT_EQ((*csinode)["metadata"]["ownerReferences"][0]["kind"], "Node");
  EXPECT_EQ((*csinode)["metadata"]["ownerReferences"][0]["uid"], node["metadata"]["uid"]);
  EXPECT_EQ((*csinode)["metadata"]["annotations"][kMigratedPluginsAnnotation],
            "kubernetes.io/aws-ebs,kubernetes.io/azure-disk,kubernetes.io/azure-file,"
            "kubernetes.io/cinder,kubernetes.io/gce-pd,kubernetes.io/vsphere-volume");
  const Json& drivers = (*csinode)["spec"]["drivers"];
  ASSERT_EQ(drivers.size(), 2u);
  EXPECT_EQ(drivers[0],
            (Json{{"name", "b.csi.io"}, {"nodeID", "id-b"}, {"topologyKeys", {"zone"}}}));
  EXPECT_EQ(drivers[1]["allocatable"]["count"], 7);
}

TEST_F(NodeInfoManagerTest, UnchangedInstallsWriteNothing) {
  ASSERT_TRUE(nim_->InstallDriver("a.csi.io", "id-a", 0, {{"zone", "z1"}}).ok());
  const int64_t rv = api_.CurrentResourceVersion();
  ASSERT_TRUE(nim_->InstallDriver("a.csi.io", "id-a", 0, {{"zone", "z1"}}).ok());
  EXPECT_EQ(api_.CurrentResourceVersion(), rv);
}

TEST_F(NodeInfoManagerTest, UninstallRemovesTheDriverButKeepsLabelsAndTheCSINode) {
  ASSERT_TRUE(nim_->InstallDriver("a.csi.io", "id-a", 0, {{"zone", "z1"}}).ok());
  ASSERT_TRUE(nim_->UninstallDriver("a.csi.io").ok());
  Json node = Node();
  EXPECT_FALSE(node["metadata"].value("annotations", Json::object()).contains(kNodeIdAnnotation));
  EXPECT_EQ(node["metadata"]["labels"]["zone"], "z1");
  ASSERT_TRUE(CSINode().has_value());
  EXPECT_TRUE((*CSINode())["spec"]["drivers"].empty());
}

TEST_F(NodeInfoManagerTest, RefusesAnEmptyNodeIdAndATopologyCollision) {
  EXPECT_EQ(nim_->InstallDriver("a.csi.io", "", 0, {}).message(),
            "error adding CSI driver node info: driverNodeID must not be empty");
  absl::Status st = nim_->InstallDriver("a.csi.io", "id", 0, {{"a", "other"}});
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("detected topology value collision: driver reported \"a\":\"other\" but "
                        "existing label is \"a\":\"b\""));
  EXPECT_FALSE(CSINode().has_value());
}

TEST_F(NodeInfoManagerTest, ServerErrorsAreRetried) {
  api_.InjectFault({.method = "PATCH", .code = 500, .times = 2});
  ASSERT_TRUE(nim_->InstallDriver("a.csi.io", "id-a", 0, {}).ok());
  EXPECT_EQ(Node()["metadata"]["annotations"][kNodeIdAnnotation], R"({"a.csi.io":"id-a"})");
}

}  // namespace
}  // namespace kubelet::csi
