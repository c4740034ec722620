// The CRI mounts of a container's volumeMounts (upstream kubelet_pods.go makeMounts, minus the
// /etc/hosts and termination-log mounts the runtime manager adds itself).
//
// For each volumeMount, in order: the volume's host path (looked up through `lookup`, which
// answers only for volumes that are set up) or, with a subPath (or an expanded subPathExpr),
// the subPath's bind target (below); readonly when the mount or the volume says so; propagation
// None -> PRIVATE, HostToContainer -> HOST_TO_CONTAINER, Bidirectional -> BIDIRECTIONAL (privileged
// containers only); selinux_relabel false.
//
// subPath rules (upstream messages): absolute -> "error SubPath `x` must not be an absolute
// path"; a ".." element -> "unable to provision SubPath `x`: must not contain '..'"; a missing
// subPath is created as directories with the volume directory's mode, never following a symlink
// out of the volume ("failed to create subPath directory for volumeMount ..."). The subPath is
// then pinned (subpath.h): its symlinks must resolve inside the volume, the resolved file is
// opened without following symlinks and bind-mounted onto
// <pod_dir>/volume-subpaths/<volume>/<container>/<volumeMount index>, which is the host path
// the runtime gets; any failure there is "failed to prepare subPath for volumeMount ...". The
// detailed reason (it names host paths) is only logged, as upstream does. The bind mounts stay
// until the volume manager tears the pod's volumes down (CleanSubPaths).
//
// subPathExpr: $(VAR) references expand against the container's env entries with a plain value
// (themselves expanded against the earlier entries) and fieldRef entries of metadata.*,
// spec.nodeName, spec.serviceAccountName; other valueFrom sources (resourceFieldRef,
// configMap/secret keys, status.podIP, ...) and envFrom are not visible here and expand as a
// missing value ("missing value for VAR").
//
// Thread-safe; calls for one pod are serialized by the caller (they share its bind targets).
#ifndef KUBELET_KUBELET_VOLUME_CONTAINER_MOUNTS_H_
#define KUBELET_KUBELET_VOLUME_CONTAINER_MOUNTS_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/pod.h"
#include "cri/proto/api.pb.h"
#include "kubelet/volume/subpath.h"

namespace kubelet::volume {

// A volume as set up on the host.
struct MountableVolume {
  std::string host_path;
  bool read_only = false;  // the plugin always mounts it read-only (downwardAPI)
};

using VolumeLookup = std::function<std::optional<MountableVolume>(const std::string& name)>;

// `pod_dir` is <root dir>/pods/<uid>, where subPaths are bind-mounted.
absl::StatusOr<std::vector<runtime::v1::Mount>> MakeContainerMounts(const api::Pod& pod,
                                                                    const api::Container& container,
                                                                    const VolumeLookup& lookup,
                                                                    const std::string& pod_dir);

// The variables subPathExpr can reference (see the contract above).
std::map<std::string, std::string> SubPathExprEnv(const api::Pod& pod,
                                                  const api::Container& container);

// $(VAR) expansion of a subPathExpr ("$$" escapes "$"); an unknown or empty variable fails with
// "missing value for A, B" (sorted), as upstream ExpandContainerVolumeMounts.
absl::StatusOr<std::string> ExpandSubPathExpr(const std::string& expr,
                                              const std::map<std::string, std::string>& env);

// Validates `sp.sub_path`, creates it below `sp.volume_path` when missing, pins it with
// BindSubPath and returns the bind target (the host path for the runtime).
absl::StatusOr<std::string> PrepareSubPath(const SubPath& sp);

}  // namespace kubelet::volume

#endif  // KUBELET_KUBELET_VOLUME_CONTAINER_MOUNTS_H_
