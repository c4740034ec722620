// SinkRecorder: the EventRecorder of API-server mode (upstream client-go's record broadcaster
// with StartStructuredLogging(3) and StartRecordingToSink, v1.28). Every event is logged as the
// logging recorder logs it ("Event occurred" at --v=3) and queued for a sender thread, which
// runs it through the EventCorrelator (aggregation, de-duplication, spam filter;
// event_correlator.h) and writes it to the EventSink:
//
// - Record() never blocks on I/O: it builds the Event (MakeEvent, with the injected clock) and
//   appends it to a bounded queue (1000, upstream maxQueuedEvents). When the queue is full the
//   event is dropped with a warning that counts the drops ("Unable to record event: too many
//   queued events, dropped event", the first and then every 100th). An event type other than
//   Normal / Warning is refused with an error log, as upstream.
// - Writing (WriteEvent, upstream recordEvent): an event whose count is above 1 is a PATCH of the
//   existing object, falling back to a POST when the PATCH finds it gone (404); otherwise a POST
//   (without resourceVersion). A success feeds the server's answer back to the correlator. A
//   transport failure, timeout, 429 or 5xx is retried: up to 12 tries per event, the first sleep
//   randomised in [0, 10 s), then 10 s each. Any other answer is final: an AlreadyExists (409) or
//   a namespace being terminated is logged at --v=5, other rejections as errors.
// - Stop(): no new event is queued (later ones are only logged); what is queued gets one try
//   each (no retry sleeps) within `flush_timeout`; then the in-flight request is cancelled, the
//   rest is dropped (counted in the log) and the thread is joined. Idempotent; the destructor
//   stops too.
//
// Threads: one sender thread while there is work: started by the first Record() after it left,
// it leaves once `sender_idle_timeout` passed without an event (a node that records nothing
// holds no thread). Its work runs under RunGuarded so no exception ends it. Retry sleeps are in
// real time (tests set `retry_sleep` small); event timestamps and the correlator use `clock`.
// Thread-safety: Record() and Stop() are thread-safe. Ownership: shares the sink; `clock` must
// outlive the recorder.
#ifndef KUBELET_KUBELET_EVENTS_SINK_RECORDER_H_
#define KUBELET_KUBELET_EVENTS_SINK_RECORDER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "api/event.h"
#include "common/clock.h"
#include "kubelet/events/event_correlator.h"
#include "kubelet/events/event_recorder.h"
#include "kubelet/events/event_sink.h"

namespace kubelet::events {

struct SinkRecorderOptions {
  std::string component = "kubelet";  // source.component, reportingComponent
  std::string host;                   // the node name: source.host, reportingInstance
  int log_verbosity = 3;
  size_t queue_size = 1000;
  int max_tries = 12;
  absl::Duration retry_sleep = absl::Seconds(10);
  absl::Duration flush_timeout = absl::Seconds(5);
  absl::Duration sender_idle_timeout = absl::Seconds(30);
  CorrelatorOptions correlator;
};

// One attempt to write a correlated event (see the header comment). Returns true when the event
// is done with (written, or rejected for good), false when it should be retried. On success
// the correlator learns the server's state.
bool WriteEvent(EventSink& sink, api::Event& event, std::string_view patch,
                EventCorrelator& correlator);

class SinkRecorder : public EventRecorder {
 public:
  // Flushes (bounded by flush_timeout) and stops the sender; see the header comment.
  virtual void Stop() = 0;
  // Events dropped because the queue was full or at Stop().
  virtual uint64_t Dropped() const = 0;
  // Blocks until the queue is empty and nothing is being sent, or `timeout` passed; true when
  // idle. For tests and shutdown diagnostics.
  virtual bool WaitIdle(absl::Duration timeout) = 0;
  // Whether the sender thread runs now (tests).
  virtual bool SenderRunning() const = 0;
};

std::unique_ptr<SinkRecorder> NewSinkRecorder(std::shared_ptr<EventSink> sink, Clock& clock,
                                              SinkRecorderOptions options);

}  // namespace kubelet::events

#endif  // KUBELET_KUBELET_EVENTS_SINK_RECORDER_H_
