// Pod Lifecycle Event Generator (upstream pkg/kubelet/pleg). Watches the runtime and turns
// container state changes into events for the sync loop, keeping the pod status cache current.
//
// The generic implementation relists (GetPods + GetPodStatus only for pods that changed) every
// relist period. An evented implementation (CRI GetContainerEvents, where the runtime offers it)
// can provide the same interface: events out, cache in, health.
//
// Thread-safety: Start/Stop from the owner's thread; Events() and Healthy() from any thread.
#ifndef KUBELET_KUBELET_PLEG_PLEG_H_
#define KUBELET_KUBELET_PLEG_PLEG_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/event_queue.h"

namespace kubelet::pleg {

enum class EventType {
  kContainerStarted,
  kContainerDied,
  kContainerRemoved,
  kPodSync,
  kContainerChanged
};
const char* EventTypeName(EventType t);  // "ContainerStarted", ...

struct PodLifecycleEvent {
  std::string pod_id;  // pod UID
  EventType type;
  std::string data;  // container ID (without the runtime:// prefix) for container events
  // When the runtime's state that shows the change was read (the start of the relist).
  absl::Time observed = absl::InfinitePast();
};

class PodLifecycleEventGenerator {
 public:
  virtual ~PodLifecycleEventGenerator() = default;
  virtual void Start() = 0;
  virtual void Stop() = 0;
  virtual EventQueue<PodLifecycleEvent>& Events() = 0;
  // Unhealthy (with the reason) when relisting has stalled past the threshold.
  virtual absl::Status Healthy() const = 0;
};

}  // namespace kubelet::pleg

#endif  // KUBELET_KUBELET_PLEG_PLEG_H_
