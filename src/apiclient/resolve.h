// A host name lookup off the caller's thread: getaddrinfo runs on a detached thread, so a slow
// resolver never holds up a caller that is cancelled or stopped (the caller stops waiting; the
// thread finishes on its own). Used by the API client and the URL pod source.
//
// Thread-safety: Resolve() may be called from any thread.
#ifndef KUBELET_APICLIENT_RESOLVE_H_
#define KUBELET_APICLIENT_RESOLVE_H_

#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kubelet::apiclient {

struct Resolved {
  std::vector<boost::asio::ip::tcp::endpoint> endpoints;
  std::string error;  // "no such host" or getaddrinfo's text; empty: `endpoints` is not empty
};

// Resolves `host`:`port` (TCP, IPv4 and IPv6), checking `stop` every 20 ms while it waits;
// nullopt when `stop` returned true before the lookup ended.
std::optional<Resolved> Resolve(const std::string& host, const std::string& port,
                                const std::function<bool()>& stop);

}  // namespace kubelet::apiclient

#endif  // KUBELET_APICLIENT_RESOLVE_H_
