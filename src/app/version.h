// Version strings. We target the upstream v1.28 surface, so `kubelet --version` reports a v1.28
// version with our build id as semver build metadata: "Kubernetes v1.28.15+kubeletcpp.<commit>".
// That keeps tools that parse the output (kubeadm's `Kubernetes vX.Y.Z[-+...]` pattern) working.
#ifndef KUBELET_APP_VERSION_H_
#define KUBELET_APP_VERSION_H_

#include <string>

namespace kubelet::app {

inline constexpr const char* kKubernetesVersion = "v1.28.15";

std::string BuildId();        // "kubeletcpp.<git commit>"
std::string VersionString();  // "v1.28.15+kubeletcpp.<commit>"

}  // namespace kubelet::app

#endif  // KUBELET_APP_VERSION_H_
