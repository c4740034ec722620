#include "kubelet/topology/topology.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::topology {
namespace {

// A sysfs tree in a temporary directory.
class FakeSysfs {
 public:
  FakeSysfs() {
    char tmpl[] = "/tmp/topology-test-XXXXXX";
    root_ = ::mkdtemp(tmpl);
  }
  ~FakeSysfs() { std::filesystem::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    const std::filesystem::path p = root_ + "/" + rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
  }
  // Logical CPU `cpu` on socket `socket`, sharing its core with `siblings`.
  void Cpu(int cpu, int socket, const std::string& siblings) {
    const std::string t = absl::StrCat("devices/system/cpu/cpu", cpu, "/topology/");
    Write(t + "physical_package_id", std::to_string(socket));
    Write(t + "thread_siblings_list", siblings);
  }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

TEST(DiscoverCPUTopologyTest, TwoSocketsTwoNUMANodesWithSMT) {
  // 2 sockets x 2 cores x 2 threads; Linux numbers the second threads after all first ones.
  FakeSysfs fs;
  fs.Write("devices/system/cpu/online", "0-7");
  for (int cpu = 0; cpu < 8; ++cpu) {
    const int core = cpu % 4;  // cores 0-1 on socket 0, 2-3 on socket 1
    fs.Cpu(cpu, core / 2, absl::StrCat(core, ",", core + 4));
  }
  fs.Write("devices/system/node/node0/cpulist", "0-1,4-5");
  fs.Write("devices/system/node/node1/cpulist", "2-3,6-7");
  fs.Write("devices/system/node/possible", "0-1");  // not a node dir: ignored
  absl::StatusOr<CPUTopology> t = DiscoverCPUTopology(fs.root());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->num_cpus, 8);
  EXPECT_EQ(t->num_cores, 4);
  EXPECT_EQ(t->num_sockets, 2);
  EXPECT_EQ(t->num_numa_nodes, 2);
  EXPECT_EQ(t->CPUsPerCore(), 2);
  EXPECT_EQ(t->CPUsPerSocket(), 4);
  EXPECT_EQ(t->details.at(6), (CPUInfo{.numa_node = 1, .socket = 1, .core = 2}));
  EXPECT_EQ(t->CPUsInNUMANodes({1}).String(), "2-3,6-7");
  EXPECT_EQ(t->CPUsInSockets({0}).String(), "0-1,4-5");
  EXPECT_EQ(t->CPUsInCores({1}).String(), "1,5");
  EXPECT_EQ(t->SiblingsOf(CPUSet{0, 3}).String(), "0,3-4,7");
  EXPECT_THAT(t->NUMANodes(), ::testing::ElementsAre(0, 1));
}

TEST(DiscoverCPUTopologyTest, NoNUMADirsIsOneNodeAndOfflineCPUsAreLeftOut) {
  // Two cores, the first one's second thread offline: the core is named by its online thread.
  FakeSysfs fs;
  fs.Write("devices/system/cpu/online", "1-3");
  fs.Cpu(1, 0, "1,3");
  fs.Cpu(2, 0, "0,2");
  fs.Cpu(3, 0, "1,3");
  absl::StatusOr<CPUTopology> t = DiscoverCPUTopology(fs.root());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->CPUs().String(), "1-3");
  EXPECT_EQ(t->num_numa_nodes, 1);
  EXPECT_EQ(t->details.at(2).core, 2);
  EXPECT_EQ(t->num_cores, 2);
}

TEST(DiscoverCPUTopologyTest, ErrorsNameTheFile) {
  FakeSysfs fs;
  EXPECT_THAT(std::string(DiscoverCPUTopology(fs.root()).status().message()),
              ::testing::HasSubstr("/devices/system/cpu/online"));
  fs.Write("devices/system/cpu/online", "0");
  fs.Write("devices/system/cpu/cpu0/topology/physical_package_id", "zero");
  fs.Write("devices/system/cpu/cpu0/topology/thread_siblings_list", "0");
  EXPECT_THAT(std::string(DiscoverCPUTopology(fs.root()).status().message()),
              ::testing::HasSubstr("physical_package_id: not a number: zero"));
}

TEST(DiscoverCPUTopologyTest, ThisMachine) {
  // Whatever this machine is, every online CPU is described once.
  absl::StatusOr<CPUTopology> t = DiscoverCPUTopology();
  if (!t.ok()) GTEST_SKIP() << "no sysfs here: " << t.status();
  EXPECT_GT(t->num_cpus, 0);
  EXPECT_GE(t->num_cpus, t->num_cores);
  EXPECT_EQ(t->CPUs().Size(), t->num_cpus);
}

TEST(FlatCPUTopologyTest, OneCorePerCpuOnOneNode) {
  CPUTopology t = FlatCPUTopology(4);
  EXPECT_EQ(t.num_cpus, 4);
  EXPECT_EQ(t.num_cores, 4);
  EXPECT_EQ(t.num_sockets, 1);
  EXPECT_EQ(t.NUMANodes(), (std::set<int>{0}));
  EXPECT_EQ(t.CPUsPerCore(), 1);
}

}  // namespace
}  // namespace kubelet::topology
