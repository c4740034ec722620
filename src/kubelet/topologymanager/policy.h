// The topology manager's policies: merging the hint providers' hints into one "best" hint and
// deciding whether that hint admits the pod (upstream topologymanager policy*.go, v1.28).
//
// Merging (best-effort, restricted, single-numa-node):
//   1. FilterProvidersHints turns each provider's answer into one hint list per resource: a
//      provider with no hints at all, or a resource mapped to nullopt, gives [{any, preferred}];
//      a resource mapped to an empty list gives [{any, not preferred}].
//   2. Every combination taking one hint per list (IterateAllProviderTopologyHints, in list
//      order) is merged (MergePermutation): the AND of the default affinity (every NUMA node)
//      with each hint's mask ("any" masks nothing); preferred only when every hint is preferred
//      and all hints with a mask have the same mask.
//   3. HintMerger keeps the best merged hint: an empty mask never wins; a preferred hint beats a
//      non-preferred one; between two preferred hints the narrower mask wins (fewer nodes, then
//      the lower mask; with prefer-closest-numa-nodes, for equal widths the smaller average
//      NUMA distance first); between two non-preferred hints the one whose width comes closest
//      to, without exceeding, the widest of the resources' narrowest masks wins. With no
//      non-empty merged hint the result is {every NUMA node, not preferred}.
// Admission: best-effort admits always; restricted admits a preferred hint only; single-numa-
// node first keeps only preferred hints that are "any" or a single node (so a resource left
// with none merges to nothing), reports a result covering every NUMA node as "any", and admits
// a preferred hint only. none merges nothing ({any, not preferred}) and admits.
//
// Value types; Merge is const and thread-safe.
#ifndef KUBELET_KUBELET_TOPOLOGYMANAGER_POLICY_H_
#define KUBELET_KUBELET_TOPOLOGYMANAGER_POLICY_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "kubelet/topologymanager/hint_provider.h"
#include "kubelet/topologymanager/numa_info.h"
#include "kubelet/topologymanager/options.h"

namespace kubelet::topologymanager {

// One hint list per resource, over all providers.
using HintLists = std::vector<std::vector<TopologyHint>>;

// Step 1 above; resources in name order within a provider, providers in order.
HintLists FilterProvidersHints(const std::vector<TopologyHints>& providers_hints);
// single-numa-node's filter: per list, the preferred hints that are "any" or one node.
HintLists FilterSingleNumaHints(const HintLists& hints);
// Step 2 above, for one combination.
TopologyHint MergePermutation(NUMAMask default_affinity, const std::vector<TopologyHint>& hints);
// Calls `fn` with every combination taking one hint from each list, the first list varying
// slowest. No call when a list is empty; one call with an empty combination when `lists` is.
void IterateAllProviderTopologyHints(const HintLists& lists,
                                     absl::FunctionRef<void(const std::vector<TopologyHint>&)> fn);

// Step 3 above.
class HintMerger {
 public:
  // `numa` must outlive the merger.
  HintMerger(const NUMAInfo& numa, HintLists hints, std::string_view policy_name,
             PolicyOptions opts);
  TopologyHint Merge() const;
  // The widest of the lists' narrowest masks (upstream maxOfMinAffinityCounts).
  int best_non_preferred_affinity_count() const { return best_non_preferred_count_; }

 private:
  // Whether `candidate` replaces `current` as the best hint.
  bool Better(const std::optional<TopologyHint>& current, const TopologyHint& candidate) const;
  // Whether the candidate mask fits better than the current one (equal masks: no).
  bool FitsBetter(NUMAMask current, NUMAMask candidate) const;

  const NUMAInfo& numa_;
  HintLists hints_;
  bool prefer_closest_;
  int best_non_preferred_count_;
};

class Policy {
 public:
  // `name`: none, best-effort, restricted or single-numa-node; otherwise `unknown policy: "x"`.
  static absl::StatusOr<Policy> New(std::string_view name, NUMAInfo numa, PolicyOptions opts);

  const std::string& name() const { return name_; }
  const NUMAInfo& numa() const { return numa_; }

  struct Result {
    TopologyHint hint;
    bool admit = false;
  };
  Result Merge(const std::vector<TopologyHints>& providers_hints) const;

 private:
  Policy(std::string name, NUMAInfo numa, PolicyOptions opts)
      : name_(std::move(name)), numa_(std::move(numa)), opts_(opts) {}

  std::string name_;
  NUMAInfo numa_;
  PolicyOptions opts_;
};

// Upstream's renderings, for logs: a mask as bitmask.String() ("10" for node 1, "0101" for nodes
// 0 and 2), a hint as {"NUMANodeAffinity":"10","Preferred":true} (null for "any").
std::string BitMaskString(NUMAMask mask);
std::string HintString(const TopologyHint& hint);

}  // namespace kubelet::topologymanager

#endif  // KUBELET_KUBELET_TOPOLOGYMANAGER_POLICY_H_
