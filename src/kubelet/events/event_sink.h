// EventSink: where a SinkRecorder stores core/v1 Events (upstream client-go's record.EventSink,
// implemented by the events client). The events component does not know the API client: the
// wiring (src/app) implements this on the shared RestClient.
//
// Contract: both calls return the Event as the server stored it. Errors are absl::Status values
// with the API server's answer mapped as apiclient::ResponseStatus maps it (NotFound for 404,
// AlreadyExists for a 409 AlreadyExists, InvalidArgument for 400/422, PermissionDenied for 403,
// ResourceExhausted for 429, Unavailable for 5xx); a transport failure or timeout is Unavailable
// / DeadlineExceeded, a cancelled call Cancelled. Calls block on I/O and give up when the calling
// thread's Cancellation (common/cancellation.h) is cancelled.
//
// Thread-safety: implementations are thread-safe.
#ifndef KUBELET_KUBELET_EVENTS_EVENT_SINK_H_
#define KUBELET_KUBELET_EVENTS_EVENT_SINK_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "api/event.h"

namespace kubelet::events {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // POST /api/v1/namespaces/<event.metadata.namespace>/events.
  virtual absl::StatusOr<api::Event> Create(const api::Event& event) = 0;
  // PATCH /api/v1/namespaces/<ns>/events/<event.metadata.name> with `patch` as a strategic merge
  // patch (application/strategic-merge-patch+json).
  virtual absl::StatusOr<api::Event> Patch(const api::Event& event, std::string_view patch) = 0;
};

}  // namespace kubelet::events

#endif  // KUBELET_KUBELET_EVENTS_EVENT_SINK_H_
