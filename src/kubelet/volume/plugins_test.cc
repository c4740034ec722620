#include "kubelet/volume/plugins.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/volume/mount_utils.h"

namespace kubelet::volume {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

api::Quantity Q(const char* s) { return *api::ParseQuantity(s); }

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/volume-plugins-test.XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    for (const std::string& m : MountPointsUnder(path_)) (void)Unmount(m);
    fs::remove_all(path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Msg(const absl::Status& st) { return std::string(st.message()); }

TEST(HostPathTypeTest, UnsetAndEmptyTypeSkipChecks) {
  EXPECT_TRUE(CheckHostPathType("/does/not/exist", std::nullopt).ok());
  EXPECT_TRUE(CheckHostPathType("/does/not/exist", std::string()).ok());
}

TEST(HostPathTypeTest, DirectoryOrCreateMakesDirectory) {
  TempDir t;
  const std::string p = t.path() + "/a/b";
  ASSERT_TRUE(CheckHostPathType(p, "DirectoryOrCreate").ok());
  struct stat st;
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  EXPECT_TRUE(CheckHostPathType(p, "DirectoryOrCreate").ok());
  std::ofstream(t.path() + "/file") << "x";
  EXPECT_EQ(Msg(CheckHostPathType(t.path() + "/file", "DirectoryOrCreate")),
            "hostPath type check failed: " + t.path() + "/file is not a directory");
}

TEST(HostPathTypeTest, Directory) {
  TempDir t;
  EXPECT_TRUE(CheckHostPathType(t.path(), "Directory").ok());
  EXPECT_EQ(Msg(CheckHostPathType(t.path() + "/missing", "Directory")),
            "hostPath type check failed: " + t.path() + "/missing is not a directory");
  EXPECT_EQ(Msg(CheckHostPathType("/dev/null", "Directory")),
            "hostPath type check failed: /dev/null is not a directory");
}

TEST(HostPathTypeTest, FileOrCreateCreatesEmptyFileButNotParents) {
  TempDir t;
  const std::string p = t.path() + "/f";
  ASSERT_TRUE(CheckHostPathType(p, "FileOrCreate").ok());
  struct stat st;
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_size, 0);
  EXPECT_TRUE(CheckHostPathType(p, "FileOrCreate").ok());
  EXPECT_FALSE(CheckHostPathType(t.path() + "/nodir/f", "FileOrCreate").ok());
  EXPECT_FALSE(fs::exists(t.path() + "/nodir"));
  EXPECT_EQ(Msg(CheckHostPathType(t.path(), "FileOrCreate")),
            "hostPath type check failed: " + t.path() + " is not a file");
}

TEST(HostPathTypeTest, File) {
  TempDir t;
  std::ofstream(t.path() + "/f") << "x";
  EXPECT_TRUE(CheckHostPathType(t.path() + "/f", "File").ok());
  // Symlinks are followed.
  fs::create_symlink(t.path() + "/f", t.path() + "/link");
  EXPECT_TRUE(CheckHostPathType(t.path() + "/link", "File").ok());
  EXPECT_EQ(Msg(CheckHostPathType(t.path(), "File")),
            "hostPath type check failed: " + t.path() + " is not a file");
  EXPECT_EQ(Msg(CheckHostPathType("/dev/null", "File")),
            "hostPath type check failed: /dev/null is not a file");
}

TEST(HostPathTypeTest, Socket) {
  TempDir t;
  const std::string p = t.path() + "/sock";
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, p.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_TRUE(CheckHostPathType(p, "Socket").ok());
  ::close(fd);
  EXPECT_EQ(Msg(CheckHostPathType(t.path(), "Socket")),
            "hostPath type check failed: " + t.path() + " is not a socket file");
}

TEST(HostPathTypeTest, CharDevice) {
  EXPECT_TRUE(CheckHostPathType("/dev/null", "CharDevice").ok());
  EXPECT_EQ(Msg(CheckHostPathType("/tmp", "CharDevice")),
            "hostPath type check failed: /tmp is not a character device");
}

TEST(HostPathTypeTest, BlockDevice) {
  EXPECT_EQ(Msg(CheckHostPathType("/dev/null", "BlockDevice")),
            "hostPath type check failed: /dev/null is not a block device");
  TempDir t;
  const std::string p = t.path() + "/blk";
  if (::mknod(p.c_str(), S_IFBLK | 0600, makedev(7, 0)) == 0) {
    EXPECT_TRUE(CheckHostPathType(p, "BlockDevice").ok());
  }
}

TEST(HostPathTypeTest, UnknownType) {
  EXPECT_EQ(Msg(CheckHostPathType("/tmp", "Bogus")), "Bogus is an invalid volume type");
}

api::Pod DownwardPod() {
  api::Pod pod;
  pod.metadata.name = "web";
  pod.metadata.namespace_ = "default";
  pod.metadata.uid = "uid-1";
  pod.metadata.labels = {{"zeta", "last"}, {"app", "x \"quoted\"\n"}};
  pod.metadata.annotations = {{"note", "caf\xc3\xa9\ttab"}};
  api::Container c;
  c.name = "app";
  c.resources.limits["memory"] = Q("64Mi");
  c.resources.requests["cpu"] = Q("250m");
  pod.spec.containers.push_back(c);
  api::Container init;
  init.name = "init";
  init.resources.limits["cpu"] = Q("1");
  pod.spec.init_containers.push_back(init);
  return pod;
}

TEST(DownwardAPITest, FormatsLabelsAndAnnotationsLikeUpstream) {
  api::Pod pod = DownwardPod();
  EXPECT_EQ(*ExtractFieldPathAsString(pod, "metadata.labels"),
            "app=\"x \\\"quoted\\\"\\n\"\nzeta=\"last\"");
  EXPECT_EQ(*ExtractFieldPathAsString(pod, "metadata.annotations"), "note=\"café\\ttab\"");
  EXPECT_EQ(*ExtractFieldPathAsString(pod, "metadata.labels['zeta']"), "last");
  EXPECT_EQ(*ExtractFieldPathAsString(pod, "metadata.annotations['missing']"), "");
  EXPECT_EQ(*ExtractFieldPathAsString(pod, "metadata.name"), "web");
  EXPECT_EQ(*ExtractFieldPathAsString(pod, "metadata.namespace"), "default");
  EXPECT_EQ(*ExtractFieldPathAsString(pod, "metadata.uid"), "uid-1");
  EXPECT_EQ(Msg(ExtractFieldPathAsString(pod, "spec.nodeName").status()),
            "unsupported fieldPath: spec.nodeName");
  EXPECT_EQ(api::FormatMap({}), "");
}

TEST(DownwardAPITest, ResourceValues) {
  api::Pod pod = DownwardPod();
  const api::ResourceList alloc = {{"cpu", Q("4")}, {"memory", Q("8Gi")}};
  auto value = [&](const std::string& c, const std::string& r, const char* divisor = "0") {
    api::ResourceFieldSelector fs{c, r, Q(divisor)};
    absl::StatusOr<std::string> v = ExtractResourceValue(fs, pod, alloc);
    return v.ok() ? *v : Msg(v.status());
  };
  EXPECT_EQ(value("app", "limits.memory"), std::to_string(64 << 20));
  EXPECT_EQ(value("app", "limits.memory", "1Mi"), "64");
  EXPECT_EQ(value("app", "limits.cpu"), "4");  // from allocatable
  EXPECT_EQ(value("app", "limits.cpu", "1m"), "4000");
  EXPECT_EQ(value("app", "requests.cpu"), "1");  // 250m rounded up
  EXPECT_EQ(value("app", "requests.cpu", "1m"), "250");
  EXPECT_EQ(value("app", "requests.memory"), "0");
  EXPECT_EQ(value("init", "limits.cpu"), "1");
  EXPECT_EQ(value("nope", "limits.cpu"), "container nope not found");
  EXPECT_EQ(value("app", "limits.gpu"), "unsupported container resource : limits.gpu");
}

TEST(DownwardAPITest, CollectDataModes) {
  api::Pod pod = DownwardPod();
  api::DownwardAPIVolumeFile name{"name", api::ObjectFieldSelector{"v1", "metadata.name"},
                                  std::nullopt, std::nullopt};
  api::DownwardAPIVolumeFile labels{"sub/labels", api::ObjectFieldSelector{"", "metadata.labels"},
                                    std::nullopt, 0400};
  api::DownwardAPIVolumeFile mem{"mem", std::nullopt,
                                 api::ResourceFieldSelector{"app", "limits.memory", Q("1Mi")},
                                 std::nullopt};
  absl::StatusOr<Payload> p = CollectDownwardAPIData(pod, {name, labels, mem}, std::nullopt, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->at("name"), (FileProjection{"web", 0644}));
  EXPECT_EQ(p->at("sub/labels").mode, 0400u);
  EXPECT_EQ(p->at("mem").data, "64");
  p = CollectDownwardAPIData(pod, {name}, 0440, {});
  EXPECT_EQ(p->at("name").mode, 0440u);
  api::DownwardAPIVolumeFile bad{"bad", api::ObjectFieldSelector{"v1", "status.podIP"},
                                 std::nullopt, std::nullopt};
  EXPECT_FALSE(CollectDownwardAPIData(pod, {bad}, std::nullopt, {}).ok());
}

TEST(EmptyDirTest, MemorySize) {
  api::Pod pod = DownwardPod();
  const int64_t alloc = int64_t{8} << 30;
  // Not every container has a memory limit: node allocatable.
  EXPECT_EQ(MemoryBackedSizeBytes(pod, std::nullopt, alloc), alloc);
  EXPECT_EQ(MemoryBackedSizeBytes(pod, Q("1Gi"), alloc), int64_t{1} << 30);
  EXPECT_EQ(MemoryBackedSizeBytes(pod, Q("16Gi"), alloc), alloc);
  pod.spec.init_containers[0].resources.limits["memory"] = Q("128Mi");
  EXPECT_EQ(PodMemoryLimitBytes(pod), 128 << 20);
  EXPECT_EQ(MemoryBackedSizeBytes(pod, std::nullopt, alloc), 128 << 20);
  EXPECT_EQ(MemoryBackedSizeBytes(pod, Q("1Mi"), alloc), 1 << 20);
  EXPECT_EQ(MemoryBackedSizeBytes(pod, std::nullopt, 0), 128 << 20);
  pod.spec.containers[0].resources.limits.clear();
  EXPECT_EQ(MemoryBackedSizeBytes(pod, std::nullopt, 0), 0);
}

TEST(EmptyDirTest, DiskDirectoryIs0777) {
  TempDir t;
  const std::string dir = t.path() + "/pods/u/volumes/kubernetes.io~empty-dir/cache";
  ASSERT_TRUE(SetUpEmptyDir(dir, false, 0).ok());
  struct stat st;
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0777u);
  std::ofstream(dir + "/data") << "hello";
  ASSERT_TRUE(SetUpEmptyDir(dir, false, 0).ok());  // idempotent, keeps data
  EXPECT_TRUE(fs::exists(dir + "/data"));
  absl::StatusOr<int64_t> used = DiskUsageBytes(dir);
  ASSERT_TRUE(used.ok());
  EXPECT_GT(*used, 0);
  ASSERT_TRUE(TearDownEmptyDir(dir).ok());
  EXPECT_FALSE(fs::exists(dir));
}

TEST(EmptyDirTest, MemoryMediumMountsSizedTmpfs) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount";
  TempDir t;
  const std::string dir = t.path() + "/mem";
  ASSERT_TRUE(SetUpEmptyDir(dir, true, 4 << 20).ok());
  EXPECT_TRUE(IsMountPoint(dir));
  EXPECT_TRUE(IsTmpfs(dir));
  std::ofstream(dir + "/x") << "in memory";
  ASSERT_TRUE(SetUpEmptyDir(dir, true, 4 << 20).ok());  // already mounted: no second mount
  EXPECT_EQ(MountPointsUnder(dir).size(), 1u);
  EXPECT_TRUE(fs::exists(dir + "/x"));
  // Never deletes across a mount.
  EXPECT_FALSE(RemoveAllNoCrossMounts(t.path()).ok());
  EXPECT_TRUE(fs::exists(dir + "/x"));
  ASSERT_TRUE(TearDownEmptyDir(dir).ok());
  EXPECT_FALSE(IsMountPoint(dir));
  EXPECT_FALSE(fs::exists(dir));
}

TEST(EmptyDirTest, LimitMessage) {
  EXPECT_EQ(EmptyDirLimitMessage("cache", Q("1Mi")),
            "Usage of EmptyDir volume \"cache\" exceeds the limit \"1Mi\". ");
}

TEST(PluginNameTest, Escape) {
  EXPECT_EQ(EscapePluginName(kEmptyDirPluginName), "kubernetes.io~empty-dir");
  EXPECT_EQ(EscapePluginName(kDownwardAPIPluginName), "kubernetes.io~downward-api");
}

}  // namespace
}  // namespace kubelet::volume
