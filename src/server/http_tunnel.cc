// Upgrade tunnels (HttpResponse::tunnel: exec, attach, port-forward) of a connection (Session,
// see http_server_internal.h): the handler's resolver runs on a detached worker thread, then
// the I/O thread dials the backend, forwards the client's request head, and pumps bytes both
// ways asynchronously until either side ends, fails, or is idle for tunnel_idle_timeout.
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/log.h"
#include "server/http_server_internal.h"

namespace kubelet::server::internal {

template <class Stream>
void Session<Stream>::StartTunnel(
    std::function<std::optional<TunnelTarget>(HttpResponse*)> resolve) {
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
          asio::ip::address addr =
              asio::ip::make_address(target->host == "localhost" ? "127.0.0.1" : target->host, ec);
          if (ec) {
            error = HttpResponse();
            error.Error(500, absl::StrCat("error dialing backend: cannot resolve ", target->host));
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

template <class Stream>
std::string Session<Stream>::TunnelHead(const TunnelTarget& target) const {
  std::string head = absl::StrCat(request_.method, " ", target.target,
                                  " HTTP/1.1\r\nHost: ", target.host, ":", target.port, "\r\n");
  for (const auto& [k, v] : request_.headers) {
    if (k == "host" || k == "authorization") continue;
    absl::StrAppend(&head, k, ": ", v, "\r\n");
  }
  head += "\r\n";
  return head;
}

template <class Stream>
void Session<Stream>::OpenTunnel(const tcp::endpoint& endpoint, const TunnelTarget& target) {
  tunnel_ = std::make_unique<Tunnel>(stream_.get_executor());
  auto out = std::make_shared<std::string>(TunnelHead(target));
  out->append(request_.body);
  const auto pending = buffer_.data();
  out->append(static_cast<const char*>(pending.data()), pending.size());
  buffer_.consume(buffer_.size());
  tunnel_->backend.async_connect(
      endpoint, [self = this->shared_from_this(), out](beast::error_code ec) {
        if (ec) {
          KLOG_ERROR(absl::UnavailableError(ec.message()), "Error while proxying request", "server",
                     self->impl_->options.name, "path", self->request_.path);
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

template <class Stream>
void Session<Stream>::PumpUp() {
  Tcp().expires_after(ToChrono(impl_->options.tunnel_idle_timeout));
  stream_.async_read_some(
      asio::buffer(tunnel_->up), [self = this->shared_from_this()](beast::error_code ec, size_t n) {
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

template <class Stream>
void Session<Stream>::PumpDown() {
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

template <class Stream>
void Session<Stream>::CloseTunnel() {
  if (tunnel_ == nullptr || tunnel_->closed) return;
  tunnel_->closed = true;
  beast::error_code ignored;
  tunnel_->backend.shutdown(tcp::socket::shutdown_both, ignored);
  tunnel_->backend.close(ignored);
  Close();
}

// The members defined here, for both kinds of connection (see http_server_internal.h).
template void Session<PlainStream>::StartTunnel(
    std::function<std::optional<TunnelTarget>(HttpResponse*)>);
template std::string Session<PlainStream>::TunnelHead(const TunnelTarget&) const;
template void Session<PlainStream>::OpenTunnel(const tcp::endpoint&, const TunnelTarget&);
template void Session<PlainStream>::PumpUp();
template void Session<PlainStream>::PumpDown();
template void Session<PlainStream>::CloseTunnel();
template void Session<TlsStream>::StartTunnel(
    std::function<std::optional<TunnelTarget>(HttpResponse*)>);
template std::string Session<TlsStream>::TunnelHead(const TunnelTarget&) const;
template void Session<TlsStream>::OpenTunnel(const tcp::endpoint&, const TunnelTarget&);
template void Session<TlsStream>::PumpUp();
template void Session<TlsStream>::PumpDown();
template void Session<TlsStream>::CloseTunnel();

}  // namespace kubelet::server::internal
