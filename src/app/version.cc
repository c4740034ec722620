#include "app/version.h"

#ifndef KUBELET_GIT_COMMIT
#define KUBELET_GIT_COMMIT "unknown"
#endif

namespace kubelet::app {

std::string BuildId() { return std::string("kubeletcpp.") + KUBELET_GIT_COMMIT; }
std::string VersionString() { return std::string(kKubernetesVersion) + "+" + BuildId(); }

}  // namespace kubelet::app
