#include "kubelet/eviction/threshold_notifier.h"

#include "absl/strings/str_cat.h"
#include "kubelet/eviction/eviction.h"

namespace kubelet::eviction {

absl::StatusOr<int64_t> MemcgThreshold(const Threshold& threshold, const stats::MemoryStats& mem) {
  if (!mem.usage_bytes || !mem.working_set_bytes || !mem.available_bytes) {
    return absl::InvalidArgumentError(
        "summary was incomplete. Expected MemoryStats and all subfields to be non-nil");
  }
  const int64_t usage = static_cast<int64_t>(*mem.usage_bytes);
  const int64_t working_set = static_cast<int64_t>(*mem.working_set_bytes);
  const int64_t inactive_file = usage - working_set;
  const int64_t capacity = static_cast<int64_t>(*mem.available_bytes) + working_set;
  return capacity - threshold.Value(capacity) + inactive_file;
}

std::string NotifierDescription(const Threshold& threshold) {
  return absl::StrCat(threshold.hard() ? "hard " : "soft ",
                      threshold.signal == kSignalAllocatableMemoryAvailable ? "allocatable " : "",
                      "memory eviction threshold");
}

}  // namespace kubelet::eviction
