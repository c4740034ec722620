#include "kubelet/podresources/pod_resources_api.h"

#include "absl/strings/str_cat.h"
#include "common/strings.h"

namespace kubelet::podresources {

std::string SocketPath(std::string_view root_dir) {
  return absl::StrCat(AV(root_dir), "/pod-resources/kubelet.sock");
}

}  // namespace kubelet::podresources
