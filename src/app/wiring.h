// How the subsystems are put together in app::Run, one wiring function per subsystem
// (wire_<subsystem>.cc), called at fixed stages of the start-up sequence:
//
//   kBeforeRuntimeManager  CRI services connected; `runtime_options` and `kubelet_options` may
//                          still be changed (hooks such as cgroup_parent, container_mounts,
//                          run_lifecycle_handler, liveness_failed; allocatable; probe_state).
//   kBeforeKubelet         the runtime manager exists; add PodLifecycleParticipants to
//                          `kubelet_options->participants`.
//   kAfterKubeletStart     the Kubelet runs; start servers and periodic managers.
//
// Each stage calls the subsystems in the order of kWiringOrder (container manager first, the
// HTTP API last, so the server can expose what the others built). A wiring function keeps what
// it builds in `components` and registers its stop action with AtShutdown (run in reverse
// order when the kubelet exits). An error aborts start-up with that message.
//
// Thread-safety: called from the start-up thread only.
#ifndef KUBELET_APP_WIRING_H_
#define KUBELET_APP_WIRING_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "api/node.h"
#include "app/options.h"
#include "common/clock.h"
#include "cri/runtime_service.h"
#include "kubelet/events/event_recorder.h"

namespace kubelet {
class Kubelet;
struct KubeletOptions;
class Loops;
namespace kuberuntime {
class KubeGenericRuntimeManager;
struct Options;
}  // namespace kuberuntime
namespace server {
class Configz;
}  // namespace server
namespace apiclient {
class RestClient;
}  // namespace apiclient
namespace cm {
class ContainerManager;
}
namespace volume {
class ExternalVolumePlugin;
class VolumeManager;
class ObjectSource;
class ClaimSource;
class TokenManager;
}  // namespace volume
namespace prober {
class ProberManager;
}
namespace logs {
class ContainerLogManager;
}
namespace stats {
class StatsProvider;
}
namespace images {
class ImageGCManager;
}
namespace eviction {
class Manager;
}
namespace csi {
class DriverRegistry;
class CsiClient;
}  // namespace csi
namespace nodestatus {
class NodeStatusManager;
struct MachineFacts;
}  // namespace nodestatus
namespace nodeshutdown {
class Manager;
}
namespace topologymanager {
class TopologyManager;
}
namespace devicemanager {
class DeviceManager;
}
namespace cpumanager {
class CPUManager;
}
namespace memorymanager {
class MemoryManager;
}
}  // namespace kubelet

namespace kubelet::app {

enum class WiringStage { kBeforeRuntimeManager, kBeforeKubelet, kAfterKubeletStart };

// The services watch behind the containers' service variables (wire_services.cc).
struct ServiceWatch;

// What each subsystem built, for the ones wired after it. Owned by app::Run.
struct Components {
  std::shared_ptr<cm::ContainerManager> container_manager;
  // The resource managers (WireResourceManagers): the topology manager and its hint providers.
  std::shared_ptr<topologymanager::TopologyManager> topology_manager;
  std::shared_ptr<devicemanager::DeviceManager> device_manager;
  std::shared_ptr<cpumanager::CPUManager> cpu_manager;
  std::shared_ptr<memorymanager::MemoryManager> memory_manager;
  // API-server mode: configMaps/secrets and service account tokens (null standalone).
  std::shared_ptr<volume::ObjectSource> object_source;
  std::shared_ptr<volume::TokenManager> token_manager;
  std::shared_ptr<volume::ClaimSource> claim_source;
  // CSI (WirePlugins): registered drivers, the client to them, and the volume plugins of other
  // components the volume manager asks for the volumes it does not support itself (declared
  // before it, so they outlive it).
  std::shared_ptr<csi::DriverRegistry> csi_drivers;
  std::shared_ptr<csi::CsiClient> csi_client;
  std::vector<std::shared_ptr<volume::ExternalVolumePlugin>> external_volume_plugins;
  std::shared_ptr<volume::VolumeManager> volume_manager;
  std::shared_ptr<prober::ProberManager> prober_manager;
  std::shared_ptr<logs::ContainerLogManager> log_manager;
  std::shared_ptr<stats::StatsProvider> stats_provider;
  std::shared_ptr<images::ImageGCManager> image_gc_manager;
  std::shared_ptr<eviction::Manager> eviction_manager;
  // Graceful node shutdown (WireNodeShutdown); its ShutdownStatus feeds the Ready condition.
  std::shared_ptr<nodeshutdown::Manager> node_shutdown_manager;
  // API-server mode: the Node as the kubelet's watch on it last saw it (nullopt until seen);
  // null standalone.
  std::function<std::optional<api::Node>()> watched_node;
  // The node status manager for hooks built before it (API-server mode): null until
  // kAfterKubeletStart, null again once shutdown begins.
  std::shared_ptr<std::atomic<nodestatus::NodeStatusManager*>> late_node_status =
      std::make_shared<std::atomic<nodestatus::NodeStatusManager*>>(nullptr);
  // Anything else a wiring function must keep alive until shutdown.
  std::vector<std::shared_ptr<void>> keep_alive;
};

struct WiringContext {
  const Settings* settings = nullptr;  // flags, config, feature gates
  std::string node_name;
  std::string node_ip;
  cri::RuntimeService* runtime = nullptr;
  cri::ImageManagerService* images = nullptr;
  Clock* clock = nullptr;
  server::Configz* configz = nullptr;  // may be null: nothing registered
  // A simulated node (a hollow node, app/hollow.h): the machine it reports. WireAll then calls
  // only the subsystems that need no machine of their own (kWiringOrder's `simulated` column),
  // and the Kubelet's allocatable comes from here. Null on a real node.
  const nodestatus::MachineFacts* simulated = nullptr;
  // A services watch the nodes of this process share (hollow nodes), started and stopped by its
  // owner; null: the node watches services itself.
  std::shared_ptr<ServiceWatch> shared_services;
  // The runner of the node's loops (common/loops.h) shared by the nodes of the process (hollow
  // nodes); null: each loop on a thread of its own.
  Loops* loops = nullptr;
  // API-server mode (--kubeconfig): the client every API component shares (shared: each keeps
  // it for its own lifetime, and their stop order is theirs). Null in standalone mode, where no
  // API component is wired.
  std::shared_ptr<apiclient::RestClient> api_client;
  // Where subsystems record pod events (events/event_recorder.h). Set before every stage.
  events::EventRecorder* recorder = nullptr;
  // Writable at kBeforeRuntimeManager (runtime_options) / up to kBeforeKubelet (kubelet_options).
  kuberuntime::Options* runtime_options = nullptr;
  KubeletOptions* kubelet_options = nullptr;
  // Set from kBeforeKubelet / kAfterKubeletStart on.
  kuberuntime::KubeGenericRuntimeManager* runtime_manager = nullptr;
  Kubelet* kubelet = nullptr;
  // The Kubelet for hooks built before it exists: null until kAfterKubeletStart, null again
  // once shutdown begins (set by app::Run). Hooks load it on each call.
  std::shared_ptr<std::atomic<Kubelet*>> late_kubelet =
      std::make_shared<std::atomic<Kubelet*>>(nullptr);

  Components components;

  void AtShutdown(std::function<void()> fn) { shutdown_.push_back(std::move(fn)); }
  // Runs the shutdown actions, last registered first.
  void Shutdown() {
    for (auto it = shutdown_.rbegin(); it != shutdown_.rend(); ++it) (*it)();
    shutdown_.clear();
  }

 private:
  std::vector<std::function<void()>> shutdown_;
};

// One per subsystem (wire_<name>.cc).
// The process's malloc: one arena, free pages returned to the kernel once a minute.
absl::Status WireMemory(WiringStage stage, WiringContext& ctx);
absl::Status WireContainerManager(WiringStage stage, WiringContext& ctx);
// A simulated node's machine (ctx.simulated): the Kubelet's allocatable from it, as the
// container manager sets it on a real node. A no-op on a real node.
absl::Status WireSimulatedMachine(WiringStage stage, WiringContext& ctx);
// The topology, CPU, memory and device managers and the pod resources API.
absl::Status WireResourceManagers(WiringStage stage, WiringContext& ctx);
// configMap/secret source, tokens, env lookups and image pull credentials.
absl::Status WireClusterContent(WiringStage stage, WiringContext& ctx);
absl::Status WireVolumeManager(WiringStage stage, WiringContext& ctx);
absl::Status WireProber(WiringStage stage, WiringContext& ctx);
absl::Status WireLogs(WiringStage stage, WiringContext& ctx);
absl::Status WireImages(WiringStage stage, WiringContext& ctx);
absl::Status WireStats(WiringStage stage, WiringContext& ctx);
absl::Status WireEviction(WiringStage stage, WiringContext& ctx);
// Graceful node shutdown: logind's inhibitor lock, pods killed by priority, the last admitter.
absl::Status WireNodeShutdown(WiringStage stage, WiringContext& ctx);
// The secure port when enableServer (its settings: server::KubeletServerOptionsFromConfig), the
// read-only port when readOnlyPort is set.
absl::Status WireHttpServer(WiringStage stage, WiringContext& ctx);
inline constexpr std::string_view kHttpServerWiringConfigFields[] = {"enableServer"};
// CSI: the driver registry and the volume plugin (before the volume manager), the plugin manager
// (plugins_registry) and the driver registrations (once the Kubelet runs).
absl::Status WirePlugins(WiringStage stage, WiringContext& ctx);
// API-server mode only: Node registration, node status and the node Lease.
absl::Status WireNodeStatus(WiringStage stage, WiringContext& ctx);
absl::Status WireApiPods(WiringStage stage, WiringContext& ctx);
// API-server mode only: the services watch behind the containers' service variables.
absl::Status WireServices(WiringStage stage, WiringContext& ctx);
// A services watch on `client` (checkpointed at `checkpoint_path`), for nodes that share one
// (WiringContext::shared_services); its reflector's loop on `loops` (null: a thread of its own).
// StopServiceWatch ends it.
std::shared_ptr<ServiceWatch> StartServiceWatch(std::shared_ptr<apiclient::RestClient> client,
                                                const std::string& checkpoint_path, Clock& clock,
                                                Loops* loops = nullptr);
void StopServiceWatch(ServiceWatch& watch);

// The event recorder every subsystem records to (upstream makeEventRecorder), made once in
// app::Run before the stages. Standalone (`events_client` null): events only go to the log
// ("Event occurred", --v=3). API-server mode: they are also posted as core/v1 Events by a
// sender thread (events/sink_recorder.h: upstream's correlator, retries, bounded queue) on
// `events_client` (upstream's separate event client, eventRecordQPS / eventBurst).
struct EventRecording {
  std::unique_ptr<events::EventRecorder> recorder;
  // Flushes what is queued (bounded) and stops the sender; a no-op standalone. Idempotent.
  // Registered with AtShutdown before any subsystem, so it runs after they all stopped.
  std::function<void()> stop;
};
EventRecording MakeEventRecorder(std::shared_ptr<apiclient::RestClient> events_client,
                                 const std::string& node_name, Clock& clock);

// Calls every wiring function for `stage`, in order (on a simulated node only those that need
// no machine); stops at the first error.
absl::Status WireAll(WiringStage stage, WiringContext& ctx);

}  // namespace kubelet::app

#endif  // KUBELET_APP_WIRING_H_
