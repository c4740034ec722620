// TokenManager: service account tokens for projected volumes (upstream
// pkg/kubelet/token/token_manager.go). Tokens are cached by service account, namespace,
// audiences, expirationSeconds and bound object (KeyFunc; the key holds no secret and may be
// logged). A cached token is returned until it RequiresRefresh: older than 80% of its TTL
// (expirationSeconds) or than 24 h, each less a random jitter of up to 10 s. A failed refresh
// returns the cached token while it has not expired (logged), and an error once it has
// ("token <key> expired and refresh failed: ..."); a first fetch that fails is
// "failed to fetch token: ...". Expired entries are dropped by Cleanup(); a pod's tokens by
// DeleteServiceAccountToken(uid) when its volumes are torn down.
//
// Thread-safety: thread-safe; the TokenClient is called without the lock held (two syncs may
// fetch the same key at once; the last answer wins, as upstream). Ownership: borrows the client
// (may be null: standalone mode) and the clock.
#ifndef KUBELET_KUBELET_VOLUME_TOKEN_MANAGER_H_
#define KUBELET_KUBELET_VOLUME_TOKEN_MANAGER_H_

#include <functional>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/authentication.h"
#include "common/clock.h"
#include "kubelet/volume/cluster_content.h"

namespace kubelet::volume {

inline constexpr absl::Duration kTokenMaxTTL = absl::Hours(24);
inline constexpr absl::Duration kTokenMaxJitter = absl::Seconds(10);

class TokenManager {
 public:
  // `rand01` returns a value in [0, 1) for the jitter; unset: a random one.
  TokenManager(TokenClient* client, const Clock& clock, std::function<double()> rand01 = nullptr);

  absl::StatusOr<api::TokenRequest> GetServiceAccountToken(const std::string& ns,
                                                           const std::string& name,
                                                           const api::TokenRequest& request);
  // Drops the cached tokens bound to the pod with `pod_uid`.
  void DeleteServiceAccountToken(const std::string& pod_uid);
  // Drops expired tokens.
  void Cleanup();

  bool RequiresRefresh(const api::TokenRequest& tr) const;
  static std::string KeyFunc(const std::string& name, const std::string& ns,
                             const api::TokenRequest& tr);
  size_t size() const;

 private:
  bool Expired(const api::TokenRequest& tr) const;

  TokenClient* const client_;
  const Clock& clock_;
  const std::function<double()> rand01_;
  mutable absl::Mutex mu_;
  std::map<std::string, api::TokenRequest> cache_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet::volume

#endif  // KUBELET_KUBELET_VOLUME_TOKEN_MANAGER_H_
