// An in-process device plugin (device plugin API v1beta1) for unit tests of the device manager:
// serves DevicePlugin on <dir>/<socket name>, registers with a kubelet socket, streams the device
// list it is given, answers Allocate with a mount /dev/<id> per device (plus one env and one
// annotation), and records the calls it gets.
// Thread-safe.
#ifndef KUBELET_KUBELET_DEVICEMANAGER_TESTING_FAKE_DEVICE_PLUGIN_H_
#define KUBELET_KUBELET_DEVICEMANAGER_TESTING_FAKE_DEVICE_PLUGIN_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kubelet::devicemanager::testing {

struct FakeDevice {
  std::string id;
  bool healthy = true;
  std::vector<int64_t> numa;  // empty: no topology
};

struct FakePluginOptions {
  std::string resource = "example.com/dev";
  bool pre_start_required = false;
  bool get_preferred_allocation_available = false;
  // Answer of GetPreferredAllocation (the ids, in order; trimmed to the size asked for).
  std::vector<std::string> preferred;
  std::vector<FakeDevice> devices;
};

class FakeDevicePlugin {
 public:
  static absl::StatusOr<std::unique_ptr<FakeDevicePlugin>> Start(const std::string& dir,
                                                                 const std::string& socket_name,
                                                                 FakePluginOptions options);
  ~FakeDevicePlugin();

  // Register with the kubelet's socket (version "v1beta1" unless given).
  absl::Status Register(const std::string& kubelet_socket, const std::string& version = "v1beta1");
  // Replaces the device list and pushes it to the open ListAndWatch streams.
  void SetDevices(std::vector<FakeDevice> devices);
  // Stops serving (ListAndWatch streams end).
  void Stop();

  std::vector<std::vector<std::string>> AllocateCalls() const;
  std::vector<std::vector<std::string>> PreStartCalls() const;
  int PreferredCalls() const;

 private:
  class Impl;
  explicit FakeDevicePlugin(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kubelet::devicemanager::testing

#endif  // KUBELET_KUBELET_DEVICEMANAGER_TESTING_FAKE_DEVICE_PLUGIN_H_
