#include "kubelet/cm/cgroup_name.h"

#include "gtest/gtest.h"

namespace kubelet::cm {
namespace {

TEST(CgroupNameTest, Cgroupfs) {
  EXPECT_EQ(ParseCgroupfsToCgroupName("/"), CgroupName{});
  EXPECT_EQ(ParseCgroupfsToCgroupName(""), CgroupName{});
  EXPECT_EQ(ParseCgroupfsToCgroupName("/kubepods/burstable/pod12-ab"),
            (CgroupName{"kubepods", "burstable", "pod12-ab"}));
  EXPECT_EQ(ParseCgroupfsToCgroupName("e2e//x/"), (CgroupName{"e2e", "x"}));
  EXPECT_EQ(ToCgroupfs({}), "/");
  EXPECT_EQ(ToCgroupfs({"kubepods", "besteffort", "podx"}), "/kubepods/besteffort/podx");
}

TEST(CgroupNameTest, Systemd) {
  EXPECT_EQ(ToSystemd({}), "/");
  EXPECT_EQ(ToSystemd({"kubepods"}), "/kubepods.slice");
  EXPECT_EQ(ToSystemd({"kubepods", "burstable", "pod1234-5678-ab"}),
            "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_5678_ab.slice");
  EXPECT_EQ(ToSystemd({"kubepods", "pod1-2"}), "/kubepods.slice/kubepods-pod1_2.slice");
  EXPECT_EQ(SystemdSliceName({"kubepods", "besteffort", "podab-cd"}),
            "kubepods-besteffort-podab_cd.slice");
  EXPECT_EQ(SystemdSliceName({}), "-.slice");
  EXPECT_EQ(ParseSystemdToCgroupName(
                "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_5678.slice"),
            (CgroupName{"kubepods", "burstable", "pod1234-5678"}));
  EXPECT_EQ(ParseSystemdToCgroupName("kubepods.slice"), CgroupName{"kubepods"});
}

TEST(CgroupNameTest, RoundTrips) {
  for (const CgroupName& n : {CgroupName{"kubepods"}, CgroupName{"a", "b-c", "pod1-2-3"}}) {
    EXPECT_EQ(ParseCgroupfsToCgroupName(ToCgroupfs(n)), n);
    EXPECT_EQ(ParseSystemdToCgroupName(ToSystemd(n)), n);
  }
  EXPECT_EQ(NewCgroupName({"a"}, {"b", "c"}), (CgroupName{"a", "b", "c"}));
}

}  // namespace
}  // namespace kubelet::cm
