// The machine's NUMA nodes as the topology manager sees them (upstream topologymanager
// numa_info.go, v1.28): the node ids, and for prefer-closest-numa-nodes the distance matrix the
// kernel reports in <sysfs>/devices/system/node/nodeN/distance ("10 21" on a 2-node machine:
// the distances from node N to nodes 0, 1, ...).
//
// The node ids come from the caller (the machine's topology); the distances are read from sysfs
// (ReadNUMADistances, with the root a parameter) or given directly. NUMAInfo also holds the two
// ways of choosing between two equally preferred affinity masks: Narrowest (fewer nodes, then
// the lower mask) and Closest (fewer nodes, then the smaller average distance between the
// mask's nodes, then the lower mask).
//
// Value type; thread-compatible.
#ifndef KUBELET_KUBELET_TOPOLOGYMANAGER_NUMA_INFO_H_
#define KUBELET_KUBELET_TOPOLOGYMANAGER_NUMA_INFO_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kubelet/topologymanager/hint_provider.h"

namespace kubelet::topologymanager {

struct NUMAInfo {
  std::vector<int> nodes;
  // distances[i][j]: from node i to node j (indexed by node id, as sysfs lists them). Empty
  // unless prefer-closest-numa-nodes is on.
  std::map<int, std::vector<uint64_t>> distances;

  // Every node (upstream's "default affinity").
  NUMAMask DefaultAffinityMask() const;
  // Whichever of `a`, `b` is narrower (NUMAMask::IsNarrowerThan); `b` when neither is.
  NUMAMask Narrowest(NUMAMask a, NUMAMask b) const;
  // With equal node counts, the mask whose nodes are closer to each other on average (ties: the
  // lower mask); otherwise Narrowest.
  NUMAMask Closest(NUMAMask a, NUMAMask b) const;
  // The mean of distances[i][j] over all ordered pairs (i, j) of the mask's nodes (0 for an
  // empty mask; a missing entry counts as 0).
  double AverageDistance(NUMAMask mask) const;
  // Node ids in 0..63; with `need_distances`, every node's row covering every node id.
  absl::Status Validate(bool need_distances) const;
};

// The distances from `node` to every node: <sysfs_root>/devices/system/node/node<node>/distance,
// space-separated. Errors as upstream: "problem reading <path>: <error>", "cannot convert x to
// int".
absl::StatusOr<std::vector<uint64_t>> ReadNUMADistances(int node,
                                                        const std::string& sysfs_root = "/sys");

// `nodes`, with their distances read from sysfs when `with_distances` (upstream newNUMAInfo).
// An error reads "cannot discover NUMA topology: error getting NUMA distances from sysfs:
// problem reading ...", as upstream's NewManager reports it.
absl::StatusOr<NUMAInfo> NewNUMAInfo(std::vector<int> nodes, bool with_distances,
                                     const std::string& sysfs_root = "/sys");

}  // namespace kubelet::topologymanager

#endif  // KUBELET_KUBELET_TOPOLOGYMANAGER_NUMA_INFO_H_
