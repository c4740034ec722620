#include "kubelet/memorymanager/machine_memory.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::memorymanager {
namespace {

using ::testing::HasSubstr;

// A sysfs tree in a temporary directory.
class FakeSysfs {
 public:
  FakeSysfs() {
    char tmpl[] = "/tmp/memorymanager-sysfs-XXXXXX";
    root_ = ::mkdtemp(tmpl);
  }
  ~FakeSysfs() { std::filesystem::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    const std::filesystem::path p = root_ + "/" + rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
  }
  void MemInfo(int node, uint64_t kb) {
    const std::string n = std::to_string(node);
    Write("devices/system/node/node" + n + "/meminfo",
          "Node " + n + " MemTotal:       " + std::to_string(kb) + " kB\nNode " + n +
              " MemFree:        1000 kB\nNode " + n + " MemUsed:        2000 kB");
  }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

TEST(DiscoverMachineMemoryTest, TwoNUMANodesWithHugePages) {
  FakeSysfs fs;
  fs.MemInfo(0, 16 * 1024 * 1024);  // 16Gi
  fs.MemInfo(1, 8 * 1024 * 1024);
  fs.Write("devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "512");
  fs.Write("devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages", "2");
  fs.Write("devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages", "0");
  fs.Write("devices/system/node/possible", "0-1");  // not a node directory
  fs.Write("devices/system/node/online", "0-1");
  absl::StatusOr<MachineMemory> m = DiscoverMachineMemory(fs.root(), 1);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->nodes.size(), 2u);
  EXPECT_EQ(m->nodes[0], (NUMANodeMemory{0, uint64_t{16} << 30, {{2048, 512}, {1048576, 2}}}));
  EXPECT_EQ(m->nodes[1], (NUMANodeMemory{1, uint64_t{8} << 30, {{2048, 0}}}));
}

TEST(DiscoverMachineMemoryTest, FourNodesAreOrderedNumerically) {
  FakeSysfs fs;
  for (int n : {10, 2, 0, 1}) fs.MemInfo(n, 1024 * (n + 1));
  absl::StatusOr<MachineMemory> m = DiscoverMachineMemory(fs.root(), 1);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->nodes.size(), 4u);
  EXPECT_EQ(m->nodes[0].id, 0);
  EXPECT_EQ(m->nodes[2].id, 2);
  EXPECT_EQ(m->nodes[3].id, 10);
  EXPECT_EQ(m->nodes[3].memory_bytes, 11u * 1024 * 1024);
  EXPECT_TRUE(m->nodes[3].hugepages.empty());  // no hugepages directory
}

TEST(DiscoverMachineMemoryTest, NoNUMANodesIsOneNodeWithTheMachinesMemory) {
  FakeSysfs fs;
  fs.Write("kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "16");
  absl::StatusOr<MachineMemory> m = DiscoverMachineMemory(fs.root(), uint64_t{32} << 30);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->nodes.size(), 1u);
  EXPECT_EQ(m->nodes[0], (NUMANodeMemory{0, uint64_t{32} << 30, {{2048, 16}}}));

  FakeSysfs empty;
  m = DiscoverMachineMemory(empty.root(), 4096);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->nodes, (std::vector<NUMANodeMemory>{{0, 4096, {}}}));
}

TEST(DiscoverMachineMemoryTest, ErrorsNameTheFile) {
  FakeSysfs fs;
  fs.MemInfo(0, 1024);
  fs.Write("devices/system/node/node1/cpulist", "0");  // no meminfo
  absl::StatusOr<MachineMemory> m = DiscoverMachineMemory(fs.root(), 1);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("node1/meminfo"));

  FakeSysfs bad;
  bad.Write("devices/system/node/node0/meminfo", "Node 0 MemFree: 12 kB");
  m = DiscoverMachineMemory(bad.root(), 1);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("node0/meminfo: no \"MemTotal: <n> kB\" line"));

  FakeSysfs pages;
  pages.MemInfo(0, 1024);
  pages.Write("devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "many");
  m = DiscoverMachineMemory(pages.root(), 1);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("hugepages-2048kB/nr_hugepages: not a number"));
}

TEST(HugePageResourceNameTest, CanonicalBinarySizes) {
  EXPECT_EQ(HugePageResourceName(2048 * 1024), "hugepages-2Mi");
  EXPECT_EQ(HugePageResourceName(uint64_t{1} << 30), "hugepages-1Gi");
  EXPECT_EQ(HugePageResourceName(64 * 1024), "hugepages-64Ki");
  EXPECT_EQ(HugePageResourceName(32 * 1024 * 1024), "hugepages-32Mi");
  EXPECT_TRUE(IsHugePageResourceName("hugepages-2Mi"));
  EXPECT_FALSE(IsHugePageResourceName("memory"));
}

}  // namespace
}  // namespace kubelet::memorymanager
