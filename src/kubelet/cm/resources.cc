#include "kubelet/cm/resources.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/quantity.h"
#include "api/static_pod.h"

namespace kubelet::cm {
namespace {

int64_t MilliOf(const api::ResourceList& list, const char* name) {
  auto it = list.find(name);
  return it == list.end() ? 0 : it->second.MilliValue();
}

int64_t ValueOf(const api::ResourceList& list, const char* name) {
  auto it = list.find(name);
  return it == list.end() ? 0 : it->second.Value();
}

}  // namespace

std::optional<int64_t> HugePageSizeFromResourceName(std::string_view name) {
  constexpr std::string_view kPrefix = "hugepages-";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  auto q = api::Quantity::Parse(name.substr(kPrefix.size()));
  if (!q.ok() || q->Sign() <= 0) return std::nullopt;
  return q->Value();
}

std::string HugePageResourceName(int64_t page_size_bytes) {
  return "hugepages-" +
         api::Quantity::FromValue(page_size_bytes, api::Quantity::Format::kBinarySI).String();
}

std::map<int64_t, int64_t> HugePageLimits(const api::ResourceList& requests) {
  std::map<int64_t, int64_t> out;
  for (const auto& [name, q] : requests) {
    if (auto size = HugePageSizeFromResourceName(name)) out[*size] += q.Value();
  }
  return out;
}

std::string HugePageSizeSuffix(int64_t page_size_bytes) {
  constexpr int64_t kKB = 1024, kMB = 1024 * kKB, kGB = 1024 * kMB;
  if (page_size_bytes >= kGB && page_size_bytes % kGB == 0) {
    return absl::StrCat(page_size_bytes / kGB, "GB");
  }
  if (page_size_bytes >= kMB && page_size_bytes % kMB == 0) {
    return absl::StrCat(page_size_bytes / kMB, "MB");
  }
  return absl::StrCat(page_size_bytes / kKB, "KB");
}

ResourceConfig ResourceConfigForPod(const api::Pod& pod, bool enforce_cpu_limits,
                                    int64_t cpu_period_us) {
  const api::ResourceList reqs = PodRequests(pod);
  const api::ResourceList limits = PodLimits(pod);
  const bool cpu_declared = api::AllContainersHaveLimit(pod, api::kResourceCPU);
  const bool memory_declared = api::AllContainersHaveLimit(pod, api::kResourceMemory);
  const int64_t shares = MilliCPUToShares(MilliOf(reqs, api::kResourceCPU));
  int64_t quota = MilliCPUToQuota(MilliOf(limits, api::kResourceCPU), cpu_period_us);
  if (!enforce_cpu_limits) quota = -1;
  const int64_t memory = ValueOf(limits, api::kResourceMemory);

  ResourceConfig rc;
  switch (api::GetPodQOS(pod)) {
    case api::QOSClass::kGuaranteed:
      rc.cpu_shares = shares;
      rc.cpu_quota = quota;
      rc.cpu_period = cpu_period_us;
      rc.memory = memory;
      break;
    case api::QOSClass::kBurstable:
      rc.cpu_shares = shares;
      if (cpu_declared) {
        rc.cpu_quota = quota;
        rc.cpu_period = cpu_period_us;
      }
      if (memory_declared) rc.memory = memory;
      break;
    case api::QOSClass::kBestEffort:
      rc.cpu_shares = kMinShares;
      break;
  }
  rc.hugepage_limits = HugePageLimits(reqs);
  return rc;
}

}  // namespace kubelet::cm
