// The eviction manager's logic on hand-made Summaries and a fake clock: thresholds parsing, the
// signals, ranking, one eviction per pass with upstream's message and grace period, soft
// thresholds' grace periods, minimum reclaim, the pressure transition period, node-level reclaim
// for disk signals, critical pods, and admission under pressure.
#include "kubelet/eviction/eviction.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "api/quantity.h"
#include "api/static_pod.h"
#include "api/testing/pod_builder.h"

namespace kubelet::eviction {
namespace {

constexpr int64_t kMi = 1 << 20;

api::Pod MakePod(const std::string& name, const std::string& mem_request = "",
                 const std::string& mem_limit = "") {
  api::testing::PodBuilder b(name);
  b.Container("main", "");
  if (!mem_request.empty()) b.Requests("100m", mem_request);
  if (!mem_limit.empty()) b.Limits("100m", mem_limit);
  return b;
}

stats::PodStats PodUsage(const api::Pod& pod, int64_t memory, int64_t disk = 0) {
  stats::PodStats ps;
  ps.pod_ref = {pod.metadata.name, pod.metadata.namespace_, pod.metadata.uid};
  stats::ContainerStats cs;
  cs.name = "main";
  cs.memory = stats::MemoryStats{};
  cs.memory->working_set_bytes = memory;
  ps.containers.push_back(cs);
  ps.memory = stats::MemoryStats{};
  ps.memory->working_set_bytes = memory;
  ps.ephemeral_storage = stats::FsStats{};
  ps.ephemeral_storage->used_bytes = disk;
  return ps;
}

stats::Summary Node(int64_t mem_available, int64_t mem_working_set, int64_t fs_available = 0,
                    int64_t fs_capacity = 0) {
  stats::Summary s;
  s.node.memory = stats::MemoryStats{};
  s.node.memory->available_bytes = mem_available;
  s.node.memory->working_set_bytes = mem_working_set;
  if (fs_capacity > 0) {
    s.node.fs = stats::FsStats{};
    s.node.fs->available_bytes = fs_available;
    s.node.fs->capacity_bytes = fs_capacity;
    s.node.fs->inodes_free = 1000000;
    s.node.fs->inodes = 1000000;
  }
  return s;
}

struct Evicted {
  std::string name;
  std::string message;
  int64_t grace = -1;
};

class ManagerTest : public ::testing::Test {
 protected:
  ManagerOptions Options(std::vector<Threshold> thresholds) {
    ManagerOptions o;
    o.thresholds = std::move(thresholds);
    o.pressure_transition_period = absl::Minutes(5);
    o.summary = [this]() -> absl::StatusOr<stats::Summary> { return summary_; };
    o.active_pods = [this] { return pods_; };
    o.evict = [this](const api::Pod& p, const std::string& m, int64_t g) {
      if (api::IsCriticalPod(p)) return false;
      evicted_.push_back({p.metadata.name, m, g});
      return true;
    };
    return o;
  }
  static std::vector<Threshold> Hard(const std::map<std::string, std::string>& hard) {
    auto t = ParseThresholds(hard, {}, {}, {}, {});
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *t : std::vector<Threshold>{};
  }

  FakeClock clock_;
  stats::Summary summary_;
  std::vector<api::Pod> pods_;
  std::vector<Evicted> evicted_;
};

TEST(ParseThresholdsTest, UpstreamDefaultsAndErrors) {
  auto t = ParseThresholds({{"memory.available", "100Mi"},
                            {"nodefs.available", "10%"},
                            {"nodefs.inodesFree", "5%"},
                            {"imagefs.available", "15%"}},
                           {}, {}, {}, {"pods"});
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->size(), 5u);  // plus allocatableMemory.available with "pods" enforced
  std::map<std::string, const Threshold*> by;
  for (const Threshold& x : *t) by[x.signal] = &x;
  EXPECT_EQ(*by["memory.available"]->quantity, 100 * kMi);
  EXPECT_TRUE(by["memory.available"]->hard());
  EXPECT_EQ(by["memory.available"]->String(), "100Mi");
  EXPECT_EQ(*by["allocatableMemory.available"]->quantity, 100 * kMi);
  EXPECT_DOUBLE_EQ(by["nodefs.available"]->percentage, 0.10);
  EXPECT_EQ(by["nodefs.available"]->Value(1000), 100);
  EXPECT_EQ(by["imagefs.available"]->String(), "15%");

  auto bad = ParseThresholds({{"memory.avail", "1Gi"}}, {}, {}, {}, {});
  EXPECT_EQ(bad.status().message(), "unsupported eviction signal memory.avail");
  bad = ParseThresholds({}, {{"memory.available", "1Gi"}}, {}, {}, {});
  EXPECT_EQ(bad.status().message(),
            "no grace period specified for soft eviction threshold memory.available");
  bad = ParseThresholds({{"nodefs.available", "110%"}}, {}, {}, {}, {});
  EXPECT_FALSE(bad.ok());
  bad = ParseThresholds({{"memory.available", "lots"}}, {}, {}, {}, {});
  EXPECT_FALSE(bad.ok());
  auto soft = ParseThresholds({}, {{"memory.available", "1Gi"}}, {{"memory.available", "90s"}},
                              {{"memory.available", "500Mi"}}, {});
  ASSERT_TRUE(soft.ok());
  EXPECT_FALSE((*soft)[0].hard());
  EXPECT_EQ((*soft)[0].grace_period, absl::Seconds(90));
  EXPECT_EQ((*soft)[0].MinReclaim(0), 500 * kMi);
  // A zero threshold never fires.
  auto zero = ParseThresholds({{"memory.available", "0"}}, {}, {}, {}, {});
  ASSERT_TRUE(zero.ok());
  EXPECT_TRUE(zero->empty());
}

TEST(ObserveTest, SignalsFromTheSummary) {
  stats::Summary s = Node(300 * kMi, 700 * kMi, 40, 100);
  s.node.image_fs = stats::FsStats{};
  s.node.image_fs->available_bytes = 5;
  s.node.image_fs->capacity_bytes = 50;
  s.node.rlimit = stats::RlimitStats{};
  s.node.rlimit->max_pid = 4000;
  s.node.rlimit->num_of_running_processes = 1000;
  stats::ContainerStats pods;
  pods.name = "pods";
  pods.memory = stats::MemoryStats{};
  pods.memory->working_set_bytes = 200 * kMi;
  pods.memory->available_bytes = 300 * kMi;  // a 500Mi limit
  s.node.system_containers.push_back(pods);
  Observations o = Observe(s);
  EXPECT_EQ(o["memory.available"].available, 300 * kMi);
  EXPECT_EQ(o["memory.available"].capacity, 1000 * kMi);
  EXPECT_EQ(o["allocatableMemory.available"].available, 300 * kMi);
  EXPECT_EQ(o["allocatableMemory.available"].capacity, 500 * kMi);
  EXPECT_EQ(o["nodefs.available"].available, 40);
  EXPECT_EQ(o["imagefs.available"].capacity, 50);
  EXPECT_EQ(o["pid.available"].available, 3000);
}

TEST_F(ManagerTest, MemoryPressureEvictsTheBestEffortHogAndKeepsTheGuaranteedPod) {
  api::Pod guaranteed = MakePod("guaranteed", "400Mi", "400Mi");
  api::Pod hog = MakePod("hog");
  api::Pod small = MakePod("small");
  pods_ = {guaranteed, small, hog};
  summary_ = Node(50 * kMi, 950 * kMi);
  summary_.pods = {PodUsage(guaranteed, 390 * kMi), PodUsage(hog, 500 * kMi),
                   PodUsage(small, 10 * kMi)};
  Manager m(Options(Hard({{"memory.available", "100Mi"}})), clock_);
  std::optional<api::Pod> out = m.Synchronize();
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(evicted_.size(), 1u);
  EXPECT_EQ(evicted_[0].name, "hog");
  EXPECT_EQ(evicted_[0].grace, 1);
  EXPECT_EQ(evicted_[0].message,
            "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. "
            "Container main was using 500Mi, request is 0, has larger consumption of memory. ");
  EXPECT_TRUE(m.GetPressure().memory);
  EXPECT_FALSE(m.GetPressure().disk);

  // Ranking: usage above requests first, then the larger excess.
  std::vector<api::Pod> ranked = RankForEviction("memory.available", pods_, summary_);
  ASSERT_EQ(ranked.size(), 3u);
  EXPECT_EQ(ranked[0].metadata.name, "hog");
  EXPECT_EQ(ranked[1].metadata.name, "small");
  EXPECT_EQ(ranked[2].metadata.name, "guaranteed");
}

TEST_F(ManagerTest, NodeSummaryAloneUntilAThresholdIsMet) {
  ManagerOptions o = Options(Hard({{"memory.available", "100Mi"}}));
  int full = 0, node = 0;
  o.summary = [&]() -> absl::StatusOr<stats::Summary> {
    ++full;
    return summary_;
  };
  stats::Summary node_only;
  o.node_summary = [&]() -> absl::StatusOr<stats::Summary> {
    ++node;
    return node_only;
  };
  Manager m(std::move(o), clock_);
  api::Pod hog = MakePod("hog");
  api::Pod guaranteed = MakePod("guaranteed", "400Mi", "400Mi");
  pods_ = {guaranteed, hog};
  summary_ = Node(500 * kMi, 500 * kMi);
  summary_.pods = {PodUsage(guaranteed, 390 * kMi), PodUsage(hog, 100 * kMi)};
  node_only = Node(500 * kMi, 500 * kMi);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(m.Synchronize().has_value());
  EXPECT_EQ(node, 3);
  EXPECT_EQ(full, 0);  // no threshold met: the pods were never read
  EXPECT_FALSE(m.GetPressure().memory);

  // Met on the node's figures: the full Summary ranks the pods, the message keeps the node's.
  node_only = Node(50 * kMi, 950 * kMi);
  summary_ = node_only;
  summary_.pods = {PodUsage(guaranteed, 390 * kMi), PodUsage(hog, 500 * kMi)};
  ASSERT_TRUE(m.Synchronize().has_value());
  EXPECT_EQ(node, 4);
  EXPECT_EQ(full, 1);
  ASSERT_EQ(evicted_.size(), 1u);
  EXPECT_EQ(evicted_[0].name, "hog");
  EXPECT_EQ(evicted_[0].message,
            "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. "
            "Container main was using 500Mi, request is 0, has larger consumption of memory. ");
  EXPECT_TRUE(m.GetPressure().memory);
}

TEST_F(ManagerTest, CriticalPodsAreSkippedAndLowerPriorityGoesFirst) {
  api::Pod static_pod = MakePod("static");
  static_pod.metadata.annotations["kubernetes.io/config.source"] = "file";
  api::Pod high = MakePod("high");
  high.spec.priority = 1000;
  api::Pod low = MakePod("low");
  low.spec.priority = 10;
  pods_ = {static_pod, high, low};
  summary_ = Node(10 * kMi, 990 * kMi);
  summary_.pods = {PodUsage(static_pod, 900 * kMi), PodUsage(high, 50 * kMi),
                   PodUsage(low, 20 * kMi)};
  Manager m(Options(Hard({{"memory.available", "100Mi"}})), clock_);
  ASSERT_TRUE(m.Synchronize().has_value());
  ASSERT_EQ(evicted_.size(), 1u);
  EXPECT_EQ(evicted_[0].name, "low");
  // Only the static pod left: pressure is reported, nothing evicted.
  pods_ = {static_pod};
  evicted_.clear();
  EXPECT_FALSE(m.Synchronize().has_value());
  EXPECT_TRUE(evicted_.empty());
  EXPECT_TRUE(m.GetPressure().memory);
}

TEST_F(ManagerTest, SoftThresholdWaitsForItsGracePeriodAndUsesMaxPodGrace) {
  auto t =
      ParseThresholds({}, {{"memory.available", "200Mi"}}, {{"memory.available", "1m"}}, {}, {});
  ASSERT_TRUE(t.ok());
  ManagerOptions o = Options(*t);
  o.max_pod_grace_period_seconds = 10;
  Manager m(std::move(o), clock_);
  api::Pod p = MakePod("p");
  p.spec.termination_grace_period_seconds = 30;
  pods_ = {p};
  summary_ = Node(150 * kMi, 850 * kMi);
  summary_.pods = {PodUsage(p, 300 * kMi)};
  EXPECT_FALSE(m.Synchronize().has_value());
  EXPECT_TRUE(m.GetPressure().memory);  // the condition does not wait for the grace period
  clock_.Advance(absl::Seconds(30));
  EXPECT_FALSE(m.Synchronize().has_value());
  clock_.Advance(absl::Seconds(31));
  ASSERT_TRUE(m.Synchronize().has_value());
  EXPECT_EQ(evicted_.at(0).grace, 10);
}

TEST_F(ManagerTest, MinimumReclaimAndTransitionPeriod) {
  auto t =
      ParseThresholds({{"memory.available", "100Mi"}}, {}, {}, {{"memory.available", "200Mi"}}, {});
  ASSERT_TRUE(t.ok());
  Manager m(Options(*t), clock_);
  api::Pod p = MakePod("p");
  pods_ = {p};
  summary_ = Node(50 * kMi, 950 * kMi);
  summary_.pods = {PodUsage(p, 300 * kMi)};
  ASSERT_TRUE(m.Synchronize().has_value());
  // 150Mi free: above the threshold but not by the minimum reclaim: still met.
  evicted_.clear();
  summary_ = Node(150 * kMi, 850 * kMi);
  summary_.pods = {PodUsage(p, 300 * kMi)};
  EXPECT_TRUE(m.Synchronize().has_value());
  // 400Mi free: relieved; the condition stays for the transition period.
  summary_ = Node(400 * kMi, 600 * kMi);
  evicted_.clear();
  clock_.Advance(absl::Seconds(10));
  EXPECT_FALSE(m.Synchronize().has_value());
  EXPECT_TRUE(m.GetPressure().memory);
  clock_.Advance(absl::Minutes(5));
  EXPECT_FALSE(m.Synchronize().has_value());
  EXPECT_FALSE(m.GetPressure().memory);
}

TEST_F(ManagerTest, DiskPressureReclaimsNodeLevelResourcesFirst) {
  ManagerOptions o = Options(Hard({{"nodefs.available", "10%"}}));
  int containers = 0, images = 0;
  o.delete_dead_containers = [&] { ++containers; };
  o.delete_unused_images = [&] {
    ++images;
    summary_ = Node(900 * kMi, 100 * kMi, 50, 100);  // image GC freed enough
  };
  Manager m(std::move(o), clock_);
  api::Pod p = MakePod("p");
  pods_ = {p};
  summary_ = Node(900 * kMi, 100 * kMi, 5, 100);
  summary_.pods = {PodUsage(p, kMi, 40)};
  EXPECT_FALSE(m.Synchronize().has_value());
  EXPECT_EQ(containers, 1);
  EXPECT_EQ(images, 1);
  EXPECT_TRUE(evicted_.empty());
  EXPECT_TRUE(m.GetPressure().disk);

  // Reclaim is not enough: the pod using the most ephemeral storage goes.
  ManagerOptions o2 = Options(Hard({{"nodefs.available", "10%"}}));
  o2.delete_unused_images = [] {};
  Manager m2(std::move(o2), clock_);
  summary_ = Node(900 * kMi, 100 * kMi, 5, 100);
  api::Pod q = MakePod("q");
  pods_ = {p, q};
  summary_.pods = {PodUsage(p, kMi, 40), PodUsage(q, kMi, 10)};
  ASSERT_TRUE(m2.Synchronize().has_value());
  EXPECT_EQ(evicted_.at(0).name, "p");
  EXPECT_TRUE(absl::StartsWith(
      evicted_.at(0).message,
      "The node was low on resource: ephemeral-storage. Threshold quantity: 10, available: 5. "))
      << evicted_.at(0).message;
}

TEST_F(ManagerTest, AdmissionUnderPressure) {
  Manager m(Options(Hard({{"memory.available", "100Mi"}, {"nodefs.available", "10%"}})), clock_);
  api::Pod best_effort = MakePod("be");
  api::Pod burstable = MakePod("burstable", "100Mi");
  EXPECT_TRUE(m.Admit(best_effort, {}).admit);  // no pressure yet

  summary_ = Node(50 * kMi, 950 * kMi, 50, 100);
  pods_ = {};
  m.Synchronize();
  container::AdmitDecision d = m.Admit(best_effort, {});
  EXPECT_FALSE(d.admit);
  EXPECT_EQ(d.reason, "Evicted");
  EXPECT_EQ(d.message, "The node had condition: [MemoryPressure]. ");
  EXPECT_TRUE(m.Admit(burstable, {}).admit);
  api::Pod tolerating = best_effort;
  tolerating.spec.tolerations.push_back(
      {.key = "node.kubernetes.io/memory-pressure", .operator_ = "Exists", .effect = "NoSchedule"});
  EXPECT_TRUE(m.Admit(tolerating, {}).admit);
  api::Pod critical = best_effort;
  critical.spec.priority = 2000000000;
  EXPECT_TRUE(m.Admit(critical, {}).admit);

  // Disk pressure too: every non-critical pod is refused.
  summary_ = Node(50 * kMi, 950 * kMi, 5, 100);
  m.Synchronize();
  d = m.Admit(burstable, {});
  EXPECT_FALSE(d.admit);
  EXPECT_EQ(d.message, "The node had condition: [MemoryPressure DiskPressure]. ");
  EXPECT_TRUE(m.Admit(critical, {}).admit);
}

}  // namespace
}  // namespace kubelet::eviction

namespace kubelet::eviction {
namespace {

// kernelMemcgNotification: each memory threshold is armed at capacity - threshold + inactive
// file on its cgroup, re-armed at most every 10 s, and a crossing starts a pass at once.
struct Armed {
  std::string path;
  std::string attribute;
  int64_t threshold = 0;
};

class FakeNotifier final : public CgroupNotifier {
 public:
  explicit FakeNotifier(int* live) : live_(live) { ++*live_; }
  ~FakeNotifier() override { --*live_; }

 private:
  int* live_;
};

TEST_F(ManagerTest, MemcgNotifierArmsAtTheUsageThatMeetsTheThreshold) {
  auto thresholds = ParseThresholds({{"memory.available", "100Mi"}}, {}, {}, {}, {"pods"});
  ASSERT_TRUE(thresholds.ok());
  std::vector<Armed> armed;
  int live = 0;
  ManagerOptions o2 = Options(*thresholds);
  o2.kernel_memcg_notification = true;
  o2.memory_cgroup_root = "/sys/fs/cgroup/memory";
  o2.pods_cgroup = "/kubepods";
  o2.monitoring_interval = absl::Hours(1);
  o2.notifier_factory =
      [&](const std::string& path, const std::string& attribute, int64_t threshold,
          std::function<void()>) -> absl::StatusOr<std::unique_ptr<CgroupNotifier>> {
    armed.push_back({path, attribute, threshold});
    return std::unique_ptr<CgroupNotifier>(std::make_unique<FakeNotifier>(&live));
  };
  summary_ = Node(3000 * kMi, 1000 * kMi);
  summary_.node.memory->usage_bytes = 1200 * kMi;
  {
    stats::ContainerStats pods;
    pods.name = "pods";
    pods.memory = stats::MemoryStats{};
    pods.memory->available_bytes = 500 * kMi;
    pods.memory->working_set_bytes = 300 * kMi;
    pods.memory->usage_bytes = 350 * kMi;
    summary_.node.system_containers.push_back(pods);
  }
  {
    Manager manual(std::move(o2), clock_);
    // Passes by hand (no thread): the first arms the notifiers.
    (void)manual.Synchronize();
    ASSERT_EQ(armed.size(), 2u);
    // memory.available on the root: capacity 4000Mi - 100Mi + 200Mi inactive file.
    EXPECT_EQ(armed[0].path, "/sys/fs/cgroup/memory");
    EXPECT_EQ(armed[0].attribute, "memory.usage_in_bytes");
    EXPECT_EQ(armed[0].threshold, 4100 * kMi);
    // allocatableMemory.available on the pods cgroup: 800Mi - 100Mi + 50Mi.
    EXPECT_EQ(armed[1].path, "/sys/fs/cgroup/memory/kubepods");
    EXPECT_EQ(armed[1].threshold, 750 * kMi);
    EXPECT_EQ(live, 2);
    // Within 10 s: not re-armed; after: re-armed from the new figures, the old ones released.
    clock_.Advance(absl::Seconds(5));
    (void)manual.Synchronize();
    EXPECT_EQ(armed.size(), 2u);
    clock_.Advance(absl::Seconds(6));
    summary_.node.memory->usage_bytes = 1300 * kMi;
    (void)manual.Synchronize();
    ASSERT_EQ(armed.size(), 4u);
    EXPECT_EQ(armed[2].threshold, 4200 * kMi);
    EXPECT_EQ(live, 2);
    manual.Stop();
    EXPECT_EQ(live, 0);
  }
}

TEST_F(ManagerTest, MemcgCrossingRunsAPassAtOnce) {
  ManagerOptions o = Options(Hard({{"memory.available", "100Mi"}}));
  o.monitoring_interval = absl::Hours(1);
  o.kernel_memcg_notification = true;
  o.memory_cgroup_root = "/sys/fs/cgroup/memory";
  absl::Mutex mu;
  std::function<void()> crossed;
  int live = 0;
  o.notifier_factory =
      [&](const std::string&, const std::string&, int64_t,
          std::function<void()> on_crossed) -> absl::StatusOr<std::unique_ptr<CgroupNotifier>> {
    absl::MutexLock lock(&mu);
    crossed = std::move(on_crossed);
    return std::unique_ptr<CgroupNotifier>(std::make_unique<FakeNotifier>(&live));
  };
  std::atomic<int> passes{0};
  o.summary = [&]() -> absl::StatusOr<stats::Summary> {
    ++passes;
    stats::Summary s = Node(3000 * kMi, 1000 * kMi);
    s.node.memory->usage_bytes = 1000 * kMi;
    return s;
  };
  Manager m(std::move(o), clock_);
  // The thread's first pass comes at once and arms the notifier; the next is an hour away.
  m.Start();
  std::function<void()> fire;
  for (int i = 0; i < 500 && !fire; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
    absl::MutexLock lock(&mu);
    fire = crossed;
  }
  ASSERT_TRUE(fire);
  ASSERT_EQ(passes.load(), 1);
  fire();
  for (int i = 0; i < 500 && passes.load() < 2; ++i) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_EQ(passes.load(), 2);
  m.Stop();
}

TEST(MemcgThresholdTest, IncompleteFiguresAreAnError) {
  auto t = ParseThresholds({{"memory.available", "10%"}}, {}, {}, {}, {});
  ASSERT_TRUE(t.ok());
  stats::MemoryStats mem;
  mem.available_bytes = 900;
  EXPECT_FALSE(MemcgThreshold((*t)[0], mem).ok());
  mem.working_set_bytes = 100;
  mem.usage_bytes = 150;
  // capacity 1000 - 10% + 50 inactive file.
  EXPECT_EQ(*MemcgThreshold((*t)[0], mem), 950);
  EXPECT_EQ(NotifierDescription((*t)[0]), "hard memory eviction threshold");
}

}  // namespace
}  // namespace kubelet::eviction
