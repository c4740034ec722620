#include "kubelet/csi/csi_volume_plugin.h"

#include <sys/mount.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/openssl.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/csi/testing/fake_csi_client.h"

namespace kubelet::csi {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class FixedLister final : public CSIDriverLister {
 public:
  absl::StatusOr<std::optional<CSIDriverInfo>> Get(const std::string&) override { return info; }
  std::optional<CSIDriverInfo> info;
};

class FixedAttachments final : public VolumeAttachmentGetter {
 public:
  absl::StatusOr<std::optional<api::VolumeAttachment>> Get(const std::string& name) override {
    absl::MutexLock lock(&mu);
    asked.push_back(name);
    return va;
  }
  absl::Mutex mu;
  std::optional<api::VolumeAttachment> va;
  std::vector<std::string> asked;
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
  testing::FakeCsiClient client_;
  FixedLister lister_;
  FixedAttachments attachments_;
  CsiVolumePluginOptions Options() {
    CsiVolumePluginOptions o;
    o.node_name = "node-a";
    o.root_dir = root_;
    o.attach_wait = absl::Milliseconds(200);
    return o;
  }
  CsiVolumePlugin plugin_{drivers_, client_, &lister_, &attachments_, Options()};
  api::Pod pod_;
  api::Volume vol_;
};

TEST_F(CsiVolumePluginTest, PublishesAnInlineVolumeWithPodInfoAndVolData) {
  ASSERT_TRUE(plugin_.CanSupport(volume::VolumeSpec{.volume = &vol_}));
  absl::StatusOr<volume::ExternalVolume> set_up =
      plugin_.SetUp(pod_, volume::VolumeSpec{.volume = &vol_}, Dir());
  ASSERT_TRUE(set_up.ok()) << set_up.status();
  EXPECT_EQ(set_up->path, Dir() + "/mount");
  EXPECT_FALSE(set_up->read_only);
  ASSERT_EQ(client_.published.size(), 1u);
  const PublishRequest& r = client_.published[0];
  const std::string handle = CsiHandle("uid-1scratch");
  EXPECT_EQ(r.volume_id, handle);
  EXPECT_EQ(handle.size(), 4u + 64u);
  EXPECT_EQ(r.capability.fs_type, "ext4");
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
  EXPECT_THAT(client_.Calls("NodeUnpublishVolume"),
              ElementsAre(absl::StrCat("NodeUnpublishVolume ", handle, " ", Dir(), "/mount")));
  EXPECT_FALSE(std::filesystem::exists(Dir()));
  EXPECT_TRUE(client_.Calls("NodeUnstageVolume").empty());  // inline volumes are not staged
}

TEST_F(CsiVolumePluginTest, RefusesUnregisteredDriversAndPersistentOnlyDrivers) {
  vol_.other_sources["csi"] = api::RawJson{R"({"driver":"other.csi.io"})"};
  const volume::VolumeSpec spec{.volume = &vol_};
  EXPECT_EQ(plugin_.SetUp(pod_, spec, Dir()).status().message(),
            "driver name other.csi.io not found in the list of registered CSI drivers");

  vol_.other_sources["csi"] = api::RawJson{R"({"driver":"hostpath.csi.k8s.io"})"};
  lister_.info.reset();  // no CSIDriver object: Persistent only
  EXPECT_EQ(plugin_.SetUp(pod_, spec, Dir()).status().message(),
            "volume mode \"Ephemeral\" not supported by driver hostpath.csi.k8s.io (only supports "
            "[\"Persistent\"])");
  EXPECT_TRUE(client_.published.empty());
}

TEST_F(CsiVolumePluginTest, TearDownWithoutVolDataRemovesLeftovers) {
  std::filesystem::create_directories(Dir() + "/mount");
  ASSERT_TRUE(plugin_.TearDown("uid-1", Dir()).ok());
  EXPECT_TRUE(client_.Calls("NodeUnpublishVolume").empty());
  EXPECT_FALSE(std::filesystem::exists(Dir()));
}

// A PV of the hostpath driver, bound to a claim, and a plugin whose Node reports volumes in use
// as soon as they are added (what the node status does).
class CsiPersistentTest : public CsiVolumePluginTest {
 protected:
  void SetUp() override {
    CsiVolumePluginTest::SetUp();
    pv_.metadata.name = "pvc-1234";
    pv_.spec.access_modes = {"ReadWriteOnce"};
    pv_.spec.mount_options = {"noatime"};
    pv_.spec.csi.emplace();
    pv_.spec.csi->driver = "hostpath.csi.k8s.io";
    pv_.spec.csi->volume_handle = "vol-1";
    pv_.spec.csi->fs_type = "ext4";
    pv_.spec.csi->volume_attributes = {{"kind", "fast"}};
    claim_vol_.name = "data";
    claim_vol_.persistent_volume_claim.emplace();
    claim_vol_.persistent_volume_claim->claim_name = "data-0";
    client_.capabilities.stage_unstage = true;
    api::VolumeAttachment va;
    va.status.attached = true;
    va.status.attachment_metadata = {{"devicePath", "/dev/x"}};
    attachments_.va = va;
    CsiVolumePluginOptions o = Options();
    o.in_use_changed = [this] { plugin_->MarkVolumesAsReportedInUse(plugin_->VolumesInUse()); };
    plugin_ = std::make_unique<CsiVolumePlugin>(drivers_, client_, &lister_, &attachments_, o);
  }
  std::string PodDir(const std::string& uid) const {
    return root_ + "/pods/" + uid + "/volumes/kubernetes.io~csi/pvc-1234";
  }
  volume::VolumeSpec Spec() const { return {.volume = &claim_vol_, .pv = &pv_}; }
  static constexpr char kUnique[] = "kubernetes.io/csi/hostpath.csi.k8s.io^vol-1";

  api::PersistentVolume pv_;
  api::Volume claim_vol_;
  std::unique_ptr<CsiVolumePlugin> plugin_;
};

TEST_F(CsiPersistentTest, AttachesStagesOnceAndPublishesPerPod) {
  absl::StatusOr<volume::ExternalVolume> a = plugin_->SetUp(pod_, Spec(), PodDir("uid-1"));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->path, PodDir("uid-1") + "/mount");
  EXPECT_THAT(plugin_->VolumesInUse(), ElementsAre(kUnique));
  EXPECT_THAT(attachments_.asked,
              ElementsAre(CsiHandle("vol-1hostpath.csi.k8s.ionode-a")));  // the attachment name
  const std::string staging = plugin_->StagingPath("hostpath.csi.k8s.io", "vol-1");
  EXPECT_EQ(staging, root_ + "/plugins/kubernetes.io/csi/hostpath.csi.k8s.io/" +
                         ossl::Sha256Hex("vol-1") + "/globalmount");
  ASSERT_EQ(client_.staged.size(), 1u);
  EXPECT_EQ(client_.staged[0].staging_target_path, staging);
  EXPECT_EQ(client_.staged[0].publish_context.at("devicePath"), "/dev/x");
  EXPECT_EQ(client_.staged[0].capability.fs_type, "ext4");
  EXPECT_THAT(client_.staged[0].capability.mount_flags, ElementsAre("noatime"));
  EXPECT_EQ(client_.staged[0].capability.access_mode, 1);  // SINGLE_NODE_WRITER
  EXPECT_EQ(client_.staged[0].volume_context.count("csi.storage.k8s.io/pod.name"), 0u);
  ASSERT_EQ(client_.published.size(), 1u);
  const PublishRequest& r = client_.published[0];
  EXPECT_EQ(r.staging_target_path, staging);
  EXPECT_EQ(r.volume_context.at("kind"), "fast");
  EXPECT_EQ(r.volume_context.at("csi.storage.k8s.io/ephemeral"), "false");
  std::ifstream global(root_ + "/plugins/kubernetes.io/csi/hostpath.csi.k8s.io/" +
                       ossl::Sha256Hex("vol-1") + "/vol_data.json");
  std::stringstream gs;
  gs << global.rdbuf();
  EXPECT_EQ(gs.str(), R"({"driverName":"hostpath.csi.k8s.io","volumeHandle":"vol-1"})"
                      "\n");

  // A second pod on the same volume is published without a second stage.
  api::Pod other = pod_;
  other.metadata.uid = "uid-2";
  ASSERT_TRUE(plugin_->SetUp(other, Spec(), PodDir("uid-2")).ok());
  EXPECT_EQ(client_.Calls("NodeStageVolume").size(), 1u);
  EXPECT_EQ(client_.Calls("NodePublishVolume").size(), 2u);

  // The first tear-down keeps the staging; the last one unstages and leaves volumesInUse.
  ASSERT_TRUE(plugin_->TearDown("uid-1", PodDir("uid-1")).ok());
  EXPECT_TRUE(client_.Calls("NodeUnstageVolume").empty());
  EXPECT_THAT(plugin_->VolumesInUse(), ElementsAre(kUnique));
  ASSERT_TRUE(plugin_->TearDown("uid-2", PodDir("uid-2")).ok());
  EXPECT_THAT(client_.Calls("NodeUnstageVolume"),
              ElementsAre("NodeUnstageVolume vol-1 " + staging));
  // In use until the volume manager forgets the pods that wanted it.
  EXPECT_THAT(plugin_->VolumesInUse(), ElementsAre(kUnique));
  plugin_->PodRemoved("uid-1");
  EXPECT_THAT(plugin_->VolumesInUse(), ElementsAre(kUnique));
  plugin_->PodRemoved("uid-2");
  EXPECT_THAT(plugin_->VolumesInUse(), IsEmpty());
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(staging).parent_path()));
  EXPECT_FALSE(std::filesystem::exists(PodDir("uid-2")));
}

TEST_F(CsiPersistentTest, WaitsForTheNodeReportAndTheAttachment) {
  // Nobody reports the volume in use: nothing is mounted.
  CsiVolumePlugin quiet(drivers_, client_, &lister_, &attachments_, Options());
  absl::Status st = quiet.SetUp(pod_, Spec(), PodDir("uid-1")).status();
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("has not been added to the list of VolumesInUse in the node's volume"));
  EXPECT_THAT(quiet.VolumesInUse(), ElementsAre(kUnique));
  EXPECT_TRUE(client_.published.empty());

  // Reported, but the attacher failed.
  attachments_.va->status.attached = false;
  attachments_.va->status.attach_error = api::VolumeError{{}, "disk is busy"};
  st = plugin_->SetUp(pod_, Spec(), PodDir("uid-1")).status();
  EXPECT_THAT(std::string(st.message()), HasSubstr("disk is busy"));
  // Not attached yet.
  attachments_.va->status.attach_error.reset();
  st = plugin_->SetUp(pod_, Spec(), PodDir("uid-1")).status();
  EXPECT_THAT(std::string(st.message()), HasSubstr("is not attached yet"));
  EXPECT_TRUE(client_.staged.empty());
  EXPECT_TRUE(client_.published.empty());

  // The pod goes away: its wish for the volume ends with it.
  quiet.PodRemoved("uid-1");
  EXPECT_THAT(quiet.VolumesInUse(), IsEmpty());

  // A driver that does not attach is neither waited for nor reported in use.
  CSIDriverInfo no_attach = *lister_.info;
  no_attach.attach_required = false;
  lister_.info = no_attach;
  CsiVolumePlugin direct(drivers_, client_, &lister_, nullptr, Options());
  ASSERT_TRUE(direct.SetUp(pod_, Spec(), PodDir("uid-1")).ok());
  EXPECT_THAT(direct.VolumesInUse(), IsEmpty());
}

TEST_F(CsiPersistentTest, RestartFindsVolumesInUseAndStillUnstages) {
  ASSERT_TRUE(plugin_->SetUp(pod_, Spec(), PodDir("uid-1")).ok());
  CsiVolumePlugin restarted(drivers_, client_, &lister_, &attachments_, Options());
  EXPECT_THAT(restarted.VolumesInUse(), ElementsAre(kUnique));
  ASSERT_TRUE(restarted.TearDown("uid-1", PodDir("uid-1")).ok());
  EXPECT_EQ(client_.Calls("NodeUnstageVolume").size(), 1u);
  EXPECT_THAT(restarted.VolumesInUse(), IsEmpty());
}

TEST_F(CsiPersistentTest, ARestartedKubeletAdoptsWhatIsMounted) {
  ASSERT_TRUE(plugin_->SetUp(pod_, Spec(), PodDir("uid-1")).ok());
  const std::string target = PodDir("uid-1") + "/mount";
  if (::mount("tmpfs", target.c_str(), "tmpfs", 0, nullptr) != 0) {
    GTEST_SKIP() << "mount(2) not permitted";
  }
  CsiVolumePlugin restarted(drivers_, client_, &lister_, &attachments_, Options());
  absl::StatusOr<volume::ExternalVolume> again = restarted.SetUp(pod_, Spec(), PodDir("uid-1"));
  ::umount2(target.c_str(), MNT_DETACH);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->path, target);
  // Neither staged nor published a second time, and still in use.
  EXPECT_EQ(client_.Calls("NodeStageVolume").size(), 1u);
  EXPECT_EQ(client_.Calls("NodePublishVolume").size(), 1u);
  EXPECT_THAT(restarted.VolumesInUse(), ElementsAre(kUnique));
}

TEST_F(CsiPersistentTest, AFailedUnstageIsRetriedByHousekeeping) {
  ASSERT_TRUE(plugin_->SetUp(pod_, Spec(), PodDir("uid-1")).ok());
  client_.unstage_error = absl::UnavailableError("driver busy");
  // The pod's volume is gone; the shared staging is not, yet.
  ASSERT_TRUE(plugin_->TearDown("uid-1", PodDir("uid-1")).ok());
  const std::string staged =
      std::filesystem::path(plugin_->StagingPath("hostpath.csi.k8s.io", "vol-1")).parent_path();
  EXPECT_TRUE(std::filesystem::exists(staged));
  plugin_->PodRemoved("uid-1");
  EXPECT_THAT(plugin_->VolumesInUse(), ElementsAre(kUnique));  // still staged
  client_.unstage_error = absl::OkStatus();
  plugin_->Housekeeping();
  EXPECT_EQ(client_.Calls("NodeUnstageVolume").size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(staged));
  EXPECT_THAT(plugin_->VolumesInUse(), IsEmpty());
}

TEST_F(CsiPersistentTest, WaitsEndWhenTheVolumeIsNoLongerWanted) {
  // Nobody reports the volume in use, and the pod goes away meanwhile: the wait ends as
  // cancelled, not at its (long) deadline.
  CsiVolumePluginOptions o = Options();
  o.attach_wait = absl::Hours(1);
  CsiVolumePlugin quiet(drivers_, client_, &lister_, &attachments_, o);
  std::atomic<int> asked{0};
  volume::VolumeSpec spec = Spec();
  spec.cancelled = [&] { return ++asked > 2; };
  absl::Status st = quiet.SetUp(pod_, spec, PodDir("uid-1")).status();
  EXPECT_TRUE(absl::IsCancelled(st)) << st;
  // Reported, but never attached: the same.
  attachments_.va->status.attached = false;
  asked = 0;
  std::unique_ptr<CsiVolumePlugin> reporting;
  o.in_use_changed = [&] { reporting->MarkVolumesAsReportedInUse(reporting->VolumesInUse()); };
  reporting = std::make_unique<CsiVolumePlugin>(drivers_, client_, &lister_, &attachments_, o);
  st = reporting->SetUp(pod_, spec, PodDir("uid-1")).status();
  EXPECT_TRUE(absl::IsCancelled(st)) << st;
  EXPECT_TRUE(client_.published.empty());
}

TEST_F(CsiPersistentTest, FsGroupFollowsThePolicy) {
  pod_.spec.security_context.emplace();
  pod_.spec.security_context->fs_group = 4321;
  ASSERT_TRUE(plugin_->SetUp(pod_, Spec(), PodDir("uid-1")).ok());
  struct stat st;
  ASSERT_EQ(::stat((PodDir("uid-1") + "/mount").c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, 4321u);  // ReadWriteOnceWithFSType, ext4, RWO
  // The driver takes the group itself when it can.
  client_.capabilities.volume_mount_group = true;
  api::Pod other = pod_;
  other.metadata.uid = "uid-2";
  ASSERT_TRUE(plugin_->SetUp(other, Spec(), PodDir("uid-2")).ok());
  EXPECT_EQ(client_.published.back().capability.volume_mount_group, "4321");
}

// Hands out a token per request, recording the requests.
class FakeTokenClient final : public volume::TokenClient {
 public:
  absl::StatusOr<api::TokenRequest> CreateToken(const std::string& ns, const std::string& name,
                                                const api::TokenRequest& request) override {
    asked.push_back(absl::StrCat(ns, "/", name, " ", request.spec.bound_object_ref->uid));
    api::TokenRequest answer = request;
    answer.status.token = "tok-" + (request.spec.audiences.empty() ? std::string("default")
                                                                   : request.spec.audiences[0]);
    answer.status.expiration_timestamp = api::Time::FromUnix(1700000000);
    return answer;
  }
  std::vector<std::string> asked;
};

TEST_F(CsiPersistentTest, SecretsAndTokensReachTheDriver) {
  pv_.spec.csi->node_stage_secret_ref = api::SecretReference{"stage-creds", "kube-system"};
  pv_.spec.csi->node_publish_secret_ref = api::SecretReference{"publish-creds", "ns"};
  CSIDriverInfo info = *lister_.info;
  info.token_requests = {{"vault", 3600}, {"", std::nullopt}};
  lister_.info = info;
  FakeClock clock;
  FakeTokenClient token_client;
  volume::TokenManager tokens(&token_client, clock, [] { return 0.0; });
  CsiVolumePluginOptions o = Options();
  o.in_use_changed = [this] { plugin_->MarkVolumesAsReportedInUse(plugin_->VolumesInUse()); };
  o.tokens = &tokens;
  std::vector<std::string> secrets_read;
  o.get_secret =
      [&](const std::string& ns,
          const std::string& name) -> absl::StatusOr<std::map<std::string, std::string>> {
    secrets_read.push_back(ns + "/" + name);
    if (name == "missing") return absl::NotFoundError("secrets \"missing\" not found");
    return std::map<std::string, std::string>{{"user", name}};
  };
  plugin_ = std::make_unique<CsiVolumePlugin>(drivers_, client_, &lister_, &attachments_, o);
  ASSERT_TRUE(plugin_->SetUp(pod_, Spec(), PodDir("uid-1")).ok());
  EXPECT_THAT(secrets_read, ElementsAre("kube-system/stage-creds", "ns/publish-creds"));
  EXPECT_EQ(client_.staged[0].secrets.at("user"), "stage-creds");
  const PublishRequest& r = client_.published[0];
  EXPECT_EQ(r.secrets.at("user"), "publish-creds");
  EXPECT_EQ(r.volume_context.at("csi.storage.k8s.io/serviceAccount.tokens"),
            R"({"":{"expirationTimestamp":"2023-11-14T22:13:20Z","token":"tok-default"},)"
            R"("vault":{"expirationTimestamp":"2023-11-14T22:13:20Z","token":"tok-vault"}})");
  EXPECT_THAT(token_client.asked, ElementsAre("ns/sa uid-1", "ns/sa uid-1"));

  // A secret that cannot be read holds the volume with upstream's message.
  pv_.spec.csi->node_publish_secret_ref = api::SecretReference{"missing", "ns"};
  api::Pod other = pod_;
  other.metadata.uid = "uid-2";
  EXPECT_EQ(plugin_->SetUp(other, Spec(), PodDir("uid-2")).status().message(),
            "failed to find the secret missing in the namespace ns with error: secrets "
            "\"missing\" not found");
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
