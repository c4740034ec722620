#include "kubelet/cm/resources.h"

#include "api/quantity.h"
#include "gtest/gtest.h"

namespace kubelet::cm {
namespace {

api::Quantity Q(const char* s) { return *api::Quantity::Parse(s); }

api::Container C(const char* name, api::ResourceList req, api::ResourceList lim) {
  api::Container c;
  c.name = name;
  c.resources.requests = std::move(req);
  c.resources.limits = std::move(lim);
  return c;
}

api::Pod PodOf(std::vector<api::Container> cs, std::vector<api::Container> init = {}) {
  api::Pod p;
  p.metadata.uid = "uid-1";
  p.spec.containers = std::move(cs);
  p.spec.init_containers = std::move(init);
  return p;
}

TEST(ResourcesTest, MilliCPUToShares) {
  EXPECT_EQ(MilliCPUToShares(0), 2);
  EXPECT_EQ(MilliCPUToShares(1), 2);  // 1*1024/1000 = 1 -> min 2
  EXPECT_EQ(MilliCPUToShares(100), 102);
  EXPECT_EQ(MilliCPUToShares(1000), 1024);
  EXPECT_EQ(MilliCPUToShares(2500), 2560);
  EXPECT_EQ(MilliCPUToShares(1000000), 262144);  // max
}

TEST(ResourcesTest, MilliCPUToQuota) {
  EXPECT_EQ(MilliCPUToQuota(0, 100000), 0);
  EXPECT_EQ(MilliCPUToQuota(5, 100000), 1000);  // 500us -> min 1ms
  EXPECT_EQ(MilliCPUToQuota(250, 100000), 25000);
  EXPECT_EQ(MilliCPUToQuota(1500, 50000), 75000);
}

TEST(ResourcesTest, SharesToWeight) {
  EXPECT_EQ(SharesToWeight(2), 1);
  EXPECT_EQ(SharesToWeight(1024), 39);
  EXPECT_EQ(SharesToWeight(262144), 10000);
}

TEST(ResourcesTest, HugePages) {
  EXPECT_EQ(HugePageSizeFromResourceName("hugepages-2Mi"), 2097152);
  EXPECT_EQ(HugePageSizeFromResourceName("hugepages-1Gi"), 1073741824);
  EXPECT_EQ(HugePageSizeFromResourceName("memory"), std::nullopt);
  EXPECT_EQ(HugePageResourceName(2097152), "hugepages-2Mi");
  EXPECT_EQ(HugePageSizeSuffix(2097152), "2MB");
  EXPECT_EQ(HugePageSizeSuffix(1073741824), "1GB");
  EXPECT_EQ(HugePageSizeSuffix(65536), "64KB");
}

TEST(ResourcesTest, GuaranteedPod) {
  api::Pod pod = PodOf({C("a", {{"cpu", Q("500m")}, {"memory", Q("64Mi")}},
                          {{"cpu", Q("500m")}, {"memory", Q("64Mi")}}),
                        C("b", {{"cpu", Q("250m")}, {"memory", Q("32Mi")}},
                          {{"cpu", Q("250m")}, {"memory", Q("32Mi")}})});
  ResourceConfig rc = ResourceConfigForPod(pod, true, 100000);
  EXPECT_EQ(rc.cpu_shares, 768);
  EXPECT_EQ(rc.cpu_quota, 75000);
  EXPECT_EQ(rc.cpu_period, 100000);
  EXPECT_EQ(rc.memory, 96 * 1024 * 1024);
  // cpuCFSQuota=false: quota unlimited.
  EXPECT_EQ(ResourceConfigForPod(pod, false, 100000).cpu_quota, -1);
}

TEST(ResourcesTest, BurstablePodMemoryLimitOnlyWhenEveryContainerHasOne) {
  api::Pod pod = PodOf(
      {C("a", {{"cpu", Q("100m")}}, {{"memory", Q("64Mi")}}), C("b", {{"cpu", Q("200m")}}, {})});
  ResourceConfig rc = ResourceConfigForPod(pod, true, 100000);
  EXPECT_EQ(rc.cpu_shares, 307);  // 300m
  EXPECT_EQ(rc.cpu_quota, std::nullopt);
  EXPECT_EQ(rc.memory, std::nullopt);

  pod.spec.containers[1].resources.limits["memory"] = Q("32Mi");
  rc = ResourceConfigForPod(pod, true, 100000);
  EXPECT_EQ(rc.memory, 96 * 1024 * 1024);
  EXPECT_EQ(rc.cpu_quota, std::nullopt);  // a cpu limit is missing
}

TEST(ResourcesTest, InitContainerMaxCountsForLimits) {
  // App containers sum to 96Mi; the init container alone needs 200Mi: the pod limit is the
  // larger one. An init container without a memory limit would drop the pod limit.
  api::Pod pod = PodOf({C("a", {}, {{"memory", Q("64Mi")}, {"cpu", Q("1")}}),
                        C("b", {}, {{"memory", Q("32Mi")}, {"cpu", Q("1")}})},
                       {C("init", {}, {{"memory", Q("200Mi")}, {"cpu", Q("1")}})});
  pod.spec.containers[0].resources.requests = {{"cpu", Q("100m")}};
  ResourceConfig rc = ResourceConfigForPod(pod, true, 100000);
  EXPECT_EQ(rc.memory, 200 * 1024 * 1024);
  EXPECT_EQ(rc.cpu_quota, 200000);  // max(2 cores, 1 core)
  pod.spec.init_containers[0].resources.limits.erase("memory");
  EXPECT_EQ(ResourceConfigForPod(pod, true, 100000).memory, std::nullopt);
}

TEST(ResourcesTest, OverheadAddsToRequestsAndDeclaredLimits) {
  api::Pod pod = PodOf({C("a", {{"cpu", Q("1")}, {"memory", Q("100Mi")}},
                          {{"cpu", Q("1")}, {"memory", Q("100Mi")}})});
  pod.spec.overhead = {{"cpu", Q("250m")}, {"memory", Q("10Mi")}};
  ResourceConfig rc = ResourceConfigForPod(pod, true, 100000);
  EXPECT_EQ(rc.cpu_shares, 1280);
  EXPECT_EQ(rc.cpu_quota, 125000);
  EXPECT_EQ(rc.memory, 110 * 1024 * 1024);
}

TEST(ResourcesTest, BestEffortPod) {
  api::Pod pod = PodOf({C("a", {}, {})});
  ResourceConfig rc = ResourceConfigForPod(pod, true, 100000);
  EXPECT_EQ(rc.cpu_shares, 2);
  EXPECT_EQ(rc.cpu_quota, std::nullopt);
  EXPECT_EQ(rc.memory, std::nullopt);
}

TEST(ResourcesTest, HugePageRequests) {
  api::Pod pod = PodOf({C("a", {{"cpu", Q("1")}, {"memory", Q("1Gi")}, {"hugepages-2Mi", Q("8Mi")}},
                          {{"cpu", Q("1")}, {"memory", Q("1Gi")}, {"hugepages-2Mi", Q("8Mi")}})});
  ResourceConfig rc = ResourceConfigForPod(pod, true, 100000);
  EXPECT_EQ(rc.hugepage_limits, (std::map<int64_t, int64_t>{{2097152, 8 * 1024 * 1024}}));
}

}  // namespace
}  // namespace kubelet::cm
