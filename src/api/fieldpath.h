// Downward API values of a pod (upstream pkg/fieldpath and resource.ExtractContainerResourceValue
// / MergeContainerResourceLimits), shared by environment variables (kuberuntime) and downwardAPI
// volume files (volume). Pure functions; thread-safe.
#ifndef KUBELET_API_FIELDPATH_H_
#define KUBELET_API_FIELDPATH_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/pod.h"

namespace kubelet::api {

// "metadata.labels['app']" -> base "metadata.labels", subscript "app"; false when the path has
// no subscript.
bool SplitMaybeSubscriptedPath(std::string_view path, std::string* base, std::string* subscript);

// Sorted `key="value"` lines (Go %q quoting), no trailing newline.
std::string FormatMap(const StringMap& m);

// metadata.name / namespace / uid / labels / annotations, with ['key'] subscripts on labels and
// annotations (keys validated as upstream). Other paths are InvalidArgument
// ("unsupported fieldPath: ...").
absl::StatusOr<std::string> ExtractFieldPathAsString(const Pod& pod, const std::string& field_path);

// Unset or zero cpu / memory / ephemeral-storage limits of `c` take the node's allocatable.
Container MergeContainerResourceLimits(Container c, const ResourceList& allocatable);

// limits.* / requests.* (cpu, memory, ephemeral-storage, hugepages-<size>) of `c`, divided by
// the selector's divisor (default 1) and rounded up.
absl::StatusOr<std::string> ExtractContainerResourceValue(const ResourceFieldSelector& fs,
                                                          const Container& c);

}  // namespace kubelet::api

#endif  // KUBELET_API_FIELDPATH_H_
