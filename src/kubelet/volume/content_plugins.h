// The volume plugins whose content comes from the cluster: configMap, secret and projected
// (upstream pkg/volume/{configmap,secret,projected}). Pure functions building the AtomicWriter
// payload (atomic_writer.h); the VolumeManager publishes it and republishes it on every sync of
// the pod, so changed objects and refreshed tokens reach running pods (upstream remounts these
// volumes on resync).
//
//   configMap  <pod>/volumes/kubernetes.io~configmap/<name>: a directory on the kubelet's disk
//              (upstream wraps a disk emptyDir); files from data and binaryData.
//   secret     <pod>/volumes/kubernetes.io~secret/<name>: a tmpfs (memory-medium emptyDir), so
//              secret bytes never reach the node's disk.
//   projected  <pod>/volumes/kubernetes.io~projected/<name>: a tmpfs; the union of its sources
//              (secret, configMap, downwardAPI, serviceAccountToken) in one payload.
//
// Semantics as upstream: without items every key becomes a file named after it; with items only
// the listed keys, at their paths, a missing key failing ("configmap references non-existent
// config key: k", "references non-existent secret key: k") unless the source is optional. A
// missing object fails with its NotFound error (`configmap "x" not found`) unless optional (the
// volume is then empty). Modes: item mode, else defaultMode, else 0644. The service account
// token file has defaultMode, or 0600 when the pod has an fsGroup (SetVolumeOwnership then makes
// it 0640). Errors of several projected sources are joined as upstream's aggregate: "[a, b]".
//
// Secret contents are never logged. Thread-safety: stateless functions; ObjectSource and
// TokenManager are thread-safe.
#ifndef KUBELET_KUBELET_VOLUME_CONTENT_PLUGINS_H_
#define KUBELET_KUBELET_VOLUME_CONTENT_PLUGINS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/core_misc.h"
#include "api/pod.h"
#include "kubelet/volume/atomic_writer.h"
#include "kubelet/volume/cluster_content.h"
#include "kubelet/volume/token_manager.h"

namespace kubelet::volume {

inline constexpr char kConfigMapPluginName[] = "kubernetes.io/configmap";
inline constexpr char kSecretPluginName[] = "kubernetes.io/secret";
inline constexpr char kProjectedPluginName[] = "kubernetes.io/projected";
inline constexpr int32_t kDefaultVolumeFileMode = 0644;
// TokenRequest expirationSeconds when a serviceAccountToken source has none (the API server's
// defaulting of ServiceAccountTokenProjection).
inline constexpr int64_t kDefaultTokenExpirationSeconds = 3600;

absl::StatusOr<Payload> MakeConfigMapPayload(const std::vector<api::KeyToPath>& items,
                                             const api::ConfigMap& config_map, int32_t default_mode,
                                             bool optional);
absl::StatusOr<Payload> MakeSecretPayload(const std::vector<api::KeyToPath>& items,
                                          const api::Secret& secret, int32_t default_mode,
                                          bool optional);

// The payload of a configMap / secret volume of `pod`; `objects` null = standalone mode.
absl::StatusOr<Payload> ConfigMapVolumePayload(const api::Pod& pod,
                                               const api::ConfigMapVolumeSource& source,
                                               ObjectSource* objects);
absl::StatusOr<Payload> SecretVolumePayload(const api::Pod& pod,
                                            const api::SecretVolumeSource& source,
                                            ObjectSource* objects);

// The payload of a projected volume (upstream collectData); `objects` / `tokens` null =
// standalone mode.
absl::StatusOr<Payload> ProjectedVolumePayload(const api::Pod& pod,
                                               const api::ProjectedVolumeSource& source,
                                               ObjectSource* objects, TokenManager* tokens,
                                               const api::ResourceList& node_allocatable);

// Upstream SetVolumeOwnership: every entry below `dir` (symlinks not followed) gets group
// `fs_group`; files and directories gain ug+r (0440) in a read-only volume, ug+rw (0660) in a
// writable one (emptyDir), directories also setgid and ug+x (0110). With `on_root_mismatch`
// (fsGroupChangePolicy: OnRootMismatch) nothing is walked when `dir` itself already has the
// group, the setgid bit and those permissions.
absl::Status SetVolumeOwnership(const std::string& dir, int64_t fs_group, bool read_only = true,
                                bool on_root_mismatch = false);
// The pod's fsGroup ownership for a volume at `dir`; nothing without an fsGroup.
absl::Status ApplyFsGroup(const api::Pod& pod, const std::string& dir, bool read_only);

}  // namespace kubelet::volume

#endif  // KUBELET_KUBELET_VOLUME_CONTENT_PLUGINS_H_
