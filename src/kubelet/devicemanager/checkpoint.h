// The device manager's checkpoint, <root-dir>/device-plugins/kubelet_internal_checkpoint
// (upstream pkg/kubelet/cm/devicemanager/checkpoint), read and written byte-compatibly so a node
// can switch between this kubelet and upstream's:
//
//   {"Data":{"PodDeviceEntries":[{"PodUID":"<uid>","ContainerName":"c","ResourceName":
//    "example.com/resource","DeviceIDs":{"-1":["Dev-1"]},"AllocResp":"<base64 of the plugin's
//    ContainerAllocateResponse>"}],"RegisteredDevices":{"example.com/resource":["Dev-1",
//    "Dev-2"]}},"Checksum":123}
//
// DeviceIDs group a container's devices by NUMA node (-1: the device reports no topology).
// The checksum is FNV-1a 32 (common/checksum.h) of the go-spew "%#v" text of the Data member
// (SpewChecksumText). A file whose checksum does not match is "checkpoint is corrupted".
// Pure functions; thread-safe.
#ifndef KUBELET_KUBELET_DEVICEMANAGER_CHECKPOINT_H_
#define KUBELET_KUBELET_DEVICEMANAGER_CHECKPOINT_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace kubelet::devicemanager {

inline constexpr char kCheckpointFileName[] = "kubelet_internal_checkpoint";
// The NUMA key of devices without topology.
inline constexpr int64_t kNodeWithoutTopology = -1;

struct PodDevicesEntry {
  std::string pod_uid;
  std::string container_name;
  std::string resource_name;
  std::map<int64_t, std::vector<std::string>> device_ids;  // by NUMA node
  std::string alloc_resp;  // serialized v1beta1.ContainerAllocateResponse
  bool operator==(const PodDevicesEntry&) const = default;
};

struct DeviceCheckpoint {
  std::vector<PodDevicesEntry> entries;
  std::map<std::string, std::vector<std::string>> registered_devices;
  bool operator==(const DeviceCheckpoint&) const = default;
};

// (checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)[{PodUID:(string)u
// ContainerName:(string)c ResourceName:(string)r DeviceIDs:(checkpoint.DevicesPerNUMA)map[-1:[d]]
// AllocResp:([]uint8)[10 4]}] RegisteredDevices:(map[string][]string)map[r:[d e]]}
// (no entries: PodDeviceEntries:([]checkpoint.PodDevicesEntry)<nil>).
std::string SpewChecksumText(const DeviceCheckpoint& cp);
uint32_t Checksum(const DeviceCheckpoint& cp);

// The file's text, with the checksum computed.
std::string MarshalCheckpoint(const DeviceCheckpoint& cp);
// Parses and verifies a file's text. Errors name the member that does not parse;
// "checkpoint is corrupted" when the checksum does not match.
absl::StatusOr<DeviceCheckpoint> UnmarshalCheckpoint(std::string_view text);

}  // namespace kubelet::devicemanager

#endif  // KUBELET_KUBELET_DEVICEMANAGER_CHECKPOINT_H_
