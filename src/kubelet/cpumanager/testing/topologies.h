// Machines for the CPU manager's tests, built directly (the test hosts are none of them), and
// pod builders. Header-only; for tests.
#ifndef KUBELET_KUBELET_CPUMANAGER_TESTING_TOPOLOGIES_H_
#define KUBELET_KUBELET_CPUMANAGER_TESTING_TOPOLOGIES_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "api/pod.h"
#include "kubelet/topology/topology.h"

namespace kubelet::cpumanager::testing {

// 1 socket, 4 cores with 2 threads: CPU c and c+4 share core c.
inline topology::CPUTopology SingleSocketHT() {
  std::map<int, topology::CPUInfo> d;
  for (int c = 0; c < 8; ++c) d[c] = {0, 0, c % 4};
  return topology::CPUTopology::FromDetails(std::move(d));
}

// 2 sockets (= NUMA nodes), 6 cores with 2 threads: even CPUs on socket 0, odd on socket 1; CPU
// c and c+6 share core c.
inline topology::CPUTopology DualSocketHT() {
  std::map<int, topology::CPUInfo> d;
  for (int c = 0; c < 12; ++c) d[c] = {c % 2, c % 2, c % 6};
  return topology::CPUTopology::FromDetails(std::move(d));
}

// 2 sockets (= NUMA nodes) of 4 single-thread cores: 0-3 and 4-7.
inline topology::CPUTopology DualSocketNoHT() {
  std::map<int, topology::CPUInfo> d;
  for (int c = 0; c < 8; ++c) d[c] = {c / 4, c / 4, c};
  return topology::CPUTopology::FromDetails(std::move(d));
}

// 2 sockets with 2 NUMA nodes each, 40 cores with 2 threads (80 CPUs): NUMA node n holds CPUs
// 10n..10n+9 and their siblings 40+10n..40+10n+9; NUMA nodes 0-1 are socket 0, 2-3 socket 1.
inline topology::CPUTopology DualSocketMultiNUMAHT() {
  std::map<int, topology::CPUInfo> d;
  for (int c = 0; c < 80; ++c) {
    const int numa = (c % 40) / 10;
    d[c] = {numa, numa / 2, c % 40};
  }
  return topology::CPUTopology::FromDetails(std::move(d));
}

// 2 CPUs, no SMT, one socket and NUMA node.
inline topology::CPUTopology TwoCPUs() {
  return topology::CPUTopology::FromDetails({{0, {0, 0, 0}}, {1, {0, 0, 1}}});
}

// A container requesting `cpu` (and 1Gi of memory) with equal limits: Guaranteed when every
// container of its pod is built this way.
inline api::Container GuaranteedContainer(const std::string& name, const std::string& cpu) {
  api::Container c;
  c.name = name;
  for (api::ResourceList* l : {&c.resources.requests, &c.resources.limits}) {
    (*l)["cpu"] = *api::ParseQuantity(cpu);
    (*l)["memory"] = *api::ParseQuantity("1Gi");
  }
  return c;
}

inline api::Container BestEffortContainer(const std::string& name) {
  api::Container c;
  c.name = name;
  return c;
}

// CPU request without a limit.
inline api::Container BurstableContainer(const std::string& name, const std::string& cpu) {
  api::Container c;
  c.name = name;
  c.resources.requests["cpu"] = *api::ParseQuantity(cpu);
  return c;
}

inline api::Pod MakePod(const std::string& uid, std::vector<api::Container> containers,
                        std::vector<api::Container> init_containers = {}) {
  api::Pod p;
  p.metadata.uid = uid;
  p.metadata.name = "pod-" + uid;
  p.metadata.namespace_ = "default";
  p.spec.containers = std::move(containers);
  p.spec.init_containers = std::move(init_containers);
  return p;
}

}  // namespace kubelet::cpumanager::testing

#endif  // KUBELET_KUBELET_CPUMANAGER_TESTING_TOPOLOGIES_H_
