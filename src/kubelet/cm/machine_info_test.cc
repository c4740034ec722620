#include "kubelet/cm/machine_info.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace kubelet::cm {
namespace {

class MachineInfoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cm-machine-XXXXXX";
    root_ = ::mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::string& rel, const std::string& content) {
    std::filesystem::create_directories(std::filesystem::path(root_ + rel).parent_path());
    std::ofstream(root_ + rel) << content;
  }
  std::string root_;
};

TEST_F(MachineInfoTest, ReadsFakeRoot) {
  Write("/sys/devices/system/cpu/online", "0-2,5\n");
  Write("/proc/meminfo", "MemTotal:        8039464 kB\nMemFree:  100 kB\n");
  Write("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "16\n");
  Write("/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages", "0\n");
  Write("/etc/machine-id", "3d1219c7c4c5404aaa1f6d2a48adfda4\n");
  Write("/proc/sys/kernel/random/boot_id", "9f3e1a7c-0000-4000-8000-000000000001\n");
  Write("/sys/class/dmi/id/product_uuid", "ec2f8e3a-1111-2222-3333-444455556666\n");
  Write("/proc/sys/kernel/osrelease", "6.1.0-13-amd64\n");
  Write("/proc/sys/kernel/pid_max", "4194304\n");
  Write("/etc/os-release",
        "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n");
  auto info = ReadMachineInfo(root_);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->num_cores, 4);
  EXPECT_EQ(info->online_cpus, (std::vector<int>{0, 1, 2, 5}));
  EXPECT_EQ(info->memory_capacity_bytes, 8039464LL * 1024);
  ASSERT_EQ(info->hugepages.size(), 2u);
  EXPECT_EQ(info->hugepages[0], (HugePagePool{2097152, 16}));
  EXPECT_EQ(info->hugepages[1], (HugePagePool{1073741824, 0}));
  EXPECT_EQ(info->machine_id, "3d1219c7c4c5404aaa1f6d2a48adfda4");
  EXPECT_EQ(info->boot_id, "9f3e1a7c-0000-4000-8000-000000000001");
  EXPECT_EQ(info->system_uuid, "ec2f8e3a-1111-2222-3333-444455556666");
  EXPECT_EQ(info->kernel_version, "6.1.0-13-amd64");
  EXPECT_EQ(info->os_image, "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(info->pid_max, 4194304);
}

TEST_F(MachineInfoTest, DbusMachineIdFallbackAndMissingMemInfo) {
  Write("/sys/devices/system/cpu/online", "0\n");
  EXPECT_FALSE(ReadMachineInfo(root_).ok());  // no meminfo
  Write("/proc/meminfo", "MemTotal: 1024 kB\n");
  Write("/var/lib/dbus/machine-id", "abc\n");
  auto info = ReadMachineInfo(root_);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->machine_id, "abc");
  EXPECT_EQ(info->os_image, "Linux");
  EXPECT_EQ(info->system_uuid, "");
}

// Without DMI (containers, some clouds), cadvisor takes the device tree, then /etc/machine-id.
TEST_F(MachineInfoTest, SystemUuidFallbacks) {
  Write("/sys/devices/system/cpu/online", "0\n");
  Write("/proc/meminfo", "MemTotal: 1024 kB\n");
  Write("/etc/machine-id", "3d1219c7c4c5404aaa1f6d2a48adfda4\n");
  EXPECT_EQ(ReadMachineInfo(root_)->system_uuid, "3d1219c7c4c5404aaa1f6d2a48adfda4");
  Write("/proc/device-tree/vm,uuid", std::string("4a5b6c7d-0000\0", 14));
  EXPECT_EQ(ReadMachineInfo(root_)->system_uuid, "4a5b6c7d-0000");
}

TEST_F(MachineInfoTest, ThisMachine) {
  auto info = ReadMachineInfo();
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_GT(info->num_cores, 0);
  EXPECT_GT(info->memory_capacity_bytes, 0);
  EXPECT_FALSE(info->kernel_version.empty());
  auto fs = GetFsInfo("/tmp");
  ASSERT_TRUE(fs.ok()) << fs.status();
  EXPECT_GT(fs->capacity_bytes, 0u);
  EXPECT_FALSE(fs->mountpoint.empty());
}

TEST_F(MachineInfoTest, CPUListAndSwaps) {
  EXPECT_EQ(*ParseCPUList("0-1,3"), (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(*ParseCPUList(""), std::vector<int>{});
  EXPECT_FALSE(ParseCPUList("3-1").ok());
  EXPECT_FALSE(ParseCPUList("x").ok());
  EXPECT_EQ(ReadSwapLines(root_).status().code(), absl::StatusCode::kNotFound);
  Write("/proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n/swap file 10 0 -2\n");
  EXPECT_EQ(ReadSwapLines(root_)->size(), 2u);
}

}  // namespace
}  // namespace kubelet::cm
