// /healthz endpoints with the apiserver healthz package's behaviour and output, as the kubelet
// serves them on healthzPort and (later) on :10250.
//
// GET /healthz runs every check: all pass -> 200 "ok" (with ?verbose the per-check lines and
// "healthz check passed"); any fails -> 500 with "[+]name ok" / "[-]name failed: reason withheld"
// lines and "healthz check failed". ?exclude=name skips a check. GET /healthz/<name> runs one
// check: 200 "ok" or 500 "internal server error: <reason>". A "ping" check that always passes is
// always installed first.
// Checks run on the HTTP server's thread: they must be quick and non-blocking (read a timestamp,
// compare a flag), never call the runtime.
#ifndef KUBELET_SERVER_HEALTHZ_H_
#define KUBELET_SERVER_HEALTHZ_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server/http_server.h"

namespace kubelet::server {

struct HealthzCheck {
  std::string name;
  std::function<absl::Status()> check;
};

void InstallHealthz(HttpServer& server, std::vector<HealthzCheck> checks);

}  // namespace kubelet::server

#endif  // KUBELET_SERVER_HEALTHZ_H_
