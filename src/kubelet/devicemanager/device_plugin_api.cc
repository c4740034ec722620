#include "kubelet/devicemanager/device_plugin_api.h"

#include "absl/strings/str_cat.h"
#include "common/strings.h"

namespace kubelet::devicemanager {

std::string DevicePluginDir(std::string_view root_dir) {
  return absl::StrCat(AV(root_dir), "/device-plugins");
}

}  // namespace kubelet::devicemanager
