#include "kubelet/memorymanager/memory_manager.h"

#include <filesystem>
#include <map>
#include <set>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/quantity.h"
#include "common/files.h"
#include "common/log.h"

namespace kubelet::memorymanager {
namespace {

constexpr char kMemory[] = "memory";
// The checkpoint manager writes through a temporary file (os.CreateTemp: mode 0600).
constexpr mode_t kStateFileMode = 0600;

bool IsMemoryType(const std::string& name) {
  return name == kMemory || IsHugePageResourceName(name);
}

}  // namespace

MemoryManagerOptions MemoryManagerOptionsFromConfig(const config::KubeletConfiguration& c,
                                                    const config::FeatureGate& gates) {
  MemoryManagerOptions o;
  o.enabled = gates.Enabled("MemoryManager");
  o.policy_name = c.memory_manager_policy.empty() ? kPolicyNone : c.memory_manager_policy;
  o.reserved_memory = c.reserved_memory;
  return o;
}

absl::StatusOr<SystemReservedMemory> GetSystemReservedMemory(
    const MachineMemory& machine, const api::ResourceList& node_allocatable_reservation,
    const std::vector<config::MemoryReservation>& reserved_memory) {
  std::set<int> nodes;
  for (const NUMANodeMemory& n : machine.nodes) nodes.insert(n.id);

  // The reservations summed per memory type (Quantity.Add: the sum keeps the format of the
  // reservation added last).
  std::map<std::string, api::Quantity> totals;
  for (const config::MemoryReservation& r : reserved_memory) {
    if (nodes.count(r.numa_node) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("the reserved memory configuration references a NUMA node ", r.numa_node,
                       " that does not exist on this machine"));
    }
    for (const auto& [name, q] : r.limits) {
      auto it = totals.find(name);
      if (it == totals.end()) {
        totals.emplace(name, q);
      } else {
        it->second = q + it->second;
      }
    }
  }
  std::set<std::string> types;
  for (const auto& [name, q] : totals) types.insert(name);
  for (const auto& [name, q] : node_allocatable_reservation) {
    if (IsMemoryType(name)) types.insert(name);
  }
  for (const std::string& type : types) {
    auto a = node_allocatable_reservation.find(type);
    auto t = totals.find(type);
    const api::Quantity allocatable =
        a == node_allocatable_reservation.end() ? api::Quantity() : a->second;
    const api::Quantity reserved = t == totals.end() ? api::Quantity() : t->second;
    if (!(allocatable == reserved)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the total amount ", log::Quote(reserved.String()), " of type ", log::Quote(type),
          " is not equal to the value ", log::Quote(allocatable.String()),
          " determined by Node Allocatable feature"));
    }
  }

  SystemReservedMemory out;
  for (int node : nodes) out[node];
  for (const config::MemoryReservation& r : reserved_memory) {
    for (const auto& [name, q] : r.limits) {
      if (!(q == api::Quantity::FromValue(q.Value()))) {
        return absl::InvalidArgumentError("could not covert a variable of type Quantity to int64");
      }
      out[r.numa_node][name] = static_cast<uint64_t>(q.Value());
    }
  }
  return out;
}

absl::StatusOr<std::unique_ptr<MemoryManager>> MemoryManager::Create(
    MemoryManagerOptions options, MachineMemory machine,
    const topologymanager::AffinityStore* affinity) {
  std::unique_ptr<Policy> policy;
  if (options.policy_name == kPolicyNone) {
    policy = NewNonePolicy();
  } else if (options.policy_name == kPolicyStatic) {
    absl::StatusOr<SystemReservedMemory> reserved = GetSystemReservedMemory(
        machine, options.node_allocatable_reservation, options.reserved_memory);
    if (!reserved.ok()) return reserved.status();
    absl::StatusOr<std::unique_ptr<Policy>> p =
        NewStaticPolicy(std::move(machine), std::move(*reserved), affinity);
    if (!p.ok()) return p.status();
    policy = std::move(*p);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown policy: \"", options.policy_name, "\""));
  }
  return std::unique_ptr<MemoryManager>(new MemoryManager(std::move(options), std::move(policy)));
}

MemoryManager::MemoryManager(MemoryManagerOptions options, std::unique_ptr<Policy> policy)
    : options_(std::move(options)), policy_(std::move(policy)) {}

std::string MemoryManager::StateFilePath() const {
  return absl::StrCat(options_.state_dir, "/", kStateFileName);
}

absl::Status MemoryManager::Start(ActivePodsFunc active_pods, std::function<bool()> sources_ready) {
  absl::MutexLock lock(&mu_);
  KLOG_INFO("Starting memorymanager", "policy", policy_->Name());
  active_pods_ = std::move(active_pods);
  sources_ready_ = std::move(sources_ready);

  const std::string path = StateFilePath();
  absl::Status restored = RestoreLocked();
  if (!restored.ok()) {
    absl::Status err(restored.code(),
                     absl::StrCat("could not restore state from checkpoint: ", restored.message(),
                                  ", please drain this node and delete the memory manager "
                                  "checkpoint file ",
                                  log::Quote(path), " before restarting Kubelet"));
    KLOG_ERROR(err,
               "Could not initialize checkpoint manager, please drain node and remove policy "
               "state file");
    return err;
  }

  if (absl::Status st = policy_->Start(&state_); !st.ok()) {
    KLOG_ERROR(st, "Policy start error");
    return st;
  }
  PersistLocked();
  allocatable_ = policy_->GetAllocatableMemory(state_);
  started_ = true;
  return absl::OkStatus();
}

absl::Status MemoryManager::RestoreLocked() {
  const std::string path = StateFilePath();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && !ec) {
    state_ = MemoryState{};
    return StoreLocked();
  }
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<MemoryManagerCheckpoint> cp = UnmarshalCheckpoint(*text);
  if (!cp.ok()) return cp.status();
  if (cp->policy_name != policy_->Name()) {
    return absl::FailedPreconditionError(
        absl::StrCat("[memorymanager] configured policy ", log::Quote(policy_->Name()),
                     " differs from state checkpoint policy ", log::Quote(cp->policy_name)));
  }
  state_.machine_state = cp->machine_state;
  state_.assignments = cp->entries;
  stored_ = std::move(*cp);
  KLOG_V(2, "State checkpoint: restored state from checkpoint");
  return absl::OkStatus();
}

topologymanager::TopologyHints MemoryManager::GetTopologyHints(const api::Pod& pod,
                                                               const api::Container& container) {
  absl::MutexLock lock(&mu_);
  if (!started_) return {};
  SetPendingAdmissionLocked(pod);
  RemoveStaleStateLocked();
  topologymanager::TopologyHints hints = policy_->GetTopologyHints(state_, pod, container);
  PersistLocked();
  return hints;
}

topologymanager::TopologyHints MemoryManager::GetPodTopologyHints(const api::Pod& pod) {
  absl::MutexLock lock(&mu_);
  if (!started_) return {};
  SetPendingAdmissionLocked(pod);
  RemoveStaleStateLocked();
  topologymanager::TopologyHints hints = policy_->GetPodTopologyHints(state_, pod);
  PersistLocked();
  return hints;
}

absl::Status MemoryManager::Allocate(const api::Pod& pod, const api::Container& container) {
  absl::MutexLock lock(&mu_);
  if (!started_) return absl::FailedPreconditionError("memory manager not started");
  SetPendingAdmissionLocked(pod);
  RemoveStaleStateLocked();
  absl::Status st = policy_->Allocate(&state_, pod, container);
  if (!st.ok()) KLOG_ERROR(st, "Allocate error");
  PersistLocked();
  return st;
}

void MemoryManager::AddContainer(const api::Pod& pod, const std::string& container_name) {
  absl::MutexLock lock(&mu_);
  if (!started_) return;
  for (const api::Container& init : pod.spec.init_containers) {
    if (init.name == container_name) break;
    RemoveContainerLocked(pod.metadata.uid, init.name);
  }
  PersistLocked();
}

void MemoryManager::RemoveContainer(const std::string& pod_uid, const std::string& container_name) {
  absl::MutexLock lock(&mu_);
  if (!started_) return;
  RemoveContainerLocked(pod_uid, container_name);
  PersistLocked();
}

void MemoryManager::RemovePod(const std::string& pod_uid) {
  absl::MutexLock lock(&mu_);
  if (!started_) return;
  auto pod = state_.assignments.find(pod_uid);
  if (pod == state_.assignments.end()) return;
  std::vector<std::string> names;
  for (const auto& [name, blocks] : pod->second) names.push_back(name);
  for (const std::string& name : names) RemoveContainerLocked(pod_uid, name);
  PersistLocked();
}

std::set<int> MemoryManager::GetMemoryNUMANodes(const std::string& pod_uid,
                                                const std::string& container_name) const {
  absl::MutexLock lock(&mu_);
  std::set<int> nodes;
  if (const std::vector<Block>* blocks = state_.GetBlocks(pod_uid, container_name)) {
    for (const Block& b : *blocks) nodes.insert(b.numa_affinity.begin(), b.numa_affinity.end());
  }
  if (nodes.empty()) {
    KLOG_V(5, "No allocation is available", "podUID", pod_uid, "containerName", container_name);
    return nodes;
  }
  KLOG_INFO("Memory affinity", "podUID", pod_uid, "containerName", container_name, "numaNodes",
            absl::StrJoin(nodes, ","));
  return nodes;
}

std::vector<Block> MemoryManager::GetMemory(const std::string& pod_uid,
                                            const std::string& container_name) const {
  absl::MutexLock lock(&mu_);
  const std::vector<Block>* blocks = state_.GetBlocks(pod_uid, container_name);
  return blocks == nullptr ? std::vector<Block>{} : *blocks;
}

std::vector<Block> MemoryManager::GetAllocatableMemory() const {
  absl::MutexLock lock(&mu_);
  return allocatable_;
}

NUMANodeMap MemoryManager::GetMachineState() const {
  absl::MutexLock lock(&mu_);
  return state_.machine_state;
}

ContainerMemoryAssignments MemoryManager::GetMemoryAssignments() const {
  absl::MutexLock lock(&mu_);
  return state_.assignments;
}

void MemoryManager::SetPendingAdmissionLocked(const api::Pod& pod) {
  std::set<std::string> names;
  for (const api::Container& c : pod.spec.init_containers) names.insert(c.name);
  for (const api::Container& c : pod.spec.containers) names.insert(c.name);
  pending_.emplace(pod.metadata.uid, std::move(names));
}

void MemoryManager::RemoveStaleStateLocked() {
  // Only once every pod source has been seen is the active pod list complete.
  if (!active_pods_) return;
  if (sources_ready_ && !sources_ready_()) return;
  std::map<std::string, std::set<std::string>> active;
  for (const api::PodPtr& pod : active_pods_()) {
    if (pod == nullptr) continue;
    std::set<std::string>& names = active[pod->metadata.uid];
    for (const api::Container& c : pod->spec.init_containers) names.insert(c.name);
    for (const api::Container& c : pod->spec.containers) names.insert(c.name);
  }
  if (pending_) active[pending_->first].insert(pending_->second.begin(), pending_->second.end());

  std::vector<std::pair<std::string, std::string>> stale;
  for (const auto& [uid, containers] : state_.assignments) {
    auto pod = active.find(uid);
    for (const auto& [name, blocks] : containers) {
      if (pod == active.end() || pod->second.count(name) == 0) stale.emplace_back(uid, name);
    }
  }
  for (const auto& [uid, name] : stale) {
    KLOG_INFO("RemoveStaleState removing state", "podUID", uid, "containerName", name);
    RemoveContainerLocked(uid, name);
  }
}

void MemoryManager::RemoveContainerLocked(const std::string& pod_uid,
                                          const std::string& container_name) {
  policy_->RemoveContainer(&state_, pod_uid, container_name);
}

absl::Status MemoryManager::StoreLocked() {
  MemoryManagerCheckpoint cp;
  cp.policy_name = std::string(policy_->Name());
  cp.machine_state = state_.machine_state;
  cp.entries = state_.assignments;
  const std::string text = MarshalCheckpoint(cp);
  if (absl::Status st = WriteFileAtomically(StateFilePath(), text, kStateFileMode); !st.ok()) {
    return st;
  }
  cp.checksum = Checksum(cp);
  stored_ = std::move(cp);
  return absl::OkStatus();
}

void MemoryManager::PersistLocked() {
  if (state_.machine_state == stored_.machine_state && state_.assignments == stored_.entries &&
      stored_.policy_name == policy_->Name()) {
    return;
  }
  if (absl::Status st = StoreLocked(); !st.ok()) {
    KLOG_ERROR(st, "Could not save checkpoint");
  }
}

}  // namespace kubelet::memorymanager
