#include "kubelet/cpumanager/cpu_assignment.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace kubelet::cpumanager {
namespace {

using config::CPUSet;
using topology::CPUTopology;

enum class Level { kNUMA, kSocket, kCore };

int KeyOf(const topology::CPUInfo& info, Level level) {
  switch (level) {
    case Level::kNUMA:
      return info.numa_node;
    case Level::kSocket:
      return info.socket;
    case Level::kCore:
      return info.core;
  }
  return 0;
}

// Go's math.Round(x*1000)/1000, as upstream rounds its balance scores (ties away from zero).
double Round3(double x) { return std::round(x * 1000) / 1000; }

double StandardDeviation(const std::vector<int>& xs) {
  if (xs.empty()) return 0;
  double sum = 0;
  for (int x : xs) sum += x;
  const double mean = Round3(sum / static_cast<double>(xs.size()));
  double sq = 0;
  for (int x : xs) sq += (x - mean) * (x - mean);
  return Round3(std::sqrt(sq / static_cast<double>(xs.size())));
}

// Calls f on every k-element subset of `n` (in `n`'s order, lexicographically by position);
// f returns false to stop early.
void IterateCombinations(const std::vector<int>& n, int k,
                         const std::function<bool(const std::vector<int>&)>& f) {
  if (k < 1 || k > static_cast<int>(n.size())) return;
  std::vector<int> accum;
  std::function<bool(size_t)> helper = [&](size_t start) -> bool {
    if (static_cast<int>(accum.size()) == k) return f(accum);
    const size_t remaining = static_cast<size_t>(k) - accum.size();
    for (size_t i = start; i + remaining <= n.size(); ++i) {
      accum.push_back(n[i]);
      const bool go_on = helper(i + 1);
      accum.pop_back();
      if (!go_on) return false;
    }
    return true;
  };
  helper(0);
}

// The CPUs still free for one allocation and the ones taken so far.
class Accumulator {
 public:
  Accumulator(const CPUTopology& topo, const CPUSet& available, int needed)
      : topo_(topo), needed_(needed), numa_first_(topo.num_sockets >= topo.num_numa_nodes) {
    for (int cpu : available.List()) {
      if (topo.details.count(cpu) > 0) free_.insert(cpu);
    }
  }

  bool Satisfied() const { return needed_ < 1; }
  bool Failed() const { return needed_ > static_cast<int>(free_.size()); }
  int needed() const { return needed_; }
  CPUSet result() const { return CPUSet(result_); }

  // Free CPUs of a NUMA node.
  CPUSet FreeInNUMANode(int numa) const {
    std::set<int> out;
    for (int cpu : free_) {
      if (topo_.details.at(cpu).numa_node == numa) out.insert(cpu);
    }
    return CPUSet(std::move(out));
  }
  int FreeCount(Level level, int id) const {
    int n = 0;
    for (int cpu : free_) {
      if (KeyOf(topo_.details.at(cpu), level) == id) ++n;
    }
    return n;
  }
  std::vector<int> SortedNUMANodes() const {
    if (numa_first_) return Sorted(Ids(Level::kNUMA, std::nullopt), Level::kNUMA);
    return Nested(SortedSockets(), Level::kSocket, Level::kNUMA);
  }

  void Take(const CPUSet& cpus) {
    for (int cpu : cpus.List()) {
      result_.insert(cpu);
      free_.erase(cpu);
    }
    needed_ -= cpus.Size();
  }

  // Step 1: the larger of NUMA node / socket first, then the other.
  void TakeFullFirstLevel() { numa_first_ ? TakeFullNUMANodes() : TakeFullSockets(); }
  void TakeFullSecondLevel() { numa_first_ ? TakeFullSockets() : TakeFullNUMANodes(); }

  void TakeFullNUMANodes() {
    for (int numa : SortedNUMANodes()) {
      const CPUSet all = topo_.CPUsInNUMANodes({numa});
      if (FreeCount(Level::kNUMA, numa) != all.Size() || needed_ < all.Size()) continue;
      KLOG_V(4, "takeFullNUMANodes: claiming NUMA node", "numa", numa);
      Take(all);
    }
  }
  void TakeFullSockets() {
    for (int socket : SortedSockets()) {
      const CPUSet all = topo_.CPUsInSockets({socket});
      if (FreeCount(Level::kSocket, socket) != topo_.CPUsPerSocket() || needed_ < all.Size()) {
        continue;
      }
      KLOG_V(4, "takeFullSockets: claiming socket", "socket", socket);
      Take(all);
    }
  }
  void TakeFullCores() {
    for (int core : SortedCores()) {
      const CPUSet all = topo_.CPUsInCores({core});
      if (FreeCount(Level::kCore, core) != topo_.CPUsPerCore() || needed_ < all.Size()) continue;
      KLOG_V(4, "takeFullCores: claiming core", "core", core);
      Take(all);
    }
  }
  void TakeRemainingCPUs() {
    for (int cpu : SortedCPUs()) {
      KLOG_V(4, "takeRemainingCPUs: claiming CPU", "cpu", cpu);
      Take(CPUSet{cpu});
      if (Satisfied()) return;
    }
  }

  // The fewest and the most NUMA nodes an allocation in groups of `group` CPUs can span.
  std::pair<int, int> RangeNUMANodesNeeded(int group) const {
    const int num_numa = static_cast<int>(topo_.NUMANodes().size());
    const int num_numa_available = static_cast<int>(Ids(Level::kNUMA, std::nullopt).size());
    const int num_groups = (topo_.num_cpus - 1) / group + 1;
    const int groups_per_numa = (num_groups - 1) / num_numa + 1;
    const int groups_needed = (needed_ - 1) / group + 1;
    return {(groups_needed - 1) / groups_per_numa + 1, std::min(groups_needed, num_numa_available)};
  }

 private:
  // Distinct ids at `level` among the free CPUs, optionally only those within (outer, id).
  std::vector<int> Ids(Level level, std::optional<std::pair<Level, int>> within) const {
    std::set<int> ids;
    for (int cpu : free_) {
      const topology::CPUInfo& info = topo_.details.at(cpu);
      if (within && KeyOf(info, within->first) != within->second) continue;
      ids.insert(KeyOf(info, level));
    }
    return std::vector<int>(ids.begin(), ids.end());
  }
  // Ascending by free CPUs, then by id.
  std::vector<int> Sorted(std::vector<int> ids, Level level) const {
    std::map<int, int> counts;
    for (int cpu : free_) ++counts[KeyOf(topo_.details.at(cpu), level)];
    std::sort(ids.begin(), ids.end(), [&counts](int a, int b) {
      return counts[a] != counts[b] ? counts[a] < counts[b] : a < b;
    });
    return ids;
  }
  // For each outer id in order, its inner ids sorted.
  std::vector<int> Nested(const std::vector<int>& outer_ids, Level outer, Level inner) const {
    std::vector<int> out;
    for (int id : outer_ids) {
      std::vector<int> inner_ids = Sorted(Ids(inner, std::make_pair(outer, id)), inner);
      out.insert(out.end(), inner_ids.begin(), inner_ids.end());
    }
    return out;
  }
  std::vector<int> SortedSockets() const {
    if (numa_first_) return Nested(SortedNUMANodes(), Level::kNUMA, Level::kSocket);
    return Sorted(Ids(Level::kSocket, std::nullopt), Level::kSocket);
  }
  std::vector<int> SortedCores() const {
    if (numa_first_) return Nested(SortedSockets(), Level::kSocket, Level::kCore);
    return Nested(SortedNUMANodes(), Level::kNUMA, Level::kCore);
  }
  std::vector<int> SortedCPUs() const {
    std::vector<int> out;
    for (int core : SortedCores()) {
      for (int cpu : free_) {
        if (topo_.details.at(cpu).core == core) out.push_back(cpu);
      }
    }
    return out;
  }

  const CPUTopology& topo_;
  std::set<int> free_;
  std::set<int> result_;
  int needed_;
  // NUMA nodes hold sockets (or are as many): NUMA nodes are the upper level.
  bool numa_first_;
};

absl::Status NotEnough(int requested, int available) {
  return absl::ResourceExhaustedError(
      absl::StrCat("not enough cpus available to satisfy request: requested=", requested,
                   ", available=", available));
}

}  // namespace

absl::StatusOr<CPUSet> TakeByTopologyNUMAPacked(const CPUTopology& topo, const CPUSet& available,
                                                int num_cpus) {
  Accumulator acc(topo, available, num_cpus);
  if (acc.Satisfied()) return acc.result();
  if (acc.Failed()) return NotEnough(num_cpus, available.Size());
  acc.TakeFullFirstLevel();
  if (acc.Satisfied()) return acc.result();
  acc.TakeFullSecondLevel();
  if (acc.Satisfied()) return acc.result();
  acc.TakeFullCores();
  if (acc.Satisfied()) return acc.result();
  acc.TakeRemainingCPUs();
  if (acc.Satisfied()) return acc.result();
  return absl::InternalError("failed to allocate cpus");
}

absl::StatusOr<CPUSet> TakeByTopologyNUMADistributed(const CPUTopology& topo,
                                                     const CPUSet& available, int num_cpus,
                                                     int cpu_group_size) {
  const int group = std::max(cpu_group_size, 1);
  if (num_cpus % group != 0) return TakeByTopologyNUMAPacked(topo, available, num_cpus);
  Accumulator acc(topo, available, num_cpus);
  if (acc.Satisfied()) return acc.result();
  if (acc.Failed()) return NotEnough(num_cpus, available.Size());

  const std::vector<int> numas = acc.SortedNUMANodes();
  std::map<int, int> free_per_numa;
  for (int numa : numas) free_per_numa[numa] = acc.FreeCount(Level::kNUMA, numa);
  auto values = [](const std::map<int, int>& m) {
    std::vector<int> out;
    for (const auto& kv : m) out.push_back(kv.second);
    return out;
  };
  // Hands `remainder` CPUs out of `after` round-robin over `subset` in groups; false when the
  // subset cannot take them all (upstream would spin forever there).
  auto spread_remainder = [group](std::map<int, int>* after, const std::vector<int>& subset,
                                  int remainder) {
    while (remainder > 0) {
      bool progress = false;
      for (int numa : subset) {
        if (remainder == 0) break;
        if ((*after)[numa] < group) continue;
        (*after)[numa] -= group;
        remainder -= group;
        progress = true;
      }
      if (!progress) return false;
    }
    return true;
  };

  const auto [min_numas, max_numas] = acc.RangeNUMANodesNeeded(group);
  for (int k = min_numas; k <= max_numas; ++k) {
    double best_balance = std::numeric_limits<double>::max();
    std::vector<int> best_remainder;
    std::vector<int> best_combo;
    IterateCombinations(numas, k, [&](const std::vector<int>& combo) {
      if (best_balance == 0) return false;
      int free_in_combo = 0;
      int groups_in_combo = 0;
      for (int numa : combo) {
        free_in_combo += free_per_numa[numa];
        groups_in_combo += free_per_numa[numa] / group;
      }
      if (free_in_combo < num_cpus || groups_in_combo * group < num_cpus) return true;
      const int distribution = (num_cpus / static_cast<int>(combo.size()) / group) * group;
      for (int numa : combo) {
        if (free_per_numa[numa] < distribution) return true;
      }
      std::map<int, int> after = free_per_numa;
      for (int numa : combo) after[numa] -= distribution;
      const int remainder = num_cpus - distribution * static_cast<int>(combo.size());
      std::vector<int> remainder_combo;
      for (int numa : combo) {
        if (after[numa] >= group) remainder_combo.push_back(numa);
      }
      double best_local_balance = std::numeric_limits<double>::max();
      std::vector<int> best_local_remainder;
      if (remainder == 0) best_local_balance = StandardDeviation(values(after));
      for (int r = static_cast<int>(remainder_combo.size()); remainder > 0 && r >= 1; --r) {
        IterateCombinations(remainder_combo, r, [&](const std::vector<int>& subset) {
          int sum = 0;
          for (int numa : subset) sum += after[numa];
          if (sum < remainder) return true;
          std::map<int, int> local = after;
          if (!spread_remainder(&local, subset, remainder)) return true;
          const double balance = StandardDeviation(values(local));
          if (balance < best_local_balance) {
            best_local_balance = balance;
            best_local_remainder = subset;
          }
          return true;
        });
      }
      if (best_local_balance < best_balance) {
        best_balance = best_local_balance;
        best_remainder = best_local_remainder;
        best_combo = combo;
      }
      return true;
    });
    if (best_combo.empty()) continue;

    const int distribution = (num_cpus / static_cast<int>(best_combo.size()) / group) * group;
    for (int numa : best_combo) {
      absl::StatusOr<CPUSet> cpus =
          TakeByTopologyNUMAPacked(topo, acc.FreeInNUMANode(numa), distribution);
      if (cpus.ok()) acc.Take(*cpus);
    }
    int remainder = num_cpus - distribution * static_cast<int>(best_combo.size());
    while (remainder > 0) {
      bool progress = false;
      for (int numa : best_remainder) {
        if (remainder == 0) break;
        const CPUSet free = acc.FreeInNUMANode(numa);
        if (free.Size() < group) continue;
        absl::StatusOr<CPUSet> cpus = TakeByTopologyNUMAPacked(topo, free, group);
        if (!cpus.ok()) continue;
        acc.Take(*cpus);
        remainder -= group;
        progress = true;
      }
      if (!progress) break;
    }
    if (acc.needed() > 0) {
      return absl::InternalError(
          absl::StrCat("accounting error, not enough CPUs allocated, remaining: ", acc.needed()));
    }
    if (acc.needed() < 0) {
      return absl::InternalError(
          absl::StrCat("accounting error, too many CPUs allocated, remaining: ", acc.needed()));
    }
    return acc.result();
  }
  // No combination of NUMA nodes could take an even share: pack instead.
  return TakeByTopologyNUMAPacked(topo, available, num_cpus);
}

}  // namespace kubelet::cpumanager
