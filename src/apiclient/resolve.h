// A host name lookup off the caller's thread: getaddrinfo runs on a detached thread, so a slow
// resolver never holds up a caller that is cancelled or stopped (it waits on `mu` with a timeout
// and gives up; the thread finishes on its own). Used by the API client and the URL pod source.
//
// Thread-safety: the fields are guarded by `mu`; `done` turns true once, with `endpoints` or
// `error` ("no such host" or getaddrinfo's text) set.
#ifndef KUBELET_APICLIENT_RESOLVE_H_
#define KUBELET_APICLIENT_RESOLVE_H_

#include <boost/asio/ip/tcp.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace kubelet::apiclient {

struct Resolution {
  absl::Mutex mu;
  bool done ABSL_GUARDED_BY(mu) = false;
  std::vector<boost::asio::ip::tcp::endpoint> endpoints ABSL_GUARDED_BY(mu);
  std::string error ABSL_GUARDED_BY(mu);
};

// Starts resolving `host`:`port` (TCP, IPv4 and IPv6).
std::shared_ptr<Resolution> StartResolve(const std::string& host, const std::string& port);

}  // namespace kubelet::apiclient

#endif  // KUBELET_APICLIENT_RESOLVE_H_
