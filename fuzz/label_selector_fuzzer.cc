// Fuzzes the label selectors the kubelet evaluates on outside input: a pod's required node
// affinity (nodeSelectorTerms with matchExpressions In / NotIn / Exists / DoesNotExist / Gt / Lt
// on the node's labels and matchFields on metadata.name), as admission matches it against the
// node (MatchesRequiredNodeAffinity). The bytes are the pod's spec.affinity as the pod decoder
// keeps it (raw JSON, as a manifest or the API server gave it); the node is a fixed one with
// string and numeric labels. The label key and value syntax checks (IsQualifiedName,
// IsValidLabelValue) run on the bytes too. Any crash, sanitizer report, exception or hang is a
// finding; a false result is not.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/node.h"
#include "api/pod.h"
#include "api/pod_validation.h"
#include "kubelet/admission.h"

namespace {

const kubelet::api::Node& TestNode() {
  static const kubelet::api::Node* node = [] {
    auto* n = new kubelet::api::Node;
    n->metadata.name = "node-1";
    n->metadata.labels = {{"kubernetes.io/hostname", "node-1"},
                          {"kubernetes.io/os", "linux"},
                          {"disk", "ssd"},
                          {"cores", "8"},
                          {"negative", "-3"},
                          {"empty", ""}};
    return n;
  }();
  return *node;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  kubelet::api::Pod pod;
  pod.metadata.name = "p";
  pod.metadata.namespace_ = "default";
  pod.spec.affinity = kubelet::api::RawJson{std::string(text)};
  (void)kubelet::MatchesRequiredNodeAffinity(pod, TestNode());
  (void)kubelet::api::IsQualifiedName(text);
  (void)kubelet::api::IsValidLabelValue(text);
  return 0;
}
