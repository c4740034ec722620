#include "kubelet/volume/container_mounts.h"

#include <errno.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/volume/mount_utils.h"
#include "kubelet/volume/testing/mount_test_util.h"

namespace kubelet::volume {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::runtime::v1;
using ::testing::HasSubstr;

class ContainerMountsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/container-mounts-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    fs::create_directories(root_ + "/cache");
    ::chmod((root_ + "/cache").c_str(), 0777);
    fs::create_directories(root_ + "/info");
    fs::create_directories(root_ + "/outside");
    fs::create_directories(PodDir());
    pod_.metadata.name = "web";
    pod_.metadata.namespace_ = "ns1";
    pod_.metadata.uid = "uid-1";
    pod_.spec.node_name = "node-a";
    container_.name = "app";
  }
  void TearDown() override {
    for (const std::string& m : MountPointsUnder(root_)) (void)Unmount(m);
    fs::remove_all(root_);
  }

  bool MountAllowed() { return testing::MountAllowed(root_); }
  std::string PodDir() const { return root_ + "/pods/uid-1"; }
  // Where the subPath of volumeMount `index` of container "app" is bind-mounted.
  std::string Target(const std::string& volume, int index) const {
    return absl::StrCat(fs::canonical(PodDir()).string(), "/volume-subpaths/", volume, "/app/",
                        index);
  }

  absl::StatusOr<std::vector<v1::Mount>> Make() {
    return MakeContainerMounts(
        pod_, container_,
        [&](const std::string& n) -> std::optional<MountableVolume> {
          if (n == "cache") return MountableVolume{root_ + "/cache", false};
          if (n == "info") return MountableVolume{root_ + "/info", true};
          return std::nullopt;
        },
        PodDir());
  }
  void AddMount(api::VolumeMount vm) { container_.volume_mounts.push_back(std::move(vm)); }

  std::string root_;
  api::Pod pod_;
  api::Container container_;
};

TEST_F(ContainerMountsTest, BasicMounts) {
  AddMount({"cache", false, "/cache", "", std::nullopt, ""});
  AddMount({"info", false, "/etc/info", "", std::string("HostToContainer"), ""});
  AddMount({"cache", true, "/ro", "", std::string("None"), ""});
  absl::StatusOr<std::vector<v1::Mount>> m = Make();
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->size(), 3u);
  EXPECT_EQ((*m)[0].container_path(), "/cache");
  EXPECT_EQ((*m)[0].host_path(), root_ + "/cache");
  EXPECT_FALSE((*m)[0].readonly());
  EXPECT_FALSE((*m)[0].selinux_relabel());
  EXPECT_EQ((*m)[0].propagation(), v1::PROPAGATION_PRIVATE);
  EXPECT_TRUE((*m)[1].readonly());  // downwardAPI-like volumes are always read-only
  EXPECT_EQ((*m)[1].propagation(), v1::PROPAGATION_HOST_TO_CONTAINER);
  EXPECT_TRUE((*m)[2].readonly());
  EXPECT_EQ((*m)[2].propagation(), v1::PROPAGATION_PRIVATE);
}

TEST_F(ContainerMountsTest, BidirectionalNeedsPrivileged) {
  AddMount({"cache", false, "/cache", "", std::string("Bidirectional"), ""});
  EXPECT_EQ(std::string(Make().status().message()),
            "Bidirectional mount propagation is available only to privileged containers");
  container_.security_context = api::SecurityContext{};
  container_.security_context->privileged = true;
  absl::StatusOr<std::vector<v1::Mount>> m = Make();
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)[0].propagation(), v1::PROPAGATION_BIDIRECTIONAL);
  container_.volume_mounts[0].mount_propagation = "Sideways";
  EXPECT_EQ(std::string(Make().status().message()), "invalid MountPropagation mode: \"Sideways\"");
}

TEST_F(ContainerMountsTest, MissingVolume) {
  AddMount({"nope", false, "/x", "", std::nullopt, ""});
  absl::StatusOr<std::vector<v1::Mount>> m = Make();
  EXPECT_EQ(std::string(m.status().message()),
            "cannot find volume \"nope\" to mount into container \"app\"");
}

TEST_F(ContainerMountsTest, SubPathCreatedWithVolumeModeAndBindMounted) {
  if (!MountAllowed()) GTEST_SKIP() << "mount(2) not permitted here";
  AddMount({"info", false, "/etc/info", "", std::nullopt, ""});
  AddMount({"cache", false, "/data", "a/b", std::nullopt, ""});
  absl::StatusOr<std::vector<v1::Mount>> m = Make();
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)[0].host_path(), root_ + "/info");
  // The runtime gets the bind target (named by the volumeMount's index), not the volume path.
  EXPECT_EQ((*m)[1].host_path(), Target("cache", 1));
  EXPECT_EQ((*m)[1].container_path(), "/data");
  EXPECT_TRUE(IsMountPoint(Target("cache", 1)));
  struct stat st;
  ASSERT_EQ(::stat((root_ + "/cache/a/b").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0777u);
  ASSERT_EQ(::stat(Target("cache", 1).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0777u);  // the directory itself, through the bind mount
  { std::ofstream(root_ + "/cache/a/b/f") << "hello"; }
  EXPECT_TRUE(fs::exists(Target("cache", 1) + "/f"));
  // Existing subPath: the same bind mount again.
  ASSERT_TRUE(Make().ok());
  EXPECT_EQ(MountPointsUnder(PodDir()).size(), 1u);
}

TEST_F(ContainerMountsTest, SubPathValidation) {
  AddMount({"cache", false, "/data", "/etc", std::nullopt, ""});
  EXPECT_EQ(std::string(Make().status().message()),
            "error SubPath `/etc` must not be an absolute path");
  container_.volume_mounts[0].sub_path = "a/../../b";
  EXPECT_EQ(std::string(Make().status().message()),
            "unable to provision SubPath `a/../../b`: must not contain '..'");
  container_.volume_mounts[0].sub_path = "..";
  EXPECT_FALSE(Make().ok());
  EXPECT_FALSE(fs::exists(PodDir() + "/volume-subpaths"));
  // "..." and "a..b" are ordinary names.
  if (!MountAllowed()) GTEST_SKIP() << "mount(2) not permitted here";
  container_.volume_mounts[0].sub_path = "a..b";
  EXPECT_TRUE(Make().ok());
  EXPECT_TRUE(fs::is_directory(root_ + "/cache/a..b"));
}

TEST_F(ContainerMountsTest, SubPathSymlinkEscapeRejected) {
  fs::create_directory_symlink(root_ + "/outside", root_ + "/cache/escape");
  fs::create_symlink("/etc/passwd", root_ + "/cache/passwd");
  AddMount({"cache", false, "/data", "escape", std::nullopt, ""});
  EXPECT_EQ(std::string(Make().status().message()),
            "failed to prepare subPath for volumeMount \"cache\" of container \"app\"");
  container_.volume_mounts[0].sub_path = "passwd";
  EXPECT_EQ(std::string(Make().status().message()),
            "failed to prepare subPath for volumeMount \"cache\" of container \"app\"");
  container_.volume_mounts[0].sub_path = "escape/newdir";
  EXPECT_EQ(std::string(Make().status().message()),
            "failed to create subPath directory for volumeMount \"cache\" of container \"app\"");
  EXPECT_FALSE(fs::exists(root_ + "/outside/newdir"));
  // Nothing was mounted or left behind for the runtime.
  EXPECT_TRUE(MountPointsUnder(root_).empty());
  EXPECT_FALSE(fs::exists(PodDir() + "/volume-subpaths/cache/app/0"));
}

TEST_F(ContainerMountsTest, SubPathExpr) {
  if (!MountAllowed()) GTEST_SKIP() << "mount(2) not permitted here";
  container_.env.push_back(
      {"POD", "", api::EnvVarSource{api::ObjectFieldSelector{"v1", "metadata.name"}, {}, {}, {}}});
  container_.env.push_back({"BASE", "logs", std::nullopt});
  container_.env.push_back({"DIR", "$(BASE)/$(POD)", std::nullopt});
  container_.env.push_back(
      {"NODE", "", api::EnvVarSource{api::ObjectFieldSelector{"v1", "spec.nodeName"}, {}, {}, {}}});
  AddMount({"cache", false, "/data", "", std::nullopt, "$(DIR)/$(NODE)/$$x"});
  absl::StatusOr<std::vector<v1::Mount>> m = Make();
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)[0].host_path(), Target("cache", 0));
  EXPECT_TRUE(fs::is_directory(root_ + "/cache/logs/web/node-a/$x"));
  { std::ofstream(root_ + "/cache/logs/web/node-a/$x/f") << "hello"; }
  EXPECT_TRUE(fs::exists(Target("cache", 0) + "/f"));

  container_.volume_mounts[0].sub_path_expr = "$(NOPE)/$(ALSO)";
  EXPECT_EQ(std::string(Make().status().message()), "missing value for ALSO, NOPE");
  container_.volume_mounts[0].sub_path_expr = "$(BASE)/../..";
  EXPECT_EQ(std::string(Make().status().message()),
            "unable to provision SubPath `logs/../..`: must not contain '..'");
}

TEST(ExpandSubPathExprTest, GoExpansionSyntax) {
  const std::map<std::string, std::string> env = {{"A", "1"}, {"E", ""}};
  EXPECT_EQ(*ExpandSubPathExpr("x$(A)y", env), "x1y");
  EXPECT_EQ(*ExpandSubPathExpr("$$(A)", env), "$(A)");
  EXPECT_EQ(*ExpandSubPathExpr("$A", env), "$A");
  EXPECT_EQ(*ExpandSubPathExpr("$(A", env), "$(A");
  EXPECT_EQ(*ExpandSubPathExpr("end$", env), "end$");
  EXPECT_EQ(std::string(ExpandSubPathExpr("$(E)", env).status().message()), "missing value for E");
}

}  // namespace
}  // namespace kubelet::volume
