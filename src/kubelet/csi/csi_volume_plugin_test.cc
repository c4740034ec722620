#include "kubelet/csi/csi_volume_plugin.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::csi {
namespace {

using ::testing::HasSubstr;

class RecordingClient final : public CsiClient {
 public:
  absl::StatusOr<NodeInfo> NodeGetInfo(const std::string&, absl::Duration) override {
    return NodeInfo{};
  }
  absl::Status NodePublishVolume(const std::string& endpoint, const PublishRequest& r,
                                 absl::Duration) override {
    published.push_back(r);
    endpoints.push_back(endpoint);
    std::filesystem::create_directories(r.target_path);  // the driver creates the target
    return absl::OkStatus();
  }
  absl::Status NodeUnpublishVolume(const std::string&, const std::string& volume_id,
                                   const std::string& target_path, absl::Duration) override {
    unpublished.push_back(absl::StrCat(volume_id, " ", target_path));
    std::filesystem::remove(target_path);
    return absl::OkStatus();
  }
  std::vector<PublishRequest> published;
  std::vector<std::string> endpoints;
  std::vector<std::string> unpublished;
};

class FixedLister final : public CSIDriverLister {
 public:
  absl::StatusOr<std::optional<CSIDriverInfo>> Get(const std::string&) override { return info; }
  std::optional<CSIDriverInfo> info;
};

class CsiVolumePluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/csivol-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    drivers_.Set("hostpath.csi.k8s.io", Driver{"/plugins/hp/csi.sock", {}});
    CSIDriverInfo info;
    info.pod_info_on_mount = true;
    info.lifecycle_modes = {"Persistent", "Ephemeral"};
    lister_.info = info;
    pod_.metadata.name = "p";
    pod_.metadata.namespace_ = "ns";
    pod_.metadata.uid = "uid-1";
    pod_.spec.service_account_name = "sa";
    vol_.name = "scratch";
    vol_.other_sources["csi"] = api::RawJson{
        R"({"driver":"hostpath.csi.k8s.io","fsType":"ext4","volumeAttributes":{"size":"1Mi"}})"};
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string Dir() const { return root_ + "/pods/uid-1/volumes/kubernetes.io~csi/scratch"; }

  std::string root_;
  DriverRegistry drivers_;
  RecordingClient client_;
  FixedLister lister_;
  CsiVolumePlugin plugin_{drivers_, client_, &lister_, "node-a"};
  api::Pod pod_;
  api::Volume vol_;
};

TEST_F(CsiVolumePluginTest, PublishesAnInlineVolumeWithPodInfoAndVolData) {
  ASSERT_TRUE(plugin_.CanSupport(vol_));
  absl::StatusOr<volume::ExternalVolume> set_up = plugin_.SetUp(pod_, vol_, Dir());
  ASSERT_TRUE(set_up.ok()) << set_up.status();
  EXPECT_EQ(set_up->path, Dir() + "/mount");
  EXPECT_FALSE(set_up->read_only);
  ASSERT_EQ(client_.published.size(), 1u);
  const PublishRequest& r = client_.published[0];
  const std::string handle = CsiHandle("uid-1scratch");
  EXPECT_EQ(r.volume_id, handle);
  EXPECT_EQ(handle.size(), 4u + 64u);
  EXPECT_EQ(r.fs_type, "ext4");
  EXPECT_EQ(r.volume_context.at("size"), "1Mi");
  EXPECT_EQ(r.volume_context.at("csi.storage.k8s.io/pod.name"), "p");
  EXPECT_EQ(r.volume_context.at("csi.storage.k8s.io/pod.namespace"), "ns");
  EXPECT_EQ(r.volume_context.at("csi.storage.k8s.io/pod.uid"), "uid-1");
  EXPECT_EQ(r.volume_context.at("csi.storage.k8s.io/serviceAccount.name"), "sa");
  EXPECT_EQ(r.volume_context.at("csi.storage.k8s.io/ephemeral"), "true");
  EXPECT_EQ(client_.endpoints[0], "/plugins/hp/csi.sock");

  std::ifstream in(Dir() + "/vol_data.json");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(),
            absl::StrCat(R"({"attachmentID":")", CsiHandle(handle + "hostpath.csi.k8s.ionode-a"),
                         R"(","driverName":"hostpath.csi.k8s.io","nodeName":"node-a",)",
                         R"("specVolID":"scratch","volumeHandle":")", handle,
                         R"(","volumeLifecycleMode":"Ephemeral"})", "\n"));

  ASSERT_TRUE(plugin_.TearDown("uid-1", Dir()).ok());
  ASSERT_EQ(client_.unpublished.size(), 1u);
  EXPECT_EQ(client_.unpublished[0], absl::StrCat(handle, " ", Dir(), "/mount"));
  EXPECT_FALSE(std::filesystem::exists(Dir()));
}

TEST_F(CsiVolumePluginTest, RefusesUnregisteredDriversAndPersistentOnlyDrivers) {
  vol_.other_sources["csi"] = api::RawJson{R"({"driver":"other.csi.io"})"};
  EXPECT_EQ(plugin_.SetUp(pod_, vol_, Dir()).status().message(),
            "driver name other.csi.io not found in the list of registered CSI drivers");

  vol_.other_sources["csi"] = api::RawJson{R"({"driver":"hostpath.csi.k8s.io"})"};
  lister_.info.reset();  // no CSIDriver object: Persistent only
  EXPECT_EQ(plugin_.SetUp(pod_, vol_, Dir()).status().message(),
            "volume mode \"Ephemeral\" not supported by driver hostpath.csi.k8s.io (only supports "
            "[\"Persistent\"])");
  EXPECT_TRUE(client_.published.empty());
}

TEST_F(CsiVolumePluginTest, TearDownWithoutVolDataRemovesLeftovers) {
  std::filesystem::create_directories(Dir() + "/mount");
  ASSERT_TRUE(plugin_.TearDown("uid-1", Dir()).ok());
  EXPECT_TRUE(client_.unpublished.empty());
  EXPECT_FALSE(std::filesystem::exists(Dir()));
}

TEST(CsiDriverInfoTest, ReadsTheSpecWithUpstreamDefaults) {
  CSIDriverInfo d = CSIDriverInfoFromJson(nlohmann::json::parse(
      R"({"spec":{"attachRequired":false,"podInfoOnMount":true,"volumeLifecycleModes":["Ephemeral"]}})"));
  EXPECT_FALSE(d.attach_required);
  EXPECT_TRUE(d.pod_info_on_mount);
  EXPECT_EQ(d.lifecycle_modes, (std::set<std::string>{"Ephemeral"}));
  CSIDriverInfo def = CSIDriverInfoFromJson(nlohmann::json::object());
  EXPECT_TRUE(def.attach_required);
  EXPECT_EQ(def.lifecycle_modes, (std::set<std::string>{"Persistent"}));
  EXPECT_EQ(def.fs_group_policy, "ReadWriteOnceWithFSType");
}

}  // namespace
}  // namespace kubelet::csi
