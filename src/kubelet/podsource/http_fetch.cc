// The only translation unit of the pod sources that includes Boost.Beast / Asio SSL.
#include "kubelet/podsource/http_fetch.h"

#include <arpa/inet.h>
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
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "apiclient/resolve.h"
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

// Length of the RFC 3986 scheme that `url` starts with (ALPHA *( ALPHA / DIGIT / "+" / "-" /
// "." ) followed by ':'), or 0 when it has none.
size_t SchemeLength(std::string_view url) {
  for (size_t i = 0; i < url.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(url[i]);
    if (absl::ascii_isalpha(c)) continue;
    if (i > 0 && (absl::ascii_isdigit(c) || c == '+' || c == '-' || c == '.')) continue;
    return (c == ':' && i > 0) ? i : 0;
  }
  return 0;
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
  const size_t scheme_len = SchemeLength(rest);
  u.scheme = absl::AsciiStrToLower(AV(rest.substr(0, scheme_len)));
  if (u.scheme != "http" && u.scheme != "https") {
    return absl::InvalidArgumentError(absl::StrCat(
        "Get ", log::Quote(url), ": unsupported protocol scheme ", log::Quote(u.scheme)));
  }
  rest = rest.substr(scheme_len + 1);
  if (rest.substr(0, 2) != "//") {
    // "http:foo": an opaque URL without a host.
    return absl::InvalidArgumentError(
        absl::StrCat("Get ", log::Quote(url), ": http: no Host in request URL"));
  }
  rest = rest.substr(2);
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
  // An absolute reference keeps its own scheme, whatever it is ("file:", "mailto:", ...): the
  // request to it then fails as unsupported, as Go's client does.
  if (SchemeLength(loc) > 0) return std::string(loc);
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

// OpenSSL's reasons for bytes that are not a TLS record (a plain HTTP server, garbage).
bool IsNotTlsRecord(const boost::system::error_code& ec) {
  if (ec.category() != net::error::get_ssl_category()) return false;
  const int reason = ERR_GET_REASON(static_cast<unsigned long>(ec.value()));
  return reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_PACKET_LENGTH_TOO_LONG ||
         reason == SSL_R_UNKNOWN_PROTOCOL || reason == SSL_R_RECORD_LENGTH_MISMATCH;
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

struct HopResponse {
  int code = 0;
  std::string reason;
  std::string body;
  std::string location;
};

// Header names or values longer than this fail the exchange. Beast's own field container
// cannot hold a field over ~64 KiB (it throws std::length_error), and no manifest server needs
// one; the parser below keeps its own copy of the few fields it needs and never uses it.
constexpr size_t kMaxHeaderFieldBytes = 64 << 10;
// The whole response header (status line included), as a bound on memory per exchange.
constexpr size_t kMaxHeaderBytes = 1 << 20;
// The read buffer never grows past this; the parser consumes body bytes as they arrive, so
// only an oversized header (already rejected at kMaxHeaderBytes) could need more.
constexpr size_t kMaxBufferBytes = kMaxHeaderBytes + (64 << 10);
// Longest start line quoted back in a "malformed HTTP response" error.
constexpr size_t kMaxQuotedLine = 256;

// An HTTP/1.x response parser that keeps only what the client uses: status, reason, the first
// Location, and the body, appended as it arrives (never reserved from a claimed
// Content-Length). Limits are reported through error flags so the caller can word the error;
// no callback throws except std::bad_alloc, which Get() turns into an error.
class ResponseParser : public http::basic_parser<false> {
 public:
  explicit ResponseParser(size_t max_body) : max_body_(max_body) {
    header_limit(static_cast<std::uint32_t>(kMaxHeaderBytes));
    body_limit(max_body);
  }

  int code() const { return code_; }
  const std::string& reason() const { return reason_; }
  const std::string& location() const { return location_; }
  std::string& body() { return body_; }
  bool field_too_large() const { return field_too_large_; }
  bool body_too_large() const { return body_too_large_; }

 private:
  void on_request_impl(http::verb, beast::string_view, beast::string_view, int,
                       beast::error_code& ec) override {
    ec = http::error::bad_method;  // never called for a response parser
  }
  void on_response_impl(int code, beast::string_view reason, int, beast::error_code&) override {
    code_ = code;
    reason_.assign(reason.data(), reason.size());
  }
  void on_field_impl(http::field name, beast::string_view name_string, beast::string_view value,
                     beast::error_code& ec) override {
    if (name_string.size() > kMaxHeaderFieldBytes || value.size() > kMaxHeaderFieldBytes) {
      field_too_large_ = true;
      ec = http::error::header_limit;
      return;
    }
    // Trailer fields (after a chunked body) come through here too; like Go's Header.Get, only
    // the header's Location counts.
    if (name == http::field::location && !has_location_ && !is_header_done()) {
      has_location_ = true;
      location_ = std::string(TrimOws(std::string_view(value.data(), value.size())));
    }
  }
  void on_header_impl(beast::error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                         beast::error_code& ec) override {
    // A claimed length only bounds the exchange; nothing is reserved from it.
    if (content_length && *content_length > max_body_) {
      body_too_large_ = true;
      ec = http::error::body_limit;
    }
  }
  size_t on_body_impl(beast::string_view data, beast::error_code& ec) override {
    return Append(data, ec);
  }
  void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code&) override {}
  size_t on_chunk_body_impl(std::uint64_t, beast::string_view data,
                            beast::error_code& ec) override {
    return Append(data, ec);
  }
  void on_finish_impl(beast::error_code&) override {}

  size_t Append(beast::string_view data, beast::error_code& ec) {
    if (data.size() > max_body_ - body_.size()) {
      body_too_large_ = true;
      ec = http::error::body_limit;
      return 0;
    }
    body_.append(data.data(), data.size());
    return data.size();
  }

  static std::string_view TrimOws(std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return v;
  }

  const size_t max_body_;
  int code_ = 0;
  std::string reason_;
  std::string location_;
  bool has_location_ = false;
  std::string body_;
  bool field_too_large_ = false;
  bool body_too_large_ = false;
};

// The first line of what the server sent, for "malformed HTTP response" errors.
std::string FirstLine(const beast::flat_buffer& buffer) {
  const auto data = buffer.data();
  std::string_view bytes(static_cast<const char*>(data.data()), data.size());
  bytes = bytes.substr(0, bytes.find('\n'));
  if (!bytes.empty() && bytes.back() == '\r') bytes.remove_suffix(1);
  if (bytes.size() > kMaxQuotedLine) bytes = bytes.substr(0, kMaxQuotedLine);
  return std::string(bytes);
}

// Words a failed read the way Go's client reports it. Errors in the header carry the
// `Get "<url>": ` prefix (they come out of Client.Do); errors while reading the body do not
// (upstream reads the body after Do returned).
absl::Status ReadError(beast::error_code ec, const ResponseParser& parser,
                       const beast::flat_buffer& buffer, const std::string& prefix) {
  const bool in_body = parser.is_header_done();
  const std::string broken = "net/http: HTTP/1.x transport connection broken: ";
  if (parser.body_too_large() || ec == http::error::body_limit) {
    return absl::ResourceExhaustedError("the read limit is reached");
  }
  if (parser.field_too_large()) {
    return absl::ResourceExhaustedError(absl::StrCat(prefix,
                                                     "net/http: server response header field "
                                                     "exceeded ",
                                                     kMaxHeaderFieldBytes, " bytes; aborted"));
  }
  if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
    return absl::ResourceExhaustedError(absl::StrCat(
        prefix, "net/http: server response headers exceeded ", kMaxHeaderBytes, " bytes; aborted"));
  }
  if (ec == http::error::end_of_stream) return absl::UnavailableError(prefix + "EOF");
  if (ec == http::error::partial_message) {
    return absl::UnavailableError(in_body ? "unexpected EOF" : prefix + "unexpected EOF");
  }
  if (ec == http::error::bad_chunk || ec == http::error::bad_chunk_extension) {
    return absl::UnavailableError(in_body ? std::string("malformed chunked encoding")
                                          : prefix + "malformed chunked encoding");
  }
  if (ec == http::error::bad_content_length) {
    return absl::UnavailableError(absl::StrCat(prefix, broken, "bad Content-Length"));
  }
  if (ec == http::error::bad_transfer_encoding) {
    return absl::UnavailableError(absl::StrCat(prefix, broken, "unsupported transfer encoding"));
  }
  if (ec == http::error::bad_field || ec == http::error::bad_value ||
      ec == http::error::bad_obs_fold) {
    return absl::UnavailableError(absl::StrCat(prefix, broken, "malformed MIME header line"));
  }
  if (!in_body && (ec == http::error::bad_version || ec == http::error::bad_status ||
                   ec == http::error::bad_reason || ec == http::error::bad_line_ending)) {
    return absl::UnavailableError(
        absl::StrCat(prefix, broken, "malformed HTTP response ", log::Quote(FirstLine(buffer))));
  }
  return absl::UnavailableError(in_body ? LowerFirst(ec.message())
                                        : absl::StrCat(prefix, LowerFirst(ec.message())));
}

// Turns the outcome of a read into a hop result.
absl::StatusOr<HopResponse> FinishRead(beast::error_code ec, ResponseParser& parser,
                                       const beast::flat_buffer& buffer,
                                       const std::string& prefix) {
  if (ec) return ReadError(ec, parser, buffer, prefix);
  HopResponse out;
  out.code = parser.code();
  out.reason = parser.reason();
  out.location = parser.location();
  out.body = std::move(parser.body());
  return out;
}

// Go's client skips up to this many 1xx responses (101 aside) before the final one.
constexpr int kMaxInformationalResponses = 5;

// The state of reading one exchange's response; outlives the reads.
struct ResponseRead {
  ResponseRead(size_t max_body, std::string prefix)
      : max_body(max_body), prefix(std::move(prefix)), buffer(kMaxBufferBytes) {}
  const size_t max_body;
  const std::string prefix;  // `Get "<url>": `
  beast::flat_buffer buffer;
  std::optional<ResponseParser> parser;  // the response being read
  int informational = 0;
  bool header_done() const { return parser.has_value() && parser->is_header_done(); }
};

// Reads the final response from `stream` and calls done(StatusOr<HopResponse>). Shared by real
// connections and ParseHttpResponseBytes(), so both run the same parser, limits and reads.
template <class Stream, class Done>
void AsyncReadResponse(Stream& stream, ResponseRead& r, Done done) {
  r.parser.emplace(r.max_body);
  http::async_read(
      stream, r.buffer, *r.parser,
      [&stream, &r, done = std::move(done)](beast::error_code ec, size_t) mutable {
        ResponseParser& parser = *r.parser;
        // A TLS peer closing without close_notify ends a body delimited by the connection's end.
        if (ec == ssl::error::stream_truncated && parser.is_header_done() && parser.need_eof()) {
          beast::error_code eof_ec;
          parser.put_eof(eof_ec);
          ec = eof_ec;
        }
        const int code = parser.code();
        if (!ec && code >= 100 && code < 200 && code != 101) {
          if (++r.informational > kMaxInformationalResponses) {
            done(absl::StatusOr<HopResponse>(absl::UnavailableError(
                r.prefix + "net/http: too many 1xx informational responses")));
            return;
          }
          AsyncReadResponse(stream, r, std::move(done));
          return;
        }
        done(FinishRead(ec, parser, r.buffer, r.prefix));
      });
}

HttpFetchResponse ToFetchResponse(HopResponse hop) {
  HttpFetchResponse out;
  out.status_code = hop.code;
  out.status =
      hop.reason.empty() ? absl::StrCat(hop.code) : absl::StrCat(hop.code, " ", hop.reason);
  out.location = std::move(hop.location);
  out.body = std::move(hop.body);
  return out;
}

// An in-memory AsyncReadStream: hands out `data` in reads of at most `chunk` bytes, then EOF.
class MemoryReadStream {
 public:
  using executor_type = net::io_context::executor_type;

  MemoryReadStream(net::io_context& ioc, std::string_view data, size_t chunk)
      : ioc_(ioc), data_(data), chunk_(std::max<size_t>(chunk, 1)) {}

  executor_type get_executor() { return ioc_.get_executor(); }

  template <class MutableBufferSequence, class ReadHandler>
  void async_read_some(const MutableBufferSequence& buffers, ReadHandler&& handler) {
    beast::error_code ec;
    size_t n = 0;
    if (pos_ >= data_.size()) {
      ec = net::error::eof;
    } else {
      const size_t take = std::min(chunk_, data_.size() - pos_);
      n = net::buffer_copy(buffers, net::buffer(data_.data() + pos_, take));
      pos_ += n;
    }
    net::post(ioc_, beast::bind_front_handler(std::forward<ReadHandler>(handler), ec, n));
  }

 private:
  net::io_context& ioc_;
  std::string_view data_;
  size_t chunk_;
  size_t pos_ = 0;
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
    // The lookup runs off this thread, so a slow resolver never holds up Cancel()/Stop().
    std::optional<apiclient::Resolved> r = apiclient::Resolve(
        u.host, u.port, [&] { return Cancelled() || SteadyClock::now() >= deadline; });
    if (!r) {
      if (Cancelled()) return cancelled_error();
      return timeout_error(false);
    }
    if (!r->error.empty()) {
      return absl::UnavailableError(
          absl::StrCat(prefix, "dial tcp: lookup ", u.host, ": ", r->error));
    }
    endpoints = std::move(r->endpoints);
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

  http::request<http::empty_body> req;
  // Beast's field storage throws for a field over ~64 KiB; a Host or Referer that long can only
  // come from a server's Location, and fails this request instead.
  try {
    req.method(http::verb::get);
    req.target(u.target);
    req.version(11);
    req.set(http::field::host, u.authority);
    for (const auto& [name, value] : headers) req.insert(name, value);
  } catch (const std::length_error&) {
    return absl::InvalidArgumentError(absl::StrCat(
        prefix, "net/http: request header field exceeded ", kMaxHeaderFieldBytes, " bytes"));
  }

  ResponseRead response(max_body, prefix);
  std::optional<absl::StatusOr<HopResponse>> outcome;  // set once the exchange finished or failed
  const std::string dial_target = JoinHostPort(endpoints.front().address().to_string(), u.port);

  auto on_read = [&](absl::StatusOr<HopResponse> result) { outcome = std::move(result); };
  auto exchange = [&](auto& stream) {
    http::async_write(stream, req, [&](beast::error_code ec, size_t) {
      if (ec) {
        outcome = absl::UnavailableError(absl::StrCat(prefix, LowerFirst(ec.message())));
        return;
      }
      AsyncReadResponse(stream, response, on_read);
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
        std::string reason;
        if (verify != X509_V_OK) {
          reason = absl::StrCat("tls: failed to verify certificate: x509: ",
                                X509_verify_cert_error_string(verify));
        } else if (ec == net::error::eof || ec == ssl::error::stream_truncated) {
          reason = "EOF";  // the peer closed during the handshake
        } else if (IsNotTlsRecord(ec)) {
          reason = "tls: first record does not look like a TLS handshake";
        } else {
          reason = absl::StrCat("tls: handshake failure: ", LowerFirst(ec.message()));
        }
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
      // No handler is expected to throw (bad_alloc aside); never let one escape.
      outcome = absl::InternalError(absl::StrCat(prefix, e.what()));
    }
  }
  if (!outcome.has_value()) {
    if (Cancelled()) return cancelled_error();
    return timeout_error(response.header_done());
  }
  return *std::move(outcome);
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
        return ToFetchResponse(*std::move(hop));
      }
      // Go's defaultCheckRedirect: at most 10 requests; the error names the Location.
      if (redirects + 1 >= options.max_redirects) {
        return absl::FailedPreconditionError(absl::StrCat("Get ", log::Quote(hop->location),
                                                          ": stopped after ", options.max_redirects,
                                                          " redirects"));
      }
      const std::string next_url = ResolveReference(current, hop->location);
      auto next = ParseUrl(next_url);
      if (!next.ok() && absl::StartsWith(next.status().message(), "Get ")) {
        // A URL that parses but cannot be fetched (another scheme, no host): the error of the
        // request to it, as Go's client reports it.
        return next.status();
      }
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

absl::StatusOr<HttpFetchResponse> ParseHttpResponseBytes(std::string_view url, std::string_view raw,
                                                         size_t read_size,
                                                         const HttpFetchOptions& options) {
  const std::string prefix = absl::StrCat("Get ", log::Quote(url), ": ");
  try {
    net::io_context ioc(1);
    MemoryReadStream stream(ioc, raw, read_size);
    ResponseRead response(options.max_body_bytes, prefix);
    std::optional<absl::StatusOr<HopResponse>> outcome;
    AsyncReadResponse(stream, response,
                      [&](absl::StatusOr<HopResponse> result) { outcome = std::move(result); });
    ioc.run();
    if (!outcome.has_value()) return absl::InternalError(prefix + "response read did not finish");
    if (!outcome->ok()) return outcome->status();
    return ToFetchResponse(**std::move(outcome));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(prefix, e.what()));
  }
}

}  // namespace kubelet::podsource
