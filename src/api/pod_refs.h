// The configMaps and secrets a pod references (upstream podutil.VisitPodSecretNames and
// VisitPodConfigmapNames): imagePullSecrets; env valueFrom and envFrom of init, app and
// ephemeral containers; configMap, secret and projected volumes. Empty names are kept, as
// upstream visits them (API validation lets an empty imagePullSecrets name through).
// Pure functions; thread-safe.
#ifndef KUBELET_API_POD_REFS_H_
#define KUBELET_API_POD_REFS_H_

#include <set>
#include <string>

#include "api/pod.h"

namespace kubelet::api {

std::set<std::string> PodSecretNames(const Pod& pod);
std::set<std::string> PodConfigMapNames(const Pod& pod);

}  // namespace kubelet::api

#endif  // KUBELET_API_POD_REFS_H_
