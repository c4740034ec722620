#include "kubelet/stats/cri_stats_provider.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
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

  json Summary(CRIStatsProvider& p, bool only = false) {
    auto text = p.SummaryJson(only);
    EXPECT_TRUE(text.ok()) << text.status();
    return json::parse(text.ok() ? *text : "{}");
  }

  fs::path dir_, proc_, cg_, root_, logs_, log_dir_;
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
  // The fake's pod stats carry no figures: the pod cgroup answers.
  EXPECT_EQ(pod["cpu"]["usageCoreNanoSeconds"], 3000000000ULL);
  EXPECT_EQ(pod["memory"]["workingSetBytes"], 25000000);
  EXPECT_EQ(pod["network"]["name"], "eth0");
  EXPECT_EQ(pod["network"]["rxBytes"], 1234);
  EXPECT_EQ(pod["process_stats"]["process_count"], 1);  // the fake's: running containers
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
  fake_.InjectError("ListPodSandboxStats", absl::UnimplementedError("ListPodSandboxStats: no"));
  auto p = Make();
  json s = Summary(*p);
  EXPECT_EQ(s["pods"][0]["cpu"]["usageCoreNanoSeconds"], 3000000000ULL);
  EXPECT_EQ(s["pods"][0]["process_stats"]["process_count"], 2);  // pids of the pod cgroup
  Summary(*p);
  EXPECT_EQ(fake_.CallCount("ListPodSandboxStats"), 1);
}

TEST_F(CRIStatsProviderTest, FailingSandboxStatsAreRetriedLater) {
  fake_.InjectError("ListPodSandboxStats", absl::UnknownError("ListPodSandboxStats: cgroupPath"));
  auto p = Make();
  json s = Summary(*p);
  EXPECT_EQ(s["pods"][0]["cpu"]["usageCoreNanoSeconds"], 3000000000ULL);
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
  auto s = p->GetSummary(false);
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

}  // namespace
}  // namespace kubelet::stats
