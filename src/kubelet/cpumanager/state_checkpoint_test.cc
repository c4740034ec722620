#include "kubelet/cpumanager/state_checkpoint.h"

#include "common/checksum.h"
#include "gtest/gtest.h"

namespace kubelet::cpumanager {
namespace {

TEST(CPUManagerCheckpointTest, ChecksumMatchesUpstreamsFiles) {
  // The checksum upstream's kubelet wrote for this state (a node with 24 CPUs, no entries).
  CPUManagerCheckpoint cp{"static", "0-23", {}, 0};
  EXPECT_EQ(SpewChecksumText(cp),
            "(*state.CPUManagerCheckpoint){PolicyName:(string)static DefaultCPUSet:(string)0-23 "
            "Entries:(map[string]map[string]string)map[] Checksum:(checksum.Checksum)0}");
  EXPECT_EQ(Checksum(cp), 1538133146u);
  EXPECT_EQ(MarshalCheckpoint(cp),
            R"({"policyName":"static","defaultCpuSet":"0-23","checksum":1538133146})");
  // Go's hash/fnv New32a reference values.
  EXPECT_EQ(Fnv1a32(""), 2166136261u);
  EXPECT_EQ(Fnv1a32("a"), 0xe40c292cu);
}

TEST(CPUManagerCheckpointTest, EntriesRoundTripAndAreHashedInKeyOrder) {
  CPUManagerCheckpoint cp{
      "static", "0,4-7", {{"pod-b", {{"app", "1"}}}, {"pod-a", {{"z", "3"}, {"a", "2"}}}}, 0};
  EXPECT_EQ(SpewChecksumText(cp),
            "(*state.CPUManagerCheckpoint){PolicyName:(string)static DefaultCPUSet:(string)0,4-7 "
            "Entries:(map[string]map[string]string)map[pod-a:map[a:2 z:3] pod-b:map[app:1]] "
            "Checksum:(checksum.Checksum)0}");
  const std::string text = MarshalCheckpoint(cp);
  EXPECT_EQ(text.find(R"("entries":{"pod-a":{"a":"2","z":"3"},"pod-b":{"app":"1"}})"),
            text.find("\"entries\""));
  absl::StatusOr<CPUManagerCheckpoint> back = UnmarshalCheckpoint(text);
  ASSERT_TRUE(back.ok()) << back.status();
  cp.checksum = Checksum(cp);
  EXPECT_EQ(*back, cp);
}

TEST(CPUManagerCheckpointTest, CorruptOrMalformedFilesAreRefused) {
  EXPECT_EQ(UnmarshalCheckpoint(R"({"policyName":"static","defaultCpuSet":"0-23","checksum":1})")
                .status()
                .message(),
            "checkpoint is corrupted");
  // A zero checksum (old kubelets) is accepted.
  EXPECT_TRUE(UnmarshalCheckpoint(R"({"policyName":"none","defaultCpuSet":""})").ok());
  EXPECT_EQ(UnmarshalCheckpoint(R"({"policyName":3})").status().message(),
            "policyName: not a string");
  EXPECT_EQ(UnmarshalCheckpoint(R"({"entries":{"p":{"c":1}}})").status().message(),
            "entries[p][c]: not a string");
  EXPECT_FALSE(UnmarshalCheckpoint("not json").ok());
  EXPECT_FALSE(UnmarshalCheckpoint(R"({"checksum":-5})").ok());
}

}  // namespace
}  // namespace kubelet::cpumanager
