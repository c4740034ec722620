// The kubelet's Node in API-server mode (upstream pkg/kubelet/kubelet_node_status.go,
// pkg/kubelet/nodestatus and component-helpers' node lease controller, v1.28):
//
// - Registration: the Node is built from the options (standard os/arch/hostname labels,
//   --node-labels, registerWithTaints, spec.unschedulable = !registerSchedulable, providerID, the
//   controller-managed-attach-detach annotation) and its first status, then POSTed. When it
//   already exists it is read and reconciled as upstream does (default labels, the CMAD
//   annotation) and patched. While the API server cannot be reached, registration is retried with
//   back-off (100 ms doubling to 7 s) without blocking anyone.
// - Status: computed every `update_frequency`, jittered by up to `period_jitter` (addresses,
//   capacity/allocatable, node info, daemon endpoints, images, MemoryPressure/DiskPressure/
//   PIDPressure and Ready conditions with upstream's reasons and messages; heartbeat every round,
//   transition time only on a flip) and sent as a strategic merge patch of nodes/<name>/status
//   only when it changed or `report_frequency` passed since the last report. Up to 5 tries per
//   round: the first starts from the watched Node (`watched_node`) or a GET from the API
//   server's cache, the others from a fresh GET. A status update that finds the Node gone (404)
//   registers it again.
// - Lease: kube-node-lease/<name> created or renewed every lease_duration * 0.25 (jittered
//   alike) with holderIdentity = node name, leaseDurationSeconds, renewTime, and an owner
//   reference to the Node once its uid is known; a conflict or a vanished Lease re-reads /
//   re-creates it; failures are retried with back-off (up to 7 s).
//
// Threads: Start() runs one loop doing all three (common/loops.h: on options.loops, else a
// thread of its own); Stop() cancels its in-flight API requests and waits for it. The data
// callbacks in NodeStatusOptions run in that loop (or on the caller's thread for
// SyncNodeStatus()/RenewLease()), never under a lock of this component. SyncNodeStatus() and
// RenewLease() are one round each, for tests driving a fake clock; do not call them while the
// loop runs. Ownership: the manager shares the RestClient; `clock` must outlive it.
#ifndef KUBELET_KUBELET_NODESTATUS_NODE_STATUS_H_
#define KUBELET_KUBELET_NODESTATUS_NODE_STATUS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/coordination.h"
#include "api/node.h"
#include "apiclient/rest_client.h"
#include "common/clock.h"
#include "common/loops.h"
#include "config/kubelet_configuration.h"
#include "kubelet/events/event_recorder.h"

namespace kubelet::nodestatus {

inline constexpr char kLabelHostname[] = "kubernetes.io/hostname";
inline constexpr char kLabelOS[] = "kubernetes.io/os";
inline constexpr char kLabelArch[] = "kubernetes.io/arch";
inline constexpr char kLabelBetaOS[] = "beta.kubernetes.io/os";
inline constexpr char kLabelBetaArch[] = "beta.kubernetes.io/arch";
inline constexpr char kAnnotationCMAD[] = "volumes.kubernetes.io/controller-managed-attach-detach";

// Machine facts for the node info and the resources (capacity and allocatable as the container
// manager computes them).
struct MachineFacts {
  api::ResourceList capacity;
  api::ResourceList allocatable;
  std::string machine_id;
  std::string system_uuid;
  std::string boot_id;
  std::string kernel_version;
  std::string os_image;
};

// One image of the runtime (CRI ListImages).
struct ImageInfo {
  std::vector<std::string> repo_tags;
  std::vector<std::string> repo_digests;
  int64_t size_bytes = 0;
};

struct NodeStatusOptions {
  // The runner of the status and Lease loop; null: a thread of its own. Must outlive the
  // manager.
  Loops* loops = nullptr;
  std::string node_name;
  std::string hostname;  // the Hostname address (the node name when empty)
  std::string node_ip;   // the InternalIP address; none when empty
  int32_t kubelet_port = 10250;
  std::map<std::string, std::string> node_labels;  // --node-labels
  std::vector<api::Taint> register_with_taints;
  bool register_node = true;
  bool register_schedulable = true;
  std::string provider_id;
  bool enable_controller_attach_detach = true;
  std::string kubelet_version;
  std::string operating_system = "linux";
  std::string architecture = "amd64";
  absl::Duration update_frequency = absl::Seconds(10);  // nodeStatusUpdateFrequency
  absl::Duration report_frequency = absl::Minutes(5);   // nodeStatusReportFrequency
  int32_t lease_duration_seconds = 40;                  // nodeLeaseDurationSeconds
  // The status and Lease periods are jittered by up to this factor (upstream's JitterUntil with
  // 0.04), so that nodes started together spread their writes over the period.
  double period_jitter = 0.04;
  int32_t max_images = 50;  // nodeStatusMaxImages (-1: all)
  // Per-request bound of every API call.
  absl::Duration request_timeout = absl::Seconds(10);

  // Data sources (see the header comment for where they run). Unset ones contribute nothing.
  // The Node as the kubelet's watch on it last saw it (nullopt: not seen yet). A status round's
  // first try starts from it instead of a GET (upstream's nodeLister); unset or nullopt: a GET
  // served from the API server's cache (resourceVersion=0). Retries always GET from etcd.
  std::function<std::optional<api::Node>()> watched_node;
  std::function<MachineFacts()> machine;
  // e.g. "containerd://1.6.20"; an error leaves the previous value.
  std::function<absl::StatusOr<std::string>()> runtime_version;
  std::function<absl::StatusOr<std::vector<ImageInfo>>()> images;
  // Why the node is not ready (upstream runtimeErrors + networkErrors: "container runtime is
  // down", "PLEG is not healthy: ...", "container runtime network not ready: ..."); empty: ready.
  std::function<std::vector<std::string>()> readiness_errors;
  // The eviction manager's pressure conditions (MemoryPressure, DiskPressure, PIDPressure).
  // Unset: no pressure. Called from SetNodeStatus; must be cheap and thread-safe.
  struct Pressure {
    bool memory = false;
    bool disk = false;
    bool pid = false;
  };
  std::function<Pressure()> pressure;
  // status.volumesInUse: the unique names of the attachable volumes this node uses or is about
  // to use (upstream volumeManager.GetVolumesInUse, sorted). Unset: none.
  std::function<std::vector<std::string>()> volumes_in_use;
  // Called with the volumesInUse the Node's status holds after a successful round (upstream
  // MarkVolumesAsReportedInUse): the volume manager mounts an attachable volume only once it
  // was reported, so the attach/detach controller never detaches a volume being mounted.
  std::function<void(const std::vector<std::string>&)> volumes_reported;

  // Node events (upstream recordNodeStatusEvent), "Node <name> status is now: <reason>" about
  // events::NodeRef(node_name): NodeHasSufficientMemory / NodeHasNoDiskPressure /
  // NodeHasSufficientPID when SetNodeStatus creates or flips that condition, NodeReady /
  // NodeNotReady when it flips an existing Ready condition. Null: none. Borrowed; must outlive
  // the manager; called from SetNodeStatus (the status thread).
  events::EventRecorder* recorder = nullptr;
};

// Reads port, registration (registerNode, registerWithTaints, providerID, CMAD) and the status
// and Lease periods and image count (zero or negative periods keep the defaults).
NodeStatusOptions NodeStatusOptionsFromConfig(const config::KubeletConfiguration& c);
inline constexpr std::string_view kNodeStatusConfigFields[] = {
    "port",
    "registerWithTaints",
    "registerNode",
    "providerID",
    "enableControllerAttachDetach",
    "nodeStatusUpdateFrequency",
    "nodeStatusReportFrequency",
    "nodeLeaseDurationSeconds",
    "nodeStatusMaxImages",
};

// The Node to register (labels, taints, annotation, spec) without status.
api::Node InitialNode(const NodeStatusOptions& options);

// Sets every part of `node->status` the kubelet owns for time `now`; conditions of other types
// are kept. Condition transitions are recorded as node events (NodeStatusOptions::recorder).
// `machine`/`runtime_version`/`images`/`readiness_errors`/`volumes_in_use` are what the
// callbacks gave.
void SetNodeStatus(const NodeStatusOptions& options, const MachineFacts& machine,
                   const std::string& runtime_version, const std::vector<ImageInfo>& images,
                   const std::vector<std::string>& readiness_errors,
                   const std::vector<std::string>& volumes_in_use, absl::Time now, api::Node* node);

// status.nodeInfo.containerRuntimeVersion from CRI Version's runtime name and version, as
// upstream prints it: "<name>://<version>" with the version parsed as a semantic version, else
// as a generic one (k8s.io/apimachinery util/version), and printed back ("1.6.20~ds1" ->
// "1.6.20", "v1.28.11" -> "1.28.11"); "<name>://Unknown" when neither parses.
std::string RuntimeVersionString(std::string_view name, std::string_view version);

// Whether the statuses differ other than in the conditions' heartbeat times.
bool NodeStatusChanged(const api::NodeStatus& before, const api::NodeStatus& after);

// Reconciles an existing Node with the one this kubelet would register (default labels, the
// CMAD annotation); returns whether `existing` changed.
bool ReconcileExistingNode(const api::Node& initial, api::Node* existing);

class NodeStatusManager {
 public:
  virtual ~NodeStatusManager() = default;

  // Starts the loop; at most once.
  virtual void Start() = 0;
  // Stops the loop promptly (cancels in-flight requests); idempotent.
  virtual void Stop() = 0;

  // One round: registers the Node when it is not registered (one attempt), else updates its
  // status (up to 5 tries). OK when the Node is registered and its status is current.
  virtual absl::Status SyncNodeStatus() = 0;
  // One lease round: create or renew (conflict: re-read and retry, up to 5 tries).
  virtual absl::Status RenewLease() = 0;

  // Asks the status loop for a round now (e.g. volumesInUse changed); non-blocking.
  virtual void RequestStatusUpdate() = 0;

  virtual bool Registered() const = 0;
  // The uid of the registered Node ("" before registration).
  virtual std::string NodeUID() const = 0;
};

std::unique_ptr<NodeStatusManager> NewNodeStatusManager(
    NodeStatusOptions options, std::shared_ptr<apiclient::RestClient> client, Clock& clock);

}  // namespace kubelet::nodestatus

#endif  // KUBELET_KUBELET_NODESTATUS_NODE_STATUS_H_
