#include "kubelet/cm/node_allocatable.h"

#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kubelet/cm/resources.h"

namespace kubelet::cm {
namespace {

const std::set<std::string>& KnownSignals() {
  static const auto* k = new std::set<std::string>{
      "memory.available",   "nodefs.available", "nodefs.inodesFree",          "imagefs.available",
      "imagefs.inodesFree", "pid.available",    "allocatableMemory.available"};
  return *k;
}

api::Quantity Get(const api::ResourceList& l, const std::string& name) {
  auto it = l.find(name);
  return it == l.end() ? api::Quantity() : it->second;
}

}  // namespace

absl::StatusOr<std::vector<EvictionThreshold>> ParseEvictionThresholds(
    const std::map<std::string, std::string>& hard) {
  std::vector<EvictionThreshold> out;
  for (const auto& [signal, value] : hard) {
    if (!KnownSignals().count(signal)) {
      return absl::InvalidArgumentError(absl::StrCat("unsupported eviction signal ", signal));
    }
    EvictionThreshold t;
    t.signal = signal;
    if (!value.empty() && value.back() == '%') {
      if (value == "0%" || value == "100%") continue;
      double pct = 0;
      if (!absl::SimpleAtod(value.substr(0, value.size() - 1), &pct)) {
        return absl::InvalidArgumentError(
            absl::StrCat("invalid percentage ", value, " for eviction signal ", signal));
      }
      // Upstream parses a float32 and divides in float32.
      t.percentage = static_cast<float>(pct) / 100.0f;
      if (t.percentage < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("eviction percentage threshold ", signal, " must be positive: ", value));
      }
      if (t.percentage > 1) {
        return absl::InvalidArgumentError(absl::StrCat("eviction percentage threshold ", signal,
                                                       " must not be greater than 100%: ", value));
      }
    } else {
      auto q = api::Quantity::Parse(value);
      if (!q.ok()) return q.status();
      if (q->Sign() <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("eviction threshold ", signal, " must be positive: ", q->String()));
      }
      t.quantity = *q;
    }
    out.push_back(std::move(t));
  }
  return out;
}

int64_t ThresholdValue(const EvictionThreshold& t, int64_t capacity) {
  if (t.quantity) return t.quantity->Value();
  return static_cast<int64_t>(static_cast<double>(capacity) * static_cast<double>(t.percentage));
}

absl::StatusOr<api::ResourceList> ParseReservation(const std::map<std::string, std::string>& m) {
  api::ResourceList out;
  for (const auto& [name, value] : m) {
    auto q = api::Quantity::Parse(value);
    if (!q.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "failed to parse reserved ", name, " quantity \"", value, "\": ", q.status().message()));
    }
    if (q->Sign() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("reserved ", name, " must not be negative: ", value));
    }
    out[name] = *q;
  }
  return out;
}

void OverrideReservedCPUs(int reserved_cpu_count, std::map<std::string, std::string>* kube,
                          std::map<std::string, std::string>* system) {
  if (reserved_cpu_count <= 0) return;
  kube->erase(api::kResourceCPU);
  (*system)[api::kResourceCPU] = absl::StrCat(reserved_cpu_count);
}

api::ResourceList MachineCapacity(const MachineInfo& info, int64_t max_pods,
                                  std::optional<int64_t> ephemeral_storage_bytes) {
  using F = api::Quantity::Format;
  api::ResourceList cap;
  cap[api::kResourceCPU] = api::Quantity::FromValue(info.num_cores);
  cap[api::kResourceMemory] = api::Quantity::FromValue(info.memory_capacity_bytes, F::kBinarySI);
  cap[kResourcePods] = api::Quantity::FromValue(max_pods);
  if (ephemeral_storage_bytes) {
    cap[api::kResourceEphemeralStorage] =
        api::Quantity::FromValue(*ephemeral_storage_bytes, F::kBinarySI);
  }
  for (const HugePagePool& p : info.hugepages) {
    cap[HugePageResourceName(p.page_size_bytes)] =
        api::Quantity::FromValue(p.page_size_bytes * p.num_pages, F::kBinarySI);
  }
  return cap;
}

api::ResourceList NodeAllocatableReservation(const api::ResourceList& capacity,
                                             const api::ResourceList& kube_reserved,
                                             const api::ResourceList& system_reserved,
                                             const std::vector<EvictionThreshold>& hard) {
  api::ResourceList eviction;
  for (const EvictionThreshold& t : hard) {
    const char* resource = nullptr;
    if (t.signal == "memory.available") {
      resource = api::kResourceMemory;
    } else if (t.signal == "nodefs.available") {
      resource = api::kResourceEphemeralStorage;
    } else {
      continue;
    }
    eviction[resource] = api::Quantity::FromValue(
        ThresholdValue(t, Get(capacity, resource).Value()), api::Quantity::Format::kBinarySI);
  }
  api::ResourceList out;
  for (const auto& [name, cap] : capacity) {
    api::Quantity v = Get(system_reserved, name) + Get(kube_reserved, name) + Get(eviction, name);
    if (!v.IsZero()) out[name] = v;
  }
  return out;
}

api::ResourceList Allocatable(const api::ResourceList& capacity,
                              const api::ResourceList& reservation) {
  api::ResourceList out;
  for (const auto& [name, cap] : capacity) {
    api::Quantity v = cap - Get(reservation, name);
    out[name] = v.Sign() < 0 ? api::Quantity() : v;
  }
  auto mem = out.find(api::kResourceMemory);
  if (mem != out.end()) {
    for (const auto& [name, cap] : capacity) {
      if (!HugePageSizeFromResourceName(name)) continue;
      mem->second = mem->second - cap;
      if (mem->second.Sign() < 0) mem->second = api::Quantity();
    }
  }
  return out;
}

api::ResourceList AllocatableAbsolute(const api::ResourceList& capacity,
                                      const api::ResourceList& kube_reserved,
                                      const api::ResourceList& system_reserved) {
  api::ResourceList out;
  for (const auto& [name, cap] : capacity) {
    api::Quantity v = cap - Get(system_reserved, name) - Get(kube_reserved, name);
    out[name] = v.Sign() < 0 ? api::Quantity() : v;
  }
  return out;
}

absl::Status CheckSwap(const std::vector<std::string>& swap_lines) {
  if (swap_lines.size() <= 1) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "running with swap on is not supported, please disable swap! or set --fail-swap-on flag "
      "to false. /proc/swaps contained: [",
      absl::StrJoin(swap_lines, " "), "]"));
}

}  // namespace kubelet::cm
