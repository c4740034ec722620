// Pod resource arithmetic shared by admission, the runtime manager and the container manager
// (upstream k8s.io/component-helpers resource.PodRequests / PodLimits with v1.28 sidecar
// semantics, and the cgroup CPU conversions of pkg/kubelet/cm).
// Pure functions; thread-safe.
#ifndef KUBELET_API_RESOURCE_HELPERS_H_
#define KUBELET_API_RESOURCE_HELPERS_H_

#include <cstdint>

#include "api/pod.h"

namespace kubelet::api {

inline constexpr int64_t kMinShares = 2;
inline constexpr int64_t kMaxShares = 262144;
inline constexpr int64_t kSharesPerCPU = 1024;
inline constexpr int64_t kMilliCPUToCPU = 1000;
inline constexpr int64_t kQuotaPeriodUs = 100000;   // 100ms
inline constexpr int64_t kMinQuotaPeriodUs = 1000;  // 1ms

struct PodResourcesOptions {
  // Leave pod.spec.overhead out (the sandbox's own resources; overhead is passed apart).
  bool exclude_overhead = false;
  // InPlacePodVerticalScaling (upstream InPlacePodVerticalScalingEnabled, requests only): an app
  // container with a status counts the larger of its spec requests and its status's
  // allocatedResources per resource, or only the allocatedResources while status.resize is
  // Infeasible.
  bool in_place_pod_vertical_scaling = false;
};

// Effective requests: the sum over app containers and sidecars (restartable init containers),
// at least the largest init container step (a regular init container runs beside the sidecars
// started before it), plus overhead for every resource it names.
ResourceList PodRequests(const Pod& pod, PodResourcesOptions options = {});
// Effective limits, aggregated the same way; overhead is added only to resources that have a
// limit.
ResourceList PodLimits(const Pod& pod, PodResourcesOptions options = {});
// Whether every app and init container sets a non-zero limit for `resource`.
bool AllContainersHaveLimit(const Pod& pod, const char* resource);

// 1024 shares per core, at least kMinShares (also for 0), at most kMaxShares.
int64_t MilliCPUToShares(int64_t milli_cpu);
// milli_cpu * period / 1000, at least kMinQuotaPeriodUs; 0 for 0 (no limit).
int64_t MilliCPUToQuota(int64_t milli_cpu, int64_t period_us);
// cgroup v2 cpu.weight from shares: 1 + ((shares - 2) * 9999) / 262142, as runc converts.
int64_t SharesToWeight(int64_t shares);

}  // namespace kubelet::api

#endif  // KUBELET_API_RESOURCE_HELPERS_H_
