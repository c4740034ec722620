#include "kubelet/cm/cgroup_manager.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/cm/testing/fake_cgroup_tree.h"

namespace kubelet::cm {
namespace {

using testing::FakeCgroupTree;
using ::testing::HasSubstr;

TEST(CgroupLayoutTest, ParsesHybridAsV1) {
  auto layout = ParseCgroupLayout(
      "tmpfs /sys/fs/cgroup tmpfs rw 0 0\n"
      "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,cpu,cpuacct 0 0\n"
      "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n"
      "cgroup /sys/fs/cgroup/systemd cgroup rw,xattr,name=systemd 0 0\n"
      "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n");
  ASSERT_TRUE(layout.ok());
  EXPECT_FALSE(layout->unified);
  EXPECT_EQ(layout->controllers.at("cpu"), "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(layout->controllers.at("cpuacct"), "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(layout->controllers.count("systemd"), 0u);
  EXPECT_EQ(layout->extra_hierarchies,
            (std::vector<std::string>{"/sys/fs/cgroup/systemd", "/sys/fs/cgroup/unified"}));
  EXPECT_EQ(layout->Hierarchies().size(), 4u);
}

TEST(CgroupLayoutTest, ParsesUnified) {
  auto layout = ParseCgroupLayout("cgroup2 /sys/fs/cgroup cgroup2 rw,nsdelegate 0 0\n");
  ASSERT_TRUE(layout.ok());
  EXPECT_TRUE(layout->unified);
  EXPECT_EQ(layout->unified_root, "/sys/fs/cgroup");
  EXPECT_FALSE(ParseCgroupLayout("proc /proc proc rw 0 0\n").ok());
}

TEST(CgroupManagerTest, UnknownDriver) {
  FakeCgroupTree tree(false);
  EXPECT_FALSE(NewCgroupManager(tree.fs(), tree.layout(), "openrc").ok());
}

TEST(CgroupManagerV1Test, CreateUpdateDestroy) {
  FakeCgroupTree tree(false);
  auto m = *NewCgroupManager(tree.fs(), tree.layout(), kCgroupDriverCgroupfs);
  CgroupName name{"kubepods", "burstable", "pod1"};
  EXPECT_FALSE(m->Exists(name));
  EXPECT_THAT(m->Validate(name).message(),
              HasSubstr("cgroup [\"kubepods\" \"burstable\" \"pod1\"] has some missing paths: "));
  ResourceConfig rc;
  rc.cpu_shares = 512;
  rc.cpu_quota = 50000;
  rc.cpu_period = 100000;
  rc.memory = 64 << 20;
  rc.pids_limit = 100;
  rc.hugepage_limits = {{2 << 20, 0}};
  ASSERT_TRUE(m->Create({name, rc}).ok());
  EXPECT_TRUE(m->Exists(name));
  EXPECT_EQ(m->Name(name), "/kubepods/burstable/pod1");
  EXPECT_EQ(tree.Read("cpu,cpuacct/kubepods/burstable/pod1/cpu.shares"), "512");
  EXPECT_EQ(tree.Read("cpu,cpuacct/kubepods/burstable/pod1/cpu.cfs_quota_us"), "50000");
  EXPECT_EQ(tree.Read("cpu,cpuacct/kubepods/burstable/pod1/cpu.cfs_period_us"), "100000");
  EXPECT_EQ(tree.Read("memory/kubepods/burstable/pod1/memory.limit_in_bytes"), "67108864");
  EXPECT_EQ(tree.Read("pids/kubepods/burstable/pod1/pids.max"), "100");
  EXPECT_EQ(tree.Read("hugetlb/kubepods/burstable/pod1/hugetlb.2MB.limit_in_bytes"), "0");
  EXPECT_TRUE(tree.Exists("devices/kubepods/burstable/pod1"));
  EXPECT_TRUE(tree.Exists("systemd/kubepods/burstable/pod1"));
  // cpuset inherited at every level.
  EXPECT_EQ(tree.Read("cpuset/kubepods/cpuset.cpus"), "0-3");
  EXPECT_EQ(tree.Read("cpuset/kubepods/burstable/pod1/cpuset.cpus"), "0-3");
  EXPECT_EQ(tree.Read("cpuset/kubepods/burstable/pod1/cpuset.mems"), "0");
  // Unset fields are left alone.
  ASSERT_TRUE(m->Update({name, ResourceConfig{.cpu_shares = 2}}).ok());
  EXPECT_EQ(tree.Read("cpu,cpuacct/kubepods/burstable/pod1/cpu.shares"), "2");
  EXPECT_EQ(tree.Read("memory/kubepods/burstable/pod1/memory.limit_in_bytes"), "67108864");
  // Unlimited.
  ASSERT_TRUE(m->Update({name, ResourceConfig{.cpu_quota = -1, .pids_limit = -1}}).ok());
  EXPECT_EQ(tree.Read("cpu,cpuacct/kubepods/burstable/pod1/cpu.cfs_quota_us"), "-1");
  EXPECT_EQ(tree.Read("pids/kubepods/burstable/pod1/pids.max"), "max");

  EXPECT_EQ(m->Children({"kubepods", "burstable"}), (std::vector<CgroupName>{name}));
  // A container cgroup below the pod cgroup goes too; processes block removal.
  tree.Write(tree.root() + "/memory/kubepods/burstable/pod1/ctr/cgroup.procs", "42\n");
  EXPECT_EQ(m->Pids(NewCgroupName(name, {"ctr"})), std::vector<int>{42});
  EXPECT_EQ(m->Destroy(name).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(tree.Exists("memory/kubepods/burstable/pod1"));
  tree.Write(tree.root() + "/memory/kubepods/burstable/pod1/ctr/cgroup.procs", "");
  EXPECT_TRUE(m->Destroy(name).ok());
  EXPECT_FALSE(m->Exists(name));
  for (const char* h :
       {"cpu,cpuacct", "cpuset", "memory", "pids", "hugetlb", "devices", "systemd"}) {
    EXPECT_FALSE(tree.Exists(std::string(h) + "/kubepods/burstable/pod1")) << h;
    EXPECT_TRUE(tree.Exists(std::string(h) + "/kubepods/burstable")) << h;
  }
  EXPECT_TRUE(m->Destroy(name).ok());  // idempotent
  EXPECT_FALSE(m->Destroy({}).ok());
}

TEST(CgroupManagerV1Test, AddProcess) {
  FakeCgroupTree tree(false);
  auto m = *NewCgroupManager(tree.fs(), tree.layout(), kCgroupDriverCgroupfs);
  ASSERT_TRUE(m->Create({{"kubelet"}, {}}).ok());
  ASSERT_TRUE(m->AddProcess({"kubelet"}, 77).ok());
  EXPECT_EQ(tree.Read("memory/kubelet/cgroup.procs"), "77");
  EXPECT_EQ(tree.Read("cpu,cpuacct/kubelet/cgroup.procs"), "77");
}

TEST(CgroupManagerV2Test, CreateUpdateDestroy) {
  FakeCgroupTree tree(true);
  auto m = *NewCgroupManager(tree.fs(), tree.layout(), kCgroupDriverCgroupfs);
  EXPECT_TRUE(m->Unified());
  CgroupName name{"kubepods", "pod1"};
  ResourceConfig rc;
  rc.cpu_shares = 1024;
  rc.cpu_quota = 50000;
  rc.cpu_period = 100000;
  rc.memory = 64 << 20;
  rc.pids_limit = 100;
  rc.hugepage_limits = {{2 << 20, 4 << 20}};
  ASSERT_TRUE(m->Create({name, rc}).ok());
  EXPECT_EQ(tree.Read("cgroup.subtree_control"), "+cpu +cpuset +hugetlb +io +memory +pids");
  EXPECT_EQ(tree.Read("kubepods/cgroup.subtree_control"),
            "+cpu +cpuset +hugetlb +io +memory +pids");
  EXPECT_EQ(tree.Read("kubepods/pod1/cpu.weight"), "39");
  EXPECT_EQ(tree.Read("kubepods/pod1/cpu.max"), "50000 100000");
  EXPECT_EQ(tree.Read("kubepods/pod1/memory.max"), "67108864");
  EXPECT_EQ(tree.Read("kubepods/pod1/pids.max"), "100");
  EXPECT_EQ(tree.Read("kubepods/pod1/hugetlb.2MB.max"), "4194304");
  ASSERT_TRUE(
      m->Update({name, ResourceConfig{.cpu_quota = -1, .cpu_period = 100000, .memory = -1}}).ok());
  EXPECT_EQ(tree.Read("kubepods/pod1/cpu.max"), "max 100000");
  EXPECT_EQ(tree.Read("kubepods/pod1/memory.max"), "max");
  // Validate on v2 reads the controllers a cgroup has.
  tree.Write(tree.root() + "/kubepods/pod1/cgroup.controllers", "cpu memory\n");
  EXPECT_THAT(m->Validate(name).message(),
              HasSubstr("has some missing controllers: cpuset, hugetlb, pids"));
  tree.Write(tree.root() + "/kubepods/pod1/cgroup.controllers",
             "cpuset cpu io memory hugetlb pids\n");
  EXPECT_TRUE(m->Exists(name));
  ASSERT_TRUE(m->Destroy(name).ok());
  EXPECT_FALSE(tree.Exists("kubepods/pod1"));
  EXPECT_TRUE(tree.Exists("kubepods"));
}

class RecordingUnits : public SystemdUnits {
 public:
  explicit RecordingUnits(std::vector<std::string>* calls) : calls_(calls) {}
  absl::Status StartSlice(const std::string& unit, const std::string& parent) override {
    calls_->push_back("start " + unit + " in " + parent);
    return absl::OkStatus();
  }
  absl::Status StopUnit(const std::string& unit) override {
    calls_->push_back("stop " + unit);
    return absl::OkStatus();
  }

 private:
  std::vector<std::string>* calls_;
};

TEST(CgroupManagerSystemdTest, SlicesOnDiskAndOverDBus) {
  FakeCgroupTree tree(false);
  std::vector<std::string> calls;
  auto m = *NewCgroupManager(tree.fs(), tree.layout(), kCgroupDriverSystemd,
                             std::make_unique<RecordingUnits>(&calls));
  CgroupName name{"kubepods", "burstable", "pod12-34"};
  EXPECT_EQ(m->Name(name),
            "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod12_34.slice");
  ASSERT_TRUE(m->Create({name, ResourceConfig{.cpu_shares = 100}}).ok());
  EXPECT_EQ(calls, (std::vector<std::string>{
                       "start kubepods.slice in -.slice",
                       "start kubepods-burstable.slice in kubepods.slice",
                       "start kubepods-burstable-pod12_34.slice in kubepods-burstable.slice"}));
  EXPECT_EQ(tree.Read("cpu,cpuacct/kubepods.slice/kubepods-burstable.slice/"
                      "kubepods-burstable-pod12_34.slice/cpu.shares"),
            "100");
  EXPECT_EQ(m->Children({"kubepods", "burstable"}), (std::vector<CgroupName>{name}));
  ASSERT_TRUE(m->Destroy(name).ok());
  EXPECT_EQ(calls.back(), "stop kubepods-burstable-pod12_34.slice");
  EXPECT_FALSE(m->Exists(name));
}

}  // namespace
}  // namespace kubelet::cm
