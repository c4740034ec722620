#include "kubelet/volume/subpath.h"

#include <errno.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/volume/mount_utils.h"
#include "kubelet/volume/testing/mount_test_util.h"

namespace kubelet::volume {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

std::string ReadFile(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& p, const std::string& content) {
  std::ofstream out(p, std::ios::trunc);
  out << content;
}

class SubPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/subpath-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    vol_ = root_ + "/vol";
    outside_ = root_ + "/outside";
    pod_dir_ = root_ + "/pods/uid-1";
    fs::create_directories(vol_);
    fs::create_directories(outside_ + "/b");
    fs::create_directories(pod_dir_);
    WriteFile(outside_ + "/secret", "host secret\n");
    WriteFile(outside_ + "/b/marker", "outside\n");
  }
  void TearDown() override {
    for (const std::string& m : MountPointsUnder(root_)) (void)Unmount(m);
    fs::remove_all(root_);
  }

  bool MountAllowed() { return testing::MountAllowed(root_); }

  SubPath Sp(const std::string& sub_path, int index = 0) {
    return SubPath{.volume_path = vol_,
                   .sub_path = sub_path,
                   .pod_dir = pod_dir_,
                   .volume_name = "data",
                   .container_name = "app",
                   .mount_index = index};
  }
  std::string Target(int index) {
    return pod_dir_ + "/volume-subpaths/data/app/" + std::to_string(index);
  }

  std::string root_, vol_, outside_, pod_dir_;
};

TEST_F(SubPathTest, SafeOpenWalksRealDirectories) {
  fs::create_directories(vol_ + "/a/b");
  WriteFile(vol_ + "/a/b/f", "x");
  absl::StatusOr<ScopedFd> fd = SafeOpen(vol_, "a/b/f");
  ASSERT_TRUE(fd.ok()) << fd.status();
  struct stat st, want;
  ASSERT_EQ(::fstat(fd->get(), &st), 0);
  ASSERT_EQ(::stat((vol_ + "/a/b/f").c_str(), &want), 0);
  EXPECT_EQ(st.st_ino, want.st_ino);
  EXPECT_TRUE(SafeOpen(vol_, "./a//b/").ok());
  EXPECT_TRUE(SafeOpen(vol_, "").ok());  // the volume root itself
  EXPECT_FALSE(SafeOpen(vol_, "a/missing").ok());
}

TEST_F(SubPathTest, SafeOpenRefusesEverySymlinkElement) {
  fs::create_directories(vol_ + "/real/b");
  // Even a symlink that stays inside the volume: SafeOpen takes resolved paths only.
  fs::create_directory_symlink("real", vol_ + "/inside");
  absl::StatusOr<ScopedFd> fd = SafeOpen(vol_, "inside/b");
  EXPECT_EQ(fd.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(fd.status().message()),
              HasSubstr("unexpected symlink found " + vol_ + "/inside"));
  // The last element too.
  EXPECT_FALSE(SafeOpen(vol_, "inside").ok());
}

TEST_F(SubPathTest, SafeOpenRefusesDotDot) {
  fs::create_directories(vol_ + "/a");
  absl::StatusOr<ScopedFd> fd = SafeOpen(vol_, "a/../../outside");
  EXPECT_EQ(fd.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(fd.status().message()), HasSubstr("must not contain '..'"));
  EXPECT_FALSE(SafeOpen(vol_, "..").ok());
}

TEST_F(SubPathTest, ComponentSwappedForSymlinkAfterCheckIsRefused) {
  fs::create_directories(vol_ + "/a/b");
  // The check: "a/b" resolves inside the volume.
  const std::string resolved = fs::canonical(vol_ + "/a/b").string();
  ASSERT_EQ(resolved, fs::canonical(vol_).string() + "/a/b");
  // The container swaps "a" for a symlink to a host directory that has a "b" too.
  fs::rename(vol_ + "/a", vol_ + "/a.old");
  fs::create_directory_symlink(outside_, vol_ + "/a");
  absl::StatusOr<ScopedFd> fd = SafeOpen(vol_, "a/b");
  ASSERT_FALSE(fd.ok());
  EXPECT_THAT(std::string(fd.status().message()), HasSubstr("unexpected symlink found"));
  // A fresh check sees the escape.
  absl::StatusOr<std::string> t = BindSubPath(Sp("a/b"));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("not within volume path"));
  EXPECT_FALSE(fs::exists(Target(0)));
}

TEST_F(SubPathTest, AbsoluteSymlinkOutOfTheVolumeIsRefused) {
  fs::create_symlink(outside_ + "/secret", vol_ + "/file-link");
  fs::create_directory_symlink(outside_, vol_ + "/dir-link");
  for (const char* sub : {"file-link", "dir-link", "dir-link/b"}) {
    absl::StatusOr<std::string> t = BindSubPath(Sp(sub));
    ASSERT_FALSE(t.ok()) << sub;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kPermissionDenied) << sub;
    EXPECT_THAT(std::string(t.status().message()),
                HasSubstr("not within volume path \"" + fs::canonical(vol_).string() + "\""));
  }
  // Relative ".." symlinks out are the same.
  fs::create_directory_symlink("../outside", vol_ + "/rel-link");
  EXPECT_FALSE(BindSubPath(Sp("rel-link")).ok());
  EXPECT_FALSE(BindSubPath(Sp("/etc")).ok());
  EXPECT_THAT(MountPointsUnder(root_), IsEmpty());
}

TEST_F(SubPathTest, SafeMakeDirCreatesWithModeAndNeverLeavesTheVolume) {
  ASSERT_TRUE(SafeMakeDir(vol_, "x/y/z", 0777).ok());
  struct stat st;
  ASSERT_EQ(::stat((vol_ + "/x/y/z").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0777u);                // not reduced by the umask
  ASSERT_TRUE(SafeMakeDir(vol_, "x/y/z", 0777).ok());  // idempotent

  // Existing symlinks that stay inside are followed; new directories land in their target.
  fs::create_directory_symlink("x/y", vol_ + "/in");
  ASSERT_TRUE(SafeMakeDir(vol_, "in/new", 0750).ok());
  EXPECT_TRUE(fs::is_directory(vol_ + "/x/y/new"));

  // Symlinks out of the volume (absolute, relative) are refused before anything is created.
  fs::create_directory_symlink(outside_, vol_ + "/out-abs");
  fs::create_directory_symlink("../outside", vol_ + "/out-rel");
  for (const char* sub : {"out-abs/newdir", "out-rel/newdir", "out-abs"}) {
    absl::Status st2 = SafeMakeDir(vol_, sub, 0777);
    EXPECT_EQ(st2.code(), absl::StatusCode::kPermissionDenied) << sub << ": " << st2;
  }
  EXPECT_FALSE(fs::exists(outside_ + "/newdir"));
  EXPECT_EQ(SafeMakeDir(vol_, "a/../b", 0777).code(), absl::StatusCode::kInvalidArgument);
  // A file in the way is not a directory.
  WriteFile(vol_ + "/file", "");
  EXPECT_FALSE(SafeMakeDir(vol_, "file/sub", 0777).ok());
}

TEST_F(SubPathTest, BindPinsTheCheckedDirectory) {
  if (!MountAllowed()) GTEST_SKIP() << "mount(2) not permitted here";
  fs::create_directories(vol_ + "/data");
  WriteFile(vol_ + "/data/f", "inside\n");
  absl::StatusOr<std::string> t = BindSubPath(Sp("data", 3));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, fs::canonical(pod_dir_).string() + "/volume-subpaths/data/app/3");
  EXPECT_TRUE(IsMountPoint(*t));
  EXPECT_EQ(ReadFile(*t + "/f"), "inside\n");

  // Swapping the subPath for a symlink out of the volume does not move the bind mount.
  fs::rename(vol_ + "/data", vol_ + "/data.old");
  fs::create_directory_symlink(outside_ + "/b", vol_ + "/data");
  EXPECT_EQ(ReadFile(*t + "/f"), "inside\n");
  EXPECT_FALSE(fs::exists(*t + "/marker"));
  // And preparing it again now is refused.
  EXPECT_FALSE(BindSubPath(Sp("data", 3)).ok());
}

TEST_F(SubPathTest, BindIsReusedAndReplacedWhenTheSubPathChanged) {
  if (!MountAllowed()) GTEST_SKIP() << "mount(2) not permitted here";
  fs::create_directories(vol_ + "/data");
  WriteFile(vol_ + "/data/f", "one\n");
  absl::StatusOr<std::string> t = BindSubPath(Sp("data"));
  ASSERT_TRUE(t.ok()) << t.status();
  // A container restart: the same bind mount, not a second one.
  absl::StatusOr<std::string> again = BindSubPath(Sp("data"));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *t);
  EXPECT_THAT(MountPointsUnder(*t), SizeIs(1));

  // The directory was replaced meanwhile: the stale bind mount is replaced.
  fs::rename(vol_ + "/data", vol_ + "/data.old");
  fs::create_directories(vol_ + "/data");
  WriteFile(vol_ + "/data/f", "two\n");
  again = BindSubPath(Sp("data"));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(MountPointsUnder(*t), SizeIs(1));
  EXPECT_EQ(ReadFile(*t + "/f"), "two\n");
}

TEST_F(SubPathTest, FileSubPathAndSymlinkInsideTheVolume) {
  if (!MountAllowed()) GTEST_SKIP() << "mount(2) not permitted here";
  fs::create_directories(vol_ + "/conf");
  WriteFile(vol_ + "/conf/app.ini", "k=v\n");
  // An absolute symlink and a relative one, both resolving inside the volume.
  fs::create_symlink(vol_ + "/conf/app.ini", vol_ + "/abs-link");
  fs::create_directory_symlink("conf", vol_ + "/rel-link");
  absl::StatusOr<std::string> f = BindSubPath(Sp("abs-link", 0));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(*f)));
  EXPECT_EQ(ReadFile(*f), "k=v\n");
  absl::StatusOr<std::string> d = BindSubPath(Sp("rel-link", 1));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(*d)));
  EXPECT_EQ(ReadFile(*d + "/app.ini"), "k=v\n");
  // Writes through the bind mount land in the volume.
  WriteFile(*d + "/new", "via bind\n");
  EXPECT_EQ(ReadFile(vol_ + "/conf/new"), "via bind\n");
}

TEST_F(SubPathTest, CleanSubPathsUnmountsAndRemovesWithoutTouchingTheVolume) {
  if (!MountAllowed()) GTEST_SKIP() << "mount(2) not permitted here";
  fs::create_directories(vol_ + "/d");
  WriteFile(vol_ + "/d/keep", "data\n");
  WriteFile(vol_ + "/file", "file data\n");
  ASSERT_TRUE(BindSubPath(Sp("d", 0)).ok());
  ASSERT_TRUE(BindSubPath(Sp("file", 1)).ok());
  SubPath other = Sp("d", 0);
  other.container_name = "sidecar";
  ASSERT_TRUE(BindSubPath(other).ok());
  EXPECT_THAT(MountPointsUnder(pod_dir_), SizeIs(3));

  ASSERT_TRUE(CleanSubPaths(pod_dir_, "data").ok());
  EXPECT_THAT(MountPointsUnder(root_), IsEmpty());
  EXPECT_FALSE(fs::exists(pod_dir_ + "/volume-subpaths"));
  EXPECT_EQ(ReadFile(vol_ + "/d/keep"), "data\n");
  EXPECT_EQ(ReadFile(vol_ + "/file"), "file data\n");
  // Nothing left: not an error.
  EXPECT_TRUE(CleanSubPaths(pod_dir_, "data").ok());
  EXPECT_TRUE(CleanSubPaths(root_ + "/no-such-pod", "data").ok());
}

TEST_F(SubPathTest, CleanSubPathsNeverDeletesRecursively) {
  // A target that is a non-empty directory (not a mount the kubelet made) is reported, and its
  // content stays.
  const std::string t = Target(0);
  fs::create_directories(t);
  WriteFile(t + "/precious", "x");
  absl::Status st = CleanSubPaths(pod_dir_, "data");
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr("failed to clean subpaths of volume \"data\""));
  EXPECT_EQ(ReadFile(t + "/precious"), "x");
}

}  // namespace
}  // namespace kubelet::volume
