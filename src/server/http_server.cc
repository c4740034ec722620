#include "server/http_server.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <list>
#include <optional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/log.h"
#include "common/openssl.h"

namespace kubelet::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

std::chrono::milliseconds ToChrono(absl::Duration d) {
  return std::chrono::milliseconds(absl::ToInt64Milliseconds(d));
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decoding; `plus_is_space` for query components. Returns false on a bad escape.
bool Unescape(std::string_view in, bool plus_is_space, std::string* out) {
  out->clear();
  out->reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      int hi = HexValue(in[i + 1]), lo = HexValue(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
  return true;
}

bool ParseTarget(std::string_view target, HttpRequest* req) {
  size_t q = target.find('?');
  std::string_view path = target.substr(0, q);
  if (!Unescape(path, false, &req->path)) return false;
  if (req->path.empty() || req->path[0] != '/') return false;
  if (q == std::string_view::npos) return true;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view kv = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (kv.empty()) continue;
    size_t eq = kv.find('=');
    std::string key, value;
    if (!Unescape(kv.substr(0, eq), true, &key)) return false;
    if (eq != std::string_view::npos && !Unescape(kv.substr(eq + 1), true, &value)) return false;
    req->query.emplace(std::move(key), std::move(value));
  }
  return true;
}

std::string ReasonPhrase(int status) {
  auto r = http::obsolete_reason(static_cast<http::status>(status));
  return std::string(r.data(), r.size());
}

// Status line and headers of a response, written by hand (Beast's fields throw on values over
// 64 KiB, and a Location header can echo a client's long target). CR and LF in a value become
// spaces, as Go's header writer does. Without `content_length` the body is chunked.
std::string BuildHead(int status, const std::vector<std::pair<std::string, std::string>>& headers,
                      std::optional<size_t> content_length, bool keep_alive = false) {
  std::string out = absl::StrCat("HTTP/1.1 ", status, " ", ReasonPhrase(status), "\r\n");
  bool has_type = false;
  for (const auto& [n, v] : headers) {
    std::string lower = n;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "content-length" || lower == "transfer-encoding" || lower == "connection") {
      continue;
    }
    if (lower == "content-type") has_type = true;
    size_t at = out.size();
    absl::StrAppend(&out, n, ": ", v);
    for (size_t i = at; i < out.size(); ++i) {
      if (out[i] == '\r' || out[i] == '\n') out[i] = ' ';
    }
    out.append("\r\n");
  }
  if (!has_type) absl::StrAppend(&out, "Content-Type: text/plain; charset=utf-8\r\n");
  if (content_length) {
    absl::StrAppend(&out, "Content-Length: ", *content_length, "\r\n");
  } else {
    absl::StrAppend(&out, "Transfer-Encoding: chunked\r\n");
  }
  absl::StrAppend(&out, keep_alive ? "\r\n" : "Connection: close\r\n\r\n");
  return out;
}

// html.EscapeString, for the body of a redirect.
std::string HtmlEscape(std::string_view in) {
  std::string out;
  for (char c : in) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '"':
        out += "&#34;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string OpenSslError() {
  unsigned long e = ERR_get_error();  // NOLINT(runtime/int): OpenSSL's type
  if (e == 0) return "unknown error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  ERR_clear_error();
  return buf;
}

// Requested-but-optional client certificates: the handshake accepts any certificate; the result
// of verification is read afterwards (SSL_get_verify_result) and judged by the authenticator.
int AcceptAnyCertificate(int, X509_STORE_CTX*) { return 1; }

void ReadPeerCertificate(SSL* ssl, bool ca_configured, PeerCertificate* peer) {
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (cert == nullptr) return;
  peer->presented = true;
  long result = SSL_get_verify_result(ssl);  // NOLINT(runtime/int): OpenSSL's type
  if (ca_configured && result == X509_V_OK) {
    peer->verified = true;
  } else {
    peer->verify_error = X509_verify_cert_error_string(result);
  }
  X509_NAME* name = X509_get_subject_name(cert);
  for (int i = 0; name != nullptr && i < X509_NAME_entry_count(name); ++i) {
    X509_NAME_ENTRY* entry = X509_NAME_get_entry(name, i);
    int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry));
    if (nid != NID_commonName && nid != NID_organizationName) continue;
    unsigned char* utf8 = nullptr;
    int len = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry));
    if (len < 0) continue;
    std::string value(reinterpret_cast<char*>(utf8), static_cast<size_t>(len));
    OPENSSL_free(utf8);
    if (nid == NID_commonName) {
      peer->common_name = std::move(value);
    } else {
      peer->organizations.push_back(std::move(value));
    }
  }
  X509_free(cert);
}

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
  bool failed ABSL_GUARDED_BY(mu) = false;
  bool finished ABSL_GUARDED_BY(mu) = false;  // the producer returned; `pending` has the end
  bool flush_posted ABSL_GUARDED_BY(mu) = false;
  std::string pending ABSL_GUARDED_BY(mu);  // encoded bytes not yet handed to the I/O thread
  size_t backlog ABSL_GUARDED_BY(mu) = 0;   // encoded bytes pending or being written
  std::string head;                         // immutable after creation
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

class StreamWriter : public ResponseStream {
 public:
  explicit StreamWriter(std::shared_ptr<StreamState> s) : s_(std::move(s)) {}

  bool Write(std::string_view data) override {
    if (data.empty()) return !Gone();
    absl::MutexLock l(&s_->mu);
    if (s_->closed || s_->gone || s_->failed || s_->finished) return false;
    QueueHead();
    std::string chunk = absl::StrCat(absl::Hex(data.size()), "\r\n");
    chunk.append(data.data(), data.size());
    chunk.append("\r\n");
    s_->backlog += chunk.size();
    s_->pending += chunk;
    s_->Kick();
    while (s_->backlog > s_->limit && !s_->closed && !s_->gone) s_->cv.Wait(&s_->mu);
    return !s_->closed && !s_->gone;
  }

  void Fail(int status, std::string message) override {
    absl::MutexLock l(&s_->mu);
    if (s_->head_queued || s_->finished) return;
    message.push_back('\n');
    std::string out = BuildHead(
        status,
        {{"Content-Type", "text/plain; charset=utf-8"}, {"X-Content-Type-Options", "nosniff"}},
        message.size());
    out += message;
    s_->head_queued = true;
    s_->failed = true;
    s_->backlog += out.size();
    s_->pending += out;
    s_->Kick();
  }

  bool Gone() const override {
    absl::MutexLock l(&s_->mu);
    return s_->closed || s_->gone;
  }

  // The producer returned: end the body.
  void Finish() {
    absl::MutexLock l(&s_->mu);
    QueueHead();
    if (!s_->failed) {
      s_->pending += "0\r\n\r\n";
      s_->backlog += 5;
    }
    s_->finished = true;
    s_->Kick();
  }

 private:
  void QueueHead() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s_->mu) {
    if (s_->head_queued) return;
    s_->head_queued = true;
    s_->pending += s_->head;
    s_->backlog += s_->head.size();
  }

  std::shared_ptr<StreamState> s_;
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

// Go's path.Clean as http.ServeMux applies it (cleanPath): a rooted path without "." or ".."
// elements and repeated slashes; a trailing slash is kept.
std::string CleanPath(const std::string& p) {
  if (p.empty()) return "/";
  std::vector<std::string_view> out;
  std::string_view rest(p);
  while (!rest.empty()) {
    size_t slash = rest.find('/');
    std::string_view elem = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    if (elem.empty() || elem == ".") continue;
    if (elem == "..") {
      if (!out.empty()) out.pop_back();
      continue;
    }
    out.push_back(elem);
  }
  std::string clean = "/";
  for (size_t i = 0; i < out.size(); ++i) {
    if (i > 0) clean.push_back('/');
    clean.append(out[i]);
  }
  if (p.back() == '/' && clean != "/") clean.push_back('/');
  return clean;
}

}  // namespace

std::vector<std::string> HttpRequest::QueryValues(const std::string& key) const {
  std::vector<std::string> out;
  auto [b, e] = query.equal_range(key);
  for (auto it = b; it != e; ++it) out.push_back(it->second);
  return out;
}

std::string HttpRequest::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

void HttpResponse::SetHeader(std::string name, std::string value) {
  for (auto& [n, v] : headers) {
    if (n == name) {
      v = std::move(value);
      return;
    }
  }
  headers.emplace_back(std::move(name), std::move(value));
}

void HttpResponse::Error(int code, std::string message) {
  status = code;
  SetHeader("Content-Type", "text/plain; charset=utf-8");
  SetHeader("X-Content-Type-Options", "nosniff");
  body = std::move(message);
  body.push_back('\n');
}

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
  std::vector<Route> routes;  // fixed before Start()
  HttpFilter filter;
  // Runs a blocking filter (options.filter_threads > 0); joined by Stop() after the I/O thread,
  // before the io_context goes away.
  std::unique_ptr<asio::thread_pool> filter_pool;
  // Live connections, oldest first (I/O thread only; a connection removes itself when it dies).
  std::list<Connection*> sessions;
  size_t max_route_body = 0;  // the largest body any route accepts
  std::optional<asio::steady_timer> accept_retry;
  std::atomic<int> bound_port{0};
  std::atomic<bool> running{false};
  std::shared_ptr<StreamTracker> streams = std::make_shared<StreamTracker>();
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

  const Route* Match(const std::string& path) const {
    const Route* best = nullptr;
    size_t best_len = 0;
    for (const Route& r : routes) {
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

namespace {

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
  void Evict() override {
    evicted_ = true;
    impl_->sessions.erase(self_in_list_);
    KLOG_V(4, "Dropping an idle connection to admit a new one", "server", impl_->options.name,
           "remote", remote_);
    Close();
  }

  void Start() {
    if constexpr (kTls) {
      Tcp().expires_after(ToChrono(impl_->options.handshake_timeout));
      stream_.async_handshake(
          ssl::stream_base::server, [self = this->shared_from_this()](beast::error_code ec) {
            if (ec) {
              KLOG_V(4, "TLS handshake failed", "server", self->impl_->options.name, "remote",
                     self->remote_, "err", ec.message());
              self->Close();
              return;
            }
            ReadPeerCertificate(self->stream_.native_handle(),
                                !self->impl_->options.tls->client_ca_file.empty(), &self->peer_);
            self->Read();
          });
    } else {
      Read();
    }
  }

  // Streaming: hands the queued bytes to the socket (I/O thread only).
  void Flush() override {
    if (writing_ || !stream_state_) return;
    std::string out;
    bool last = false;
    {
      absl::MutexLock l(&stream_state_->mu);
      stream_state_->flush_posted = false;
      out.swap(stream_state_->pending);
      last = stream_state_->finished || stream_state_->failed;
    }
    if (out.empty()) {
      if (last) EndStream();
      return;
    }
    writing_ = true;
    Tcp().expires_after(ToChrono(impl_->options.write_timeout));
    auto buf = std::make_shared<std::string>(std::move(out));
    asio::async_write(stream_, asio::buffer(*buf),
                      [self = this->shared_from_this(), buf](beast::error_code ec, size_t) {
                        self->writing_ = false;
                        bool finished;
                        {
                          absl::MutexLock l(&self->stream_state_->mu);
                          self->stream_state_->backlog -= buf->size();
                          if (ec) self->stream_state_->gone = true;
                          finished = self->stream_state_->finished && !ec &&
                                     self->stream_state_->pending.empty();
                          self->stream_state_->cv.SignalAll();
                        }
                        if (ec || finished) {
                          self->EndStream();
                          return;
                        }
                        self->Flush();
                      });
  }

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

  void Read() {
    parser_.emplace();
    // Go's net/http reads up to MaxHeaderBytes + 4096 before answering 431.
    parser_->header_limit(static_cast<uint32_t>(impl_->options.max_header_bytes + 4096));
    parser_->SetBodyLimit(impl_->max_route_body);
    Tcp().expires_after(
        ToChrono(first_ ? impl_->options.header_timeout : impl_->options.idle_timeout));
    first_ = false;
    serving_ = false;
    request_ = HttpRequest();
    route_ = nullptr;
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  // A transport-level end of the connection, where nothing can or should be answered.
  static bool ConnectionGone(const beast::error_code& ec) {
    return ec == http::error::end_of_stream || ec == http::error::partial_message ||
           ec == beast::error::timeout || ec == asio::error::operation_aborted ||
           ec == asio::error::connection_reset || ec == asio::error::eof ||
           ec == ssl::error::stream_truncated || ec.category() == asio::error::get_ssl_category() ||
           ec.category() == asio::error::get_system_category();
  }

  // Answers a request that could not be read and closes the connection, as Go's net/http does
  // ("431 Request Header Fields Too Large", "400 Bad Request", no newline).
  void RejectRequest(int status, std::string text) {
    HttpResponse out;
    out.Error(status, std::move(text));
    out.body.pop_back();
    Respond(std::move(out), /*keep_alive=*/false);
  }

  void OnHeader(beast::error_code ec) {
    if (ec) {
      if (ConnectionGone(ec)) return Close();
      if (ec == http::error::header_limit) {
        return RejectRequest(431, "431 Request Header Fields Too Large");
      }
      if (ec == http::error::body_limit) {
        return RejectRequest(413, "413 Request Entity Too Large");
      }
      return RejectRequest(400, "400 Bad Request");
    }
    serving_ = true;
    request_ = HttpRequest();
    HttpRequest& req = request_;
    req.method = std::move(parser_->method);
    req.target = std::move(parser_->target);
    req.headers = std::move(parser_->headers);
    req.remote_address = remote_;
    req.tls = kTls;
    req.peer = peer_;
    if (!ParseTarget(req.target, &req)) return RejectRequest(400, "400 Bad Request");
    // A request whose body is not read cannot be followed by another on this connection.
    const bool body_pending = !parser_->is_done();
    const bool keep_alive = parser_->keep_alive() && !body_pending;

    HttpResponse out;
    if (std::string clean = CleanPath(req.path); clean != req.path && req.method != "CONNECT") {
      // http.ServeMux redirects a non-canonical path ("/a/../b", "//x") to its clean form.
      size_t q = req.target.find('?');
      std::string location = clean + (q == std::string::npos ? "" : req.target.substr(q));
      out.status = 301;
      out.SetHeader("Location", location);
      out.SetHeader("Content-Type", "text/html; charset=utf-8");
      out.body = "<a href=\"" + HtmlEscape(location) + "\">Moved Permanently</a>.\n\n";
      return Respond(std::move(out), keep_alive);
    }
    route_ = impl_->Match(req.path);
    if (route_ == nullptr) {
      out.Error(404, "404 page not found");
      return Respond(std::move(out), keep_alive);
    }
    // Authentication and authorization run on the header alone: an unauthenticated client
    // never gets its body read or buffered.
    if (impl_->filter && impl_->filter_pool != nullptr) {
      // The filter may block: it runs on the pool with a copy of the request while this
      // connection waits (nothing else reads or writes it meanwhile), then the request resumes
      // here on the I/O thread.
      // The pool thread hands its reference on with the continuation, so the session is only
      // ever released on the I/O thread (its destructor touches the session list).
      auto self = this->shared_from_this();
      auto io = stream_.get_executor();
      asio::post(*impl_->filter_pool, [self, io, copy = req, keep_alive, body_pending]() mutable {
        HttpResponse filtered;
        const bool passed = self->Guarded(
            "filter", [&] { return self->impl_->filter(&copy, &filtered); }, &filtered, copy.path);
        asio::post(io, [self = std::move(self), passed, user = std::move(copy.user),
                        filtered = std::move(filtered), keep_alive, body_pending]() mutable {
          self->request_.user = std::move(user);
          if (!passed) return self->Respond(std::move(filtered), keep_alive);
          self->AfterFilter(keep_alive, body_pending);
        });
      });
      return;
    }
    if (impl_->filter && !Guarded(
                             "filter", [&] { return impl_->filter(&req, &out); }, &out)) {
      return Respond(std::move(out), keep_alive);
    }
    AfterFilter(keep_alive, body_pending);
  }

  // The method check, then the body (if any) and the handler, for a request that passed the
  // filter.
  void AfterFilter(bool keep_alive, bool body_pending) {
    HttpResponse out;
    bool allowed = route_->methods.empty();
    for (const std::string& m : route_->methods) allowed = allowed || m == request_.method;
    if (!allowed) {
      out = HttpResponse();
      out.Error(405, "405: Method Not Allowed");
      out.body.pop_back();  // go-restful writes it without a newline
      return Respond(std::move(out), keep_alive);
    }
    if (!body_pending) return Dispatch(parser_->keep_alive());
    if (auto length = parser_->content_length(); length && *length > route_->max_body_bytes) {
      return RejectRequest(413, "413 Request Entity Too Large");
    }
    parser_->SetBodyLimit(route_->max_body_bytes);
    Tcp().expires_after(ToChrono(impl_->options.read_timeout));
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       if (ec == http::error::body_limit) {
                         return self->RejectRequest(413, "413 Request Entity Too Large");
                       }
                       if (ec) {
                         if (ConnectionGone(ec)) return self->Close();
                         return self->RejectRequest(400, "400 Bad Request");
                       }
                       self->Dispatch(self->parser_->keep_alive());
                     });
  }

  // Runs `fn`; an exception becomes a logged 500 in `out`, and the result is false then.
  // `path` is for the log (the request being served when empty).
  template <class Fn>
  bool Guarded(const char* what, Fn&& fn, HttpResponse* out, const std::string& path = "") {
    const std::string& where = path.empty() ? request_.path : path;
    try {
      return fn();
    } catch (const std::exception& e) {
      KLOG_ERROR(absl::InternalError(e.what()), "HTTP handler failed", "server",
                 impl_->options.name, "stage", what, "path", where);
    } catch (...) {
      KLOG_ERROR(absl::InternalError("unknown exception"), "HTTP handler failed", "server",
                 impl_->options.name, "stage", what, "path", where);
    }
    *out = HttpResponse();
    out->Error(500, "Internal Server Error");
    return false;
  }

  void Dispatch(bool keep_alive) {
    request_.body = std::move(parser_->body);
    HttpResponse out;
    Guarded(
        "handler",
        [&] {
          route_->handler(request_, &out);
          return true;
        },
        &out);
    request_.body.clear();
    Respond(std::move(out), keep_alive);
  }

  void Respond(HttpResponse out, bool keep_alive) {
    if (out.stream) {
      StartStream(std::move(out));
      return;
    }
    if (out.tunnel) {
      StartTunnel(std::move(out.tunnel));
      return;
    }
    const bool head_only = request_.method == "HEAD";
    auto buf = std::make_shared<std::string>(
        BuildHead(out.status, out.headers, out.body.size(), keep_alive));
    if (!head_only) buf->append(out.body);
    serving_ = true;
    Tcp().expires_after(ToChrono(impl_->options.write_timeout));
    asio::async_write(
        stream_, asio::buffer(*buf),
        [self = this->shared_from_this(), buf, keep_alive](beast::error_code ec, size_t) {
          if (ec || !keep_alive) {
            self->Close();
          } else {
            self->Read();
          }
        });
  }

  void StartStream(HttpResponse out) {
    std::shared_ptr<StreamTracker> tracker = impl_->streams;
    auto state = std::make_shared<StreamState>();
    {
      absl::MutexLock l(&tracker->mu);
      if (tracker->active >= impl_->options.max_streams) {
        state.reset();
      } else {
        ++tracker->active;
        std::erase_if(tracker->live, [](const auto& w) { return w.expired(); });
        tracker->live.push_back(state);
      }
    }
    if (!state) {
      std::string body = "too many streaming requests\n";
      auto buf = std::make_shared<std::string>(
          BuildHead(503, {{"X-Content-Type-Options", "nosniff"}}, body.size()) + body);
      Tcp().expires_after(ToChrono(impl_->options.write_timeout));
      asio::async_write(
          stream_, asio::buffer(*buf),
          [self = this->shared_from_this(), buf](beast::error_code, size_t) { self->Close(); });
      return;
    }
    state->head = BuildHead(out.status, out.headers, std::nullopt);
    state->limit = impl_->options.stream_buffer_bytes;
    state->executor = stream_.get_executor();
    state->sink = std::static_pointer_cast<StreamSink>(this->shared_from_this());
    stream_state_ = state;
    try {
      std::thread([state, tracker, fn = std::move(out.stream), name = impl_->options.name,
                   path = request_.path] {
        StreamWriter writer(state);
        try {
          fn(writer);
        } catch (const std::exception& e) {
          KLOG_ERROR(absl::InternalError(e.what()), "HTTP streaming handler failed", "server", name,
                     "path", path);
          writer.Fail(500, "Internal Server Error");
        } catch (...) {
          KLOG_ERROR(absl::InternalError("unknown exception"), "HTTP streaming handler failed",
                     "server", name, "path", path);
          writer.Fail(500, "Internal Server Error");
        }
        writer.Finish();
        absl::MutexLock l(&tracker->mu);
        --tracker->active;
      }).detach();
    } catch (const std::system_error& e) {
      // No thread could be made (resource limits): answer 503 instead of dying.
      KLOG_ERROR(absl::ResourceExhaustedError(e.what()), "Cannot start a streaming worker",
                 "server", impl_->options.name);
      {
        absl::MutexLock l(&tracker->mu);
        --tracker->active;
      }
      stream_state_.reset();
      HttpResponse busy;
      busy.Error(503, "too many streaming requests");
      Respond(std::move(busy), /*keep_alive=*/false);
      return;
    }
    WatchForHangUp();
  }

  // While streaming the client sends nothing; a completed read means it has gone.
  void WatchForHangUp() {
    Tcp().expires_never();
    stream_.async_read_some(asio::buffer(hangup_buf_),
                            [self = this->shared_from_this()](beast::error_code ec, size_t) {
                              if (!ec) {
                                self->WatchForHangUp();  // pipelined bytes: ignored
                                return;
                              }
                              {
                                absl::MutexLock l(&self->stream_state_->mu);
                                self->stream_state_->gone = true;
                                self->stream_state_->cv.SignalAll();
                              }
                              if (!self->writing_) self->Close();
                            });
  }

  // ---- Tunnels (HttpResponse::tunnel) ----------------------------------------------------

  // The handler's resolver runs on a worker thread (counted with the streaming workers, so
  // Stop() waits for it); its answer comes back to the I/O thread, which either sends the
  // resolver's error or opens the tunnel.
  void StartTunnel(std::function<std::optional<TunnelTarget>(HttpResponse*)> resolve) {
    serving_ = true;
    std::shared_ptr<StreamTracker> tracker = impl_->streams;
    {
      absl::MutexLock l(&tracker->mu);
      ++tracker->active;
    }
    auto self = this->shared_from_this();
    auto io = stream_.get_executor();
    const std::string name = impl_->options.name;
    try {
      std::thread([self, io, tracker, name, resolve = std::move(resolve)]() mutable {
        HttpResponse error;
        std::optional<TunnelTarget> target;
        std::optional<tcp::endpoint> endpoint;
        try {
          target = resolve(&error);
          if (target.has_value()) {
            beast::error_code ec;
            asio::ip::address addr = asio::ip::make_address(
                target->host == "localhost" ? "127.0.0.1" : target->host, ec);
            if (ec) {
              error = HttpResponse();
              error.Error(500,
                          absl::StrCat("error dialing backend: cannot resolve ", target->host));
              target.reset();
            } else {
              endpoint.emplace(addr, target->port);
            }
          }
        } catch (const std::exception& e) {
          KLOG_ERROR(absl::InternalError(e.what()), "HTTP tunnel handler failed", "server", name);
          error = HttpResponse();
          error.Error(500, "Internal Server Error");
          target.reset();
        }
        // The continuation takes this thread's reference: the session is released on the I/O
        // thread only.
        asio::post(io, [self = std::move(self), target = std::move(target), endpoint,
                        error = std::move(error)]() mutable {
          if (!target.has_value()) return self->Respond(std::move(error), /*keep_alive=*/false);
          self->OpenTunnel(*endpoint, *target);
        });
        absl::MutexLock l(&tracker->mu);
        --tracker->active;
      }).detach();
    } catch (const std::system_error& e) {
      KLOG_ERROR(absl::ResourceExhaustedError(e.what()), "Cannot start a tunnel worker", "server",
                 impl_->options.name);
      {
        absl::MutexLock l(&tracker->mu);
        --tracker->active;
      }
      HttpResponse busy;
      busy.Error(503, "too many streaming requests");
      Respond(std::move(busy), /*keep_alive=*/false);
    }
  }

  // The client's request head for the backend: its method, the backend's target and Host, the
  // client's other headers but Authorization (the kubelet consumed the credential), then any
  // body it sent and whatever the client sent after the head.
  std::string TunnelHead(const TunnelTarget& target) const {
    std::string head = absl::StrCat(request_.method, " ", target.target,
                                    " HTTP/1.1\r\nHost: ", target.host, ":", target.port, "\r\n");
    for (const auto& [k, v] : request_.headers) {
      if (k == "host" || k == "authorization") continue;
      absl::StrAppend(&head, k, ": ", v, "\r\n");
    }
    head += "\r\n";
    return head;
  }

  void OpenTunnel(const tcp::endpoint& endpoint, const TunnelTarget& target) {
    tunnel_ = std::make_unique<Tunnel>(stream_.get_executor());
    auto out = std::make_shared<std::string>(TunnelHead(target));
    out->append(request_.body);
    const auto pending = buffer_.data();
    out->append(static_cast<const char*>(pending.data()), pending.size());
    buffer_.consume(buffer_.size());
    tunnel_->backend.async_connect(
        endpoint, [self = this->shared_from_this(), out](beast::error_code ec) {
          if (ec) {
            KLOG_ERROR(absl::UnavailableError(ec.message()), "Error while proxying request",
                       "server", self->impl_->options.name, "path", self->request_.path);
            HttpResponse err;
            err.Error(500, absl::StrCat("error dialing backend: ", ec.message()));
            self->tunnel_.reset();
            return self->Respond(std::move(err), /*keep_alive=*/false);
          }
          beast::error_code ignored;
          self->tunnel_->backend.set_option(tcp::no_delay(true), ignored);
          asio::async_write(self->tunnel_->backend, asio::buffer(*out),
                            [self, out](beast::error_code ec, size_t) {
                              if (ec) return self->CloseTunnel();
                              self->PumpUp();
                              self->PumpDown();
                            });
        });
  }

  // Client -> backend; the client's end of input becomes the backend's.
  void PumpUp() {
    Tcp().expires_after(ToChrono(impl_->options.tunnel_idle_timeout));
    stream_.async_read_some(asio::buffer(tunnel_->up), [self = this->shared_from_this()](
                                                           beast::error_code ec, size_t n) {
      if (ec) {
        if (ec == asio::error::eof || ec == ssl::error::stream_truncated) {
          beast::error_code ignored;
          self->tunnel_->backend.shutdown(tcp::socket::shutdown_send, ignored);
          return;  // the backend's answer still flows down
        }
        return self->CloseTunnel();
      }
      asio::async_write(self->tunnel_->backend, asio::buffer(self->tunnel_->up.data(), n),
                        [self](beast::error_code ec, size_t) {
                          if (ec) return self->CloseTunnel();
                          self->PumpUp();
                        });
    });
  }

  // Backend -> client; the backend's end ends the tunnel.
  void PumpDown() {
    tunnel_->backend.async_read_some(
        asio::buffer(tunnel_->down),
        [self = this->shared_from_this()](beast::error_code ec, size_t n) {
          if (ec) return self->CloseTunnel();
          self->Tcp().expires_after(ToChrono(self->impl_->options.tunnel_idle_timeout));
          asio::async_write(self->stream_, asio::buffer(self->tunnel_->down.data(), n),
                            [self](beast::error_code ec, size_t) {
                              if (ec) return self->CloseTunnel();
                              self->PumpDown();
                            });
        });
  }

  void CloseTunnel() {
    if (tunnel_ == nullptr || tunnel_->closed) return;
    tunnel_->closed = true;
    beast::error_code ignored;
    tunnel_->backend.shutdown(tcp::socket::shutdown_both, ignored);
    tunnel_->backend.close(ignored);
    Close();
  }

  void EndStream() {
    {
      absl::MutexLock l(&stream_state_->mu);
      stream_state_->gone = true;
      stream_state_->cv.SignalAll();
    }
    Close();
  }

  void Close() {
    beast::error_code ignored;
    Tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
    Tcp().socket().close(ignored);
  }

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

}  // namespace

absl::Status HttpServer::Impl::SetUpTls() {
  const TlsServerOptions& t = *options.tls;
  try {
    ssl_ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(options.name, ": TLS context: ", e.what()));
  }
  SSL_CTX* ctx = ssl_ctx->native_handle();
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_set_min_proto_version(ctx, t.min_version != 0 ? t.min_version : TLS1_2_VERSION) !=
      1) {
    return absl::InvalidArgumentError(
        absl::StrCat(options.name, ": unsupported minimum TLS version: ", OpenSslError()));
  }
  if (!t.cipher_list.empty() && SSL_CTX_set_cipher_list(ctx, t.cipher_list.c_str()) != 1) {
    return absl::InvalidArgumentError(absl::StrCat(options.name, ": invalid cipher suites \"",
                                                   t.cipher_list, "\": ", OpenSslError()));
  }
  if (t.certificate) {
    SSL_CTX_set_cert_cb(ctx, &Impl::DynamicCertificate, this);
  } else if (SSL_CTX_use_certificate_chain_file(ctx, t.cert_file.c_str()) != 1) {
    return absl::InvalidArgumentError(absl::StrCat(options.name, ": failed to load certificate \"",
                                                   t.cert_file, "\": ", OpenSslError()));
  }
  if (t.certificate) {
    // Chosen per handshake.
  } else if (SSL_CTX_use_PrivateKey_file(ctx, t.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return absl::InvalidArgumentError(absl::StrCat(options.name, ": failed to load private key \"",
                                                   t.key_file, "\": ", OpenSslError()));
  }
  if (!t.certificate && SSL_CTX_check_private_key(ctx) != 1) {
    return absl::InvalidArgumentError(absl::StrCat(options.name, ": private key \"", t.key_file,
                                                   "\" does not match certificate \"", t.cert_file,
                                                   "\""));
  }
  static const unsigned char kSessionContext[] = "kubelet";
  SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof(kSessionContext) - 1);
  if (!t.client_ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, t.client_ca_file.c_str(), nullptr) != 1) {
      return absl::InvalidArgumentError(absl::StrCat(options.name, ": failed to load client CA \"",
                                                     t.client_ca_file, "\": ", OpenSslError()));
    }
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(t.client_ca_file.c_str());
    if (names != nullptr) SSL_CTX_set_client_CA_list(ctx, names);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, AcceptAnyCertificate);
  }
  return absl::OkStatus();
}

int HttpServer::Impl::DynamicCertificate(SSL* ssl, void* arg) {
  auto* self = static_cast<Impl*>(arg);
  std::optional<TlsCertificate> current = self->options.tls->certificate();
  if (!current.has_value() || current->cert_pem.empty() || current->key_pem.empty()) {
    KLOG_V(4, "TLS handshake refused: no serving certificate available for the kubelet", "server",
           self->options.name);
    return 0;
  }
  if (self->failed_generation == current->generation) return 0;
  if (!self->parsed_cert || self->parsed_cert->generation != current->generation) {
    ParsedCertificate p;
    p.generation = current->generation;
    ossl::BioPtr bio(
        BIO_new_mem_buf(current->cert_pem.data(), static_cast<int>(current->cert_pem.size())));
    p.leaf.reset(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    while (X509* extra = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
      p.chain.emplace_back(extra);
    }
    ERR_clear_error();  // the end of the PEM text
    ossl::BioPtr key_bio(
        BIO_new_mem_buf(current->key_pem.data(), static_cast<int>(current->key_pem.size())));
    p.key.reset(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
    if (!p.leaf || !p.key || X509_check_private_key(p.leaf.get(), p.key.get()) != 1) {
      KLOG_ERROR(absl::InvalidArgumentError(ossl::LastError()),
                 "Serving certificate does not load; TLS handshakes fail until it changes",
                 "server", self->options.name);
      self->failed_generation = current->generation;
      return 0;
    }
    self->parsed_cert = std::move(p);
  }
  const ParsedCertificate& p = *self->parsed_cert;
  if (SSL_use_certificate(ssl, p.leaf.get()) != 1 || SSL_use_PrivateKey(ssl, p.key.get()) != 1) {
    return 0;
  }
  SSL_clear_chain_certs(ssl);
  for (const ossl::X509Ptr& c : p.chain) {
    if (SSL_add1_chain_cert(ssl, c.get()) != 1) return 0;
  }
  return 1;
}

void HttpServer::Impl::Accept() {
  acceptor->async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
    if (ec) {
      // Out of descriptors or memory: back off briefly instead of spinning (as Go's Serve does).
      KLOG_V(2, "Accept failed; retrying", "server", options.name, "err", ec.message());
      accept_retry.emplace(*ioc, std::chrono::milliseconds(50));
      accept_retry->async_wait([this](beast::error_code wait_ec) {
        if (!wait_ec && acceptor->is_open()) Accept();
      });
      return;
    }
    {
      // Small writes (stream frames, probe answers) go out at once, as Go's net package sets
      // for every TCP connection; Nagle's algorithm would hold them for the peer's delayed ACK.
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
    }
    if (sessions.size() >= static_cast<size_t>(options.max_connections)) {
      // At the cap, the oldest connection still waiting for a request makes room, so clients
      // that open connections and never finish a request cannot lock out /healthz or anyone.
      Connection* victim = nullptr;
      for (Connection* c : sessions) {
        if (c->Evictable()) {
          victim = c;
          break;
        }
      }
      if (victim == nullptr) {
        beast::error_code ignored;
        socket.close(ignored);  // every connection is busy serving: shed the new one
        Accept();
        return;
      }
      victim->Evict();
    }
    if (ssl_ctx) {
      std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(std::move(socket), this)
          ->Start();
    } else {
      std::make_shared<Session<beast::tcp_stream>>(std::move(socket), this)->Start();
    }
    Accept();
  });
}

HttpServer::HttpServer(HttpServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Handle(std::string pattern, HttpHandler handler, std::vector<std::string> methods,
                        std::optional<size_t> max_body_bytes) {
  size_t limit = max_body_bytes.value_or(impl_->options.max_body_bytes);
  impl_->max_route_body = std::max(impl_->max_route_body, limit);
  impl_->routes.push_back({std::move(pattern), std::move(handler), std::move(methods), limit});
}

void HttpServer::SetFilter(HttpFilter filter) { impl_->filter = std::move(filter); }

absl::Status HttpServer::Start() {
  const HttpServerOptions& o = impl_->options;
  std::string where = absl::StrCat(o.address, ":", o.port);
  if (o.tls) {
    if (absl::Status st = impl_->SetUpTls(); !st.ok()) return st;
  }
  beast::error_code ec;
  asio::ip::address addr = asio::ip::make_address(o.address.empty() ? "0.0.0.0" : o.address, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat(o.name, ": invalid bind address \"", o.address, "\""));
  }
  tcp::endpoint ep(addr, static_cast<uint16_t>(o.port));
  tcp::acceptor acc(*impl_->ioc);
  acc.open(ep.protocol(), ec);
  if (!ec) acc.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acc.bind(ep, ec);
  if (!ec) acc.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat(o.name, ": listen tcp ", where, ": ", ec.message()));
  }
  impl_->bound_port = acc.local_endpoint().port();
  impl_->acceptor.emplace(std::move(acc));
  if (impl_->filter && o.filter_threads > 0) {
    impl_->filter_pool = std::make_unique<asio::thread_pool>(o.filter_threads);
  }
  impl_->Accept();
  impl_->running = true;
  impl_->thread = std::thread([this] {
    // A handler that throws unwinds out of run(); the loop logs it and serves on. run() returns
    // normally only once Stop() stopped the context.
    for (;;) {
      try {
        impl_->ioc->run();
        return;
      } catch (const std::exception& e) {
        KLOG_ERROR(absl::InternalError(e.what()), "HTTP server I/O handler failed; continuing",
                   "server", impl_->options.name);
      } catch (...) {
        KLOG_ERROR(absl::InternalError("unknown exception"),
                   "HTTP server I/O handler failed; continuing", "server", impl_->options.name);
      }
    }
  });
  return absl::OkStatus();
}

void HttpServer::Stop() {
  if (!impl_->running.exchange(false)) return;
  asio::post(*impl_->ioc, [this] {
    beast::error_code ignored;
    impl_->acceptor->close(ignored);
    impl_->ioc->stop();
  });
  if (impl_->thread.joinable()) impl_->thread.join();
  // Filters not started yet are dropped, those running finish and post to the stopped context;
  // their sessions go with the pool and the context, on this thread (the I/O thread is gone).
  if (impl_->filter_pool != nullptr) {
    impl_->filter_pool->stop();
    impl_->filter_pool->join();
    impl_->filter_pool.reset();
  }
  // No I/O runs any more: release the streaming workers, then give them a moment to return.
  StreamTracker& t = *impl_->streams;
  absl::MutexLock l(&t.mu);
  for (const auto& w : t.live) {
    if (auto s = w.lock()) {
      absl::MutexLock sl(&s->mu);
      s->closed = true;
      s->cv.SignalAll();
    }
  }
  t.live.clear();
  auto idle = [&t]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(t.mu) { return t.active == 0; };
  if (!t.mu.AwaitWithTimeout(absl::Condition(&idle), impl_->options.stream_stop_timeout)) {
    KLOG_WARNING("Streaming responses still running at shutdown", "server", impl_->options.name,
                 "count", t.active);
  }
}

int HttpServer::port() const { return impl_->bound_port.load(); }

}  // namespace kubelet::server
