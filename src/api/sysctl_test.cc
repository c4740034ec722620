#include "api/sysctl.h"

#include <gtest/gtest.h>

namespace kubelet::api {
namespace {

TEST(SysctlTest, NamespacesAndNormalizedNames) {
  EXPECT_EQ(SysctlNamespaceOf("kernel.sem"), SysctlNamespace::kIPC);
  EXPECT_EQ(SysctlNamespaceOf("kernel.shmmax"), SysctlNamespace::kIPC);
  EXPECT_EQ(SysctlNamespaceOf("kernel/msgmax"), SysctlNamespace::kIPC);
  EXPECT_EQ(SysctlNamespaceOf("fs.mqueue.msg_max"), SysctlNamespace::kIPC);
  EXPECT_EQ(SysctlNamespaceOf("net.core.somaxconn"), SysctlNamespace::kNet);
  EXPECT_EQ(SysctlNamespaceOf("vm.swappiness"), SysctlNamespace::kUnknown);
  EXPECT_EQ(SysctlNamespaceOf("kernel.hostname"), SysctlNamespace::kUnknown);
  EXPECT_EQ(NormalizeSysctlName("net/ipv4/conf/eth0.100/rp_filter"),
            "net.ipv4.conf.eth0/100.rp_filter");
  EXPECT_EQ(NormalizeSysctlName("net.ipv4.ip_forward"), "net.ipv4.ip_forward");
  EXPECT_EQ(SysctlNamespaceName(SysctlNamespace::kNet), "net");
  EXPECT_EQ(SysctlNamespaceName(SysctlNamespace::kIPC), "ipc");
}

TEST(SysctlTest, NameAndPatternSyntax) {
  EXPECT_TRUE(IsValidSysctlName("net.ipv4.ip_local_port_range"));
  EXPECT_TRUE(IsValidSysctlName("net/ipv4/conf/eth0.100/rp_filter"));
  EXPECT_FALSE(IsValidSysctlName("net..core"));
  EXPECT_FALSE(IsValidSysctlName("Net.core"));
  EXPECT_FALSE(IsValidSysctlName("net.core_"));
  EXPECT_FALSE(IsValidSysctlName("kernel.msg*"));
  EXPECT_FALSE(IsValidSysctlName(std::string(254, 'a')));
  EXPECT_TRUE(IsValidSysctlPattern("kernel.msg*"));
  EXPECT_TRUE(IsValidSysctlPattern("net.*"));
  EXPECT_TRUE(IsValidSysctlPattern("*"));
  EXPECT_TRUE(IsValidSysctlPattern("net.core.somaxconn"));
  EXPECT_TRUE(IsValidSysctlPattern("fs/mqueue/*"));
  EXPECT_FALSE(IsValidSysctlPattern("net.*.x"));
  EXPECT_FALSE(IsValidSysctlPattern("net.*x"));
  EXPECT_FALSE(IsValidSysctlPattern(".net"));
  EXPECT_FALSE(IsValidSysctlPattern("net."));
  EXPECT_FALSE(IsValidSysctlPattern(""));
}

}  // namespace
}  // namespace kubelet::api
