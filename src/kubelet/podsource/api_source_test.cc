#include "kubelet/podsource/api_source.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/static_pod.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "kubelet/podsource/podsource_test_util.h"

namespace kubelet::podsource {
namespace {

using testutil::LogCapture;

nlohmann::json PodJson(const std::string& name, const std::string& uid,
                       const std::string& image = "busybox:1.36") {
  return nlohmann::json{
      {"kind", "Pod"},
      {"apiVersion", "v1"},
      {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", uid}}},
      {"spec", {{"nodeName", "node-1"}, {"containers", {{{"name", "main"}, {"image", image}}}}}}};
}

std::vector<std::string> Names(const PodUpdate& u) {
  std::vector<std::string> out;
  for (const auto& p : u.pods) out.push_back(p->metadata.name);
  return out;
}

class ApiSourceTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  PodConfig config_{clock_};
  ApiSource source_{config_};
};

TEST_F(ApiSourceTest, RegistersSourceAndFirstListIsAdd) {
  EXPECT_EQ(config_.Sources(), std::vector<std::string>{"api"});
  EXPECT_FALSE(config_.SeenAllSources({"api"}));
  source_.Replace({PodJson("a", "uid-a"), PodJson("b", "uid-b")});
  auto u = config_.Next(absl::Seconds(1));
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->op, PodOperation::kAdd);
  EXPECT_EQ(u->source, "api");
  EXPECT_EQ(Names(*u), (std::vector<std::string>{"a", "b"}));
  // Decoded and defaulted, stamped with the source.
  EXPECT_EQ(u->pods[0]->spec.restart_policy, "Always");
  EXPECT_EQ(u->pods[0]->metadata.annotations.at(api::kConfigSourceAnnotationKey), "api");
  EXPECT_FALSE(api::IsStaticPod(*u->pods[0]));
  EXPECT_TRUE(config_.SeenAllSources({"api"}));
}

TEST_F(ApiSourceTest, EmptyFirstListMakesSourceReady) {
  source_.Replace({});
  auto u = config_.Next(absl::Seconds(1));
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->op, PodOperation::kAdd);
  EXPECT_TRUE(u->pods.empty());
  EXPECT_TRUE(config_.SeenAllSources({"api"}));
}

TEST_F(ApiSourceTest, WatchEventsBecomeUpdates) {
  source_.Replace({PodJson("a", "uid-a")});
  ASSERT_TRUE(config_.Next(absl::Seconds(1)).has_value());

  source_.Add(PodJson("b", "uid-b"));
  auto add = config_.Next(absl::Seconds(1));
  ASSERT_TRUE(add.has_value());
  EXPECT_EQ(add->op, PodOperation::kAdd);
  EXPECT_EQ(Names(*add), std::vector<std::string>{"b"});

  source_.Update(PodJson("b", "uid-b", "busybox:1.37"));
  auto upd = config_.Next(absl::Seconds(1));
  ASSERT_TRUE(upd.has_value());
  EXPECT_EQ(upd->op, PodOperation::kUpdate);
  EXPECT_EQ(upd->pods[0]->spec.containers[0].image, "busybox:1.37");

  nlohmann::json deleting = PodJson("b", "uid-b", "busybox:1.37");
  deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  deleting["metadata"]["deletionGracePeriodSeconds"] = 7;
  source_.Update(deleting);
  auto del = config_.Next(absl::Seconds(1));
  ASSERT_TRUE(del.has_value());
  EXPECT_EQ(del->op, PodOperation::kDelete);
  EXPECT_EQ(del->pods[0]->metadata.deletion_grace_period_seconds, 7);

  source_.Delete(deleting);
  auto rm = config_.Next(absl::Seconds(1));
  ASSERT_TRUE(rm.has_value());
  EXPECT_EQ(rm->op, PodOperation::kRemove);
  EXPECT_EQ(Names(*rm), std::vector<std::string>{"b"});
  EXPECT_EQ(config_.Pending(), 0u);
}

TEST_F(ApiSourceTest, UndecodableObjectIsSkippedAndLoggedOnce) {
  LogCapture logs;
  nlohmann::json bad = PodJson("bad", "uid-bad");
  bad["spec"]["containers"][0]["ports"] = {{{"containerPort", "abc"}}};
  source_.Replace({PodJson("a", "uid-a"), bad});
  auto u = config_.Next(absl::Seconds(1));
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(Names(*u), std::vector<std::string>{"a"});
  source_.Add(PodJson("c", "uid-c"));
  ASSERT_TRUE(config_.Next(absl::Seconds(1)).has_value());
  EXPECT_EQ(logs.Count({"Failed to decode pod from the API server", "default/bad"}), 1)
      << logs.Dump();
  // The object fixed: it is delivered.
  source_.Update(PodJson("bad", "uid-bad"));
  auto fixed = config_.Next(absl::Seconds(1));
  ASSERT_TRUE(fixed.has_value());
  EXPECT_EQ(Names(*fixed), std::vector<std::string>{"bad"});
}

TEST_F(ApiSourceTest, RelistDropsMissingPods) {
  source_.Replace({PodJson("a", "uid-a"), PodJson("b", "uid-b")});
  ASSERT_TRUE(config_.Next(absl::Seconds(1)).has_value());
  source_.Replace({PodJson("b", "uid-b")});
  auto u = config_.Next(absl::Seconds(1));
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->op, PodOperation::kRemove);
  EXPECT_EQ(Names(*u), std::vector<std::string>{"a"});
  // The same list again changes nothing.
  source_.Replace({PodJson("b", "uid-b")});
  EXPECT_EQ(config_.Pending(), 0u);
}

TEST_F(ApiSourceTest, ListItemsWithoutKindAreV1Pods) {
  // A LIST answer's items carry no kind and apiVersion (the list has them).
  nlohmann::json a = PodJson("a", "uid-a");
  a.erase("kind");
  a.erase("apiVersion");
  source_.Replace({a});
  auto u = config_.Next(absl::Seconds(1));
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(Names(*u), std::vector<std::string>{"a"});
}

TEST_F(ApiSourceTest, KnownPodKeepsItsLastGoodVersionWhenANewOneCannotBeRead) {
  LogCapture logs;
  source_.Replace({PodJson("a", "uid-a"), PodJson("b", "uid-b")});
  ASSERT_TRUE(config_.Next(absl::Seconds(1)).has_value());
  nlohmann::json bad = PodJson("a", "uid-a", "busybox:1.37");
  bad["spec"]["containers"][0]["ports"] = {{{"containerPort", "abc"}}};
  // Neither a relist nor a watch event with an unreadable version stops the pod.
  source_.Replace({bad, PodJson("b", "uid-b")});
  source_.Update(bad);
  EXPECT_EQ(config_.Pending(), 0u);
  EXPECT_EQ(logs.Count({"Failed to decode pod from the API server", "default/a"}), 1)
      << logs.Dump();
  // A readable version is taken again.
  source_.Update(PodJson("a", "uid-a", "busybox:1.37"));
  auto u = config_.Next(absl::Seconds(1));
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->op, PodOperation::kUpdate);
  EXPECT_EQ(u->pods[0]->spec.containers[0].image, "busybox:1.37");
}

TEST_F(ApiSourceTest, StopEndsABlockedDelivery) {
  FakeClock clock;
  PodConfig small(clock, PodConfigOptions{.queue_capacity = 1});
  ApiSource source(small);
  source.Replace({PodJson("a", "uid-a")});
  std::thread t([&] { source.Add(PodJson("b", "uid-b")); });
  absl::SleepFor(absl::Milliseconds(50));
  source.Stop();
  t.join();
  EXPECT_EQ(source.deliveries(), 1u);
}

}  // namespace
}  // namespace kubelet::podsource
