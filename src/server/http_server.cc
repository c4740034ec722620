#include "server/http_server.h"

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace kubelet::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
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

}  // namespace

std::vector<std::string> HttpRequest::QueryValues(const std::string& key) const {
  std::vector<std::string> out;
  auto [b, e] = query.equal_range(key);
  for (auto it = b; it != e; ++it) out.push_back(it->second);
  return out;
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

  HttpServerOptions options;
  std::vector<std::pair<std::string, HttpHandler>> routes;
  asio::io_context ioc{1};
  std::optional<tcp::acceptor> acceptor;
  std::thread thread;
  std::atomic<int> connections{0};
  std::atomic<int> bound_port{0};
  std::atomic<bool> running{false};

  const HttpHandler* Route(const std::string& path) const {
    const HttpHandler* best = nullptr;
    size_t best_len = 0;
    for (const auto& [pattern, handler] : routes) {
      bool match =
          pattern.back() == '/' ? path.compare(0, pattern.size(), pattern) == 0 : path == pattern;
      if (match && pattern.size() >= best_len) {
        best = &handler;
        best_len = pattern.size();
      }
    }
    return best;
  }

  void Accept();
};

namespace {

// One connection. Owned by shared_ptr because its lifetime is that of the outstanding asio
// operations; the last completion handler to finish releases it.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, HttpServer::Impl* impl) : stream_(std::move(socket)), impl_(impl) {
    impl_->connections.fetch_add(1);
    beast::error_code ec;
    auto ep = stream_.socket().remote_endpoint(ec);
    if (!ec) remote_ = absl::StrCat(ep.address().to_string(), ":", ep.port());
  }
  ~Session() { impl_->connections.fetch_sub(1); }

  void Read() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(impl_->options.max_header_bytes));
    parser_->body_limit(impl_->options.max_body_bytes);
    stream_.expires_after(
        ToChrono(first_ ? impl_->options.read_timeout : impl_->options.idle_timeout));
    first_ = false;
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

 private:
  void OnRead(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
        ec == asio::error::eof) {
      Close();
      return;
    }
    HttpResponse out;
    bool keep_alive = false;
    if (ec) {
      // A malformed or oversized request: answer and drop the connection.
      if (ec == http::error::header_limit) {
        out.Error(431, "431 Request Header Fields Too Large");
      } else if (ec == http::error::body_limit) {
        out.Error(413, "413 Request Entity Too Large");
      } else {
        out.Error(400, "400 Bad Request");
      }
    } else {
      const auto& msg = parser_->get();
      HttpRequest req;
      req.method = std::string(msg.method_string());
      req.target = std::string(msg.target());
      req.remote_address = remote_;
      for (const auto& field : msg) {
        std::string name(field.name_string());
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        req.headers.emplace(std::move(name), std::string(field.value()));
      }
      req.body = msg.body();
      keep_alive = msg.keep_alive();
      if (!ParseTarget(req.target, &req)) {
        out.Error(400, "400 Bad Request");
        keep_alive = false;
      } else if (const HttpHandler* h = impl_->Route(req.path)) {
        (*h)(req, &out);
      } else {
        out.Error(404, "404 page not found");
      }
    }
    auto res = std::make_shared<http::response<http::string_body>>();
    res->version(11);
    res->result(static_cast<unsigned>(out.status));
    for (auto& [n, v] : out.headers) res->set(n, v);
    if (res->find(http::field::content_type) == res->end()) {
      res->set(http::field::content_type, "text/plain; charset=utf-8");
    }
    res->body() = std::move(out.body);
    res->keep_alive(keep_alive);
    res->prepare_payload();
    stream_.expires_after(ToChrono(impl_->options.read_timeout));
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res, keep_alive](beast::error_code ec, size_t) {
                        if (ec || !keep_alive) {
                          self->Close();
                        } else {
                          self->Read();
                        }
                      });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpServer::Impl* impl_;
  std::string remote_;
  bool first_ = true;
};

}  // namespace

void HttpServer::Impl::Accept() {
  acceptor->async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
    if (!ec) {
      if (connections.load() >= options.max_connections) {
        beast::error_code ignored;
        socket.close(ignored);  // over the cap: shed load rather than queue it
      } else {
        std::make_shared<Session>(std::move(socket), this)->Read();
      }
    }
    Accept();
  });
}

HttpServer::HttpServer(HttpServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Handle(std::string pattern, HttpHandler handler) {
  impl_->routes.emplace_back(std::move(pattern), std::move(handler));
}

absl::Status HttpServer::Start() {
  const HttpServerOptions& o = impl_->options;
  std::string where = absl::StrCat(o.address, ":", o.port);
  beast::error_code ec;
  asio::ip::address addr = asio::ip::make_address(o.address.empty() ? "0.0.0.0" : o.address, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat(o.name, ": invalid bind address \"", o.address, "\""));
  }
  tcp::endpoint ep(addr, static_cast<uint16_t>(o.port));
  tcp::acceptor acc(impl_->ioc);
  acc.open(ep.protocol(), ec);
  if (!ec) acc.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acc.bind(ep, ec);
  if (!ec) acc.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat(o.name, ": listen tcp ", where, ": ", ec.message()));
  }
  impl_->bound_port = acc.local_endpoint().port();
  impl_->acceptor.emplace(std::move(acc));
  impl_->Accept();
  impl_->running = true;
  impl_->thread = std::thread([this] { impl_->ioc.run(); });
  return absl::OkStatus();
}

void HttpServer::Stop() {
  if (!impl_->running.exchange(false)) return;
  asio::post(impl_->ioc, [this] {
    beast::error_code ignored;
    impl_->acceptor->close(ignored);
    impl_->ioc.stop();
  });
  if (impl_->thread.joinable()) impl_->thread.join();
}

int HttpServer::port() const { return impl_->bound_port.load(); }

}  // namespace kubelet::server
