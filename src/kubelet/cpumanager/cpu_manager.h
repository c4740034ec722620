// The CPU manager (upstream pkg/kubelet/cm/cpumanager, v1.28): which CPUs each container may run
// on, as its cpuset.cpus.
//
// Policies (cpuManagerPolicy):
//   none    containers run on every CPU; the manager only keeps its state file.
//   static  containers of Guaranteed pods with an integral CPU request get exclusive CPUs
//           (policy_static.h: choice, options, errors); every other container runs on the
//           shared pool (the default set: every CPU not exclusively assigned, reserved ones
//           included). The topology manager consults it as a HintProvider ("cpu" hints) and
//           calls Allocate at admission.
//
// State: <state dir>/cpu_manager_state (state_checkpoint.h, byte-compatible with upstream's),
// restored by Create and rewritten after every change. A file written under another policy, or
// one that does not parse, fails Create with upstream's text:
//   could not restore state from checkpoint: configured policy "static" differs from state
//   checkpoint policy "none", please drain this node and delete the CPU manager checkpoint file
//   "/var/lib/kubelet/cpu_manager_state" before restarting Kubelet
// and a restored state the static policy finds inconsistent fails it with the policy's message
// (policy_static.h). A missing file starts empty (static: the shared pool is every CPU).
//
// Life of a container: Allocate (admission; first drops the state of pods no longer active) →
// AddContainer (before it starts; created with GetCPUAffinity as its cpuset) → RemoveContainer
// once removed (frees its exclusive CPUs; a no-op for an id the container map no longer holds,
// e.g. an earlier instance of a restarted container: call it when a container is removed, not
// when it merely exits and may restart) → the pod's state goes with RemovePod or when it is no
// longer among the active pods.
//
// Reconcile (static only), after Start: a Clock timer every reconcile period (default 10 s) and,
// at once, after any change of the shared pool (upstream waits for the next period): every
// running container of the active pods (init containers included) gets update_container_cpuset
// with GetCPUAffinity when that differs from what was last applied to that container id (the
// exclusive set is taken as applied by AddContainer); failures are logged and retried next round.
// Containers found running but not added yet are adopted (after a kubelet restart).
//
// Thread-safety: every method is thread-safe. The Runtime callbacks are called without the
// manager's state lock held, but active_pods (and sources_ready) with allocations held off:
// they must not call back into the manager nor wait for a thread inside Allocate or the hint
// methods.
#ifndef KUBELET_KUBELET_CPUMANAGER_CPU_MANAGER_H_
#define KUBELET_KUBELET_CPUMANAGER_CPU_MANAGER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/pod.h"
#include "common/clock.h"
#include "config/cpuset.h"
#include "config/feature_gates.h"
#include "config/kubelet_configuration.h"
#include "kubelet/cpumanager/policy_options.h"
#include "kubelet/cpumanager/policy_static.h"
#include "kubelet/cpumanager/state.h"
#include "kubelet/cpumanager/state_checkpoint.h"
#include "kubelet/topology/topology.h"
#include "kubelet/topologymanager/hint_provider.h"

namespace kubelet::cpumanager {

inline constexpr char kPolicyNone[] = "none";
inline constexpr char kPolicyStatic[] = "static";
inline constexpr absl::Duration kDefaultReconcilePeriod = absl::Seconds(10);

struct CPUManagerOptions {
  std::string policy = kPolicyNone;                   // cpuManagerPolicy
  std::map<std::string, std::string> policy_options;  // cpuManagerPolicyOptions
  // Gates CPUManagerPolicyAlphaOptions / CPUManagerPolicyBetaOptions.
  bool policy_alpha_options = false;
  bool policy_beta_options = true;
  absl::Duration reconcile_period = kDefaultReconcilePeriod;  // cpuManagerReconcilePeriod
  // Where cpu_manager_state lives: the kubelet's --root-dir. Created when missing.
  std::string state_dir;
  topology::CPUTopology topology;
  // reservedSystemCPUs; when empty the static policy reserves ceil(reserved_millicpu / 1000)
  // CPUs by topology.
  config::CPUSet reserved_cpus;
  // kubeReserved.cpu + systemReserved.cpu in millicores (reservedSystemCPUs' size when that is
  // set); nullopt when nothing is reserved (upstream's node allocatable reservation has no "cpu").
  std::optional<int64_t> reserved_millicpu;
  // topologyManagerPolicy, for align-by-socket's check.
  std::string topology_manager_policy = "none";
};

// The configuration's part (wiring adds state_dir and topology). Errors:
//   CPU Manager policy options map[full-pcpus-only:true] require feature gates "CPUManager",
//   "CPUManagerPolicyOptions" enabled
//   unable to parse reserved-cpus list: <error>
//   kubeReserved: cpu: <quantity error> (systemReserved likewise)
// reservedSystemCPUs replaces the CPU reservation (its size counts), as upstream.
absl::StatusOr<CPUManagerOptions> CPUManagerOptionsFromConfig(const config::KubeletConfiguration& c,
                                                              const config::FeatureGate& gates);
// The fields read. topologyManagerPolicy is read too but belongs to the topology manager.
inline constexpr std::string_view kCPUManagerConfigFields[] = {
    "cpuManagerPolicy",
    "cpuManagerPolicyOptions",
    "cpuManagerReconcilePeriod",
    "reservedSystemCPUs",
    "kubeReserved",
    "systemReserved",
};

class CPUManager final : public topologymanager::HintProvider {
 public:
  // What reconciling needs from the kubelet.
  struct Runtime {
    // The pods that are not terminated (upstream activePods).
    std::function<std::vector<api::PodPtr>()> active_pods;
    // The id of the container's running instance, nullopt when it is not running.
    std::function<std::optional<std::string>(const std::string& pod_uid,
                                             const std::string& container_name)>
        running_container_id;
    // CRI UpdateContainerResources with linux.cpuset_cpus = cpus.String().
    std::function<absl::Status(const std::string& container_id, const config::CPUSet& cpus)>
        update_container_cpuset;
    // Whether every pod source has been seen (upstream sourcesReady.AllReady): until then the
    // state of pods missing from active_pods is kept. Unset: always ready.
    std::function<bool()> sources_ready;
  };

  // Errors: `unknown policy: "x"`; the none policy with options ("new none policy error: None
  // policy: received unsupported options=map[...]"); for static "[cpumanager] unable to
  // determine reserved CPU resources for static policy" (no reservation), "[cpumanager] the
  // static policy requires systemreserved.cpu + kubereserved.cpu to be greater than zero" (a
  // zero one), "new static policy error: <options / reservation error>"; the state file's and
  // the restored state's errors (above). `affinity` may be null (no NUMA preference); borrowed,
  // as `clock`; both must outlive the manager.
  static absl::StatusOr<std::unique_ptr<CPUManager>> Create(
      CPUManagerOptions options, const topologymanager::AffinityStore* affinity, Clock* clock);
  ~CPUManager() override;

  CPUManager(const CPUManager&) = delete;
  CPUManager& operator=(const CPUManager&) = delete;

  const std::string& policy_name() const { return options_.policy; }
  std::string state_file() const;

  // HintProvider: "cpu" hints for a Guaranteed pod's integral-CPU containers (none otherwise,
  // and none under the none policy); Allocate assigns exclusive CPUs (static).
  topologymanager::TopologyHints GetTopologyHints(const api::Pod& pod,
                                                  const api::Container& container) override;
  topologymanager::TopologyHints GetPodTopologyHints(const api::Pod& pod) override;
  absl::Status Allocate(const api::Pod& pod, const api::Container& container) override;

  // Before the container starts: maps its id to (pod, container).
  void AddContainer(const api::Pod& pod, const api::Container& container,
                    const std::string& container_id);
  // The container was removed: its exclusive CPUs return to the shared pool (those a sibling
  // still holds excepted). Unknown ids are ignored. Always OK (an error is reserved for future
  // policies, as upstream).
  absl::Status RemoveContainer(const std::string& container_id);
  // Every container of the pod has stopped (the topology manager's CleanupTerminatedPod): drops
  // everything of the pod, its exclusive CPUs return to the shared pool.
  void RemovePod(const std::string& pod_uid) override;

  // The container's cpuset.cpus: its exclusive CPUs, else the shared pool; empty under none
  // (no cpuset to set).
  config::CPUSet GetCPUAffinity(const std::string& pod_uid,
                                const std::string& container_name) const;
  // For the pod resources API: exclusive CPUs (empty if none), CPUs exclusive allocations may
  // use (every CPU but the reserved ones; empty under none), the reserved CPUs (empty under none),
  // every CPU of the machine.
  config::CPUSet GetExclusiveCPUs(const std::string& pod_uid,
                                  const std::string& container_name) const;
  config::CPUSet GetAllocatableCPUs() const { return allocatable_; }
  config::CPUSet GetReservedCPUs() const { return reserved_; }
  config::CPUSet GetAllCPUs() const { return options_.topology.CPUs(); }
  // The shared pool (empty under none).
  config::CPUSet GetDefaultCPUSet() const;

  // Starts reconciling (static policy; a no-op loop-wise under none). Once.
  void Start(Runtime runtime);
  // Ends the reconcile loop and waits for it. Idempotent; also done by the destructor.
  void Stop();

  // One reconcile pass now, on the caller's thread (the loop's body; passes never overlap).
  void ReconcileOnce();

 private:
  CPUManager(CPUManagerOptions options, std::optional<StaticPolicy> policy, CPUState state,
             const topologymanager::AffinityStore* affinity, Clock* clock);

  struct ContainerRef {
    std::string pod_uid;
    std::string name;
    auto operator<=>(const ContainerRef&) const = default;
  };

  Runtime RuntimeCopy() const ABSL_LOCKS_EXCLUDED(mu_);
  // Drops the state of containers of pods no longer active. Needs alloc_mu_.
  void RemoveStaleState() ABSL_EXCLUSIVE_LOCKS_REQUIRED(alloc_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  void RemoveContainerLocked(const ContainerRef& ref) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MapContainerLocked(const ContainerRef& ref, const std::string& id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UnmapContainerLocked(const ContainerRef& ref) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes the state file when the state changed since the last write; errors are logged.
  absl::Status PersistLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Poke() ABSL_LOCKS_EXCLUDED(loop_mu_);
  void Loop();

  const CPUManagerOptions options_;
  const topologymanager::AffinityStore* const affinity_;
  Clock* const clock_;
  const config::CPUSet allocatable_;
  const config::CPUSet reserved_;

  // Held across fetching the active pods and dropping stale state, and by Allocate, so a pod
  // admitted meanwhile cannot lose its fresh allocation to a stale view.
  absl::Mutex alloc_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  std::optional<StaticPolicy> policy_ ABSL_GUARDED_BY(mu_);
  CPUState state_ ABSL_GUARDED_BY(mu_);
  std::optional<CPUManagerCheckpoint> persisted_ ABSL_GUARDED_BY(mu_);
  // The container map: one id per (pod, container), the latest.
  std::map<std::string, ContainerRef> containers_ ABSL_GUARDED_BY(mu_);
  std::map<ContainerRef, std::string> container_ids_ ABSL_GUARDED_BY(mu_);
  // Container id -> the cpuset last applied to it (upstream lastUpdateState).
  std::map<std::string, config::CPUSet> last_applied_ ABSL_GUARDED_BY(mu_);
  std::optional<Runtime> runtime_ ABSL_GUARDED_BY(mu_);

  absl::Mutex reconcile_mu_;  // one pass at a time
  absl::Mutex loop_mu_;
  bool stop_ ABSL_GUARDED_BY(loop_mu_) = false;
  bool poked_ ABSL_GUARDED_BY(loop_mu_) = false;
  bool started_ ABSL_GUARDED_BY(loop_mu_) = false;
  std::thread loop_ ABSL_GUARDED_BY(loop_mu_);
};

}  // namespace kubelet::cpumanager

#endif  // KUBELET_KUBELET_CPUMANAGER_CPU_MANAGER_H_
