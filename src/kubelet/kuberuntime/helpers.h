// Small pure helpers of the runtime manager, ported from upstream pkg/kubelet/kuberuntime
// (helpers.go, helpers_linux.go), pkg/kubelet/container/helpers.go (HashContainer,
// ExpandContainerCommandAndArgs), pkg/kubelet/qos (QoS class, oom_score_adj), pkg/kubelet/types
// (node-critical pods), pkg/kubelet/util/format (format.Pod) and the expansion package. QoS class
// and static/critical pod checks come from api/static_pod.h.
//
// Pure functions; thread-safe. Nothing here touches the runtime; the few that read the file
// system say so.
#ifndef KUBELET_KUBELET_KUBERUNTIME_HELPERS_H_
#define KUBELET_KUBELET_KUBERUNTIME_HELPERS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/pod.h"
#include "api/resource_helpers.h"

namespace kubelet::kuberuntime {

// format.Pod: "<name>_<namespace>(<uid>)".
std::string FormatPod(const api::Pod& pod);
std::string FormatPod(std::string_view name, std::string_view ns, std::string_view uid);

// kubecontainer.HashContainer of v1.28: FNV-32a over the spew rendering ("([]uint8)[123 34 ...]")
// of json.Marshal(container). Equal to upstream's value for the same spec (as long as the codec
// encodes like encoding/json; checked against upstream's test vector), so containers started by
// an upstream kubelet are not restarted when this kubelet takes over. Every field of the
// container counts, resources included (later releases hash fewer fields). Note: this differs
// from api::HashContainer, which hashes the JSON bytes directly.
uint64_t HashContainerSpec(const api::Container& container);
// kubecontainer.HashContainerWithoutResources: the same over the container with its resources
// emptied (InPlacePodVerticalScaling: a change of resources alone does not restart it).
uint64_t HashContainerSpecWithoutResources(const api::Container& container);
// strconv.FormatUint(hash, 16).
std::string HashToString(uint64_t hash);

// crash-loop back-off key: "<pod name>_<namespace>_<uid>_<container name>_<hash hex>".
std::string GetStableKey(const api::Pod& pod, const api::Container& container);

// kubetypes.IsNodeCriticalPod: critical (static, mirror or priority >= 2e9, see
// api/static_pod.h) and priorityClassName system-node-critical.
bool IsNodeCriticalPod(const api::Pod& pod);

// qos.GetContainerOOMScoreAdjust: Guaranteed / node-critical -997, BestEffort 1000, Burstable
// 1000 - 1000*memoryRequest/memoryCapacity clamped to [3, 999].
int GetContainerOOMScoreAdjust(const api::Pod& pod, const api::Container& container,
                               int64_t memory_capacity);

// CPU conversions are shared with the container manager (api/resource_helpers.h).
using api::kMaxShares;
using api::kMinShares;
using api::MilliCPUToQuota;
using api::MilliCPUToShares;
inline constexpr int64_t kQuotaPeriod = api::kQuotaPeriodUs;  // microseconds
inline constexpr int64_t kMinQuotaPeriod = api::kMinQuotaPeriodUs;

// <root>/<ns>_<name>_<uid>
std::string BuildPodLogsDirectory(std::string_view root, std::string_view ns, std::string_view name,
                                  std::string_view uid);
// <root>/<ns>_<name>_<uid>/<container>
std::string BuildContainerLogsDirectory(std::string_view root, std::string_view ns,
                                        std::string_view name, std::string_view uid,
                                        std::string_view container);
// "<container>/<restartCount>.log" (relative to the sandbox log directory).
std::string BuildContainerLogsPath(std::string_view container, int restart_count);
// The pod UID of a pod log directory name "<ns>_<name>_<uid>" (the part after the last '_').
std::string ParsePodUIDFromLogsDirectory(std::string_view name);
// calcRestartCountByLogDir: 1 + the highest N of files "N.log[.*]" in `path`; 0 when the
// directory is missing or empty. Reads the file system.
int CalcRestartCountByLogDir(const std::string& path);

// The expansion package: replaces $(VAR) with lookup(VAR); "$$" is an escaped "$"; an unknown or
// unterminated reference is kept verbatim.
std::string Expand(std::string_view input,
                   const std::function<std::optional<std::string>(std::string_view)>& lookup);

// sysctl.ConvertPodSysctlsVariableToDotsSeparator for one name: "net/ipv4/ip_forward" ->
// "net.ipv4.ip_forward" (dots and slashes swap when the first separator is a slash).
std::string ConvertSysctlVariableToDotsSeparator(std::string_view name);

// applyDefaultImageTag: appends ":latest" when `image` has neither tag nor digest. Fails when the
// reference does not parse (InvalidImageName).
absl::StatusOr<std::string> ApplyDefaultImageTag(std::string_view image);
// docker reference.ParseNormalizedNamed + TagNameOnly: "busybox" ->
// "docker.io/library/busybox:latest", "foo/bar:1" -> "docker.io/foo/bar:1",
// "registry:5000/x@sha256:..." unchanged.
absl::StatusOr<std::string> NormalizeImageName(std::string_view image);

}  // namespace kubelet::kuberuntime

#endif  // KUBELET_KUBELET_KUBERUNTIME_HELPERS_H_
