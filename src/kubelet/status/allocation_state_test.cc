#include "kubelet/status/allocation_state.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/quantity.h"
#include "gtest/gtest.h"

namespace kubelet::status {
namespace {

api::Quantity Q(const char* s) { return *api::ParseQuantity(s); }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/allocation_state_test.XXXXXX";
    char* p = mkdtemp(tmpl);
    path_ = p != nullptr ? p : "/tmp/allocation_state_test.fallback";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

PodResourceAllocationInfo Sample() {
  PodResourceAllocationInfo info;
  info.allocation_entries["pod-1"]["app"] = {{"cpu", Q("500m")}, {"memory", Q("128Mi")}};
  info.allocation_entries["pod-1"]["idle"] = {};
  info.resize_status_entries["pod-1"] = kResizeInProgress;
  return info;
}

TEST(AllocationCheckpoint, DataIsGoJsonOfTheInfo) {
  EXPECT_EQ(EncodeAllocationData({}), "{}");
  // Maps by key, a container without requests as null, canonical quantities.
  EXPECT_EQ(EncodeAllocationData(Sample()),
            R"({"allocationEntries":{"pod-1":{"app":{"cpu":"500m","memory":"128Mi"},)"
            R"("idle":null}},"resizeStatusEntries":{"pod-1":"InProgress"}})");
}

TEST(AllocationCheckpoint, FileIsTheCheckpointManagersFormat) {
  // checksum.New(data): FNV-1a 32 over go-spew's "(string)" + data.
  EXPECT_EQ(AllocationChecksum("{}"), 694314937u);
  EXPECT_EQ(MarshalAllocationCheckpoint({}), R"({"data":"{}","checksum":694314937})");
  EXPECT_EQ(MarshalAllocationCheckpoint(Sample()),
            R"({"data":"{\"allocationEntries\":{\"pod-1\":{\"app\":{\"cpu\":\"500m\",)"
            R"(\"memory\":\"128Mi\"},\"idle\":null}},\"resizeStatusEntries\":{\"pod-1\":)"
            R"(\"InProgress\"}}","checksum":1008760861})");
}

TEST(AllocationCheckpoint, RoundTripAndCorruption) {
  absl::StatusOr<PodResourceAllocationInfo> back =
      UnmarshalAllocationCheckpoint(MarshalAllocationCheckpoint(Sample()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, Sample());

  std::string text = MarshalAllocationCheckpoint(Sample());
  text.replace(text.find("500m"), 4, "600m");
  absl::StatusOr<PodResourceAllocationInfo> bad = UnmarshalAllocationCheckpoint(text);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "checkpoint is corrupted");

  EXPECT_FALSE(UnmarshalAllocationCheckpoint("not json").ok());
  // Valid checksum, bad quantity: named.
  const std::string data = R"({"allocationEntries":{"p":{"c":{"cpu":"x"}}}})";
  std::string escaped;
  for (char c : data) {
    if (c == '"') escaped += '\\';
    escaped += c;
  }
  const std::string file = R"({"data":")" + escaped + R"(","checksum":)" +
                           std::to_string(AllocationChecksum(data)) + "}";
  absl::StatusOr<PodResourceAllocationInfo> q = UnmarshalAllocationCheckpoint(file);
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("data.allocationEntries[p][c][cpu]"), std::string::npos)
      << q.status();
}

TEST(AllocationState, CheckpointedAndRestored) {
  TempDir dir;
  const std::string path = dir.path() + "/" + kPodStatusManagerStateFile;
  {
    absl::StatusOr<std::unique_ptr<AllocationState>> s = AllocationState::Open(dir.path());
    ASSERT_TRUE(s.ok()) << s.status();
    // A missing file is created empty.
    EXPECT_EQ(ReadAll(path), R"({"data":"{}","checksum":694314937})");

    api::Pod pod;
    pod.metadata.uid = "pod-1";
    api::Container app;
    app.name = "app";
    app.resources.requests = {{"cpu", Q("500m")}, {"memory", Q("128Mi")}};
    api::Container idle;
    idle.name = "idle";
    pod.spec.containers = {app, idle};
    ASSERT_TRUE((*s)->SetPodAllocation(pod).ok());
    ASSERT_TRUE((*s)->SetPodResizeStatus("pod-1", kResizeInProgress).ok());
    EXPECT_EQ(ReadAll(path), MarshalAllocationCheckpoint(Sample()));
  }
  // A restarted kubelet finds the allocations.
  absl::StatusOr<std::unique_ptr<AllocationState>> s = AllocationState::Open(dir.path());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->Snapshot(), Sample());
  EXPECT_EQ((*s)->GetContainerResourceAllocation("pod-1", "app"),
            (api::ResourceList{{"cpu", Q("500m")}, {"memory", Q("128Mi")}}));
  EXPECT_EQ((*s)->GetContainerResourceAllocation("pod-1", "idle"), api::ResourceList{});
  EXPECT_EQ((*s)->GetContainerResourceAllocation("pod-1", "none"), std::nullopt);
  EXPECT_EQ((*s)->GetPodResizeStatus("pod-1"), kResizeInProgress);

  // Clearing the resize status; dropping the last container drops the pod.
  ASSERT_TRUE((*s)->SetPodResizeStatus("pod-1", "").ok());
  EXPECT_EQ((*s)->GetPodResizeStatus("pod-1"), std::nullopt);
  ASSERT_TRUE((*s)->SetPodResizeStatus("pod-1", kResizeDeferred).ok());
  ASSERT_TRUE((*s)->Delete("pod-1", "app").ok());
  EXPECT_EQ((*s)->PodUIDs(), std::set<std::string>{"pod-1"});
  ASSERT_TRUE((*s)->Delete("pod-1", "idle").ok());
  EXPECT_TRUE((*s)->PodUIDs().empty());
  EXPECT_EQ(ReadAll(path), R"({"data":"{}","checksum":694314937})");
}

TEST(AllocationState, CorruptedFileFailsWithUpstreamsAdvice) {
  TempDir dir;
  const std::string path = dir.path() + "/" + kPodStatusManagerStateFile;
  {
    std::ofstream out(path);
    out << R"({"data":"{}","checksum":1})";
  }
  absl::StatusOr<std::unique_ptr<AllocationState>> s = AllocationState::Open(dir.path());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "could not restore state from checkpoint: checkpoint is corrupted, please drain this "
            "node and delete pod allocation checkpoint file \"" +
                path + "\" before restarting Kubelet");
}

}  // namespace
}  // namespace kubelet::status
