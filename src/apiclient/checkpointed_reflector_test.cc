// CheckpointedReflector against the in-process fake, on a FakeClock: the checkpoint written
// after a list and its changes, the restore when the list is late, no restore after a list.
#include "apiclient/checkpointed_reflector.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "apiclient/testing/fake_rest_client.h"
#include "common/files.h"
#include "common/testing/eventually.h"
#include "gtest/gtest.h"

namespace kubelet::apiclient {
namespace {

using kubelet::testing::Eventually;
using testing::FakeRestClient;
using Json = nlohmann::json;

constexpr char kPods[] = "/api/v1/pods";

Json Pod(const std::string& name, const std::string& phase = "Pending") {
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"namespace", "default"}, {"name", name}}},
              {"spec", {{"nodeName", "node-1"}}},
              {"status", {{"phase", phase}}}};
}

// Keeps what reaches the handler; `restores` counts Replace calls without a resourceVersion.
class Recorder final : public ResourceEventHandler {
 public:
  void Replace(std::vector<Json> objects, const std::string& rv) override {
    if (rv.empty()) ++restores;
    store.Replace(std::move(objects), rv);
  }
  void Add(const Json& o) override { store.Add(o); }
  void Update(const Json& o) override { store.Update(o); }
  void Delete(const Json& o) override { store.Delete(o); }
  std::atomic<int> restores{0};
  Store store;
};

class CheckpointedReflectorTest : public ::testing::Test {
 protected:
  CheckpointedReflectorTest() {
    char tmpl[] = "/tmp/checkpointed-reflector-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    path_ = dir_ + "/pods-checkpoint.json";
  }
  ~CheckpointedReflectorTest() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<CheckpointedReflector> Make(RestClient& client, Recorder& rec) {
    ReflectorOptions o;
    o.name = "pods";
    o.path = kPods;
    o.backoff_initial = absl::Milliseconds(20);
    o.backoff_max = absl::Milliseconds(100);
    o.jitter = 0;
    CheckpointOptions c;
    c.path = path_;
    c.list_kind = "PodList";
    c.strip = {"status"};
    return std::make_unique<CheckpointedReflector>(client, rec, o, c, clock_);
  }
  Json Saved() const {
    absl::StatusOr<std::string> text = ReadFileToString(path_);
    return text.ok() ? Json::parse(*text, nullptr, false) : Json();
  }
  size_t SavedItems() const {
    Json saved = Saved();
    return saved.is_object() ? saved["items"].size() : 0;
  }

  std::string dir_, path_;
  FakeClock clock_;
};

TEST_F(CheckpointedReflectorTest, TheListAndItsChangesAreCheckpointedWithoutStatus) {
  FakeRestClient fake;
  Json a = Pod("a");
  a["metadata"]["managedFields"] = Json::array({{{"manager", "kubectl"}}});
  fake.Upsert(kPods, a);
  fake.Upsert(kPods, Pod("b"));
  Recorder rec;
  auto r = Make(fake, rec);
  r->Start();
  ASSERT_TRUE(fake.WaitForWatches(1, absl::Seconds(10)));
  EXPECT_EQ(rec.store.size(), 2u);  // every call reaches the handler
  Json saved = Saved();
  EXPECT_EQ(saved["kind"], "PodList");
  ASSERT_EQ(saved["items"].size(), 2u);
  EXPECT_FALSE(saved["items"][0].contains("status"));
  EXPECT_FALSE(saved["items"][0]["metadata"].contains("resourceVersion"));
  EXPECT_FALSE(saved["items"][0]["metadata"].contains("managedFields"));
  EXPECT_EQ(saved["items"][0]["metadata"]["name"], "a");
  EXPECT_EQ(saved["items"][0]["spec"]["nodeName"], "node-1");
  EXPECT_EQ(saved["items"][0]["apiVersion"], "v1");
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // A status change alone leaves the file as it was; a new pod and a deletion do not.
  const std::string before = ReadFileToString(path_).value();
  fake.Upsert(kPods, Pod("a", "Running"));
  ASSERT_TRUE(Eventually([&] {
    auto a = rec.store.Get("default/a");
    return a && (*a)["status"]["phase"] == "Running";
  }));
  EXPECT_EQ(ReadFileToString(path_).value(), before);
  fake.Upsert(kPods, Pod("c"));
  ASSERT_TRUE(Eventually([&] { return SavedItems() == 3; }));
  fake.Remove(kPods, "default", "a");
  ASSERT_TRUE(Eventually([&] { return SavedItems() == 2; }));
  // A list came: however long the clock runs, nothing is restored.
  clock_.Advance(absl::Minutes(1));
  r->Stop();
  EXPECT_EQ(rec.restores, 0);
}

TEST_F(CheckpointedReflectorTest, ALateListRestoresTheCheckpointThenReplacesIt) {
  {
    FakeRestClient fake;
    fake.Upsert(kPods, Pod("a"));
    fake.Upsert(kPods, Pod("gone"));
    Recorder rec;
    auto r = Make(fake, rec);
    r->Start();
    ASSERT_TRUE(Eventually([&] { return SavedItems() == 2; }));
  }
  // A new start while the API server does not answer.
  FakeRestClient down;
  down.InjectFault(
      {.method = "GET", .error = absl::UnavailableError("connection refused"), .times = 1000000});
  down.Upsert(kPods, Pod("a"));
  Recorder rec;
  auto r = Make(down, rec);
  r->Start();
  clock_.Advance(absl::Seconds(4));
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(rec.restores, 0);  // not before restore_after
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(Eventually([&] { return rec.restores == 1; }));
  EXPECT_EQ(rec.store.Keys(), (std::vector<std::string>{"default/a", "default/gone"}));
  EXPECT_FALSE(rec.store.Get("default/a")->contains("status"));
  // A restore does not rewrite the checkpoint; once the server answers, its list replaces the
  // restored objects (`gone` was deleted meanwhile) and the checkpoint follows.
  EXPECT_EQ(SavedItems(), 2u);
  r->Stop();
  FakeRestClient up;
  up.Upsert(kPods, Pod("a"));
  Recorder rec2;
  auto r2 = Make(up, rec2);
  r2->Start();
  ASSERT_TRUE(up.WaitForWatches(1, absl::Seconds(10)));
  EXPECT_EQ(rec2.store.Keys(), (std::vector<std::string>{"default/a"}));
  EXPECT_EQ(SavedItems(), 1u);
  clock_.Advance(absl::Seconds(10));
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(rec2.restores, 0);
}

TEST_F(CheckpointedReflectorTest, AnUnreadableOrMissingCheckpointRestoresNothing) {
  FakeRestClient down;
  down.InjectFault(
      {.method = "GET", .error = absl::UnavailableError("connection refused"), .times = 1000000});
  {
    Recorder rec;
    auto r = Make(down, rec);
    r->Start();
    clock_.Advance(absl::Seconds(6));
    absl::SleepFor(absl::Milliseconds(50));
    EXPECT_EQ(rec.restores, 0);  // no file
  }
  ASSERT_TRUE(WriteFileAtomically(path_, "{\"items\": 7", 0600).ok());
  Recorder rec;
  auto r = Make(down, rec);
  r->Start();
  clock_.Advance(absl::Seconds(6));
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(rec.restores, 0);
  // A bare array (the services checkpoint of earlier versions) is read as items.
  ASSERT_TRUE(WriteFileAtomically(path_, Json::array({Pod("x")}).dump(), 0600).ok());
  Recorder rec2;
  auto r2 = Make(down, rec2);
  r2->Start();
  clock_.Advance(absl::Seconds(6));
  ASSERT_TRUE(Eventually([&] { return rec2.restores == 1; }));
  EXPECT_EQ(rec2.store.Keys(), (std::vector<std::string>{"default/x"}));
}

}  // namespace
}  // namespace kubelet::apiclient
