// Kernel notifications for memory eviction thresholds (kernelMemcgNotification), as upstream's
// memory threshold notifier.
//
// CgroupNotifier: the kernel signals when a cgroup v1 memory attribute (memory.usage_in_bytes)
// crosses a threshold, through cgroup.event_control and an eventfd; `on_crossed` runs on the
// notifier's own thread each time it does (the kernel signals both directions of a crossing).
// Destroying the notifier stops that thread and unregisters the event (closing the eventfd).
// cgroup v2 has no cgroup.event_control: NewCgroupNotifier then returns a notifier that never
// fires, as upstream does, and the manager keeps its periodic observation only.
//
// MemcgThreshold: where the usage threshold goes for an eviction threshold, given the memory
// figures of the cgroup it watches: capacity - threshold + inactive file, where capacity =
// available + working set and inactive file = usage - working set (the notifier watches usage,
// the signal is about the working set).
//
// Thread-safety: a CgroupNotifier is created and destroyed on one thread; `on_crossed` must be
// thread-safe and must not destroy the notifier.
#ifndef KUBELET_KUBELET_EVICTION_THRESHOLD_NOTIFIER_H_
#define KUBELET_KUBELET_EVICTION_THRESHOLD_NOTIFIER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "kubelet/stats/summary.h"

namespace kubelet::eviction {

struct Threshold;

class CgroupNotifier {
 public:
  virtual ~CgroupNotifier() = default;
};

// `path` is the cgroup's directory in the memory hierarchy, `attribute` the file to watch.
using CgroupNotifierFactory = std::function<absl::StatusOr<std::unique_ptr<CgroupNotifier>>(
    const std::string& path, const std::string& attribute, int64_t threshold,
    std::function<void()> on_crossed)>;

absl::StatusOr<std::unique_ptr<CgroupNotifier>> NewCgroupNotifier(const std::string& path,
                                                                  const std::string& attribute,
                                                                  int64_t threshold,
                                                                  std::function<void()> on_crossed);

// InvalidArgument when the figures are incomplete (upstream: "summary was incomplete").
absl::StatusOr<int64_t> MemcgThreshold(const Threshold& threshold, const stats::MemoryStats& mem);

// "hard memory eviction threshold", "soft allocatable memory eviction threshold", ...
std::string NotifierDescription(const Threshold& threshold);

}  // namespace kubelet::eviction

#endif  // KUBELET_KUBELET_EVICTION_THRESHOLD_NOTIFIER_H_
