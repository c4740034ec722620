// Reflector and Store against the in-process fake, and the fake's own API semantics.
#include "apiclient/reflector.h"

#include <atomic>
#include <functional>

#include "apiclient/testing/fake_rest_client.h"
#include "common/testing/eventually.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::apiclient {
namespace {

using kubelet::testing::Eventually;
using testing::FakeRestClient;
using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kPods[] = "/api/v1/pods";

Json Pod(const std::string& ns, const std::string& name, const std::string& node,
         const std::string& phase = "Pending") {
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"namespace", ns}, {"name", name}, {"labels", {{"app", name}}}}},
              {"spec", {{"nodeName", node}}},
              {"status", {{"phase", phase}}}};
}

// Counts what the reflector delivers and keeps a Store up to date.
class Recorder final : public ResourceEventHandler {
 public:
  void Replace(std::vector<Json> objects, const std::string& rv) override {
    replaces++;
    store.Replace(std::move(objects), rv);
  }
  void Add(const Json& o) override {
    adds++;
    store.Add(o);
  }
  void Update(const Json& o) override {
    updates++;
    store.Update(o);
  }
  void Delete(const Json& o) override {
    deletes++;
    store.Delete(o);
  }
  void Bookmark(const std::string& rv) override {
    bookmarks++;
    store.Bookmark(rv);
  }
  std::atomic<int> replaces{0}, adds{0}, updates{0}, deletes{0}, bookmarks{0};
  Store store;
};

int CountRequests(const FakeRestClient& fake, const std::string& method,
                  const std::string& contains = "") {
  int n = 0;
  for (const auto& r : fake.requests()) {
    if (r.method == method && r.path.find(contains) != std::string::npos) ++n;
  }
  return n;
}

class ReflectorTest : public ::testing::Test {
 protected:
  ReflectorOptions Options() {
    ReflectorOptions o;
    o.name = "pods";
    o.path = kPods;
    o.field_selector = "spec.nodeName=node-1";
    o.page_size = 1;
    o.backoff_initial = absl::Milliseconds(20);
    o.backoff_max = absl::Milliseconds(200);
    o.jitter = 0;
    return o;
  }
  bool WaitForKeys(size_t n) {
    return rec_.store.WaitFor(
        [n](const Store::Items& items, const std::string&) { return items.size() == n; },
        absl::Seconds(10));
  }

  FakeClock clock_;
  FakeRestClient fake_;
  Recorder rec_;
};

TEST_F(ReflectorTest, ListsPagesThenWatchesFromTheListVersion) {
  fake_.Upsert(kPods, Pod("default", "a", "node-1"));
  fake_.Upsert(kPods, Pod("default", "b", "node-2"));
  fake_.Upsert(kPods, Pod("kube-system", "c", "node-1"));
  const int64_t list_rv = fake_.CurrentResourceVersion();
  Reflector r(fake_, rec_, Options(), clock_);
  r.Start();
  ASSERT_TRUE(fake_.WaitForWatches(1, absl::Seconds(10)));
  EXPECT_TRUE(r.HasSynced());
  EXPECT_EQ(rec_.replaces, 1);
  EXPECT_THAT(rec_.store.Keys(), ::testing::ElementsAre("default/a", "kube-system/c"));
  EXPECT_EQ(r.LastSyncResourceVersion(), std::to_string(list_rv));

  std::vector<FakeRestClient::RecordedRequest> reqs = fake_.requests();
  ASSERT_GE(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].method, "GET");
  EXPECT_THAT(reqs[0].path, HasSubstr("fieldSelector=spec.nodeName%3Dnode-1"));
  EXPECT_THAT(reqs[0].path, HasSubstr("limit=1"));
  EXPECT_THAT(reqs[0].path, HasSubstr("resourceVersion=0"));
  EXPECT_THAT(reqs[1].path, HasSubstr("continue="));  // the second page
  const auto& watch = reqs.back();
  EXPECT_EQ(watch.method, "WATCH");
  EXPECT_THAT(watch.path, HasSubstr("allowWatchBookmarks=true"));
  EXPECT_THAT(watch.path, HasSubstr("resourceVersion=" + std::to_string(list_rv)));
  EXPECT_THAT(watch.path, HasSubstr("watch=true"));
  EXPECT_THAT(watch.path, ::testing::ContainsRegex("timeoutSeconds=(3[0-9][0-9]|[45][0-9][0-9])"));

  // Live changes: add, update, leave the selection (DELETED), delete.
  fake_.Upsert(kPods, Pod("default", "d", "node-1"));
  ASSERT_TRUE(WaitForKeys(3));
  fake_.Upsert(kPods, Pod("default", "a", "node-1", "Running"));
  ASSERT_TRUE(rec_.store.WaitFor(
      [](const Store::Items& items, const std::string&) {
        auto it = items.find("default/a");
        return it != items.end() && it->second["status"]["phase"] == "Running";
      },
      absl::Seconds(10)));
  fake_.Upsert(kPods, Pod("kube-system", "c", "node-2"));
  ASSERT_TRUE(WaitForKeys(2));
  fake_.Remove(kPods, "default", "d");
  ASSERT_TRUE(WaitForKeys(1));
  EXPECT_EQ(rec_.adds, 1);
  EXPECT_EQ(rec_.updates, 1);
  EXPECT_EQ(rec_.deletes, 2);
  EXPECT_EQ(r.LastSyncResourceVersion(), std::to_string(fake_.CurrentResourceVersion()));
  EXPECT_EQ(rec_.store.ResourceVersion(), r.LastSyncResourceVersion());
  // A pod on another node never shows.
  fake_.Upsert(kPods, Pod("default", "e", "node-2"));
  r.Stop();
  EXPECT_FALSE(rec_.store.Get("default/e").has_value());
  EXPECT_EQ(rec_.replaces, 1);
}

TEST_F(ReflectorTest, BookmarkMovesTheResourceVersion) {
  fake_.Upsert(kPods, Pod("default", "a", "node-1"));
  Reflector r(fake_, rec_, Options(), clock_);
  r.Start();
  ASSERT_TRUE(fake_.WaitForWatches(1, absl::Seconds(10)));
  // Writes elsewhere move the global version without an event for this watch.
  fake_.Upsert("/api/v1/configmaps", Json{{"metadata", {{"namespace", "x"}, {"name", "cm"}}}});
  fake_.Upsert(kPods, Pod("default", "other", "node-2"));
  const std::string now = std::to_string(fake_.CurrentResourceVersion());
  ASSERT_NE(r.LastSyncResourceVersion(), now);
  fake_.SendBookmarks();
  ASSERT_TRUE(Eventually([&] { return r.LastSyncResourceVersion() == now; }));
  EXPECT_EQ(rec_.bookmarks, 1);
  EXPECT_EQ(rec_.store.ResourceVersion(), now);
  // A dropped watch now resumes from the bookmark's version.
  fake_.DropWatches();
  ASSERT_TRUE(Eventually([&] { return CountRequests(fake_, "WATCH") == 2; }));
  EXPECT_THAT(fake_.requests().back().path, HasSubstr("resourceVersion=" + now));
  EXPECT_EQ(rec_.replaces, 1);
}

TEST_F(ReflectorTest, DroppedWatchResumesFromTheLastVersionWithoutRelist) {
  fake_.Upsert(kPods, Pod("default", "a", "node-1"));
  Reflector r(fake_, rec_, Options(), clock_);
  r.Start();
  ASSERT_TRUE(fake_.WaitForWatches(1, absl::Seconds(10)));
  fake_.Upsert(kPods, Pod("default", "b", "node-1"));
  const std::string rv = std::to_string(fake_.CurrentResourceVersion());
  ASSERT_TRUE(Eventually([&] { return r.LastSyncResourceVersion() == rv; }));
  for (int i = 0; i < 3; ++i) {
    fake_.DropWatches();
    ASSERT_TRUE(Eventually([&] { return CountRequests(fake_, "WATCH") == 2 + i; }));
    ASSERT_TRUE(fake_.WaitForWatches(1, absl::Seconds(10)));
  }
  EXPECT_EQ(CountRequests(fake_, "WATCH", "resourceVersion=" + rv), 3);
  EXPECT_EQ(CountRequests(fake_, "GET"), 1);  // one list, one page
  EXPECT_EQ(rec_.replaces, 1);
  // Changes made while no watch was open are not lost: the re-watch replays them.
  fake_.DropWatches();
  fake_.Upsert(kPods, Pod("default", "c", "node-1"));
  ASSERT_TRUE(WaitForKeys(3));
}

TEST_F(ReflectorTest, ExpiredVersionAsErrorEventRelists) {
  fake_.Upsert(kPods, Pod("default", "a", "node-1"));
  Reflector r(fake_, rec_, Options(), clock_);
  r.Start();
  ASSERT_TRUE(fake_.WaitForWatches(1, absl::Seconds(10)));
  // The pods' last version falls out of the history (etcd compaction) while watching.
  fake_.Upsert("/api/v1/configmaps", Json{{"metadata", {{"namespace", "x"}, {"name", "cm"}}}});
  fake_.CompactHistory();
  fake_.DropWatches();
  ASSERT_TRUE(Eventually([&] { return rec_.replaces == 2; }));
  ASSERT_TRUE(fake_.WaitForWatches(1, absl::Seconds(10)));
  // The relist is a consistent read (resourceVersion=""), not from the watch cache.
  bool consistent = false;
  for (const auto& req : fake_.requests()) {
    if (req.method == "GET" && req.path.find("resourceVersion") == std::string::npos) {
      consistent = true;
    }
  }
  EXPECT_TRUE(consistent);
  EXPECT_EQ(r.LastSyncResourceVersion(), std::to_string(fake_.CurrentResourceVersion()));
  fake_.Upsert(kPods, Pod("default", "b", "node-1"));
  ASSERT_TRUE(WaitForKeys(2));
}

TEST_F(ReflectorTest, GoneAnswerToAWatchRelists) {
  fake_.Upsert(kPods, Pod("default", "a", "node-1"));
  Reflector r(fake_, rec_, Options(), clock_);
  r.Start();
  ASSERT_TRUE(fake_.WaitForWatches(1, absl::Seconds(10)));
  fake_.InjectFault({.method = "WATCH", .code = 410, .reason = "Expired"});
  fake_.DropWatches();
  ASSERT_TRUE(Eventually([&] { return rec_.replaces == 2; }));
  ASSERT_TRUE(fake_.WaitForWatches(1, absl::Seconds(10)));
  EXPECT_EQ(CountRequests(fake_, "WATCH"), 3);
}

TEST_F(ReflectorTest, ListErrorsBackOffExponentially) {
  fake_.Upsert(kPods, Pod("default", "a", "node-1"));
  fake_.InjectFault({.method = "GET", .code = 500, .times = 2});
  fake_.InjectFault({.method = "GET", .times = 1});  // then a transport error
  absl::Time start = absl::Now();
  Reflector r(fake_, rec_, Options(), clock_);
  r.Start();
  ASSERT_TRUE(fake_.WaitForWatches(1, absl::Seconds(10)));
  // 20 + 40 + 80 ms of back-off (no jitter) before the fourth list succeeded.
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(140));
  EXPECT_EQ(CountRequests(fake_, "GET"), 4);
  EXPECT_EQ(rec_.replaces, 1);
  EXPECT_TRUE(r.HasSynced());
}

TEST_F(ReflectorTest, WatchErrorsRetryTheWatchAfterBackOff) {
  fake_.Upsert(kPods, Pod("default", "a", "node-1"));
  Reflector r(fake_, rec_, Options(), clock_);
  r.Start();
  ASSERT_TRUE(fake_.WaitForWatches(1, absl::Seconds(10)));
  const std::string rv = r.LastSyncResourceVersion();
  fake_.InjectFault({.method = "WATCH", .code = 503, .times = 1});
  fake_.InjectFault({.method = "WATCH", .code = 429, .times = 1});
  fake_.InjectFault({.method = "WATCH", .times = 1});  // connection refused
  absl::Time start = absl::Now();
  fake_.DropWatches();
  ASSERT_TRUE(Eventually([&] { return CountRequests(fake_, "WATCH") == 5; }));
  ASSERT_TRUE(fake_.WaitForWatches(1, absl::Seconds(10)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(140));
  EXPECT_EQ(CountRequests(fake_, "WATCH", "resourceVersion=" + rv), 5);
  EXPECT_EQ(CountRequests(fake_, "GET"), 1);  // no relist
  EXPECT_EQ(rec_.replaces, 1);
}

TEST_F(ReflectorTest, StopCancelsAnOpenWatchPromptly) {
  Reflector r(fake_, rec_, Options(), clock_);
  r.Start();
  ASSERT_TRUE(fake_.WaitForWatches(1, absl::Seconds(10)));
  absl::Time start = absl::Now();
  r.Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_EQ(fake_.open_watches(), 0);
}

TEST_F(ReflectorTest, StopWakesABackOff) {
  ReflectorOptions o = Options();
  o.backoff_initial = absl::Seconds(30);
  fake_.InjectFault({.method = "GET", .code = 500, .times = 100});
  Reflector r(fake_, rec_, o, clock_);
  r.Start();
  ASSERT_TRUE(Eventually([&] { return CountRequests(fake_, "GET") == 1; }));
  absl::Time start = absl::Now();
  r.Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_FALSE(r.HasSynced());
}

// A handler that throws (a bug, or a library throwing on odd input) costs one round: the
// reflector logs it, backs off and starts over from a fresh list, and the process lives.
TEST_F(ReflectorTest, AThrowingHandlerIsRetriedFromAFreshList) {
  class ThrowsOnce final : public ResourceEventHandler {
   public:
    explicit ThrowsOnce(Recorder& next) : next_(next) {}
    void Replace(std::vector<Json> objects, const std::string& rv) override {
      if (!thrown_.exchange(true)) throw std::runtime_error("handler bug");
      next_.Replace(std::move(objects), rv);
    }
    void Add(const Json& o) override { next_.Add(o); }
    void Update(const Json& o) override { next_.Update(o); }
    void Delete(const Json& o) override { next_.Delete(o); }
    void Bookmark(const std::string& rv) override { next_.Bookmark(rv); }

   private:
    Recorder& next_;
    std::atomic<bool> thrown_{false};
  } handler(rec_);
  fake_.Upsert(kPods, Pod("default", "a", "node-1"));
  Reflector r(fake_, handler, Options(), clock_);
  r.Start();
  ASSERT_TRUE(WaitForKeys(1));
  EXPECT_EQ(rec_.replaces, 1);
  ASSERT_TRUE(fake_.WaitForWatches(1, absl::Seconds(10)));
  fake_.Upsert(kPods, Pod("default", "b", "node-1"));
  EXPECT_TRUE(WaitForKeys(2));
}

TEST(StoreTest, KeysAndReplace) {
  int changes = 0;
  Store s([&] { ++changes; });
  EXPECT_EQ(Store::KeyOf(Pod("ns", "p", "n")), "ns/p");
  EXPECT_EQ(Store::KeyOf(Json{{"metadata", {{"name", "node-1"}}}}), "node-1");
  EXPECT_EQ(Store::KeyOf(Json::object()), "");
  EXPECT_FALSE(s.HasSynced());
  s.Replace({Pod("ns", "a", "n"), Pod("ns", "b", "n")}, "10");
  EXPECT_TRUE(s.HasSynced());
  EXPECT_EQ(s.size(), 2u);
  EXPECT_EQ(s.ResourceVersion(), "10");
  Json b2 = Pod("ns", "b", "n", "Running");
  b2["metadata"]["resourceVersion"] = "11";
  s.Update(b2);
  EXPECT_EQ((*s.Get("ns/b"))["status"]["phase"], "Running");
  EXPECT_EQ(s.ResourceVersion(), "11");
  s.Replace({Pod("ns", "c", "n")}, "20");
  EXPECT_THAT(s.Keys(), ::testing::ElementsAre("ns/c"));
  EXPECT_EQ(changes, 3);
}

// Found by fuzz/watch_event_fuzzer.cc: a watch event whose metadata.name was not a string threw
// out of KeyOf (and so out of the reflector's thread). Such an object has no key; a namespace
// that is not a string counts as none.
TEST(StoreTest, NonStringNameOrNamespaceIsNoKey) {
  Store s;
  const Json bad_name = Json::parse(R"({"metadata":{"name":[{"name":"pg"}],"namespace":"ns"}})");
  EXPECT_EQ(Store::KeyOf(bad_name), "");
  EXPECT_EQ(Store::KeyOf(Json::parse(R"({"metadata":{"name":"a","namespace":7}})")), "a");
  s.Add(bad_name);
  s.Update(bad_name);
  s.Delete(bad_name);
  s.Replace({bad_name}, "1");
  EXPECT_EQ(s.size(), 0u);
}

// An error body whose "kind" is not a string was a thrown type error; it is read as any body.
TEST(ApiErrorTest, NonStringKindIsNotAThrow) {
  Response r;
  r.code = 500;
  r.body = R"({"kind":5,"reason":"InternalError","message":"m"})";
  ApiError e = DecodeApiError(r);
  EXPECT_EQ(e.code, 500);
  EXPECT_EQ(e.reason, "InternalError");
  EXPECT_EQ(e.message, "m");
  r.body = R"({"kind":["Status"]})";
  e = DecodeApiError(r);
  EXPECT_EQ(e.reason, "InternalError");
  EXPECT_EQ(e.message, r.body);
  EXPECT_EQ(ResponseStatus(r).code(), absl::StatusCode::kUnavailable);
}

// The fake's API semantics, which consumers' tests rely on.
TEST(FakeRestClientTest, CrudWithConflictsAndPatches) {
  FakeRestClient fake;
  auto call = [&](const std::string& method, const std::string& path, const Json& body = Json(),
                  const std::string& ct = "") {
    Request r;
    r.method = method;
    r.path = path;
    if (!body.is_null()) r.body = body.dump();
    r.content_type = ct;
    absl::StatusOr<Response> resp = fake.Do(r);
    EXPECT_TRUE(resp.ok());
    return *resp;
  };
  const std::string ns_pods = "/api/v1/namespaces/default/pods";
  Response created = call("POST", ns_pods, Pod("", "a", "node-1"));
  ASSERT_EQ(created.code, 201);
  Json a = Json::parse(created.body);
  EXPECT_EQ(a["metadata"]["namespace"], "default");
  EXPECT_FALSE(a["metadata"]["uid"].get<std::string>().empty());
  const std::string rv1 = a["metadata"]["resourceVersion"];

  Response dup = call("POST", ns_pods, Pod("", "a", "node-1"));
  EXPECT_EQ(dup.code, 409);
  EXPECT_EQ(DecodeApiError(dup).reason, "AlreadyExists");
  EXPECT_EQ(ResponseStatus(dup).code(), absl::StatusCode::kAlreadyExists);
  Response missing = call("GET", ns_pods + "/zzz");
  EXPECT_EQ(missing.code, 404);
  EXPECT_EQ(DecodeApiError(missing).reason, "NotFound");
  EXPECT_EQ(ResponseStatus(missing).code(), absl::StatusCode::kNotFound);

  // Merge patch of the status subresource changes the status only.
  Response patched = call("PATCH", ns_pods + "/a/status",
                          Json{{"status", {{"phase", "Running"}}}, {"spec", {{"nodeName", "x"}}}},
                          kMergePatchType);
  ASSERT_EQ(patched.code, 200);
  Json p = Json::parse(patched.body);
  EXPECT_EQ(p["status"]["phase"], "Running");
  EXPECT_EQ(p["spec"]["nodeName"], "node-1");
  EXPECT_NE(p["metadata"]["resourceVersion"], rv1);

  // PUT with the stale version conflicts; with the current one it succeeds.
  Json stale = a;
  stale["spec"]["nodeName"] = "node-2";
  Response conflict = call("PUT", ns_pods + "/a", stale);
  EXPECT_EQ(conflict.code, 409);
  EXPECT_EQ(DecodeApiError(conflict).reason, "Conflict");
  EXPECT_EQ(ResponseStatus(conflict).code(), absl::StatusCode::kAborted);
  stale["metadata"]["resourceVersion"] = p["metadata"]["resourceVersion"];
  Response put = call("PUT", ns_pods + "/a", stale);
  ASSERT_EQ(put.code, 200);
  EXPECT_EQ(Json::parse(put.body)["status"]["phase"], "Running");  // kept

  // JSON patch; an unknown patch type is refused.
  Response jp = call("PATCH", ns_pods + "/a",
                     Json::array({{{"op", "add"}, {"path", "/metadata/labels/x"}, {"value", "y"}}}),
                     kJsonPatchType);
  ASSERT_EQ(jp.code, 200);
  EXPECT_EQ(Json::parse(jp.body)["metadata"]["labels"]["x"], "y");
  EXPECT_EQ(call("PATCH", ns_pods + "/a", Json::object(), "text/plain").code, 415);

  // Lists filter by namespace and selectors.
  fake.Upsert("/api/v1/pods", Pod("other", "b", "node-1"));
  Json all = Json::parse(call("GET", "/api/v1/pods").body);
  EXPECT_EQ(all["items"].size(), 2u);
  Json in_ns = Json::parse(call("GET", ns_pods).body);
  EXPECT_EQ(in_ns["items"].size(), 1u);
  Json by_label = Json::parse(call("GET", "/api/v1/pods?labelSelector=x%3Dy").body);
  ASSERT_EQ(by_label["items"].size(), 1u);
  EXPECT_EQ(by_label["items"][0]["metadata"]["name"], "a");
  Json by_field =
      Json::parse(call("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-2").body);
  EXPECT_EQ(by_field["items"].size(), 1u);
  EXPECT_EQ(by_field["metadata"]["resourceVersion"], std::to_string(fake.CurrentResourceVersion()));

  // Delete with a stale precondition conflicts, then succeeds.
  EXPECT_EQ(
      call("DELETE", ns_pods + "/a", Json{{"preconditions", {{"resourceVersion", "1"}}}}).code,
      409);
  Response del = call("DELETE", ns_pods + "/a");
  ASSERT_EQ(del.code, 200);
  EXPECT_EQ(call("GET", ns_pods + "/a").code, 404);
  EXPECT_EQ(call("DELETE", ns_pods + "/a").code, 404);
}

}  // namespace
}  // namespace kubelet::apiclient
