// Encoding of KubeletConfiguration as the v1beta1 JSON that Go's json.Marshal produces (what
// /configz serves): the API codec over the field tables of kubelet_configuration_fields.h.
#include "absl/strings/str_cat.h"
#include "api/codec.h"
#include "api/go_json.h"
#include "common/duration.h"
#include "config/kubelet_configuration.h"
#include "config/kubelet_configuration_fields.h"

namespace kubelet::config {

void AppendLeaf(std::string* out, const TimeOrMetaDuration& d) {
  if (d.as_string) {
    api::AppendGoString(out, FormatGoDuration(d.duration));
  } else {
    absl::StrAppend(out, absl::ToInt64Nanoseconds(d.duration));
  }
}

std::string KubeletConfigurationToJson(const KubeletConfiguration& config, bool include_type_meta) {
  std::string out = "{";
  bool first = true;
  if (include_type_meta) {
    out += "\"kind\":";
    api::AppendGoString(&out, kKubeletConfigKind);
    out += ",\"apiVersion\":";
    api::AppendGoString(&out, kKubeletConfigAPIVersion);
    first = false;
  }
  api::codec::AppendMembers(&out, config, &first);
  out += '}';
  return out;
}

std::string KubeletConfigzJson(const KubeletConfiguration& config) {
  return absl::StrCat("{\"kubeletconfig\":", KubeletConfigurationToJson(config), "}");
}

}  // namespace kubelet::config
