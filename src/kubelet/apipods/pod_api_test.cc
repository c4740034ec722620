#include "kubelet/apipods/pod_api.h"

#include <memory>

#include "apiclient/testing/fake_rest_client.h"
#include "common/clock.h"
#include "gtest/gtest.h"

namespace kubelet::apipods {
namespace {

using apiclient::testing::FakeRestClient;

nlohmann::json PodJson(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", {{"nodeName", "node-1"}, {"containers", {{{"name", "c"}, {"image", "i"}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

class PodApiTest : public ::testing::Test {
 protected:
  std::shared_ptr<FakeRestClient> fake_ = std::make_shared<FakeRestClient>();
  PodApi api_{fake_};
};

TEST_F(PodApiTest, GetReturnsThePod) {
  nlohmann::json stored = fake_->Upsert("/api/v1/pods", PodJson("a"));
  auto got = api_.Get("default", "a");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["metadata"]["uid"], stored["metadata"]["uid"]);
  EXPECT_TRUE(absl::IsNotFound(api_.Get("default", "missing").status()));
}

TEST_F(PodApiTest, PatchStatusSendsAStrategicMergePatchToTheSubresource) {
  fake_->Upsert("/api/v1/pods", PodJson("a"));
  std::string patch = R"({"metadata":{"uid":"x"},"status":{"phase":"Running"}})";
  ASSERT_TRUE(api_.PatchStatus("default", "a", patch).ok());
  auto reqs = fake_->requests();
  ASSERT_FALSE(reqs.empty());
  EXPECT_EQ(reqs.back().method, "PATCH");
  EXPECT_EQ(reqs.back().path, "/api/v1/namespaces/default/pods/a/status");
  EXPECT_EQ(reqs.back().body, patch);
  EXPECT_EQ((*fake_->Get("/api/v1/pods", "default", "a"))["status"]["phase"], "Running");
}

TEST_F(PodApiTest, ErrorsMapToStatusCodes) {
  EXPECT_TRUE(absl::IsNotFound(api_.PatchStatus("default", "missing", "{}")));
  fake_->Upsert("/api/v1/pods", PodJson("a"));
  fake_->InjectFault({.method = "PATCH", .code = 409, .reason = "Conflict"});
  EXPECT_TRUE(absl::IsAborted(api_.PatchStatus("default", "a", "{}")));
  fake_->InjectFault({.method = "GET", .code = 0});
  EXPECT_TRUE(absl::IsUnavailable(api_.Get("default", "a").status()));
}

TEST_F(PodApiTest, DeleteWithGraceZeroAndUidPrecondition) {
  fake_->Upsert("/api/v1/pods", PodJson("a"));
  ASSERT_TRUE(api_.Delete("default", "a", "uid-1").ok());
  auto reqs = fake_->requests();
  EXPECT_EQ(reqs.back().method, "DELETE");
  EXPECT_EQ(reqs.back().path, "/api/v1/namespaces/default/pods/a");
  nlohmann::json body = nlohmann::json::parse(reqs.back().body);
  EXPECT_EQ(body["gracePeriodSeconds"], 0);
  EXPECT_EQ(body["preconditions"]["uid"], "uid-1");
  EXPECT_FALSE(fake_->Get("/api/v1/pods", "default", "a").has_value());
  EXPECT_TRUE(absl::IsNotFound(api_.Delete("default", "a", "uid-1")));
}

TEST_F(PodApiTest, DeleteWithoutUidHasNoPreconditions) {
  fake_->Upsert("/api/v1/pods", PodJson("a"));
  ASSERT_TRUE(api_.Delete("default", "a", "").ok());
  nlohmann::json body = nlohmann::json::parse(fake_->requests().back().body);
  EXPECT_EQ(body["gracePeriodSeconds"], 0);
  EXPECT_FALSE(body.contains("preconditions"));
}

TEST_F(PodApiTest, CreatePostsToTheNamespacesPods) {
  nlohmann::json pod = PodJson("m");
  pod["metadata"]["annotations"] = {{"kubernetes.io/config.mirror", "h"}};
  auto created = api_.Create("default", pod.dump());
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_FALSE((*created)["metadata"].value("uid", "").empty());
  EXPECT_EQ(fake_->requests().back().method, "POST");
  EXPECT_EQ(fake_->requests().back().path, "/api/v1/namespaces/default/pods");
  ASSERT_TRUE(fake_->Get("/api/v1/pods", "default", "m").has_value());
  EXPECT_TRUE(absl::IsAlreadyExists(api_.Create("default", pod.dump()).status()));
}

TEST(NodeUidLookup, ReadsCachesAndRetriesTheNodeUid) {
  auto fake = std::make_shared<FakeRestClient>();
  FakeClock clock;
  NodeUidLookup lookup(fake, "node-1", clock,
                       {.refresh = absl::Minutes(1), .retry = absl::Seconds(5)});
  auto gets = [&] {
    int n = 0;
    for (const auto& r : fake->requests()) n += r.method == "GET";
    return n;
  };
  // Not registered yet: unknown, and not asked again before the retry period.
  EXPECT_FALSE(lookup.Get().has_value());
  nlohmann::json node =
      fake->Upsert("/api/v1/nodes",
                   {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "node-1"}}}});
  EXPECT_FALSE(lookup.Get().has_value());
  EXPECT_EQ(gets(), 1);
  clock.Advance(absl::Seconds(6));
  ASSERT_TRUE(lookup.Get().has_value());
  EXPECT_EQ(*lookup.Get(), node["metadata"]["uid"]);
  EXPECT_EQ(gets(), 2);
  // Known: reused; a transport error at refresh keeps it.
  clock.Advance(absl::Minutes(2));
  fake->InjectFault({.method = "GET", .code = 0});
  EXPECT_EQ(*lookup.Get(), node["metadata"]["uid"]);
  // A Node being deleted gets no mirror pods.
  node["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  fake->Upsert("/api/v1/nodes", node);
  clock.Advance(absl::Minutes(2));
  EXPECT_FALSE(lookup.Get().has_value());
}

}  // namespace
}  // namespace kubelet::apipods
