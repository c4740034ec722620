// The Kubernetes API client: unary REST calls and watch streams against one API server.
//
// Contract:
// - Do() sends one request and returns the whole response as a value. An HTTP error status is
//   a response, not an error: the caller looks at Response::code (ApiError() decodes the
//   `Status` object the API server sends with it). The StatusOr carries an error only when no
//   response was had: transport/TLS failure (Unavailable), timeout (DeadlineExceeded),
//   cancellation (Cancelled), a body over the size bound (ResourceExhausted), or a bad request
//   (InvalidArgument).
// - Watch() streams one watch request: each newline-delimited JSON frame
//   {"type":...,"object":...} is decoded and handed to `on_event` as soon as it arrives, on the
//   calling thread. It returns when the server ends the stream (its timeoutSeconds, or the
//   connection dropped: the response's code is then 200), when `on_event` returns false, when
//   the request's timeout passes, or when cancelled. A non-200 answer is returned as a Response
//   with its body and no event delivered. A frame that is not valid JSON or larger than the frame
//   bound ends the watch with DataLoss / ResourceExhausted.
// - Cancellation: both calls give up promptly (Cancelled) when the calling thread's Cancellation
//   (common/cancellation.h; e.g. installed by the owner of a watch thread) is cancelled from
//   another thread. The client-side rate limiter wait is cancellable the same way.
// - Every call first takes a token from the client's token bucket (RestConfig qps/burst); watches
//   too, as client-go does.
// - Metrics (KubeletRegistry, as client-go registers them with the kubelet):
//   rest_client_requests_total{code,host,method} (code "<error>" when no response; watches
//   included) and rest_client_request_duration_seconds{host,verb} (unary calls; the rate limiter
//   wait included, as upstream).
// Thread-safety: a RestClient is thread-safe; calls run on the caller's thread (no thread per
// request). Ownership: the factory's result owns its connections; the callback is borrowed for the
// duration of Watch().
#ifndef KUBELET_APICLIENT_REST_CLIENT_H_
#define KUBELET_APICLIENT_REST_CLIENT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "apiclient/kubeconfig.h"
#include "common/clock.h"
#include "nlohmann/json.hpp"

namespace kubelet::apiclient {

// Request body content types.
inline constexpr char kJsonContentType[] = "application/json";
inline constexpr char kMergePatchType[] = "application/merge-patch+json";
inline constexpr char kStrategicMergePatchType[] = "application/strategic-merge-patch+json";
inline constexpr char kJsonPatchType[] = "application/json-patch+json";

struct Request {
  std::string method = "GET";  // GET, POST, PUT, PATCH, DELETE
  // Path and query below the config's host (and its path prefix), e.g.
  // "/api/v1/namespaces/default/pods?labelSelector=a%3Db". Query values must be escaped
  // (EscapeQuery).
  std::string path;
  std::string body;
  std::string content_type;  // of `body`; empty: RestConfig::content_type
  // Whole-call bound; zero: RestConfig::timeout for Do(), none for Watch().
  absl::Duration timeout = absl::ZeroDuration();
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

struct Response {
  int code = 0;                                     // HTTP status code
  std::string body;                                 // empty for a watch that was answered 200
  std::multimap<std::string, std::string> headers;  // names lower-cased
  bool ok() const { return code >= 200 && code < 300; }
  // First value of header `name` (lower-case), or "".
  std::string Header(const std::string& name) const;
};

// A decoded metav1.Status (or what can be said when the body is not one).
struct ApiError {
  int code = 0;
  std::string reason;  // "NotFound", "AlreadyExists", "Conflict", "Expired", "Gone", ...
  std::string message;
};

// The Status object in `response` (or in a watch ERROR event's object); when the body is not a
// Status, the code with a reason derived from it and the body (trimmed) as the message.
ApiError DecodeApiError(const Response& response);
ApiError DecodeApiError(const nlohmann::json& status_object, int fallback_code = 0);
// The response as an absl::Status: OK for 2xx; otherwise NotFound (404), AlreadyExists (409
// AlreadyExists), Aborted (409 Conflict), FailedPrecondition (410/412), PermissionDenied (403),
// Unauthenticated (401), ResourceExhausted (429), InvalidArgument (400/422), DeadlineExceeded
// (504), Unavailable (5xx); the message is "<code> <reason>: <message>".
absl::Status ResponseStatus(const Response& response);
// True for HTTP 410 and for a Status saying "Expired"/"Gone" (a too old resourceVersion).
bool IsResourceExpired(const ApiError& error);

// Percent-escapes a query parameter value (RFC 3986 unreserved characters kept).
std::string EscapeQuery(std::string_view value);

struct WatchEvent {
  std::string type;  // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
  nlohmann::json object;
};
// Returns false to end the watch.
using WatchEventFn = std::function<bool(WatchEvent event)>;

// Go's encoding/json nesting limit, which client-go's decoding inherits.
inline constexpr int kMaxJsonNesting = 10000;
// nlohmann::json::parse(text) without exceptions: a discarded value when `text` is not JSON or is
// nested deeper than kMaxJsonNesting (so that no consumer copies or prints an object recursively
// deep enough to overflow a thread's stack).
nlohmann::json ParseBoundedJson(std::string_view text);

// One frame of a watch stream (a line, surrounding whitespace allowed): a JSON object, parsed as
// ParseBoundedJson does, with a string "type" and, usually, an "object". Anything else is
// DataLoss quoting the frame's start. Watch() decodes every non-empty line with it.
absl::StatusOr<WatchEvent> DecodeWatchFrame(std::string_view line);

// metadata.<key> of an API object when the object, its metadata and the member have the right
// types; "" otherwise (never throws on what the API server sent).
std::string MetadataString(const nlohmann::json& object, const char* key);

class RestClient {
 public:
  virtual ~RestClient() = default;
  virtual absl::StatusOr<Response> Do(const Request& request) = 0;
  virtual absl::StatusOr<Response> Watch(const Request& request, const WatchEventFn& on_event) = 0;
};

struct RestClientOptions {
  // Bounds: a unary response body, and one watch frame.
  size_t max_body_bytes = 64u << 20;
  size_t max_frame_bytes = 16u << 20;
  // Idle easy handles (each keeps its live connection) kept for reuse.
  int max_idle_connections = 4;
  bool http2 = true;  // offer HTTP/2 over TLS (ALPN); HTTP/1.1 otherwise
  absl::Duration connect_timeout = absl::Seconds(30);
  // Time source of the rate limiter; null: the real clock.
  Clock* clock = nullptr;
};

// A libcurl client for `config`. Fails (InvalidArgument / NotFound, naming the field or file)
// when the host URL is not http(s), or a referenced CA, certificate, key or token file cannot
// be read.
absl::StatusOr<std::unique_ptr<RestClient>> NewRestClient(const RestConfig& config,
                                                          RestClientOptions options = {});

}  // namespace kubelet::apiclient

#endif  // KUBELET_APICLIENT_REST_CLIENT_H_
