// core/v1 Event (upstream k8s.io/api/core/v1, v1.28) with its JSON field tables (codec.h): what
// the kubelet's event recorder posts in API-server mode. eventTime is a MicroTime written as null
// when unset (a Go struct under omitempty); reportingComponent/reportingInstance are always
// written.
// Value types; thread-compatible. Constant tables; thread-safe.
#ifndef KUBELET_API_EVENT_H_
#define KUBELET_API_EVENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include "api/codec.h"
#include "api/core_misc.h"
#include "api/meta.h"
#include "api/meta_codec.h"

namespace kubelet::api {

struct EventSource {
  std::string component;
  std::string host;
  bool operator==(const EventSource&) const = default;
};

struct EventSeries {
  int32_t count = 0;
  MicroTime last_observed_time;
  bool operator==(const EventSeries&) const = default;
};

struct Event {
  std::string kind = "Event";
  std::string api_version = "v1";
  ObjectMeta metadata;
  ObjectReference involved_object;
  std::string reason;
  std::string message;
  EventSource source;
  Time first_timestamp;
  Time last_timestamp;
  int32_t count = 0;
  std::string type;  // Normal, Warning
  MicroTime event_time;
  std::optional<EventSeries> series;
  std::string action;
  std::optional<ObjectReference> related;
  std::string reporting_component;  // "reportingComponent" (Go: ReportingController)
  std::string reporting_instance;
  bool operator==(const Event&) const = default;
};

inline constexpr char kEventTypeNormal[] = "Normal";
inline constexpr char kEventTypeWarning[] = "Warning";

}  // namespace kubelet::api

namespace kubelet::api::codec {

template <>
struct Fields<EventSource> {
  static constexpr auto kList = std::tuple(Field("component", &EventSource::component, kOmitEmpty),
                                           Field("host", &EventSource::host, kOmitEmpty));
};

template <>
struct Fields<EventSeries> {
  static constexpr auto kList =
      std::tuple(Field("count", &EventSeries::count, kOmitEmpty),
                 Field("lastObservedTime", &EventSeries::last_observed_time, kOmitEmpty));
};

template <>
struct Fields<Event> {
  using S = Event;
  static constexpr auto kList = std::tuple(
      Field("kind", &S::kind, kOmitEmpty), Field("apiVersion", &S::api_version, kOmitEmpty),
      Field("metadata", &S::metadata), Field("involvedObject", &S::involved_object),
      Field("reason", &S::reason, kOmitEmpty), Field("message", &S::message, kOmitEmpty),
      Field("source", &S::source, kOmitEmpty),
      Field("firstTimestamp", &S::first_timestamp, kOmitEmpty),
      Field("lastTimestamp", &S::last_timestamp, kOmitEmpty), Field("count", &S::count, kOmitEmpty),
      Field("type", &S::type, kOmitEmpty), Field("eventTime", &S::event_time, kOmitEmpty),
      Field("series", &S::series, kOmitEmpty), Field("action", &S::action, kOmitEmpty),
      Field("related", &S::related, kOmitEmpty),
      Field("reportingComponent", &S::reporting_component),
      Field("reportingInstance", &S::reporting_instance));
};

}  // namespace kubelet::api::codec

#endif  // KUBELET_API_EVENT_H_
