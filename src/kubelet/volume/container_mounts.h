// The CRI mounts of a container's volumeMounts (upstream kubelet_pods.go makeMounts, minus the
// /etc/hosts and termination-log mounts the runtime manager adds itself).
//
// For each volumeMount, in order: the volume's host path (looked up through `lookup`, which
// answers only for volumes that are set up), joined with the subPath (or the expanded
// subPathExpr) when given; readonly when the mount or the volume says so; propagation None ->
// PRIVATE, HostToContainer -> HOST_TO_CONTAINER, Bidirectional -> BIDIRECTIONAL (privileged
// containers only); selinux_relabel false.
//
// subPath rules (upstream messages): absolute -> "error SubPath `x` must not be an absolute
// path"; a ".." element -> "unable to provision SubPath `x`: must not contain '..'"; a missing
// subPath is created as directories with the volume directory's mode; a subPath whose resolved
// path (symlinks followed) leaves the volume fails with "failed to prepare subPath for
// volumeMount ...". Unlike upstream the subPath is not bind-mounted to pin it: a container that
// swaps a checked directory for a symlink between the check and the runtime's mount is not
// stopped (upstream's PrepareSafeSubpath closes that window).
//
// subPathExpr: $(VAR) references expand against the container's env entries with a plain value
// (themselves expanded against the earlier entries) and fieldRef entries of metadata.*,
// spec.nodeName, spec.serviceAccountName; other valueFrom sources (resourceFieldRef,
// configMap/secret keys, status.podIP, ...) and envFrom are not visible here and expand as a
// missing value ("missing value for VAR").
//
// Pure functions; thread-safe.
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

namespace kubelet::volume {

// A volume as set up on the host.
struct MountableVolume {
  std::string host_path;
  bool read_only = false;  // the plugin always mounts it read-only (downwardAPI)
};

using VolumeLookup = std::function<std::optional<MountableVolume>(const std::string& name)>;

absl::StatusOr<std::vector<runtime::v1::Mount>> MakeContainerMounts(const api::Pod& pod,
                                                                    const api::Container& container,
                                                                    const VolumeLookup& lookup);

// The variables subPathExpr can reference (see the contract above).
std::map<std::string, std::string> SubPathExprEnv(const api::Pod& pod,
                                                  const api::Container& container);

// $(VAR) expansion of a subPathExpr ("$$" escapes "$"); an unknown or empty variable fails with
// "missing value for A, B" (sorted), as upstream ExpandContainerVolumeMounts.
absl::StatusOr<std::string> ExpandSubPathExpr(const std::string& expr,
                                              const std::map<std::string, std::string>& env);

// Validates `sub_path`, creates it below `volume_path` when missing and returns the host path.
absl::StatusOr<std::string> PrepareSubPath(const std::string& volume_path,
                                           const std::string& sub_path,
                                           const std::string& mount_name,
                                           const std::string& container_name);

}  // namespace kubelet::volume

#endif  // KUBELET_KUBELET_VOLUME_CONTAINER_MOUNTS_H_
