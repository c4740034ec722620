// Pod-level cgroup resource arithmetic, as upstream pkg/kubelet/cm (helpers_linux.go):
// CPU shares from requests, CFS quota from limits, the pod memory limit when every container
// declares one, hugepage limits, and the cgroup v2 conversions.
//
// Pure functions; thread-safe.
#ifndef KUBELET_KUBELET_CM_RESOURCES_H_
#define KUBELET_KUBELET_CM_RESOURCES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "api/pod.h"
#include "api/resource_helpers.h"

namespace kubelet::cm {

// The shared pod resource arithmetic (api/resource_helpers.h).
using api::kMaxShares;
using api::kMilliCPUToCPU;
using api::kMinQuotaPeriodUs;
using api::kMinShares;
using api::kQuotaPeriodUs;
using api::kSharesPerCPU;
using api::MilliCPUToQuota;
using api::MilliCPUToShares;
using api::PodLimits;
using api::PodRequests;
using api::SharesToWeight;

// What a cgroup is set to. Unset fields are left alone.
struct ResourceConfig {
  std::optional<int64_t> cpu_shares;  // v1 cpu.shares; v2 cpu.weight via SharesToWeight
  std::optional<int64_t> cpu_quota;   // microseconds per period; -1 = unlimited
  std::optional<int64_t> cpu_period;  // microseconds
  std::optional<int64_t> memory;      // bytes; -1 = unlimited
  std::optional<int64_t> pids_limit;  // -1 = unlimited
  // Page size in bytes -> limit in bytes. Sizes the machine supports but not listed here are
  // not touched (callers list every size they want limited, 0 included).
  std::map<int64_t, int64_t> hugepage_limits;
  bool operator==(const ResourceConfig&) const = default;
};

// "hugepages-2Mi" -> 2097152; nullopt for other resource names or bad sizes.
std::optional<int64_t> HugePageSizeFromResourceName(std::string_view name);
// "hugepages-<size>" resource name for a page size ("hugepages-2Mi").
std::string HugePageResourceName(int64_t page_size_bytes);
// Page size -> requested bytes for every hugepages-* entry of `requests`.
std::map<int64_t, int64_t> HugePageLimits(const api::ResourceList& requests);
// The kernel's name of a page size in hugetlb control files: "2MB", "1GB", "64KB".
std::string HugePageSizeSuffix(int64_t page_size_bytes);

// The pod cgroup's settings (ResourceConfigForPod): Guaranteed pods get shares, quota and
// memory; Burstable pods shares, plus quota/memory when every container declares that limit;
// BestEffort pods kMinShares. Quota is -1 (unlimited) when `enforce_cpu_limits` is false.
// Hugepage limits come from requests.
ResourceConfig ResourceConfigForPod(const api::Pod& pod, bool enforce_cpu_limits,
                                    int64_t cpu_period_us);

}  // namespace kubelet::cm

#endif  // KUBELET_KUBELET_CM_RESOURCES_H_
