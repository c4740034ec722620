// End-to-end: the stats provider and the image GC manager against the harness's real
// containerd while the kubelet binary runs static pods, driven directly as a library; and the
// kubelet's own /stats/summary, /metrics/resource and /metrics/cadvisor (its wiring of the
// provider) over HTTPS.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "kubelet/images/image_gc_manager.h"
#include "kubelet/stats/cri_stats_provider.h"
#include "nlohmann/json.hpp"
#include "test/e2e/http_client.h"
#include "test/e2e/static_pod_fixture.h"

namespace kubelet::e2e {
namespace {

using nlohmann::json;

class StatsE2ETest : public StaticPodTest {
 protected:
  void SetUp() override {
    StaticPodTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto im = cri::NewRemoteImageService(endpoint_, absl::Seconds(30), absl::Minutes(2));
    ASSERT_TRUE(im.ok()) << im.status();
    images_ = std::move(*im);
    ASSERT_NO_FATAL_FAILURE(StartKubelet());
  }

  // The kubelet's own image GC is off: the test's manager is the one that collects.
  std::string ExtraConfig() override { return "imageGCHighThresholdPercent: 100\n"; }

  int RunningContainers() { return static_cast<int>(Running("").size()); }

  void StartPods(int n) {
    for (int i = 0; i < n; ++i) {
      const std::string name = absl::StrCat("busy", i);
      WriteManifest(name + ".yaml",
                    BusyboxPod(name,
                               "\"trap 'exit 0' TERM; i=0; while true; do "
                               "i=$((i+1)); if [ $i -gt 2000 ]; then sleep 1; i=0; fi; done\""));
    }
    ASSERT_TRUE(WaitUntil([&] { return RunningContainers() == n; }, absl::Seconds(120)))
        << kubelet_->Log();
  }

  std::unique_ptr<cri::ImageManagerService> images_;
  RealClock clock_;
};

TEST_F(StatsE2ETest, SummaryCarriesNodeAndPodFigures) {
  // KUBELET_E2E_STATS_PODS raises the pod count to measure the cost of a call.
  const char* n = std::getenv("KUBELET_E2E_STATS_PODS");
  const int kPods = n != nullptr && std::atoi(n) > 0 ? std::atoi(n) : 3;
  StartPods(kPods);
  stats::CRIStatsProviderOptions o;
  o.runtime = cri_.get();
  o.images = images_.get();
  o.clock = &clock_;
  o.node_name = node_;
  o.root_dir = dir_ + "/root";
  stats::CRIStatsProvider provider(std::move(o));

  ASSERT_TRUE(provider.SummaryJson(false).ok());
  // containerd collects snapshot usage on a period (stats_collect_period, 10 s): on a runtime
  // that has just started, ImageFsInfo reports nothing used until its first collection.
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto fs = provider.ImageFsStats();
        return fs.ok() && fs->used_bytes.value_or(0) > 0;
      },
      absl::Seconds(60), absl::Seconds(1)));
  absl::SleepFor(absl::Seconds(2));
  const absl::Time start = absl::Now();
  auto text = provider.SummaryJson(false);
  const absl::Duration cost = absl::Now() - start;
  ASSERT_TRUE(text.ok()) << text.status();
  std::cout << "SummaryJson with " << kPods << " pods of this test (all sandboxes on the runtime "
            << "are reported) took " << absl::FormatDuration(cost) << "\n";
  const json s = json::parse(*text);
  const json& node = s["node"];
  EXPECT_EQ(node["nodeName"], node_);
  EXPECT_GT(node["cpu"]["usageCoreNanoSeconds"].get<uint64_t>(), 0u);
  EXPECT_TRUE(node["cpu"].contains("usageNanoCores"));
  EXPECT_GT(node["memory"]["workingSetBytes"].get<uint64_t>(), 0u);
  EXPECT_GT(node["fs"]["capacityBytes"].get<uint64_t>(), 0u);
  EXPECT_GT(node["runtime"]["imageFs"]["capacityBytes"].get<uint64_t>(), 0u);
  EXPECT_GT(node["runtime"]["imageFs"]["usedBytes"].get<uint64_t>(), 0u);

  int mine = 0;
  for (const json& pod : s["pods"]) {
    const std::string name = pod["podRef"]["name"];
    if (!name.ends_with(node_)) continue;
    ++mine;
    SCOPED_TRACE(name);
    EXPECT_EQ(pod["podRef"]["namespace"], "default");
    ASSERT_EQ(pod["containers"].size(), 1u) << pod.dump();
    const json& c = pod["containers"][0];
    EXPECT_EQ(c["name"], "main");
    EXPECT_GT(c["cpu"]["usageCoreNanoSeconds"].get<uint64_t>(), 0u) << c.dump();
    EXPECT_TRUE(c["cpu"].contains("usageNanoCores")) << c.dump();
    EXPECT_GT(c["memory"]["workingSetBytes"].get<uint64_t>(), 0u) << c.dump();
    EXPECT_TRUE(c.contains("rootfs")) << c.dump();
    EXPECT_GT(pod["cpu"]["usageCoreNanoSeconds"].get<uint64_t>(), 0u) << pod.dump();
    EXPECT_GT(pod["memory"]["workingSetBytes"].get<uint64_t>(), 0u) << pod.dump();
    EXPECT_TRUE(pod.contains("ephemeral-storage")) << pod.dump();
  }
  EXPECT_EQ(mine, kPods) << *text;

  // Cost of repeated calls (du results cached).
  const absl::Time t0 = absl::Now();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(provider.SummaryJson(false).ok());
  std::cout << "SummaryJson mean over 10 calls: " << absl::FormatDuration((absl::Now() - t0) / 10)
            << " (only_cpu_and_memory: ";
  const absl::Time t1 = absl::Now();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(provider.SummaryJson(true).ok());
  std::cout << absl::FormatDuration((absl::Now() - t1) / 10) << ")\n";
  // The CRI floor of one call: the list calls alone.
  const absl::Time t2 = absl::Now();
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(cri_->ListPodSandbox(nullptr).ok());
    ASSERT_TRUE(cri_->ListContainers(nullptr).ok());
    ASSERT_TRUE(cri_->ListContainerStats(nullptr).ok());
  }
  std::cout << "CRI ListPodSandbox+ListContainers+ListContainerStats mean: "
            << absl::FormatDuration((absl::Now() - t2) / 10) << "\n";
}

TEST_F(StatsE2ETest, ImageGCRemovesUnusedImageOnly) {
  const char* reg_image = std::getenv("KUBELET_E2E_REGISTRY_IMAGE");
  if (reg_image == nullptr || *reg_image == '\0') GTEST_SKIP() << "no registry";
  StartPods(1);
  runtime::v1::ImageSpec extra;
  extra.set_image(reg_image);
  auto ref = images_->PullImage(extra, nullptr, nullptr);
  ASSERT_TRUE(ref.ok()) << ref.status();

  images::ImageGCOptions o;
  o.runtime = cri_.get();
  o.images = images_.get();
  o.clock = &clock_;
  o.policy = {/*high=*/1, /*low=*/0, /*min_age=*/absl::ZeroDuration()};
  o.sandbox_image = "registry.k8s.io/pause:3.9";
  // Report a full disk so a round must free everything eligible.
  o.fs_usage = []() -> absl::StatusOr<images::ImageFsUsage> {
    return images::ImageFsUsage{uint64_t{1} << 40, 0};
  };
  auto m = images::ImageGCManager::Create(std::move(o));
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE((*m)->DetectImages().ok());
  absl::SleepFor(absl::Milliseconds(20));  // last use strictly before the collection
  absl::Status s = (*m)->GarbageCollect();
  EXPECT_FALSE(s.ok());  // 1 TiB cannot be freed
  EXPECT_NE(s.message().find("Failed to garbage collect required amount of images"),
            std::string::npos)
      << s;

  auto present = [&](const std::string& image) {
    runtime::v1::ImageSpec spec;
    spec.set_image(image);
    auto st = images_->ImageStatus(spec, false);
    return st.ok() && st->has_image();
  };
  EXPECT_FALSE(present(reg_image)) << "the unused image was not removed";
  EXPECT_FALSE(present(*ref));
  EXPECT_TRUE(present("docker.io/library/busybox:1.36"));
  EXPECT_TRUE(present("registry.k8s.io/pause:3.9"));
  EXPECT_EQ(RunningContainers(), 1);
}

// The body of GET https://127.0.0.1:<port><path> (the certificate is self-signed), or nullopt
// unless the status is 200.
std::optional<std::string> HttpsGet(int port, const std::string& path) {
  HttpAnswer a = KubeletEndpoint::Https(port).Get(path);
  if (a.code != 200) return std::nullopt;
  return a.body;
}

// One sample of a Prometheus text exposition.
struct Sample {
  std::map<std::string, std::string> labels;
  double value = 0;
};

// The samples of family `name` whose labels include `want`.
std::vector<Sample> Samples(const std::string& text, const std::string& name,
                            const std::map<std::string, std::string>& want = {}) {
  std::vector<Sample> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind(name, 0) != 0) continue;
    std::string rest = line.substr(name.size());
    Sample s;
    if (!rest.empty() && rest[0] == '{') {
      const size_t close = rest.find("} ");
      if (close == std::string::npos) continue;
      // name="value" pairs; our label values hold no quotes or commas.
      for (absl::string_view kv :
           absl::StrSplit(rest.substr(1, close - 1), ',', absl::SkipEmpty())) {
        std::vector<std::string> f = absl::StrSplit(kv, absl::MaxSplits('=', 1));
        if (f.size() != 2 || f[1].size() < 2) continue;
        s.labels[f[0]] = f[1].substr(1, f[1].size() - 2);
      }
      rest = rest.substr(close + 1);
    } else if (rest.empty() || rest[0] != ' ') {
      continue;  // another family with `name` as a prefix
    }
    std::vector<std::string> f = absl::StrSplit(rest, ' ', absl::SkipEmpty());
    if (f.empty() || !absl::SimpleAtod(f[0], &s.value)) continue;
    bool match = true;
    for (const auto& [k, v] : want) {
      auto it = s.labels.find(k);
      if (it == s.labels.end() || it->second != v) match = false;
    }
    if (match) out.push_back(std::move(s));
  }
  return out;
}

uint64_t MemTotalBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  uint64_t kb = 0;
  while (in >> key >> kb >> unit) {
    if (key == "MemTotal:") return kb * 1024;
  }
  return 0;
}

// The kubelet binary's own stats endpoints: its wiring of the provider (cgroup root, pod list,
// runtime) is what answers.
class KubeletStatsEndpointsTest : public StaticPodTest {
 protected:
  std::string ExtraConfig() override { return "address: 127.0.0.1\nreadOnlyPort: 0\n"; }

  void SetUp() override {
    StaticPodTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_NO_FATAL_FAILURE(StartKubelet());
    ASSERT_TRUE(kubelet_->WaitForLog("\"Starting to listen\"", absl::Seconds(60)))
        << kubelet_->Log();
    ASSERT_TRUE(
        WaitUntil([&] { return HttpsGet(api_port_, "/healthz").has_value(); }, absl::Seconds(30)))
        << kubelet_->Log();
  }
};

TEST_F(KubeletStatsEndpointsTest, SummaryAndMetricsFromTheKubelet) {
  // A Guaranteed pod that keeps a CPU busy now and then, under a CFS quota.
  WriteManifest("web.yaml",
                BusyboxPod("web",
                           "\"trap 'exit 0' TERM; i=0; while true; do "
                           "i=$((i+1)); if [ $i -gt 2000 ]; then sleep 1; i=0; fi; done\"",
                           PodParts{.container = "    resources:\n"
                                                 "      limits: {cpu: 500m, memory: 64Mi}\n"}));
  ASSERT_TRUE(WaitUntil([&] { return !Running("web").empty(); }, absl::Seconds(90)))
      << kubelet_->Log();
  const std::string pod = PodName("web");
  const std::string uid = PodUID("web");
  const std::string container_id = Running("web")[0].id();

  // /stats/summary: polled until the pod's figures are in (the first sample of a container may
  // come before the runtime has one).
  json summary, mine;
  const bool complete = WaitUntil(
      [&] {
        auto body = HttpsGet(api_port_, "/stats/summary");
        if (!body) return false;
        summary = json::parse(*body, nullptr, /*allow_exceptions=*/false);
        if (!summary.is_object()) return false;
        for (const json& p : summary["pods"]) {
          if (p["podRef"]["name"] != pod) continue;
          mine = p;
          if (p["containers"].size() != 1 || !p.contains("network")) return false;
          const json& c = p["containers"][0];
          return c["cpu"].value("usageCoreNanoSeconds", uint64_t{0}) > 0 &&
                 c["memory"].value("workingSetBytes", uint64_t{0}) > 0;
        }
        return false;
      },
      absl::Seconds(60), absl::Seconds(1));
  ASSERT_TRUE(complete) << summary.dump(2) << "\n" << kubelet_->Log();
  const json& node = summary["node"];
  EXPECT_EQ(node["nodeName"], node_);
  EXPECT_GT(node["cpu"].value("usageCoreNanoSeconds", uint64_t{0}), 0u) << node.dump();
  EXPECT_GT(node["memory"].value("workingSetBytes", uint64_t{0}), 0u) << node.dump();
  EXPECT_GT(node["memory"].value("availableBytes", uint64_t{0}), 0u) << node.dump();
  EXPECT_GT(node["fs"].value("capacityBytes", uint64_t{0}), 0u) << node.dump();
  EXPECT_EQ(mine["podRef"]["namespace"], "default");
  EXPECT_EQ(mine["podRef"]["uid"], uid);
  const json& c = mine["containers"][0];
  EXPECT_EQ(c["name"], "main");
  EXPECT_GT(mine["cpu"].value("usageCoreNanoSeconds", uint64_t{0}), 0u) << mine.dump();
  EXPECT_GT(mine["memory"].value("workingSetBytes", uint64_t{0}), 0u) << mine.dump();
  // The pod's network: its sandbox's interface on the CNI bridge.
  EXPECT_EQ(mine["network"]["name"], "eth0") << mine.dump();
  EXPECT_TRUE(mine["network"].contains("rxBytes")) << mine.dump();
  EXPECT_TRUE(mine["network"].contains("txBytes")) << mine.dump();

  const std::map<std::string, std::string> ctr = {
      {"container", "main"}, {"namespace", "default"}, {"pod", pod}};

  // /metrics/resource.
  auto resource = HttpsGet(api_port_, "/metrics/resource");
  ASSERT_TRUE(resource.has_value()) << kubelet_->Log();
  auto node_cpu = Samples(*resource, "node_cpu_usage_seconds_total");
  ASSERT_EQ(node_cpu.size(), 1u) << *resource;
  EXPECT_GT(node_cpu[0].value, 0) << *resource;
  auto res_cpu = Samples(*resource, "container_cpu_usage_seconds_total", ctr);
  ASSERT_EQ(res_cpu.size(), 1u) << *resource;
  EXPECT_GT(res_cpu[0].value, 0) << *resource;
  EXPECT_EQ(res_cpu[0].labels.size(), 3u) << *resource;  // container, namespace, pod
  auto res_mem = Samples(*resource, "container_memory_working_set_bytes", ctr);
  ASSERT_EQ(res_mem.size(), 1u) << *resource;
  EXPECT_GT(res_mem[0].value, 0) << *resource;
  EXPECT_EQ(Samples(*resource, "scrape_error").at(0).value, 0) << *resource;

  // /metrics/cadvisor.
  auto cadvisor = HttpsGet(api_port_, "/metrics/cadvisor");
  ASSERT_TRUE(cadvisor.has_value()) << kubelet_->Log();
  // The container's cgroup as the runtime names it (cgroupfs): CRI-O prefixes "crio-".
  const std::string ctr_cgroup =
      "/kubepods/pod" + uid + "/" + (RuntimeName() == "crio" ? "crio-" : "") + container_id;
  auto cad_cpu = Samples(*cadvisor, "container_cpu_usage_seconds_total", ctr);
  ASSERT_EQ(cad_cpu.size(), 1u) << *cadvisor;
  EXPECT_GT(cad_cpu[0].value, 0);
  EXPECT_EQ(cad_cpu[0].labels["cpu"], "total");
  EXPECT_EQ(cad_cpu[0].labels["id"], ctr_cgroup);
  EXPECT_EQ(cad_cpu[0].labels["name"], container_id);
  EXPECT_EQ(cad_cpu[0].labels["image"], BusyboxImage());
  auto cad_mem = Samples(*cadvisor, "container_memory_working_set_bytes", ctr);
  ASSERT_EQ(cad_mem.size(), 1u) << *cadvisor;
  EXPECT_GT(cad_mem[0].value, 0);
  // The container cgroup's own files: CFS quota and period, memory limit, CFS periods.
  auto quota = Samples(*cadvisor, "container_spec_cpu_quota", ctr);
  ASSERT_EQ(quota.size(), 1u) << *cadvisor;
  EXPECT_EQ(quota[0].value, 50000);
  auto limit = Samples(*cadvisor, "container_spec_memory_limit_bytes", ctr);
  ASSERT_EQ(limit.size(), 1u) << *cadvisor;
  EXPECT_EQ(limit[0].value, 64 * 1024 * 1024);
  EXPECT_EQ(Samples(*cadvisor, "container_cpu_cfs_periods_total", ctr).size(), 1u) << *cadvisor;
  EXPECT_EQ(Samples(*cadvisor, "container_cpu_user_seconds_total", ctr).size(), 1u) << *cadvisor;
  EXPECT_EQ(Samples(*cadvisor, "container_memory_cache", ctr).size(), 1u) << *cadvisor;
  EXPECT_EQ(Samples(*cadvisor, "container_oom_events_total", ctr).size(), 1u) << *cadvisor;
  EXPECT_EQ(Samples(*cadvisor, "container_last_seen", ctr).size(), 1u) << *cadvisor;
  // The pod's cgroup and its network.
  const std::map<std::string, std::string> pod_cgroup = {
      {"container", ""}, {"id", "/kubepods/pod" + uid}, {"namespace", "default"}, {"pod", pod}};
  EXPECT_EQ(Samples(*cadvisor, "container_memory_working_set_bytes", pod_cgroup).size(), 1u)
      << *cadvisor;
  auto pod_rx = Samples(*cadvisor, "container_network_receive_bytes_total", pod_cgroup);
  ASSERT_EQ(pod_rx.size(), 1u) << *cadvisor;
  EXPECT_EQ(pod_rx[0].labels["interface"], "eth0");
  // The node's root file system.
  auto root_fs = Samples(*cadvisor, "container_fs_limit_bytes", {{"id", "/"}});
  ASSERT_FALSE(root_fs.empty()) << *cadvisor;
  EXPECT_GT(root_fs[0].value, 0);
  EXPECT_FALSE(root_fs[0].labels["device"].empty());
  // The machine.
  auto cores = Samples(*cadvisor, "machine_cpu_cores");
  ASSERT_EQ(cores.size(), 1u) << *cadvisor;
  EXPECT_EQ(cores[0].value, static_cast<double>(::sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_EQ(cores[0].labels.count("container"), 0u);
  EXPECT_TRUE(cores[0].labels.count("boot_id"));
  auto memory = Samples(*cadvisor, "machine_memory_bytes");
  ASSERT_EQ(memory.size(), 1u) << *cadvisor;
  EXPECT_EQ(memory[0].value, static_cast<double>(MemTotalBytes()));
}

}  // namespace
}  // namespace kubelet::e2e
