#include "kubelet/cpumanager/policy_static.h"

#include <algorithm>
#include <functional>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/static_pod.h"
#include "common/log.h"
#include "kubelet/cpumanager/cpu_assignment.h"
#include "metrics/metrics.h"

namespace kubelet::cpumanager {
namespace {

using config::CPUSet;
using topologymanager::NUMAMask;
using topologymanager::TopologyHint;
using topologymanager::TopologyHints;

constexpr char kSMTAlignmentPrefix[] = "SMT Alignment Error: ";

std::string HintsText(const std::vector<TopologyHint>& hints) {
  std::string out = "[";
  for (size_t i = 0; i < hints.size(); ++i) {
    if (i > 0) out += " ";
    absl::StrAppend(&out, "{", hints[i].numa_affinity ? hints[i].numa_affinity->String() : "", " ",
                    hints[i].preferred ? "true" : "false", "}");
  }
  return out + "]";
}

bool IsInitContainer(const api::Pod& pod, const std::string& name, bool* restartable) {
  for (const api::Container& c : pod.spec.init_containers) {
    if (c.name == name) {
      *restartable = api::IsRestartableInitContainer(c);
      return true;
    }
  }
  return false;
}

// Every non-empty subset of `nodes`: by size, then lexicographically (upstream
// bitmask.IterateBitMasks).
void IterateMasks(const std::vector<int>& nodes, const std::function<void(NUMAMask)>& f) {
  std::vector<int> accum;
  std::function<void(size_t, size_t)> rec = [&](size_t start, size_t size) {
    if (accum.size() == size) {
      NUMAMask m;
      for (int n : accum) m.Add(n);
      f(m);
      return;
    }
    for (size_t i = start; i < nodes.size(); ++i) {
      accum.push_back(nodes[i]);
      rec(i + 1, size);
      accum.pop_back();
    }
  };
  for (size_t size = 1; size <= nodes.size(); ++size) rec(0, size);
}

std::set<int> ToSet(const NUMAMask& m) {
  std::vector<int> nodes = m.Nodes();
  return std::set<int>(nodes.begin(), nodes.end());
}

}  // namespace

absl::Status SMTAlignmentError(int requested_cpus, int cpus_per_core, int available_physical_cpus) {
  std::string text =
      available_physical_cpus > 0
          ? absl::StrCat(kSMTAlignmentPrefix, "not enough free physical CPUs: available physical ",
                         "CPUs = ", available_physical_cpus, ", requested CPUs = ", requested_cpus,
                         ", CPUs per core = ", cpus_per_core)
          : absl::StrCat(kSMTAlignmentPrefix, "requested ", requested_cpus,
                         " cpus not multiple cpus per core = ", cpus_per_core);
  // The topology manager's admission then reports the reason as it is.
  return topologymanager::AdmissionError(kSMTAlignmentErrorReason, text);
}

bool IsSMTAlignmentError(const absl::Status& status) {
  if (status.ok()) return false;
  return topologymanager::AdmissionErrorReason(status) == kSMTAlignmentErrorReason ||
         absl::StartsWith(status.message(), kSMTAlignmentPrefix);
}

int GuaranteedCPUs(const api::Pod& pod, const api::Container& container) {
  if (api::GetPodQOS(pod) != api::QOSClass::kGuaranteed) return 0;
  auto it = container.resources.requests.find(api::kResourceCPU);
  if (it == container.resources.requests.end()) return 0;
  const api::Quantity& q = it->second;
  if (q.Value() * 1000 != q.MilliValue()) return 0;
  return static_cast<int>(q.Value());
}

int PodGuaranteedCPUs(const api::Pod& pod) {
  int by_init = 0;
  int by_restartable_init = 0;
  for (const api::Container& c : pod.spec.init_containers) {
    if (c.resources.requests.count(api::kResourceCPU) == 0) continue;
    const int n = GuaranteedCPUs(pod, c);
    // Sidecars run alongside every later container (KEP-753's resource calculation).
    if (api::IsRestartableInitContainer(c)) {
      by_restartable_init += n;
    } else {
      by_init = std::max(by_init, by_restartable_init + n);
    }
  }
  int by_app = 0;
  for (const api::Container& c : pod.spec.containers) {
    if (c.resources.requests.count(api::kResourceCPU) == 0) continue;
    by_app += GuaranteedCPUs(pod, c);
  }
  return std::max(by_init, by_app + by_restartable_init);
}

StaticPolicy::StaticPolicy(topology::CPUTopology topology, StaticPolicyOptions options)
    : topology_(std::move(topology)),
      options_(options),
      cpu_group_size_(std::max(topology_.CPUsPerCore(), 1)) {}

absl::StatusOr<StaticPolicy> StaticPolicy::Create(topology::CPUTopology topology,
                                                  int num_reserved_cpus,
                                                  const CPUSet& reserved_cpus,
                                                  StaticPolicyOptions options) {
  StaticPolicy p(std::move(topology), options);
  KLOG_INFO(
      "Static policy created with configuration", "options",
      absl::StrCat(
          "{FullPhysicalCPUsOnly:", options.full_physical_cpus_only ? "true" : "false",
          " DistributeCPUsAcrossNUMA:", options.distribute_cpus_across_numa ? "true" : "false",
          " AlignBySocket:", options.align_by_socket ? "true" : "false", "}"),
      "cpuGroupSize", p.cpu_group_size_);
  CPUSet reserved;
  if (reserved_cpus.Size() > 0) {
    reserved = reserved_cpus;
  } else {
    // The lowest-numbered cores: with 8 CPUs and SMT, 2 reserved CPUs are {0,4}.
    absl::StatusOr<CPUSet> taken = p.TakeByTopology(p.topology_.CPUs(), num_reserved_cpus);
    if (taken.ok()) reserved = *std::move(taken);
  }
  if (reserved.Size() != num_reserved_cpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("[cpumanager] unable to reserve the required amount of CPUs (size of ",
                     reserved.String(), " did not equal ", num_reserved_cpus, ")"));
  }
  for (int cpu : reserved.List()) {
    if (p.topology_.details.count(cpu) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "[cpumanager] unable to build the reserved physical CPUs from the reserved set: "
          "unknown CPU ID: ",
          cpu));
    }
  }
  p.reserved_ = reserved;
  p.reserved_physical_ = p.topology_.SiblingsOf(reserved);
  KLOG_INFO("Reserved CPUs not available for exclusive assignment", "reservedSize", reserved.Size(),
            "reserved", reserved.String(), "reservedPhysicalCPUs", p.reserved_physical_.String());
  return p;
}

absl::Status StaticPolicy::Start(CPUState* state) const {
  absl::Status st = [&]() -> absl::Status {
    const CPUSet all = topology_.CPUs();
    if (state->default_cpu_set.IsEmpty()) {
      if (!state->assignments.empty()) {
        return absl::FailedPreconditionError("default cpuset cannot be empty");
      }
      state->default_cpu_set = all;
      return absl::OkStatus();
    }
    if (!reserved_.IsSubsetOf(state->default_cpu_set)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "not all reserved cpus: \"", reserved_.String(), "\" are present in defaultCpuSet: \"",
          state->default_cpu_set.String(), "\""));
    }
    CPUSet known = state->default_cpu_set;
    for (const auto& [pod, containers] : state->assignments) {
      for (const auto& [name, cpus] : containers) {
        if (!cpus.Intersection(state->default_cpu_set).IsEmpty()) {
          return absl::FailedPreconditionError(absl::StrCat(
              "pod: ", pod, ", container: ", name, " cpuset: \"", cpus.String(),
              "\" overlaps with default cpuset \"", state->default_cpu_set.String(), "\""));
        }
        known = known.Union(cpus);
      }
    }
    if (!(known == all)) {
      return absl::FailedPreconditionError(
          absl::StrCat("current set of available CPUs \"", all.String(),
                       "\" doesn't match with CPUs in state \"", known.String(), "\""));
    }
    return absl::OkStatus();
  }();
  if (!st.ok()) {
    KLOG_ERROR(st, "Static policy invalid state, please drain node and remove policy state file");
  }
  return st;
}

CPUSet StaticPolicy::GetAllocatableCPUs() const { return topology_.CPUs().Difference(reserved_); }

CPUSet StaticPolicy::GetAvailableCPUs(const CPUState& state) const {
  return state.default_cpu_set.Difference(reserved_);
}

absl::StatusOr<CPUSet> StaticPolicy::TakeByTopology(const CPUSet& available, int num_cpus) const {
  if (options_.distribute_cpus_across_numa) {
    const int group = options_.full_physical_cpus_only ? cpu_group_size_ : 1;
    return TakeByTopologyNUMADistributed(topology_, available, num_cpus, group);
  }
  return TakeByTopologyNUMAPacked(topology_, available, num_cpus);
}

void StaticPolicy::UpdateCPUsToReuse(const api::Pod& pod, const api::Container& container,
                                     const CPUSet& cpus) {
  const std::string& uid = pod.metadata.uid;
  for (auto it = cpus_to_reuse_.begin(); it != cpus_to_reuse_.end();) {
    it = it->first == uid ? std::next(it) : cpus_to_reuse_.erase(it);
  }
  CPUSet& reuse = cpus_to_reuse_[uid];
  bool restartable = false;
  if (IsInitContainer(pod, container.name, &restartable) && !restartable) {
    // The next containers may run on what this init container held.
    reuse = reuse.Union(cpus);
    return;
  }
  reuse = reuse.Difference(cpus);
}

absl::Status StaticPolicy::Allocate(CPUState* state, const api::Pod& pod,
                                    const api::Container& container,
                                    const topologymanager::AffinityStore* affinity) {
  const int num_cpus = GuaranteedCPUs(pod, container);
  if (num_cpus == 0) return absl::OkStatus();  // the shared pool
  KLOG_INFO("Static policy: Allocate", "pod", api::PodKey(pod), "containerName", container.name);
  // kubelet_cpu_manager_pinning_requests_total / _errors_total, as upstream counts them.
  metrics::Kubelet().cpu_manager_pinning_requests.Add({}).Increment();
  absl::Status st = AllocateExclusive(state, pod, container, num_cpus, affinity);
  if (!st.ok()) metrics::Kubelet().cpu_manager_pinning_errors.Add({}).Increment();
  return st;
}

absl::Status StaticPolicy::AllocateExclusive(CPUState* state, const api::Pod& pod,
                                             const api::Container& container, int num_cpus,
                                             const topologymanager::AffinityStore* affinity) {
  const std::string& uid = pod.metadata.uid;
  if (options_.full_physical_cpus_only && num_cpus % cpu_group_size_ != 0) {
    return SMTAlignmentError(num_cpus, cpu_group_size_, 0);
  }
  // Before the free-core check (upstream checks after it): a container re-admitted after a
  // restart keeps its CPUs even when the node has no whole core left.
  if (std::optional<CPUSet> existing = state->Get(uid, container.name)) {
    UpdateCPUsToReuse(pod, container, *existing);
    KLOG_INFO("Static policy: container already present in state, skipping", "pod",
              api::PodKey(pod), "containerName", container.name);
    return absl::OkStatus();
  }
  if (options_.full_physical_cpus_only) {
    // Reserved CPUs need not be whole cores: their siblings cannot be handed out as whole cores
    // either, so they do not count as free here.
    const int available_physical = state->default_cpu_set.Difference(reserved_physical_).Size();
    if (num_cpus > available_physical) {
      return SMTAlignmentError(num_cpus, cpu_group_size_, available_physical);
    }
  }
  TopologyHint hint{std::nullopt, true};
  if (affinity != nullptr) hint = affinity->GetAffinity(uid, container.name);
  KLOG_INFO("Topology Affinity", "pod", api::PodKey(pod), "containerName", container.name,
            "affinity", HintsText({hint}));
  absl::StatusOr<CPUSet> cpus =
      AllocateCPUs(state, num_cpus, hint.numa_affinity, cpus_to_reuse_[uid]);
  if (!cpus.ok()) {
    KLOG_ERROR(cpus.status(), "Unable to allocate CPUs", "pod", api::PodKey(pod), "containerName",
               container.name, "numCPUs", num_cpus);
    return cpus.status();
  }
  state->Set(uid, container.name, *cpus);
  UpdateCPUsToReuse(pod, container, *cpus);
  return absl::OkStatus();
}

CPUSet StaticPolicy::AlignedCPUs(const NUMAMask& numa, const CPUSet& allocatable) const {
  std::set<int> nodes = ToSet(numa);
  if (options_.align_by_socket) {
    // The affinity's NUMA nodes widened to their sockets.
    std::set<int> sockets;
    for (const auto& [cpu, info] : topology_.details) {
      if (nodes.count(info.numa_node) > 0) sockets.insert(info.socket);
    }
    return allocatable.Intersection(topology_.CPUsInSockets(sockets));
  }
  return allocatable.Intersection(topology_.CPUsInNUMANodes(nodes));
}

absl::StatusOr<CPUSet> StaticPolicy::AllocateCPUs(CPUState* state, int num_cpus,
                                                  const std::optional<NUMAMask>& numa,
                                                  const CPUSet& reusable) const {
  KLOG_INFO("AllocateCPUs", "numCPUs", num_cpus, "socket", numa ? numa->String() : "<nil>");
  const CPUSet allocatable = GetAvailableCPUs(*state).Union(reusable);
  CPUSet result;
  if (numa.has_value()) {
    const CPUSet aligned = AlignedCPUs(*numa, allocatable);
    absl::StatusOr<CPUSet> taken = TakeByTopology(aligned, std::min(num_cpus, aligned.Size()));
    if (!taken.ok()) return taken.status();
    result = *std::move(taken);
  }
  absl::StatusOr<CPUSet> rest =
      TakeByTopology(allocatable.Difference(result), num_cpus - result.Size());
  if (!rest.ok()) return rest.status();
  result = result.Union(*rest);
  state->default_cpu_set = state->default_cpu_set.Difference(result);
  KLOG_INFO("AllocateCPUs", "result", result.String());
  return result;
}

void StaticPolicy::RemoveContainer(CPUState* state, const std::string& pod_uid,
                                   const std::string& container_name) {
  KLOG_INFO("Static policy: RemoveContainer", "podUID", pod_uid, "containerName", container_name);
  std::optional<CPUSet> to_release = state->Get(pod_uid, container_name);
  if (!to_release) return;
  CPUSet in_use;
  if (auto pod = state->assignments.find(pod_uid); pod != state->assignments.end()) {
    for (const auto& [name, cpus] : pod->second) {
      if (name != container_name) in_use = in_use.Union(cpus);
    }
  }
  state->Delete(pod_uid, container_name);
  state->default_cpu_set = state->default_cpu_set.Union(to_release->Difference(in_use));
}

TopologyHints StaticPolicy::GetTopologyHints(const CPUState& state, const api::Pod& pod,
                                             const api::Container& container) const {
  const int requested = GuaranteedCPUs(pod, container);
  // Not exclusive: no preference.
  if (requested == 0) return {};
  const std::string& uid = pod.metadata.uid;
  if (std::optional<CPUSet> allocated = state.Get(uid, container.name)) {
    if (allocated->Size() != requested) {
      KLOG_ERROR(absl::OkStatus(),
                 "CPUs already allocated to container with different number than request", "pod",
                 api::PodKey(pod), "containerName", container.name, "requestedSize", requested,
                 "allocatedSize", allocated->Size());
      return {{api::kResourceCPU, std::vector<TopologyHint>{}}};
    }
    KLOG_INFO("Regenerating TopologyHints for CPUs already allocated", "pod", api::PodKey(pod),
              "containerName", container.name);
    return {{api::kResourceCPU, GenerateCPUTopologyHints(*allocated, CPUSet(), requested)}};
  }
  CPUSet reusable;
  if (auto it = cpus_to_reuse_.find(uid); it != cpus_to_reuse_.end()) reusable = it->second;
  std::vector<TopologyHint> hints =
      GenerateCPUTopologyHints(GetAvailableCPUs(state), reusable, requested);
  KLOG_INFO("TopologyHints generated", "pod", api::PodKey(pod), "containerName", container.name,
            "cpuHints", HintsText(hints));
  return {{api::kResourceCPU, std::move(hints)}};
}

TopologyHints StaticPolicy::GetPodTopologyHints(const CPUState& state, const api::Pod& pod) const {
  const int requested = PodGuaranteedCPUs(pod);
  if (requested == 0) return {};
  const std::string& uid = pod.metadata.uid;
  CPUSet assigned;
  auto visit = [&](const api::Container& c) -> bool {
    const int by_container = GuaranteedCPUs(pod, c);
    std::optional<CPUSet> allocated = state.Get(uid, c.name);
    if (!allocated) return true;
    if (allocated->Size() != by_container) {
      KLOG_ERROR(absl::OkStatus(),
                 "CPUs already allocated to container with different number than request", "pod",
                 api::PodKey(pod), "containerName", c.name, "requestedByContainer", by_container,
                 "allocatedSize", allocated->Size());
      return false;
    }
    assigned = assigned.Union(*allocated);
    return true;
  };
  for (const api::Container& c : pod.spec.init_containers) {
    if (!visit(c)) return {{api::kResourceCPU, std::vector<TopologyHint>{}}};
  }
  for (const api::Container& c : pod.spec.containers) {
    if (!visit(c)) return {{api::kResourceCPU, std::vector<TopologyHint>{}}};
  }
  if (assigned.Size() == requested) {
    KLOG_INFO("Regenerating TopologyHints for CPUs already allocated", "pod", api::PodKey(pod));
    return {{api::kResourceCPU, GenerateCPUTopologyHints(assigned, CPUSet(), requested)}};
  }
  CPUSet reusable = assigned;
  if (auto it = cpus_to_reuse_.find(uid); it != cpus_to_reuse_.end()) {
    reusable = reusable.Union(it->second);
  }
  std::vector<TopologyHint> hints =
      GenerateCPUTopologyHints(GetAvailableCPUs(state), reusable, requested);
  KLOG_INFO("TopologyHints generated", "pod", api::PodKey(pod), "cpuHints", HintsText(hints));
  return {{api::kResourceCPU, std::move(hints)}};
}

std::vector<TopologyHint> StaticPolicy::GenerateCPUTopologyHints(const CPUSet& available,
                                                                 const CPUSet& reusable,
                                                                 int request) const {
  const std::set<int> numa_nodes = topology_.NUMANodes();
  int min_affinity_size = static_cast<int>(numa_nodes.size());
  auto numa_of = [this](int cpu) {
    auto it = topology_.details.find(cpu);
    return it == topology_.details.end() ? 0 : it->second.numa_node;
  };
  std::vector<TopologyHint> hints;
  IterateMasks(std::vector<int>(numa_nodes.begin(), numa_nodes.end()), [&](NUMAMask mask) {
    // The narrowest set of NUMA nodes that could hold the request on an idle machine.
    if (topology_.CPUsInNUMANodes(ToSet(mask)).Size() >= request &&
        mask.Count() < min_affinity_size) {
      min_affinity_size = mask.Count();
    }
    int matching = 0;
    for (int cpu : reusable.List()) {
      // Reusable CPUs outside the mask rule it out.
      if (!mask.IsSet(numa_of(cpu))) return;
      ++matching;
    }
    for (int cpu : available.List()) {
      if (mask.IsSet(numa_of(cpu))) ++matching;
    }
    if (matching < request) return;
    hints.push_back(TopologyHint{mask, false});
  });
  for (TopologyHint& hint : hints) {
    if (options_.align_by_socket && IsHintSocketAligned(hint, min_affinity_size)) {
      hint.preferred = true;
      continue;
    }
    if (hint.numa_affinity->Count() == min_affinity_size) hint.preferred = true;
  }
  return hints;
}

bool StaticPolicy::IsHintSocketAligned(const TopologyHint& hint, int min_affinity_size) const {
  if (topology_.num_sockets == 0) return false;
  const int numa_per_socket = topology_.num_numa_nodes / topology_.num_sockets;
  if (numa_per_socket == 0) return false;
  const int min_sockets = (min_affinity_size + numa_per_socket - 1) / numa_per_socket;
  const std::set<int> nodes = ToSet(*hint.numa_affinity);
  std::set<int> sockets;
  for (const auto& [cpu, info] : topology_.details) {
    if (nodes.count(info.numa_node) > 0) sockets.insert(info.socket);
  }
  return static_cast<int>(sockets.size()) == min_sockets;
}

}  // namespace kubelet::cpumanager
