#include "kubelet/devicemanager/checkpoint.h"

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace kubelet::devicemanager {
namespace {

// Checkpoint files written by upstream kubelets (published in GPU set-up guides), with their
// checksums.
constexpr char kUpstreamOneEntry[] =
    R"({"Data":{"PodDeviceEntries":[{"PodUID":"bf52b2cd-b611-4e79-86b1-280b283185c3",)"
    R"("ContainerName":"check","ResourceName":"nvidia.com/gpu","DeviceIDs":{"-1":["tegra"]},)"
    R"("AllocResp":"Ch8KFk5WSURJQV9WSVNJQkxFX0RFVklDRVMSBXRlZ3Jh"}],"RegisteredDevices":)"
    R"({"nvidia.com/gpu":["tegra"]}},"Checksum":3660592824})";
constexpr char kUpstreamNoEntries[] =
    R"({"Data":{"PodDeviceEntries":null,"RegisteredDevices":{"nvidia.com/gpu":)"
    R"(["GPU-0650a168-e770-3ea8-8ac3-8a1d419763e0"]}},"Checksum":3952659280})";

TEST(DeviceCheckpointTest, ReadsUpstreamFilesAndWritesThemBackByteForByte) {
  for (const char* text : {kUpstreamOneEntry, kUpstreamNoEntries}) {
    absl::StatusOr<DeviceCheckpoint> cp = UnmarshalCheckpoint(text);
    ASSERT_TRUE(cp.ok()) << cp.status() << "\n" << text;
    EXPECT_EQ(MarshalCheckpoint(*cp), text);
  }
  DeviceCheckpoint cp = *UnmarshalCheckpoint(kUpstreamOneEntry);
  ASSERT_EQ(cp.entries.size(), 1u);
  EXPECT_EQ(cp.entries[0].container_name, "check");
  EXPECT_EQ(cp.entries[0].device_ids.at(kNodeWithoutTopology), std::vector<std::string>{"tegra"});
  std::string want;
  ASSERT_TRUE(absl::Base64Unescape("Ch8KFk5WSURJQV9WSVNJQkxFX0RFVklDRVMSBXRlZ3Jh", &want));
  EXPECT_EQ(cp.entries[0].alloc_resp, want);
  EXPECT_EQ(cp.registered_devices.at("nvidia.com/gpu"), std::vector<std::string>{"tegra"});
}

TEST(DeviceCheckpointTest, SpewTextHasUpstreamsShape) {
  DeviceCheckpoint cp;
  cp.entries.push_back({"u", "c", "r", {{-1, {"a"}}, {0, {"b", "c"}}}, std::string("\x0a\x04", 2)});
  cp.registered_devices["r"] = {"a", "b"};
  EXPECT_EQ(SpewChecksumText(cp),
            "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)[{PodUID:"
            "(string)u ContainerName:(string)c ResourceName:(string)r DeviceIDs:(checkpoint."
            "DevicesPerNUMA)map[-1:[a] 0:[b c]] AllocResp:([]uint8)[10 4]}] RegisteredDevices:("
            "map[string][]string)map[r:[a b]]}");
  cp.entries.clear();
  EXPECT_EQ(SpewChecksumText(cp),
            "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)<nil> "
            "RegisteredDevices:(map[string][]string)map[r:[a b]]}");
}

TEST(DeviceCheckpointTest, RejectsATamperedOrBrokenFile) {
  std::string tampered = kUpstreamOneEntry;
  tampered.replace(tampered.find("\"check\""), 7, "\"other\"");
  absl::StatusOr<DeviceCheckpoint> cp = UnmarshalCheckpoint(tampered);
  ASSERT_FALSE(cp.ok());
  EXPECT_EQ(cp.status().message(), "checkpoint is corrupted");

  EXPECT_FALSE(UnmarshalCheckpoint("not json").ok());
  cp = UnmarshalCheckpoint(R"({"Data":{"PodDeviceEntries":[{"DeviceIDs":{"x":["a"]}}]}})");
  ASSERT_FALSE(cp.ok());
  EXPECT_NE(cp.status().message().find("DeviceIDs: key x is not a number"), std::string::npos);
  cp = UnmarshalCheckpoint(R"({"Data":{"RegisteredDevices":{"r":"a"}}})");
  ASSERT_FALSE(cp.ok());
  EXPECT_NE(cp.status().message().find("Data.RegisteredDevices.r"), std::string::npos);
}

}  // namespace
}  // namespace kubelet::devicemanager
