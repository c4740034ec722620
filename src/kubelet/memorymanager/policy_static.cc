#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/quantity.h"
#include "api/static_pod.h"
#include "common/log.h"
#include "kubelet/memorymanager/policy.h"

namespace kubelet::memorymanager {

using topologymanager::NUMAMask;
using topologymanager::TopologyHint;
using topologymanager::TopologyHints;
using Requests = std::map<std::string, uint64_t>;

namespace {

constexpr char kMemory[] = "memory";

bool IsGuaranteed(const api::Pod& pod) { return api::GetPodQOS(pod) == api::QOSClass::kGuaranteed; }

bool IsInitContainer(const api::Pod& pod, const std::string& name) {
  for (const api::Container& c : pod.spec.init_containers) {
    if (c.name == name) return true;
  }
  return false;
}

// The mask of NUMA ids (ids past the mask's 64 bits are dropped; no machine has them).
NUMAMask MaskOf(const std::vector<int>& nodes) {
  NUMAMask m;
  for (int n : nodes) {
    if (n >= 0 && n < 64) m.Add(n);
  }
  return m;
}

bool ValidMaskIds(const std::vector<int>& nodes) {
  return std::all_of(nodes.begin(), nodes.end(), [](int n) { return n >= 0 && n < 64; });
}

bool SameNodeSet(std::vector<int> a, std::vector<int> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  return a == b;
}

bool GroupsEqual(std::vector<int> a, std::vector<int> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

const MemoryTable* FindTable(const NUMANodeMap& ms, int node, const std::string& resource) {
  auto n = ms.find(node);
  if (n == ms.end()) return nullptr;
  auto t = n->second.memory_map.find(resource);
  return t == n->second.memory_map.end() ? nullptr : &t->second;
}

MemoryTable* FindTable(NUMANodeMap* ms, int node, const std::string& resource) {
  auto n = ms->find(node);
  if (n == ms->end()) return nullptr;
  auto t = n->second.memory_map.find(resource);
  return t == n->second.memory_map.end() ? nullptr : &t->second;
}

// bitmask.IterateBitMasks: every non-empty subset, by size, then lexicographically.
void IterateMasks(const std::vector<int>& nodes, const std::function<void(NUMAMask)>& fn) {
  std::vector<int> accum;
  std::function<void(size_t, size_t)> step = [&](size_t start, size_t size) {
    if (accum.size() == size) {
      fn(MaskOf(accum));
      return;
    }
    for (size_t i = start; i < nodes.size(); ++i) {
      accum.push_back(nodes[i]);
      step(i + 1, size);
      accum.pop_back();
    }
  };
  for (size_t size = 1; size <= nodes.size(); ++size) step(0, size);
}

std::string HintString(const TopologyHint& h) {
  return absl::StrCat("{", h.numa_affinity ? h.numa_affinity->String() : "<nil>", " ",
                      h.preferred ? "true" : "false", "}");
}

// Takes `size` bytes of `resource` from the nodes in order (updateMachineState; also the
// expected-state rebuild of Start). Every node of the affinity counts one more assignment.
void Take(NUMANodeMap* ms, const std::vector<int>& affinity, const std::string& resource,
          uint64_t size) {
  for (int node : affinity) {
    auto n = ms->find(node);
    if (n == ms->end()) continue;
    n->second.number_of_assignments++;
    n->second.cells = affinity;
    if (size == 0) continue;
    MemoryTable* t = FindTable(ms, node, resource);
    if (t == nullptr || t->free == 0) continue;
    if (t->free >= size) {
      t->reserved += size;
      t->free -= size;
      size = 0;
      continue;
    }
    size -= t->free;
    t->reserved += t->free;
    t->free = 0;
  }
}

// The best of `hints`: preferred first, then the narrowest (findBestHint).
TopologyHint FindBestHint(const std::vector<TopologyHint>& hints) {
  TopologyHint best;
  for (const TopologyHint& h : hints) {
    if (!best.numa_affinity) {
      best = h;
      continue;
    }
    if (h.preferred && !best.preferred) {
      best = h;
      continue;
    }
    if (h.preferred == best.preferred && h.numa_affinity &&
        h.numa_affinity->IsNarrowerThan(*best.numa_affinity)) {
      best = h;
    }
  }
  return best;
}

bool SatisfiesRequest(const NUMANodeMap& ms, NUMAMask mask, const Requests& requested) {
  for (const auto& [resource, size] : requested) {
    uint64_t free = 0;
    for (int node : mask.Nodes()) {
      const MemoryTable* t = FindTable(ms, node, resource);
      if (t != nullptr) free += t->free;
    }
    if (free < size) return false;
  }
  return true;
}

bool MachineStatesEqual(const NUMANodeMap& real, const NUMANodeMap& expected) {
  if (real.size() != expected.size()) {
    KLOG_ERROR(absl::OkStatus(), "Node states are different", "lengthNode1", real.size(),
               "lengthNode2", expected.size());
    return false;
  }
  for (const auto& [id, s1] : real) {
    auto it = expected.find(id);
    if (it == expected.end()) {
      KLOG_ERROR(absl::OkStatus(), "Node state does not have node ID", "nodeID", id);
      return false;
    }
    const NUMANodeState& s2 = it->second;
    if (s1.number_of_assignments != s2.number_of_assignments) {
      KLOG_ERROR(absl::OkStatus(), "Node states number of assignments are different", "assignment1",
                 s1.number_of_assignments, "assignment2", s2.number_of_assignments);
      return false;
    }
    if (!GroupsEqual(s1.cells, s2.cells)) {
      KLOG_ERROR(absl::OkStatus(), "Node states groups are different", "stateNode1",
                 absl::StrJoin(s1.cells, ","), "stateNode2", absl::StrJoin(s2.cells, ","));
      return false;
    }
    if (s1.memory_map.size() != s2.memory_map.size()) {
      KLOG_ERROR(absl::OkStatus(), "Node states memory map have different lengths", "lengthNode1",
                 s1.memory_map.size(), "lengthNode2", s2.memory_map.size());
      return false;
    }
    for (const auto& [resource, t1] : s1.memory_map) {
      auto t2 = s2.memory_map.find(resource);
      if (t2 == s2.memory_map.end()) {
        KLOG_ERROR(absl::OkStatus(), "Memory state does not have resource", "resource", resource);
        return false;
      }
      if (!(t1 == t2->second)) {
        KLOG_ERROR(absl::OkStatus(), "Memory states for the NUMA node and resource are different",
                   "node", id, "resource", resource, "memoryState1",
                   absl::StrCat("{TotalMemSize:", t1.total, " SystemReserved:", t1.system_reserved,
                                " Allocatable:", t1.allocatable, " Reserved:", t1.reserved,
                                " Free:", t1.free, "}"),
                   "memoryState2",
                   absl::StrCat("{TotalMemSize:", t2->second.total, " SystemReserved:",
                                t2->second.system_reserved, " Allocatable:", t2->second.allocatable,
                                " Reserved:", t2->second.reserved, " Free:", t2->second.free, "}"));
        return false;
      }
    }
  }
  return true;
}

class StaticPolicy final : public Policy {
 public:
  StaticPolicy(MachineMemory machine, SystemReservedMemory reserved,
               const topologymanager::AffinityStore* affinity)
      : machine_(std::move(machine)), reserved_(std::move(reserved)), affinity_(affinity) {}

  std::string_view Name() const override { return kPolicyStatic; }

  absl::Status Start(MemoryState* s) override {
    absl::Status st = ValidateState(s);
    if (!st.ok()) {
      KLOG_ERROR(st, "Invalid state, please drain node and remove policy state file");
    }
    return st;
  }

  absl::Status Allocate(MemoryState* s, const api::Pod& pod,
                        const api::Container& container) override {
    if (!IsGuaranteed(pod)) return absl::OkStatus();
    const std::string& uid = pod.metadata.uid;
    KLOG_INFO("Allocate", "pod", api::PodKey(pod), "containerName", container.name);
    if (const std::vector<Block>* blocks = s->GetBlocks(uid, container.name)) {
      UpdatePodReusableMemory(pod, container.name, *blocks);
      KLOG_INFO("Container already present in state, skipping", "pod", api::PodKey(pod),
                "containerName", container.name);
      return absl::OkStatus();
    }

    const TopologyHint hint = affinity_ != nullptr ? affinity_->GetAffinity(uid, container.name)
                                                   : TopologyHint{std::nullopt, true};
    KLOG_INFO("Got topology affinity", "pod", api::PodKey(pod), "podUID", uid, "containerName",
              container.name, "hint", HintString(hint));

    absl::StatusOr<Requests> requested = ContainerMemoryRequests(container);
    if (!requested.ok()) return requested.status();

    NUMANodeMap ms = s->machine_state;
    TopologyHint best = hint;
    if (!hint.numa_affinity) {
      // No affinity from the topology manager: the hint it would have chosen from ours.
      absl::StatusOr<TopologyHint> def = DefaultHint(ms, uid, *requested);
      if (!def.ok()) return def.status();
      if (!def->preferred && best.preferred) {
        return absl::ResourceExhaustedError(
            "[memorymanager] failed to find the default preferred hint");
      }
      best = *def;
    }
    // The topology manager merges hints by intersection: its affinity may be a subset of the
    // nodes the request needs; extend it to the best of our hints containing it.
    if (!SatisfiesRequest(ms, best.numa_affinity.value_or(NUMAMask()), *requested)) {
      absl::StatusOr<TopologyHint> extended =
          ExtendHint(ms, uid, *requested, best.numa_affinity.value_or(NUMAMask()));
      if (!extended.ok()) return extended.status();
      if (!extended->preferred && best.preferred) {
        return absl::ResourceExhaustedError(
            "[memorymanager] failed to find the extended preferred hint");
      }
      best = *extended;
    }

    const NUMAMask mask = best.numa_affinity.value_or(NUMAMask());
    const std::vector<int> nodes = mask.Nodes();
    std::vector<Block> blocks;
    for (const auto& [resource, size] : *requested) {
      blocks.push_back(Block{nodes, resource, size});
      const uint64_t reusable = Reusable(uid, mask.bits(), resource);
      Take(&ms, nodes, resource, reusable >= size ? 0 : size - reusable);
    }
    UpdatePodReusableMemory(pod, container.name, blocks);
    s->machine_state = std::move(ms);
    s->SetBlocks(uid, container.name, blocks);
    // Keep sum(blocks of the pod) == what the pod holds: the init containers before this one
    // give up what this container reused (their blocks may drop to size 0).
    UpdateInitContainersBlocks(s, pod, container.name, blocks);
    KLOG_V(4, "Allocated exclusive memory", "pod", api::PodKey(pod), "containerName",
           container.name, "numaNodes", mask.String());
    return absl::OkStatus();
  }

  void RemoveContainer(MemoryState* s, const std::string& pod_uid,
                       const std::string& container_name) override {
    const std::vector<Block>* found = s->GetBlocks(pod_uid, container_name);
    if (found == nullptr) return;
    const std::vector<Block> blocks = *found;
    KLOG_INFO("RemoveContainer", "podUID", pod_uid, "containerName", container_name);
    s->Delete(pod_uid, container_name);
    NUMANodeMap& ms = s->machine_state;
    for (const Block& b : blocks) {
      uint64_t released = b.size;
      for (int node : b.numa_affinity) {
        auto n = ms.find(node);
        if (n == ms.end()) continue;
        n->second.number_of_assignments--;
        if (n->second.number_of_assignments == 0) n->second.cells = {node};
        if (released == 0) continue;
        MemoryTable* t = FindTable(&ms, node, b.type);
        if (t == nullptr || t->reserved == 0) continue;
        if (t->reserved < released) {
          released -= t->reserved;
          t->free += t->reserved;
          t->reserved = 0;
          continue;
        }
        t->free += released;
        t->reserved -= released;
        released = 0;
      }
    }
  }

  TopologyHints GetTopologyHints(const MemoryState& s, const api::Pod& pod,
                                 const api::Container& container) override {
    if (!IsGuaranteed(pod)) return {};
    absl::StatusOr<Requests> requested = ContainerMemoryRequests(container);
    if (!requested.ok()) {
      KLOG_ERROR(requested.status(), "Failed to get container requested resources", "pod",
                 api::PodKey(pod), "podUID", pod.metadata.uid, "containerName", container.name);
      return {};
    }
    // Already allocated (e.g. after a restart): the same hints again.
    if (const std::vector<Block>* blocks = s.GetBlocks(pod.metadata.uid, container.name)) {
      return RegenerateHints(pod, container.name, *blocks, *requested);
    }
    return CalculateHints(s.machine_state, pod.metadata.uid, *requested);
  }

  TopologyHints GetPodTopologyHints(const MemoryState& s, const api::Pod& pod) override {
    if (!IsGuaranteed(pod)) return {};
    absl::StatusOr<Requests> requested = PodMemoryRequests(pod);
    if (!requested.ok()) {
      KLOG_ERROR(requested.status(), "Failed to get pod requested resources", "pod",
                 api::PodKey(pod), "podUID", pod.metadata.uid);
      return {};
    }
    for (const std::vector<api::Container>* list :
         {&pod.spec.init_containers, &pod.spec.containers}) {
      for (const api::Container& c : *list) {
        if (const std::vector<Block>* blocks = s.GetBlocks(pod.metadata.uid, c.name)) {
          return RegenerateHints(pod, c.name, *blocks, *requested);
        }
      }
    }
    return CalculateHints(s.machine_state, pod.metadata.uid, *requested);
  }

  std::vector<Block> GetAllocatableMemory(const MemoryState& s) const override {
    std::vector<Block> out;
    for (const auto& [id, node] : s.machine_state) {
      for (const auto& [resource, table] : node.memory_map) {
        if (table.allocatable == 0) continue;
        out.push_back(Block{{id}, resource, table.allocatable});
      }
    }
    return out;
  }

 private:
  uint64_t SystemReserved(int node, const std::string& resource) const {
    auto n = reserved_.find(node);
    if (n == reserved_.end()) return 0;
    auto r = n->second.find(resource);
    return r == n->second.end() ? 0 : r->second;
  }

  NUMANodeMap DefaultMachineState() const {
    NUMANodeMap ms;
    for (const NUMANodeMemory& node : machine_.nodes) {
      NUMANodeState& state = ms[node.id];
      state.cells = {node.id};
      uint64_t hugepages_total = 0;
      for (const HugePages& pool : node.hugepages) {
        const std::string resource = HugePageResourceName(pool.page_size_kb * 1024);
        const uint64_t reserved = SystemReserved(node.id, resource);
        const uint64_t total = pool.num_pages * pool.page_size_kb * 1024;
        const uint64_t allocatable = total - reserved;  // unsigned, as upstream
        state.memory_map[resource] = MemoryTable{total, reserved, allocatable, 0, allocatable};
        hugepages_total += total;
      }
      const uint64_t reserved = SystemReserved(node.id, kMemory);
      const uint64_t allocatable = node.memory_bytes - reserved - hugepages_total;
      state.memory_map[kMemory] =
          MemoryTable{node.memory_bytes, reserved, allocatable, 0, allocatable};
    }
    return ms;
  }

  absl::Status ValidateState(MemoryState* s) const {
    if (s->machine_state.empty()) {
      if (!s->assignments.empty()) {
        return absl::FailedPreconditionError(
            "[memorymanager] machine state can not be empty when it has memory assignments");
      }
      s->machine_state = DefaultMachineState();
      return absl::OkStatus();
    }
    // The state the assignments imply, compared with the stored one: a change of the machine's
    // memory or of the reservations since the file was written fails the start.
    NUMANodeMap expected = DefaultMachineState();
    for (const auto& [pod, containers] : s->assignments) {
      for (const auto& [name, blocks] : containers) {
        for (const Block& b : blocks) {
          for (int node : b.numa_affinity) {
            auto n = expected.find(node);
            if (n == expected.end()) {
              return absl::FailedPreconditionError(
                  absl::StrCat("[memorymanager] (pod: ", pod, ", container: ", name,
                               ") the memory assignment uses the NUMA that does not exist"));
            }
            if (n->second.memory_map.find(b.type) == n->second.memory_map.end()) {
              return absl::FailedPreconditionError(
                  absl::StrCat("[memorymanager] (pod: ", pod, ", container: ", name,
                               ") the memory assignment uses memory resource that does not exist"));
            }
          }
          Take(&expected, b.numa_affinity, b.type, b.size);
        }
      }
    }
    if (!MachineStatesEqual(s->machine_state, expected)) {
      return absl::FailedPreconditionError(
          "[memorymanager] the expected machine state is different from the real one");
    }
    return absl::OkStatus();
  }

  uint64_t Reusable(const std::string& pod_uid, uint64_t mask_bits,
                    const std::string& resource) const {
    auto pod = reusable_.find(pod_uid);
    if (pod == reusable_.end()) return 0;
    auto mask = pod->second.find(mask_bits);
    if (mask == pod->second.end()) return 0;
    auto r = mask->second.find(resource);
    return r == mask->second.end() ? 0 : r->second;
  }

  // Init containers' memory becomes reusable by the containers after them; app containers use
  // it up. Only the pod being admitted is tracked.
  void UpdatePodReusableMemory(const api::Pod& pod, const std::string& container_name,
                               const std::vector<Block>& blocks) {
    const std::string& uid = pod.metadata.uid;
    for (auto it = reusable_.begin(); it != reusable_.end();) {
      it = it->first == uid ? std::next(it) : reusable_.erase(it);
    }
    if (IsInitContainer(pod, container_name)) {
      auto& pod_reusable = reusable_[uid];
      for (const Block& b : blocks) {
        uint64_t& v = pod_reusable[MaskOf(b.numa_affinity).bits()][b.type];
        if (b.size > v) v = b.size;
      }
      return;
    }
    for (const Block& b : blocks) {
      const uint64_t key = MaskOf(b.numa_affinity).bits();
      const uint64_t reusable = Reusable(uid, key, b.type);
      if (reusable == 0) continue;
      uint64_t& v = reusable_[uid][key][b.type];
      v = b.size >= reusable ? 0 : v - b.size;
    }
  }

  void UpdateInitContainersBlocks(MemoryState* s, const api::Pod& pod,
                                  const std::string& container_name,
                                  const std::vector<Block>& blocks) {
    const std::string& uid = pod.metadata.uid;
    for (const Block& cb : blocks) {
      uint64_t size = cb.size;
      for (const api::Container& init : pod.spec.init_containers) {
        if (init.name == container_name || size == 0) break;
        const std::vector<Block>* found = s->GetBlocks(uid, init.name);
        if (found == nullptr || found->empty()) continue;
        std::vector<Block> init_blocks = *found;
        for (Block& ib : init_blocks) {
          if (ib.size == 0 || ib.type != cb.type ||
              !SameNodeSet(ib.numa_affinity, cb.numa_affinity)) {
            continue;
          }
          if (ib.size > size) {
            ib.size -= size;
            size = 0;
          } else {
            size -= ib.size;
            ib.size = 0;
          }
        }
        s->SetBlocks(uid, init.name, std::move(init_blocks));
      }
    }
  }

  TopologyHints CalculateHints(const NUMANodeMap& ms, const std::string& pod_uid,
                               const Requests& requested) const {
    std::vector<int> nodes;
    for (const auto& [id, s] : ms) nodes.push_back(id);
    size_t min_affinity_size = nodes.size();
    std::map<std::string, std::vector<TopologyHint>> hints;
    IterateMasks(nodes, [&](NUMAMask mask) {
      const std::vector<int> bits = mask.Nodes();
      const bool single = bits.size() == 1;
      Requests total_free;
      Requests total_allocatable;
      for (int node : bits) {
        for (const auto& entry : requested) {
          const MemoryTable* t = FindTable(ms, node, entry.first);
          if (t == nullptr) continue;
          total_free[entry.first] += t->free;
          total_allocatable[entry.first] += t->allocatable;
        }
      }
      // Only node sets whose allocatable memory could ever hold the request.
      for (const auto& entry : requested) {
        if (total_allocatable[entry.first] < entry.second) return;
      }
      min_affinity_size = std::min(min_affinity_size, bits.size());
      // A node in a group cannot serve a single-node allocation.
      if (single && ms.at(bits[0]).cells.size() > 1) return;
      for (int node : bits) {
        const NUMANodeState& state = ms.at(node);
        if (single || state.number_of_assignments == 0) continue;
        // A node used by a single-node allocation, or by another group, cannot join this one.
        if (state.cells.size() == 1) return;
        if (!GroupsEqual(state.cells, bits)) return;
      }
      for (const auto& entry : requested) {
        if (total_free[entry.first] + Reusable(pod_uid, mask.bits(), entry.first) < entry.second) {
          return;
        }
      }
      for (const auto& entry : requested) {
        hints[entry.first].push_back(TopologyHint{mask, false});
      }
    });
    TopologyHints out;
    for (auto& [resource, list] : hints) {
      for (TopologyHint& h : list) {
        h.preferred = static_cast<size_t>(h.numa_affinity->Count()) == min_affinity_size;
      }
      out[resource] = std::move(list);
    }
    return out;
  }

  absl::StatusOr<TopologyHint> DefaultHint(const NUMANodeMap& ms, const std::string& pod_uid,
                                           const Requests& requested) const {
    TopologyHints hints = CalculateHints(ms, pod_uid, requested);
    if (hints.empty()) {
      return absl::ResourceExhaustedError(
          "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough "
          "memory is available");
    }
    // Every memory type has the same hints; regular memory's decide.
    auto it = hints.find(kMemory);
    if (it == hints.end() || !it->second) return TopologyHint{};
    return FindBestHint(*it->second);
  }

  absl::StatusOr<TopologyHint> ExtendHint(const NUMANodeMap& ms, const std::string& pod_uid,
                                          const Requests& requested, NUMAMask mask) const {
    TopologyHints hints = CalculateHints(ms, pod_uid, requested);
    std::vector<TopologyHint> containing;
    auto it = hints.find(kMemory);
    if (it != hints.end() && it->second) {
      for (const TopologyHint& h : *it->second) {
        if (mask.IsSubsetOf(*h.numa_affinity)) containing.push_back(h);
      }
    }
    if (containing.empty()) {
      return absl::ResourceExhaustedError(
          "[memorymanager] failed to find NUMA nodes to extend the current topology hint");
    }
    return FindBestHint(containing);
  }

  TopologyHints RegenerateHints(const api::Pod& pod, const std::string& container_name,
                                const std::vector<Block>& blocks, const Requests& requested) const {
    TopologyHints hints;
    for (const auto& entry : requested) hints[entry.first] = std::vector<TopologyHint>{};
    if (blocks.size() != requested.size()) {
      KLOG_ERROR(absl::OkStatus(),
                 "The number of requested resources by the container differs from the number "
                 "of memory blocks",
                 "containerName", container_name);
      return {};
    }
    for (const Block& b : blocks) {
      auto r = requested.find(b.type);
      if (r == requested.end()) {
        KLOG_ERROR(absl::OkStatus(),
                   "Container requested resources do not have resource of this type",
                   "containerName", container_name, "type", b.type);
        return {};
      }
      if (b.size != r->second) {
        KLOG_ERROR(absl::OkStatus(),
                   "Memory already allocated with different numbers than requested", "podUID",
                   pod.metadata.uid, "type", b.type, "containerName", container_name,
                   "requestedResource", r->second, "allocatedSize", b.size);
        return {};
      }
      if (!ValidMaskIds(b.numa_affinity)) {
        KLOG_ERROR(absl::OkStatus(), "Failed to generate NUMA bitmask", "containerName",
                   container_name, "type", b.type);
        return {};
      }
      KLOG_INFO("Regenerating TopologyHints, resource was already allocated to pod", "resourceName",
                b.type, "pod", api::PodKey(pod), "podUID", pod.metadata.uid, "containerName",
                container_name);
      hints[b.type]->push_back(TopologyHint{MaskOf(b.numa_affinity), true});
    }
    return hints;
  }

  const MachineMemory machine_;
  const SystemReservedMemory reserved_;
  const topologymanager::AffinityStore* const affinity_;
  // pod UID -> NUMA mask bits -> memory type -> bytes its init containers left reusable.
  std::map<std::string, std::map<uint64_t, std::map<std::string, uint64_t>>> reusable_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Policy>> NewStaticPolicy(
    MachineMemory machine, SystemReservedMemory reserved,
    const topologymanager::AffinityStore* affinity) {
  uint64_t total = 0;
  for (const auto& [node, resources] : reserved) {
    auto it = resources.find(kMemory);
    if (it != resources.end()) total += it->second;
  }
  if (total == 0) {
    return absl::InvalidArgumentError(
        "[memorymanager] you should specify the system reserved memory");
  }
  return std::unique_ptr<Policy>(
      std::make_unique<StaticPolicy>(std::move(machine), std::move(reserved), affinity));
}

absl::StatusOr<Requests> ContainerMemoryRequests(const api::Container& container) {
  Requests out;
  for (const auto& [name, q] : container.resources.requests) {
    if (name != kMemory && !IsHugePageResourceName(name)) continue;
    // resource.Quantity.AsInt64: whole numbers within int64 only.
    if (!(q == api::Quantity::FromValue(q.Value()))) {
      return absl::InvalidArgumentError("[memorymanager] failed to represent quantity as int64");
    }
    out[name] = static_cast<uint64_t>(q.Value());
  }
  return out;
}

absl::StatusOr<Requests> PodMemoryRequests(const api::Pod& pod) {
  Requests init;
  for (const api::Container& c : pod.spec.init_containers) {
    absl::StatusOr<Requests> r = ContainerMemoryRequests(c);
    if (!r.ok()) return r.status();
    for (const auto& [name, size] : *r) init[name] = std::max(init[name], size);
  }
  Requests app;
  for (const api::Container& c : pod.spec.containers) {
    absl::StatusOr<Requests> r = ContainerMemoryRequests(c);
    if (!r.ok()) return r.status();
    for (const auto& [name, size] : *r) app[name] += size;
  }
  for (auto& [name, size] : app) {
    auto it = init.find(name);
    if (it != init.end() && it->second > size) size = it->second;
  }
  return app;
}

}  // namespace kubelet::memorymanager
