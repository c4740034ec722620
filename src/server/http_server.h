// A small HTTP/1.1 server (plain or TLS) for the kubelet's endpoints: healthzPort, the kubelet
// API on :10250 and the read-only port.
//
// Contract:
// - Start() binds and listens synchronously (an error names the address:port), loads the TLS
//   material when `tls` is set (an error names the file), then serves on one internal I/O thread
//   until Stop() or destruction. Handlers and the filter run on that thread and must not block;
//   slow work belongs in a streaming response (below), which runs on a worker thread.
// - Hostile clients cost little and cannot stop the server, as Go's net/http behaves for the
//   upstream kubelet: a header block over `max_header_bytes` (+4 KiB, as Go) -> 431 and close;
//   a malformed request -> 400 and close; a body over the route's limit (Content-Length checked
//   before reading, chunked bodies as they arrive) -> 413 and close. The body is read only after
//   routing and the filter (authentication/authorization) passed, and grows only as bytes
//   arrive. A request header must arrive within `header_timeout` (`idle_timeout` on a kept-alive
//   connection), its body within `read_timeout`; every write has `write_timeout`; TLS
//   handshakes `handshake_timeout`. At `max_connections`, a new connection makes room by
//   closing the oldest one still waiting for a request, so slow or idle clients can never lock
//   out others (e.g. /healthz). Non-canonical paths ("/a/../b", "//x") get Go ServeMux's 301 to
//   the cleaned path. No exception escapes: a throwing handler or filter answers 500, a
//   throwing streaming producer ends its response, and the I/O loop survives anything else.
// - TLS: the client certificate is requested (never required) when `client_ca_file` is set, and
//   verified against that bundle after the handshake; the outcome is in HttpRequest::peer.
// - Routes: exact paths, or subtree prefixes ending in "/" (the longest match wins), as Go's
//   http.ServeMux. No match -> 404 "404 page not found". A route may restrict its methods;
//   another method gets 405 "405: Method Not Allowed" (go-restful's answer). The filter (if set)
//   runs for every routed request before the method check and the handler, as a go-restful
//   container filter does. A filter that may block runs off the I/O thread (filter_threads).
// - Streaming: a handler that sets HttpResponse::stream hands the request to a worker thread,
//   which writes the body through a ResponseStream (chunked transfer encoding; the connection
//   closes afterwards), or replaces the head, or answers with a complete response instead. The
//   writer blocks while more than `stream_buffer_bytes` are unsent and returns false once the
//   client has gone or the server is stopping.
// Thread-safety: Handle()/SetFilter() must be called before Start(); Stop() is safe from any
// thread, waits for the I/O thread and (up to `stream_stop_timeout`) for streaming workers.
#ifndef KUBELET_SERVER_HTTP_SERVER_H_
#define KUBELET_SERVER_HTTP_SERVER_H_

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
#include "absl/time/time.h"

namespace kubelet::server {

// What the TLS layer learnt about the client's certificate.
struct PeerCertificate {
  bool presented = false;                  // the client sent a certificate
  bool verified = false;                   // ... and it chains to the client CA bundle
  std::string verify_error;                // OpenSSL's reason when presented but not verified
  std::string common_name;                 // subject CN (the last one, as Go's pkix.Name)
  std::vector<std::string> organizations;  // subject O values, in order
};

// The authenticated caller, filled by the server's filter (see auth.h).
struct UserInfo {
  std::string name;
  std::vector<std::string> groups;
  std::string uid;
  std::map<std::string, std::vector<std::string>> extra;
};

struct HttpRequest {
  std::string method;
  std::string target;  // raw request target, e.g. "/healthz?verbose"
  std::string path;    // decoded path without the query
  std::multimap<std::string, std::string> query;
  std::multimap<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string remote_address;
  bool tls = false;
  PeerCertificate peer;  // TLS only
  UserInfo user;         // set by the filter

  bool HasQuery(const std::string& key) const { return query.count(key) > 0; }
  std::vector<std::string> QueryValues(const std::string& key) const;
  // The first value of header `name` (lower-case), or "".
  std::string Header(const std::string& name) const;
};

// The body writer of a streaming response. Thread-safe; used from the worker thread.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  // Queues `data` as one chunk (the status line and headers go first, on the first call). Blocks
  // while the unsent backlog is over the limit. Returns false once the client has gone or the
  // server is stopping: the producer should stop.
  virtual bool Write(std::string_view data) = 0;
  // Answers with an error instead (as HttpResponse::Error) if nothing was written yet; otherwise
  // just ends the body.
  virtual void Fail(int status, std::string message) = 0;
  // Answers with this complete response instead (Content-Length, not chunked) if nothing was
  // written yet; false otherwise. For producers whose answer depends on blocking work, e.g. a
  // file server that must look at the disk before it knows whether it answers 200, 301 or 404.
  virtual bool Respond(int status, std::vector<std::pair<std::string, std::string>> headers,
                       std::string body) = 0;
  // Replaces the status and headers the streamed body starts with; false once anything was
  // written (or answered).
  virtual bool SetHead(int status, std::vector<std::pair<std::string, std::string>> headers) = 0;
  // True once the client has disconnected or the server is stopping.
  virtual bool Gone() const = 0;
};

// Where a tunneled request goes (a container runtime's streaming server).
struct TunnelTarget {
  std::string host;  // an IP address, or "localhost"
  uint16_t port = 0;
  std::string target;  // the request target on the backend, e.g. "/exec/<token>"
};

struct HttpResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // When set, `status` and `headers` are sent with chunked encoding and this runs on a worker
  // thread to produce the body; the response ends when it returns.
  std::function<void(ResponseStream&)> stream;
  // When set, the request is proxied (upgrade-aware, as upstream's UpgradeAwareHandler): this
  // runs on a worker thread (it may block, e.g. on the runtime) and returns the backend, or
  // nullopt after filling `error` with the answer to send instead. Then the request head goes
  // to the backend as the client sent it (the backend's target and Host, without
  // Authorization), and bytes flow both ways until the backend closes, either side fails, or
  // nothing moves for `tunnel_idle_timeout`; a client's end of input is passed on as a
  // half-close.
  std::function<std::optional<TunnelTarget>(HttpResponse* error)> tunnel;

  void SetHeader(std::string name, std::string value);
  // Sets status, a text/plain body and the nosniff header, as Go's http.Error does.
  void Error(int code, std::string message);
};

using HttpHandler = std::function<void(const HttpRequest&, HttpResponse*)>;
// Runs before the handler of a routed request. Returns false when it has answered (e.g. 401).
using HttpFilter = std::function<bool(HttpRequest*, HttpResponse*)>;

// A serving certificate chosen at each handshake: the PEM chain (leaf first), the PEM key, and
// a generation that changes whenever they do.
struct TlsCertificate {
  uint64_t generation = 0;
  std::string cert_pem;
  std::string key_pem;
};

struct TlsServerOptions {
  std::string cert_file;  // PEM; may carry the chain after the leaf
  std::string key_file;   // PEM
  // When set, cert_file and key_file are unused: each handshake presents what this returns
  // (parsed once per generation), and nullopt fails the handshake ("no serving certificate
  // available"), as upstream's GetCertificate with serverTLSBootstrap. Called on the I/O thread;
  // must be cheap and must not block.
  std::function<std::optional<TlsCertificate>()> certificate;
  std::string client_ca_file;  // PEM bundle; empty: no client certificates requested
  int min_version = 0;         // OpenSSL protocol version (TLS1_2_VERSION...); 0: TLS 1.2
  std::string cipher_list;     // OpenSSL cipher list for TLS <= 1.2; empty: OpenSSL's default
};

struct HttpServerOptions {
  std::string name = "http";  // for log lines
  std::string address = "127.0.0.1";
  int port = 0;  // 0 picks a free port; see HttpServer::port()
  int max_connections = 1000;
  absl::Duration header_timeout = absl::Seconds(30);  // first request's header
  absl::Duration read_timeout = absl::Seconds(30);    // a request's body
  absl::Duration idle_timeout = absl::Seconds(90);
  absl::Duration write_timeout = absl::Seconds(60);  // per write
  absl::Duration handshake_timeout = absl::Seconds(10);
  size_t max_header_bytes = 1 << 20;
  size_t max_body_bytes = 64 << 10;  // default per route; see Handle()
  int max_streams = 128;
  size_t stream_buffer_bytes = 1 << 20;
  absl::Duration stream_stop_timeout = absl::Seconds(5);
  // > 0: the filter may block (webhook authentication/authorization calls the API server): it
  // runs on a pool of this many threads while its connection waits, and the request resumes on
  // the I/O thread. 0: the filter runs on the I/O thread and must not block.
  int filter_threads = 0;
  // A tunnel (HttpResponse::tunnel) with no traffic either way for this long is closed
  // (streamingConnectionIdleTimeout).
  absl::Duration tunnel_idle_timeout = absl::Hours(4);
  std::optional<TlsServerOptions> tls;
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // `methods` empty: any method. `max_body_bytes`: the largest request body the route accepts
  // (default HttpServerOptions::max_body_bytes).
  void Handle(std::string pattern, HttpHandler handler, std::vector<std::string> methods = {},
              std::optional<size_t> max_body_bytes = std::nullopt);
  void SetFilter(HttpFilter filter);
  absl::Status Start();
  void Stop();
  int port() const;

  struct Impl;  // implementation detail, public only so the .cc's connection type can name it

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kubelet::server

#endif  // KUBELET_SERVER_HTTP_SERVER_H_
