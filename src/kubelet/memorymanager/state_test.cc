#include "kubelet/memorymanager/state.h"

#include "common/checksum.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::memorymanager {
namespace {

using ::testing::HasSubstr;

// A state file from upstream's own tests (pkg/kubelet/cm/memorymanager/state/
// state_checkpoint_test.go, "Restore valid checkpoint"), with the checksum the Go kubelet computed.
constexpr char kUpstreamCheckpoint[] =
    R"({"policyName":"static","machineState":{"0":{"numberOfAssignments":0,"memoryMap":{"memory":{"total":2048,"systemReserved":512,"allocatable":1536,"reserved":512,"free":1024}},"cells":[]}},"entries":{"pod":{"container1":[{"numaAffinity":[0],"type":"memory","size":512}]}},"checksum":4215593881})";

MemoryManagerCheckpoint UpstreamState() {
  MemoryManagerCheckpoint cp;
  cp.policy_name = "static";
  cp.machine_state[0].memory_map["memory"] = MemoryTable{2048, 512, 1536, 512, 1024};
  cp.entries["pod"]["container1"] = {Block{{0}, "memory", 512}};
  return cp;
}

TEST(MemoryManagerCheckpointTest, ChecksumMatchesUpstreamsVector) {
  const MemoryManagerCheckpoint cp = UpstreamState();
  EXPECT_EQ(SpewChecksumText(cp),
            "(*state.MemoryManagerCheckpoint){PolicyName:(string)static "
            "MachineState:(state.NUMANodeMap)map[0:<*>{NumberOfAssignments:(int)0 "
            "MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[memory:<*>{TotalMemSize:"
            "(uint64)2048 SystemReserved:(uint64)512 Allocatable:(uint64)1536 Reserved:(uint64)512 "
            "Free:(uint64)1024}] Cells:([]int)[]}] Entries:(state.ContainerMemoryAssignments)"
            "map[pod:map[container1:[{NUMAAffinity:([]int)[0] Type:(v1.ResourceName)memory "
            "Size:(uint64)512}]]] Checksum:(checksum.Checksum)0}");
  EXPECT_EQ(Checksum(cp), 4215593881u);
  // encoding/json's text of the same struct is the file, byte for byte.
  EXPECT_EQ(MarshalCheckpoint(cp), kUpstreamCheckpoint);

  absl::StatusOr<MemoryManagerCheckpoint> read = UnmarshalCheckpoint(kUpstreamCheckpoint);
  ASSERT_TRUE(read.ok()) << read.status();
  MemoryManagerCheckpoint want = cp;
  want.checksum = 4215593881u;
  EXPECT_EQ(*read, want);
}

TEST(MemoryManagerCheckpointTest, EmptyStateOfTheNonePolicy) {
  MemoryManagerCheckpoint cp;
  cp.policy_name = "None";
  EXPECT_EQ(SpewChecksumText(cp),
            "(*state.MemoryManagerCheckpoint){PolicyName:(string)None "
            "MachineState:(state.NUMANodeMap)map[] Entries:(state.ContainerMemoryAssignments)map[] "
            "Checksum:(checksum.Checksum)0}");
  EXPECT_EQ(MarshalCheckpoint(cp),
            R"({"policyName":"None","machineState":{},"checksum":4236770233})");
}

TEST(MemoryManagerCheckpointTest, SeveralNodesTypesAndContainersInGoOrder) {
  MemoryManagerCheckpoint cp;
  cp.policy_name = "Static";
  for (int id = 0; id <= 10; ++id) {
    NUMANodeState& n = cp.machine_state[id];
    n.cells = {id};
    n.memory_map["memory"] = MemoryTable{100, 10, 90, 0, 90};
  }
  cp.machine_state[2].memory_map["hugepages-2Mi"] =
      MemoryTable{4194304, 0, 4194304, 2097152, 2097152};
  cp.machine_state[2].memory_map["hugepages-1Gi"] = MemoryTable{};
  cp.machine_state[2].number_of_assignments = 3;
  cp.machine_state[3].number_of_assignments = 1;
  cp.machine_state[2].cells = {2, 3};
  cp.machine_state[3].cells = {2, 3};
  cp.entries["pod-b"]["app"] = {Block{{2, 3}, "memory", 50}};
  cp.entries["pod-a"]["z"] = {Block{{2}, "hugepages-2Mi", 2097152}, Block{{2}, "memory", 0}};
  cp.entries["pod-a"]["a"] = {};

  const std::string spew = SpewChecksumText(cp);
  // Map keys in value order (ints numerically), nested maps and slices without type prefixes.
  EXPECT_THAT(spew, HasSubstr("map[0:<*>{NumberOfAssignments:(int)0 "));
  EXPECT_THAT(spew, HasSubstr(" 9:<*>{NumberOfAssignments:(int)0 MemoryMap:(map[v1.ResourceName]"
                              "*state.MemoryTable)map[memory:<*>{TotalMemSize:(uint64)100 "
                              "SystemReserved:(uint64)10 Allocatable:(uint64)90 Reserved:(uint64)0 "
                              "Free:(uint64)90}] Cells:([]int)[9]} 10:<*>{"));
  EXPECT_THAT(spew, HasSubstr("2:<*>{NumberOfAssignments:(int)3 MemoryMap:(map[v1.ResourceName]"
                              "*state.MemoryTable)map[hugepages-1Gi:<*>{TotalMemSize:(uint64)0 "));
  EXPECT_THAT(spew, HasSubstr("Cells:([]int)[2 3]}"));
  EXPECT_THAT(
      spew, HasSubstr("Entries:(state.ContainerMemoryAssignments)map[pod-a:map[a:[] "
                      "z:[{NUMAAffinity:([]int)[2] Type:(v1.ResourceName)hugepages-2Mi "
                      "Size:(uint64)2097152} {NUMAAffinity:([]int)[2] Type:(v1.ResourceName)memory "
                      "Size:(uint64)0}]] pod-b:map[app:[{NUMAAffinity:([]int)[2 3] "
                      "Type:(v1.ResourceName)memory Size:(uint64)50}]]]"));

  const std::string text = MarshalCheckpoint(cp);
  // encoding/json sorts map[int] keys as strings.
  const size_t k1 = text.find("\"1\":"), k10 = text.find("\"10\":"), k2 = text.find("\"2\":");
  ASSERT_NE(k10, std::string::npos);
  EXPECT_LT(k1, k10);
  EXPECT_LT(k10, k2);
  EXPECT_THAT(
      text,
      HasSubstr(
          R"("entries":{"pod-a":{"a":[],"z":[{"numaAffinity":[2],"type":"hugepages-2Mi","size":2097152},{"numaAffinity":[2],"type":"memory","size":0}]},"pod-b":{"app":[{"numaAffinity":[2,3],"type":"memory","size":50}]}})"));
  EXPECT_THAT(
      text,
      HasSubstr(
          R"("2":{"numberOfAssignments":3,"memoryMap":{"hugepages-1Gi":{"total":0,"systemReserved":0,"allocatable":0,"reserved":0,"free":0},"hugepages-2Mi")"));

  absl::StatusOr<MemoryManagerCheckpoint> back = UnmarshalCheckpoint(text);
  ASSERT_TRUE(back.ok()) << back.status();
  cp.checksum = Checksum(cp);
  EXPECT_EQ(*back, cp);
  EXPECT_EQ(back->checksum, Fnv1a32(spew));
}

TEST(MemoryManagerCheckpointTest, CorruptOrMalformedFilesAreRefused) {
  std::string tampered = kUpstreamCheckpoint;
  tampered.replace(tampered.find("\"size\":512"), 10, "\"size\":513");
  EXPECT_EQ(UnmarshalCheckpoint(tampered).status().message(), "checkpoint is corrupted");
  EXPECT_EQ(UnmarshalCheckpoint(tampered).status().code(), absl::StatusCode::kDataLoss);
  // v1.28 verifies every checksum: a zero one does not match either.
  EXPECT_EQ(UnmarshalCheckpoint(R"({"policyName":"None","machineState":{},"checksum":0})")
                .status()
                .message(),
            "checkpoint is corrupted");
  EXPECT_TRUE(
      UnmarshalCheckpoint(R"({"policyName":"None","machineState":{},"checksum":4236770233})").ok());
  EXPECT_FALSE(UnmarshalCheckpoint("{").ok());
  EXPECT_FALSE(UnmarshalCheckpoint("").ok());
  EXPECT_EQ(UnmarshalCheckpoint(R"({"policyName":1})").status().message(),
            "policyName: not a string");
  EXPECT_EQ(UnmarshalCheckpoint(R"({"machineState":{"x":{}}})").status().message(),
            "machineState[x]: not a NUMA node id");
  EXPECT_EQ(UnmarshalCheckpoint(R"({"machineState":{"0":{"memoryMap":{"memory":{"free":-1}}}}})")
                .status()
                .message(),
            "machineState[0].memoryMap[memory].free: not a uint64");
  EXPECT_EQ(
      UnmarshalCheckpoint(R"({"entries":{"p":{"c":[{"numaAffinity":"0"}]}}})").status().message(),
      "entries[p][c][0].numaAffinity: not an array");
}

}  // namespace
}  // namespace kubelet::memorymanager
