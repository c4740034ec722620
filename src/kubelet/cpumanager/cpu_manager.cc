#include "kubelet/cpumanager/cpu_manager.h"

#include <filesystem>
#include <set>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "api/quantity.h"
#include "api/static_pod.h"
#include "common/files.h"
#include "common/guarded.h"
#include "common/log.h"
#include "common/strings.h"
#include "config/go_text.h"

namespace kubelet::cpumanager {
namespace {

using config::CPUSet;
using topologymanager::TopologyHints;

absl::StatusOr<int64_t> ReservedMilliCPU(const std::map<std::string, std::string>& reserved,
                                         std::string_view field) {
  auto it = reserved.find(api::kResourceCPU);
  if (it == reserved.end()) return 0;
  absl::StatusOr<api::Quantity> q = api::ParseQuantity(it->second);
  if (!q.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(AV(field), ": cpu: ", q.status().message()));
  }
  return q->MilliValue();
}

absl::Status RestoreError(const absl::Status& err, const std::string& path) {
  return absl::Status(err.code(),
                      absl::StrCat("could not restore state from checkpoint: ", err.message(),
                                   ", please drain this node and delete the CPU manager "
                                   "checkpoint file ",
                                   log::Quote(path), " before restarting Kubelet"));
}

// The restored state; nullopt when there is no file.
absl::StatusOr<std::optional<CPUState>> ReadState(const std::string& path,
                                                  std::string_view policy) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::optional<CPUState>();
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<CPUManagerCheckpoint> cp = UnmarshalCheckpoint(*text);
  if (!cp.ok()) return cp.status();
  absl::StatusOr<CPUState> state = FromCheckpoint(*cp, policy);
  if (!state.ok()) return state.status();
  KLOG_V(2, "State checkpoint: restored state from checkpoint");
  KLOG_V(2, "State checkpoint: defaultCPUSet", "defaultCpuSet", state->default_cpu_set.String());
  return std::optional<CPUState>(*std::move(state));
}

std::vector<const api::Container*> AllContainers(const api::Pod& pod) {
  std::vector<const api::Container*> out;
  for (const api::Container& c : pod.spec.init_containers) out.push_back(&c);
  for (const api::Container& c : pod.spec.containers) out.push_back(&c);
  return out;
}

}  // namespace

absl::StatusOr<CPUManagerOptions> CPUManagerOptionsFromConfig(const config::KubeletConfiguration& c,
                                                              const config::FeatureGate& gates) {
  CPUManagerOptions o;
  if (!c.cpu_manager_policy.empty()) o.policy = c.cpu_manager_policy;
  if (gates.Enabled("CPUManagerPolicyOptions")) {
    o.policy_options = c.cpu_manager_policy_options;
  } else if (!c.cpu_manager_policy_options.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CPU Manager policy options ", config::GoMapString(c.cpu_manager_policy_options),
        " require feature gates \"CPUManager\", \"CPUManagerPolicyOptions\" "
        "enabled"));
  }
  o.policy_alpha_options = gates.Enabled("CPUManagerPolicyAlphaOptions");
  o.policy_beta_options = gates.Enabled("CPUManagerPolicyBetaOptions");
  if (c.cpu_manager_reconcile_period > absl::ZeroDuration()) {
    o.reconcile_period = c.cpu_manager_reconcile_period;
  }
  if (!c.topology_manager_policy.empty()) o.topology_manager_policy = c.topology_manager_policy;

  absl::StatusOr<CPUSet> reserved = CPUSet::Parse(c.reserved_system_cpus);
  if (!reserved.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unable to parse reserved-cpus list: ", reserved.status().message()));
  }
  if (reserved->Size() > 0) {
    // reservedSystemCPUs overrides the cpu of kubeReserved / systemReserved.
    o.reserved_cpus = *reserved;
    o.reserved_millicpu = int64_t{reserved->Size()} * 1000;
    return o;
  }
  absl::StatusOr<int64_t> kube = ReservedMilliCPU(c.kube_reserved, "kubeReserved");
  if (!kube.ok()) return kube.status();
  absl::StatusOr<int64_t> system = ReservedMilliCPU(c.system_reserved, "systemReserved");
  if (!system.ok()) return system.status();
  if (*kube + *system != 0) o.reserved_millicpu = *kube + *system;
  return o;
}

absl::StatusOr<std::unique_ptr<CPUManager>> CPUManager::Create(
    CPUManagerOptions options, const topologymanager::AffinityStore* affinity, Clock* clock) {
  std::optional<StaticPolicy> policy;
  if (options.policy == kPolicyNone) {
    if (!options.policy_options.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("new none policy error: None policy: received unsupported options=",
                       config::GoMapString(options.policy_options)));
    }
  } else if (options.policy == kPolicyStatic) {
    const topology::CPUTopology& topo = options.topology;
    KLOG_INFO("Detected CPU topology", "numCPUs", topo.num_cpus, "numCores", topo.num_cores,
              "numSockets", topo.num_sockets, "numNUMANodes", topo.num_numa_nodes);
    if (!options.reserved_millicpu.has_value()) {
      return absl::InvalidArgumentError(
          "[cpumanager] unable to determine reserved CPU resources for static policy");
    }
    if (*options.reserved_millicpu == 0) {
      // With nothing reserved the shared pool could be emptied entirely.
      return absl::InvalidArgumentError(
          "[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be "
          "greater than zero");
    }
    // Fractional CPUs cannot be exclusive: round the reservation up.
    const int num_reserved = static_cast<int>((*options.reserved_millicpu + 999) / 1000);
    auto wrap = [](const absl::Status& st) {
      return absl::Status(st.code(), absl::StrCat("new static policy error: ", st.message()));
    };
    absl::StatusOr<StaticPolicyOptions> opts = ParseStaticPolicyOptions(
        options.policy_options, options.policy_alpha_options, options.policy_beta_options);
    if (!opts.ok()) return wrap(opts.status());
    if (absl::Status st = ValidateStaticPolicyOptions(*opts, topo, options.topology_manager_policy);
        !st.ok()) {
      return wrap(st);
    }
    absl::StatusOr<StaticPolicy> p =
        StaticPolicy::Create(topo, num_reserved, options.reserved_cpus, *opts);
    if (!p.ok()) return wrap(p.status());
    policy = *std::move(p);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown policy: \"", options.policy, "\""));
  }

  const std::string path = (std::filesystem::path(options.state_dir) / kStateFileName).string();
  absl::StatusOr<std::optional<CPUState>> restored = ReadState(path, options.policy);
  if (!restored.ok()) {
    absl::Status err = RestoreError(restored.status(), path);
    KLOG_ERROR(err,
               "Could not initialize checkpoint manager, please drain node and remove policy "
               "state file");
    return err;
  }
  const bool fresh = !restored->has_value();
  CPUState state = fresh ? CPUState() : **std::move(restored);
  std::optional<CPUManagerCheckpoint> persisted;
  if (!fresh) persisted = ToCheckpoint(state, options.policy);
  if (policy.has_value()) {
    if (absl::Status st = policy->Start(&state); !st.ok()) {
      KLOG_ERROR(st, "Policy start error");
      return st;
    }
  }
  std::unique_ptr<CPUManager> m(
      new CPUManager(std::move(options), std::move(policy), std::move(state), affinity, clock));
  {
    absl::MutexLock l(&m->mu_);
    m->persisted_ = std::move(persisted);
    // A new file must be writable; later write failures are only logged, as upstream.
    if (absl::Status st = m->PersistLocked(); !st.ok() && fresh) return RestoreError(st, path);
  }
  KLOG_V(4, "CPU manager started", "policy", m->options_.policy);
  return m;
}

CPUManager::CPUManager(CPUManagerOptions options, std::optional<StaticPolicy> policy,
                       CPUState state, const topologymanager::AffinityStore* affinity, Clock* clock)
    : options_(std::move(options)),
      affinity_(affinity),
      clock_(clock),
      allocatable_(policy ? policy->GetAllocatableCPUs() : CPUSet()),
      reserved_(policy ? policy->reserved() : CPUSet()),
      policy_(std::move(policy)),
      state_(std::move(state)) {}

CPUManager::~CPUManager() { Stop(); }

std::string CPUManager::state_file() const {
  return (std::filesystem::path(options_.state_dir) / kStateFileName).string();
}

absl::Status CPUManager::PersistLocked() {
  CPUManagerCheckpoint cp = ToCheckpoint(state_, options_.policy);
  if (persisted_.has_value() && *persisted_ == cp) return absl::OkStatus();
  absl::Status st = WriteFileAtomically(state_file(), MarshalCheckpoint(cp), 0644);
  if (!st.ok()) {
    KLOG_ERROR(st, "Failed to store state to checkpoint");
    return st;
  }
  persisted_ = std::move(cp);
  return absl::OkStatus();
}

CPUManager::Runtime CPUManager::RuntimeCopy() const {
  absl::MutexLock l(&mu_);
  return runtime_.value_or(Runtime{});
}

void CPUManager::MapContainerLocked(const ContainerRef& ref, const std::string& id) {
  auto old = container_ids_.find(ref);
  if (old != container_ids_.end()) {
    if (old->second == id) return;
    // A new instance replaces the earlier one (a restart).
    containers_.erase(old->second);
    last_applied_.erase(old->second);
  }
  container_ids_[ref] = id;
  containers_[id] = ref;
}

void CPUManager::UnmapContainerLocked(const ContainerRef& ref) {
  auto it = container_ids_.find(ref);
  if (it == container_ids_.end()) return;
  containers_.erase(it->second);
  last_applied_.erase(it->second);
  container_ids_.erase(it);
}

void CPUManager::RemoveContainerLocked(const ContainerRef& ref) {
  if (policy_.has_value()) policy_->RemoveContainer(&state_, ref.pod_uid, ref.name);
  UnmapContainerLocked(ref);
}

void CPUManager::RemoveStaleState() {
  const Runtime rt = RuntimeCopy();
  if (!rt.active_pods) return;
  // Only with every source seen is the active pod list complete.
  if (rt.sources_ready && !rt.sources_ready()) return;
  const std::vector<api::PodPtr> pods = rt.active_pods();
  std::set<ContainerRef> active;
  std::set<std::string> active_pods;
  for (const api::PodPtr& pod : pods) {
    if (pod == nullptr) continue;
    active_pods.insert(pod->metadata.uid);
    for (const api::Container* c : AllContainers(*pod)) {
      active.insert(ContainerRef{pod->metadata.uid, c->name});
    }
  }
  bool changed = false;
  {
    absl::MutexLock l(&mu_);
    const CPUSet before = state_.default_cpu_set;
    std::vector<ContainerRef> stale;
    for (const auto& [pod_uid, containers] : state_.assignments) {
      for (const auto& [name, cpus] : containers) {
        ContainerRef ref{pod_uid, name};
        if (active.count(ref) == 0) stale.push_back(std::move(ref));
      }
    }
    for (const auto& [ref, id] : container_ids_) {
      if (active.count(ref) == 0) stale.push_back(ref);
    }
    std::set<std::string> stale_pods;
    for (const ContainerRef& ref : stale) {
      KLOG_V(2, "RemoveStaleState: removing container", "podUID", ref.pod_uid, "containerName",
             ref.name);
      RemoveContainerLocked(ref);
      stale_pods.insert(ref.pod_uid);
    }
    if (policy_.has_value()) {
      for (const std::string& uid : stale_pods) {
        if (active_pods.count(uid) == 0) policy_->ForgetPod(uid);
      }
    }
    if (!stale.empty()) PersistLocked().IgnoreError();
    changed = !(before == state_.default_cpu_set);
  }
  if (changed) Poke();
}

TopologyHints CPUManager::GetTopologyHints(const api::Pod& pod, const api::Container& container) {
  {
    absl::MutexLock a(&alloc_mu_);
    RemoveStaleState();
  }
  absl::MutexLock l(&mu_);
  if (!policy_.has_value()) return {};
  return policy_->GetTopologyHints(state_, pod, container);
}

TopologyHints CPUManager::GetPodTopologyHints(const api::Pod& pod) {
  {
    absl::MutexLock a(&alloc_mu_);
    RemoveStaleState();
  }
  absl::MutexLock l(&mu_);
  if (!policy_.has_value()) return {};
  return policy_->GetPodTopologyHints(state_, pod);
}

absl::Status CPUManager::Allocate(const api::Pod& pod, const api::Container& container) {
  absl::MutexLock a(&alloc_mu_);
  // Stranded CPUs of pods that are gone first.
  RemoveStaleState();
  bool changed = false;
  absl::Status st;
  {
    absl::MutexLock l(&mu_);
    if (!policy_.has_value()) return absl::OkStatus();
    const CPUSet before = state_.default_cpu_set;
    st = policy_->Allocate(&state_, pod, container, affinity_);
    PersistLocked().IgnoreError();
    changed = !(before == state_.default_cpu_set);
  }
  if (changed) Poke();
  if (!st.ok()) {
    KLOG_ERROR(st, "Allocate error");
    return st;
  }
  return absl::OkStatus();
}

void CPUManager::AddContainer(const api::Pod& pod, const api::Container& container,
                              const std::string& container_id) {
  absl::MutexLock l(&mu_);
  const ContainerRef ref{pod.metadata.uid, container.name};
  MapContainerLocked(ref, container_id);
  // The container is created with its exclusive set: nothing to reconcile for it.
  if (std::optional<CPUSet> cpus = state_.Get(ref.pod_uid, ref.name)) {
    last_applied_[container_id] = *cpus;
  }
}

absl::Status CPUManager::RemoveContainer(const std::string& container_id) {
  bool changed = false;
  {
    absl::MutexLock l(&mu_);
    auto it = containers_.find(container_id);
    if (it == containers_.end()) return absl::OkStatus();
    const ContainerRef ref = it->second;
    const CPUSet before = state_.default_cpu_set;
    RemoveContainerLocked(ref);
    PersistLocked().IgnoreError();
    changed = !(before == state_.default_cpu_set);
  }
  if (changed) Poke();
  return absl::OkStatus();
}

void CPUManager::RemovePod(const std::string& pod_uid) {
  bool changed = false;
  {
    absl::MutexLock l(&mu_);
    const CPUSet before = state_.default_cpu_set;
    std::set<ContainerRef> refs;
    if (auto it = state_.assignments.find(pod_uid); it != state_.assignments.end()) {
      for (const auto& [name, cpus] : it->second) refs.insert(ContainerRef{pod_uid, name});
    }
    for (const auto& [ref, id] : container_ids_) {
      if (ref.pod_uid == pod_uid) refs.insert(ref);
    }
    for (const ContainerRef& ref : refs) RemoveContainerLocked(ref);
    if (policy_.has_value()) policy_->ForgetPod(pod_uid);
    PersistLocked().IgnoreError();
    changed = !(before == state_.default_cpu_set);
  }
  if (changed) Poke();
}

CPUSet CPUManager::GetCPUAffinity(const std::string& pod_uid,
                                  const std::string& container_name) const {
  absl::MutexLock l(&mu_);
  return state_.GetOrDefault(pod_uid, container_name);
}

CPUSet CPUManager::GetExclusiveCPUs(const std::string& pod_uid,
                                    const std::string& container_name) const {
  absl::MutexLock l(&mu_);
  return state_.Get(pod_uid, container_name).value_or(CPUSet());
}

CPUSet CPUManager::GetDefaultCPUSet() const {
  absl::MutexLock l(&mu_);
  return state_.default_cpu_set;
}

void CPUManager::Start(Runtime runtime) {
  KLOG_INFO("Starting CPU manager", "policy", options_.policy);
  KLOG_INFO("Reconciling", "reconcilePeriod", options_.reconcile_period);
  {
    absl::MutexLock l(&mu_);
    runtime_ = std::move(runtime);
  }
  if (options_.policy != kPolicyStatic) return;
  absl::MutexLock l(&loop_mu_);
  if (started_) return;
  started_ = true;
  loop_ = GuardedThread("CPU manager reconcile loop", [this] { Loop(); });
}

void CPUManager::Stop() {
  std::thread t;
  {
    absl::MutexLock l(&loop_mu_);
    stop_ = true;
    t = std::move(loop_);
  }
  if (t.joinable()) t.join();
}

void CPUManager::Poke() {
  absl::MutexLock l(&loop_mu_);
  poked_ = true;
}

void CPUManager::Loop() {
  for (;;) {
    RunGuarded("CPU manager reconcile", [this] { ReconcileOnce(); });
    absl::MutexLock l(&loop_mu_);
    auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_mu_) { return stop_ || poked_; };
    clock_->AwaitWithDeadline(loop_mu_, absl::Condition(&woken),
                              clock_->Now() + options_.reconcile_period);
    if (stop_) return;
    poked_ = false;
  }
}

void CPUManager::ReconcileOnce() {
  absl::MutexLock pass(&reconcile_mu_);
  {
    absl::MutexLock a(&alloc_mu_);
    RemoveStaleState();
  }
  const Runtime rt = RuntimeCopy();
  if (!rt.active_pods || !rt.running_container_id) return;
  for (const api::PodPtr& pod : rt.active_pods()) {
    if (pod == nullptr) continue;
    const std::string key = api::PodKey(*pod);
    for (const api::Container* c : AllContainers(*pod)) {
      const ContainerRef ref{pod->metadata.uid, c->name};
      std::optional<std::string> id = rt.running_container_id(ref.pod_uid, ref.name);
      if (!id.has_value() || id->empty()) {
        KLOG_V(5, "ReconcileState: skipping container; not running", "pod", key, "containerName",
               ref.name);
        continue;
      }
      CPUSet cpus;
      {
        absl::MutexLock l(&mu_);
        // Running but not added (e.g. after a kubelet restart): adopt it.
        MapContainerLocked(ref, *id);
        cpus = state_.GetOrDefault(ref.pod_uid, ref.name);
        if (cpus.IsEmpty()) {
          KLOG_V(2, "ReconcileState: skipping container; assigned cpuset is empty", "pod", key,
                 "containerName", ref.name);
          continue;
        }
        auto last = last_applied_.find(*id);
        if (last != last_applied_.end() && last->second == cpus) continue;
      }
      KLOG_V(5, "ReconcileState: updating container", "pod", key, "containerName", ref.name,
             "containerID", *id, "cpuSet", cpus.String());
      absl::Status st = rt.update_container_cpuset
                            ? rt.update_container_cpuset(*id, cpus)
                            : absl::FailedPreconditionError("no update_container_cpuset");
      if (!st.ok()) {
        KLOG_ERROR(st, "ReconcileState: failed to update container", "pod", key, "containerName",
                   ref.name, "containerID", *id, "cpuSet", cpus.String());
        continue;
      }
      absl::MutexLock l(&mu_);
      if (containers_.count(*id) > 0) last_applied_[*id] = cpus;
    }
  }
}

}  // namespace kubelet::cpumanager
