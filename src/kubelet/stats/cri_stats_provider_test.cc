#include "kubelet/stats/cri_stats_provider.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "cri/testing/fake_runtime.h"
#include "gtest/gtest.h"
#include "kubelet/stats/resource_metrics.h"
#include "nlohmann/json.hpp"
#include "prometheus/text_serializer.h"

namespace kubelet::stats {
namespace {

namespace v1 = runtime::v1;
namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kUid[] = "11111111-2222-3333-4444-555555555555";

void Write(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << content;
}

class CRIStatsProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/stats-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    proc_ = dir_ / "proc";
    cg_ = dir_ / "cgroup";
    root_ = dir_ / "root";
    logs_ = dir_ / "logs";
    Write(proc_ / "stat",
          "cpu  100 0 100 5000 10 0 0 0 0 0\ncpu0 100 0 100 5000 10 0 0 0\n"
          "btime 1690000000\n");
    Write(proc_ / "meminfo",
          "MemTotal:       4000000 kB\nMemFree:        1000000 kB\n"
          "Inactive(file):  500000 kB\nAnonPages:  700000 kB\n");
    Write(proc_ / "loadavg", "0.10 0.20 0.30 2/345 6789\n");
    Write(proc_ / "sys/kernel/pid_max", "4194304\n");
    Write(proc_ / "net/dev",
          "Inter-|   Receive                                                |  Transmit\n"
          " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets "
          "errs drop fifo colls carrier compressed\n"
          "    lo:  100 1 0 0 0 0 0 0 100 1 0 0 0 0 0 0\n"
          "  ens3: 5000 10 1 0 0 0 0 0 7000 20 2 0 0 0 0 0\n"
          "  cni0: 300 3 0 0 0 0 0 0 400 4 0 0 0 0 0 0\n");
    Write(proc_ / "net/route",
          "Iface\tDestination\tGateway\tFlags\nens3\t00000000\t0102A8C0\t0003\n");
    // The sandbox's process, for the pod's network.
    Write(proc_ / "4242/net/dev", "h1\nh2\n  eth0: 1234 5 0 0 0 0 0 0 4321 6 0 0 0 0 0 0\n");
    // cgroup v1: root, kubelet, kubepods, the pod.
    Write(cg_ / "cpuacct/cpuacct.usage", "50000000000\n");
    Write(cg_ / "memory/memory.usage_in_bytes", "3000000000\n");
    Write(cg_ / "memory/memory.stat",
          "total_inactive_file 1000000000\ntotal_rss 800000000\ntotal_pgfault 77\n"
          "total_pgmajfault 7\n");
    Write(cg_ / "cpuacct/system.slice/kubelet/cpuacct.usage", "2000000000\n");
    Write(cg_ / "memory/system.slice/kubelet/memory.usage_in_bytes", "60000000\n");
    Write(cg_ / "memory/system.slice/kubelet/memory.stat", "total_inactive_file 10000000\n");
    Write(cg_ / "cpuacct/kubepods/cpuacct.usage", "9000000000\n");
    Write(cg_ / "memory/kubepods/memory.usage_in_bytes", "400000000\n");
    Write(cg_ / "memory/kubepods/memory.stat", "total_inactive_file 100000000\n");
    pod_cg_ = "kubepods/besteffort/pod" + std::string(kUid);
    Write(cg_ / "cpuacct" / pod_cg_ / "cpuacct.usage", "3000000000\n");
    Write(cg_ / "memory" / pod_cg_ / "memory.usage_in_bytes", "30000000\n");
    Write(cg_ / "memory" / pod_cg_ / "memory.stat", "total_inactive_file 5000000\n");
    Write(cg_ / "pids" / pod_cg_ / "cgroup.procs", "4242\n4243\n");
    // A volume and a container log.
    Write(root_ / "pods" / kUid / "volumes/kubernetes.io~empty-dir/cache/data",
          std::string(10000, 'x'));
    log_dir_ = logs_ / absl::StrCat("default_web_", kUid) / "main";
    Write(log_dir_ / "0.log", std::string(5000, 'y'));

    fake_.SetClock([this] { return clock_.Now(); });
    v1::PodSandboxConfig sb;
    sb.mutable_metadata()->set_name("web");
    sb.mutable_metadata()->set_uid(kUid);
    sb.mutable_metadata()->set_namespace_("default");
    sandbox_id_ = *fake_.RunPodSandbox(sb, "");
    v1::ContainerConfig cc;
    cc.mutable_metadata()->set_name("main");
    cc.mutable_image()->set_image("docker.io/library/busybox:1.36");
    container_id_ = *fake_.CreateContainer(sandbox_id_, cc, sb);
    ASSERT_TRUE(fake_.StartContainer(container_id_).ok());
    SetContainerStats(1000000000, 20000000);

    api::Pod pod;
    pod.metadata.name = "web";
    pod.metadata.namespace_ = "default";
    pod.metadata.uid = kUid;
    api::Container c;
    c.name = "main";
    c.image = "busybox:1.36";
    pod.spec.containers.push_back(c);
    pods_.push_back(pod);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void SetContainerStats(uint64_t cpu_ns, uint64_t ws) {
    v1::ContainerStats st;
    st.mutable_attributes()->set_id(container_id_);
    st.mutable_attributes()->mutable_metadata()->set_name("main");
    const int64_t now = absl::ToUnixNanos(clock_.Now());
    st.mutable_cpu()->set_timestamp(now);
    st.mutable_cpu()->mutable_usage_core_nano_seconds()->set_value(cpu_ns);
    st.mutable_memory()->set_timestamp(now);
    st.mutable_memory()->mutable_working_set_bytes()->set_value(ws);
    st.mutable_memory()->mutable_usage_bytes()->set_value(ws + 1000);
    st.mutable_writable_layer()->set_timestamp(now);
    st.mutable_writable_layer()->mutable_fs_id()->set_mountpoint("/images");
    st.mutable_writable_layer()->mutable_used_bytes()->set_value(4096);
    st.mutable_writable_layer()->mutable_inodes_used()->set_value(3);
    fake_.SetContainerStats(container_id_, st);
  }

  std::unique_ptr<CRIStatsProvider> Make() {
    CRIStatsProviderOptions o;
    o.runtime = &fake_;
    o.images = &fake_;
    o.clock = &clock_;
    o.node_name = "node-1";
    o.root_dir = root_.string();
    o.pod_logs_dir = logs_.string();
    o.get_pods = [this] { return pods_; };
    o.proc_root = proc_.string();
    o.cgroup_root = cg_.string();
    o.machine = machine_;
    o.kubelet_cgroup = "/system.slice/kubelet";
    o.statfs = [](const std::string& path) -> absl::StatusOr<FsInfo> {
      FsInfo f;
      f.capacity_bytes = path == "/var/lib/fakeruntime/images" ? 2000000 : 1000000;
      f.available_bytes = 600000;
      f.used_bytes = f.capacity_bytes - 500000;
      f.inodes = 1000;
      f.inodes_free = 900;
      return f;
    };
    return std::make_unique<CRIStatsProvider>(std::move(o));
  }

  // A cgroup v1 cgroup with cpuacct.usage, memory usage and memory.stat.
  void WriteCgroup(const std::string& cgroup, const std::string& cpu_ns, const std::string& usage,
                   const std::string& stat) {
    Write(cg_ / "cpuacct" / cgroup / "cpuacct.usage", cpu_ns + "\n");
    Write(cg_ / "memory" / cgroup / "memory.usage_in_bytes", usage + "\n");
    Write(cg_ / "memory" / cgroup / "memory.stat", stat);
  }

  json Summary(CRIStatsProvider& p, bool only = false) {
    auto text = p.SummaryJson(only);
    EXPECT_TRUE(text.ok()) << text.status();
    return json::parse(text.ok() ? *text : "{}");
  }

  fs::path dir_, proc_, cg_, root_, logs_, log_dir_;
  MachineFacts machine_;  // the wiring's, from the container manager
  std::string pod_cg_;
  FakeClock clock_;
  cri::FakeRuntime fake_;
  std::string sandbox_id_, container_id_;
  std::vector<api::Pod> pods_;
};

TEST_F(CRIStatsProviderTest, SummaryShapeAndValues) {
  auto p = Make();
  json s = Summary(*p);
  const json& node = s["node"];
  EXPECT_EQ(node["nodeName"], "node-1");
  EXPECT_EQ(node["startTime"], "2023-07-22T04:26:40Z");
  EXPECT_EQ(node["cpu"]["usageCoreNanoSeconds"], 50000000000ULL);
  EXPECT_FALSE(node["cpu"].contains("usageNanoCores"));  // one sample only
  EXPECT_EQ(node["cpu"]["time"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(node["memory"]["usageBytes"], 3000000000ULL);
  EXPECT_EQ(node["memory"]["workingSetBytes"], 2000000000ULL);
  EXPECT_EQ(node["memory"]["availableBytes"], 4096000000ULL - 2000000000ULL);
  EXPECT_EQ(node["memory"]["rssBytes"], 800000000ULL);
  EXPECT_EQ(node["memory"]["pageFaults"], 77);
  EXPECT_EQ(node["memory"]["majorPageFaults"], 7);
  EXPECT_EQ(node["network"]["name"], "ens3");
  EXPECT_EQ(node["network"]["rxBytes"], 5000);
  EXPECT_EQ(node["network"]["txErrors"], 2);
  EXPECT_EQ(node["network"]["interfaces"].size(), 2u);
  EXPECT_EQ(node["fs"]["capacityBytes"], 1000000);
  EXPECT_EQ(node["fs"]["availableBytes"], 600000);
  EXPECT_EQ(node["fs"]["usedBytes"], 500000);
  EXPECT_EQ(node["fs"]["inodesUsed"], 100);
  EXPECT_EQ(node["runtime"]["imageFs"]["capacityBytes"], 2000000);
  EXPECT_TRUE(node["runtime"]["imageFs"].contains("usedBytes"));
  EXPECT_EQ(node["rlimit"]["maxpid"], 4194304);
  EXPECT_EQ(node["rlimit"]["curproc"], 345);
  ASSERT_EQ(node["systemContainers"].size(), 2u);
  EXPECT_EQ(node["systemContainers"][0]["name"], "kubelet");
  EXPECT_EQ(node["systemContainers"][0]["cpu"]["usageCoreNanoSeconds"], 2000000000ULL);
  EXPECT_EQ(node["systemContainers"][0]["memory"]["workingSetBytes"], 50000000);
  EXPECT_EQ(node["systemContainers"][1]["name"], "pods");
  EXPECT_EQ(node["systemContainers"][1]["memory"]["workingSetBytes"], 300000000);

  ASSERT_EQ(s["pods"].size(), 1u);
  const json& pod = s["pods"][0];
  EXPECT_EQ(pod["podRef"], (json{{"name", "web"}, {"namespace", "default"}, {"uid", kUid}}));
  EXPECT_FALSE(pod["startTime"].is_null());
  // The pod cgroup answers.
  EXPECT_EQ(pod["cpu"]["usageCoreNanoSeconds"], 3000000000ULL);
  EXPECT_EQ(pod["memory"]["workingSetBytes"], 25000000);
  EXPECT_EQ(pod["network"]["name"], "eth0");
  EXPECT_EQ(pod["network"]["rxBytes"], 1234);
  EXPECT_EQ(pod["process_stats"]["process_count"], 2);  // pids of the pod cgroup
  ASSERT_EQ(pod["containers"].size(), 1u);
  const json& c = pod["containers"][0];
  EXPECT_EQ(c["name"], "main");
  EXPECT_EQ(c["cpu"]["usageCoreNanoSeconds"], 1000000000);
  EXPECT_EQ(c["memory"]["workingSetBytes"], 20000000);
  EXPECT_EQ(c["rootfs"]["usedBytes"], 4096);
  EXPECT_EQ(c["rootfs"]["capacityBytes"], 2000000);
  EXPECT_GE(c["logs"]["usedBytes"].get<uint64_t>(), 5000u);
  EXPECT_EQ(c["logs"]["capacityBytes"], 1000000);
  ASSERT_EQ(pod["volume"].size(), 1u);
  EXPECT_EQ(pod["volume"][0]["name"], "cache");
  EXPECT_GE(pod["volume"][0]["usedBytes"].get<uint64_t>(), 10000u);
  EXPECT_EQ(pod["volume"][0]["inodesUsed"], 2);
  const uint64_t eph = pod["ephemeral-storage"]["usedBytes"];
  EXPECT_EQ(eph, 4096 + c["logs"]["usedBytes"].get<uint64_t>() +
                     pod["volume"][0]["usedBytes"].get<uint64_t>());
}

TEST_F(CRIStatsProviderTest, UsageNanoCoresFromTwoSamples) {
  auto p = Make();
  json s1 = Summary(*p);
  EXPECT_FALSE(s1["pods"][0]["containers"][0]["cpu"].contains("usageNanoCores"));
  clock_.Advance(absl::Seconds(2));
  SetContainerStats(2000000000, 20000000);                             // +1 s over 2 s
  Write(cg_ / "cpuacct/cpuacct.usage", "54000000000\n");               // +4 s over 2 s
  Write(cg_ / "cpuacct" / pod_cg_ / "cpuacct.usage", "3500000000\n");  // +0.5 s over 2 s
  json s2 = Summary(*p);
  EXPECT_EQ(s2["pods"][0]["containers"][0]["cpu"]["usageNanoCores"], 500000000);
  EXPECT_EQ(s2["node"]["cpu"]["usageNanoCores"], 2000000000ULL);
  EXPECT_EQ(s2["pods"][0]["cpu"]["usageNanoCores"], 250000000);
}

TEST_F(CRIStatsProviderTest, SandboxStatsUnimplementedIsNotAskedAgain) {
  // The runtime's pod figures are asked for only when the pod cgroup does not answer.
  fs::remove_all(cg_ / "cpuacct/kubepods/besteffort");
  fs::remove_all(cg_ / "memory/kubepods/besteffort");
  fake_.InjectError("ListPodSandboxStats", absl::UnimplementedError("ListPodSandboxStats: no"));
  auto p = Make();
  json s = Summary(*p);
  EXPECT_EQ(s["pods"][0]["cpu"]["usageCoreNanoSeconds"], 1000000000ULL);  // container sum
  Summary(*p);
  EXPECT_EQ(fake_.CallCount("ListPodSandboxStats"), 1);
}

TEST_F(CRIStatsProviderTest, FailingSandboxStatsAreRetriedLater) {
  fs::remove_all(cg_ / "cpuacct/kubepods/besteffort");
  fs::remove_all(cg_ / "memory/kubepods/besteffort");
  fake_.InjectError("ListPodSandboxStats", absl::UnknownError("ListPodSandboxStats: cgroupPath"));
  auto p = Make();
  json s = Summary(*p);
  EXPECT_EQ(s["pods"][0]["cpu"]["usageCoreNanoSeconds"], 1000000000ULL);
  Summary(*p);
  EXPECT_EQ(fake_.CallCount("ListPodSandboxStats"), 1);
  clock_.Advance(absl::Minutes(6));
  Summary(*p);
  EXPECT_EQ(fake_.CallCount("ListPodSandboxStats"), 2);
}

TEST_F(CRIStatsProviderTest, PodFiguresFallBackToContainerSums) {
  fs::remove_all(cg_ / "cpuacct/kubepods/besteffort");
  fs::remove_all(cg_ / "memory/kubepods/besteffort");
  fs::remove_all(cg_ / "pids/kubepods/besteffort");
  auto p = Make();
  json s = Summary(*p);
  EXPECT_EQ(s["pods"][0]["cpu"]["usageCoreNanoSeconds"], 1000000000);
  EXPECT_EQ(s["pods"][0]["memory"]["workingSetBytes"], 20000000);
}

// With the containers' cgroups at hand, cpu and memory come from them and the runtime is asked
// only for the writable layers, once per du_cache_ttl or when a container is new.
TEST_F(CRIStatsProviderTest, CgroupsAnswerAndTheRuntimeOnlyForWritableLayers) {
  const std::string ctr_cg = pod_cg_ + "/" + container_id_;
  WriteCgroup(ctr_cg, "2500000000", "9000000", "total_inactive_file 1000000\ntotal_rss 7000000\n");
  Write(cg_ / "memory" / ctr_cg / "memory.limit_in_bytes", "10000000\n");
  Write(cg_ / "pids" / ctr_cg / "cgroup.procs", "4242\n");
  auto p = Make();
  fake_.ClearCalls();
  json s = Summary(*p, /*only=*/true);
  const json& c = s["pods"][0]["containers"][0];
  EXPECT_EQ(c["cpu"]["usageCoreNanoSeconds"], 2500000000ULL);
  EXPECT_EQ(c["memory"]["workingSetBytes"], 8000000);
  EXPECT_EQ(c["memory"]["rssBytes"], 7000000);
  EXPECT_EQ(c["memory"]["availableBytes"], 2000000);  // limit - working set, as cAdvisor
  EXPECT_EQ(s["pods"][0]["cpu"]["usageCoreNanoSeconds"], 3000000000ULL);
  std::vector<std::string> calls = fake_.calls();
  std::sort(calls.begin(), calls.end());
  EXPECT_EQ(calls, (std::vector<std::string>{"ListContainers", "ListPodSandbox"}));

  json full = Summary(*p);
  EXPECT_EQ(full["pods"][0]["containers"][0]["rootfs"]["usedBytes"], 4096);
  EXPECT_EQ(full["pods"][0]["containers"][0]["cpu"]["usageCoreNanoSeconds"], 2500000000ULL);
  EXPECT_EQ(fake_.CallCount("ListContainerStats"), 1);
  EXPECT_EQ(fake_.CallCount("ListPodSandboxStats"), 0);
  clock_.Advance(absl::Seconds(30));
  full = Summary(*p);
  EXPECT_EQ(full["pods"][0]["containers"][0]["rootfs"]["usedBytes"], 4096);  // the last answer
  EXPECT_EQ(fake_.CallCount("ListContainerStats"), 1);
  clock_.Advance(absl::Seconds(31));
  Summary(*p);
  EXPECT_EQ(fake_.CallCount("ListContainerStats"), 2);

  // A new container (no figures from the last answer yet) is asked for at once.
  v1::PodSandboxConfig sb;
  sb.mutable_metadata()->set_name("web");
  sb.mutable_metadata()->set_uid(kUid);
  sb.mutable_metadata()->set_namespace_("default");
  v1::ContainerConfig cc;
  cc.mutable_metadata()->set_name("sidecar");
  cc.mutable_image()->set_image("busybox");
  const std::string sidecar = *fake_.CreateContainer(sandbox_id_, cc, sb);
  ASSERT_TRUE(fake_.StartContainer(sidecar).ok());
  WriteCgroup(pod_cg_ + "/" + sidecar, "100", "4096", "total_inactive_file 0\n");
  Summary(*p, /*only=*/true);
  EXPECT_EQ(fake_.CallCount("ListContainerStats"), 2);
  Summary(*p);
  EXPECT_EQ(fake_.CallCount("ListContainerStats"), 3);
}

// The cgroup found for a pod is kept while it answers; a vanished one is looked for again.
TEST_F(CRIStatsProviderTest, CgroupNamesAreKeptWhileTheyAnswer) {
  auto p = Make();
  EXPECT_EQ(Summary(*p, true)["pods"][0]["cpu"]["usageCoreNanoSeconds"], 3000000000ULL);
  // A burstable cgroup of the same pod would be found first by a fresh probe.
  const std::string burstable = "kubepods/burstable/pod" + std::string(kUid);
  WriteCgroup(burstable, "7000000000", "1000", "total_inactive_file 0\n");
  EXPECT_EQ(Summary(*p, true)["pods"][0]["cpu"]["usageCoreNanoSeconds"], 3000000000ULL);
  fs::remove_all(cg_ / "cpuacct/kubepods/besteffort");
  fs::remove_all(cg_ / "memory/kubepods/besteffort");
  EXPECT_EQ(Summary(*p, true)["pods"][0]["cpu"]["usageCoreNanoSeconds"], 7000000000ULL);
}

TEST_F(CRIStatsProviderTest, OnlyCpuAndMemory) {
  auto p = Make();
  fake_.ClearCalls();
  json s = Summary(*p, /*only=*/true);
  EXPECT_TRUE(s["node"].contains("cpu"));
  EXPECT_FALSE(s["node"].contains("fs"));
  EXPECT_FALSE(s["node"].contains("network"));
  EXPECT_FALSE(s["node"].contains("runtime"));
  const json& pod = s["pods"][0];
  EXPECT_TRUE(pod.contains("memory"));
  EXPECT_FALSE(pod.contains("volume"));
  EXPECT_FALSE(pod.contains("ephemeral-storage"));
  EXPECT_FALSE(pod["containers"][0].contains("rootfs"));
  EXPECT_EQ(fake_.CallCount("ImageFsInfo"), 0);
}

TEST_F(CRIStatsProviderTest, BoundedCriCallsAndExitedContainersLeftOut) {
  // More pods, one with an exited container.
  for (int i = 0; i < 20; ++i) {
    v1::PodSandboxConfig sb;
    sb.mutable_metadata()->set_name(absl::StrCat("p", i));
    sb.mutable_metadata()->set_uid(absl::StrCat("uid-", i));
    sb.mutable_metadata()->set_namespace_("ns");
    std::string id = *fake_.RunPodSandbox(sb, "");
    v1::ContainerConfig cc;
    cc.mutable_metadata()->set_name("c");
    cc.mutable_image()->set_image("busybox");
    std::string cid = *fake_.CreateContainer(id, cc, sb);
    ASSERT_TRUE(fake_.StartContainer(cid).ok());
    if (i == 0) ASSERT_TRUE(fake_.SetContainerExited(cid, 0).ok());
  }
  auto p = Make();
  fake_.ClearCalls();
  json s = Summary(*p);
  EXPECT_EQ(s["pods"].size(), 21u);
  for (const json& pod : s["pods"]) {
    if (pod["podRef"]["name"] == "p0") EXPECT_TRUE(pod["containers"].empty());
  }
  std::vector<std::string> calls = fake_.calls();
  std::sort(calls.begin(), calls.end());
  EXPECT_EQ(calls, (std::vector<std::string>{"ImageFsInfo", "ListContainerStats", "ListContainers",
                                             "ListPodSandbox", "ListPodSandboxStats"}));
}

TEST_F(CRIStatsProviderTest, ResourceMetrics) {
  auto p = Make();
  auto families = ResourceMetricFamilies(p->GetSummary(true));
  const std::string text = prometheus::TextSerializer().Serialize(families);
  EXPECT_NE(text.find("node_cpu_usage_seconds_total 50 1700000000000\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("node_memory_working_set_bytes 2000000000 1700000000000\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("container_cpu_usage_seconds_total{container=\"main\",namespace=\"default\","
                      "pod=\"web\"} 1 1700000000000\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("container_memory_working_set_bytes{container=\"main\",namespace="
                      "\"default\",pod=\"web\"} 20000000 1700000000000\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("container_start_time_seconds{container=\"main\",namespace=\"default\","
                      "pod=\"web\"} 1700000000"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("pod_cpu_usage_seconds_total{namespace=\"default\",pod=\"web\"} 3 "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("pod_memory_working_set_bytes{namespace=\"default\",pod=\"web\"} 25000000"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("scrape_error 0\n"), std::string::npos) << text;

  auto failed = ResourceMetricFamilies(absl::UnavailableError("down"));
  EXPECT_EQ(
      prometheus::TextSerializer().Serialize(failed).find("scrape_error 1\n") != std::string::npos,
      true);
}

TEST_F(CRIStatsProviderTest, CadvisorMetrics) {
  auto p = Make();
  auto s = p->GetCadvisorSnapshot();
  ASSERT_TRUE(s.ok());
  const std::string text = prometheus::TextSerializer().Serialize(CadvisorMetricFamilies(*s));
  const std::string id = "/kubepods/besteffort/pod" + std::string(kUid) + "/" + container_id_;
  EXPECT_NE(text.find("container_cpu_usage_seconds_total{container=\"main\",cpu=\"total\",id=\"" +
                      id + "\",image=\"busybox:1.36\",name=\"" + container_id_ +
                      "\",namespace=\"default\",pod=\"web\"} 1 "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("container_memory_working_set_bytes{container=\"\",id=\"/\",image=\"\","
                      "name=\"\",namespace=\"\",pod=\"\"} 2000000000"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("container_network_receive_bytes_total{container=\"\",id=\"/kubepods/"
                      "besteffort/pod" +
                      std::string(kUid) + "\",image=\"\",interface=\"eth0\""),
            std::string::npos)
      << text;
}

// The cgroup files behind /metrics/cadvisor's extra families, cgroup v1 (separate cpu and
// cpuacct hierarchies, as on this project's test hosts).
TEST_F(CRIStatsProviderTest, CadvisorCgroupFiguresV1) {
  const std::string ctr = pod_cg_ + "/" + container_id_;
  Write(cg_ / "cpu/cpu.shares", "1024\n");
  Write(cg_ / "memory/memory.limit_in_bytes", "9223372036854771712\n");
  Write(cg_ / "memory/memory.failcnt", "0\n");
  Write(cg_ / "cpu" / pod_cg_ / "cpu.cfs_period_us", "100000\n");
  Write(cg_ / "cpu" / pod_cg_ / "cpu.cfs_quota_us", "-1\n");
  Write(cg_ / "cpu" / pod_cg_ / "cpu.shares", "2\n");
  Write(cg_ / "cpu" / pod_cg_ / "cpu.stat", "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n");
  Write(cg_ / "memory" / pod_cg_ / "memory.limit_in_bytes", "9223372036854771712\n");
  Write(cg_ / "cpuacct" / ctr / "cpuacct.usage", "1000000000\n");
  Write(cg_ / "cpuacct" / ctr / "cpuacct.stat", "user 70\nsystem 30\n");
  Write(cg_ / "cpu" / ctr / "cpu.stat",
        "nr_periods 40\nnr_throttled 5\nthrottled_time 250000000\n");
  Write(cg_ / "cpu" / ctr / "cpu.cfs_period_us", "100000\n");
  Write(cg_ / "cpu" / ctr / "cpu.cfs_quota_us", "50000\n");
  Write(cg_ / "cpu" / ctr / "cpu.shares", "512\n");
  Write(cg_ / "memory" / ctr / "memory.usage_in_bytes", "20001000\n");
  Write(cg_ / "memory" / ctr / "memory.stat",
        "cache 1\ntotal_cache 4096000\ntotal_rss 9000000\ntotal_swap 8192\n");
  Write(cg_ / "memory" / ctr / "memory.failcnt", "3\n");
  Write(cg_ / "memory" / ctr / "memory.max_usage_in_bytes", "30000000\n");
  Write(cg_ / "memory" / ctr / "memory.limit_in_bytes", "67108864\n");
  Write(cg_ / "memory" / ctr / "memory.oom_control",
        "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
  machine_ = MachineFacts{
      .num_cores = 4, .memory_capacity_bytes = 4096000000, .machine_id = "m-1", .boot_id = "b-1"};
  Write(proc_ / "self/mounts",
        "/dev/vda1 / ext4 rw 0 0\nproc /proc proc rw 0 0\n"
        "/dev/vdb1 /var/lib/fakeruntime ext4 rw 0 0\n");

  auto p = Make();
  auto snap = p->GetCadvisorSnapshot();
  ASSERT_TRUE(snap.ok()) << snap.status();
  EXPECT_EQ(snap->root_fs_device, "/dev/vda1");
  EXPECT_EQ(snap->image_fs_device, "/dev/vdb1");
  EXPECT_EQ(snap->machine.num_cores, 4);
  const std::string text = prometheus::TextSerializer().Serialize(CadvisorMetricFamilies(*snap));
  const std::string ctr_labels = "container=\"main\",id=\"/" + ctr +
                                 "\",image=\"busybox:1.36\",name=\"" + container_id_ +
                                 "\",namespace=\"default\",pod=\"web\"}";
  const std::string pod_labels = "container=\"\",id=\"/" + pod_cg_ +
                                 "\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"}";
  const std::string root_labels =
      "container=\"\",id=\"/\",image=\"\",name=\"\",namespace=\"\",pod=\"\"}";
  const long hz = sysconf(_SC_CLK_TCK);
  auto has = [&](const std::string& line) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  };
  auto lacks = [&](const std::string& prefix) {
    EXPECT_EQ(text.find(prefix), std::string::npos) << prefix << "\n" << text;
  };
  // USER_HZ ticks: 70 and 30 of them.
  const uint64_t tick_ns = 1000000000ULL / static_cast<uint64_t>(hz);
  auto secs = [&](uint64_t ticks) {
    std::ostringstream o;
    o.precision(16);
    o << static_cast<double>(ticks * tick_ns) / 1e9;
    return o.str();
  };
  has("container_cpu_user_seconds_total{" + ctr_labels + " " + secs(70) + " ");
  has("container_cpu_system_seconds_total{" + ctr_labels + " " + secs(30) + " ");
  has("container_cpu_cfs_periods_total{" + ctr_labels + " 40 ");
  has("container_cpu_cfs_throttled_periods_total{" + ctr_labels + " 5 ");
  has("container_cpu_cfs_throttled_seconds_total{" + ctr_labels + " 0.25 ");
  has("container_spec_cpu_period{" + ctr_labels + " 100000\n");
  has("container_spec_cpu_quota{" + ctr_labels + " 50000\n");
  has("container_spec_cpu_shares{" + ctr_labels + " 512\n");
  has("container_spec_memory_limit_bytes{" + ctr_labels + " 67108864\n");
  has("container_memory_cache{" + ctr_labels + " 4096000 ");
  has("container_memory_swap{" + ctr_labels + " 8192 ");
  has("container_memory_failcnt{" + ctr_labels + " 3 ");
  has("container_memory_max_usage_bytes{" + ctr_labels + " 30000000 ");
  has("container_oom_events_total{" + ctr_labels + " 2 ");
  has("container_last_seen{" + ctr_labels + " 1700000000 1700000000000\n");
  // The writable layer on the image file system.
  has("container_fs_usage_bytes{container=\"main\",device=\"/dev/vdb1\",id=\"/" + ctr + "\"");
  has("container_fs_limit_bytes{container=\"main\",device=\"/dev/vdb1\",id=\"/" + ctr + "\"");
  // The pod: no quota, so no CFS figures and no quota spec; unlimited memory reads 0.
  has("container_spec_cpu_period{" + pod_labels + " 100000\n");
  has("container_spec_cpu_shares{" + pod_labels + " 2\n");
  has("container_spec_memory_limit_bytes{" + pod_labels + " 0\n");
  lacks("container_spec_cpu_quota{" + pod_labels);
  lacks("container_cpu_cfs_periods_total{" + pod_labels);
  // The node: both file systems, the unlimited root limit as 0.
  has("container_fs_usage_bytes{container=\"\",device=\"/dev/vda1\",id=\"/\"");
  has("container_fs_limit_bytes{container=\"\",device=\"/dev/vdb1\",id=\"/\"");
  has("container_spec_cpu_shares{" + root_labels + " 1024\n");
  has("container_spec_memory_limit_bytes{" + root_labels + " 0\n");
  has("container_memory_failcnt{" + root_labels + " 0 ");
  // Machine families carry the machine labels only.
  has("machine_cpu_cores{boot_id=\"b-1\",machine_id=\"m-1\",system_uuid=\"\"} 4\n");
  has("machine_memory_bytes{boot_id=\"b-1\",machine_id=\"m-1\",system_uuid=\"\"} 4096000000\n");
  // Families in name order.
  EXPECT_LT(text.find("# TYPE container_cpu_cfs_periods_total"),
            text.find("# TYPE container_cpu_usage_seconds_total"));
  EXPECT_LT(text.find("# TYPE container_start_time_seconds"),
            text.find("# TYPE machine_cpu_cores"));
}

TEST(HostReaderTest, CgroupDetailV2) {
  char tmpl[] = "/tmp/stats-v2-XXXXXX";
  const fs::path dir = mkdtemp(tmpl);
  const fs::path cg = dir / "cgroup";
  Write(cg / "cgroup.controllers", "cpuset cpu io memory pids\n");
  const fs::path pod = cg / "kubepods/pod1";
  Write(pod / "cpu.stat",
        "usage_usec 100\nuser_usec 60\nsystem_usec 40\nnr_periods 10\nnr_throttled 2\n"
        "throttled_usec 5000\n");
  Write(pod / "cpu.max", "20000 100000\n");
  Write(pod / "cpu.weight", "8\n");
  Write(pod / "memory.current", "1000\n");
  Write(pod / "memory.stat", "anon 400\nfile 300\n");
  Write(pod / "memory.max", "67108864\n");
  Write(pod / "memory.events", "low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\n");
  const fs::path be = cg / "kubepods/besteffort";
  Write(be / "cpu.max", "max 100000\n");
  Write(be / "memory.max", "max\n");
  Write(be / "memory.stat", "anon 0\nfile 0\n");
  Write(be / "memory.swap.current", "4096\n");

  HostReader r((dir / "proc").string(), cg.string());
  ASSERT_TRUE(r.cgroup_v2());
  CgroupDetails d = r.CgroupDetail("/kubepods/pod1");
  EXPECT_EQ(d.cpu_user_nanos, 60000u);
  EXPECT_EQ(d.cpu_system_nanos, 40000u);
  EXPECT_EQ(d.cfs_periods, 10u);
  EXPECT_EQ(d.cfs_throttled_periods, 2u);
  EXPECT_EQ(d.cfs_throttled_nanos, 5000000u);
  EXPECT_EQ(d.cpu_period_us, 100000u);
  EXPECT_EQ(d.cpu_quota_us, 20000u);
  EXPECT_EQ(d.cpu_shares, CpuWeightToShares(8));
  EXPECT_EQ(d.memory_cache_bytes, 300u);
  EXPECT_EQ(d.memory_swap_bytes, 0u);  // no swap controller
  EXPECT_EQ(d.memory_limit_bytes, 67108864u);
  EXPECT_EQ(d.oom_kills, 1u);
  EXPECT_FALSE(d.memory_failcnt.has_value());
  EXPECT_FALSE(d.memory_max_usage_bytes.has_value());
  CgroupDetails b = r.CgroupDetail("/kubepods/besteffort");
  EXPECT_EQ(b.cpu_quota_us, 0u);
  EXPECT_EQ(b.cpu_period_us, 100000u);
  EXPECT_EQ(b.memory_limit_bytes, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(b.memory_swap_bytes, 4096u);
  EXPECT_FALSE(r.CgroupDetail("/missing").cpu_shares.has_value());
  // The memory reading carries the limit (what a system container's availableBytes comes
  // from), and none when unlimited.
  std::optional<MemoryReading> pm = r.CgroupMemory("/kubepods/pod1");
  ASSERT_TRUE(pm.has_value());
  EXPECT_EQ(pm->limit_bytes, std::optional<uint64_t>(67108864u));
  Write(be / "memory.current", "0\n");
  std::optional<MemoryReading> bm = r.CgroupMemory("/kubepods/besteffort");
  ASSERT_TRUE(bm.has_value());
  EXPECT_FALSE(bm->limit_bytes.has_value());
  fs::remove_all(dir);
}

TEST(HostReaderTest, WeightToSharesInvertsTheKubeletMapping) {
  EXPECT_EQ(CpuWeightToShares(1), 2u);
  EXPECT_EQ(CpuWeightToShares(10000), 262144u);
  EXPECT_EQ(CpuWeightToShares(39), 998u);  // 1024 shares -> weight 39
  EXPECT_EQ(CpuWeightToShares(0), 2u);     // out of range: clamped
}

TEST(HostReaderTest, MountDeviceIsTheLongestContainingMount) {
  char tmpl[] = "/tmp/stats-mounts-XXXXXX";
  const fs::path dir = mkdtemp(tmpl);
  Write(dir / "proc/self/mounts",
        "/dev/root / ext4 rw 0 0\n/dev/sdb1 /mnt/my\\040disk ext4 rw 0 0\n"
        "tmpfs /mnt/my\\040disk/tmp tmpfs rw 0 0\n");
  HostReader r((dir / "proc").string(), (dir / "cgroup").string());
  EXPECT_EQ(r.MountDevice("/mnt/my disk/images"), "/dev/sdb1");
  EXPECT_EQ(r.MountDevice("/mnt/my disk/tmp/x"), "tmpfs");
  EXPECT_EQ(r.MountDevice("/mnt/my diskette"), "/dev/root");
  EXPECT_EQ(r.MountDevice("/var"), "/dev/root");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kubelet::stats
