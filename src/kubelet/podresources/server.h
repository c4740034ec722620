// The pod resources API server (upstream pkg/kubelet/apis/podresources, v1, as of v1.28): on
// <root-dir>/pod-resources/kubelet.sock, for node agents (device monitoring, NUMA-aware
// schedulers) to read which devices, exclusive CPUs and memory blocks each container holds:
//   List                     every pod the kubelet knows, each app container's devices (one
//                            entry per device and NUMA node), exclusive CPU ids and memory
//   GetAllocatableResources  every device, the CPUs exclusive allocations may use, the memory
//   Get                      one pod by namespace and name, when KubeletPodResourcesGet is on
//                            ("PodResources API Get method disabled" otherwise; "pod <name> in
//                            namespace <ns> not found")
// Calls beyond the rate limit (a token bucket, 100 per second, burst 10) are answered with
// ResourceExhausted "rejected by rate limit". The kubelet_pod_resources_endpoint_* counters
// count requests and errors.
//
// The kubelet's parts are reached through the Providers callbacks, so the server knows neither
// the device nor the CPU nor the memory manager. Unset providers answer nothing.
// Thread-safety: Start/Stop from one thread; the handlers run on gRPC's threads and call the
// providers concurrently.
#ifndef KUBELET_KUBELET_PODRESOURCES_SERVER_H_
#define KUBELET_KUBELET_PODRESOURCES_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/pod.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace kubelet::podresources {

struct DeviceInstance {
  std::string resource;
  std::string id;
  std::vector<int64_t> numa;  // empty: no topology
};

struct MemoryBlock {
  std::string type;  // "memory", "hugepages-2Mi", ...
  uint64_t size = 0;
  std::vector<int64_t> numa;
};

struct Providers {
  // Every pod the kubelet manages (not mirror pods).
  std::function<std::vector<api::PodPtr>()> pods;
  std::function<std::vector<DeviceInstance>(const std::string& pod_uid,
                                            const std::string& container)>
      devices;
  std::function<std::vector<DeviceInstance>()> allocatable_devices;
  // Frees the devices of pods that are gone before an answer (upstream UpdateAllocatedDevices).
  std::function<void()> update_allocated_devices;
  std::function<std::vector<int64_t>(const std::string& pod_uid, const std::string& container)>
      cpus;
  std::function<std::vector<int64_t>()> allocatable_cpus;
  std::function<std::vector<MemoryBlock>(const std::string& pod_uid, const std::string& container)>
      memory;
  std::function<std::vector<MemoryBlock>()> allocatable_memory;
};

struct ServerOptions {
  std::string socket_path;
  bool get_enabled = false;  // KubeletPodResourcesGet
  double qps = 100;
  int burst = 10;
};

// Upstream's rate limiter (golang.org/x/time/rate): `qps` tokens a second, at most `burst`
// stored, a full bucket at the start. Thread-safe.
class TokenBucket {
 public:
  TokenBucket(double qps, int burst, std::function<absl::Time()> now = absl::Now);
  bool Allow();

 private:
  const double qps_;
  const double burst_;
  const std::function<absl::Time()> now_;
  absl::Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Time> last_ ABSL_GUARDED_BY(mu_);
};

class PodResourcesServer {
 public:
  PodResourcesServer(ServerOptions options, Providers providers);
  ~PodResourcesServer();
  PodResourcesServer(const PodResourcesServer&) = delete;
  PodResourcesServer& operator=(const PodResourcesServer&) = delete;

  // Creates the socket's directory (0750), removes a stale socket and serves. An error: the
  // socket cannot be served.
  absl::Status Start();
  void Stop();

 private:
  class Service;
  const ServerOptions options_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace kubelet::podresources

#endif  // KUBELET_KUBELET_PODRESOURCES_SERVER_H_
