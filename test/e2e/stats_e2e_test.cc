// End-to-end: the stats provider and the image GC manager against the harness's real
// containerd while the kubelet binary runs static pods. The library is driven directly (the
// HTTP API that serves /stats/summary is tested on its own).
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "kubelet/images/image_gc_manager.h"
#include "kubelet/stats/cri_stats_provider.h"
#include "nlohmann/json.hpp"
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

}  // namespace
}  // namespace kubelet::e2e
