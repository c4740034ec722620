// The only translation unit of the pod sources that includes Boost.Beast / Asio SSL.
#include "kubelet/podsource/http_fetch.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <sys/socket.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::podsource {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

namespace {

struct ParsedUrl {
  std::string scheme;     // lower-case
  std::string userinfo;   // raw, without '@'
  std::string host;       // without brackets
  std::string port;       // explicit or the scheme default
  std::string authority;  // host[:port] as written (the Host header)
  std::string target;     // escaped path and query
  std::string referer;    // the URL without userinfo and fragment
};

bool IsDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::string PercentEncodeLoose(std::string_view s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (c == ' ' || c >= 0x80) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string PercentDecode(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string Base64(std::string_view in) {
  static const char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (static_cast<unsigned char>(in[i]) << 16) |
                 (static_cast<unsigned char>(in[i + 1]) << 8) |
                 static_cast<unsigned char>(in[i + 2]);
    out += kChars[(v >> 18) & 63];
    out += kChars[(v >> 12) & 63];
    out += kChars[(v >> 6) & 63];
    out += kChars[v & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = static_cast<unsigned char>(in[i]) << 16;
    out += kChars[(v >> 18) & 63];
    out += kChars[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v =
        (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8);
    out += kChars[(v >> 18) & 63];
    out += kChars[(v >> 12) & 63];
    out += kChars[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

// `parse "<url>": <reason>` as net/url reports it.
absl::Status ParseError(std::string_view url, std::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat("parse ", log::Quote(url), ": ", AV(reason)));
}

// Go's url.Parse followed by the client's checks. Errors are complete messages.
absl::StatusOr<ParsedUrl> ParseUrl(std::string_view url) {
  for (unsigned char c : url) {
    if (c < 0x20 || c == 0x7f) return ParseError(url, "net/url: invalid control character in URL");
  }
  ParsedUrl u;
  std::string_view rest = url;
  if (size_t hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
  const size_t sep = rest.find("://");
  if (sep == std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("Get ", log::Quote(url), ": unsupported protocol scheme \"\""));
  }
  u.scheme = absl::AsciiStrToLower(AV(rest.substr(0, sep)));
  if (u.scheme != "http" && u.scheme != "https") {
    return absl::InvalidArgumentError(absl::StrCat(
        "Get ", log::Quote(url), ": unsupported protocol scheme ", log::Quote(u.scheme)));
  }
  rest = rest.substr(sep + 3);
  const size_t auth_end = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, auth_end);
  std::string_view path_query =
      auth_end == std::string_view::npos ? std::string_view() : rest.substr(auth_end);
  if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
    u.userinfo = std::string(authority.substr(0, at));
    authority = authority.substr(at + 1);
  }
  u.authority = std::string(authority);
  std::string_view port;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return ParseError(url, "missing ']' in host");
    u.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') {
        return ParseError(url, absl::StrCat("invalid port ", log::Quote(after), " after host"));
      }
      port = after.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      u.host = std::string(authority.substr(0, colon));
    } else {
      u.host = std::string(authority);
    }
  }
  if (!port.empty() && !IsDigits(port)) {
    return ParseError(
        url, absl::StrCat("invalid port ", log::Quote(absl::StrCat(":", AV(port))), " after host"));
  }
  for (char c : u.host) {
    if (std::string_view(" <>\"{}|\\^`").find(c) != std::string_view::npos) {
      return ParseError(
          url, absl::StrCat("invalid character ", log::Quote(std::string(1, c)), " in host name"));
    }
  }
  if (u.host.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Get ", log::Quote(url), ": http: no Host in request URL"));
  }
  u.port = !port.empty() ? std::string(port) : (u.scheme == "https" ? "443" : "80");
  std::string target(path_query);
  if (target.empty() || target[0] == '?') target.insert(0, "/");
  u.target = PercentEncodeLoose(target);
  u.referer = absl::StrCat(u.scheme, "://", u.authority, AV(path_query));
  return u;
}

// Resolves a Location header against the URL it came from.
std::string ResolveReference(const ParsedUrl& base, std::string_view loc) {
  if (loc.find("://") != std::string_view::npos) return std::string(loc);
  if (loc.substr(0, 2) == "//") return absl::StrCat(base.scheme, ":", AV(loc));
  const std::string prefix = absl::StrCat(base.scheme, "://", base.authority);
  if (!loc.empty() && loc[0] == '/') return absl::StrCat(prefix, AV(loc));
  std::string dir = base.target.substr(0, base.target.find('?'));
  dir = dir.substr(0, dir.rfind('/') + 1);
  if (!loc.empty() && loc[0] == '?') {
    return absl::StrCat(prefix, base.target.substr(0, base.target.find('?')), AV(loc));
  }
  return absl::StrCat(prefix, dir, AV(loc));
}

// textproto.CanonicalMIMEHeaderKey.
std::string CanonicalHeaderKey(std::string_view key) {
  for (char c : key) {
    const bool token = absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
                       std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    if (!token) return std::string(key);
  }
  std::string out(key);
  bool upper = true;
  for (char& c : out) {
    c = upper ? absl::ascii_toupper(static_cast<unsigned char>(c))
              : absl::ascii_tolower(static_cast<unsigned char>(c));
    upper = c == '-';
  }
  return out;
}

bool IsIpLiteral(const std::string& host) {
  in6_addr a6;
  in_addr a4;
  return ::inet_pton(AF_INET, host.c_str(), &a4) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), &a6) == 1;
}

bool SameHostForCredentials(const ParsedUrl& initial, const ParsedUrl& dest) {
  const std::string ih = absl::AsciiStrToLower(initial.host);
  const std::string dh = absl::AsciiStrToLower(dest.host);
  if (initial.port != dest.port) return false;
  if (ih == dh) return true;
  return dh.size() > ih.size() + 1 && dh.compare(dh.size() - ih.size(), ih.size(), ih) == 0 &&
         dh[dh.size() - ih.size() - 1] == '.';
}

std::string LowerFirst(std::string s) {
  if (!s.empty()) s[0] = absl::ascii_tolower(static_cast<unsigned char>(s[0]));
  return s;
}

std::string JoinHostPort(const std::string& host, const std::string& port) {
  if (host.find(':') != std::string::npos) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

// getaddrinfo on a detached thread, so a slow resolver can never hold up Cancel()/Stop().
struct ResolveState {
  absl::Mutex mu;
  bool done ABSL_GUARDED_BY(mu) = false;
  std::vector<tcp::endpoint> endpoints ABSL_GUARDED_BY(mu);
  std::string error ABSL_GUARDED_BY(mu);
};

std::shared_ptr<ResolveState> StartResolve(const std::string& host, const std::string& port) {
  auto state = std::make_shared<ResolveState>();
  auto work = [state, host, port]() {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
    std::vector<tcp::endpoint> eps;
    std::string error;
    if (rc != 0) {
      error = (rc == EAI_NONAME || rc == EAI_NODATA) ? "no such host" : gai_strerror(rc);
    } else {
      for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
        if (ai->ai_family == AF_INET) {
          const auto* sin = reinterpret_cast<const sockaddr_in*>(ai->ai_addr);
          eps.emplace_back(net::ip::address_v4(ntohl(sin->sin_addr.s_addr)), ntohs(sin->sin_port));
        } else if (ai->ai_family == AF_INET6) {
          const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(ai->ai_addr);
          net::ip::address_v6::bytes_type bytes;
          std::memcpy(bytes.data(), sin6->sin6_addr.s6_addr, bytes.size());
          eps.emplace_back(net::ip::address_v6(bytes, sin6->sin6_scope_id), ntohs(sin6->sin6_port));
        }
      }
      ::freeaddrinfo(res);
      if (eps.empty()) error = "no such host";
    }
    absl::MutexLock lock(&state->mu);
    state->endpoints = std::move(eps);
    state->error = std::move(error);
    state->done = true;
  };
  try {
    std::thread(std::move(work)).detach();
  } catch (const std::exception& e) {
    absl::MutexLock lock(&state->mu);
    state->error = e.what();
    state->done = true;
  }
  return state;
}

struct HopResponse {
  int code = 0;
  std::string reason;
  std::string body;
  std::string location;
};

}  // namespace

struct HttpFetcher::Impl {
  absl::Mutex mu;
  bool cancelled ABSL_GUARDED_BY(mu) = false;
  net::io_context* running ABSL_GUARDED_BY(mu) = nullptr;
  std::unique_ptr<ssl::context> tls_ctx;  // used by the Get() thread only

  bool Cancelled() {
    absl::MutexLock lock(&mu);
    return cancelled;
  }

  absl::StatusOr<ssl::context*> TlsContext() {
    if (tls_ctx) return tls_ctx.get();
    try {
      auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
      ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
      ctx->set_default_verify_paths();
      ctx->set_verify_mode(ssl::verify_peer);
      tls_ctx = std::move(ctx);
      return tls_ctx.get();
    } catch (const std::exception& e) {
      return absl::InternalError(absl::StrCat("tls: ", e.what()));
    }
  }

  absl::StatusOr<HopResponse> Hop(const ParsedUrl& u, const std::string& url_for_errors,
                                  const std::vector<std::pair<std::string, std::string>>& headers,
                                  size_t max_body, SteadyClock::time_point deadline);
};

HttpFetcher::HttpFetcher() : impl_(std::make_unique<Impl>()) {}
HttpFetcher::~HttpFetcher() = default;

void HttpFetcher::Cancel() {
  absl::MutexLock lock(&impl_->mu);
  impl_->cancelled = true;
  if (impl_->running != nullptr) impl_->running->stop();
}

absl::StatusOr<HopResponse> HttpFetcher::Impl::Hop(
    const ParsedUrl& u, const std::string& url_for_errors,
    const std::vector<std::pair<std::string, std::string>>& headers, size_t max_body,
    SteadyClock::time_point deadline) {
  const std::string prefix = absl::StrCat("Get ", log::Quote(url_for_errors), ": ");
  auto timeout_error = [&](bool reading_body) {
    return absl::DeadlineExceededError(
        reading_body
            ? "context deadline exceeded (Client.Timeout or context cancellation while reading "
              "body)"
            : absl::StrCat(prefix,
                           "context deadline exceeded (Client.Timeout exceeded while awaiting "
                           "headers)"));
  };
  auto cancelled_error = [&]() { return absl::CancelledError(prefix + "context canceled"); };

  // Name resolution (IP literals need none).
  std::vector<tcp::endpoint> endpoints;
  boost::system::error_code addr_ec;
  const auto literal = net::ip::make_address(u.host, addr_ec);
  const int port_num = std::atoi(u.port.c_str());
  if (port_num <= 0 || port_num > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, "dial tcp ", JoinHostPort(u.host, u.port), ": invalid port"));
  }
  if (!addr_ec) {
    endpoints.emplace_back(literal, static_cast<uint16_t>(port_num));
  } else {
    auto state = StartResolve(u.host, u.port);
    while (true) {
      {
        absl::MutexLock lock(&state->mu);
        auto done = [&state]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state->mu) { return state->done; };
        state->mu.AwaitWithTimeout(absl::Condition(&done), absl::Milliseconds(20));
        if (state->done) {
          if (!state->error.empty()) {
            return absl::UnavailableError(
                absl::StrCat(prefix, "dial tcp: lookup ", u.host, ": ", state->error));
          }
          endpoints = state->endpoints;
          break;
        }
      }
      if (Cancelled()) return cancelled_error();
      if (SteadyClock::now() >= deadline) return timeout_error(false);
    }
  }

  absl::StatusOr<ssl::context*> tls_context = static_cast<ssl::context*>(nullptr);
  if (u.scheme == "https") {
    tls_context = TlsContext();
    if (!tls_context.ok()) return tls_context.status();
  }

  net::io_context ioc(1);
  {
    absl::MutexLock lock(&mu);
    if (cancelled) return cancelled_error();
    running = &ioc;
  }
  struct Unregister {
    Impl* impl;
    ~Unregister() {
      absl::MutexLock lock(&impl->mu);
      impl->running = nullptr;
    }
  } unregister{this};

  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure;
  if (*tls_context != nullptr) {
    secure.emplace(ioc, **tls_context);
  } else {
    plain.emplace(ioc);
  }
  beast::tcp_stream& lowest = secure ? secure->next_layer() : *plain;

  http::request<http::empty_body> req{http::verb::get, u.target, 11};
  req.set(http::field::host, u.authority);
  for (const auto& [name, value] : headers) req.insert(name, value);

  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.header_limit(1 << 20);
  parser.body_limit(max_body);

  std::optional<absl::Status> outcome;  // set once the exchange finished or failed
  const std::string dial_target = JoinHostPort(endpoints.front().address().to_string(), u.port);

  auto on_read = [&](beast::error_code ec, size_t) {
    if (ec == ssl::error::stream_truncated && parser.is_header_done() && parser.need_eof()) {
      beast::error_code eof_ec;
      parser.put_eof(eof_ec);
      ec = eof_ec;
    }
    if (ec == http::error::body_limit) {
      outcome = absl::ResourceExhaustedError("the read limit is reached");
    } else if (ec == http::error::header_limit) {
      outcome = absl::ResourceExhaustedError(absl::StrCat(
          prefix, "net/http: server response headers exceeded ", 1 << 20, " bytes; aborted"));
    } else if (ec) {
      outcome = absl::UnavailableError(parser.is_header_done()
                                           ? LowerFirst(ec.message())
                                           : absl::StrCat(prefix, LowerFirst(ec.message())));
    } else if (parser.get().body().size() > max_body) {
      outcome = absl::ResourceExhaustedError("the read limit is reached");
    } else {
      outcome = absl::OkStatus();
    }
  };
  auto exchange = [&](auto& stream) {
    http::async_write(stream, req, [&](beast::error_code ec, size_t) {
      if (ec) {
        outcome = absl::UnavailableError(absl::StrCat(prefix, LowerFirst(ec.message())));
        return;
      }
      // The header first: Beast 1.74 does not enforce body_limit against a Content-Length
      // that arrives in the same read as the header, so check it here.
      http::async_read_header(stream, buffer, parser, [&](beast::error_code ec, size_t n) {
        const auto length = parser.content_length();
        if (!ec && length.has_value() && *length > max_body) ec = http::error::body_limit;
        if (ec || parser.is_done()) {
          on_read(ec, n);
          return;
        }
        http::async_read(stream, buffer, parser, on_read);
      });
    });
  };
  lowest.async_connect(endpoints, [&](beast::error_code ec, const tcp::endpoint&) {
    if (ec) {
      outcome = absl::UnavailableError(
          absl::StrCat(prefix, "dial tcp ", dial_target, ": connect: ", LowerFirst(ec.message())));
      return;
    }
    if (!secure) {
      exchange(*plain);
      return;
    }
    SSL* ssl_handle = secure->native_handle();
    if (!IsIpLiteral(u.host)) SSL_set_tlsext_host_name(ssl_handle, u.host.c_str());
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl_handle);
    if (IsIpLiteral(u.host)) {
      X509_VERIFY_PARAM_set1_ip_asc(param, u.host.c_str());
    } else {
      X509_VERIFY_PARAM_set1_host(param, u.host.c_str(), 0);
    }
    secure->async_handshake(ssl::stream_base::client, [&, ssl_handle](beast::error_code ec) {
      if (ec) {
        const long verify = SSL_get_verify_result(ssl_handle);
        std::string reason =
            verify != X509_V_OK
                ? absl::StrCat("tls: failed to verify certificate: x509: ",
                               X509_verify_cert_error_string(verify))
                : absl::StrCat("tls: handshake failure: ", LowerFirst(ec.message()));
        outcome = absl::UnavailableError(absl::StrCat(prefix, reason));
        return;
      }
      exchange(*secure);
    });
  });

  const auto now = SteadyClock::now();
  if (deadline > now) {
    try {
      ioc.run_for(deadline - now);
    } catch (const std::exception& e) {
      outcome = absl::InternalError(absl::StrCat(prefix, e.what()));
    }
  }
  if (!outcome.has_value()) {
    if (Cancelled()) return cancelled_error();
    return timeout_error(parser.is_header_done());
  }
  if (!outcome->ok()) return *outcome;
  auto& res = parser.get();
  HopResponse out;
  out.code = static_cast<int>(res.result_int());
  out.reason = std::string(res.reason());
  out.location = std::string(res[http::field::location]);
  out.body = std::move(res.body());
  return out;
}

absl::StatusOr<HttpFetchResponse> HttpFetcher::Get(const std::string& url, const HttpHeader& header,
                                                   const HttpFetchOptions& options) {
  try {
    const auto deadline = SteadyClock::now() + absl::ToChronoNanoseconds(options.timeout);
    auto initial = ParseUrl(url);
    if (!initial.ok()) return initial.status();

    // Request headers (Header.Add canonicalizes keys; Host is not a header in Go).
    std::vector<std::pair<std::string, std::string>> base_headers;
    bool has_ua = false;
    for (const auto& [key, values] : header) {
      const std::string name = CanonicalHeaderKey(key);
      if (name == "Host") continue;
      if (name == "User-Agent") has_ua = true;
      for (const auto& v : values) base_headers.emplace_back(name, v);
    }
    if (!has_ua) base_headers.emplace_back("User-Agent", "Go-http-client/1.1");

    ParsedUrl current = *initial;
    std::string current_url = url;
    std::string referer;
    for (int redirects = 0;; ++redirects) {
      std::vector<std::pair<std::string, std::string>> headers;
      bool has_auth = false;
      const bool same_host = SameHostForCredentials(*initial, current);
      for (const auto& [name, value] : base_headers) {
        if (!same_host && (name == "Authorization" || name == "Www-Authenticate" ||
                           name == "Cookie" || name == "Cookie2")) {
          continue;
        }
        if (name == "Authorization") has_auth = true;
        headers.emplace_back(name, value);
      }
      if (!current.userinfo.empty() && !has_auth) {
        std::string_view ui = current.userinfo;
        const size_t colon = ui.find(':');
        const std::string user = PercentDecode(ui.substr(0, colon));
        const std::string pass =
            colon == std::string_view::npos ? "" : PercentDecode(ui.substr(colon + 1));
        headers.emplace_back("Authorization", "Basic " + Base64(user + ":" + pass));
      }
      if (!referer.empty()) headers.emplace_back("Referer", referer);

      auto hop = impl_->Hop(current, current_url, headers, options.max_body_bytes, deadline);
      if (!hop.ok()) return hop.status();
      const int code = hop->code;
      const bool redirect = code == 301 || code == 302 || code == 303 || code == 307 || code == 308;
      if (!redirect || hop->location.empty()) {
        HttpFetchResponse out;
        out.status_code = code;
        out.status =
            hop->reason.empty() ? absl::StrCat(code) : absl::StrCat(code, " ", hop->reason);
        out.body = std::move(hop->body);
        return out;
      }
      // Go's defaultCheckRedirect: at most 10 requests; the error names the Location.
      if (redirects + 1 >= options.max_redirects) {
        return absl::FailedPreconditionError(absl::StrCat("Get ", log::Quote(hop->location),
                                                          ": stopped after ", options.max_redirects,
                                                          " redirects"));
      }
      const std::string next_url = ResolveReference(current, hop->location);
      auto next = ParseUrl(next_url);
      if (!next.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("Get ", log::Quote(current_url), ": failed to parse Location header ",
                         log::Quote(hop->location), ": ", next.status().message()));
      }
      referer = (current.scheme == "https" && next->scheme == "http") ? "" : current.referer;
      KLOG_V(4, "Following redirect", "from", current_url, "to", next_url);
      current = *std::move(next);
      current_url = next_url;
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("Get ", log::Quote(url), ": ", e.what()));
  }
}

}  // namespace kubelet::podsource
