// The HTTP server itself (see http_server.h): the request and response types' helpers, TLS
// setup (files or a per-handshake certificate), the listener and accept loop with eviction at
// max_connections, Start() and Stop(). A connection's work lives in http_session.cc,
// http_stream.cc and http_tunnel.cc; what they share is in http_server_internal.h.
#include "server/http_server.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/log.h"
#include "common/openssl.h"
#include "server/http_server_internal.h"

namespace kubelet::server {
namespace {

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
      internal::Connection* victim = nullptr;
      for (internal::Connection* c : sessions) {
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
      std::make_shared<internal::Session<internal::TlsStream>>(std::move(socket), this)->Start();
    } else {
      std::make_shared<internal::Session<internal::PlainStream>>(std::move(socket), this)->Start();
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
  internal::StreamTracker& t = *impl_->streams;
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
