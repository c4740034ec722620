// The HTTP/1 side of a connection (Session, see http_server_internal.h): the TLS handshake,
// reading a request's header and body with its limits and timeouts, the redirect to a clean
// path, routing, the filter (inline or on the filter pool) and the handler, writing a plain
// response, keep-alive, eviction and close; plus the request-target parsing and response-head
// helpers. Streamed responses and tunnels are handed on to http_stream.cc and http_tunnel.cc.
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cctype>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/percent.h"
#include "server/http_server_internal.h"

namespace kubelet::server::internal {
namespace {

bool ParseTarget(std::string_view target, HttpRequest* req) {
  size_t q = target.find('?');
  std::string_view path = target.substr(0, q);
  if (!PercentDecode(path, false, &req->path)) return false;
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
    if (!PercentDecode(kv.substr(0, eq), true, &key)) return false;
    if (eq != std::string_view::npos && !PercentDecode(kv.substr(eq + 1), true, &value))
      return false;
    req->query.emplace(std::move(key), std::move(value));
  }
  return true;
}

std::string ReasonPhrase(int status) {
  auto r = http::obsolete_reason(static_cast<http::status>(status));
  return std::string(r.data(), r.size());
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

// Status line and headers of a response, written by hand (Beast's fields throw on values over
// 64 KiB, and a Location header can echo a client's long target). CR and LF in a value become
// spaces, as Go's header writer does. Without `content_length` the body is chunked.
std::string BuildHead(int status, const std::vector<std::pair<std::string, std::string>>& headers,
                      std::optional<size_t> content_length, bool keep_alive) {
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

template <class Stream>
void Session<Stream>::Evict() {
  evicted_ = true;
  impl_->sessions.erase(self_in_list_);
  KLOG_V(4, "Dropping an idle connection to admit a new one", "server", impl_->options.name,
         "remote", remote_);
  Close();
}

template <class Stream>
void Session<Stream>::Start() {
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

template <class Stream>
void Session<Stream>::Read() {
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

template <class Stream>
bool Session<Stream>::ConnectionGone(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == http::error::partial_message ||
         ec == beast::error::timeout || ec == asio::error::operation_aborted ||
         ec == asio::error::connection_reset || ec == asio::error::eof ||
         ec == ssl::error::stream_truncated || ec.category() == asio::error::get_ssl_category() ||
         ec.category() == asio::error::get_system_category();
}

template <class Stream>
void Session<Stream>::RejectRequest(int status, std::string text) {
  HttpResponse out;
  out.Error(status, std::move(text));
  out.body.pop_back();
  Respond(std::move(out), /*keep_alive=*/false);
}

template <class Stream>
template <class Fn>
bool Session<Stream>::Guarded(const char* what, Fn&& fn, HttpResponse* out,
                              const std::string& path) {
  const std::string& where = path.empty() ? request_.path : path;
  try {
    return fn();
  } catch (const std::exception& e) {
    KLOG_ERROR(absl::InternalError(e.what()), "HTTP handler failed", "server", impl_->options.name,
               "stage", what, "path", where);
  } catch (...) {
    KLOG_ERROR(absl::InternalError("unknown exception"), "HTTP handler failed", "server",
               impl_->options.name, "stage", what, "path", where);
  }
  *out = HttpResponse();
  out->Error(500, "Internal Server Error");
  return false;
}

template <class Stream>
void Session<Stream>::OnHeader(beast::error_code ec) {
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

template <class Stream>
void Session<Stream>::AfterFilter(bool keep_alive, bool body_pending) {
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

template <class Stream>
void Session<Stream>::Dispatch(bool keep_alive) {
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

template <class Stream>
void Session<Stream>::Respond(HttpResponse out, bool keep_alive) {
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

template <class Stream>
void Session<Stream>::Close() {
  beast::error_code ignored;
  Tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
  Tcp().socket().close(ignored);
}

// The members defined here, for both kinds of connection (see http_server_internal.h).
template void Session<PlainStream>::Evict();
template void Session<PlainStream>::Start();
template void Session<PlainStream>::Read();
template bool Session<PlainStream>::ConnectionGone(const beast::error_code&);
template void Session<PlainStream>::RejectRequest(int, std::string);
template void Session<PlainStream>::OnHeader(beast::error_code);
template void Session<PlainStream>::AfterFilter(bool, bool);
template void Session<PlainStream>::Dispatch(bool);
template void Session<PlainStream>::Respond(HttpResponse, bool);
template void Session<PlainStream>::Close();
template void Session<TlsStream>::Evict();
template void Session<TlsStream>::Start();
template void Session<TlsStream>::Read();
template bool Session<TlsStream>::ConnectionGone(const beast::error_code&);
template void Session<TlsStream>::RejectRequest(int, std::string);
template void Session<TlsStream>::OnHeader(beast::error_code);
template void Session<TlsStream>::AfterFilter(bool, bool);
template void Session<TlsStream>::Dispatch(bool);
template void Session<TlsStream>::Respond(HttpResponse, bool);
template void Session<TlsStream>::Close();

}  // namespace kubelet::server::internal
