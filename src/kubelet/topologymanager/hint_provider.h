// The contract between the topology manager and the resource managers that feed it (upstream
// pkg/kubelet/cm/topologymanager's TopologyHint, HintProvider and Store): a NUMA-node mask, the
// hints a provider gives for a container or a pod, and the affinity the topology manager chose.
//
// Hints per resource name: a resource that is missing from the map, or maps to nullopt, has no
// preference (any NUMA node will do); one that maps to an empty vector cannot be satisfied on
// any set of NUMA nodes (upstream's nil slice vs empty slice).
//
// Thread-safety: NUMAMask and TopologyHint are values. Providers and stores are called from the
// sync loop (admission) and pod workers; implementations must be thread-safe.
#ifndef KUBELET_KUBELET_TOPOLOGYMANAGER_HINT_PROVIDER_H_
#define KUBELET_KUBELET_TOPOLOGYMANAGER_HINT_PROVIDER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "api/pod.h"

namespace kubelet::topologymanager {

// A set of NUMA node ids 0..63 (upstream bitmask.BitMask).
class NUMAMask {
 public:
  NUMAMask() = default;
  NUMAMask(std::initializer_list<int> nodes) {
    for (int n : nodes) Add(n);
  }
  static NUMAMask FromBits(uint64_t bits) {
    NUMAMask m;
    m.bits_ = bits;
    return m;
  }
  void Add(int node) { bits_ |= uint64_t{1} << node; }
  bool IsSet(int node) const { return (bits_ >> node) & 1; }
  bool IsEmpty() const { return bits_ == 0; }
  int Count() const { return __builtin_popcountll(bits_); }
  uint64_t bits() const { return bits_; }
  // Set ids, ascending.
  std::vector<int> Nodes() const {
    std::vector<int> out;
    for (int i = 0; i < 64; ++i) {
      if (IsSet(i)) out.push_back(i);
    }
    return out;
  }
  NUMAMask And(NUMAMask o) const { return FromBits(bits_ & o.bits_); }
  NUMAMask Or(NUMAMask o) const { return FromBits(bits_ | o.bits_); }
  bool IsSubsetOf(NUMAMask o) const { return (bits_ & ~o.bits_) == 0; }
  // Upstream IsNarrowerThan: fewer bits set, or as many and a lower value.
  bool IsNarrowerThan(NUMAMask o) const {
    return Count() == o.Count() ? bits_ < o.bits_ : Count() < o.Count();
  }
  bool operator==(const NUMAMask&) const = default;
  // The ids joined by commas, e.g. "0,1" (for logs and messages).
  std::string String() const;

 private:
  uint64_t bits_ = 0;
};

struct TopologyHint {
  // nullopt: any NUMA node (no preference).
  std::optional<NUMAMask> numa_affinity;
  bool preferred = false;
  bool operator==(const TopologyHint&) const = default;
};

using TopologyHints = std::map<std::string, std::optional<std::vector<TopologyHint>>>;

// A resource manager that takes part in topology-aware admission (CPU, memory, device managers).
class HintProvider {
 public:
  virtual ~HintProvider() = default;
  // Hints for one container (scope "container") / for the whole pod (scope "pod").
  virtual TopologyHints GetTopologyHints(const api::Pod& pod, const api::Container& container) = 0;
  virtual TopologyHints GetPodTopologyHints(const api::Pod& pod) = 0;
  // Allocates the container's resources, once the topology manager has stored its affinity.
  // An error rejects the pod (UnexpectedAdmissionError "Allocate failed due to <error>, which is
  // unexpected").
  virtual absl::Status Allocate(const api::Pod& pod, const api::Container& container) = 0;
  // Every container of the pod has stopped: release what it holds (exclusive CPUs back to the
  // shared pool, memory, devices). Called by the topology manager's CleanupTerminatedPod.
  virtual void RemovePod(const std::string& pod_uid) { (void)pod_uid; }
};

// An Allocate error with an admission reason of its own (upstream's admission.Error, e.g. the CPU
// manager's "SMTAlignmentError"): the topology manager rejects the pod with `reason` and the
// status message as they are, instead of wrapping it in UnexpectedAdmissionError.
absl::Status AdmissionError(std::string_view reason, std::string_view message);
// The reason AdmissionError attached to `status`; "" for any other status.
std::string AdmissionErrorReason(const absl::Status& status);

// Where providers read the affinity the topology manager chose for a container.
class AffinityStore {
 public:
  virtual ~AffinityStore() = default;
  // The stored hint; {nullopt, true} ("any") when there is none.
  virtual TopologyHint GetAffinity(const std::string& pod_uid,
                                   const std::string& container_name) const = 0;
};

}  // namespace kubelet::topologymanager

#endif  // KUBELET_KUBELET_TOPOLOGYMANAGER_HINT_PROVIDER_H_
