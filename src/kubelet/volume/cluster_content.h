// What the configMap, secret and projected volume plugins read from the cluster, behind narrow
// interfaces so the volume component does not depend on the API client (src/app implements them
// on apiclient::RestClient):
//
//   ObjectSource  configMaps and secrets (upstream pkg/kubelet/configmap + secret Manager). The
//                 kubelet registers the objects a pod references when it syncs the pod and
//                 unregisters them when the pod's volumes are torn down; an implementation may
//                 serve Get* from a per-object watch kept only while some pod references it
//                 (upstream's watch-based strategy, the default).
//   ClaimSource   PersistentVolumeClaims and PersistentVolumes, read when a pod's claims are
//                 resolved (upstream's desired-state populator GETs them each time).
//   TokenClient   the TokenRequest call (POST .../serviceaccounts/<name>/token), used by the
//                 TokenManager (token_manager.h) which caches and refreshes the tokens.
//
// In standalone mode there is neither: the plugins fail with upstream's standalone errors.
// Thread-safety: implementations must be thread-safe (pod workers call them concurrently); Get*
// may block briefly (an implementation's first sync of a new object, bounded) but never on
// another pod's work. Register/Unregister must not block on the network.
#ifndef KUBELET_KUBELET_VOLUME_CLUSTER_CONTENT_H_
#define KUBELET_KUBELET_VOLUME_CLUSTER_CONTENT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/authentication.h"
#include "api/core_misc.h"
#include "api/pod.h"
#include "api/storage.h"

namespace kubelet::volume {

// Upstream's errors when the kubelet has no API client (volume_host.go, token_manager.go).
inline constexpr char kStandaloneObjectError[] =
    "not supported due to running kubelet in standalone mode";
inline constexpr char kStandaloneTokenError[] =
    "cannot use TokenManager when kubelet is in standalone mode";

class ObjectSource {
 public:
  virtual ~ObjectSource() = default;

  // Starts tracking the configMaps and secrets `pod` references in its volumes; a later call
  // for the same UID replaces its references. Cheap and idempotent.
  virtual void RegisterPod(const api::Pod& pod) = 0;
  // Stops tracking what the pod with `pod_uid` referenced (objects no other registered pod
  // references are dropped).
  virtual void UnregisterPod(const std::string& pod_uid) = 0;

  // The object, or NotFound with upstream's message (`configmap "x" not found`,
  // `secret "x" not found`); other failures (e.g. the cache not synced yet, forbidden) as
  // errors of another code.
  virtual absl::StatusOr<api::ConfigMap> GetConfigMap(const std::string& ns,
                                                      const std::string& name) = 0;
  virtual absl::StatusOr<api::Secret> GetSecret(const std::string& ns, const std::string& name) = 0;
};

class ClaimSource {
 public:
  virtual ~ClaimSource() = default;
  // The object, or NotFound with the API server's message
  // (`persistentvolumeclaims "x" not found`); other failures as errors of another code.
  virtual absl::StatusOr<api::PersistentVolumeClaim> GetPersistentVolumeClaim(
      const std::string& ns, const std::string& name) = 0;
  virtual absl::StatusOr<api::PersistentVolume> GetPersistentVolume(const std::string& name) = 0;
};

class TokenClient {
 public:
  virtual ~TokenClient() = default;
  // POSTs `request` for the service account `name` in `ns`; returns the API server's answer
  // (status.token, status.expirationTimestamp) or its error.
  virtual absl::StatusOr<api::TokenRequest> CreateToken(const std::string& ns,
                                                        const std::string& name,
                                                        const api::TokenRequest& request) = 0;
};

}  // namespace kubelet::volume

#endif  // KUBELET_KUBELET_VOLUME_CLUSTER_CONTENT_H_
