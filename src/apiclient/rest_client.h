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
// - Transport: HTTP/1.1 (http:// or https://), one request at a time per connection; a small pool
//   of idle keep-alive connections per client (RestClientOptions::max_idle_connections) is reused
//   by later calls, concurrent calls use separate connections; one idle for more than 90 s is
//   closed at the next call that returns a connection (Go's IdleConnTimeout), so a burst's extra
//   connections do not stay open while one carries the steady traffic. A pooled connection the
//   server has closed is replaced before use; a GET whose reused connection fails before any answer
//   is sent once more on a new connection. Unary calls offer gzip and decode it; watches do not.
// - TLS: the server is verified against ca_pem / ca_file (else the system's bundle) and the URL's
//   host or tls_server_name (a DNS or IP SAN; the name is also sent as SNI unless an IP), unless
//   insecure. The client certificate of a new connection is the one current then: the files are
//   read again, client_certificate_source is asked on each call. Requests carry Host (the URL's
//   authority), Accept "application/json, */*", User-Agent when set, the bearer token and
//   Content-Type when there is a body; Request::headers replace these by name (empty: remove).
// - Proxy, as Go's net/http ProxyFromEnvironment (rules in proxy.h): HTTPS_PROXY / https_proxy
//   for an https:// API server, HTTP_PROXY / http_proxy for an http:// one, unless NO_PROXY /
//   no_proxy or the loopback rule (localhost and loopback addresses are never proxied) exempt
//   its host. The environment is read once, when the client is created
//   (RestClientOptions::proxy_environment replaces it). Only http:// proxies are supported (a
//   value without a scheme is one): an https:// or socks5:// proxy that applies fails the
//   creation (InvalidArgument); a value that is not a URL is ignored, as Go does. Through the
//   proxy, each new connection to an https server first sends "CONNECT host:port" (Host the
//   same, User-Agent when set) and runs the TLS handshake above inside the tunnel; an answer
//   other than 2xx fails the call as Unavailable naming the proxy and the status line. Requests
//   to an http server carry the absolute URL as target. Credentials in the proxy URL
//   (user:pass@, percent-decoded) are sent as "Proxy-Authorization: Basic" on the CONNECT (on
//   each request for http). Pooling, retries, watches and cancellation work as without a proxy.
// - StartWatch() is Watch() in the background: the request is sent and its answer's header read
//   on the calling thread; a watch answered 200 then goes on without holding a thread (the Beast
//   client reads its frames on the I/O threads), `on_event` is called for each frame, one at a
//   time, on a thread of the client's, and `on_end` once with what Watch() would have returned
//   when the stream ends. A refusal (or a failure before the header) calls `on_end` before
//   StartWatch returns. The callbacks must be quick (queue, wake) and must not call Stop().
//   BackgroundWatch::Stop() (and its destructor) ends the stream: after it returns no callback
//   runs, and `on_end` is not called for a stopped watch. The default implementation runs
//   Watch() on a thread of its own.
// Thread-safety: a RestClient is thread-safe; calls wait on the caller's thread (no thread per
// request). The Beast client's network steps run on a few I/O threads shared by every connection
// of the process (one per core, at most 4, started with the first connection); resolving a host
// name that is not an IP address runs getaddrinfo on a short-lived detached thread so that a
// cancellation does not wait for it. Ownership: the factory's result owns its connections; the
// callback is borrowed for the duration of Watch(), the StartWatch callbacks are owned by the
// BackgroundWatch.
#ifndef KUBELET_APICLIENT_REST_CLIENT_H_
#define KUBELET_APICLIENT_REST_CLIENT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "apiclient/kubeconfig.h"
#include "apiclient/proxy.h"
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

// A watch running in the background (RestClient::StartWatch).
class BackgroundWatch {
 public:
  virtual ~BackgroundWatch() = default;
  // Ends the stream and waits for a callback in progress; idempotent. Not from a callback.
  virtual void Stop() = 0;
};

// Called once when a background watch ends by itself, with what Watch() would have returned.
using WatchEndFn = std::function<void(absl::StatusOr<Response> result)>;

class RestClient {
 public:
  virtual ~RestClient() = default;
  virtual absl::StatusOr<Response> Do(const Request& request) = 0;
  virtual absl::StatusOr<Response> Watch(const Request& request, const WatchEventFn& on_event) = 0;
  // See the header comment. The default runs Watch() on a thread of the BackgroundWatch.
  virtual std::unique_ptr<BackgroundWatch> StartWatch(const Request& request, WatchEventFn on_event,
                                                      WatchEndFn on_end);
};

struct RestClientOptions {
  // Bounds: a unary response body (after gzip decoding), and one watch frame.
  size_t max_body_bytes = 64u << 20;
  size_t max_frame_bytes = 16u << 20;
  // Idle keep-alive connections kept for reuse.
  int max_idle_connections = 4;
  // Name resolution, TCP connect and TLS handshake of a new connection (within the call's own
  // timeout).
  absl::Duration connect_timeout = absl::Seconds(30);
  // Time source of the rate limiter and of the idle connections' ages; null: the real clock.
  Clock* clock = nullptr;
  // The proxy settings; unset: the process environment's (ProxyEnvironmentFromProcess()).
  std::optional<ProxyEnvironment> proxy_environment;
  // Called after every request (a watch when it ends) with the request and its HTTP status code
  // (0: no response), on the calling thread: for the caller's own accounting, e.g. counts by
  // verb and resource (request_info.h). Must be cheap and thread-safe.
  std::function<void(const Request& request, int code)> on_request;
};

// A client for `config` (Boost.Beast over OpenSSL). Fails (InvalidArgument / NotFound, naming the
// field or file) when the host URL is not http(s), a referenced CA, certificate, key or token
// file cannot be read, or the proxy that applies is not an http:// one.
absl::StatusOr<std::unique_ptr<RestClient>> NewRestClient(const RestConfig& config,
                                                          RestClientOptions options = {});

}  // namespace kubelet::apiclient

#endif  // KUBELET_APICLIENT_REST_CLIENT_H_
