// A small HTTP/1.1 server for the kubelet's endpoints (healthz now; :10250 and the read-only
// port later).
//
// Contract:
// - Start() binds and listens synchronously (an error names the address), then serves on one
//   internal I/O thread until Stop() or destruction. Handlers run on that thread and must not
//   block for long; slow work belongs on a worker, with the response produced there later
//   (streaming responses arrive with the logs endpoint).
// - Every connection has a read deadline, the header size is bounded, bodies are bounded, and the
//   number of concurrent connections is capped: a slow or malformed client cannot stall others or
//   exhaust memory. A malformed request gets 400 and the connection is closed.
// - Routes: exact paths, or subtree prefixes ending in "/" (the longest match wins), as Go's
//   http.ServeMux. No match -> 404 "404 page not found".
// Thread-safety: Handle() must be called before Start(); Stop() is safe from any thread.
#ifndef KUBELET_SERVER_HTTP_SERVER_H_
#define KUBELET_SERVER_HTTP_SERVER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace kubelet::server {

struct HttpRequest {
  std::string method;
  std::string target;  // raw request target, e.g. "/healthz?verbose"
  std::string path;    // decoded path without the query
  std::multimap<std::string, std::string> query;
  std::multimap<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string remote_address;

  bool HasQuery(const std::string& key) const { return query.count(key) > 0; }
  std::vector<std::string> QueryValues(const std::string& key) const;
};

struct HttpResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  void SetHeader(std::string name, std::string value);
  // Sets status, a text/plain body and the nosniff header, as Go's http.Error does.
  void Error(int code, std::string message);
};

using HttpHandler = std::function<void(const HttpRequest&, HttpResponse*)>;

struct HttpServerOptions {
  std::string name = "http";  // for log lines
  std::string address = "127.0.0.1";
  int port = 0;  // 0 picks a free port; see HttpServer::port()
  int max_connections = 1000;
  absl::Duration read_timeout = absl::Seconds(30);
  absl::Duration idle_timeout = absl::Seconds(90);
  size_t max_header_bytes = 1 << 20;
  size_t max_body_bytes = 1 << 20;
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  void Handle(std::string pattern, HttpHandler handler);
  absl::Status Start();
  void Stop();
  int port() const;

  struct Impl;  // implementation detail, public only so the .cc's connection type can name it

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kubelet::server

#endif  // KUBELET_SERVER_HTTP_SERVER_H_
