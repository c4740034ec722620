// The configMap/secret sources of the three change detection strategies on the fake API client:
// which objects a pod registers, the watch per object and its end, immutable objects, the
// Cache strategy's TTL and staleness, the Get strategy's GET per call.
#include "kubelet/clustercontent/api_content.h"

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "apiclient/testing/fake_rest_client.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace kubelet::clustercontent {
namespace {

using json = nlohmann::json;

constexpr char kConfigMaps[] = "/api/v1/configmaps";
constexpr char kSecrets[] = "/api/v1/secrets";

json ConfigMap(const std::string& name, const std::string& value, bool immutable = false) {
  json j = {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", name}, {"namespace", "ns"}}},
            {"data", {{"k", value}}}};
  if (immutable) j["immutable"] = true;
  return j;
}

json Secret(const std::string& name, const std::string& b64) {
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata", {{"name", name}, {"namespace", "ns"}}},
          {"data", {{"k", b64}}}};
}

// A pod referencing configMap "vol-cm" in a volume, "env-cm" and secret "env-sec" from env,
// "from-cm" from envFrom (init container) and the pull secret "pull".
api::Pod Pod(const std::string& uid) {
  api::Pod pod;
  pod.metadata.name = "p-" + uid;
  pod.metadata.namespace_ = "ns";
  pod.metadata.uid = uid;
  api::Volume v;
  v.name = "cfg";
  v.config_map.emplace();
  v.config_map->name = "vol-cm";
  pod.spec.volumes.push_back(v);
  api::Container c;
  c.name = "c";
  api::EnvVar e1;
  e1.name = "A";
  e1.value_from.emplace();
  e1.value_from->config_map_key_ref.emplace();
  e1.value_from->config_map_key_ref->name = "env-cm";
  e1.value_from->config_map_key_ref->key = "k";
  c.env.push_back(e1);
  api::EnvVar e2;
  e2.name = "B";
  e2.value_from.emplace();
  e2.value_from->secret_key_ref.emplace();
  e2.value_from->secret_key_ref->name = "env-sec";
  e2.value_from->secret_key_ref->key = "k";
  c.env.push_back(e2);
  pod.spec.containers.push_back(c);
  api::Container init;
  init.name = "init";
  api::EnvFromSource from;
  from.config_map_ref.emplace();
  from.config_map_ref->name = "from-cm";
  init.env_from.push_back(from);
  pod.spec.init_containers.push_back(init);
  api::LocalObjectReference pull;
  pull.name = "pull";
  pod.spec.image_pull_secrets.push_back(pull);
  api::LocalObjectReference empty;
  pod.spec.image_pull_secrets.push_back(empty);
  return pod;
}

int CountRequests(const apiclient::testing::FakeRestClient& fake, const std::string& method,
                  const std::string& path_part) {
  int n = 0;
  for (const auto& r : fake.requests()) {
    n += r.method == method && absl::StrContains(r.path, path_part) ? 1 : 0;
  }
  return n;
}

TEST(ReferencedObjects, VolumesEnvEnvFromAndPullSecrets) {
  std::set<ObjectKey> got = ReferencedObjects(Pod("u1"));
  std::set<ObjectKey> want = {
      {"configmaps", "ns", "env-cm"}, {"configmaps", "ns", "from-cm"},
      {"configmaps", "ns", "vol-cm"}, {"secrets", "ns", "env-sec"},
      {"secrets", "ns", "pull"},
  };
  EXPECT_EQ(got, want);
}

TEST(ObjectTTL, FromNodeAnnotation) {
  EXPECT_EQ(ObjectTTLFromAnnotations({{"node.alpha.kubernetes.io/ttl", "15"}}), absl::Seconds(15));
  EXPECT_EQ(ObjectTTLFromAnnotations({{"node.alpha.kubernetes.io/ttl", "0"}}), absl::Seconds(0));
  EXPECT_EQ(ObjectTTLFromAnnotations({{"node.alpha.kubernetes.io/ttl", "x"}}), std::nullopt);
  EXPECT_EQ(ObjectTTLFromAnnotations({}), std::nullopt);
}

TEST(MakeObjectSource, Strategies) {
  auto fake = std::make_shared<apiclient::testing::FakeRestClient>();
  FakeClock clock;
  for (const char* s : {"Watch", "Cache", "Get"}) {
    EXPECT_TRUE(MakeObjectSource(s, fake, clock, {}).ok()) << s;
  }
  absl::StatusOr<std::shared_ptr<ClusterObjectSource>> bad =
      MakeObjectSource("Poll", fake, clock, {});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

class WatchingSourceTest : public ::testing::Test {
 protected:
  WatchingSourceTest() {
    ObjectSourceOptions o;
    o.sync_wait = absl::Seconds(10);
    o.reflector.backoff_initial = absl::Milliseconds(10);
    source_ = std::make_unique<WatchingObjectSource>(fake_, clock_, o);
  }
  ~WatchingSourceTest() override { source_->Stop(); }

  std::shared_ptr<apiclient::testing::FakeRestClient> fake_ =
      std::make_shared<apiclient::testing::FakeRestClient>();
  RealClock clock_;
  std::unique_ptr<WatchingObjectSource> source_;
};

TEST_F(WatchingSourceTest, EnvAndPullSecretObjectsAreWatchedWhileReferenced) {
  fake_->Upsert(kConfigMaps, ConfigMap("env-cm", "one"));
  fake_->Upsert(kSecrets, Secret("pull", "eA=="));
  source_->RegisterPod(Pod("u1"));
  EXPECT_EQ(source_->watched(), 5u);
  absl::StatusOr<api::ConfigMap> cm = source_->GetConfigMap("ns", "env-cm");
  ASSERT_TRUE(cm.ok()) << cm.status();
  EXPECT_EQ(cm->data.at("k"), "one");
  absl::StatusOr<api::Secret> s = source_->GetSecret("ns", "pull");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->data.at("k"), "x");
  absl::StatusOr<api::ConfigMap> missing = source_->GetConfigMap("ns", "from-cm");
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  EXPECT_EQ(missing.status().message(), "configmap \"from-cm\" not found");

  // An update arrives through the watch.
  fake_->Upsert(kConfigMaps, ConfigMap("env-cm", "two"));
  bool updated = false;
  for (int i = 0; i < 500 && !updated; ++i) {
    cm = source_->GetConfigMap("ns", "env-cm");
    updated = cm.ok() && cm->data.at("k") == "two";
    if (!updated) absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_TRUE(updated);

  // A second pod shares the watches; they end with the last pod.
  source_->RegisterPod(Pod("u2"));
  EXPECT_EQ(source_->watched(), 5u);
  source_->UnregisterPod("u1");
  EXPECT_EQ(source_->watched(), 5u);
  source_->UnregisterPod("u2");
  EXPECT_EQ(source_->watched(), 0u);
  absl::StatusOr<api::ConfigMap> gone = source_->GetConfigMap("ns", "env-cm");
  EXPECT_EQ(gone.status().message(), "object \"ns\"/\"env-cm\" not registered");
}

TEST_F(WatchingSourceTest, ImmutableObjectStopsItsWatch) {
  fake_->Upsert(kConfigMaps, ConfigMap("vol-cm", "fixed", /*immutable=*/true));
  source_->RegisterPod(Pod("u1"));
  ASSERT_TRUE(fake_->WaitForWatches(5, absl::Seconds(10)));
  absl::StatusOr<api::ConfigMap> cm = source_->GetConfigMap("ns", "vol-cm");
  ASSERT_TRUE(cm.ok()) << cm.status();
  EXPECT_EQ(cm->data.at("k"), "fixed");
  EXPECT_EQ(source_->watched(), 4u);
  EXPECT_EQ(source_->referenced(), 5u);
  // Served from what was read, with no watch open for it.
  bool closed = false;
  for (int i = 0; i < 500 && !closed; ++i) {
    closed = fake_->open_watches() == 4;
    if (!closed) absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_TRUE(closed) << fake_->open_watches();
  cm = source_->GetConfigMap("ns", "vol-cm");
  ASSERT_TRUE(cm.ok()) << cm.status();
  EXPECT_EQ(cm->data.at("k"), "fixed");
}

TEST(WatchingObjectSourceChanges, ReportedToTheReferencingPods) {
  auto fake = std::make_shared<apiclient::testing::FakeRestClient>();
  RealClock clock;
  absl::Mutex mu;
  std::vector<std::string> synced;
  ObjectSourceOptions o;
  o.sync_wait = absl::Seconds(10);
  o.on_object_changed = [&](const std::string& uid) {
    absl::MutexLock lock(&mu);
    synced.push_back(uid);
  };
  WatchingObjectSource source(fake, clock, o);
  fake->Upsert(kConfigMaps, ConfigMap("vol-cm", "one"));
  source.RegisterPod(Pod("u1"));
  api::Pod other;
  other.metadata.uid = "u2";
  other.metadata.namespace_ = "ns";
  source.RegisterPod(other);  // references nothing
  ASSERT_TRUE(source.GetConfigMap("ns", "vol-cm").ok());
  ASSERT_TRUE(fake->WaitForWatches(5, absl::Seconds(10)));
  // The first list is no change; bookmarks are none either.
  fake->SendBookmarks();
  absl::SleepFor(absl::Milliseconds(200));
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(synced.empty());
  }
  fake->Upsert(kConfigMaps, ConfigMap("vol-cm", "two"));
  auto got_u1 = [&] {
    absl::MutexLock lock(&mu);
    return !synced.empty();
  };
  for (int i = 0; i < 500 && !got_u1(); ++i) absl::SleepFor(absl::Milliseconds(10));
  {
    absl::MutexLock lock(&mu);
    EXPECT_EQ(synced, std::vector<std::string>{"u1"});
  }
  // A created object counts as a change too.
  fake->Upsert(kSecrets, Secret("env-sec", "eA=="));
  auto two = [&] {
    absl::MutexLock lock(&mu);
    return synced.size() >= 2;
  };
  for (int i = 0; i < 500 && !two(); ++i) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_TRUE(two());
  source.Stop();
}

class CachingSourceTest : public ::testing::Test {
 protected:
  CachingSourceTest() {
    ObjectSourceOptions o;
    o.ttl = [this]() { return ttl_; };
    source_ = std::make_unique<CachingObjectSource>(fake_, clock_, o);
  }

  std::shared_ptr<apiclient::testing::FakeRestClient> fake_ =
      std::make_shared<apiclient::testing::FakeRestClient>();
  FakeClock clock_;
  std::optional<absl::Duration> ttl_;
  std::unique_ptr<CachingObjectSource> source_;
};

TEST_F(CachingSourceTest, ServesWithinTheTtlAndRefreshesAfter) {
  fake_->Upsert(kConfigMaps, ConfigMap("env-cm", "one"));
  api::Pod pod = Pod("u1");
  source_->RegisterPod(pod);
  ASSERT_EQ(source_->GetConfigMap("ns", "env-cm")->data.at("k"), "one");
  fake_->Upsert(kConfigMaps, ConfigMap("env-cm", "two"));
  // Default TTL (one minute) without the Node's annotation.
  clock_.Advance(absl::Seconds(30));
  EXPECT_EQ(source_->GetConfigMap("ns", "env-cm")->data.at("k"), "one");
  EXPECT_EQ(CountRequests(*fake_, "GET", "/configmaps/env-cm"), 1);
  // Registering the same pod again (every sync does) keeps the cache.
  source_->RegisterPod(pod);
  EXPECT_EQ(source_->GetConfigMap("ns", "env-cm")->data.at("k"), "one");
  clock_.Advance(absl::Seconds(31));
  EXPECT_EQ(source_->GetConfigMap("ns", "env-cm")->data.at("k"), "two");
  // The refresh of an object read before asks the API server's cache.
  const auto reqs = fake_->requests();
  EXPECT_TRUE(absl::StrContains(reqs.back().path, "resourceVersion=0")) << reqs.back().path;

  // The Node's TTL wins; 0 refetches every time.
  ttl_ = absl::ZeroDuration();
  fake_->Upsert(kConfigMaps, ConfigMap("env-cm", "three"));
  EXPECT_EQ(source_->GetConfigMap("ns", "env-cm")->data.at("k"), "three");
}

TEST_F(CachingSourceTest, ChangedPodMakesItsObjectsStale) {
  fake_->Upsert(kConfigMaps, ConfigMap("env-cm", "one"));
  api::Pod pod = Pod("u1");
  pod.metadata.resource_version = "5";
  source_->RegisterPod(pod);
  ASSERT_EQ(source_->GetConfigMap("ns", "env-cm")->data.at("k"), "one");
  fake_->Upsert(kConfigMaps, ConfigMap("env-cm", "two"));
  pod.metadata.resource_version = "6";
  source_->RegisterPod(pod);
  EXPECT_EQ(source_->GetConfigMap("ns", "env-cm")->data.at("k"), "two");
}

TEST_F(CachingSourceTest, NotFoundAndFailures) {
  source_->RegisterPod(Pod("u1"));
  absl::StatusOr<api::ConfigMap> missing = source_->GetConfigMap("ns", "env-cm");
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  // Created later: found once the cached NotFound expires.
  fake_->Upsert(kConfigMaps, ConfigMap("env-cm", "one"));
  clock_.Advance(absl::Minutes(2));
  ASSERT_TRUE(source_->GetConfigMap("ns", "env-cm").ok());
  // A failed refresh keeps the last good object.
  clock_.Advance(absl::Minutes(2));
  fake_->InjectFault({.method = "GET", .path_contains = "/configmaps/env-cm", .code = 500});
  absl::StatusOr<api::ConfigMap> kept = source_->GetConfigMap("ns", "env-cm");
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->data.at("k"), "one");
  // A first read that fails hands the failure on.
  fake_->InjectFault({.method = "GET", .path_contains = "/secrets/env-sec", .code = 500});
  EXPECT_FALSE(source_->GetSecret("ns", "env-sec").ok());
  // Unregistered objects are refused.
  source_->UnregisterPod("u1");
  EXPECT_EQ(source_->GetConfigMap("ns", "env-cm").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(CachingSourceTest, ImmutableNeverExpires) {
  fake_->Upsert(kConfigMaps, ConfigMap("env-cm", "fixed", /*immutable=*/true));
  source_->RegisterPod(Pod("u1"));
  ASSERT_TRUE(source_->GetConfigMap("ns", "env-cm").ok());
  clock_.Advance(absl::Hours(5));
  ASSERT_TRUE(source_->GetConfigMap("ns", "env-cm").ok());
  EXPECT_EQ(CountRequests(*fake_, "GET", "/configmaps/env-cm"), 1);
}

TEST(SimpleObjectSource, GetsEveryTime) {
  auto fake = std::make_shared<apiclient::testing::FakeRestClient>();
  SimpleObjectSource source(fake);
  fake->Upsert(kSecrets, Secret("s", "eA=="));
  ASSERT_EQ(source.GetSecret("ns", "s")->data.at("k"), "x");
  fake->Upsert(kSecrets, Secret("s", "eQ=="));
  ASSERT_EQ(source.GetSecret("ns", "s")->data.at("k"), "y");
  EXPECT_EQ(CountRequests(*fake, "GET", "/secrets/s"), 2);
  absl::StatusOr<api::Secret> missing = source.GetSecret("ns", "nope");
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "\"nope\" not found"))
      << missing.status();
}

}  // namespace
}  // namespace kubelet::clustercontent
