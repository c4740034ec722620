#include "kubelet/cm/resources.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/quantity.h"
#include "api/static_pod.h"

namespace kubelet::cm {
namespace {

void Add(api::ResourceList* list, const api::ResourceList& add) {
  for (const auto& [name, q] : add) {
    auto it = list->find(name);
    if (it == list->end()) {
      list->emplace(name, q);
    } else {
      it->second = it->second + q;
    }
  }
}

void Max(api::ResourceList* list, const api::ResourceList& other) {
  for (const auto& [name, q] : other) {
    auto it = list->find(name);
    if (it == list->end()) {
      list->emplace(name, q);
    } else if (q > it->second) {
      it->second = q;
    }
  }
}

template <typename Select>
api::ResourceList Aggregate(const api::Pod& pod, Select select) {
  api::ResourceList total;
  for (const api::Container& c : pod.spec.containers) Add(&total, select(c));
  api::ResourceList sidecars;
  api::ResourceList init_max;
  for (const api::Container& c : pod.spec.init_containers) {
    api::ResourceList step;
    if (api::IsRestartableInitContainer(c)) {
      Add(&total, select(c));
      Add(&sidecars, select(c));
      step = sidecars;
    } else {
      Add(&step, select(c));
      Add(&step, sidecars);
    }
    Max(&init_max, step);
  }
  Max(&total, init_max);
  return total;
}

int64_t MilliOf(const api::ResourceList& list, const char* name) {
  auto it = list.find(name);
  return it == list.end() ? 0 : it->second.MilliValue();
}

int64_t ValueOf(const api::ResourceList& list, const char* name) {
  auto it = list.find(name);
  return it == list.end() ? 0 : it->second.Value();
}

}  // namespace

int64_t MilliCPUToShares(int64_t milli_cpu) {
  if (milli_cpu == 0) return kMinShares;
  const int64_t shares = (milli_cpu * kSharesPerCPU) / kMilliCPUToCPU;
  return std::clamp(shares, kMinShares, kMaxShares);
}

int64_t MilliCPUToQuota(int64_t milli_cpu, int64_t period_us) {
  if (milli_cpu == 0) return 0;
  const int64_t quota = (milli_cpu * period_us) / kMilliCPUToCPU;
  return std::max(quota, kMinQuotaPeriodUs);
}

int64_t SharesToWeight(int64_t shares) {
  if (shares == 0) return 0;
  return 1 + ((shares - 2) * 9999) / 262142;
}

api::ResourceList PodRequests(const api::Pod& pod) {
  api::ResourceList reqs = Aggregate(pod, [](const api::Container& c) -> const api::ResourceList& {
    return c.resources.requests;
  });
  Add(&reqs, pod.spec.overhead);
  return reqs;
}

api::ResourceList PodLimits(const api::Pod& pod, bool* cpu_declared, bool* memory_declared) {
  bool cpu = true, memory = true;
  auto note = [&](const api::Container& c) {
    auto has = [&](const char* name) {
      auto it = c.resources.limits.find(name);
      return it != c.resources.limits.end() && !it->second.IsZero();
    };
    if (!has(api::kResourceCPU)) cpu = false;
    if (!has(api::kResourceMemory)) memory = false;
  };
  for (const api::Container& c : pod.spec.containers) note(c);
  for (const api::Container& c : pod.spec.init_containers) note(c);
  api::ResourceList limits = Aggregate(
      pod, [](const api::Container& c) -> const api::ResourceList& { return c.resources.limits; });
  for (const auto& [name, q] : pod.spec.overhead) {
    auto it = limits.find(name);
    if (it != limits.end()) it->second = it->second + q;
  }
  if (cpu_declared) *cpu_declared = cpu;
  if (memory_declared) *memory_declared = memory;
  return limits;
}

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
  bool cpu_declared = true, memory_declared = true;
  const api::ResourceList limits = PodLimits(pod, &cpu_declared, &memory_declared);
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
