#include "kubelet/podsource/pod_config.h"

#include <poll.h>

#include <atomic>
#include <thread>

#include "api/static_pod.h"
#include "api/testing/pod_builder.h"
#include "gtest/gtest.h"
#include "kubelet/podsource/podsource_test_util.h"
#include "kubelet/podsource/sources_ready.h"

namespace kubelet::podsource {
namespace {

using kubelet::testing::Eventually;
using testutil::LogCapture;

api::PodPtr P(api::Pod pod) { return std::make_shared<const api::Pod>(std::move(pod)); }

api::PodPtr MakePod(const std::string& name, const std::string& uid,
                    const std::string& image = "busybox") {
  return P(api::testing::PodBuilder(name).Uid(uid).Container("c", image));
}

std::vector<std::string> Names(const PodUpdate& u) {
  std::vector<std::string> out;
  for (const auto& p : u.pods) out.push_back(p->metadata.name);
  return out;
}

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

class PodConfigTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  PodConfig config_{clock_};
};

TEST_F(PodConfigTest, FirstEmptySetSignalsSourceWithEmptyAdd) {
  config_.AddSource(kFileSource);
  EXPECT_FALSE(Readable(config_.fd()));
  ASSERT_TRUE(config_.SetSource(kFileSource, {}));
  EXPECT_TRUE(Readable(config_.fd()));
  auto updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].op, PodOperation::kAdd);
  EXPECT_EQ(updates[0].source, kFileSource);
  EXPECT_TRUE(updates[0].pods.empty());
  EXPECT_FALSE(Readable(config_.fd()));
  // A second empty SET is no news.
  ASSERT_TRUE(config_.SetSource(kFileSource, {}));
  EXPECT_TRUE(config_.Drain().empty());
}

TEST_F(PodConfigTest, AddStampsSourceAndFirstSeen) {
  ASSERT_TRUE(config_.SetSource(kFileSource, {MakePod("a", "uid-a")}));
  auto updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].op, PodOperation::kAdd);
  ASSERT_EQ(updates[0].pods.size(), 1u);
  const auto& ann = updates[0].pods[0]->metadata.annotations;
  EXPECT_EQ(ann.at(api::kConfigSourceAnnotationKey), "file");
  EXPECT_EQ(ann.at(api::kConfigFirstSeenAnnotationKey), api::FormatRFC3339Nano(clock_.Now()));
}

TEST_F(PodConfigTest, UnchangedSnapshotAndNewSeenTimeProduceNothing) {
  api::Pod a = *MakePod("a", "uid-a");
  ASSERT_TRUE(config_.SetSource(kFileSource, {P(a)}));
  config_.Drain();
  ASSERT_TRUE(config_.SetSource(kFileSource, {P(a)}));
  EXPECT_TRUE(config_.Drain().empty());
  // A re-read manifest carries a fresh config.seen and config.source: local annotations.
  clock_.Advance(absl::Seconds(30));
  a.metadata.annotations[api::kConfigFirstSeenAnnotationKey] = "2030-01-01T00:00:00Z";
  a.metadata.annotations[api::kConfigSourceAnnotationKey] = "file";
  ASSERT_TRUE(config_.SetSource(kFileSource, {P(a)}));
  EXPECT_TRUE(config_.Drain().empty());
}

TEST_F(PodConfigTest, SpecChangeIsUpdateKeepingFirstSeen) {
  ASSERT_TRUE(config_.SetSource(kFileSource, {MakePod("a", "uid-a")}));
  const std::string seen =
      config_.Drain()[0].pods[0]->metadata.annotations.at(api::kConfigFirstSeenAnnotationKey);
  clock_.Advance(absl::Seconds(5));
  ASSERT_TRUE(config_.SetSource(kFileSource, {MakePod("a", "uid-a", "nginx")}));
  auto updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].op, PodOperation::kUpdate);
  ASSERT_EQ(updates[0].pods.size(), 1u);
  EXPECT_EQ(updates[0].pods[0]->spec.containers[0].image, "nginx");
  EXPECT_EQ(updates[0].pods[0]->metadata.annotations.at(api::kConfigFirstSeenAnnotationKey), seen);
  EXPECT_EQ(config_.MergedState()[0]->spec.containers[0].image, "nginx");
}

TEST_F(PodConfigTest, LabelAndAnnotationChangesAreUpdates) {
  api::Pod a = *MakePod("a", "uid-a");
  ASSERT_TRUE(config_.SetSource(kFileSource, {P(a)}));
  config_.Drain();
  a.metadata.annotations["example.com/x"] = "1";
  ASSERT_TRUE(config_.SetSource(kFileSource, {P(a)}));
  auto updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].op, PodOperation::kUpdate);
  EXPECT_EQ(updates[0].pods[0]->metadata.annotations.at("example.com/x"), "1");
  EXPECT_EQ(updates[0].pods[0]->metadata.annotations.at(api::kConfigSourceAnnotationKey), "file");
  EXPECT_EQ(updates[0].pods[0]->metadata.annotations.count(api::kConfigFirstSeenAnnotationKey), 1u);

  a.metadata.labels["app"] = "web";
  ASSERT_TRUE(config_.SetSource(kFileSource, {P(a)}));
  updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].op, PodOperation::kUpdate);
  EXPECT_EQ(updates[0].pods[0]->metadata.labels.at("app"), "web");

  // Removing the annotation is a change too.
  a.metadata.annotations.erase("example.com/x");
  ASSERT_TRUE(config_.SetSource(kFileSource, {P(a)}));
  updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].op, PodOperation::kUpdate);
  EXPECT_EQ(updates[0].pods[0]->metadata.annotations.count("example.com/x"), 0u);
}

TEST_F(PodConfigTest, StatusOnlyChangeIsReconcile) {
  api::Pod a = *MakePod("a", "uid-a");
  a.status.phase = api::kPodPending;
  ASSERT_TRUE(config_.SetSource(kApiserverSource, {P(a)}));
  config_.Drain();
  a.status.phase = api::kPodRunning;
  ASSERT_TRUE(config_.SetSource(kApiserverSource, {P(a)}));
  auto updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].op, PodOperation::kReconcile);
  EXPECT_EQ(updates[0].pods[0]->status.phase, api::kPodRunning);
}

// One object per pod version: the ADD's object (the source's pod, stamped once) is the one
// stored and, later, the one a REMOVE hands back; the source's own object is left as it was.
TEST_F(PodConfigTest, AddStoresAndEmitsOneStampedObjectLeavingTheSourcesAlone) {
  const api::PodPtr src = MakePod("a", "uid-a");
  ASSERT_TRUE(config_.SetSource(kFileSource, {src}));
  auto updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  ASSERT_EQ(updates[0].pods.size(), 1u);
  const api::PodPtr added = updates[0].pods[0];
  EXPECT_NE(added, src);
  EXPECT_EQ(added->metadata.annotations.at(api::kConfigSourceAnnotationKey), "file");
  EXPECT_EQ(src->metadata.annotations.count(api::kConfigSourceAnnotationKey), 0u);
  EXPECT_EQ(src->metadata.annotations.count(api::kConfigFirstSeenAnnotationKey), 0u);
  EXPECT_EQ(added->spec, src->spec);
  ASSERT_EQ(config_.MergedState().size(), 1u);
  EXPECT_EQ(config_.MergedState()[0], added);

  ASSERT_TRUE(config_.SetSource(kFileSource, {src}));
  EXPECT_TRUE(config_.Drain().empty());
  EXPECT_EQ(config_.MergedState()[0], added);
  ASSERT_TRUE(config_.SetSource(kFileSource, {}));
  updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].op, PodOperation::kRemove);
  ASSERT_EQ(updates[0].pods.size(), 1u);
  EXPECT_EQ(updates[0].pods[0], added);
}

// UPDATE and RECONCILE build the merged version once, as a new object: the stored metadata
// (first resourceVersion, config.seen) with the new spec or status; the older version is
// untouched (the kubelet's workers may still hold it).
TEST_F(PodConfigTest, UpdateAndReconcileBuildANewMergedObject) {
  api::Pod a = *MakePod("a", "uid-a");
  a.metadata.resource_version = "1";
  a.status.phase = api::kPodPending;
  ASSERT_TRUE(config_.SetSource(kApiserverSource, {P(a)}));
  const api::PodPtr added = config_.Drain()[0].pods[0];
  const std::string seen = added->metadata.annotations.at(api::kConfigFirstSeenAnnotationKey);
  clock_.Advance(absl::Seconds(3));

  a.metadata.resource_version = "2";
  a.spec.containers[0].image = "nginx";
  ASSERT_TRUE(config_.SetSource(kApiserverSource, {P(a)}));
  auto updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].op, PodOperation::kUpdate);
  const api::PodPtr updated = updates[0].pods[0];
  EXPECT_NE(updated, added);
  EXPECT_EQ(updated->spec.containers[0].image, "nginx");
  EXPECT_EQ(updated->metadata.resource_version, "1");
  EXPECT_EQ(updated->metadata.annotations.at(api::kConfigFirstSeenAnnotationKey), seen);
  EXPECT_EQ(updated->metadata.annotations.at(api::kConfigSourceAnnotationKey), "api");
  EXPECT_EQ(added->spec.containers[0].image, "busybox");
  EXPECT_EQ(config_.MergedState()[0], updated);

  a.metadata.resource_version = "3";
  a.status.phase = api::kPodRunning;
  ASSERT_TRUE(config_.SetSource(kApiserverSource, {P(a)}));
  updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].op, PodOperation::kReconcile);
  const api::PodPtr reconciled = updates[0].pods[0];
  EXPECT_NE(reconciled, updated);
  EXPECT_EQ(reconciled->status.phase, api::kPodRunning);
  EXPECT_EQ(reconciled->metadata.resource_version, "1");
  EXPECT_EQ(reconciled->spec.containers[0].image, "nginx");
  EXPECT_EQ(reconciled->metadata.annotations, updated->metadata.annotations);
  EXPECT_EQ(updated->status.phase, api::kPodPending);
  EXPECT_EQ(config_.MergedState()[0], reconciled);
}

// The object merged last, handed in again, is unchanged without comparing; another object is
// compared, also one merged before (a manifest reverted to an older content).
TEST_F(PodConfigTest, SameObjectAgainIsUnchangedAndAnOlderObjectIsCompared) {
  const api::PodPtr v1 = MakePod("a", "uid-a");
  const api::PodPtr v2 = MakePod("a", "uid-a", "nginx");
  ASSERT_TRUE(config_.SetSource(kFileSource, {v1}));
  ASSERT_EQ(config_.Drain().size(), 1u);
  ASSERT_TRUE(config_.SetSource(kFileSource, {v1}));
  EXPECT_TRUE(config_.Drain().empty());
  ASSERT_TRUE(config_.SetSource(kFileSource, {v2}));
  auto updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].op, PodOperation::kUpdate);
  EXPECT_EQ(updates[0].pods[0]->spec.containers[0].image, "nginx");
  ASSERT_TRUE(config_.SetSource(kFileSource, {v2}));
  EXPECT_TRUE(config_.Drain().empty());
  ASSERT_TRUE(config_.SetSource(kFileSource, {v1}));
  updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].op, PodOperation::kUpdate);
  EXPECT_EQ(updates[0].pods[0]->spec.containers[0].image, "busybox");
  // An equal copy of the stored version is no change either.
  ASSERT_TRUE(config_.SetSource(kFileSource, {MakePod("a", "uid-a")}));
  EXPECT_TRUE(config_.Drain().empty());
  // Null entries are ignored.
  ASSERT_TRUE(config_.SetSource(kFileSource, {nullptr, v1}));
  EXPECT_TRUE(config_.Drain().empty());
}

TEST_F(PodConfigTest, RemovedPodsComeBeforeAdds) {
  ASSERT_TRUE(config_.SetSource(kFileSource, {MakePod("a", "uid-a"), MakePod("b", "uid-b")}));
  config_.Drain();
  ASSERT_TRUE(config_.SetSource(kFileSource, {MakePod("b", "uid-b"), MakePod("c", "uid-c")}));
  auto updates = config_.Drain();
  ASSERT_EQ(updates.size(), 2u);
  EXPECT_EQ(updates[0].op, PodOperation::kRemove);
  EXPECT_EQ(Names(updates[0]), std::vector<std::string>{"a"});
  EXPECT_EQ(updates[1].op, PodOperation::kAdd);
  EXPECT_EQ(Names(updates[1]), std::vector<std::string>{"c"});
  EXPECT_EQ(testutil::MergedNames(config_), (std::vector<std::string>{"default/b", "default/c"}));
}

TEST_F(PodConfigTest, NewUidForSameNameIsRemoveAndAdd) {
  ASSERT_TRUE(config_.SetSource(kFileSource, {MakePod("a", "uid-1")}));
  config_.Drain();
  ASSERT_TRUE(config_.SetSource(kFileSource, {MakePod("a", "uid-2", "nginx")}));
  auto updates = config_.Drain();
  ASSERT_EQ(updates.size(), 2u);
  EXPECT_EQ(updates[0].op, PodOperation::kRemove);
  EXPECT_EQ(updates[0].pods[0]->metadata.uid, "uid-1");
  EXPECT_EQ(updates[1].op, PodOperation::kAdd);
  EXPECT_EQ(updates[1].pods[0]->metadata.uid, "uid-2");
}

TEST_F(PodConfigTest, DeletionTimestampIsDelete) {
  api::Pod a = *MakePod("a", "uid-a");
  ASSERT_TRUE(config_.SetSource(kApiserverSource, {P(a)}));
  config_.Drain();
  a.metadata.deletion_timestamp = api::Time::FromUnix(1700000100);
  a.metadata.deletion_grace_period_seconds = 30;
  ASSERT_TRUE(config_.SetSource(kApiserverSource, {P(a)}));
  auto updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].op, PodOperation::kDelete);
  EXPECT_TRUE(updates[0].pods[0]->metadata.deletion_timestamp.has_value());
}

TEST_F(PodConfigTest, DuplicateNamesWithinASourceAreDropped) {
  LogCapture logs;
  ASSERT_TRUE(config_.SetSource(kFileSource, {MakePod("a", "uid-1"), MakePod("a", "uid-2")}));
  auto updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  ASSERT_EQ(updates[0].pods.size(), 1u);
  EXPECT_EQ(updates[0].pods[0]->metadata.uid, "uid-1");
  EXPECT_EQ(logs.Count({"Pod failed validation due to duplicate pod name, ignoring", "index=1",
                        "pod=\"default/a\"", "source=\"file\""}),
            1)
      << logs.Dump();
  // The same UID twice (explicit metadata.uid in two manifests) is dropped as well.
  ASSERT_TRUE(config_.SetSource(kFileSource, {MakePod("a", "uid-1"), MakePod("b", "uid-1")}));
  EXPECT_TRUE(config_.Drain().empty());
  EXPECT_EQ(logs.Count({"duplicate pod UID", "pod=\"default/b\""}), 1) << logs.Dump();
}

TEST_F(PodConfigTest, SameNameInDifferentSourcesIsKept) {
  ASSERT_TRUE(config_.SetSource(kFileSource, {MakePod("a", "uid-1")}));
  ASSERT_TRUE(config_.SetSource(kHTTPSource, {MakePod("a", "uid-2")}));
  auto updates = config_.Drain();
  ASSERT_EQ(updates.size(), 2u);
  EXPECT_EQ(updates[0].source, kFileSource);
  EXPECT_EQ(updates[1].source, kHTTPSource);
  EXPECT_EQ(config_.MergedState().size(), 2u);
  // A snapshot of one source never removes another source's pods.
  ASSERT_TRUE(config_.SetSource(kHTTPSource, {}));
  updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].op, PodOperation::kRemove);
  EXPECT_EQ(updates[0].source, kHTTPSource);
  EXPECT_EQ(config_.MergedState().size(), 1u);
}

TEST_F(PodConfigTest, IncrementalOperations) {
  ASSERT_TRUE(config_.Merge(PodUpdate{PodOperation::kAdd, "api", {MakePod("a", "uid-a")}}));
  ASSERT_TRUE(config_.Merge(PodUpdate{PodOperation::kAdd, "api", {MakePod("b", "uid-b")}}));
  auto updates = config_.Drain();
  ASSERT_EQ(updates.size(), 2u);
  EXPECT_EQ(updates[0].op, PodOperation::kAdd);
  EXPECT_EQ(updates[1].op, PodOperation::kAdd);
  // ADD is not a SET: "a" is not removed, and the source is not "seen".
  config_.AddSource("api");
  EXPECT_FALSE(config_.SeenAllSources({"api"}));
  ASSERT_TRUE(
      config_.Merge(PodUpdate{PodOperation::kUpdate, "api", {MakePod("a", "uid-a", "nginx")}}));
  updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].op, PodOperation::kUpdate);
  ASSERT_TRUE(config_.Merge(PodUpdate{PodOperation::kRemove, "api", {MakePod("b", "uid-b")}}));
  updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].op, PodOperation::kRemove);
  EXPECT_EQ(Names(updates[0]), std::vector<std::string>{"b"});
  // Removing an unknown pod is a no-op.
  ASSERT_TRUE(config_.Merge(PodUpdate{PodOperation::kRemove, "api", {MakePod("z", "uid-z")}}));
  EXPECT_TRUE(config_.Drain().empty());
  EXPECT_EQ(testutil::MergedNames(config_), std::vector<std::string>{"default/a"});
}

TEST_F(PodConfigTest, SeenAllSources) {
  config_.AddSource(kFileSource);
  config_.AddSource(kHTTPSource);
  EXPECT_EQ(config_.Sources(), (std::vector<std::string>{"file", "http"}));
  EXPECT_FALSE(config_.SeenAllSources({}));
  ASSERT_TRUE(config_.SetSource(kFileSource, {}));
  EXPECT_FALSE(config_.SeenAllSources({"file"}));
  EXPECT_FALSE(config_.SeenAllSources({"file", "http"}));  // http has not sent a SET
  ASSERT_TRUE(config_.SetSource(kHTTPSource, {MakePod("a", "uid-a")}));
  EXPECT_FALSE(config_.SeenAllSources({"file"}));  // the consumer has not seen http yet
  EXPECT_TRUE(config_.SeenAllSources({"file", "http"}));

  SourcesReady ready(
      [this](const std::set<std::string>& seen) { return config_.SeenAllSources(seen); });
  EXPECT_FALSE(ready.AllReady());
  for (const auto& u : config_.Drain()) ready.AddSource(u.source);
  EXPECT_TRUE(ready.AllReady());
}

TEST_F(PodConfigTest, SyncSendsMergedStateAsSetFromAllSources) {
  ASSERT_TRUE(config_.SetSource(kFileSource, {MakePod("a", "uid-a")}));
  ASSERT_TRUE(config_.SetSource(kHTTPSource, {MakePod("b", "uid-b")}));
  config_.Drain();
  ASSERT_TRUE(config_.Sync());
  auto u = config_.Next(absl::Seconds(1));
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->op, PodOperation::kSet);
  EXPECT_EQ(u->source, kAllSource);
  EXPECT_EQ(u->pods.size(), 2u);
  EXPECT_FALSE(config_.Next(absl::Milliseconds(1)).has_value());
}

TEST(PodConfigQueueTest, ProducersBlockWhileFullAndResumeOnDrain) {
  FakeClock clock;
  PodConfig config(clock, PodConfigOptions{2});
  std::atomic<int> done{0};
  std::thread producer([&] {
    for (int i = 0; i < 4; ++i) {
      // Every snapshot replaces the pod: REMOVE + ADD, except the first (ADD only).
      ASSERT_TRUE(config.SetSource(kFileSource,
                                   {MakePod("p" + std::to_string(i), "u" + std::to_string(i))}));
      done.fetch_add(1);
    }
  });
  // The queue never holds more than its capacity.
  std::vector<PodUpdate> all;
  ASSERT_TRUE(Eventually([&] {
    EXPECT_LE(config.Pending(), 2u);
    auto got = config.Drain();
    for (auto& u : got) all.push_back(std::move(u));
    return done.load() == 4 && config.Pending() == 0;
  }));
  producer.join();
  for (auto& u : config.Drain()) all.push_back(std::move(u));
  ASSERT_EQ(all.size(), 7u);
  EXPECT_EQ(all[0].op, PodOperation::kAdd);
  for (size_t i = 1; i < all.size(); i += 2) {
    EXPECT_EQ(all[i].op, PodOperation::kRemove);
    EXPECT_EQ(all[i + 1].op, PodOperation::kAdd);
  }
}

TEST(PodConfigQueueTest, ShutdownAndCancelReleaseBlockedProducers) {
  FakeClock clock;
  PodConfig config(clock, PodConfigOptions{1});
  ASSERT_TRUE(config.SetSource(kFileSource, {MakePod("a", "ua")}));
  std::atomic<bool> cancel{false};
  std::atomic<bool> returned{false};
  bool result = true;
  std::thread t([&] {
    result = config.SetSource(kFileSource, {MakePod("b", "ub")}, &cancel);
    returned = true;
  });
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_FALSE(returned.load());
  cancel = true;
  t.join();
  EXPECT_FALSE(result);

  // A producer waiting for space holds up the next one, which can still be cancelled.
  std::thread t2([&] { result = config.SetSource(kHTTPSource, {MakePod("c", "uc")}); });
  absl::SleepFor(absl::Milliseconds(20));
  std::atomic<bool> cancel3{false};
  bool result3 = true;
  std::thread t3([&] { result3 = config.SetSource(kApiserverSource, {}, &cancel3); });
  absl::SleepFor(absl::Milliseconds(20));
  cancel3 = true;
  t3.join();
  EXPECT_FALSE(result3);
  config.Shutdown();
  t2.join();
  EXPECT_FALSE(result);
  EXPECT_FALSE(config.SetSource(kHTTPSource, {}));
  // Pending updates stay readable after shutdown.
  EXPECT_EQ(config.Drain().size(), 1u);
}

}  // namespace
}  // namespace kubelet::podsource
