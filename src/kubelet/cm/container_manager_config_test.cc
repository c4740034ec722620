#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/log.h"
#include "gtest/gtest.h"
#include "kubelet/cm/container_manager.h"

namespace kubelet::cm {
namespace {

// Captures log lines while alive.
class LogCapture {
 public:
  LogCapture() {
    log::Configure(log::Options{.verbosity = 0,
                                .sink = [this](std::string_view line) { lines_.append(line); }});
  }
  ~LogCapture() { log::Configure(log::Options{}); }
  const std::string& lines() const { return lines_; }

 private:
  std::string lines_;
};

TEST(NodeConfigFromConfig, DefaultsDriverAndRoot) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.cgroup_driver = "";
  c.cgroups_per_qos = true;
  c.cgroup_root = "";
  NodeConfig nc = NodeConfigFromConfig(c, config::FeatureGate());
  EXPECT_EQ(nc.cgroup_driver, kCgroupDriverCgroupfs);
  EXPECT_EQ(nc.cgroup_root, "/");

  c.cgroup_driver = "systemd";
  c.cgroups_per_qos = false;
  nc = NodeConfigFromConfig(c, config::FeatureGate());
  EXPECT_EQ(nc.cgroup_driver, kCgroupDriverSystemd);
  EXPECT_FALSE(nc.cgroups_per_qos);
  EXPECT_EQ(nc.cgroup_root, "");  // only cgroupsPerQOS needs a root

  c.cgroup_root = "/custom";
  EXPECT_EQ(NodeConfigFromConfig(c, config::FeatureGate()).cgroup_root, "/custom");
}

TEST(NodeConfigFromConfig, MapsCgroupsEnforcementAndLimits) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.kubelet_cgroups = "/kubelet";
  c.system_cgroups = "/system";
  c.enforce_node_allocatable = {"pods", "kube-reserved", "pods"};
  c.kube_reserved_cgroup = "/kube";
  c.system_reserved_cgroup = "/sys-reserved";
  c.cpu_cfs_quota = false;
  c.pod_pids_limit = 1024;
  c.fail_swap_on = false;
  c.max_pods = 42;
  NodeConfig nc = NodeConfigFromConfig(c, config::FeatureGate());
  EXPECT_EQ(nc.kubelet_cgroups, "/kubelet");
  EXPECT_EQ(nc.system_cgroups, "/system");
  EXPECT_EQ(nc.enforce_node_allocatable, (std::set<std::string>{"kube-reserved", "pods"}));
  EXPECT_EQ(nc.kube_reserved_cgroup, "/kube");
  EXPECT_EQ(nc.system_reserved_cgroup, "/sys-reserved");
  EXPECT_FALSE(nc.cpu_cfs_quota);
  EXPECT_EQ(nc.pod_pids_limit, 1024);
  EXPECT_FALSE(nc.fail_swap_on);
  EXPECT_EQ(nc.max_pods, 42);
  // Left to the wiring.
  EXPECT_EQ(nc.recorder, nullptr);
  EXPECT_TRUE(nc.node_name.empty());
  EXPECT_TRUE(nc.runtime_cgroups.empty());
}

TEST(NodeConfigFromConfig, CfsQuotaPeriodInMicrosecondsOnlyWithTheGate) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.cpu_cfs_quota_period = absl::Milliseconds(50);
  config::FeatureGate gates;
  EXPECT_EQ(NodeConfigFromConfig(c, gates).cpu_cfs_quota_period_us, kQuotaPeriodUs);
  ASSERT_TRUE(gates.SetFromMap({{"CustomCPUCFSQuotaPeriod", true}}).ok());
  EXPECT_EQ(NodeConfigFromConfig(c, gates).cpu_cfs_quota_period_us, 50000);
  c.cpu_cfs_quota_period = absl::ZeroDuration();
  EXPECT_EQ(NodeConfigFromConfig(c, gates).cpu_cfs_quota_period_us, kQuotaPeriodUs);
}

TEST(LogCgroupRootDefault, OnlyWhenTheRootIsDefaulted) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.cgroups_per_qos = true;
  c.cgroup_root = "/custom";
  {
    LogCapture capture;
    LogCgroupRootDefault(c);
    EXPECT_EQ(capture.lines(), "");
  }
  c.cgroup_root = "";
  LogCapture capture;
  LogCgroupRootDefault(c);
  EXPECT_NE(capture.lines().find(
                "--cgroups-per-qos enabled, but --cgroup-root was not specified.  defaulting to /"),
            std::string::npos)
      << capture.lines();
}

MachineInfo FourCpus() {
  MachineInfo m;
  m.num_cores = 4;
  m.online_cpus = {0, 1, 2, 3};
  return m;
}

TEST(SetReservationsFromConfig, ParsesReservationsAndHardThresholds) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.kube_reserved = {{"cpu", "500m"}, {"memory", "1Gi"}};
  c.system_reserved = {{"memory", "512Mi"}};
  c.eviction_hard = {{"memory.available", "100Mi"}};
  NodeConfig nc;
  ASSERT_TRUE(SetReservationsFromConfig(c, FourCpus(), false, &nc).ok());
  EXPECT_EQ(nc.kube_reserved.at("cpu").MilliValue(), 500);
  EXPECT_EQ(nc.kube_reserved.at("memory").Value(), 1024LL * 1024 * 1024);
  EXPECT_EQ(nc.system_reserved.at("memory").Value(), 512LL * 1024 * 1024);
  ASSERT_EQ(nc.hard_eviction_thresholds.size(), 1u);
  EXPECT_EQ(nc.hard_eviction_thresholds[0].signal, "memory.available");

  // --experimental-allocatable-ignore-eviction leaves the thresholds out.
  nc = NodeConfig();
  ASSERT_TRUE(SetReservationsFromConfig(c, FourCpus(), true, &nc).ok());
  EXPECT_TRUE(nc.hard_eviction_thresholds.empty());
}

TEST(SetReservationsFromConfig, ReservedCpusReplaceTheCpuReservation) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.kube_reserved = {{"cpu", "500m"}};
  c.system_reserved = {{"cpu", "250m"}};
  c.reserved_system_cpus = "0-1";
  NodeConfig nc;
  LogCapture capture;
  ASSERT_TRUE(SetReservationsFromConfig(c, FourCpus(), false, &nc).ok());
  EXPECT_EQ(nc.kube_reserved.count("cpu"), 0u);
  EXPECT_EQ(nc.system_reserved.at("cpu").MilliValue(), 2000);
  EXPECT_NE(capture.lines().find("Option --reserved-cpus is specified"), std::string::npos)
      << capture.lines();

  c.reserved_system_cpus = "6";  // not a CPU of this machine
  EXPECT_FALSE(SetReservationsFromConfig(c, FourCpus(), false, &nc).ok());
}

TEST(SetReservationsFromConfig, BadEntriesAreErrors) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.kube_reserved = {{"memory", "lots"}};
  NodeConfig nc;
  EXPECT_FALSE(SetReservationsFromConfig(c, FourCpus(), false, &nc).ok());
  c.kube_reserved = {};
  c.eviction_hard = {{"no.such.signal", "1Gi"}};
  EXPECT_FALSE(SetReservationsFromConfig(c, FourCpus(), false, &nc).ok());
  EXPECT_TRUE(SetReservationsFromConfig(c, FourCpus(), true, &nc).ok());
}

}  // namespace
}  // namespace kubelet::cm
