// Probe-style executors shared by lifecycle hooks and the prober (upstream pkg/probe): run a
// command in a container through CRI ExecSync, GET a URL over HTTP(S), open a TCP connection.
// Each call blocks the calling thread for at most its timeout and returns an outcome whose
// `output` matches upstream's messages (e.g. "HTTP probe failed with statuscode: 500").
//
// Thread-safety: every function is thread-safe and keeps no state between calls; call them
// from worker-pool threads, never from an event loop. Nothing here owns the RuntimeService.
#ifndef KUBELET_KUBELET_LIFECYCLE_PROBE_EXECUTORS_H_
#define KUBELET_KUBELET_LIFECYCLE_PROBE_EXECUTORS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/pod.h"
#include "cri/runtime_service.h"

namespace kubelet::lifecycle {

// upstream probe.Result.
enum class ProbeResult { kSuccess, kWarning, kFailure, kUnknown };
// "success", "warning", "failure", "unknown" (as upstream prints probe.Result).
const char* ProbeResultName(ProbeResult r);

struct ProbeOutcome {
  ProbeResult result = ProbeResult::kUnknown;
  std::string output;
  // Set (non-OK) with kUnknown when the probe could not be run at all (CRI error): upstream
  // throws such results away instead of counting them.
  absl::Status error;
};

// Upstream keeps at most 10 KiB of probe output / response body.
inline constexpr size_t kMaxProbeOutputBytes = 10 * 1024;

// "kube-probe/1.28" / "kube-lifecycle/1.28": the default User-Agent of probe / hook requests.
std::string DefaultUserAgent(const std::string& fragment);

// Resolves a probe / handler port: a number (1..65535) or the name of one of the container's
// ports. Errors: "couldn't find port: <name> in <container>", "invalid port number: <n>".
absl::StatusOr<int> ResolveContainerPort(const api::IntOrString& port,
                                         const api::Container& container);

// --- exec -------------------------------------------------------------------------------------
// Runs `cmd` in the container. Exit 0: success; other exit codes: failure; output is stdout
// followed by stderr (at most 10 KiB). A command that outlives `timeout` fails with output
// `command "<cmd joined by spaces>" timed out`. Other CRI errors: kUnknown with `error` set.
ProbeOutcome ExecProbe(cri::RuntimeService& runtime, const std::string& container_id,
                       const std::vector<std::string>& cmd, absl::Duration timeout);

// --- HTTP -------------------------------------------------------------------------------------
struct HttpGetRequest {
  std::string scheme = "http";  // "http" or "https" (lower case)
  std::string host;             // IP or DNS name
  int port = 80;
  std::string path;  // may carry a query ("/healthz?x=1"); "" means "/"
  std::vector<api::HTTPHeader> headers;
  std::string user_agent;  // used unless `headers` carries User-Agent
};

// http(s)://host:port/path, as upstream formatURL (IPv6 hosts bracketed).
std::string FormatURL(const std::string& scheme, const std::string& host, int port,
                      const std::string& path);

struct HttpGetResult {
  int status_code = 0;
  std::string body;  // at most kMaxProbeOutputBytes
  bool truncated = false;
};

// One GET with redirects to the same host name followed (at most 10). Certificates are not
// verified (probes and hooks talk to pod IPs). `timeout` bounds the whole exchange (infinite or
// zero: no limit). Errors read like Go's client: `Get "<url>": dial tcp <addr>: connect:
// connection refused`. A redirect to another host returns the 3xx response itself.
// `tls_got_http` is set when an https request reached a plain-HTTP server.
absl::StatusOr<HttpGetResult> HttpGet(const HttpGetRequest& request, absl::Duration timeout,
                                      bool* tls_got_http = nullptr);

// The HTTP probe: 200..299 success (body as output); 300..399 (an unfollowed redirect) success
// with a warning; other codes failure "HTTP probe failed with statuscode: <code>"; a transport
// error is a failure whose output is the error text.
ProbeOutcome HttpProbe(const HttpGetRequest& request, absl::Duration timeout);

// --- TCP --------------------------------------------------------------------------------------
// Success when a TCP connection to host:port opens within `timeout`; failure output reads like
// Go's dialer ("dial tcp 10.0.0.1:80: connect: connection refused", "... i/o timeout").
ProbeOutcome TcpProbe(const std::string& host, int port, absl::Duration timeout);

}  // namespace kubelet::lifecycle

#endif  // KUBELET_KUBELET_LIFECYCLE_PROBE_EXECUTORS_H_
