// Mirror pods (upstream pkg/kubelet/pod/mirror_client.go, v1.28): the API server's read-only
// copy of a static pod, so the cluster sees the pods a kubelet runs from files or a URL.
//
// MirrorClient is the narrow interface through which the Kubelet core creates and deletes them;
// API-server mode implements it on the API client (src/kubelet/apipods, wired in src/app), and
// standalone mode has none. BuildMirrorPod and the predicates below are the pure parts: what
// object is created, and when an existing mirror pod no longer mirrors its static pod.
//
// The created object is what the NodeRestriction admission plugin accepts from a node: the static
// pod as the kubelet holds it (bound to the node: spec.nodeName is set by the static pod
// defaults) with annotation kubernetes.io/config.mirror = the static pod's
// kubernetes.io/config.hash, exactly one owner reference {apiVersion v1, kind Node, name, uid,
// controller true} (blockOwnerDeletion unset), no uid, resourceVersion or status. Static pods
// never reference service accounts, secrets, config maps or PVCs (the file and URL sources
// reject them), so nothing else needs filtering.
//
// Thread-safety: implementations must be thread-safe (pod workers and housekeeping call them
// concurrently). The functions are pure.
#ifndef KUBELET_KUBELET_MIRROR_CLIENT_H_
#define KUBELET_KUBELET_MIRROR_CLIENT_H_

#include <string>

#include "absl/status/status.h"
#include "api/pod.h"

namespace kubelet {

class MirrorClient {
 public:
  virtual ~MirrorClient() = default;
  // POST /api/v1/namespaces/<ns>/pods of `mirror` (built by BuildMirrorPod). Errors as the API
  // client maps them (AlreadyExists for 409 AlreadyExists, ...).
  virtual absl::Status CreateMirrorPod(const api::Pod& mirror) = 0;
  // DELETE pods/<name> with gracePeriodSeconds 0 and, when `uid` is not empty, the UID
  // precondition. NotFound when it is gone; a failed precondition as the client maps 409.
  virtual absl::Status DeleteMirrorPod(const std::string& ns, const std::string& name,
                                       const std::string& uid) = 0;
};

// The mirror pod of `static_pod` owned by Node `node_name` / `node_uid`.
api::Pod BuildMirrorPod(const api::Pod& static_pod, const std::string& node_name,
                        const std::string& node_uid);

// upstream IsMirrorPodOf: same name and namespace, and the mirror's config.mirror annotation
// equals the static pod's config.hash.
bool IsMirrorPodOf(const api::Pod& mirror, const api::Pod& static_pod);

// Whether `mirror`'s controller owner reference is Node `node_name` with uid `node_uid`.
bool IsMirrorPodOwnedByNode(const api::Pod& mirror, const std::string& node_name,
                            const std::string& node_uid);

}  // namespace kubelet

#endif  // KUBELET_KUBELET_MIRROR_CLIENT_H_
