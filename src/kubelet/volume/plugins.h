// The in-tree volume plugins the kubelet runs without an API server: emptyDir, hostPath and
// downwardAPI (upstream pkg/volume/{emptydir,hostpath,downwardapi}). Each is a set of pure
// functions over a directory; the VolumeManager decides when to call them.
//
//   emptyDir    <pod>/volumes/kubernetes.io~empty-dir/<name>: a 0777 directory on the kubelet's
//               disk, or a tmpfs (medium Memory) sized as upstream's calculateEmptyDirMemorySize.
//   hostPath    not materialized: the host path is mounted as is, after the `type` check.
//   downwardAPI <pod>/volumes/kubernetes.io~downward-api/<name>: a tmpfs (upstream wraps it in a
//               memory-medium emptyDir) holding the files published by the AtomicWriter.
//
// Thread-safety: stateless functions; callers serialize work on one volume directory.
#ifndef KUBELET_KUBELET_VOLUME_PLUGINS_H_
#define KUBELET_KUBELET_VOLUME_PLUGINS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/fieldpath.h"
#include "api/pod.h"
#include "kubelet/volume/atomic_writer.h"

namespace kubelet::volume {

inline constexpr char kEmptyDirPluginName[] = "kubernetes.io/empty-dir";
inline constexpr char kHostPathPluginName[] = "kubernetes.io/host-path";
inline constexpr char kDownwardAPIPluginName[] = "kubernetes.io/downward-api";
inline constexpr char kLocalVolumePluginName[] = "kubernetes.io/local-volume";

// "kubernetes.io/empty-dir" -> "kubernetes.io~empty-dir" (upstream EscapeQualifiedName).
std::string EscapePluginName(std::string_view plugin_name);

// ---- hostPath ------------------------------------------------------------------------------

// Upstream checkType: "" / unset: no check; DirectoryOrCreate: mkdir -p 0755 when missing;
// FileOrCreate: create an empty 0644 file when missing (the parent must exist); Directory,
// File, Socket, CharDevice, BlockDevice: the path (symlinks followed) must exist with that type.
// Errors read like upstream's, e.g. "hostPath type check failed: /x is not a directory".
absl::Status CheckHostPathType(const std::string& path, const std::optional<std::string>& type);

// ---- downwardAPI ---------------------------------------------------------------------------

// Field paths and map formatting come from api/fieldpath.h.

// resource.ExtractResourceValueByContainerNameAndNodeAllocatable: the resource of the named
// container (regular, then init containers); unset cpu / memory / ephemeral-storage limits take
// node allocatable. Values are divided by the divisor (default 1) and rounded up.
absl::StatusOr<std::string> ExtractResourceValue(const api::ResourceFieldSelector& fs,
                                                 const api::Pod& pod,
                                                 const api::ResourceList& node_allocatable);

// The files of a downwardAPI volume (upstream CollectData): one per item, mode = item mode, else
// default_mode, else 0644. Errors of several items are joined.
absl::StatusOr<Payload> CollectDownwardAPIData(const api::Pod& pod,
                                               const std::vector<api::DownwardAPIVolumeFile>& items,
                                               std::optional<int32_t> default_mode,
                                               const api::ResourceList& node_allocatable);

// ---- emptyDir ------------------------------------------------------------------------------

// The pod-level memory limit (sum of the app containers' limits, at least the largest init
// container's, plus overhead) when every container declares one; 0 otherwise.
int64_t PodMemoryLimitBytes(const api::Pod& pod);

// tmpfs size for a memory-backed emptyDir: node allocatable memory, lowered to the pod's memory
// limit and then to sizeLimit when those are positive and smaller. 0 = no size option.
int64_t MemoryBackedSizeBytes(const api::Pod& pod, const std::optional<api::Quantity>& size_limit,
                              int64_t node_allocatable_memory);

// Creates `dir` with mode 0777 (also when it existed with other permissions); for `memory`,
// mounts a tmpfs of `tmpfs_size_bytes` on it unless one is mounted already. Idempotent.
absl::Status SetUpEmptyDir(const std::string& dir, bool memory, int64_t tmpfs_size_bytes);

// Unmounts `dir` when it is a mount point, then deletes it (never across another mount).
absl::Status TearDownEmptyDir(const std::string& dir);

// The eviction message for an emptyDir over its sizeLimit (upstream emptyDirMessageFmt).
std::string EmptyDirLimitMessage(const std::string& volume, const api::Quantity& limit);

}  // namespace kubelet::volume

#endif  // KUBELET_KUBELET_VOLUME_PLUGINS_H_
