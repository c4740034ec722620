// How the static policy picks CPUs out of a free set (upstream
// pkg/kubelet/cm/cpumanager/cpu_assignment.go, v1.28): topology-aware best fit.
//
// TakeByTopologyNUMAPacked packs an allocation as tightly as the machine allows:
//   1. whole NUMA nodes and whole sockets the request covers, the larger level first (a NUMA
//      node holding several sockets is taken before sockets, and the other way round);
//   2. whole physical cores;
//   3. single threads, preferring cores that are already partly used.
// At every step candidates are ordered by ascending number of free CPUs in the enclosing
// level, then by id, so allocations fill already fragmented sockets / NUMA nodes / cores first
// and leave whole ones free for larger requests.
//
// TakeByTopologyNUMADistributed (option distribute-cpus-across-numa, KEP-2902) takes a request
// that needs several NUMA nodes evenly from the fewest NUMA nodes that can hold it, in groups of
// `cpu_group_size` CPUs (threads per core with full-pcpus-only, else 1), with any remainder
// placed where it leaves the free CPUs per NUMA node best balanced (lowest standard deviation);
// it falls back to packing when no combination works or the request is not a multiple of the
// group size.
//
// Errors: "not enough cpus available to satisfy request: requested=N, available=M" when the free
// set is too small, "failed to allocate cpus" otherwise. Pure functions; thread-safe.
#ifndef KUBELET_KUBELET_CPUMANAGER_CPU_ASSIGNMENT_H_
#define KUBELET_KUBELET_CPUMANAGER_CPU_ASSIGNMENT_H_

#include "absl/status/statusor.h"
#include "config/cpuset.h"
#include "kubelet/topology/topology.h"

namespace kubelet::cpumanager {

absl::StatusOr<config::CPUSet> TakeByTopologyNUMAPacked(const topology::CPUTopology& topo,
                                                        const config::CPUSet& available,
                                                        int num_cpus);

absl::StatusOr<config::CPUSet> TakeByTopologyNUMADistributed(const topology::CPUTopology& topo,
                                                             const config::CPUSet& available,
                                                             int num_cpus, int cpu_group_size);

}  // namespace kubelet::cpumanager

#endif  // KUBELET_KUBELET_CPUMANAGER_CPU_ASSIGNMENT_H_
