// Private to the HTTP server's files (http_server.cc, http_session.cc, http_stream.cc,
// http_tunnel.cc): not part of the server's interface (http_server.h), and included nowhere else.
//
// Holds what those files share: HttpServer::Impl (options, routes, the live connections, the
// streaming workers, TLS state) and the connection, Session, with what it is built from
// (Connection, StreamSink, StreamState, StreamTracker, Route, RequestParser, BuildHead).
// Session's member functions are defined out of line, one concern per file:
// - http_session.cc: TLS handshake, reading a request, routing, filter and handler, plain
//   responses, keep-alive, eviction and close;
// - http_stream.cc: streamed responses (HttpResponse::stream), produced on worker threads;
// - http_tunnel.cc: upgrade tunnels (HttpResponse::tunnel), pumped both ways asynchronously.
// Session is a template over the stream (PlainStream, TlsStream): each file explicitly
// instantiates, for both, the members it defines. The accept loop, eviction at the cap,
// Start()/Stop() and TLS setup stay in http_server.cc.
// Thread-safety: as noted on each type.
#ifndef KUBELET_SERVER_HTTP_SERVER_INTERNAL_H_
#define KUBELET_SERVER_HTTP_SERVER_INTERNAL_H_

#include <openssl/ssl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/openssl.h"
#include "server/http_server.h"

namespace kubelet::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace internal {

inline std::chrono::milliseconds ToChrono(absl::Duration d) {
  return std::chrono::milliseconds(absl::ToInt64Milliseconds(d));
}

// Status line and headers of a response, written by hand (Beast's fields throw on values over
// 64 KiB, and a Location header can echo a client's long target). CR and LF in a value become
// spaces, as Go's header writer does. Without `content_length` the body is chunked.
std::string BuildHead(int status, const std::vector<std::pair<std::string, std::string>>& headers,
                      std::optional<size_t> content_length, bool keep_alive = false);

// What the accept loop needs from a connection to shed load (I/O thread only).
class Connection {
 public:
  virtual ~Connection() = default;
  // True while the connection waits for a request (TLS handshake, header, keep-alive idle):
  // nothing has been accepted from it that a drop would lose.
  virtual bool Evictable() const = 0;
  // Closes the connection; its pending operations complete with an error.
  virtual void Evict() = 0;
};

// The I/O side of a streaming response.
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  virtual void Flush() = 0;
};

// Shared by the worker producing a streamed body and the connection writing it.
struct StreamState {
  absl::Mutex mu;
  absl::CondVar cv;
  bool closed ABSL_GUARDED_BY(mu) = false;  // the server is stopping: never post again
  bool gone ABSL_GUARDED_BY(mu) = false;    // client disconnected or a write failed
  bool head_queued ABSL_GUARDED_BY(mu) = false;
  bool failed ABSL_GUARDED_BY(mu) = false;    // a complete response was queued instead
  bool finished ABSL_GUARDED_BY(mu) = false;  // the producer returned; `pending` has the end
  bool flush_posted ABSL_GUARDED_BY(mu) = false;
  std::string pending ABSL_GUARDED_BY(mu);  // encoded bytes not yet handed to the I/O thread
  size_t backlog ABSL_GUARDED_BY(mu) = 0;   // encoded bytes pending or being written
  std::string head ABSL_GUARDED_BY(mu);     // replaceable until head_queued
  size_t limit = 0;
  asio::any_io_executor executor;
  std::weak_ptr<StreamSink> sink;

  void Kick() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (flush_posted || closed) return;
    flush_posted = true;
    asio::post(executor, [w = sink] {
      if (auto s = w.lock()) s->Flush();
    });
  }
};

// Counts the streaming workers, so Stop() can wait for them, and reaches their states.
struct StreamTracker {
  absl::Mutex mu;
  int active ABSL_GUARDED_BY(mu) = 0;
  std::vector<std::weak_ptr<StreamState>> live ABSL_GUARDED_BY(mu);
};

struct Route {
  std::string pattern;
  HttpHandler handler;
  std::vector<std::string> methods;
  size_t max_body_bytes = 0;
};

// A request parser that stores what it reads in our own types instead of Beast's basic_fields,
// which throws std::length_error for a field name or value over 64 KiB (Boost 1.74) and whose
// string body reserves whatever Content-Length the client claims. Headers are bounded by the
// parser's header limit as a whole, so a single value may be as long as that limit (as Go's
// net/http allows); the body grows only as bytes arrive and never past `body_limit_`.
class RequestParser : public http::basic_parser<true> {
 public:
  std::string method;
  std::string target;
  int version = 11;
  std::multimap<std::string, std::string> headers;  // names lower-cased
  std::string body;

  // The most body bytes accepted; checked as they arrive (and against Content-Length by the
  // caller before reading).
  void SetBodyLimit(size_t n) {
    body_limit_ = n;
    body_limit(n);
  }

 private:
  void on_request_impl(http::verb, beast::string_view method_str, beast::string_view target_str,
                       int v, beast::error_code&) override {
    method.assign(method_str.data(), method_str.size());
    target.assign(target_str.data(), target_str.size());
    version = v;
  }
  void on_response_impl(int, beast::string_view, int, beast::error_code& ec) override {
    ec = http::error::bad_version;  // never called for requests
  }
  void on_field_impl(http::field, beast::string_view name, beast::string_view value,
                     beast::error_code&) override {
    std::string lower(name.data(), name.size());
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    headers.emplace(std::move(lower), std::string(value.data(), value.size()));
  }
  void on_header_impl(beast::error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>& length,
                         beast::error_code& ec) override {
    if (length && *length > body_limit_) ec = http::error::body_limit;
  }
  size_t on_body_impl(beast::string_view data, beast::error_code& ec) override {
    return Append(data, ec);
  }
  void on_chunk_header_impl(std::uint64_t size, beast::string_view,
                            beast::error_code& ec) override {
    if (size > body_limit_ - std::min(body_limit_, body.size())) ec = http::error::body_limit;
  }
  size_t on_chunk_body_impl(std::uint64_t, beast::string_view data,
                            beast::error_code& ec) override {
    return Append(data, ec);
  }
  void on_finish_impl(beast::error_code&) override {}

  size_t Append(beast::string_view data, beast::error_code& ec) {
    if (body.size() + data.size() > body_limit_) {
      ec = http::error::body_limit;
      return 0;
    }
    body.append(data.data(), data.size());
    return data.size();
  }

  size_t body_limit_ = 0;
};

}  // namespace internal

struct HttpServer::Impl {
  explicit Impl(HttpServerOptions o) : options(std::move(o)) {}
  ~Impl() {
    // Pending handlers own the sessions, whose destructors use this object: destroy them first.
    accept_retry.reset();
    acceptor.reset();
    ioc.reset();
    ssl_ctx.reset();
  }

  HttpServerOptions options;
  std::vector<internal::Route> routes;  // fixed before Start()
  HttpFilter filter;
  // Runs a blocking filter (options.filter_threads > 0); joined by Stop() after the I/O thread,
  // before the io_context goes away.
  std::unique_ptr<asio::thread_pool> filter_pool;
  // Live connections, oldest first (I/O thread only; a connection removes itself when it dies).
  std::list<internal::Connection*> sessions;
  size_t max_route_body = 0;  // the largest body any route accepts
  std::optional<asio::steady_timer> accept_retry;
  std::atomic<int> bound_port{0};
  std::atomic<bool> running{false};
  std::shared_ptr<internal::StreamTracker> streams = std::make_shared<internal::StreamTracker>();
  std::unique_ptr<ssl::context> ssl_ctx;
  // TlsServerOptions::certificate parsed, for its generation (I/O thread only).
  struct ParsedCertificate {
    uint64_t generation = 0;
    ossl::X509Ptr leaf;
    std::vector<ossl::X509Ptr> chain;
    ossl::PkeyPtr key;
  };
  std::optional<ParsedCertificate> parsed_cert;
  // The generation that did not load (refused without parsing it again until it changes).
  std::optional<uint64_t> failed_generation;
  // SSL_CTX_set_cert_cb: presents the current dynamic certificate; 0 fails the handshake.
  static int DynamicCertificate(SSL* ssl, void* arg);
  std::unique_ptr<asio::io_context> ioc = std::make_unique<asio::io_context>(1);
  std::optional<tcp::acceptor> acceptor;
  std::thread thread;

  const internal::Route* Match(const std::string& path) const {
    const internal::Route* best = nullptr;
    size_t best_len = 0;
    for (const internal::Route& r : routes) {
      const std::string& p = r.pattern;
      bool match = p.back() == '/' ? path.compare(0, p.size(), p) == 0 : path == p;
      if (match && p.size() >= best_len) {
        best = &r;
        best_len = p.size();
      }
    }
    return best;
  }

  absl::Status SetUpTls();
  void Accept();
};

namespace internal {

// The two kinds of connection. A Session member used outside the file that defines it links
// only through that file's explicit instantiations (at its end), one per stream type.
using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// One connection over `Stream` (beast::tcp_stream or beast::ssl_stream<beast::tcp_stream>).
// Owned by shared_ptr because its lifetime is that of the outstanding asio operations; the last
// completion handler to finish releases it.
template <class Stream>
class Session : public StreamSink,
                public Connection,
                public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  Session(tcp::socket socket, HttpServer::Impl* impl)
      : stream_(MakeStream(std::move(socket), impl)), impl_(impl) {
    self_in_list_ = impl_->sessions.insert(impl_->sessions.end(), this);
    beast::error_code ec;
    auto ep = Tcp().socket().remote_endpoint(ec);
    if (!ec) remote_ = absl::StrCat(ep.address().to_string(), ":", ep.port());
  }
  ~Session() override {
    if (!evicted_) impl_->sessions.erase(self_in_list_);
  }

  bool Evictable() const override { return !serving_ && !evicted_; }
  void Evict() override;

  void Start();

  // Streaming: hands the queued bytes to the socket (I/O thread only).
  void Flush() override;

 private:
  static Stream MakeStream(tcp::socket socket, HttpServer::Impl* impl) {
    if constexpr (kTls) {
      return Stream(beast::tcp_stream(std::move(socket)), *impl->ssl_ctx);
    } else {
      (void)impl;
      return Stream(std::move(socket));
    }
  }

  beast::tcp_stream& Tcp() { return beast::get_lowest_layer(stream_); }

  // ---- Requests and responses (http_session.cc) ------------------------------------------

  void Read();

  // A transport-level end of the connection, where nothing can or should be answered.
  static bool ConnectionGone(const beast::error_code& ec);

  // Answers a request that could not be read and closes the connection, as Go's net/http does
  // ("431 Request Header Fields Too Large", "400 Bad Request", no newline).
  void RejectRequest(int status, std::string text);

  // Runs `fn`; an exception becomes a logged 500 in `out`, and the result is false then.
  // `path` is for the log (the request being served when empty).
  template <class Fn>
  bool Guarded(const char* what, Fn&& fn, HttpResponse* out, const std::string& path = "");

  void OnHeader(beast::error_code ec);

  // The method check, then the body (if any) and the handler, for a request that passed the
  // filter.
  void AfterFilter(bool keep_alive, bool body_pending);

  void Dispatch(bool keep_alive);

  void Respond(HttpResponse out, bool keep_alive);

  void Close();

  // ---- Streamed responses (http_stream.cc) -----------------------------------------------

  void StartStream(HttpResponse out);

  // While streaming the client sends nothing; a completed read means it has gone.
  void WatchForHangUp();

  void EndStream();

  // ---- Tunnels (HttpResponse::tunnel; http_tunnel.cc) ------------------------------------

  // The handler's resolver runs on a worker thread (counted with the streaming workers, so
  // Stop() waits for it); its answer comes back to the I/O thread, which either sends the
  // resolver's error or opens the tunnel.
  void StartTunnel(std::function<std::optional<TunnelTarget>(HttpResponse*)> resolve);

  // The client's request head for the backend: its method, the backend's target and Host, the
  // client's other headers but Authorization (the kubelet consumed the credential), then any
  // body it sent and whatever the client sent after the head.
  std::string TunnelHead(const TunnelTarget& target) const;

  void OpenTunnel(const tcp::endpoint& endpoint, const TunnelTarget& target);

  // Client -> backend; the client's end of input becomes the backend's.
  void PumpUp();

  // Backend -> client; the backend's end ends the tunnel.
  void PumpDown();

  void CloseTunnel();

  // A tunneled connection's backend side and its two copy buffers (only for tunnels).
  struct Tunnel {
    explicit Tunnel(const asio::any_io_executor& ex) : backend(ex) {}
    tcp::socket backend;
    std::array<char, 32 << 10> up;
    std::array<char, 32 << 10> down;
    bool closed = false;
  };

  Stream stream_;
  std::unique_ptr<Tunnel> tunnel_;
  beast::flat_buffer buffer_;
  std::optional<RequestParser> parser_;
  HttpServer::Impl* impl_;
  std::list<Connection*>::iterator self_in_list_;
  std::string remote_;
  PeerCertificate peer_;
  HttpRequest request_;           // the request being served
  const Route* route_ = nullptr;  // its route
  bool serving_ = false;          // a request was read and is being answered
  bool evicted_ = false;
  bool first_ = true;
  bool writing_ = false;
  std::shared_ptr<StreamState> stream_state_;
  char hangup_buf_[512];
};

}  // namespace internal
}  // namespace kubelet::server

#endif  // KUBELET_SERVER_HTTP_SERVER_INTERNAL_H_
