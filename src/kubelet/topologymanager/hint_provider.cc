#include "kubelet/topologymanager/hint_provider.h"

#include "absl/strings/str_join.h"

namespace kubelet::topologymanager {

std::string NUMAMask::String() const { return absl::StrJoin(Nodes(), ","); }

}  // namespace kubelet::topologymanager
