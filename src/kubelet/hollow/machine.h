// The machine a hollow node reports: what its Node's status says about capacity, allocatable
// and the system (node info), from the hollow mode's flags (the same for every node of the
// process), with ids of its own per node.
//
//   capacity     cpu, memory, ephemeral-storage as given; pods = maxPods
//   allocatable  capacity minus kubeReserved and systemReserved (cpu, memory,
//                ephemeral-storage; as the container manager computes it on a real node,
//                without the eviction thresholds)
//   ids          machine-id and system-uuid derived from the node name (stable across
//                restarts of the hollow process), a boot id per process start
//   kernel       this machine's kernel release; OS image "Hollow Node"
//
// Errors name the bad quantity.
#ifndef KUBELET_KUBELET_HOLLOW_MACHINE_H_
#define KUBELET_KUBELET_HOLLOW_MACHINE_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "kubelet/nodestatus/node_status.h"

namespace kubelet::hollow {

struct MachineSpec {
  std::string cpu = "4";
  std::string memory = "16Gi";
  std::string ephemeral_storage = "100Gi";
  int64_t max_pods = 110;
  // kubeReserved and systemReserved of the configuration, by resource name.
  std::map<std::string, std::string> kube_reserved;
  std::map<std::string, std::string> system_reserved;
};

absl::StatusOr<nodestatus::MachineFacts> SimulatedMachine(const MachineSpec& spec,
                                                          const std::string& node_name,
                                                          const std::string& boot_id);

}  // namespace kubelet::hollow

#endif  // KUBELET_KUBELET_HOLLOW_MACHINE_H_
