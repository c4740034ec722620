// Constants of the pod resources API v1 (k8s.io/kubelet podresources) and where the kubelet
// serves it; the messages are proto/podresources.proto.
// Constants and pure functions; thread-safe.
#ifndef KUBELET_KUBELET_PODRESOURCES_POD_RESOURCES_API_H_
#define KUBELET_KUBELET_PODRESOURCES_POD_RESOURCES_API_H_

#include <string>
#include <string_view>

namespace kubelet::podresources {

// The server's rate limit (upstream DefaultQPS, DefaultBurstTokens) and its answer beyond it
// (gRPC ResourceExhausted).
inline constexpr int kDefaultQPS = 100;
inline constexpr int kDefaultBurstTokens = 10;
inline constexpr char kRateLimitedMessage[] = "rejected by rate limit";

// <root-dir>/pod-resources/kubelet.sock (clients mount the directory: it is recreated).
std::string SocketPath(std::string_view root_dir);

}  // namespace kubelet::podresources

#endif  // KUBELET_KUBELET_PODRESOURCES_POD_RESOURCES_API_H_
