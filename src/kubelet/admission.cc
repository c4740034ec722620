#include "kubelet/admission.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "api/resource_helpers.h"
#include "api/static_pod.h"

namespace kubelet {

PodRequests ComputePodRequests(const api::Pod& pod) {
  const api::ResourceList reqs = api::PodRequests(pod);
  PodRequests r;
  if (auto cpu = reqs.find(api::kResourceCPU); cpu != reqs.end())
    r.milli_cpu = cpu->second.MilliValue();
  if (auto mem = reqs.find(api::kResourceMemory); mem != reqs.end())
    r.memory_bytes = mem->second.Value();
  return r;
}

namespace {

struct Port {
  std::string ip;
  std::string protocol;
  int32_t port;
};

std::vector<Port> HostPorts(const api::Pod& pod) {
  std::vector<Port> out;
  auto add = [&](const std::vector<api::Container>& cs) {
    for (const auto& c : cs) {
      for (const auto& p : c.ports) {
        if (p.host_port <= 0) continue;
        out.push_back({p.host_ip.empty() ? "0.0.0.0" : p.host_ip,
                       p.protocol.empty() ? "TCP" : p.protocol, p.host_port});
      }
    }
  };
  add(pod.spec.init_containers);
  add(pod.spec.containers);
  return out;
}

bool PortsConflict(const Port& a, const Port& b) {
  if (a.port != b.port || a.protocol != b.protocol) return false;
  return a.ip == b.ip || a.ip == "0.0.0.0" || b.ip == "0.0.0.0";
}

// One resource the node is short of (upstream InsufficientResourceError).
struct Shortage {
  std::string resource;
  int64_t requested = 0, used = 0, capacity = 0;
};

}  // namespace

AdmitResult AdmitPod(const api::Pod& pod, const std::vector<api::Pod>& admitted,
                     const NodeAllocatable& allocatable) {
  // The scheduler's resource fit, in its order: pods, cpu, memory.
  std::vector<Shortage> short_of;
  int64_t used_pods = static_cast<int64_t>(admitted.size());
  if (used_pods + 1 > allocatable.pods)
    short_of.push_back({"pods", 1, used_pods, allocatable.pods});
  PodRequests want = ComputePodRequests(pod);
  PodRequests used;
  for (const api::Pod& p : admitted) {
    PodRequests q = ComputePodRequests(p);
    used.milli_cpu += q.milli_cpu;
    used.memory_bytes += q.memory_bytes;
  }
  if (want.milli_cpu > 0 && used.milli_cpu + want.milli_cpu > allocatable.milli_cpu) {
    short_of.push_back({"cpu", want.milli_cpu, used.milli_cpu, allocatable.milli_cpu});
  }
  if (want.memory_bytes > 0 && used.memory_bytes + want.memory_bytes > allocatable.memory_bytes) {
    short_of.push_back({"memory", want.memory_bytes, used.memory_bytes, allocatable.memory_bytes});
  }
  // Host ports (the NodePorts predicate).
  bool port_conflict = false;
  std::vector<Port> wanted_ports = HostPorts(pod);
  for (const api::Pod& p : admitted) {
    if (port_conflict) break;
    for (const Port& a : HostPorts(p)) {
      for (const Port& b : wanted_ports) port_conflict = port_conflict || PortsConflict(a, b);
    }
  }

  AdmitResult r;
  if (!short_of.empty() && api::IsCriticalPod(pod)) {
    // Insufficient resources do not reject a critical pod: the kubelet tries to preempt
    // non-critical pods for it (upstream CriticalPodAdmissionHandler). Only non-critical pods
    // can be preempted; what they request is what preemption could reclaim.
    PodRequests reclaimable;
    int64_t preemptable_pods = 0;
    for (const api::Pod& p : admitted) {
      if (api::IsCriticalPod(p)) continue;
      PodRequests q = ComputePodRequests(p);
      reclaimable.milli_cpu += q.milli_cpu;
      reclaimable.memory_bytes += q.memory_bytes;
      ++preemptable_pods;
    }
    std::string unmet;
    for (const Shortage& sh : short_of) {
      int64_t need = sh.used + sh.requested - sh.capacity;
      int64_t can = sh.resource == "pods"  ? preemptable_pods
                    : sh.resource == "cpu" ? reclaimable.milli_cpu
                                           : reclaimable.memory_bytes;
      if (can < need) absl::StrAppend(&unmet, "(res: ", sh.resource, ", q: ", need - can, "), ");
    }
    r.admit = false;
    r.reason = "UnexpectedAdmissionError";
    if (!unmet.empty()) {
      r.message = absl::StrCat(
          "Unexpected error while attempting to recover from admission failure: preemption: "
          "error finding a set of pods to preempt: no set of running pods found to reclaim "
          "resources: [",
          unmet, "]");
    } else {
      // Evicting non-critical pods needs API-server pods (a standalone node runs static pods
      // only, all critical), so this cannot happen yet; refuse rather than over-commit.
      r.message =
          "Unexpected error while attempting to recover from admission failure: preemption: "
          "evicting non-critical pods is not supported by this kubelet yet";
    }
    return r;
  }
  if (!short_of.empty()) {
    const Shortage& sh = short_of.front();
    r.admit = false;
    r.reason = "OutOf" + sh.resource;
    r.message = absl::StrCat("Node didn't have enough resource: ", sh.resource,
                             ", requested: ", sh.requested, ", used: ", sh.used,
                             ", capacity: ", sh.capacity);
    return r;
  }
  if (port_conflict) {
    r.admit = false;
    r.reason = "NodePorts";
    r.message = "Predicate NodePorts failed";
  }
  return r;
}

NodeAllocatable MachineAllocatable(int64_t max_pods, int64_t reserved_milli_cpu,
                                   int64_t reserved_memory_bytes) {
  NodeAllocatable a;
  a.pods = max_pods;
  a.milli_cpu = static_cast<int64_t>(::sysconf(_SC_NPROCESSORS_ONLN)) * 1000 - reserved_milli_cpu;
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemTotal:", 0) == 0) {
      std::istringstream is(line.substr(9));
      int64_t kb = 0;
      is >> kb;
      a.memory_bytes = kb * 1024 - reserved_memory_bytes;
      break;
    }
  }
  return a;
}

}  // namespace kubelet
