// A minimal blocking HTTP(S) GET client for the static pod URL source, behaving like the Go
// http.Client{Timeout: 10s} upstream uses for --manifest-url:
//   * http:// and https:// (TLS 1.2+, system trust store honouring SSL_CERT_FILE/SSL_CERT_DIR,
//     SNI, host name / IP verification). Other schemes fail with
//     `Get "<url>": unsupported protocol scheme "<scheme>"`.
//   * Follows up to 10 redirects (301/302/303/307/308), keeping the caller's headers and
//     dropping Authorization/Www-Authenticate/Cookie/Cookie2 when the host changes, with a
//     Referer as Go sets it. Userinfo in the URL becomes Basic authorization.
//   * Header names are canonicalized as Go's Header.Add does ("x-token" -> "X-Token"); a "Host"
//     entry is ignored; User-Agent defaults to Go's "Go-http-client/1.1".
//   * One overall deadline for the whole exchange (redirects included); the body is bounded
//     (exceeding it fails with "the read limit is reached"; a Content-Length over the bound fails
//     at once, and no memory is reserved from a claimed length).
//   * Hostile responses fail the fetch with an error, never an exception or a crash: a header
//     block over 1 MiB ("net/http: server response headers exceeded 1048576 bytes; aborted"), a
//     header name or value over 64 KiB ("net/http: server response header field exceeded 65536
//     bytes; aborted"; Go has no such limit, Beast's field storage has), a status line that is
//     not HTTP ("net/http: HTTP/1.x transport connection broken: malformed HTTP response
//     \"<line>\""), bad chunked framing ("malformed chunked encoding"), a connection closed
//     early ("EOF" before any byte, "unexpected EOF" after some), TLS garbage ("tls: first
//     record does not look like a TLS handshake"). A redirect to another scheme fails as a
//     request to that URL does (`Get "file:///x": unsupported protocol scheme "file"`).
//   * Errors read like Go's: `Get "<url>": dial tcp 127.0.0.1:1: connect: connection refused`,
//     `Get "<url>": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`.
// Proxy environment variables (HTTP_PROXY, ...) are not honoured.
//
// Thread-safety: Get() is called by one thread at a time; Cancel() may be called from any
// thread and makes the in-flight and every later Get() fail promptly with kCancelled.
#ifndef KUBELET_KUBELET_PODSOURCE_HTTP_FETCH_H_
#define KUBELET_KUBELET_PODSOURCE_HTTP_FETCH_H_

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kubelet::podsource {

using HttpHeader = std::map<std::string, std::vector<std::string>>;

struct HttpFetchOptions {
  absl::Duration timeout = absl::Seconds(10);
  size_t max_body_bytes = 10 << 20;
  int max_redirects = 10;
};

struct HttpFetchResponse {
  int status_code = 0;
  std::string status;    // Go's resp.Status, e.g. "500 Internal Server Error"
  std::string location;  // the first Location header, "" if none
  std::string body;
};

class HttpFetcher {
 public:
  HttpFetcher();
  ~HttpFetcher();
  HttpFetcher(const HttpFetcher&) = delete;
  HttpFetcher& operator=(const HttpFetcher&) = delete;

  absl::StatusOr<HttpFetchResponse> Get(const std::string& url, const HttpHeader& header,
                                        const HttpFetchOptions& options);
  void Cancel();

  struct Impl;  // implementation detail

 private:
  std::unique_ptr<Impl> impl_;
};

// Runs the client's response handling (parser, limits, error wording) over `raw`, the bytes a
// server sent on a plain http:// connection before closing it, handed over in reads of at most
// `read_size` bytes. Returns what Get() would for one exchange with `url` (redirects are not
// followed; the timeout does not apply). Never throws. For tests and fuzzing.
absl::StatusOr<HttpFetchResponse> ParseHttpResponseBytes(std::string_view url, std::string_view raw,
                                                         size_t read_size,
                                                         const HttpFetchOptions& options);

}  // namespace kubelet::podsource

#endif  // KUBELET_KUBELET_PODSOURCE_HTTP_FETCH_H_
