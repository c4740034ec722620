// gRPC implementations of the CRI client interfaces (cri/runtime_service.h), talking to a
// container runtime over a unix socket.
//
// Endpoints: "unix:///run/containerd/containerd.sock" or a bare socket path
// ("/run/containerd/containerd.sock", accepted as unix like upstream). Any other scheme (tcp,
// npipe, ...) is rejected.
//
// Deadlines follow the upstream kubelet's remote runtime: every call gets `request_timeout`
// (the kubelet's --runtime-request-timeout, 2m by default) except RunPodSandbox (twice that),
// StopContainer (request_timeout + grace period), ExecSync (request_timeout + command timeout,
// none for a zero command timeout), CheckpointContainer (the larger of request_timeout and the
// requested timeout), GetContainerEvents, PullImage and ImageFsInfo (no deadline; PullImage
// can be capped with `pull_timeout`). Receives are limited to 16 MiB per message.
//
// Thread-safety: the returned services are thread-safe; calls block (see runtime_service.h).
#ifndef KUBELET_CRI_REMOTE_REMOTE_RUNTIME_H_
#define KUBELET_CRI_REMOTE_REMOTE_RUNTIME_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cri/runtime_service.h"

namespace kubelet::cri {

// Upstream's maxMsgSize: the largest message accepted from the runtime.
inline constexpr int kMaxMsgSize = 16 * 1024 * 1024;

// Connects to the runtime at `endpoint` and checks it serves CRI v1 by calling Version with
// `request_timeout` as deadline; that timeout is also the per-call deadline afterwards.
// Fails with kInvalidArgument for a malformed or non-unix endpoint, and with the Version
// call's status (message naming the endpoint) when the runtime does not answer.
absl::StatusOr<std::unique_ptr<RuntimeService>> NewRemoteRuntimeService(
    const std::string& endpoint, absl::Duration request_timeout);

// Same for the image service; the check calls ImageFsInfo, as upstream.
absl::StatusOr<std::unique_ptr<ImageManagerService>> NewRemoteImageService(
    const std::string& endpoint, absl::Duration request_timeout,
    absl::Duration pull_timeout = absl::InfiniteDuration());

// The socket path an endpoint names, or kInvalidArgument naming the endpoint.
absl::StatusOr<std::string> UnixSocketPathFromEndpoint(absl::string_view endpoint);

}  // namespace kubelet::cri

#endif  // KUBELET_CRI_REMOTE_REMOTE_RUNTIME_H_
