// Node wiring.
// - Admission's view of the Node (KubeletOptions::node, upstream getNodeAnyWay): in API-server
//   mode the API server's copy from a watch on the node's own object (list + watch of /api/v1/
//   nodes with metadata.name=<node>), until it exists the Node the kubelet would register;
//   standalone always the latter (labels, --node-labels, registerWithTaints).
// - Node status (API-server mode only): registers the Node, keeps its status and its Lease in
//   kube-node-lease fresh; a status round starts from the watched Node (no GET at rest). Fed by the
//   container manager's machine info and resources, the CRI runtime's version and images, and the
//   Kubelet's runtime / network / PLEG health. Started once the Kubelet runs, stopped at shutdown.
#include <sys/utsname.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "apiclient/reflector.h"
#include "app/version.h"
#include "app/wiring.h"
#include "common/log.h"
#include "kubelet/cm/container_manager.h"
#include "kubelet/devicemanager/device_manager.h"
#include "kubelet/eviction/eviction.h"
#include "kubelet/kubelet.h"
#include "kubelet/nodeshutdown/nodeshutdown_manager.h"
#include "kubelet/nodestatus/node_status.h"
#include "kubelet/nodestatus/runtime_info.h"
#include "kubelet/volume/volume_manager.h"

namespace kubelet::app {
namespace {

// GOARCH of this machine.
std::string Architecture() {
  struct utsname u {};
  if (::uname(&u) != 0) return "amd64";
  const std::string m = u.machine;
  if (m == "x86_64") return "amd64";
  if (m == "aarch64" || m == "arm64") return "arm64";
  if (m.rfind("arm", 0) == 0) return "arm";
  if (m == "ppc64le") return "ppc64le";
  if (m == "s390x") return "s390x";
  if (m == "i386" || m == "i686") return "386";
  return m;
}

// The node options every stage shares (labels, taints, registration settings, frequencies).
nodestatus::NodeStatusOptions BaseOptions(const WiringContext& ctx) {
  const config::KubeletFlags& flags = ctx.settings->flags;
  nodestatus::NodeStatusOptions o = nodestatus::NodeStatusOptionsFromConfig(ctx.settings->config);
  o.node_name = ctx.node_name;
  o.hostname = ctx.node_name;
  o.node_ip = ctx.node_ip;
  o.node_labels = flags.node_labels;
  o.register_schedulable = flags.register_schedulable;
  o.kubelet_version = VersionString();
  o.architecture = Architecture();
  return o;
}

// The watch on the node's own Node object (API-server mode).
struct NodeWatch {
  apiclient::Store store;
  std::unique_ptr<apiclient::Reflector> reflector;
};

// KubeletOptions::node: the watched Node, else the one the kubelet would register.
void WireAdmissionNode(WiringContext& ctx) {
  auto initial = std::make_shared<const api::Node>(nodestatus::InitialNode(BaseOptions(ctx)));
  if (!ctx.api_client) {
    ctx.kubelet_options->node = [initial] { return *initial; };
    return;
  }
  auto watch = std::make_shared<NodeWatch>();
  apiclient::ReflectorOptions ro;
  ro.name = "nodes";
  ro.path = "/api/v1/nodes";
  ro.field_selector = "metadata.name=" + ctx.node_name;
  ro.loops = ctx.loops;
  watch->reflector =
      std::make_unique<apiclient::Reflector>(*ctx.api_client, watch->store, ro, *ctx.clock);
  watch->reflector->Start();
  ctx.components.keep_alive.push_back(watch);
  ctx.AtShutdown([watch] { watch->reflector->Stop(); });
  const std::string name = ctx.node_name;
  ctx.components.watched_node = [watch, name]() -> std::optional<api::Node> {
    std::optional<nlohmann::json> j = watch->store.Get(name);
    if (!j) return std::nullopt;
    absl::StatusOr<api::Node> node = api::FromJson<api::Node>(*j);
    if (!node.ok()) return std::nullopt;
    return *std::move(node);
  };
  ctx.kubelet_options->node = [watched = ctx.components.watched_node, initial]() -> api::Node {
    std::optional<api::Node> node = watched();
    return node ? *std::move(node) : *initial;
  };
}

}  // namespace

absl::Status WireNodeStatus(WiringStage stage, WiringContext& ctx) {
  if (stage == WiringStage::kBeforeKubelet) {
    WireAdmissionNode(ctx);
    return absl::OkStatus();
  }
  if (stage != WiringStage::kAfterKubeletStart || !ctx.api_client) return absl::OkStatus();
  nodestatus::NodeStatusOptions o = BaseOptions(ctx);
  o.watched_node = ctx.components.watched_node;
  o.loops = ctx.loops;
  if (std::shared_ptr<eviction::Manager> em = ctx.components.eviction_manager) {
    o.pressure = [em] {
      const eviction::Pressure p = em->GetPressure();
      return nodestatus::NodeStatusOptions::Pressure{p.memory, p.disk, p.pid};
    };
  }

  if (ctx.simulated != nullptr) {
    o.machine = [facts = *ctx.simulated] { return facts; };
  } else if (std::shared_ptr<cm::ContainerManager> cm = ctx.components.container_manager) {
    nodestatus::MachineFacts facts;
    facts.capacity = cm->Capacity();
    facts.allocatable = cm->Allocatable();
    const cm::MachineInfo& mi = cm->machine_info();
    facts.machine_id = mi.machine_id;
    facts.system_uuid = mi.system_uuid;
    facts.boot_id = mi.boot_id;
    facts.kernel_version = mi.kernel_version;
    facts.os_image = mi.os_image;
    o.machine = [facts, dm = ctx.components.device_manager] {
      if (dm == nullptr) return facts;
      nodestatus::MachineFacts f = facts;
      dm->GetCapacity().ApplyTo(&f.capacity, &f.allocatable);
      return f;
    };
  }
  // The runtime's version and image list are read by a refresher of their own: the status
  // loop (which also renews the Lease) takes the last answer and never waits on a runtime that
  // hangs (each CRI call may take up to runtimeRequestTimeout).
  std::shared_ptr<nodestatus::RuntimeInfoCache> info =
      nodestatus::NewCriRuntimeInfoCache(*ctx.runtime, *ctx.images);
  o.runtime_version = [info] { return info->Version(); };
  o.images = [info] { return info->Images(); };
  ctx.components.keep_alive.push_back(info);
  ctx.AtShutdown([info] { info->Stop(); });
  std::shared_ptr<std::atomic<Kubelet*>> late = ctx.late_kubelet;
  o.readiness_errors = [late, shutdown = ctx.components.node_shutdown_manager]() {
    std::vector<std::string> errs;
    Kubelet* k = late->load();
    if (k == nullptr) return std::vector<std::string>{"kubelet is shutting down"};
    errs = k->ReadinessErrors();
    // upstream ReadyCondition: runtime and network errors, then the node shutdown manager's.
    if (shutdown != nullptr) {
      if (absl::Status st = shutdown->ShutdownStatus(); !st.ok()) {
        errs.emplace_back(st.message());
      }
    }
    return errs;
  };
  // NodeHasSufficientMemory, NodeReady, ... about the Node.
  o.recorder = ctx.recorder;
  if (std::shared_ptr<volume::VolumeManager> vm = ctx.components.volume_manager) {
    o.volumes_in_use = [vm] { return vm->GetVolumesInUse(); };
    o.volumes_reported = [vm](const std::vector<std::string>& names) {
      vm->MarkVolumesAsReportedInUse(names);
    };
  }

  std::shared_ptr<nodestatus::NodeStatusManager> manager =
      nodestatus::NewNodeStatusManager(std::move(o), ctx.api_client, *ctx.clock);
  manager->Start();
  KLOG_INFO("Started node status and lease updates", "node", ctx.node_name);
  ctx.components.keep_alive.push_back(manager);
  ctx.AtShutdown([manager] { manager->Stop(); });
  // Runs before the Stop above (last registered, first run).
  ctx.components.late_node_status->store(manager.get());
  ctx.AtShutdown([late = ctx.components.late_node_status] { late->store(nullptr); });
  return absl::OkStatus();
}

}  // namespace kubelet::app
