#include "kubelet/topologymanager/policy.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace kubelet::topologymanager {
namespace {

// The narrowest mask among the hints that have one (upstream narrowestHint).
std::optional<NUMAMask> NarrowestMask(const std::vector<TopologyHint>& hints) {
  std::optional<NUMAMask> best;
  for (const TopologyHint& h : hints) {
    if (!h.numa_affinity.has_value()) continue;
    if (!best.has_value() || h.numa_affinity->IsNarrowerThan(*best)) best = h.numa_affinity;
  }
  return best;
}

int MaxOfMinAffinityCounts(const HintLists& lists) {
  int max_of_min = 0;
  for (const std::vector<TopologyHint>& list : lists) {
    std::optional<NUMAMask> narrowest = NarrowestMask(list);
    if (narrowest.has_value() && narrowest->Count() > max_of_min) max_of_min = narrowest->Count();
  }
  return max_of_min;
}

void Iterate(const HintLists& lists, size_t i, std::vector<TopologyHint>& accum,
             absl::FunctionRef<void(const std::vector<TopologyHint>&)> fn) {
  if (i == lists.size()) {
    fn(accum);
    return;
  }
  for (const TopologyHint& h : lists[i]) {
    accum.push_back(h);
    Iterate(lists, i + 1, accum, fn);
    accum.pop_back();
  }
}

}  // namespace

HintLists FilterProvidersHints(const std::vector<TopologyHints>& providers_hints) {
  HintLists out;
  for (const TopologyHints& hints : providers_hints) {
    if (hints.empty()) {
      KLOG_V(4, "Hint Provider has no preference for NUMA affinity with any resource");
      out.push_back({TopologyHint{std::nullopt, true}});
      continue;
    }
    for (const auto& [resource, list] : hints) {
      if (!list.has_value()) {
        KLOG_V(4, "Hint Provider has no preference for NUMA affinity with resource", "resource",
               resource);
        out.push_back({TopologyHint{std::nullopt, true}});
      } else if (list->empty()) {
        KLOG_V(4, "Hint Provider has no possible NUMA affinities for resource", "resource",
               resource);
        out.push_back({TopologyHint{std::nullopt, false}});
      } else {
        out.push_back(*list);
      }
    }
  }
  return out;
}

HintLists FilterSingleNumaHints(const HintLists& hints) {
  HintLists out;
  out.reserve(hints.size());
  for (const std::vector<TopologyHint>& list : hints) {
    std::vector<TopologyHint> kept;
    for (const TopologyHint& h : list) {
      if (!h.preferred) continue;
      if (!h.numa_affinity.has_value() || h.numa_affinity->Count() == 1) kept.push_back(h);
    }
    out.push_back(std::move(kept));
  }
  return out;
}

TopologyHint MergePermutation(NUMAMask default_affinity, const std::vector<TopologyHint>& hints) {
  bool preferred = true;
  NUMAMask merged = default_affinity;
  std::optional<NUMAMask> first;
  for (const TopologyHint& h : hints) {
    if (h.numa_affinity.has_value()) {
      if (!first.has_value()) {
        first = h.numa_affinity;
      } else if (*h.numa_affinity != *first) {
        preferred = false;  // the resources would not be aligned on the same nodes
      }
      merged = merged.And(*h.numa_affinity);
    }
    if (!h.preferred) preferred = false;
  }
  return TopologyHint{merged, preferred};
}

void IterateAllProviderTopologyHints(const HintLists& lists,
                                     absl::FunctionRef<void(const std::vector<TopologyHint>&)> fn) {
  std::vector<TopologyHint> accum;
  accum.reserve(lists.size());
  Iterate(lists, 0, accum, fn);
}

HintMerger::HintMerger(const NUMAInfo& numa, HintLists hints, std::string_view policy_name,
                       PolicyOptions opts)
    : numa_(numa),
      hints_(std::move(hints)),
      prefer_closest_(policy_name != kPolicySingleNumaNode && opts.prefer_closest_numa),
      best_non_preferred_count_(MaxOfMinAffinityCounts(hints_)) {}

bool HintMerger::FitsBetter(NUMAMask current, NUMAMask candidate) const {
  if (candidate == current) return false;
  const NUMAMask best =
      prefer_closest_ ? numa_.Closest(current, candidate) : numa_.Narrowest(current, candidate);
  return best != current;
}

bool HintMerger::Better(const std::optional<TopologyHint>& current,
                        const TopologyHint& candidate) const {
  // Merged hints always carry a mask; an empty one cannot be allocated.
  const NUMAMask cand = candidate.numa_affinity.value_or(NUMAMask());
  if (cand.Count() == 0) return false;
  if (!current.has_value()) return true;
  const NUMAMask cur = current->numa_affinity.value_or(NUMAMask());
  if (current->preferred != candidate.preferred) return candidate.preferred;
  if (current->preferred) return FitsBetter(cur, cand);

  // Both non-preferred: aim for the width of the widest narrowest mask among the resources,
  // from below rather than above.
  const int best = best_non_preferred_count_;
  if (cur.Count() > best) return FitsBetter(cur, cand);
  if (cur.Count() == best) return cand.Count() == best && FitsBetter(cur, cand);
  if (cand.Count() > best) return false;
  if (cand.Count() == best) return true;
  if (cand.Count() != cur.Count()) return cand.Count() > cur.Count();
  return FitsBetter(cur, cand);
}

TopologyHint HintMerger::Merge() const {
  const NUMAMask default_affinity = numa_.DefaultAffinityMask();
  std::optional<TopologyHint> best;
  IterateAllProviderTopologyHints(hints_, [&](const std::vector<TopologyHint>& permutation) {
    TopologyHint merged = MergePermutation(default_affinity, permutation);
    if (Better(best, merged)) best = merged;
  });
  if (!best.has_value()) return TopologyHint{default_affinity, false};
  return *best;
}

absl::StatusOr<Policy> Policy::New(std::string_view name, NUMAInfo numa, PolicyOptions opts) {
  if (name != kPolicyNone && name != kPolicyBestEffort && name != kPolicyRestricted &&
      name != kPolicySingleNumaNode) {
    return absl::InvalidArgumentError(absl::StrCat("unknown policy: ", log::Quote(name)));
  }
  return Policy(std::string(name), std::move(numa), opts);
}

Policy::Result Policy::Merge(const std::vector<TopologyHints>& providers_hints) const {
  if (name_ == kPolicyNone) return Result{TopologyHint{std::nullopt, false}, true};
  HintLists filtered = FilterProvidersHints(providers_hints);
  if (name_ == kPolicySingleNumaNode) {
    HintMerger merger(numa_, FilterSingleNumaHints(filtered), name_, opts_);
    TopologyHint best = merger.Merge();
    if (best.numa_affinity == numa_.DefaultAffinityMask()) best.numa_affinity = std::nullopt;
    return Result{best, best.preferred};
  }
  HintMerger merger(numa_, std::move(filtered), name_, opts_);
  TopologyHint best = merger.Merge();
  return Result{best, name_ == kPolicyBestEffort || best.preferred};
}

std::string BitMaskString(NUMAMask mask) {
  const uint64_t v = mask.bits();
  int width = 2;
  for (int shift = 62; shift > 0; shift -= 2) {
    if (v > (uint64_t{1} << shift)) {
      width = shift + 2;
      break;
    }
  }
  std::string digits;
  for (uint64_t x = v; x != 0; x >>= 1) digits.insert(digits.begin(), (x & 1) ? '1' : '0');
  if (static_cast<int>(digits.size()) < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

std::string HintString(const TopologyHint& hint) {
  return absl::StrCat("{\"NUMANodeAffinity\":",
                      hint.numa_affinity.has_value()
                          ? absl::StrCat("\"", BitMaskString(*hint.numa_affinity), "\"")
                          : std::string("null"),
                      ",\"Preferred\":", hint.preferred ? "true" : "false", "}");
}

}  // namespace kubelet::topologymanager
