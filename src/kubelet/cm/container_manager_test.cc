#include "kubelet/cm/container_manager.h"

#include "api/quantity.h"
#include "api/testing/pod_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/cm/testing/fake_cgroup_tree.h"
#include "kubelet/events/testing/fake_recorder.h"

namespace kubelet::cm {
namespace {

using testing::FakeCgroupTree;
using ::testing::HasSubstr;

constexpr int64_t kGi = 1024LL * 1024 * 1024;
constexpr int64_t kMi = 1024LL * 1024;

api::Quantity Q(const char* s) { return *api::Quantity::Parse(s); }

api::Pod MakePod(const std::string& uid, api::ResourceList req, api::ResourceList lim) {
  return api::testing::PodBuilder("p-" + uid)
      .Uid(uid)
      .Container("main", "")
      .Resources(std::move(req), std::move(lim));
}
api::Pod Guaranteed(const std::string& uid) {
  return MakePod(uid, {{"cpu", Q("500m")}, {"memory", Q("128Mi")}},
                 {{"cpu", Q("500m")}, {"memory", Q("128Mi")}});
}
api::Pod Burstable(const std::string& uid, const char* cpu) {
  return MakePod(uid, {{"cpu", Q(cpu)}}, {{"memory", Q("256Mi")}});
}
api::Pod BestEffort(const std::string& uid) { return MakePod(uid, {}, {}); }

MachineInfo Machine() {
  MachineInfo m;
  m.num_cores = 4;
  m.online_cpus = {0, 1, 2, 3};
  m.memory_capacity_bytes = 8 * kGi;
  m.hugepages = {{2 * kMi, 0}};
  m.pid_max = 32768;
  return m;
}

class ContainerManagerTest : public ::testing::TestWithParam<bool> {
 protected:
  ContainerManagerTest() : tree_(GetParam()) {}

  std::unique_ptr<ContainerManager> Make(NodeConfig cfg, const std::string& driver = "cgroupfs") {
    auto cgroups = NewCgroupManager(tree_.fs(), tree_.layout(), driver);
    auto raw = NewCgroupManager(tree_.fs(), tree_.layout(), kCgroupDriverCgroupfs);
    EXPECT_TRUE(cgroups.ok() && raw.ok());
    cfg.cgroup_driver = driver;
    return std::make_unique<ContainerManager>(cfg, Machine(), MachineCapacity(Machine(), 110, {}),
                                              std::move(*cgroups), std::move(*raw));
  }
  bool V2() const { return GetParam(); }
  // Control file of a cgroup, in whichever hierarchy holds it.
  std::string File(const std::string& cgroup, const std::string& v1_hierarchy,
                   const std::string& v1_file, const std::string& v2_file) const {
    return V2() ? tree_.Read(cgroup + "/" + v2_file)
                : tree_.Read(v1_hierarchy + "/" + cgroup + "/" + v1_file);
  }
  std::string Shares(const std::string& cgroup) const {
    return File(cgroup, "cpu,cpuacct", "cpu.shares", "cpu.weight");
  }
  std::string Memory(const std::string& cgroup) const {
    return File(cgroup, "memory", "memory.limit_in_bytes", "memory.max");
  }
  bool CgroupExists(const std::string& cgroup) const {
    return tree_.Exists(V2() ? cgroup : "memory/" + cgroup);
  }
  // A cgroup made by someone else (the node's init system), in every hierarchy.
  void MakeCgroup(const std::string& cgroup) {
    if (V2()) {
      tree_.Write(tree_.root() + "/" + cgroup + "/cgroup.controllers",
                  "cpuset cpu io memory hugetlb pids\n");
      return;
    }
    for (const char* h : {"cpu,cpuacct", "cpuset", "memory", "pids", "hugetlb", "devices"}) {
      std::filesystem::create_directories(tree_.root() + "/" + h + "/" + cgroup);
    }
  }

  FakeCgroupTree tree_;
};

TEST_P(ContainerManagerTest, StartCreatesTopLevelCgroupsWithNodeAllocatable) {
  NodeConfig cfg;
  cfg.kube_reserved = {{"cpu", Q("1")}, {"memory", Q("1Gi")}};
  cfg.system_reserved = {{"memory", Q("512Mi")}};
  cfg.hard_eviction_thresholds = {{"memory.available", Q("100Mi"), 0}};
  auto cm = Make(cfg);
  ASSERT_TRUE(cm->Start().ok());
  // kubepods: capacity - reserved (eviction threshold not subtracted).
  EXPECT_EQ(Memory("kubepods"), std::to_string(8 * kGi - 1536 * kMi));
  EXPECT_EQ(Shares("kubepods"), V2() ? "118" : "3072");
  EXPECT_EQ(File("kubepods", "pids", "pids.max", "pids.max"), "32768");
  EXPECT_EQ(Shares("kubepods/besteffort"), V2() ? "1" : "2");
  EXPECT_EQ(Shares("kubepods/burstable"), V2() ? "1" : "2");
  // QoS cgroups: hugepages unlimited.
  EXPECT_EQ(File("kubepods/burstable", "hugetlb", "hugetlb.2MB.limit_in_bytes", "hugetlb.2MB.max"),
            V2() ? "max" : "9223372036854775807");
  // Allocatable for admission / node status includes the eviction threshold.
  EXPECT_EQ(cm->Allocatable().at("memory").Value(), 8 * kGi - 1636 * kMi);
  EXPECT_EQ(cm->Allocatable().at("cpu").MilliValue(), 3000);
  EXPECT_EQ(cm->Allocatable().at("pods").Value(), 110);
  EXPECT_EQ(cm->Capacity().at("cpu").MilliValue(), 4000);
}

TEST_P(ContainerManagerTest, EnforcementIsRecordedAsANodeEvent) {
  events::FakeRecorder recorder;
  NodeConfig cfg;
  cfg.recorder = &recorder;
  cfg.node_name = "node-a";
  auto cm = Make(cfg);
  ASSERT_TRUE(cm->Start().ok());
  auto got = recorder.WithReason(events::kSuccessfulNodeAllocatableEnforcement);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].message, "Updated Node Allocatable limit across pods");
  EXPECT_EQ(got[0].type, "Normal");
  EXPECT_EQ(got[0].object.kind, "Node");
  EXPECT_EQ(got[0].object.name, "node-a");
  EXPECT_EQ(got[0].object.uid, "node-a");
}

TEST_P(ContainerManagerTest, NoEnforcementLimitsKubepodsToCapacity) {
  NodeConfig cfg;
  cfg.enforce_node_allocatable.clear();
  cfg.kube_reserved = {{"memory", Q("1Gi")}};
  auto cm = Make(cfg);
  ASSERT_TRUE(cm->Start().ok());
  EXPECT_EQ(Memory("kubepods"), std::to_string(8 * kGi));
}

TEST_P(ContainerManagerTest, CgroupRootMustExist) {
  NodeConfig cfg;
  cfg.cgroup_root = "/e2e-missing";
  auto cm = Make(cfg);
  absl::Status st = cm->Start();
  EXPECT_THAT(st.message(), HasSubstr("invalid configuration: "));
  EXPECT_THAT(st.message(), HasSubstr("cgroup [\"e2e-missing\"]"));
  // Once it exists, the tree goes below it.
  if (V2()) {
    tree_.Write(tree_.root() + "/e2e-missing/cgroup.controllers",
                "cpuset cpu io memory hugetlb pids\n");
  } else {
    for (const char* h : {"cpu,cpuacct", "cpuset", "memory", "pids", "hugetlb", "devices"}) {
      std::filesystem::create_directories(tree_.root() + "/" + h + "/e2e-missing");
    }
  }
  ASSERT_TRUE(cm->Start().ok());
  EXPECT_TRUE(CgroupExists("e2e-missing/kubepods/burstable"));
  EXPECT_EQ(cm->PodCgroupParent(Guaranteed("g1")), "/e2e-missing/kubepods/podg1");
}

TEST_P(ContainerManagerTest, PodCgroupsByQOS) {
  NodeConfig cfg;
  cfg.pod_pids_limit = 1024;
  auto cm = Make(cfg);
  ASSERT_TRUE(cm->Start().ok());
  api::Pod g = Guaranteed("g-1"), b = Burstable("b-1", "250m"), b2 = Burstable("b-2", "750m"),
           be = BestEffort("be-1");
  EXPECT_EQ(cm->PodCgroupParent(g), "/kubepods/podg-1");
  EXPECT_EQ(cm->PodCgroupParent(b), "/kubepods/burstable/podb-1");
  EXPECT_EQ(cm->PodCgroupParent(be), "/kubepods/besteffort/podbe-1");
  for (const api::Pod* p : {&g, &b, &b2, &be}) ASSERT_TRUE(cm->PrepareForSync(*p).ok());

  EXPECT_EQ(Shares("kubepods/podg-1"), V2() ? "20" : "512");
  EXPECT_EQ(Memory("kubepods/podg-1"), std::to_string(128 * kMi));
  EXPECT_EQ(File("kubepods/podg-1", "cpu,cpuacct", "cpu.cfs_quota_us", "cpu.max"),
            V2() ? "50000 100000" : "50000");
  EXPECT_EQ(File("kubepods/podg-1", "pids", "pids.max", "pids.max"), "1024");
  EXPECT_EQ(File("kubepods/podg-1", "hugetlb", "hugetlb.2MB.limit_in_bytes", "hugetlb.2MB.max"),
            "0");
  EXPECT_EQ(Shares("kubepods/burstable/podb-1"), V2() ? "10" : "256");
  EXPECT_EQ(Memory("kubepods/burstable/podb-1"), std::to_string(256 * kMi));
  EXPECT_EQ(Shares("kubepods/besteffort/podbe-1"), V2() ? "1" : "2");
  EXPECT_EQ(Memory("kubepods/besteffort/podbe-1"), "<missing>");
  // Burstable QoS shares follow its pods' requests.
  EXPECT_EQ(Shares("kubepods/burstable"), V2() ? "39" : "1024");

  EXPECT_EQ(cm->PodCgroups().size(), 4u);
  ASSERT_TRUE(cm->CleanupTerminatedPod(b2).ok());
  EXPECT_FALSE(CgroupExists("kubepods/burstable/podb-2"));
  EXPECT_EQ(Shares("kubepods/burstable"), V2() ? "10" : "256");
}

TEST_P(ContainerManagerTest, InPlaceResizeReadsAndWritesPodCgroups) {
  NodeConfig cfg;
  cfg.in_place_pod_vertical_scaling = true;
  auto cm = Make(cfg);
  ASSERT_TRUE(cm->Start().ok());
  api::Pod g = Guaranteed("g-1");
  ASSERT_TRUE(cm->PrepareForSync(g).ok());
  // The kernel lists a v2 cgroup's controllers: the pod cgroup exists from now on.
  if (V2()) {
    tree_.Write(tree_.root() + "/kubepods/podg-1/cgroup.controllers",
                "cpuset cpu io memory hugetlb pids\n");
  }
  absl::StatusOr<ResourceConfig> cpu = cm->GetPodCgroupConfig(g, "cpu");
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  // cgroup v2 keeps a weight: the shares come back rounded.
  EXPECT_EQ(cpu->cpu_shares, V2() ? 500 : 512);
  EXPECT_EQ(cpu->cpu_quota, 50000);
  EXPECT_EQ(cpu->cpu_period, 100000);
  absl::StatusOr<ResourceConfig> mem = cm->GetPodCgroupConfig(g, "memory");
  ASSERT_TRUE(mem.ok()) << mem.status();
  EXPECT_EQ(mem->memory, 128 * kMi);
  EXPECT_FALSE(cm->GetPodCgroupConfig(g, "pods").ok());

  // A resized spec does not change the existing pod cgroup before the sync...
  api::Pod bigger = MakePod("g-1", {{"cpu", Q("1")}, {"memory", Q("256Mi")}},
                            {{"cpu", Q("1")}, {"memory", Q("256Mi")}});
  ASSERT_TRUE(cm->PrepareForSync(bigger).ok());
  EXPECT_EQ(Memory("kubepods/podg-1"), std::to_string(128 * kMi));
  // ...the resize does, one resource at a time.
  ResourceConfig set_mem;
  set_mem.memory = 256 * kMi;
  ASSERT_TRUE(cm->SetPodCgroupConfig(bigger, "memory", set_mem).ok());
  EXPECT_EQ(Memory("kubepods/podg-1"), std::to_string(256 * kMi));
  ResourceConfig set_quota;
  set_quota.cpu_quota = 100000;
  set_quota.cpu_period = 100000;
  ASSERT_TRUE(cm->SetPodCgroupConfig(bigger, "cpu", set_quota).ok());
  EXPECT_EQ(File("kubepods/podg-1", "cpu,cpuacct", "cpu.cfs_quota_us", "cpu.max"),
            V2() ? "100000 100000" : "100000");
  EXPECT_EQ(Shares("kubepods/podg-1"), V2() ? "20" : "512");

  tree_.Write(tree_.root() + (V2() ? "/kubepods/podg-1/memory.current"
                                   : "/memory/kubepods/podg-1/memory.usage_in_bytes"),
              "4096\n");
  absl::StatusOr<int64_t> usage = cm->GetPodCgroupMemoryUsage(bigger);
  ASSERT_TRUE(usage.ok()) << usage.status();
  EXPECT_EQ(*usage, 4096);
}

TEST_P(ContainerManagerTest, HousekeepingRemovesOrphans) {
  auto cm = Make(NodeConfig{});
  ASSERT_TRUE(cm->Start().ok());
  api::Pod g = Guaranteed("g-1"), b = Burstable("b-1", "1"), be = BestEffort("be-1");
  for (const api::Pod* p : {&g, &b, &be}) ASSERT_TRUE(cm->PrepareForSync(*p).ok());
  // A pod cgroup left by an earlier kubelet run, with a process still in it.
  const std::string busy = "kubepods/besteffort/podold";
  std::string procs = tree_.root() + "/" + (V2() ? busy : "memory/" + busy) + "/cgroup.procs";
  if (!V2()) std::filesystem::create_directories(tree_.root() + "/cpu,cpuacct/" + busy);
  tree_.Write(procs, "4242\n");
  EXPECT_EQ(cm->PodCgroups().count("old"), 1u);

  cm->Housekeeping({"g-1", "be-1"});
  EXPECT_TRUE(CgroupExists("kubepods/podg-1"));
  EXPECT_TRUE(CgroupExists("kubepods/besteffort/podbe-1"));
  EXPECT_FALSE(CgroupExists("kubepods/burstable/podb-1"));
  EXPECT_TRUE(CgroupExists(busy));  // processes remain: retried later
  EXPECT_EQ(Shares("kubepods/burstable"), V2() ? "1" : "2");
  tree_.Write(procs, "");
  cm->Housekeeping({"g-1", "be-1"});
  EXPECT_FALSE(CgroupExists(busy));
  EXPECT_TRUE(CgroupExists("kubepods/podg-1"));
}

TEST_P(ContainerManagerTest, WithoutCgroupsPerQOS) {
  NodeConfig cfg;
  cfg.cgroups_per_qos = false;
  auto cm = Make(cfg);
  ASSERT_TRUE(cm->Start().ok());
  EXPECT_FALSE(CgroupExists("kubepods"));
  api::Pod g = Guaranteed("g-1");
  EXPECT_EQ(cm->PodCgroupParent(g), "");
  EXPECT_TRUE(cm->PrepareForSync(g).ok());
  EXPECT_FALSE(CgroupExists("kubepods"));
  EXPECT_TRUE(cm->CleanupTerminatedPod(g).ok());
}

TEST_P(ContainerManagerTest, SystemdDriverNames) {
  auto cm = Make(NodeConfig{}, kCgroupDriverSystemd);
  ASSERT_TRUE(cm->Start().ok());
  EXPECT_TRUE(CgroupExists("kubepods.slice/kubepods-besteffort.slice"));
  api::Pod b = Burstable("ab-cd", "100m");
  EXPECT_EQ(cm->PodCgroupParent(b),
            "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podab_cd.slice");
  ASSERT_TRUE(cm->PrepareForSync(b).ok());
  EXPECT_TRUE(
      CgroupExists("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podab_cd.slice"));
  auto pods = cm->PodCgroups();
  ASSERT_EQ(pods.count("ab-cd"), 1u);
  cm->Housekeeping({});
  EXPECT_FALSE(
      CgroupExists("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podab_cd.slice"));
}

TEST_P(ContainerManagerTest, KubeletAndSystemCgroups) {
  NodeConfig cfg;
  cfg.kubelet_cgroups = "/kubelet.service";
  cfg.system_cgroups = "/system";
  auto cm = Make(cfg);
  ASSERT_TRUE(cm->Start().ok());
  EXPECT_TRUE(CgroupExists("kubelet.service"));
  EXPECT_TRUE(CgroupExists("system"));
  EXPECT_EQ(
      tree_.Read(V2() ? "kubelet.service/cgroup.procs" : "memory/kubelet.service/cgroup.procs"),
      std::to_string(::getpid()));
}

TEST_P(ContainerManagerTest, EnforcesSystemAndKubeReservedCgroups) {
  MakeCgroup("system-reserved");
  MakeCgroup("kube-reserved");
  NodeConfig cfg;
  cfg.enforce_node_allocatable = {"pods", "system-reserved", "kube-reserved"};
  cfg.system_reserved_cgroup = "/system-reserved";
  cfg.kube_reserved_cgroup = "/kube-reserved";
  cfg.system_reserved = {{"cpu", Q("500m")}, {"memory", Q("512Mi")}};
  cfg.kube_reserved = {{"cpu", Q("1")}, {"memory", Q("1Gi")}, {"pid", Q("1000")}};
  auto cm = Make(cfg);
  ASSERT_TRUE(cm->Start().ok());
  EXPECT_EQ(Shares("system-reserved"), V2() ? "20" : "512");
  EXPECT_EQ(Memory("system-reserved"), std::to_string(512 * kMi));
  EXPECT_EQ(File("system-reserved", "pids", "pids.max", "pids.max"), "<missing>");
  EXPECT_EQ(Shares("kube-reserved"), V2() ? "39" : "1024");
  EXPECT_EQ(Memory("kube-reserved"), std::to_string(kGi));
  EXPECT_EQ(File("kube-reserved", "pids", "pids.max", "pids.max"), "1000");
  // kubepods as before: capacity - both reservations.
  EXPECT_EQ(Memory("kubepods"), std::to_string(8 * kGi - 1536 * kMi));
}

TEST_P(ContainerManagerTest, MissingReservedCgroupFailsStart) {
  MakeCgroup("system-reserved");
  NodeConfig cfg;
  cfg.enforce_node_allocatable = {"pods", "system-reserved", "kube-reserved"};
  cfg.system_reserved_cgroup = "/system-reserved";
  cfg.kube_reserved_cgroup = "/kube-reserved";
  cfg.kube_reserved = {{"memory", Q("1Gi")}};
  auto cm = Make(cfg);
  absl::Status st = cm->Start();
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(st.message(),
              HasSubstr("Failed to enforce Kube Reserved Cgroup Limits on \"/kube-reserved\": "));
  EXPECT_THAT(st.message(), HasSubstr("[\"kube-reserved\"]"));
  // Never created by the kubelet.
  EXPECT_FALSE(CgroupExists("kube-reserved"));
}

TEST_P(ContainerManagerTest, ReservedCgroupsUntouchedWithoutTheirKeys) {
  MakeCgroup("kube-reserved");
  NodeConfig cfg;
  cfg.kube_reserved_cgroup = "/kube-reserved";
  cfg.system_reserved_cgroup = "/missing-but-not-enforced";
  cfg.kube_reserved = {{"memory", Q("1Gi")}};
  auto cm = Make(cfg);
  ASSERT_TRUE(cm->Start().ok());
  EXPECT_EQ(Memory("kube-reserved"), "<missing>");
}

TEST_P(ContainerManagerTest, ReservedCgroupNamesFollowTheDriver) {
  MakeCgroup("system.slice");
  NodeConfig cfg;
  cfg.enforce_node_allocatable = {"pods", "system-reserved"};
  cfg.system_reserved_cgroup = "/system.slice";
  cfg.system_reserved = {{"memory", Q("256Mi")}};
  auto cm = Make(cfg, kCgroupDriverSystemd);
  ASSERT_TRUE(cm->Start().ok());
  EXPECT_EQ(Memory("system.slice"), std::to_string(256 * kMi));
}

INSTANTIATE_TEST_SUITE_P(CgroupVersions, ContainerManagerTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "V2" : "V1"; });

}  // namespace
}  // namespace kubelet::cm
