// Linux resources of containers and sandboxes, ported from upstream
// kuberuntime_container_linux.go (calculateLinuxResources, generateLinuxContainerResources),
// kuberuntime_sandbox_linux.go (applySandboxResources); pod requests/limits come from
// api/resource_helpers.h (overhead excluded for the sandbox).
//
//   cpu_shares   = MilliCPUToShares(request), or of the limit when no request is set
//   cpu_quota    = MilliCPUToQuota(limit, period), cpu_period = period (with cpuCFSQuota)
//   memory_limit = limit in bytes (0 = unlimited)
//   oom_score_adj per QoS (containers only), "memory.oom.group"="1" on cgroup v2.
// Hugepage limits and swap are not set. Pure functions; thread-safe.
#ifndef KUBELET_KUBELET_KUBERUNTIME_RESOURCES_H_
#define KUBELET_KUBELET_KUBERUNTIME_RESOURCES_H_

#include <cstdint>
#include <optional>

#include "api/pod.h"
#include "cri/proto/api.pb.h"

namespace kubelet::kuberuntime {

struct ResourceSettings {
  bool cpu_cfs_quota = true;
  int64_t cpu_period_us = 100000;
  bool cgroup2_unified = false;
  int64_t memory_capacity = 0;  // bytes, for oom_score_adj
};

runtime::v1::LinuxContainerResources CalculateLinuxResources(
    const std::optional<api::Quantity>& cpu_request, const api::Quantity& cpu_limit,
    const api::Quantity& memory_limit, const ResourceSettings& settings);

runtime::v1::LinuxContainerResources GenerateLinuxContainerResources(
    const api::Pod& pod, const api::Container& container, const ResourceSettings& settings);

// Effective pod requests / limits without overhead: sum of app containers and sidecars, or the
// largest init container step if bigger.

// Sets config.linux.resources (pod requests/limits) and config.linux.overhead.
void ApplySandboxResources(const api::Pod& pod, const ResourceSettings& settings,
                           runtime::v1::PodSandboxConfig* config);

}  // namespace kubelet::kuberuntime

#endif  // KUBELET_KUBELET_KUBERUNTIME_RESOURCES_H_
