// End-to-end: the container manager's cgroups with the kubelet binary on the harness's real
// containerd. Each test runs the kubelet below a cgroupRoot of its own (created here in every
// hierarchy, as upstream requires it to exist, and removed afterwards) so kubelets of other
// tests on the same machine never share a kubepods tree.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "test/e2e/static_pod_fixture.h"

namespace kubelet::e2e {
namespace {

std::string ReadTrimmed(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "<missing>";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

class CgroupsTest : public StaticPodTest {
 protected:
  CgroupsTest() { verbosity_ = 4; }

  void SetUp() override {
    StaticPodTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    mounts_ = CgroupMounts();
    if (mounts_.empty()) GTEST_SKIP() << "no cgroup hierarchy mounted";
    unified_ = mounts_.count("") > 0;
    std::random_device rd;
    cgroup_root_ = absl::StrCat("/e2e-cm-", ::getpid(), "-", rd() % 100000);
    for (const auto& [c, dir] : mounts_) {
      std::filesystem::create_directories(dir + cgroup_root_);
    }
  }

  // kubepods is limited to capacity - kubeReserved - systemReserved; the default hard eviction
  // threshold (memory.available 100Mi) is not subtracted from it.
  std::string ExtraConfig() override {
    return "cgroupDriver: cgroupfs\n"
           "cgroupRoot: " +
           cgroup_root_ +
           "\npodPidsLimit: 300\n"
           "kubeReserved: {cpu: 100m, memory: 100Mi}\n"
           "systemReserved: {memory: 50Mi}\n" +
           extra_config_;
  }

  void TearDown() override {
    StaticPodTest::TearDown();
    for (const auto& [c, dir] : mounts_) RemoveCgroupTree(dir + cgroup_root_);
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  void StartKubelet() {
    StaticPodTest::StartKubelet();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(kubelet_->WaitForLog("\"Starting kubelet main sync loop\"", absl::Seconds(60)))
        << kubelet_->Log();
  }

  // Host path of a cgroup (relative to cgroupRoot) in the hierarchy of `controller`.
  std::string HostPath(const std::string& controller, const std::string& rel) const {
    const std::string& mount = unified_ ? mounts_.at("") : mounts_.at(controller);
    return mount + cgroup_root_ + "/" + rel;
  }
  // The container's cgroup path as its process sees it (/proc/self/cgroup), for `controller`.
  std::string ContainerCgroup(const std::string& container_id, const std::string& controller) {
    auto r = cri_->ExecSync(container_id, {"cat", "/proc/self/cgroup"}, absl::Seconds(20));
    if (!r.ok()) return "exec failed: " + std::string(r.status().message());
    for (absl::string_view line : absl::StrSplit(r->stdout(), '\n', absl::SkipEmpty())) {
      std::vector<std::string> f = absl::StrSplit(line, absl::MaxSplits(':', 2));
      if (f.size() != 3) continue;
      if (unified_ ? f[0] == "0"
                   : absl::StrContains(absl::StrCat(",", f[1], ","),
                                       absl::StrCat(",", controller, ","))) {
        return f[2];
      }
    }
    return "not found in: " + r->stdout();
  }

  static std::string Pod(const std::string& name, const std::string& resources,
                         const std::string& command, const std::string& restart = "Always") {
    return BusyboxPod(name, command,
                      PodParts{.spec = "  restartPolicy: " + restart + "\n",
                               .container = resources,
                               .termination_grace_seconds = 2});
  }

  // MemTotal of /proc/meminfo (the node's memory capacity) minus `reserved`, as the kernel
  // stores a memory limit: rounded down to whole pages.
  static std::string MemoryLimitAfter(int64_t reserved) {
    std::ifstream in("/proc/meminfo");
    std::string key, unit;
    int64_t kb = 0;
    while (in >> key >> kb >> unit && key != "MemTotal:") {
    }
    const int64_t page = ::sysconf(_SC_PAGESIZE);
    return std::to_string((kb * 1024 - reserved) / page * page);
  }

  std::map<std::string, std::string> mounts_;
  bool unified_ = false;
  std::string cgroup_root_;
  std::string extra_config_;  // more KubeletConfiguration lines for one test
};

constexpr int64_t kMi = 1024 * 1024;

TEST_F(CgroupsTest, QOSClassesLandInTheirCgroups) {
  StartKubelet();
  WriteManifest("g.yaml", Pod("g",
                              "    resources:\n"
                              "      limits: {cpu: 200m, memory: 64Mi}\n",
                              kSleepForever));
  WriteManifest("b.yaml", Pod("b",
                              "    resources:\n"
                              "      requests: {cpu: 300m, memory: 32Mi}\n"
                              "      limits: {memory: 96Mi}\n",
                              kSleepForever));
  WriteManifest("be.yaml", Pod("be", "", kSleepForever));
  for (const char* p : {"g", "b", "be"}) {
    ASSERT_TRUE(WaitUntil([&] { return !Running(p).empty(); }, absl::Seconds(90)))
        << p << "\n"
        << kubelet_->Log();
  }
  const std::string g = "kubepods/pod" + PodUID("g");
  const std::string b = "kubepods/burstable/pod" + PodUID("b");
  const std::string be = "kubepods/besteffort/pod" + PodUID("be");

  // The containers' processes sit below their pod cgroups.
  for (const auto& [pod, rel] :
       std::vector<std::pair<std::string, std::string>>{{"g", g}, {"b", b}, {"be", be}}) {
    std::string cg = ContainerCgroup(Running(pod)[0].id(), "memory");
    EXPECT_TRUE(absl::StartsWith(cg, cgroup_root_ + "/" + rel + "/")) << pod << ": " << cg;
  }

  // kubepods: capacity - kubeReserved (100Mi) - systemReserved (50Mi).
  const std::string kubepods_memory = MemoryLimitAfter(150 * kMi);
  if (unified_) {
    // The v1 checks in v2 terms: cpu.weight = 1 + (shares - 2) * 9999 / 262142.
    EXPECT_EQ(ReadTrimmed(HostPath("", g + "/memory.max")), "67108864");
    EXPECT_EQ(ReadTrimmed(HostPath("", g + "/cpu.max")), "20000 100000");
    EXPECT_EQ(ReadTrimmed(HostPath("", g + "/cpu.weight")), "8");  // 204 shares
    EXPECT_EQ(ReadTrimmed(HostPath("", g + "/pids.max")), "300");
    EXPECT_EQ(ReadTrimmed(HostPath("", b + "/memory.max")), "100663296");
    EXPECT_EQ(ReadTrimmed(HostPath("", b + "/cpu.weight")), "12");  // 307 shares
    EXPECT_EQ(ReadTrimmed(HostPath("", b + "/cpu.max")), "max 100000");
    EXPECT_EQ(ReadTrimmed(HostPath("", be + "/cpu.weight")), "1");
    EXPECT_EQ(ReadTrimmed(HostPath("", be + "/memory.max")), "max");
    EXPECT_EQ(ReadTrimmed(HostPath("", "kubepods/besteffort/cpu.weight")), "1");
    EXPECT_EQ(ReadTrimmed(HostPath("", "kubepods/burstable/cpu.weight")), "12");
    EXPECT_EQ(ReadTrimmed(HostPath("", "kubepods/memory.max")), kubepods_memory);
  } else {
    EXPECT_EQ(ReadTrimmed(HostPath("memory", g + "/memory.limit_in_bytes")), "67108864");
    EXPECT_EQ(ReadTrimmed(HostPath("cpu", g + "/cpu.cfs_quota_us")), "20000");
    EXPECT_EQ(ReadTrimmed(HostPath("cpu", g + "/cpu.cfs_period_us")), "100000");
    EXPECT_EQ(ReadTrimmed(HostPath("cpu", g + "/cpu.shares")), "204");
    EXPECT_EQ(ReadTrimmed(HostPath("pids", g + "/pids.max")), "300");
    EXPECT_EQ(ReadTrimmed(HostPath("memory", b + "/memory.limit_in_bytes")), "100663296");
    EXPECT_EQ(ReadTrimmed(HostPath("cpu", b + "/cpu.shares")), "307");
    EXPECT_EQ(ReadTrimmed(HostPath("cpu", b + "/cpu.cfs_quota_us")), "-1");
    EXPECT_EQ(ReadTrimmed(HostPath("cpu", be + "/cpu.shares")), "2");
    EXPECT_EQ(ReadTrimmed(HostPath("cpu", "kubepods/besteffort/cpu.shares")), "2");
    EXPECT_EQ(ReadTrimmed(HostPath("cpu", "kubepods/burstable/cpu.shares")), "307");
    EXPECT_EQ(ReadTrimmed(HostPath("memory", "kubepods/memory.limit_in_bytes")), kubepods_memory);
  }

  // A removed pod's cgroup goes away; the others stay.
  std::filesystem::remove(manifests_ + "/b.yaml");
  const std::string b_dir = HostPath("memory", b);
  EXPECT_TRUE(WaitUntil([&] { return !std::filesystem::exists(b_dir); }, absl::Seconds(60)))
      << kubelet_->Log();
  EXPECT_TRUE(std::filesystem::exists(HostPath("memory", g)));
  // Also where only the runtime put directories (name=systemd, a hybrid host's cgroup2).
  for (const auto& [key, mount] : mounts_) {
    if (key == "name=systemd" || key == "unified") {
      EXPECT_FALSE(std::filesystem::exists(mount + cgroup_root_ + "/" + b)) << key;
    }
  }
  // The burstable QoS cgroup's share of the CPU follows its remaining pods: none.
  const std::string burstable_cpu = unified_ ? HostPath("", "kubepods/burstable/cpu.weight")
                                             : HostPath("cpu", "kubepods/burstable/cpu.shares");
  EXPECT_TRUE(WaitUntil([&] { return ReadTrimmed(burstable_cpu) == (unified_ ? "1" : "2"); },
                        absl::Seconds(30)))
      << ReadTrimmed(burstable_cpu);
}

// enforceNodeAllocatable kube-reserved: the kubeReservedCgroup (made by the node's operator, here
// the test) gets the kubeReserved cpu shares and memory limit.
TEST_F(CgroupsTest, KubeReservedCgroupIsEnforced) {
  const std::string reserved = cgroup_root_ + "/kube-reserved";
  for (const auto& [c, dir] : mounts_) std::filesystem::create_directories(dir + reserved);
  extra_config_ =
      "enforceNodeAllocatable: [pods, kube-reserved]\nkubeReservedCgroup: " + reserved + "\n";
  StartKubelet();
  if (HasFatalFailure()) return;
  if (unified_) {
    EXPECT_EQ(ReadTrimmed(HostPath("", "kube-reserved/memory.max")), "104857600");
    EXPECT_EQ(ReadTrimmed(HostPath("", "kube-reserved/cpu.weight")), "4");  // 102 shares
  } else {
    EXPECT_EQ(ReadTrimmed(HostPath("memory", "kube-reserved/memory.limit_in_bytes")), "104857600");
    EXPECT_EQ(ReadTrimmed(HostPath("cpu", "kube-reserved/cpu.shares")), "102");
  }
  EXPECT_TRUE(kubelet_->WaitForLog("\"Updated limits on reserved cgroup\"", absl::Seconds(5)));
}

// A reserved cgroup that does not exist fails start-up, as upstream; the kubelet never creates it.
TEST_F(CgroupsTest, MissingSystemReservedCgroupFailsStartup) {
  const std::string reserved = cgroup_root_ + "/system-reserved";
  extra_config_ =
      "enforceNodeAllocatable: [pods, system-reserved]\nsystemReservedCgroup: " + reserved + "\n";
  WriteConfig();
  auto p = KubeletProcess::Start(KubeletBinary(), KubeletArgs(), {}, dir_ + "/kubelet.log");
  ASSERT_TRUE(p.ok()) << p.status();
  std::optional<int> code = (*p)->Wait(absl::Seconds(60));
  ASSERT_TRUE(code.has_value()) << (*p)->Log();
  EXPECT_NE(*code, 0);
  const std::string log = (*p)->Log();
  EXPECT_TRUE(absl::StrContains(log, "Failed to enforce System Reserved Cgroup Limits on")) << log;
  EXPECT_TRUE(absl::StrContains(log, reserved + "\\\": cgroup [")) << log;
  EXPECT_FALSE(std::filesystem::exists(HostPath("memory", "system-reserved")));
}

TEST_F(CgroupsTest, OOMKillIsReported) {
  StartKubelet();
  // The shell holds 64Mi of text in a variable under a 32Mi limit. The container's own limit
  // must be what kills it: CRI-O keeps each container's monitor (conmon) in the pod cgroup, so
  // with a pod limit equal to the container's the pod cgroup's OOM killer may strike first, and
  // not necessarily the shell. The init container's larger limit raises the pod cgroup's (max of
  // init and the sum of app containers, as upstream).
  WriteManifest("oom.yaml",
                BusyboxPod("oom", "\"x=$(head -c 67108864 /dev/zero | tr '\\\\0' a); echo ${#x}\"",
                           PodParts{.spec = "  restartPolicy: Never\n"
                                            "  initContainers:\n"
                                            "  - name: headroom\n"
                                            "    image: " +
                                            BusyboxImage() +
                                            "\n"
                                            "    command: [\"true\"]\n"
                                            "    resources:\n"
                                            "      limits: {cpu: 500m, memory: 96Mi}\n",
                                    .container = "    resources:\n"
                                                 "      limits: {cpu: 500m, memory: 32Mi}\n",
                                    .termination_grace_seconds = 2}));
  std::string reason;
  int exit_code = 0;
  ASSERT_TRUE(WaitUntil(
      [&] {
        for (const Container& c : Containers("oom", "main")) {
          auto st = cri_->ContainerStatus(c.id(), false);
          if (st.ok() && st->status().state() == runtime::v1::CONTAINER_EXITED) {
            reason = st->status().reason();
            exit_code = st->status().exit_code();
            return true;
          }
        }
        return false;
      },
      absl::Seconds(90)))
      << kubelet_->Log();
  EXPECT_EQ(reason, "OOMKilled") << "exit code " << exit_code;
  EXPECT_EQ(exit_code, 137);
}

}  // namespace
}  // namespace kubelet::e2e
