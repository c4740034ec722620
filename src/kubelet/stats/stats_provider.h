// Node and pod resource statistics (upstream pkg/kubelet/stats and server/stats): the
// /stats/summary document and the /metrics/resource and /metrics/cadvisor figures.
//
// Contract (the interface the HTTP API relies on; the implementation may add members):
// - Summary() builds the stats/v1alpha1 Summary as JSON (field names as upstream:
//   {"node": {...}, "pods": [...]}) from cgroup files, /proc, statfs and the CRI stats calls.
//   With only_cpu_and_memory the fs/network/volume parts are left out (upstream's
//   ?only_cpu_and_memory=true). The call is bounded: it never blocks longer than the CRI
//   deadlines and returns what it could gather.
// Thread-safety: thread-safe. Ownership: borrows what its constructor takes.
#ifndef KUBELET_KUBELET_STATS_STATS_PROVIDER_H_
#define KUBELET_KUBELET_STATS_STATS_PROVIDER_H_

#include <string>

#include "absl/status/statusor.h"

namespace kubelet::stats {

class StatsProvider {
 public:
  virtual ~StatsProvider() = default;
  // The Summary serialized as JSON text.
  virtual absl::StatusOr<std::string> SummaryJson(bool only_cpu_and_memory) = 0;
};

}  // namespace kubelet::stats

#endif  // KUBELET_KUBELET_STATS_STATS_PROVIDER_H_
