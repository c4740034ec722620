// The Boost.Beast/Asio + OpenSSL implementation of RestClient (rest_client.h).
//
// Design: a call borrows a connection from a small pool of idle keep-alive connections (or opens
// one) and waits on the caller's thread, one step at a time, with the call's deadline: connect,
// handshake, then the exchange (the request's write and its answer's reads, chained on the I/O
// thread until the answer is complete, so a call waits for one wake-up; a watch whose frames go
// to the caller's callback waits for each read). The steps run on the process's I/O threads: a few
// single-threaded io_contexts (one per core, at most 4, each thread started with its first
// connection) that every connection of every client shares, a connection staying on one of them
// for its life. A step is started on its connection's I/O thread, so the socket, the TLS stream
// and the parser are touched by one thread at a time; its completion wakes the caller. When the
// deadline passes or the call is cancelled (from another thread), the caller has the socket
// closed on the I/O thread, waits for that close and for the step's completion (which the close
// makes come at once), and the connection is dropped, never pooled. A connection costs its
// socket only: no reactor, eventfd or timer of its own. HTTP/1.1 only: concurrent calls use
// separate connections.
//
// A connection that comes back from the pool is checked first (poll() without waiting: a server
// that closed it, or sent anything unasked, makes it readable) and dropped when it is not idle and
// silent or has been idle longer than client-go's 90 s. A GET whose reused connection fails
// before any byte of an answer came back (the server closed it as the request went out) is sent
// once more on a new connection, as Go's transport does for idempotent requests.
//
// TLS: one OpenSSL context per set of trust anchors and client certificate; the files are read
// again for every new connection (the dynamic source is asked on every call), so a rotated
// certificate reaches new connections. Connections of one context resume its latest session.
// Names other than IP literals are resolved on a detached thread (as libc's getaddrinfo cannot
// be interrupted), waited for in short steps so that a cancellation is seen.
//
// Proxy (proxy.h, chosen once at creation): every connection of the client goes to the proxy. For
// an https API server the new TCP connection first asks for a tunnel (CONNECT host:port) and the
// TLS handshake with the API server runs inside it; for an http one the requests carry the
// absolute URL. The tunnel is just the connection: pooling, retries and watches do not see it.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <poll.h>
#include <sys/socket.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <cstring>
#include <exception>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "apiclient/proxy.h"
#include "apiclient/rate_limiter.h"
#include "apiclient/resolve.h"
#include "apiclient/rest_client.h"
#include "common/cancellation.h"
#include "common/guarded.h"
#include "common/log.h"
#include "common/openssl.h"
#include "common/strings.h"
#include "metrics/metrics.h"

namespace kubelet::apiclient {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

// Bounds of one response header (status line included), and of the read buffer: body bytes are
// consumed as they are parsed, so only a header could need more than one read's worth.
constexpr size_t kMaxHeaderBytes = 256 << 10;
constexpr size_t kMaxBufferBytes = kMaxHeaderBytes + (64 << 10);
// An idle connection older than this is closed rather than reused (client-go's IdleConnTimeout).
constexpr absl::Duration kMaxIdle = absl::Seconds(90);

// client-go's metrics as the kubelet registers them (component-base restclient adapters).
struct ClientMetrics {
  prometheus::Family<prometheus::Counter>& requests;
  prometheus::Family<prometheus::Histogram>& latency;
};

ClientMetrics& Metrics() {
  static ClientMetrics* m = [] {
    prometheus::Registry& r = metrics::KubeletRegistry();
    return new ClientMetrics{
        prometheus::BuildCounter()
            .Name("rest_client_requests_total")
            .Help("[ALPHA] Number of HTTP requests, partitioned by status code, method, and host.")
            .Register(r),
        prometheus::BuildHistogram()
            .Name("rest_client_request_duration_seconds")
            .Help("[ALPHA] Request latency in seconds. Broken down by verb, and host.")
            .Register(r)};
  }();
  return *m;
}

const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const prometheus::Histogram::BucketBoundaries b = {0.005, 0.025, 0.1, 0.25, 0.5,  1.0,
                                                            2.0,   4.0,   8.0, 15.0, 30.0, 60.0};
  return b;
}

absl::StatusOr<std::string> ReadFile(const std::string& path, std::string_view field) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    return absl::NotFoundError(absl::StrCat(AV(field), ": cannot read \"", AV(path), "\""));
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The pieces of "scheme://host[:port][/prefix]".
struct ParsedHost {
  std::string scheme;
  std::string authority;  // as written: Go's URL.Host, the metrics' host label, the Host header
  std::string host;       // without port and without the brackets of an IPv6 literal
  std::string port;
  std::string prefix;  // "" or "/..." without a trailing slash
};

absl::StatusOr<ParsedHost> ParseHost(std::string_view url) {
  ParsedHost p;
  size_t sep = url.find("://");
  if (sep == std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("host: \"", AV(url), "\" is not a URL"));
  }
  p.scheme = absl::AsciiStrToLower(AV(url.substr(0, sep)));
  if (p.scheme != "https" && p.scheme != "http") {
    return absl::InvalidArgumentError(
        absl::StrCat("host: \"", AV(url), "\": scheme must be http or https"));
  }
  std::string_view rest = url.substr(sep + 3);
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  p.authority = std::string(authority);
  if (slash != std::string_view::npos) {
    p.prefix = std::string(rest.substr(slash));
    while (!p.prefix.empty() && p.prefix.back() == '/') p.prefix.pop_back();
  }
  size_t colon = authority.rfind(':');
  size_t bracket = authority.rfind(']');
  if (colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket)) {
    p.host = std::string(authority.substr(0, colon));
    p.port = std::string(authority.substr(colon + 1));
  } else {
    p.host = std::string(authority);
    p.port = p.scheme == "https" ? "443" : "80";
  }
  if (p.host.size() >= 2 && p.host.front() == '[' && p.host.back() == ']') {
    p.host = p.host.substr(1, p.host.size() - 2);
  }
  if (p.host.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("host: \"", AV(url), "\" has no host"));
  }
  int port = 0;
  for (char c : p.port) {
    if (c < '0' || c > '9' || port > 65535) {
      port = -1;
      break;
    }
    port = port * 10 + (c - '0');
  }
  if (port <= 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("host: \"", AV(url), "\": bad port"));
  }
  return p;
}

std::string LowerFirst(std::string s) {
  if (!s.empty()) s[0] = absl::ascii_tolower(static_cast<unsigned char>(s[0]));
  return s;
}

// ---- TLS ----------------------------------------------------------------------------------------

// An OpenSSL client context for one set of trust anchors and client certificate, and the latest
// resumable session of its connections.
class TlsContext {
 public:
  explicit TlsContext(std::string material)
      : ctx_(ssl::context::tls_client), material_(std::move(material)) {}
  ~TlsContext() {
    if (session_ != nullptr) SSL_SESSION_free(session_);
  }
  ssl::context& ctx() { return ctx_; }
  const std::string& material() const { return material_; }

  // Offers the latest session on `ssl` (a new connection).
  void Resume(SSL* ssl) {
    absl::MutexLock lock(&mu_);
    if (session_ != nullptr) SSL_set_session(ssl, session_);
  }
  // Keeps `ssl`'s session for the next connections when it can be resumed.
  void Remember(SSL* ssl) {
    SSL_SESSION* s = SSL_get1_session(ssl);
    if (s == nullptr) return;
    if (SSL_SESSION_is_resumable(s) != 1) {
      SSL_SESSION_free(s);
      return;
    }
    absl::MutexLock lock(&mu_);
    if (session_ != nullptr) SSL_SESSION_free(session_);
    session_ = s;
  }

 private:
  ssl::context ctx_;
  const std::string material_;
  absl::Mutex mu_;
  SSL_SESSION* session_ ABSL_GUARDED_BY(mu_) = nullptr;
};

// Builds the context for PEM trust anchors (empty: the system's bundle), an optional client
// certificate chain and key.
absl::StatusOr<std::shared_ptr<TlsContext>> NewTlsContext(std::string material, bool insecure,
                                                          std::string_view ca_pem,
                                                          std::string_view cert_pem,
                                                          std::string_view key_pem) {
  auto t = std::make_shared<TlsContext>(std::move(material));
  SSL_CTX* ctx = t->ctx().native_handle();
  ERR_clear_error();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  if (insecure) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  } else {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    if (ca_pem.empty()) {
      if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
        return absl::InternalError(
            absl::StrCat("tls: system trust anchors: ", AV(ossl::LastError())));
      }
    } else {
      ossl::BioPtr bio(BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size())));
      X509_STORE* store = SSL_CTX_get_cert_store(ctx);
      int added = 0;
      while (ossl::X509Ptr x{PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)}) {
        X509_STORE_add_cert(store, x.get());
        ++added;
      }
      ERR_clear_error();  // the end of the PEM text
      if (added == 0) {
        return absl::InvalidArgumentError("certificate authority: no PEM certificate");
      }
    }
  }
  if (!cert_pem.empty()) {
    ossl::BioPtr bio(BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())));
    ossl::X509Ptr leaf(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (leaf == nullptr || SSL_CTX_use_certificate(ctx, leaf.get()) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("client certificate: ", AV(ossl::LastError())));
    }
    while (X509* chain = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
      SSL_CTX_add0_chain_cert(ctx, chain);  // takes ownership
    }
    ERR_clear_error();
    ossl::BioPtr kbio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
    ossl::PkeyPtr key(PEM_read_bio_PrivateKey(kbio.get(), nullptr, nullptr, nullptr));
    if (key == nullptr || SSL_CTX_use_PrivateKey(ctx, key.get()) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
      return absl::InvalidArgumentError(absl::StrCat("client key: ", AV(ossl::LastError())));
    }
  }
  return t;
}

// ---- name resolution -------------------------------------------------------------------------

// ---- HTTP -------------------------------------------------------------------------------------

// A response parser that records the status and header fields into a Response and hands body
// bytes (chunked or not) to the caller as they are parsed.
class ResponseParser : public http::basic_parser<false> {
 public:
  explicit ResponseParser(Response* response) : response_(response) {
    header_limit(static_cast<std::uint32_t>(kMaxHeaderBytes));
    // Bounded by the caller (a watch is unbounded). Not boost::none: Boost 1.74 compares a
    // Content-Length with the empty optional as larger than it.
    body_limit(std::numeric_limits<std::uint64_t>::max());
  }
  // Body bytes parsed since the last call.
  std::string TakeBody() { return std::exchange(body_, std::string()); }

 private:
  void on_request_impl(http::verb, beast::string_view, beast::string_view, int,
                       beast::error_code& ec) override {
    ec = http::error::bad_method;  // never called for a response parser
  }
  void on_response_impl(int code, beast::string_view, int, beast::error_code&) override {
    response_->code = code;
    response_->headers.clear();
  }
  void on_field_impl(http::field, beast::string_view name, beast::string_view value,
                     beast::error_code&) override {
    if (is_header_done()) return;  // trailer fields
    response_->headers.emplace(
        absl::AsciiStrToLower(absl::string_view(name.data(), name.size())),
        std::string(absl::StripAsciiWhitespace(absl::string_view(value.data(), value.size()))));
  }
  void on_header_impl(beast::error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>&, beast::error_code&) override {}
  size_t on_body_impl(beast::string_view data, beast::error_code&) override {
    body_.append(data.data(), data.size());
    return data.size();
  }
  void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code&) override {}
  size_t on_chunk_body_impl(std::uint64_t, beast::string_view data, beast::error_code&) override {
    body_.append(data.data(), data.size());
    return data.size();
  }
  void on_finish_impl(beast::error_code&) override {}

  Response* response_;
  std::string body_;
};

// Incremental gzip decoding of a response body.
class Gunzip {
 public:
  Gunzip() {
    ok_ = inflateInit2(&z_, 15 + 32) == Z_OK;  // gzip or zlib header
  }
  ~Gunzip() {
    if (ok_) inflateEnd(&z_);
  }
  Gunzip(const Gunzip&) = delete;
  Gunzip& operator=(const Gunzip&) = delete;

  // Appends the decoded `in` to `out`; false on corrupt data or when `out` would pass `max`.
  bool Decode(std::string_view in, std::string* out, size_t max, bool* too_large) {
    if (!ok_) return false;
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z_.avail_in = static_cast<uInt>(in.size());
    char buf[16384];
    do {
      z_.next_out = reinterpret_cast<Bytef*>(buf);
      z_.avail_out = sizeof(buf);
      int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) return false;
      size_t n = sizeof(buf) - z_.avail_out;
      if (out->size() + n > max) {
        *too_large = true;
        return false;
      }
      out->append(buf, n);
      if (rc == Z_STREAM_END) ended_ = true;
      if (rc == Z_BUF_ERROR && n == 0) break;
    } while ((z_.avail_in > 0 || z_.avail_out == 0) && !ended_);
    return true;
  }
  bool ended() const { return ended_; }

 private:
  z_stream z_{};
  bool ok_ = false;
  bool ended_ = false;
};

// The process's I/O threads: single-threaded io_contexts shared by every connection of every
// client, handed out round-robin; each one's thread starts with the first connection it gets.
// Made once and never destroyed (connections may outlive any owner but the process).
class IoThreads {
 public:
  static IoThreads& Get() {
    static IoThreads* threads = new IoThreads();
    return *threads;
  }

  net::io_context& Next() {
    Slot& slot = *slots_[next_.fetch_add(1, std::memory_order_relaxed) % slots_.size()];
    std::call_once(slot.started, [&slot] {
      slot.thread = GuardedThread("api-io", [&slot] {
        // Handlers that throw are logged; the thread goes on with the next (run() returns only
        // on a throw: the work guard keeps it busy).
        for (;;) RunGuarded("API client I/O", [&slot] { slot.ioc.run(); });
      });
    });
    return slot.ioc;
  }

 private:
  struct Slot {
    net::io_context ioc{1};
    net::executor_work_guard<net::io_context::executor_type> work = net::make_work_guard(ioc);
    std::once_flag started;
    std::thread thread;
  };

  IoThreads() {
    const unsigned n = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
    for (unsigned i = 0; i < n; ++i) slots_.push_back(std::make_unique<Slot>());
  }

  std::vector<std::unique_ptr<Slot>> slots_;
  std::atomic<unsigned> next_{0};
};

// One call's wait for its steps: whether the current step completed, whether the call was
// cancelled (OnCancel, from any thread).
struct CallState {
  absl::Mutex mu;
  bool done ABSL_GUARDED_BY(mu) = false;
  bool cancelled ABSL_GUARDED_BY(mu) = false;

  void Finish() {
    absl::MutexLock lock(&mu);
    done = true;
  }
  void Cancel() {
    absl::MutexLock lock(&mu);
    cancelled = true;
  }
  bool Cancelled() {
    absl::MutexLock lock(&mu);
    return cancelled;
  }
};

// One connection to the API server, on one of the I/O threads' io_contexts.
struct Connection {
  Connection() : ioc(&IoThreads::Get().Next()), buffer(kMaxBufferBytes) {}
  // The socket is closed on the I/O thread (the pending step, if any, completes aborted) or
  // after its last step, never while a step runs.
  ~Connection() { Close(); }
  void Close() {
    boost::system::error_code ec;
    if (secure) secure->next_layer().close(ec);
    if (plain) plain->close(ec);
  }
  net::io_context* ioc;
  std::shared_ptr<TlsContext> tls;  // null for http://
  std::optional<tcp::socket> plain;
  std::optional<beast::ssl_stream<tcp::socket>> secure;
  beast::flat_buffer buffer;
  uint64_t cert_generation = 0;
  absl::Time idle_since;
  tcp::socket& socket() { return secure ? secure->next_layer() : *plain; }

  // Still open, with nothing unread, and not idle too long: fit to carry a new request.
  bool Reusable(absl::Time now) {
    if (now - idle_since > kMaxIdle || buffer.size() != 0) return false;
    if (secure && SSL_pending(secure->native_handle()) > 0) return false;
    pollfd p{socket().native_handle(), POLLIN, 0};
    return ::poll(&p, 1, 0) == 0;
  }
};

// How a transfer on one connection ended.
struct Attempt {
  absl::StatusOr<Response> result;
  bool keep = false;         // the connection can carry the next request
  bool retry = false;        // failed before any answer came: another connection may do
  bool handed_over = false;  // a watch answered 200 went on to the I/O thread (Handover)
};

// Outcome of one step.
enum class Wait { kDone, kCancelled, kTimedOut };

// The frames of a watch answered 200: complete lines are decoded and delivered as they come.
class WatchStream {
 public:
  WatchStream(const WatchEventFn* on_event, size_t max_frame)
      : on_event_(on_event), max_frame_(max_frame) {}
  // Appends `data` and delivers the complete lines (and the last one at the end); false when a
  // frame is bad or too large (error()) or on_event asked to stop (stopped()).
  bool Feed(std::string_view data, bool at_end) {
    frame_.append(data);
    size_t start = 0;
    while (true) {
      size_t nl = frame_.find('\n', start);
      std::string_view line;
      if (nl == std::string::npos) {
        if (!at_end) break;
        line = std::string_view(frame_).substr(start);
        start = frame_.size();
      } else {
        line = std::string_view(frame_).substr(start, nl - start);
        start = nl + 1;
      }
      line = SV(absl::StripAsciiWhitespace(AV(line)));
      if (!line.empty()) {
        absl::StatusOr<WatchEvent> ev = DecodeWatchFrame(line);
        if (!ev.ok()) {
          error_ = ev.status();
          return false;
        }
        if (!(*on_event_)(*std::move(ev))) {
          stopped_ = true;
          return false;
        }
      }
      if (nl == std::string::npos) break;
    }
    frame_.erase(0, start);
    if (frame_.size() > max_frame_) {
      error_ = absl::ResourceExhaustedError(
          absl::StrCat("watch frame larger than ", max_frame_, " bytes"));
      return false;
    }
    return true;
  }
  bool stopped() const { return stopped_; }
  const absl::Status& error() const { return error_; }

 private:
  const WatchEventFn* on_event_;
  const size_t max_frame_;
  std::string frame_;  // undelivered bytes
  absl::Status error_;
  bool stopped_ = false;
};

// An answer being read: the parser, and where its body goes (a unary answer's body, gunzipped
// when it came compressed, or a watch's frames). Stays at one address (the parser points into
// it).
struct Answer {
  Answer(const WatchEventFn* on_event, size_t max_frame)
      : parser(std::in_place, &response),
        watch(on_event, max_frame),
        is_watch(on_event != nullptr) {}
  Answer(const Answer&) = delete;
  Answer& operator=(const Answer&) = delete;

  Response response;
  std::optional<ResponseParser> parser;
  WatchStream watch;
  std::optional<Gunzip> gunzip;
  const bool is_watch;
  bool header_seen = false;
  bool watching = false;  // a watch answered 200: frames go to on_event
};

// What Absorb needs of its client.
struct AnswerLimits {
  size_t max_body_bytes = 0;
  std::string base_url;  // for error messages
};

absl::Status AnswerUnavailable(const AnswerLimits& limits, std::string_view detail) {
  return absl::UnavailableError(absl::StrCat(AV(limits.base_url), ": ", AV(detail)));
}

absl::Status BodyTooLarge(const AnswerLimits& limits) {
  return absl::ResourceExhaustedError(
      absl::StrCat("response body larger than ", limits.max_body_bytes, " bytes"));
}

// Takes what one read brought (`w`, `ec`, and what the parser has) into `st`: the attempt's end
// once the answer is complete or failed, nullopt while more is to be read. A watch's frames
// are delivered from here, on the thread that calls it.
std::optional<Attempt> Absorb(Answer& st, Connection& c, Wait w, const beast::error_code& ec,
                              const AnswerLimits& limits) {
  Attempt a;
  auto timed_out = [&](std::string_view phase) {
    return absl::DeadlineExceededError(
        absl::StrCat("request timed out: ", AV(limits.base_url), ": ", AV(phase)));
  };
  if (w == Wait::kCancelled) {
    a.result = absl::CancelledError("request cancelled");
    return a;
  }
  if (w == Wait::kDone && !ec && st.parser->is_header_done() && !st.header_seen) {
    if (st.response.code >= 100 && st.response.code < 200 && st.response.code != 101) {
      // An interim answer: the real one follows.
      st.parser.emplace(&st.response);
      return std::nullopt;
    }
    st.header_seen = true;
    st.watching = st.is_watch && st.response.code == 200;
    if (!st.is_watch) {
      const std::string encoding = absl::AsciiStrToLower(st.response.Header("content-encoding"));
      if (encoding == "gzip" || encoding == "x-gzip") st.gunzip.emplace();
    }
  }
  if (std::string data = st.parser->TakeBody(); !data.empty()) {
    if (st.watching) {
      if (!st.watch.Feed(data, /*at_end=*/false)) {
        if (st.watch.stopped()) {
          a.result = std::move(st.response);
        } else {
          a.result = st.watch.error();
        }
        return a;
      }
    } else if (st.gunzip) {
      bool too_large = false;
      if (!st.gunzip->Decode(data, &st.response.body, limits.max_body_bytes, &too_large)) {
        a.result =
            too_large ? BodyTooLarge(limits) : AnswerUnavailable(limits, "corrupt gzip body");
        return a;
      }
    } else {
      if (st.response.body.size() + data.size() > limits.max_body_bytes) {
        a.result = BodyTooLarge(limits);
        return a;
      }
      st.response.body.append(data);
    }
  }
  if (w == Wait::kTimedOut) {
    // The stream was cut by the request's timeout: the watch ended.
    if (st.watching) {
      a.result = std::move(st.response);
    } else {
      a.result = timed_out(st.header_seen ? "reading the body" : "awaiting the answer");
    }
    return a;
  }
  if (ec) {
    if (st.watching) {
      // The stream was cut (the connection dropped or reset): the watch ended.
      KLOG_V(4, "Watch stream ended", "reason", ec.message());
      a.result = std::move(st.response);
      return a;
    }
    a.retry = !st.parser->got_some();
    a.result = AnswerUnavailable(
        limits, absl::StrCat(a.retry ? "awaiting the answer: " : "reading the answer: ",
                             LowerFirst(ec.message())));
    return a;
  }
  if (!st.parser->is_done()) return std::nullopt;
  if (st.watching) {
    if (!st.watch.Feed("", /*at_end=*/true) && !st.watch.stopped()) {
      a.result = st.watch.error();
      return a;
    }
  } else if (st.gunzip && !st.gunzip->ended()) {
    a.result = AnswerUnavailable(limits, "truncated gzip body");
    return a;
  }
  a.keep = st.parser->keep_alive() && c.buffer.size() == 0;
  a.result = std::move(st.response);
  return a;
}

// A watch answered 200, handed over by the caller's thread (StartWatch): what it was read with.
struct Handover {
  std::unique_ptr<Connection> conn;
  std::unique_ptr<Answer> answer;
  SteadyClock::time_point deadline;
};

// Client-go's request metrics and the client's own accounting for one finished request.
void RecordRequest(const std::string& host, const Request& request,
                   const absl::StatusOr<Response>& result, bool watch, double seconds,
                   const std::function<void(const Request&, int)>& on_request) {
  ClientMetrics& m = Metrics();
  // As client-go: a watch counts as a request, but its (stream) duration is not a latency.
  if (!watch) {
    m.latency.Add({{"host", host}, {"verb", request.method}}, LatencyBuckets()).Observe(seconds);
  }
  m.requests
      .Add({{"code", result.ok() ? std::to_string(result->code) : std::string("<error>")},
            {"host", host},
            {"method", request.method}})
      .Increment();
  if (on_request) on_request(request, result.ok() ? result->code : 0);
}

// The rest of a watch answered 200, read on its connection's I/O thread: each read's frames go
// to on_event there; the end (the server's, the request's timeout, a bad frame, on_event's
// false) calls on_end there. Stop() closes the socket there and waits for the end.
class Streaming : public std::enable_shared_from_this<Streaming> {
 public:
  Streaming(WatchEventFn on_event, WatchEndFn on_end)
      : on_event(std::move(on_event)), on_end_(std::move(on_end)) {}

  // The Answer's WatchStream delivers to it: it stays at this address.
  const WatchEventFn on_event;

  void Begin(Handover h, AnswerLimits limits, Request request, std::string host,
             std::function<void(const Request&, int)> on_request) {
    conn_ = std::move(h.conn);
    answer_ = std::move(h.answer);
    limits_ = std::move(limits);
    request_ = std::move(request);
    host_ = std::move(host);
    on_request_ = std::move(on_request);
    timer_.emplace(*conn_->ioc);
    net::post(*conn_->ioc, [self = shared_from_this(), deadline = h.deadline] {
      if (deadline != SteadyClock::time_point::max()) {
        self->timer_->expires_at(deadline);
        self->timer_->async_wait([self](const beast::error_code& ec) {
          if (ec) return;  // cancelled: the stream ended first
          self->timed_out_ = true;
          self->conn_->Close();
        });
      }
      self->ReadNext();
    });
  }

  // The watch ended before it was handed over: on_end on the caller's thread.
  void EndNow(absl::StatusOr<Response> result) {
    RunGuarded("watch end", [&] { on_end_(std::move(result)); });
  }

  void Stop() {
    {
      absl::MutexLock lock(&mu_);
      if (finished_) return;
      stopping_ = true;
    }
    net::post(*conn_->ioc, [self = shared_from_this()] {
      self->conn_->Close();
      self->timer_->cancel();
    });
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&finished_));
  }

 private:
  // On the I/O thread.
  void ReadNext() {
    auto done = [self = shared_from_this()](const beast::error_code& ec, size_t) {
      self->OnRead(ec);
    };
    if (conn_->secure) {
      http::async_read_some(*conn_->secure, conn_->buffer, *answer_->parser, std::move(done));
    } else {
      http::async_read_some(*conn_->plain, conn_->buffer, *answer_->parser, std::move(done));
    }
  }

  void OnRead(const beast::error_code& ec) {
    if (Stopping()) {
      Finish(std::nullopt);
      return;
    }
    std::optional<Attempt> end;
    std::string error;
    if (!RunGuarded(
            "watch event",
            [&] {
              end =
                  Absorb(*answer_, *conn_, timed_out_ ? Wait::kTimedOut : Wait::kDone, ec, limits_);
            },
            &error)) {
      end.emplace();
      end->result = absl::InternalError(absl::StrCat(AV(limits_.base_url), ": ", AV(error)));
    }
    if (!end) {
      ReadNext();
      return;
    }
    Finish(std::move(end->result));
  }

  void Finish(std::optional<absl::StatusOr<Response>> result) {
    conn_->Close();
    timer_->cancel();
    const absl::StatusOr<Response>& recorded =
        result ? *result : absl::StatusOr<Response>(absl::CancelledError("watch stopped"));
    RecordRequest(host_, request_, recorded, /*watch=*/true, 0, on_request_);
    if (result && !Stopping()) RunGuarded("watch end", [&] { on_end_(*std::move(result)); });
    absl::MutexLock lock(&mu_);
    finished_ = true;
  }

  bool Stopping() {
    absl::MutexLock lock(&mu_);
    return stopping_;
  }

  const WatchEndFn on_end_;
  // Set by Begin (before any read), then touched on the I/O thread only (Stop's close too).
  std::unique_ptr<Connection> conn_;
  std::unique_ptr<Answer> answer_;
  std::optional<net::steady_timer> timer_;
  bool timed_out_ = false;
  AnswerLimits limits_;
  Request request_;
  std::string host_;
  std::function<void(const Request&, int)> on_request_;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

// What StartWatch returns.
class StreamingWatch final : public BackgroundWatch {
 public:
  explicit StreamingWatch(std::shared_ptr<Streaming> s) : s_(std::move(s)) {}
  ~StreamingWatch() override { Stop(); }
  void Stop() override {
    if (s_) s_->Stop();
  }

 private:
  const std::shared_ptr<Streaming> s_;
};

class BeastRestClient final : public RestClient {
 public:
  BeastRestClient(RestConfig config, RestClientOptions options, ParsedHost host,
                  std::optional<ProxyUrl> proxy, std::unique_ptr<Clock> own_clock)
      : config_(std::move(config)),
        options_(std::move(options)),
        host_(std::move(host)),
        proxy_(std::move(proxy)),
        own_clock_(std::move(own_clock)),
        limiter_(options_.clock != nullptr ? *options_.clock : *own_clock_, config_.qps,
                 config_.burst) {
    base_url_ = absl::StrCat(AV(host_.scheme), "://", AV(host_.authority), AV(host_.prefix));
    server_name_ = config_.tls_server_name.empty() ? host_.host : config_.tls_server_name;
    boost::system::error_code ec;
    net::ip::make_address(server_name_, ec);
    server_name_is_ip_ = !ec;
    // Go's canonicalAddr: the CONNECT target and the proxy's Host.
    target_address_ = host_.host.find(':') != std::string::npos
                          ? absl::StrCat("[", AV(host_.host), "]:", AV(host_.port))
                          : absl::StrCat(AV(host_.host), ":", AV(host_.port));
    dial_host_ = proxy_ ? proxy_->host : host_.host;
    dial_port_ = proxy_ ? proxy_->port : host_.port;
    if (proxy_ && proxy_->has_user) {
      proxy_authorization_ = absl::StrCat(
          "Basic ", AV(absl::Base64Escape(absl::StrCat(proxy_->username, ":", proxy_->password))));
    }
    const auto literal = net::ip::make_address(dial_host_, ec);
    if (!ec) literal_.emplace(literal, static_cast<uint16_t>(std::stoi(dial_port_)));
  }

  ~BeastRestClient() override {
    absl::MutexLock lock(&pool_mu_);
    idle_.clear();
  }

  absl::StatusOr<Response> Do(const Request& request) override { return Call(request, nullptr); }

  absl::StatusOr<Response> Watch(const Request& request, const WatchEventFn& on_event) override {
    return Call(request, &on_event);
  }

  std::unique_ptr<BackgroundWatch> StartWatch(const Request& request, WatchEventFn on_event,
                                              WatchEndFn on_end) override {
    auto s = std::make_shared<Streaming>(std::move(on_event), std::move(on_end));
    Handover h;
    absl::StatusOr<Response> result = Call(request, &s->on_event, &h);
    if (h.answer == nullptr) {
      // Ended on this thread: refused, failed, or over before a 200's first frame.
      s->EndNow(std::move(result));
      return std::make_unique<StreamingWatch>(nullptr);
    }
    s->Begin(std::move(h), AnswerLimits{options_.max_body_bytes, base_url_}, request,
             host_.authority, options_.on_request);
    return std::make_unique<StreamingWatch>(std::move(s));
  }

 private:
  // ---- pool ----

  // An idle connection made with `generation`'s client certificate that is still fit for use,
  // or null. Idle connections of other generations, closed or stale ones are dropped.
  std::unique_ptr<Connection> TakeIdle(uint64_t generation) {
    std::vector<std::unique_ptr<Connection>> dropped;  // closed outside the lock
    absl::MutexLock lock(&pool_mu_);
    const absl::Time now = PoolNow();
    while (!idle_.empty()) {
      std::unique_ptr<Connection> c = std::move(idle_.back());
      idle_.pop_back();
      if (c->cert_generation == generation && c->Reusable(now)) return c;
      dropped.push_back(std::move(c));
    }
    return nullptr;
  }

  // Pools `c`, and closes the pooled connections idle for longer than kMaxIdle: the most recent
  // is taken first, so without this the ones below it would never be looked at again.
  void Release(std::unique_ptr<Connection> c) {
    const absl::Time now = PoolNow();
    c->idle_since = now;
    std::vector<std::unique_ptr<Connection>> dropped;  // closed outside the lock
    absl::MutexLock lock(&pool_mu_);
    for (auto it = idle_.begin(); it != idle_.end();) {
      if (now - (*it)->idle_since > kMaxIdle) {
        dropped.push_back(std::move(*it));
        it = idle_.erase(it);
      } else {
        ++it;
      }
    }
    if (static_cast<int>(idle_.size()) < options_.max_idle_connections) {
      idle_.push_back(std::move(c));
    } else {
      dropped.push_back(std::move(c));
    }
  }

  absl::Time PoolNow() const {
    return options_.clock != nullptr ? options_.clock->Now() : absl::Now();
  }

  // ---- credentials ----

  // The bearer token, from the file (re-read at most once a minute, as client-go's cached file
  // token source) or the config.
  std::string Token() {
    if (config_.bearer_token_file.empty()) return config_.bearer_token;
    absl::MutexLock lock(&token_mu_);
    absl::Time now = absl::Now();
    if (token_read_ == absl::InfinitePast() || now - token_read_ > absl::Minutes(1)) {
      absl::StatusOr<std::string> t = ReadFile(config_.bearer_token_file, "bearer_token_file");
      if (t.ok()) {
        token_ = std::string(absl::StripAsciiWhitespace(AV(*t)));
        token_read_ = now;
      } else {
        KLOG_WARNING("Failed to read the bearer token file, using the last token", "err",
                     t.status());
        if (token_.empty()) token_ = config_.bearer_token;
      }
    }
    return token_;
  }

  // The TLS context for a new connection: the trust anchors and client certificate as they are
  // now (files read again, the dynamic pair as given), the cached context when they did not
  // change.
  absl::StatusOr<std::shared_ptr<TlsContext>> CurrentTls(const ClientCertificate& dynamic_cert) {
    std::string ca = config_.ca_pem;
    if (ca.empty() && !config_.ca_file.empty() && !config_.insecure) {
      absl::StatusOr<std::string> f = ReadFile(config_.ca_file, "ca_file");
      if (!f.ok()) return f.status();
      ca = *std::move(f);
    }
    std::string cert, key;
    if (config_.client_certificate_source) {
      if (!dynamic_cert.cert_pem.empty() && !dynamic_cert.key_pem.empty()) {
        cert = dynamic_cert.cert_pem;
        key = dynamic_cert.key_pem;
      }
    } else {
      cert = config_.client_cert_pem;
      if (cert.empty() && !config_.client_cert_file.empty()) {
        absl::StatusOr<std::string> f = ReadFile(config_.client_cert_file, "client_cert_file");
        if (!f.ok()) return f.status();
        cert = *std::move(f);
      }
      key = config_.client_key_pem;
      if (key.empty() && !config_.client_key_file.empty()) {
        absl::StatusOr<std::string> f = ReadFile(config_.client_key_file, "client_key_file");
        if (!f.ok()) return f.status();
        key = *std::move(f);
      }
    }
    std::string material = absl::StrCat(ca.size(), ":", ca, cert.size(), ":", cert, key);
    absl::MutexLock lock(&tls_mu_);
    if (tls_ != nullptr && tls_->material() == material) return tls_;
    absl::StatusOr<std::shared_ptr<TlsContext>> t =
        NewTlsContext(std::move(material), config_.insecure, ca, cert, key);
    if (!t.ok()) return t.status();
    tls_ = *t;
    return tls_;
  }

  // ---- one call ----

  absl::StatusOr<Response> Call(const Request& request, const WatchEventFn* on_event,
                                Handover* handover = nullptr) {
    if (request.path.empty() || request.path[0] != '/') {
      return absl::InvalidArgumentError(
          absl::StrCat("request path \"", AV(request.path), "\" must start with /"));
    }
    static constexpr std::string_view kMethods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
    if (std::find(std::begin(kMethods), std::end(kMethods), request.method) == std::end(kMethods)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unsupported method \"", AV(request.method), "\""));
    }
    const absl::Time start = absl::Now();
    if (absl::Status s = limiter_.Wait(); !s.ok()) return s;
    const absl::Duration waited = absl::Now() - start;
    if (waited > absl::Milliseconds(50)) {
      KLOG_V(3, "Waited before sending request due to client-side throttling", "delay", waited,
             "verb", request.method, "path", request.path);
    }

    absl::StatusOr<Response> result;
    try {
      result = Perform(request, on_event, handover);
    } catch (const std::exception& e) {
      result = absl::InternalError(absl::StrCat(AV(base_url_), ": ", e.what()));
    }
    // A handed-over watch is counted when it ends.
    if (handover != nullptr && handover->answer != nullptr) return result;
    RecordRequest(host_.authority, request, result, on_event != nullptr,
                  absl::ToDoubleSeconds(absl::Now() - start), options_.on_request);
    return result;
  }

  absl::StatusOr<Response> Perform(const Request& request, const WatchEventFn* on_event,
                                   Handover* handover) {
    absl::Duration timeout = request.timeout;
    if (timeout <= absl::ZeroDuration() && on_event == nullptr) timeout = config_.timeout;
    const SteadyClock::time_point deadline =
        timeout > absl::ZeroDuration() ? SteadyClock::now() + absl::ToChronoNanoseconds(timeout)
                                       : SteadyClock::time_point::max();

    ClientCertificate dynamic_cert;
    if (config_.client_certificate_source) dynamic_cert = config_.client_certificate_source();
    http::request<http::string_body> req = BuildRequest(request, on_event != nullptr);

    for (int attempt = 0;; ++attempt) {
      // A retry goes to a new connection.
      std::unique_ptr<Connection> conn = attempt == 0 ? TakeIdle(dynamic_cert.generation) : nullptr;
      const bool reused = conn != nullptr;
      if (!reused) {
        conn = std::make_unique<Connection>();
        conn->cert_generation = dynamic_cert.generation;
      }
      Attempt a = Exchange(*conn, !reused, dynamic_cert, req, on_event, deadline, handover);
      if (a.handed_over) {
        handover->conn = std::move(conn);
        return Response{.code = 200};
      }
      if (a.keep) {
        Release(std::move(conn));
      } else {
        conn.reset();
      }
      if (a.retry && reused && attempt == 0 && request.method == "GET") {
        KLOG_V(4, "Retrying a request whose idle connection was closed", "path", request.path,
               "err", a.result.status());
        continue;
      }
      return std::move(a.result);
    }
  }

  http::request<http::string_body> BuildRequest(const Request& r, bool watch) {
    http::request<http::string_body> req;
    req.method_string(r.method);
    if (proxy_ && host_.scheme == "http") {
      // Through an HTTP proxy the request names the whole URL (absolute form).
      req.target(absl::StrCat("http://", AV(host_.authority), AV(host_.prefix), AV(r.path)));
      if (!proxy_authorization_.empty()) {
        req.set(http::field::proxy_authorization, proxy_authorization_);
      }
    } else {
      req.target(host_.prefix + r.path);
    }
    req.version(11);
    req.set(http::field::host, host_.authority);
    if (!config_.user_agent.empty()) req.set(http::field::user_agent, config_.user_agent);
    req.set(http::field::accept, "application/json, */*");
    const std::string token = Token();
    if (!token.empty()) req.set(http::field::authorization, absl::StrCat("Bearer ", AV(token)));
    const bool has_body = (r.method != "GET" && r.method != "DELETE") || !r.body.empty();
    if (has_body) {
      req.set(http::field::content_type,
              r.content_type.empty() ? config_.content_type : r.content_type);
      req.content_length(r.body.size());
      req.body() = r.body;
    }
    // Unary answers may come compressed (decoded below); a watch's frames must not wait on a
    // compressor's buffer.
    if (!watch) req.set(http::field::accept_encoding, "gzip");
    // Extra headers replace the ones above of the same name; an empty value removes it.
    std::vector<std::string> replaced;
    for (const auto& [name, value] : r.headers) {
      const std::string lower = absl::AsciiStrToLower(AV(name));
      if (std::find(replaced.begin(), replaced.end(), lower) == replaced.end()) {
        req.erase(name);
        replaced.push_back(lower);
      }
      if (!value.empty()) req.insert(name, value);
    }
    return req;
  }

  // One step: `start` runs on the connection's I/O thread and starts one asynchronous operation,
  // whose completion handler stores its error in `ec` and calls cs.Finish(). Waits for that
  // until `deadline` or a cancellation; then the socket is closed on the I/O thread, and the
  // close and the (aborted) completion are waited for: nothing of this step runs after it
  // returns, so `start` and its handler may capture the caller's locals by reference.
  template <typename Start>
  static Wait Drive(Connection& c, CallState& cs, SteadyClock::time_point deadline,
                    beast::error_code& ec, Start start) {
    {
      absl::MutexLock lock(&cs.mu);
      if (cs.cancelled) return Wait::kCancelled;
      cs.done = false;
    }
    net::post(*c.ioc, [&c, &cs, &ec, start]() mutable {
      try {
        start();
      } catch (const std::exception& e) {
        // Nothing was started: the step fails here (an allocation failure, say).
        KLOG_ERROR(absl::InternalError(e.what()), "Failed to start an API client operation");
        ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
        cs.Finish();
      }
    });
    const absl::Time until = deadline == SteadyClock::time_point::max()
                                 ? absl::InfiniteFuture()
                                 : absl::Now() + absl::FromChrono(deadline - SteadyClock::now());
    bool cancelled;
    {
      absl::MutexLock lock(&cs.mu);
      auto ready = [&cs]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(cs.mu) { return cs.done || cs.cancelled; };
      cs.mu.AwaitWithDeadline(absl::Condition(&ready), until);
      if (cs.done) return Wait::kDone;
      cancelled = cs.cancelled;
    }
    absl::Notification closed;
    net::post(*c.ioc, [&c, &closed] {
      c.Close();
      closed.Notify();
    });
    closed.WaitForNotification();
    absl::MutexLock lock(&cs.mu);
    cs.mu.Await(absl::Condition(&cs.done));
    return cancelled ? Wait::kCancelled : Wait::kTimedOut;
  }

  // Drive() as a status: OK once done, Cancelled, or what `timed_out` makes of the deadline.
  template <typename Start, typename TimedOut>
  static absl::Status Await(Connection& c, CallState& cs, SteadyClock::time_point deadline,
                            beast::error_code& ec, Start start, const TimedOut& timed_out) {
    switch (Drive(c, cs, deadline, ec, std::move(start))) {
      case Wait::kCancelled:
        return absl::CancelledError("request cancelled");
      case Wait::kTimedOut:
        return timed_out();
      case Wait::kDone:
        break;
    }
    return absl::OkStatus();
  }

  absl::Status Unavailable(std::string_view detail) const {
    return absl::UnavailableError(absl::StrCat(AV(base_url_), ": ", AV(detail)));
  }

  // Opens `c`: resolves, connects and, for https, shakes hands.
  absl::Status Open(Connection& c, const ClientCertificate& dynamic_cert,
                    SteadyClock::time_point deadline, CallState& cs) {
    const SteadyClock::time_point connect_deadline = std::min(
        deadline, SteadyClock::now() + absl::ToChronoNanoseconds(options_.connect_timeout));
    auto timed_out = [&] {
      return absl::DeadlineExceededError(
          absl::StrCat("request timed out: ", AV(base_url_), ": connecting"));
    };
    std::vector<tcp::endpoint> endpoints;
    if (literal_) {
      endpoints.push_back(*literal_);
    } else {
      std::optional<Resolved> r = Resolve(dial_host_, dial_port_, [&] {
        return cs.Cancelled() || SteadyClock::now() >= connect_deadline;
      });
      if (!r) {
        if (cs.Cancelled()) {
          return absl::CancelledError("request cancelled");
        }
        return timed_out();
      }
      if (!r->error.empty()) {
        return Unavailable(absl::StrCat(proxy_ ? "proxy: lookup " : "lookup ", AV(dial_host_), ": ",
                                        AV(r->error)));
      }
      endpoints = std::move(r->endpoints);
    }

    if (host_.scheme == "https") {
      // Unreadable or bad credentials fail the connection as a TLS failure.
      absl::StatusOr<std::shared_ptr<TlsContext>> tls = CurrentTls(dynamic_cert);
      if (!tls.ok()) return Unavailable(SV(tls.status().message()));
      c.tls = *std::move(tls);
      c.secure.emplace(*c.ioc, c.tls->ctx());
    } else {
      c.plain.emplace(*c.ioc);
    }

    beast::error_code ec;
    auto connect = [&] {
      net::async_connect(c.socket(), endpoints,
                         [&](const beast::error_code& e, const tcp::endpoint&) {
                           ec = e;
                           cs.Finish();
                         });
    };
    if (absl::Status st = Await(c, cs, connect_deadline, ec, connect, timed_out); !st.ok()) {
      return st;
    }
    if (ec) {
      return Unavailable(absl::StrCat(
          proxy_ ? absl::StrCat("proxy ", proxy_->Address(), ": connect: ") : "connect: ",
          LowerFirst(ec.message())));
    }
    const int fd = c.socket().native_handle();
    const int one = 1;
    // A silently dead connection under a watch is found by TCP keep-alive probes (client-go
    // uses HTTP/2 pings after 30 s idle): 30 s idle, then a probe every 15 s.
    const int idle = 30, interval = 15;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
    if (!c.secure) return absl::OkStatus();
    if (proxy_) {
      if (absl::Status s = Tunnel(c, connect_deadline, cs); !s.ok()) return s;
    }

    SSL* s = c.secure->native_handle();
    if (!server_name_is_ip_) SSL_set_tlsext_host_name(s, server_name_.c_str());
    if (!config_.insecure) {
      X509_VERIFY_PARAM* param = SSL_get0_param(s);
      if (server_name_is_ip_) {
        X509_VERIFY_PARAM_set1_ip_asc(param, server_name_.c_str());
      } else {
        X509_VERIFY_PARAM_set1_host(param, server_name_.c_str(), 0);
      }
    }
    c.tls->Resume(s);
    auto handshake = [&] {
      c.secure->async_handshake(ssl::stream_base::client, [&](const beast::error_code& e) {
        ec = e;
        cs.Finish();
      });
    };
    if (absl::Status st = Await(c, cs, connect_deadline, ec, handshake, timed_out); !st.ok()) {
      return st;
    }
    if (ec) {
      const long verify = SSL_get_verify_result(s);  // NOLINT(runtime/int): OpenSSL's type
      if (verify != X509_V_OK) {
        return Unavailable(absl::StrCat("TLS: server certificate verification failed: ",
                                        X509_verify_cert_error_string(verify)));
      }
      return Unavailable(absl::StrCat("TLS handshake: ", LowerFirst(ec.message())));
    }
    return absl::OkStatus();
  }

  // Asks the proxy for a tunnel to the API server on `c`'s new TCP connection: CONNECT, then the
  // proxy's answer (a 2xx opens the tunnel; its body, if any, is the tunnel's first bytes and
  // there are none before the TLS handshake).
  absl::Status Tunnel(Connection& c, SteadyClock::time_point deadline, CallState& cs) {
    const std::string proxy = absl::StrCat("proxy ", proxy_->Address());
    auto timed_out = [&] {
      return absl::DeadlineExceededError(
          absl::StrCat("request timed out: ", AV(base_url_), ": ", AV(proxy), ": CONNECT"));
    };
    std::string head = absl::StrCat("CONNECT ", AV(target_address_),
                                    " HTTP/1.1\r\nHost: ", AV(target_address_), "\r\n");
    if (!config_.user_agent.empty()) {
      absl::StrAppend(&head, "User-Agent: ", AV(config_.user_agent), "\r\n");
    }
    if (!proxy_authorization_.empty()) {
      absl::StrAppend(&head, "Proxy-Authorization: ", AV(proxy_authorization_), "\r\n");
    }
    head += "\r\n";
    beast::error_code ec;
    auto write = [&] {
      net::async_write(c.socket(), net::buffer(head), [&](const beast::error_code& e, size_t) {
        ec = e;
        cs.Finish();
      });
    };
    if (absl::Status st = Await(c, cs, deadline, ec, write, timed_out); !st.ok()) return st;
    if (ec) return Unavailable(absl::StrCat(AV(proxy), ": CONNECT: ", LowerFirst(ec.message())));

    http::response_parser<http::empty_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(kMaxHeaderBytes));
    parser.skip(true);  // the answer to a CONNECT has no body
    beast::flat_buffer buffer(kMaxBufferBytes);
    auto read = [&] {
      http::async_read_header(c.socket(), buffer, parser, [&](const beast::error_code& e, size_t) {
        ec = e;
        cs.Finish();
      });
    };
    if (absl::Status st = Await(c, cs, deadline, ec, read, timed_out); !st.ok()) return st;
    if (ec) {
      return Unavailable(
          absl::StrCat(AV(proxy), ": reading the CONNECT answer: ", LowerFirst(ec.message())));
    }
    const unsigned code = parser.get().result_int();
    if (code < 200 || code > 299) {
      const beast::string_view reason = parser.get().reason();
      return Unavailable(absl::StrCat(AV(proxy), " refused CONNECT ", AV(target_address_), ": ",
                                      code, " ", absl::string_view(reason.data(), reason.size())));
    }
    if (buffer.size() != 0) {
      return Unavailable(absl::StrCat(AV(proxy), ": data after the CONNECT answer"));
    }
    return absl::OkStatus();
  }

  // One request and its answer on `c` (opened first when `fresh`).
  Attempt Exchange(Connection& c, bool fresh, const ClientCertificate& dynamic_cert,
                   const http::request<http::string_body>& req, const WatchEventFn* on_event,
                   SteadyClock::time_point deadline, Handover* handover) {
    Attempt a;
    CallState cs;
    OnCancel on_cancel([&cs] { cs.Cancel(); });
    if (on_cancel.cancelled()) {
      a.result = absl::CancelledError("request cancelled");
      return a;
    }
    if (fresh) {
      if (absl::Status s = Open(c, dynamic_cert, deadline, cs); !s.ok()) {
        a.result = std::move(s);
        return a;
      }
    }
    if (c.secure) {
      a = Transfer(*c.secure, c, req, on_event, deadline, cs, handover);
      if (a.keep) c.tls->Remember(c.secure->native_handle());
    } else {
      a = Transfer(*c.plain, c, req, on_event, deadline, cs, handover);
    }
    if (cs.Cancelled()) a.keep = false;
    return a;
  }

  // The answer's reads, chained on the I/O thread: each read is absorbed there, and the next
  // one started, until the answer is complete or failed (`end`), a watch answered 200 and is
  // to be handed over, or a read fails (`ec`: the connection dropped, or Drive closed it).
  // Then the step is finished. Lives on the caller's stack for the Drive.
  template <class Stream>
  struct ChainedReads {
    Stream& stream;
    Connection& c;
    Answer& st;
    const AnswerLimits& limits;
    const bool handing_over;
    CallState& cs;
    beast::error_code& ec;
    std::optional<Attempt>& end;

    void Next() {
      try {
        http::async_read_some(stream, c.buffer, *st.parser,
                              [this](const beast::error_code& e, size_t) { OnRead(e); });
      } catch (const std::exception& e) {
        // Nothing was started (an allocation failure, say): the step ends here.
        KLOG_ERROR(absl::InternalError(e.what()), "Failed to start an API client read");
        ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
        cs.Finish();
      }
    }
    void OnRead(const beast::error_code& e) {
      if (e) {
        ec = e;  // the caller absorbs the failure, knowing whether it was the deadline
        cs.Finish();
        return;
      }
      std::string error;
      if (!RunGuarded(
              "API answer", [&] { end = Absorb(st, c, Wait::kDone, e, limits); }, &error)) {
        end.emplace();
        end->result = absl::InternalError(absl::StrCat(AV(limits.base_url), ": ", AV(error)));
      }
      if (end || (handing_over && st.watching)) {
        cs.Finish();
        return;
      }
      Next();
    }
  };

  // Sends `req` and reads its answer. A unary request's (or a handed-over watch's header) write
  // and reads run on the I/O thread as one step, so the caller's thread waits once; a watch
  // whose frames go to the caller's on_event waits for each read, and its frames are delivered
  // on the caller's thread.
  template <class Stream>
  Attempt Transfer(Stream& stream, Connection& c, const http::request<http::string_body>& req,
                   const WatchEventFn* on_event, SteadyClock::time_point deadline, CallState& cs,
                   Handover* handover) {
    Attempt a;
    auto timed_out = [&](std::string_view phase) {
      return absl::DeadlineExceededError(
          absl::StrCat("request timed out: ", AV(base_url_), ": ", AV(phase)));
    };
    auto st = std::make_unique<Answer>(on_event, options_.max_frame_bytes);
    const AnswerLimits limits{options_.max_body_bytes, base_url_};
    const bool chained = on_event == nullptr || handover != nullptr;
    beast::error_code ec;
    bool sent = false;
    std::optional<Attempt> end;
    ChainedReads<Stream> reads{stream, c, *st, limits, handover != nullptr, cs, ec, end};
    auto write = [&] {
      http::async_write(stream, req, [&](const beast::error_code& e, size_t) {
        sent = !e;
        if (e || !chained) {
          ec = e;
          cs.Finish();
          return;
        }
        reads.Next();
      });
    };
    Wait w = Drive(c, cs, deadline, ec, write);
    if (w == Wait::kCancelled) {
      a.result = absl::CancelledError("request cancelled");
      return a;
    }
    if (!sent) {
      if (w == Wait::kTimedOut) {
        a.result = timed_out("sending the request");
      } else {
        a.result = Unavailable(absl::StrCat("sending the request: ", LowerFirst(ec.message())));
        a.retry = true;
      }
      return a;
    }
    if (chained) {
      // An answer the reads completed just as the deadline passed is not taken (the socket was
      // closed meanwhile): the call ends timed out, as it would have a moment later.
      if (w == Wait::kDone && end) return *std::move(end);
      if (w == Wait::kDone && handover != nullptr && st->watching) {
        // A watch answered 200: the rest is read on the I/O thread (StartWatch).
        handover->answer = std::move(st);
        handover->deadline = deadline;
        a.handed_over = true;
        return a;
      }
      // The reads stopped on a failure or the deadline: that is the end.
      std::optional<Attempt> last = Absorb(*st, c, w, ec, limits);
      if (!last) {
        last.emplace();
        last->result = Unavailable("reading the answer: stopped before its end");
      }
      last->keep = last->keep && w == Wait::kDone;
      return *std::move(last);
    }
    // A watch whose frames go to the caller's on_event: a step per read, absorbed here.
    for (;;) {
      auto read = [&] {
        http::async_read_some(stream, c.buffer, *st->parser,
                              [&](const beast::error_code& e, size_t) {
                                ec = e;
                                cs.Finish();
                              });
      };
      w = Drive(c, cs, deadline, ec, read);
      if (std::optional<Attempt> last = Absorb(*st, c, w, ec, limits)) return *std::move(last);
    }
  }

  const RestConfig config_;
  const RestClientOptions options_;
  const ParsedHost host_;
  const std::optional<ProxyUrl> proxy_;  // an http:// proxy, or none
  std::unique_ptr<Clock> own_clock_;
  TokenBucket limiter_;
  std::string base_url_;
  std::string server_name_;  // verified and sent as SNI (unless an IP address)
  bool server_name_is_ip_ = false;
  std::string target_address_;            // host:port of the API server
  std::string dial_host_, dial_port_;     // the proxy's when there is one, else the API server's
  std::string proxy_authorization_;       // "Basic ..." when the proxy URL has user information
  std::optional<tcp::endpoint> literal_;  // the dialled host when it is an IP address

  absl::Mutex pool_mu_;
  std::vector<std::unique_ptr<Connection>> idle_ ABSL_GUARDED_BY(pool_mu_);

  absl::Mutex tls_mu_;
  std::shared_ptr<TlsContext> tls_ ABSL_GUARDED_BY(tls_mu_);

  absl::Mutex token_mu_;
  std::string token_ ABSL_GUARDED_BY(token_mu_);
  absl::Time token_read_ ABSL_GUARDED_BY(token_mu_) = absl::InfinitePast();
};

}  // namespace

absl::StatusOr<std::unique_ptr<RestClient>> NewRestClient(const RestConfig& given,
                                                          RestClientOptions options) {
  absl::StatusOr<ParsedHost> host = ParseHost(given.host);
  if (!host.ok()) return host.status();
  RestConfig config = given;
  if (config.client_certificate_source) {
    // The source replaces the static pair (whose files may not exist yet).
    config.client_cert_pem.clear();
    config.client_cert_file.clear();
    config.client_key_pem.clear();
    config.client_key_file.clear();
  }
  // Fail early, naming the file, rather than on the first request.
  const std::pair<const std::string*, const char*> files[] = {
      {&config.ca_file, "ca_file"},
      {&config.client_cert_file, "client_cert_file"},
      {&config.client_key_file, "client_key_file"},
      {&config.bearer_token_file, "bearer_token_file"}};
  for (const auto& [path, field] : files) {
    if (path->empty()) continue;
    if (absl::StatusOr<std::string> s = ReadFile(*path, field); !s.ok()) return s.status();
  }
  const bool has_cert = !config.client_cert_pem.empty() || !config.client_cert_file.empty();
  const bool has_key = !config.client_key_pem.empty() || !config.client_key_file.empty();
  if (has_cert != has_key) {
    return absl::InvalidArgumentError(
        "client_cert and client_key: a client certificate needs its key and the reverse");
  }
  // The proxy environment is read once, as Go reads it once per process.
  const ProxyEnvironment env =
      options.proxy_environment ? *options.proxy_environment : ProxyEnvironmentFromProcess();
  const std::string& proxy_value = host->scheme == "https" ? env.https_proxy : env.http_proxy;
  std::optional<ProxyUrl> proxy;
  if (!proxy_value.empty()) {
    if (absl::StatusOr<ProxyUrl> p = ParseProxyUrl(proxy_value); !p.ok()) {
      // Go ignores a proxy value it cannot parse: the connection is direct.
      KLOG_WARNING("Ignoring the proxy environment", "err", p.status());
    } else {
      proxy = ProxyFor(env, host->scheme, host->host, host->port);
    }
  }
  if (proxy && proxy->scheme != "http") {
    return absl::InvalidArgumentError(
        absl::StrCat("proxy \"", proxy->scheme, "://", proxy->Address(), "\" (from ",
                     host->scheme == "https" ? "HTTPS_PROXY" : "HTTP_PROXY",
                     "): only http:// proxies are supported"));
  }
  if (proxy) {
    KLOG_V(2, "Using a proxy for the API server", "host", host->authority, "proxy",
           proxy->Address());
  }
  std::unique_ptr<Clock> own_clock;
  if (options.clock == nullptr) own_clock = std::make_unique<RealClock>();
  return std::make_unique<BeastRestClient>(std::move(config), std::move(options), *std::move(host),
                                           std::move(proxy), std::move(own_clock));
}

}  // namespace kubelet::apiclient
