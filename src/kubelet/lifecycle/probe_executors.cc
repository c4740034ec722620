#include "kubelet/lifecycle/probe_executors.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>
#include <chrono>
#include <exception>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/cancellation.h"
#include "common/guarded.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::lifecycle {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using SteadyTime = std::chrono::steady_clock::time_point;

const char* ProbeResultName(ProbeResult r) {
  switch (r) {
    case ProbeResult::kSuccess:
      return "success";
    case ProbeResult::kWarning:
      return "warning";
    case ProbeResult::kFailure:
      return "failure";
    case ProbeResult::kUnknown:
      break;
  }
  return "unknown";
}

std::string DefaultUserAgent(const std::string& fragment) {
  // The kubelet's own major.minor, as upstream's version.Get() renders it.
  return absl::StrCat("kube-", fragment, "/1.28");
}

absl::StatusOr<int> ResolveContainerPort(const api::IntOrString& port,
                                         const api::Container& container) {
  if (!port.is_string()) {
    if (port.int_val > 0 && port.int_val < 65536) return port.int_val;
    return absl::InvalidArgumentError(absl::StrCat("invalid port number: ", port.int_val));
  }
  for (const api::ContainerPort& p : container.ports) {
    if (p.name == port.str_val) return p.container_port;
  }
  int n = 0;
  if (absl::SimpleAtoi(AV(port.str_val), &n)) {
    if (n > 0 && n < 65536) return n;
    return absl::InvalidArgumentError(absl::StrCat("invalid port number: ", n));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("couldn't find port: ", port.str_val, " in ", container.name));
}

// --- exec -------------------------------------------------------------------------------------

ProbeOutcome ExecProbe(cri::RuntimeService& runtime, const std::string& container_id,
                       const std::vector<std::string>& cmd, absl::Duration timeout) {
  ProbeOutcome out;
  auto resp = runtime.ExecSync(container_id, cmd, timeout);
  if (!resp.ok()) {
    if (resp.status().code() == absl::StatusCode::kDeadlineExceeded) {
      out.result = ProbeResult::kFailure;
      out.output = absl::StrCat("command ", log::Quote(absl::StrJoin(cmd, " ")), " timed out");
      return out;
    }
    out.result = ProbeResult::kUnknown;
    out.error = resp.status();
    return out;
  }
  out.output = resp->stdout() + resp->stderr();
  if (out.output.size() > kMaxProbeOutputBytes) out.output.resize(kMaxProbeOutputBytes);
  out.result = resp->exit_code() == 0 ? ProbeResult::kSuccess : ProbeResult::kFailure;
  return out;
}

// --- networking helpers -----------------------------------------------------------------------

namespace {

bool IsIPv6Literal(const std::string& host) { return host.find(':') != std::string::npos; }

std::string JoinHostPort(const std::string& host, int port) {
  if (IsIPv6Literal(host)) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

std::optional<SteadyTime> DeadlineFor(absl::Duration timeout) {
  if (timeout <= absl::ZeroDuration() || timeout == absl::InfiniteDuration()) return std::nullopt;
  return std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
}

void Arm(beast::tcp_stream& s, const std::optional<SteadyTime>& deadline) {
  if (deadline) {
    s.expires_at(*deadline);
  } else {
    s.expires_never();
  }
}

// The tail of a Go dial error for `ec` ("connect: connection refused", "i/o timeout").
std::string DialErrorText(const beast::error_code& ec) {
  if (ec == beast::error::timeout || ec == asio::error::timed_out) return "i/o timeout";
  if (ec == asio::error::connection_refused) return "connect: connection refused";
  if (ec == asio::error::host_unreachable) return "connect: no route to host";
  if (ec == asio::error::network_unreachable) return "connect: network is unreachable";
  std::string m = ec.message();
  if (!m.empty()) m[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(m[0])));
  return "connect: " + m;
}

std::string LowerFirst(std::string m) {
  if (!m.empty()) m[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(m[0])));
  return m;
}

// Resolves and connects `stream`; on failure fills `err` with Go's "dial tcp ..." text.
asio::awaitable<bool> Dial(beast::tcp_stream& stream, const std::string& host, int port,
                           std::optional<SteadyTime> deadline, std::string* err) {
  auto ex = co_await asio::this_coro::executor;
  beast::error_code ec;
  // Probes almost always target the pod IP: an IP literal needs no resolver (asio's resolver
  // runs getaddrinfo on a thread of its own, which would cost a thread start per probe).
  boost::system::error_code not_ip;
  const asio::ip::address ip = asio::ip::make_address(host, not_ip);
  if (!not_ip) {
    Arm(stream, deadline);
    co_await stream.async_connect(tcp::endpoint(ip, static_cast<uint16_t>(port)),
                                  asio::redirect_error(asio::use_awaitable, ec));
  } else {
    tcp::resolver resolver(ex);
    auto endpoints = co_await resolver.async_resolve(host, std::to_string(port),
                                                     asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      *err = absl::StrCat("dial tcp: lookup ", host, ": ", LowerFirst(ec.message()));
      co_return false;
    }
    Arm(stream, deadline);
    co_await stream.async_connect(endpoints, asio::redirect_error(asio::use_awaitable, ec));
  }
  if (ec) {
    *err = absl::StrCat("dial tcp ", JoinHostPort(host, port), ": ", DialErrorText(ec));
    co_return false;
  }
  co_return true;
}

// Runs the coroutine `make()` returns to its end. Returns Cancelled when the thread's
// cancellation (a pod's sync being cancelled) stopped it first, and Internal with the message
// when it threw: Asio and Beast report some bad input by exception (Beast's std::length_error
// for a header field over 64 KiB), and a hostile container must fail its probe, not the kubelet.
template <typename Fn>
absl::Status RunCoroutine(Fn make) {
  asio::io_context ioc;
  OnCancel on_cancel([&ioc] { ioc.stop(); });
  if (on_cancel.cancelled()) return absl::CancelledError();
  std::exception_ptr failure;
  std::string thrown;
  const bool returned = RunGuarded(
      "probe I/O",
      [&] {
        asio::co_spawn(ioc, make(), [&failure](std::exception_ptr e) { failure = e; });
        ioc.run();
        if (failure && !on_cancel.cancelled()) std::rethrow_exception(failure);
      },
      &thrown);
  if (on_cancel.cancelled()) return absl::CancelledError();
  if (!returned) return absl::InternalError(thrown);
  return absl::OkStatus();
}

// --- HTTP -------------------------------------------------------------------------------------

struct Url {
  std::string scheme;
  std::string host;
  int port = 0;
  std::string target;  // path and query, starting with '/'

  std::string String() const { return FormatURL(scheme, host, port, target); }
};

int DefaultPort(const std::string& scheme) { return scheme == "https" ? 443 : 80; }

// Absolute "scheme://host[:port][/path]" URLs.
std::optional<Url> ParseAbsoluteUrl(const std::string& s) {
  size_t sep = s.find("://");
  if (sep == std::string::npos) return std::nullopt;
  Url u;
  u.scheme = absl::AsciiStrToLower(AV(s.substr(0, sep)));
  if (u.scheme != "http" && u.scheme != "https") return std::nullopt;
  std::string rest = s.substr(sep + 3);
  size_t slash = rest.find_first_of("/?#");
  std::string authority = rest.substr(0, slash);
  u.target = slash == std::string::npos ? "/" : rest.substr(slash);
  if (!u.target.empty() && u.target[0] != '/') u.target = "/" + u.target;
  if (size_t at = authority.rfind('@'); at != std::string::npos)
    authority = authority.substr(at + 1);
  std::string port_str;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return std::nullopt;
    u.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':') {
      port_str = authority.substr(close + 2);
    }
  } else if (size_t colon = authority.rfind(':'); colon != std::string::npos) {
    u.host = authority.substr(0, colon);
    port_str = authority.substr(colon + 1);
  } else {
    u.host = authority;
  }
  if (u.host.empty()) return std::nullopt;
  u.port = DefaultPort(u.scheme);
  if (!port_str.empty() && !absl::SimpleAtoi(AV(port_str), &u.port)) return std::nullopt;
  if (size_t hash = u.target.find('#'); hash != std::string::npos) u.target.resize(hash);
  return u;
}

// A Location header relative to `base`.
std::optional<Url> ResolveLocation(const Url& base, const std::string& location) {
  if (location.find("://") != std::string::npos) return ParseAbsoluteUrl(location);
  Url u = base;
  if (location.rfind("//", 0) == 0) return ParseAbsoluteUrl(base.scheme + ":" + location);
  if (!location.empty() && location[0] == '/') {
    u.target = location;
  } else {
    std::string dir = base.target.substr(0, base.target.find('?'));
    dir = dir.substr(0, dir.rfind('/') + 1);
    u.target = dir + location;
  }
  if (size_t hash = u.target.find('#'); hash != std::string::npos) u.target.resize(hash);
  return u;
}

struct Hop {
  int status = 0;
  std::string location;
  std::string body;
  bool truncated = false;
};

// What went wrong in one hop, for Go-like messages.
struct HopError {
  std::string text;
  bool tls_got_http = false;
};

template <typename Stream>
asio::awaitable<beast::error_code> Exchange(Stream& stream, beast::tcp_stream& lowest,
                                            const http::request<http::empty_body>& req,
                                            std::optional<SteadyTime> deadline, Hop* hop) {
  beast::error_code ec;
  Arm(lowest, deadline);
  co_await http::async_write(stream, req, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return ec;
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  co_await http::async_read_header(stream, buffer, parser,
                                   asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return ec;
  hop->status = static_cast<int>(parser.get().result_int());
  auto loc = parser.get().find(http::field::location);
  if (loc != parser.get().end()) hop->location = std::string(loc->value());
  char chunk[4096];
  while (!parser.is_done()) {
    if (hop->body.size() >= kMaxProbeOutputBytes) {
      hop->truncated = true;
      break;
    }
    const size_t want = std::min(sizeof(chunk), kMaxProbeOutputBytes - hop->body.size());
    parser.get().body().data = chunk;
    parser.get().body().size = want;
    co_await http::async_read(stream, buffer, parser,
                              asio::redirect_error(asio::use_awaitable, ec));
    hop->body.append(chunk, want - parser.get().body().size);
    if (ec == http::error::need_buffer) ec = {};
    if (ec) co_return ec;
  }
  co_return beast::error_code{};
}

bool IsTlsGotHttp(const beast::error_code& ec) {
  if (ec.category() != asio::error::get_ssl_category()) return false;
  const int reason = ERR_GET_REASON(static_cast<unsigned long>(ec.value()));
  return reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_HTTP_REQUEST ||
         reason == SSL_R_PACKET_LENGTH_TOO_LONG;
}

std::string ReadErrorText(const beast::error_code& ec) {
  if (ec == beast::error::timeout) {
    return "context deadline exceeded (Client.Timeout exceeded while awaiting headers)";
  }
  if (ec == http::error::end_of_stream || ec == asio::error::eof) return "EOF";
  if (ec == asio::error::connection_reset) return "read: connection reset by peer";
  return LowerFirst(ec.message());
}

asio::awaitable<bool> DoHop(const Url& url, const HttpGetRequest& request,
                            std::optional<SteadyTime> deadline, Hop* hop, HopError* err) {
  auto ex = co_await asio::this_coro::executor;
  http::request<http::empty_body> req{http::verb::get, url.target.empty() ? "/" : url.target, 11};
  bool has_ua = false, has_accept = false, has_host = false;
  for (const api::HTTPHeader& h : request.headers) {
    const std::string name = absl::AsciiStrToLower(AV(h.name));
    if (name == "host") {
      req.set(http::field::host, h.value);
      has_host = true;
      continue;
    }
    if (name == "user-agent") has_ua = true;
    if (name == "accept") has_accept = true;
    req.insert(h.name, h.value);
  }
  if (!has_host) req.set(http::field::host, JoinHostPort(url.host, url.port));
  if (!has_ua && !request.user_agent.empty()) req.set(http::field::user_agent, request.user_agent);
  if (!has_accept) req.set(http::field::accept, "*/*");
  req.set(http::field::connection, "close");

  beast::tcp_stream tcp_stream(ex);
  std::string dial_err;
  if (!co_await Dial(tcp_stream, url.host, url.port, deadline, &dial_err)) {
    err->text = dial_err;
    if (dial_err.find("i/o timeout") != std::string::npos) {
      err->text += " (Client.Timeout exceeded while awaiting headers)";
    }
    co_return false;
  }
  beast::error_code ec;
  if (url.scheme == "https") {
    asio::ssl::context tls(asio::ssl::context::tls_client);
    tls.set_verify_mode(asio::ssl::verify_none);
    beast::ssl_stream<beast::tcp_stream> stream(std::move(tcp_stream), tls);
    boost::system::error_code not_ip;
    asio::ip::make_address(url.host, not_ip);
    if (not_ip) SSL_set_tlsext_host_name(stream.native_handle(), url.host.c_str());
    Arm(beast::get_lowest_layer(stream), deadline);
    co_await stream.async_handshake(asio::ssl::stream_base::client,
                                    asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (IsTlsGotHttp(ec)) {
        err->tls_got_http = true;
        err->text = "http: server gave HTTP response to HTTPS client";
      } else if (ec == beast::error::timeout) {
        err->text = "net/http: TLS handshake timeout";
      } else {
        err->text = LowerFirst(ec.message());
      }
      co_return false;
    }
    ec = co_await Exchange(stream, beast::get_lowest_layer(stream), req, deadline, hop);
  } else {
    ec = co_await Exchange(tcp_stream, tcp_stream, req, deadline, hop);
  }
  if (ec) {
    err->text = ReadErrorText(ec);
    co_return false;
  }
  co_return true;
}

bool IsRedirect(int code) {
  return code == 301 || code == 302 || code == 303 || code == 307 || code == 308;
}

asio::awaitable<void> GetWithRedirects(const HttpGetRequest& request, absl::Duration timeout,
                                       absl::StatusOr<HttpGetResult>* out, bool* tls_got_http) {
  const std::optional<SteadyTime> deadline = DeadlineFor(timeout);
  Url url{absl::AsciiStrToLower(AV(request.scheme)), request.host, request.port,
          request.path.empty() ? "/" : request.path};
  if (url.scheme.empty()) url.scheme = "http";
  if (url.target[0] != '/') url.target = "/" + url.target;
  const std::string first_host = url.host;
  for (int redirects = 0;; ++redirects) {
    Hop hop;
    HopError err;
    if (!co_await DoHop(url, request, deadline, &hop, &err)) {
      if (tls_got_http != nullptr) *tls_got_http = err.tls_got_http;
      *out = absl::UnavailableError(absl::StrCat("Get ", log::Quote(url.String()), ": ", err.text));
      co_return;
    }
    if (IsRedirect(hop.status) && !hop.location.empty()) {
      std::optional<Url> next = ResolveLocation(url, hop.location);
      if (!next) {
        *out = absl::UnavailableError(absl::StrCat("Get ", log::Quote(url.String()),
                                                   ": invalid redirect location ",
                                                   log::Quote(hop.location)));
        co_return;
      }
      // Only redirects to the same host are followed; others end the probe with the 3xx.
      if (next->host == first_host) {
        if (redirects + 1 >= 10) {
          *out = absl::UnavailableError(
              absl::StrCat("Get ", log::Quote(next->String()), ": stopped after 10 redirects"));
          co_return;
        }
        url = std::move(*next);
        continue;
      }
    }
    HttpGetResult result;
    result.status_code = hop.status;
    result.body = std::move(hop.body);
    result.truncated = hop.truncated;
    *out = std::move(result);
    co_return;
  }
}

asio::awaitable<void> TcpConnect(const std::string& host, int port, absl::Duration timeout,
                                 std::string* err, bool* ok) {
  auto ex = co_await asio::this_coro::executor;
  beast::tcp_stream stream(ex);
  *ok = co_await Dial(stream, host, port, DeadlineFor(timeout), err);
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream.close();
}

}  // namespace

std::string FormatURL(const std::string& scheme, const std::string& host, int port,
                      const std::string& path) {
  std::string p = path;
  if (p.empty() || p[0] != '/') p = "/" + p;
  return absl::StrCat(scheme, "://", JoinHostPort(host, port), p);
}

absl::StatusOr<HttpGetResult> HttpGet(const HttpGetRequest& request, absl::Duration timeout,
                                      bool* tls_got_http) {
  absl::StatusOr<HttpGetResult> out = absl::InternalError("HTTP request did not complete");
  if (tls_got_http != nullptr) *tls_got_http = false;
  const absl::Status run =
      RunCoroutine([&] { return GetWithRedirects(request, timeout, &out, tls_got_http); });
  if (!run.ok()) {
    const std::string url = FormatURL(request.scheme, request.host, request.port, request.path);
    if (absl::IsCancelled(run)) {
      return absl::CancelledError(absl::StrCat("Get ", log::Quote(url), ": context canceled"));
    }
    return absl::UnavailableError(absl::StrCat("Get ", log::Quote(url), ": ", run.message()));
  }
  return out;
}

ProbeOutcome HttpProbe(const HttpGetRequest& request, absl::Duration timeout) {
  ProbeOutcome out;
  auto res = HttpGet(request, timeout);
  if (!res.ok()) {
    out.result = ProbeResult::kFailure;
    out.output = std::string(res.status().message());
    return out;
  }
  if (res->status_code >= 200 && res->status_code < 400) {
    if (res->status_code >= 300) {
      KLOG_V(4, "Probe terminated redirects", "url",
             FormatURL(request.scheme, request.host, request.port, request.path), "statusCode",
             res->status_code);
      out.result = ProbeResult::kWarning;
      out.output = "Probe terminated redirects, Response body: " + res->body;
      return out;
    }
    out.result = ProbeResult::kSuccess;
    out.output = std::move(res->body);
    return out;
  }
  out.result = ProbeResult::kFailure;
  out.output = absl::StrCat("HTTP probe failed with statuscode: ", res->status_code);
  return out;
}

ProbeOutcome TcpProbe(const std::string& host, int port, absl::Duration timeout) {
  ProbeOutcome out;
  std::string err = "dial tcp: connection did not complete";
  bool ok = false;
  const absl::Status run = RunCoroutine([&] { return TcpConnect(host, port, timeout, &err, &ok); });
  if (!run.ok() && !absl::IsCancelled(run)) {
    ok = false;
    err = absl::StrCat("dial tcp ", JoinHostPort(host, port), ": ", run.message());
  }
  if (ok) {
    out.result = ProbeResult::kSuccess;
  } else {
    out.result = ProbeResult::kFailure;
    out.output = err;
  }
  return out;
}

}  // namespace kubelet::lifecycle
