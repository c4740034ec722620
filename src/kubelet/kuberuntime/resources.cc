#include "kubelet/kuberuntime/resources.h"

#include "api/resource_helpers.h"
#include "kubelet/kuberuntime/helpers.h"

namespace kubelet::kuberuntime {
namespace {

api::Quantity Get(const api::ResourceList& list, const char* name) {
  auto it = list.find(name);
  return it == list.end() ? api::Quantity() : it->second;
}

}  // namespace

runtime::v1::LinuxContainerResources CalculateLinuxResources(
    const std::optional<api::Quantity>& cpu_request, const api::Quantity& cpu_limit,
    const api::Quantity& memory_limit, const ResourceSettings& settings) {
  runtime::v1::LinuxContainerResources r;
  if (!cpu_request.has_value()) {
    r.set_cpu_shares(MilliCPUToShares(cpu_limit.MilliValue()));
  } else {
    r.set_cpu_shares(MilliCPUToShares(cpu_request->MilliValue()));
  }
  const int64_t mem = memory_limit.Value();
  if (mem != 0) r.set_memory_limit_in_bytes(mem);
  if (settings.cpu_cfs_quota) {
    const int64_t period = settings.cpu_period_us > 0 ? settings.cpu_period_us : kQuotaPeriod;
    r.set_cpu_quota(MilliCPUToQuota(cpu_limit.MilliValue(), period));
    r.set_cpu_period(period);
  }
  if (settings.cgroup2_unified) (*r.mutable_unified())["memory.oom.group"] = "1";
  return r;
}

runtime::v1::LinuxContainerResources GenerateLinuxContainerResources(
    const api::Pod& pod, const api::Container& container, const ResourceSettings& settings) {
  std::optional<api::Quantity> cpu_request;
  if (auto it = container.resources.requests.find(api::kResourceCPU);
      it != container.resources.requests.end()) {
    cpu_request = it->second;
  }
  runtime::v1::LinuxContainerResources r =
      CalculateLinuxResources(cpu_request, Get(container.resources.limits, api::kResourceCPU),
                              Get(container.resources.limits, api::kResourceMemory), settings);
  r.set_oom_score_adj(GetContainerOOMScoreAdjust(pod, container, settings.memory_capacity));
  return r;
}

void ApplySandboxResources(const api::Pod& pod, const ResourceSettings& settings,
                           runtime::v1::PodSandboxConfig* config) {
  // The sandbox's own resources; overhead is passed apart.
  const api::ResourceList req = api::PodRequests(pod, {.exclude_overhead = true});
  const api::ResourceList lim = api::PodLimits(pod, {.exclude_overhead = true});
  std::optional<api::Quantity> cpu_request;
  if (auto it = req.find(api::kResourceCPU); it != req.end()) cpu_request = it->second;
  runtime::v1::LinuxPodSandboxConfig* linux_config = config->mutable_linux();
  *linux_config->mutable_resources() = CalculateLinuxResources(
      cpu_request, Get(lim, api::kResourceCPU), Get(lim, api::kResourceMemory), settings);
  runtime::v1::LinuxContainerResources* overhead = linux_config->mutable_overhead();
  overhead->Clear();
  if (!pod.spec.overhead.empty()) {
    const api::Quantity cpu = Get(pod.spec.overhead, api::kResourceCPU);
    *overhead =
        CalculateLinuxResources(cpu, cpu, Get(pod.spec.overhead, api::kResourceMemory), settings);
  }
}

}  // namespace kubelet::kuberuntime
