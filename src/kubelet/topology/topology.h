// The machine's CPU topology (upstream pkg/kubelet/cm/cpumanager/topology): which NUMA node,
// socket and physical core each logical CPU belongs to, for the CPU, memory and topology
// managers. Discovered from sysfs (DiscoverCPUTopology, with the root a parameter so that tests
// describe 2-socket, multi-NUMA and SMT machines as directory trees), or built directly.
// Value type; thread-compatible.
#ifndef KUBELET_KUBELET_TOPOLOGY_TOPOLOGY_H_
#define KUBELET_KUBELET_TOPOLOGY_TOPOLOGY_H_

#include <map>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "config/cpuset.h"

namespace kubelet::topology {

using config::CPUSet;

struct CPUInfo {
  int numa_node = 0;
  int socket = 0;
  // The physical core, named by the lowest logical CPU id among its threads (upstream
  // getUniqueCoreID: sysfs core ids repeat across sockets).
  int core = 0;
  bool operator==(const CPUInfo&) const = default;
};

struct CPUTopology {
  int num_cpus = 0;
  int num_cores = 0;
  int num_sockets = 0;
  int num_numa_nodes = 0;
  std::map<int, CPUInfo> details;  // by logical CPU id

  // Builds the counts from `details`.
  static CPUTopology FromDetails(std::map<int, CPUInfo> details);

  int CPUsPerCore() const { return num_cores == 0 ? 0 : num_cpus / num_cores; }
  int CPUsPerSocket() const { return num_sockets == 0 ? 0 : num_cpus / num_sockets; }
  CPUSet CPUs() const;
  std::set<int> NUMANodes() const;
  std::set<int> Sockets() const;
  // The CPUs of the given NUMA nodes / sockets / cores (core = its lowest CPU id).
  CPUSet CPUsInNUMANodes(const std::set<int>& nodes) const;
  CPUSet CPUsInSockets(const std::set<int>& sockets) const;
  CPUSet CPUsInCores(const std::set<int>& cores) const;
  // The thread siblings of `cpus` (every CPU sharing a core with one of them).
  CPUSet SiblingsOf(const CPUSet& cpus) const;
};

// Reads the online CPUs (<root>/devices/system/cpu/online), each one's socket
// (cpuN/topology/physical_package_id) and core (the lowest id of cpuN/topology/
// thread_siblings_list), and the NUMA nodes (<root>/devices/system/node/nodeN/cpulist; a machine
// without them is one node 0). Errors name the file that could not be read.
absl::StatusOr<CPUTopology> DiscoverCPUTopology(const std::string& sysfs_root = "/sys");

// CPUs 0..num_cpus-1, each its own core, on one socket and NUMA node 0: what the managers use
// when sysfs cannot be read and no policy needs the real topology.
CPUTopology FlatCPUTopology(int num_cpus);

}  // namespace kubelet::topology

#endif  // KUBELET_KUBELET_TOPOLOGY_TOPOLOGY_H_
