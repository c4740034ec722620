#include "apiclient/resolve.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <exception>
#include <memory>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace kubelet::apiclient {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;

// Shared by the caller and the lookup thread, which may outlive the caller's wait.
struct Resolution {
  absl::Mutex mu;
  bool done ABSL_GUARDED_BY(mu) = false;
  Resolved result ABSL_GUARDED_BY(mu);
};

std::shared_ptr<Resolution> StartResolve(const std::string& host, const std::string& port) {
  auto r = std::make_shared<Resolution>();
  auto work = [r, host, port] {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
    std::vector<tcp::endpoint> eps;
    std::string error;
    if (rc != 0) {
      error = rc == EAI_NONAME || rc == EAI_NODATA ? "no such host" : gai_strerror(rc);
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
    absl::MutexLock lock(&r->mu);
    r->result.endpoints = std::move(eps);
    r->result.error = std::move(error);
    r->done = true;
  };
  try {
    std::thread(std::move(work)).detach();
  } catch (const std::exception& e) {
    absl::MutexLock lock(&r->mu);
    r->result.error = e.what();
    r->done = true;
  }
  return r;
}

}  // namespace

std::optional<Resolved> Resolve(const std::string& host, const std::string& port,
                                const std::function<bool()>& stop) {
  std::shared_ptr<Resolution> r = StartResolve(host, port);
  for (;;) {
    {
      absl::MutexLock lock(&r->mu);
      auto done = [&r]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(r->mu) { return r->done; };
      r->mu.AwaitWithTimeout(absl::Condition(&done), absl::Milliseconds(20));
      if (r->done) return r->result;
    }
    if (stop()) return std::nullopt;
  }
}

}  // namespace kubelet::apiclient
