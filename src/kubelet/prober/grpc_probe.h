// The gRPC probe (upstream pkg/probe/grpc): one grpc.health.v1.Health/Check call with the
// probe's service name over an insecure channel, bounded by the probe's timeout. The messages are
// encoded by hand (HealthCheckRequest{service=1}, HealthCheckResponse{status=1}) and sent through
// gRPC's generic stub, so no generated health proto is needed.
//
// Thread-safety: thread-safe, stateless; blocks the caller for at most `timeout`.
#ifndef KUBELET_KUBELET_PROBER_GRPC_PROBE_H_
#define KUBELET_KUBELET_PROBER_GRPC_PROBE_H_

#include <string>

#include "absl/time/time.h"
#include "kubelet/lifecycle/probe_executors.h"

namespace kubelet::prober {

// SERVING: success "service healthy"; other statuses: failure `service unhealthy (responded
// with "NOT_SERVING")`; a server without the health service, connection failures and timeouts
// are failures with upstream's texts.
lifecycle::ProbeOutcome GrpcProbe(const std::string& host, int port, const std::string& service,
                                  absl::Duration timeout);

// Exposed for tests: the wire encoding of HealthCheckRequest and the status field of a
// HealthCheckResponse (-1 when the bytes do not parse).
std::string EncodeHealthCheckRequest(const std::string& service);
int DecodeHealthCheckStatus(const std::string& bytes);

}  // namespace kubelet::prober

#endif  // KUBELET_KUBELET_PROBER_GRPC_PROBE_H_
