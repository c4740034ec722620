// DeviceManager: the kubelet side of the device plugin API v1beta1 (upstream
// pkg/kubelet/cm/devicemanager, v1.28).
//
// - Registration: serves the Registration service on <plugin_dir>/kubelet.sock (the directory is
//   created; every file in it but the checkpoint is removed first, which tells running plugins
//   to register again). A Register call is checked (version "v1beta1", an extended resource
//   name), the plugin's socket <plugin_dir>/<endpoint> is dialled (up to 10 s), its options are
//   read (GetDevicePluginOptions) and its ListAndWatch stream is followed on a thread of its
//   own. A plugin that registers again for the same resource replaces the old connection.
// - Devices: each ListAndWatch message is the resource's full device list. Healthy devices count
//   in capacity and allocatable, unhealthy ones only in capacity. When the stream ends all the
//   resource's devices become unhealthy (allocatable 0); after `stop_grace_period` (5 min) without
//   a new registration the resource is removed and GetCapacity lists it as removed (the node
//   then reports capacity 0 for it, as upstream).
// - Allocation (HintProvider::Allocate, at admission, init containers first): devices for the
//   container's device-plugin limits, reusing an init container's devices for the next
//   containers (not a restartable init container's), preferring the topology manager's NUMA
//   affinity and the plugin's GetPreferredAllocation; then the plugin's Allocate. Devices of pods
//   no longer active are freed first. Errors are upstream's ("requested number of devices
//   unavailable for <r>. Requested: n, Available: m", "cannot allocate unregistered device <r>",
//   "no healthy devices present; cannot allocate unhealthy devices <r>", ...).
// - Containers: GetDeviceRunContainerOptions calls PreStartContainer when the plugin asks for it
//   and merges the Allocate answers (envs, mounts, device specs, annotations, CDI devices with the
//   DevicePluginCDIDevices gate), first mapping per container path winning.
// - Checkpoint: every allocation and device list change writes kubelet_internal_checkpoint
//   (checkpoint.h); Start() restores the allocations and the registered resources (with no
//   devices until their plugin registers again), so running pods keep their devices.
//
// Thread-safety: every public method is thread-safe. Plugin RPCs are made without the lock held.
#ifndef KUBELET_KUBELET_DEVICEMANAGER_DEVICE_MANAGER_H_
#define KUBELET_KUBELET_DEVICEMANAGER_DEVICE_MANAGER_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/node.h"
#include "api/pod.h"
#include "common/clock.h"
#include "cri/proto/api.pb.h"
#include "kubelet/devicemanager/checkpoint.h"
#include "kubelet/topologymanager/hint_provider.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace kubelet::devicemanager {

struct DeviceManagerOptions {
  std::string plugin_dir;          // <root-dir>/device-plugins
  std::vector<int> numa_nodes{0};  // the machine's NUMA node ids, for hints
  bool cdi_devices = false;        // DevicePluginCDIDevices
  absl::Duration stop_grace_period = absl::Minutes(5);
  absl::Duration dial_timeout = absl::Seconds(10);
  absl::Duration rpc_timeout = absl::Seconds(30);
};

// What a container gets from its devices (upstream DeviceRunContainerOptions).
struct DeviceRunContainerOptions {
  std::vector<std::pair<std::string, std::string>> envs;
  std::vector<runtime::v1::Mount> mounts;
  std::vector<runtime::v1::Device> devices;
  std::map<std::string, std::string> annotations;
  std::vector<std::string> cdi_devices;
};

// resource -> device id -> the device's NUMA nodes (empty: it reports no topology).
using ResourceDeviceInstances = std::map<std::string, std::map<std::string, std::vector<int64_t>>>;

struct DevicePluginCapacity {
  api::ResourceList capacity;
  api::ResourceList allocatable;
  // Resources that were registered once and are gone (their grace period over), until a plugin
  // registers them again: the Node keeps them with capacity 0, as upstream's does.
  std::vector<std::string> removed;

  // Sets these resources in a Node's capacity and allocatable (removed ones at 0), over what
  // the machine reports (upstream's MachineInfo node status setter).
  void ApplyTo(api::ResourceList* node_capacity, api::ResourceList* node_allocatable) const;
};

class DeviceManager final : public topologymanager::HintProvider {
 public:
  struct Hooks {
    // Pods admitted and not terminated (their devices stay allocated); nullopt while that is
    // not known yet (pod sources not all read): nothing is freed then. Unset: nothing is freed.
    std::function<std::optional<std::vector<api::PodPtr>>()> active_pods;
    // A resource's devices changed (the Node's capacity should be updated). Unset: nothing.
    std::function<void()> devices_changed;
  };

  // `affinity` (may be null: no NUMA preference) is borrowed and must outlive the manager.
  DeviceManager(DeviceManagerOptions options, const topologymanager::AffinityStore* affinity,
                const Clock& clock);
  ~DeviceManager() override;
  DeviceManager(const DeviceManager&) = delete;
  DeviceManager& operator=(const DeviceManager&) = delete;

  // Restores the checkpoint (a bad one is logged and ignored, as upstream), clears the
  // directory and serves Registration. An error: the socket cannot be served.
  absl::Status Start(Hooks hooks);
  // Stops the server and every plugin stream.
  void Stop();
  std::string SocketPath() const;

  // Capacity and allocatable of the device-plugin resources, and the removed ones (upstream
  // GetCapacity, called by the node status).
  DevicePluginCapacity GetCapacity();
  bool IsDevicePluginResource(const std::string& resource) const;

  // HintProvider.
  topologymanager::TopologyHints GetTopologyHints(const api::Pod& pod,
                                                  const api::Container& container) override;
  topologymanager::TopologyHints GetPodTopologyHints(const api::Pod& pod) override;
  absl::Status Allocate(const api::Pod& pod, const api::Container& container) override;
  // The pod's containers have all stopped: its devices are free (and the checkpoint written).
  void RemovePod(const std::string& pod_uid) override;

  // The container's devices for its CRI config.
  absl::StatusOr<DeviceRunContainerOptions> GetDeviceRunContainerOptions(
      const api::Pod& pod, const api::Container& container);

  // Frees the devices of pods that are no longer active.
  void UpdateAllocatedDevices();
  // Pod resources API: a container's devices; every registered device.
  ResourceDeviceInstances GetDevices(const std::string& pod_uid,
                                     const std::string& container_name) const;
  ResourceDeviceInstances GetAllocatableDevices() const;

 private:
  class Endpoint;
  class RegistrationService;
  struct EndpointInfo;
  struct ContainerAllocation {
    std::map<int64_t, std::vector<std::string>> device_ids;  // by NUMA node
    std::string alloc_resp;                                  // serialized ContainerAllocateResponse
  };
  // pod UID -> container -> resource -> allocation.
  using PodDevices =
      std::map<std::string, std::map<std::string, std::map<std::string, ContainerAllocation>>>;

  absl::Status Register(const std::string& version, const std::string& endpoint,
                        const std::string& resource);
  void OnDevices(const std::string& resource, const Endpoint* from,
                 std::map<std::string, std::vector<int64_t>> healthy_and_topology,
                 std::set<std::string> unhealthy);
  void OnStreamEnded(const std::string& resource, const Endpoint* from);
  absl::Status AllocateContainerResources(const api::Pod& pod, const api::Container& container,
                                          std::map<std::string, std::set<std::string>>* reuse);
  absl::StatusOr<std::set<std::string>> DevicesToAllocate(const std::string& pod_uid,
                                                          const std::string& container,
                                                          const std::string& resource, int required,
                                                          const std::set<std::string>& reusable);
  std::vector<topologymanager::TopologyHint> GenerateHints(const std::string& resource,
                                                           const std::set<std::string>& available,
                                                           const std::set<std::string>& reusable,
                                                           int request) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  topologymanager::TopologyHints HintsFor(const std::string& pod_uid,
                                          const std::string& container_name,
                                          const std::map<std::string, int>& requests);
  void UpdateAllocatedDevicesLocked(const std::string& pending_uid)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::set<std::string> AllocatedLocked(const std::string& resource) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  std::vector<int64_t> NumaOf(const std::string& resource, const std::string& id) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void WriteCheckpoint();
  void ReadCheckpoint();
  std::map<std::string, int> ContainerRequests(const api::Container& container) const;

  const DeviceManagerOptions options_;
  const topologymanager::AffinityStore* const affinity_;
  const Clock& clock_;
  Hooks hooks_;

  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<EndpointInfo>> endpoints_ ABSL_GUARDED_BY(mu_);
  // Every device of a resource with its NUMA nodes; its healthy / unhealthy ids.
  std::map<std::string, std::map<std::string, std::vector<int64_t>>> all_devices_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> healthy_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> unhealthy_ ABSL_GUARDED_BY(mu_);
  PodDevices pod_devices_ ABSL_GUARDED_BY(mu_);
  // Devices picked but whose Allocate call has not returned yet, by resource.
  std::map<std::string, std::set<std::string>> in_flight_ ABSL_GUARDED_BY(mu_);
  // Init containers' devices that the pod's next containers reuse (one pod at a time).
  std::string reuse_pod_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> reuse_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> removed_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;

  absl::Mutex checkpoint_mu_ ABSL_ACQUIRED_AFTER(mu_);
  std::unique_ptr<RegistrationService> service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace kubelet::devicemanager

#endif  // KUBELET_KUBELET_DEVICEMANAGER_DEVICE_MANAGER_H_
