// Event recording (upstream makeEventRecorder): standalone, events only go to the log; in
// API-server mode the SinkRecorder also posts them as core/v1 Events through an EventSink on the
// events API client (POST /api/v1/namespaces/<ns>/events, strategic merge PATCH of
// .../events/<name>).
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/codec.h"
#include "api/event.h"
#include "apiclient/rest_client.h"
#include "app/wiring.h"
#include "common/log.h"
#include "kubelet/events/event_sink.h"
#include "kubelet/events/sink_recorder.h"

namespace kubelet::app {
namespace {

// A hung connection must not hold the sender forever; a timeout is retried like any transport
// failure.
constexpr absl::Duration kEventRequestTimeout = absl::Seconds(10);

class RestEventSink final : public events::EventSink {
 public:
  explicit RestEventSink(std::shared_ptr<apiclient::RestClient> client)
      : client_(std::move(client)) {}

  absl::StatusOr<api::Event> Create(const api::Event& event) override {
    apiclient::Request req;
    req.method = "POST";
    req.path = absl::StrCat(EventsPath(event.metadata.namespace_));
    req.body = api::Encode(event);
    req.content_type = apiclient::kJsonContentType;
    return Send(req);
  }

  absl::StatusOr<api::Event> Patch(const api::Event& event, std::string_view patch) override {
    apiclient::Request req;
    req.method = "PATCH";
    req.path = absl::StrCat(EventsPath(event.metadata.namespace_), "/", event.metadata.name);
    req.body = std::string(patch);
    req.content_type = apiclient::kStrategicMergePatchType;
    return Send(req);
  }

 private:
  static std::string EventsPath(const std::string& ns) {
    return absl::StrCat("/api/v1/namespaces/", ns, "/events");
  }

  absl::StatusOr<api::Event> Send(apiclient::Request& req) {
    req.timeout = kEventRequestTimeout;
    absl::StatusOr<apiclient::Response> resp = client_->Do(req);
    if (!resp.ok()) return resp.status();
    if (absl::Status st = apiclient::ResponseStatus(*resp); !st.ok()) return st;
    absl::StatusOr<api::Event> stored = api::Decode<api::Event>(resp->body);
    if (!stored.ok()) {
      return absl::InternalError(
          absl::StrCat("decoding the stored event: ", stored.status().message()));
    }
    return stored;
  }

  const std::shared_ptr<apiclient::RestClient> client_;
};

}  // namespace

EventRecording MakeEventRecorder(std::shared_ptr<apiclient::RestClient> events_client,
                                 const std::string& node_name, Clock& clock) {
  EventRecording out;
  if (!events_client) {
    KLOG_INFO("No api server defined - no events will be sent to API server");
    out.recorder = events::NewLoggingRecorder(3);
    out.stop = [] {};
    return out;
  }
  KLOG_V(4, "Sending events to api server");
  events::SinkRecorderOptions o;
  o.component = "kubelet";
  o.host = node_name;
  std::unique_ptr<events::SinkRecorder> recorder = events::NewSinkRecorder(
      std::make_shared<RestEventSink>(std::move(events_client)), clock, std::move(o));
  events::SinkRecorder* raw = recorder.get();
  out.stop = [raw] { raw->Stop(); };
  out.recorder = std::move(recorder);
  return out;
}

}  // namespace kubelet::app
