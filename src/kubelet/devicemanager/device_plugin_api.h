// Constants of the device plugin API v1beta1 (k8s.io/kubelet deviceplugin constants.go) and the
// paths the kubelet serves it on; the messages are proto/deviceplugin.proto.
// Constants and pure functions; thread-safe.
#ifndef KUBELET_KUBELET_DEVICEMANAGER_DEVICE_PLUGIN_API_H_
#define KUBELET_KUBELET_DEVICEMANAGER_DEVICE_PLUGIN_API_H_

#include <string>
#include <string_view>

namespace kubelet::devicemanager {

inline constexpr char kVersion[] = "v1beta1";
inline constexpr char kHealthy[] = "Healthy";
inline constexpr char kUnhealthy[] = "Unhealthy";
// The kubelet's socket, below the device-plugins directory.
inline constexpr char kKubeletSocket[] = "kubelet.sock";
// Bound of a PreStartContainer call (KubeletPreStartContainerRPCTimeoutInSecs).
inline constexpr int kPreStartContainerTimeoutSeconds = 30;

// <root-dir>/device-plugins.
std::string DevicePluginDir(std::string_view root_dir);

// Upstream counts a device as healthy only when its health is exactly "Healthy".
inline bool IsHealthy(std::string_view health) { return health == kHealthy; }

}  // namespace kubelet::devicemanager

#endif  // KUBELET_KUBELET_DEVICEMANAGER_DEVICE_PLUGIN_API_H_
