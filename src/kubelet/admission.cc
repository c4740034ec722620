#include "kubelet/admission.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace kubelet {
namespace {

PodRequests ContainerRequests(const api::Container& c) {
  PodRequests r;
  auto cpu = c.resources.requests.find("cpu");
  if (cpu != c.resources.requests.end()) r.milli_cpu = cpu->second.MilliValue();
  auto mem = c.resources.requests.find("memory");
  if (mem != c.resources.requests.end()) r.memory_bytes = mem->second.Value();
  return r;
}

}  // namespace

PodRequests ComputePodRequests(const api::Pod& pod) {
  PodRequests sum;
  for (const auto& c : pod.spec.containers) {
    PodRequests r = ContainerRequests(c);
    sum.milli_cpu += r.milli_cpu;
    sum.memory_bytes += r.memory_bytes;
  }
  // Init containers run one at a time, but sidecars (restartable init containers) keep running
  // beside everything started after them.
  PodRequests sidecars, init_max;
  for (const auto& c : pod.spec.init_containers) {
    PodRequests r = ContainerRequests(c);
    if (c.restart_policy && *c.restart_policy == "Always") {
      sidecars.milli_cpu += r.milli_cpu;
      sidecars.memory_bytes += r.memory_bytes;
      init_max.milli_cpu = std::max(init_max.milli_cpu, sidecars.milli_cpu);
      init_max.memory_bytes = std::max(init_max.memory_bytes, sidecars.memory_bytes);
    } else {
      init_max.milli_cpu = std::max(init_max.milli_cpu, sidecars.milli_cpu + r.milli_cpu);
      init_max.memory_bytes =
          std::max(init_max.memory_bytes, sidecars.memory_bytes + r.memory_bytes);
    }
  }
  sum.milli_cpu += sidecars.milli_cpu;
  sum.memory_bytes += sidecars.memory_bytes;
  sum.milli_cpu = std::max(sum.milli_cpu, init_max.milli_cpu);
  sum.memory_bytes = std::max(sum.memory_bytes, init_max.memory_bytes);
  auto cpu = pod.spec.overhead.find("cpu");
  if (cpu != pod.spec.overhead.end()) sum.milli_cpu += cpu->second.MilliValue();
  auto mem = pod.spec.overhead.find("memory");
  if (mem != pod.spec.overhead.end()) sum.memory_bytes += mem->second.Value();
  return sum;
}

AdmitResult AdmitPod(const api::Pod& pod, const std::vector<api::Pod>& admitted,
                     const NodeAllocatable& allocatable) {
  AdmitResult r;
  int64_t used_pods = static_cast<int64_t>(admitted.size());
  if (used_pods + 1 > allocatable.pods) {
    r.admit = false;
    r.reason = "OutOfpods";
    r.message =
        absl::StrCat("Node didn't have enough resource: pods, requested: 1, used: ", used_pods,
                     ", capacity: ", allocatable.pods);
    return r;
  }
  PodRequests want = ComputePodRequests(pod);
  PodRequests used;
  for (const api::Pod& p : admitted) {
    PodRequests q = ComputePodRequests(p);
    used.milli_cpu += q.milli_cpu;
    used.memory_bytes += q.memory_bytes;
  }
  if (want.milli_cpu > 0 && used.milli_cpu + want.milli_cpu > allocatable.milli_cpu) {
    r.admit = false;
    r.reason = "OutOfcpu";
    r.message = absl::StrCat("Node didn't have enough resource: cpu, requested: ", want.milli_cpu,
                             ", used: ", used.milli_cpu, ", capacity: ", allocatable.milli_cpu);
    return r;
  }
  if (want.memory_bytes > 0 && used.memory_bytes + want.memory_bytes > allocatable.memory_bytes) {
    r.admit = false;
    r.reason = "OutOfmemory";
    r.message =
        absl::StrCat("Node didn't have enough resource: memory, requested: ", want.memory_bytes,
                     ", used: ", used.memory_bytes, ", capacity: ", allocatable.memory_bytes);
    return r;
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
