// EventRecorder: Kubernetes events about the objects the kubelet manages (upstream
// client-go/tools/record's EventRecorder as the kubelet uses it, with the reasons of upstream
// pkg/kubelet/events).
//
// An event names its object (a pod, or one container of it through the field path
// "spec.containers{name}"), a type (Normal / Warning), a CamelCase reason and a message, as
// `kubectl describe` shows them. Standalone, events go to the log as upstream's broadcaster
// logs them (StartStructuredLogging(3)):
//   I... "Event occurred" object="default/web" fieldPath="spec.containers{main}" kind="Pod"
//        apiVersion="v1" type="Warning" reason="Unhealthy" message="Liveness probe failed: ..."
// With an API server, a recorder that also posts core/v1 Events (sink_recorder.h: upstream's
// aggregation, de-duplication and spam filter) implements the same interface; callers do not
// change.
//
// Thread-safety: implementations are thread-safe; Record never blocks on I/O beyond a log write
// and may be called with the caller's locks held.
#ifndef KUBELET_KUBELET_EVENTS_EVENT_RECORDER_H_
#define KUBELET_KUBELET_EVENTS_EVENT_RECORDER_H_

#include <memory>
#include <string>
#include <string_view>

#include "api/pod.h"

namespace kubelet::events {

// core/v1 event types.
inline constexpr char kNormal[] = "Normal";
inline constexpr char kWarning[] = "Warning";

// Reasons, as upstream pkg/kubelet/events names them.
inline constexpr char kCreatedContainer[] = "Created";
inline constexpr char kStartedContainer[] = "Started";
inline constexpr char kFailedToCreateContainer[] = "Failed";
inline constexpr char kFailedToStartContainer[] = "Failed";
inline constexpr char kKillingContainer[] = "Killing";
inline constexpr char kBackOffStartContainer[] = "BackOff";
inline constexpr char kExceededGracePeriod[] = "ExceededGracePeriod";
inline constexpr char kFailedToKillPod[] = "FailedKillPod";
inline constexpr char kFailedToCreatePodContainer[] = "FailedCreatePodContainer";
inline constexpr char kFailedToMakePodDataDirectories[] = "Failed";
inline constexpr char kPullingImage[] = "Pulling";
inline constexpr char kPulledImage[] = "Pulled";
inline constexpr char kFailedToPullImage[] = "Failed";
inline constexpr char kFailedToInspectImage[] = "InspectFailed";
inline constexpr char kErrImageNeverPull[] = "ErrImageNeverPull";
inline constexpr char kBackOffPullImage[] = "BackOff";
inline constexpr char kFailedMountVolume[] = "FailedMount";
inline constexpr char kSandboxChanged[] = "SandboxChanged";
inline constexpr char kFailedCreatePodSandBox[] = "FailedCreatePodSandBox";
inline constexpr char kContainerUnhealthy[] = "Unhealthy";
inline constexpr char kContainerProbeWarning[] = "ProbeWarning";
inline constexpr char kFailedSync[] = "FailedSync";
inline constexpr char kFailedPostStartHook[] = "FailedPostStartHook";
inline constexpr char kFailedPreStopHook[] = "FailedPreStopHook";
inline constexpr char kEvicted[] = "Evicted";
inline constexpr char kMissingClusterDNS[] = "MissingClusterDNS";
inline constexpr char kPreempting[] = "Preempting";
// Node events.
inline constexpr char kStartingKubelet[] = "Starting";
inline constexpr char kNodeReady[] = "NodeReady";
inline constexpr char kNodeNotReady[] = "NodeNotReady";
inline constexpr char kNodeSchedulable[] = "NodeSchedulable";
inline constexpr char kNodeNotSchedulable[] = "NodeNotSchedulable";
inline constexpr char kSuccessfulNodeAllocatableEnforcement[] = "NodeAllocatableEnforced";
inline constexpr char kFailedNodeAllocatableEnforcement[] = "FailedNodeAllocatableEnforcement";

// core/v1 ObjectReference, the fields an event's involvedObject carries.
struct ObjectReference {
  std::string kind = "Pod";
  std::string api_version = "v1";
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string field_path;        // "" for the pod itself
  std::string resource_version;  // the object's, where known ("" for static pods, nodes)
};

// The pod itself (with its resourceVersion when it came from the API server).
ObjectReference PodRef(const api::Pod& pod);
// The node, as upstream's kubelet names it in its events: kind Node, no apiVersion, no
// namespace, and the node name as uid.
ObjectReference NodeRef(std::string_view node_name);
// One container of the pod: field path spec.containers{n}, spec.initContainers{n} or
// spec.ephemeralContainers{n}, by where `container` is declared (upstream's
// GenerateContainerRef); the pod's reference when no container of that name exists.
ObjectReference ContainerRef(const api::Pod& pod, std::string_view container);

class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  virtual void Record(const ObjectReference& object, std::string_view type, std::string_view reason,
                      std::string_view message) = 0;
};

// Logs every event as upstream's broadcaster does at --v=`verbosity` (upstream: 3).
std::unique_ptr<EventRecorder> NewLoggingRecorder(int verbosity = 3);
// The log line of one event ("Event occurred" ...) at --v=`verbosity`.
void LogEvent(int verbosity, const ObjectReference& object, std::string_view type,
              std::string_view reason, std::string_view message);

// A recorder that drops everything: the default where a component is built without one.
EventRecorder& DiscardingRecorder();

}  // namespace kubelet::events

#endif  // KUBELET_KUBELET_EVENTS_EVENT_RECORDER_H_
