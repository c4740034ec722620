#include "api/resource_helpers.h"

#include <algorithm>

namespace kubelet::api {
namespace {

void Add(ResourceList* list, const ResourceList& add) {
  for (const auto& [name, q] : add) {
    auto it = list->find(name);
    if (it == list->end()) {
      list->emplace(name, q);
    } else {
      it->second = it->second + q;
    }
  }
}

void Max(ResourceList* list, const ResourceList& other) {
  for (const auto& [name, q] : other) {
    auto it = list->find(name);
    if (it == list->end()) {
      list->emplace(name, q);
    } else if (q > it->second) {
      it->second = q;
    }
  }
}

template <typename Select, typename SelectApp>
ResourceList Aggregate(const Pod& pod, Select select, SelectApp select_app) {
  ResourceList total;
  for (const Container& c : pod.spec.containers) Add(&total, select_app(c));
  ResourceList sidecars;
  ResourceList init_max;
  for (const Container& c : pod.spec.init_containers) {
    ResourceList step;
    if (IsRestartableInitContainer(c)) {
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

}  // namespace

ResourceList PodRequests(const Pod& pod, PodResourcesOptions options) {
  auto requests = [](const Container& c) -> const ResourceList& { return c.resources.requests; };
  ResourceList reqs;
  if (!options.in_place_pod_vertical_scaling) {
    reqs = Aggregate(pod, requests, requests);
  } else {
    const bool infeasible = pod.status.resize == "Infeasible";
    reqs = Aggregate(pod, requests, [&](const Container& c) -> ResourceList {
      for (const ContainerStatus& cs : pod.status.container_statuses) {
        if (cs.name != c.name) continue;
        if (infeasible) return cs.allocated_resources;
        ResourceList out = c.resources.requests;
        Max(&out, cs.allocated_resources);
        return out;
      }
      return c.resources.requests;
    });
  }
  if (!options.exclude_overhead) Add(&reqs, pod.spec.overhead);
  return reqs;
}

ResourceList PodLimits(const Pod& pod, PodResourcesOptions options) {
  auto select = [](const Container& c) -> const ResourceList& { return c.resources.limits; };
  ResourceList limits = Aggregate(pod, select, select);
  if (!options.exclude_overhead) {
    for (const auto& [name, q] : pod.spec.overhead) {
      auto it = limits.find(name);
      if (it != limits.end()) it->second = it->second + q;
    }
  }
  return limits;
}

bool AllContainersHaveLimit(const Pod& pod, const char* resource) {
  auto has = [&](const Container& c) {
    auto it = c.resources.limits.find(resource);
    return it != c.resources.limits.end() && !it->second.IsZero();
  };
  return std::all_of(pod.spec.containers.begin(), pod.spec.containers.end(), has) &&
         std::all_of(pod.spec.init_containers.begin(), pod.spec.init_containers.end(), has);
}

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

}  // namespace kubelet::api
