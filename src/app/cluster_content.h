// The volume component's cluster interfaces (volume/cluster_content.h) on the API client, for
// API-server mode:
//
//   WatchingObjectSource  upstream's watch-based configMap/secret managers
//     (configMapAndSecretChangeDetectionStrategy Watch, the default): RegisterPod counts the
//     configMaps and secrets a pod's volumes reference; each referenced object gets its own
//     Reflector (LIST + WATCH of /api/v1/namespaces/<ns>/<resource> with fieldSelector
//     metadata.name=<name>, what the Node authorizer grants a node for objects of its pods),
//     started at once and stopped when no registered pod references it any more. Get* waits up to
//     `sync_wait` for the first LIST ("failed to sync configmap cache: timed out waiting for the
//     condition"), then answers from the reflector's store: the object, or NotFound
//     (`configmap "x" not found`); an object no pod registered is an error
//     (`object "ns"/"name" not registered`), as upstream's.
//   RestTokenClient  POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token.
//
// Not done (upstream does): immutable objects are watched like any other (upstream stops their
// watch once read); references from env / envFrom / imagePullSecrets are not registered.
// Thread-safety: thread-safe; reflector threads are never stopped with the lock held.
// Ownership: each keeps the shared RestClient; the clock is borrowed.
#ifndef KUBELET_APP_CLUSTER_CONTENT_H_
#define KUBELET_APP_CLUSTER_CONTENT_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "apiclient/reflector.h"
#include "apiclient/rest_client.h"
#include "common/clock.h"
#include "kubelet/volume/cluster_content.h"

namespace kubelet::app {

class WatchingObjectSource final : public volume::ObjectSource {
 public:
  struct Options {
    absl::Duration sync_wait = absl::Seconds(1);
    apiclient::ReflectorOptions reflector;  // name, path and field_selector are set per object
  };
  WatchingObjectSource(std::shared_ptr<apiclient::RestClient> client, Clock& clock,
                       Options options);
  ~WatchingObjectSource() override;

  void RegisterPod(const api::Pod& pod) override;
  void UnregisterPod(const std::string& pod_uid) override;
  absl::StatusOr<api::ConfigMap> GetConfigMap(const std::string& ns,
                                              const std::string& name) override;
  absl::StatusOr<api::Secret> GetSecret(const std::string& ns, const std::string& name) override;

  // Stops every watch; later registrations start none. Idempotent.
  void Stop();
  // Objects watched now (for tests).
  size_t watched() const;

 private:
  // (resource, namespace, name); resource is "configmaps" or "secrets".
  using Key = std::tuple<std::string, std::string, std::string>;
  struct Item {
    std::unique_ptr<apiclient::Store> store;
    std::unique_ptr<apiclient::Reflector> reflector;
    int refs = 0;
  };
  static std::set<Key> Referenced(const api::Pod& pod);
  absl::StatusOr<nlohmann::json> Get(const std::string& resource, const char* singular,
                                     const std::string& ns, const std::string& name);
  // Drops references; returns the items to stop (outside the lock).
  std::vector<std::shared_ptr<Item>> Release(const std::set<Key>& keys)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::shared_ptr<apiclient::RestClient> client_;
  Clock& clock_;
  const Options options_;
  mutable absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::map<Key, std::shared_ptr<Item>> items_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<Key>> pods_ ABSL_GUARDED_BY(mu_);  // by pod UID
};

class RestTokenClient final : public volume::TokenClient {
 public:
  explicit RestTokenClient(std::shared_ptr<apiclient::RestClient> client)
      : client_(std::move(client)) {}
  absl::StatusOr<api::TokenRequest> CreateToken(const std::string& ns, const std::string& name,
                                                const api::TokenRequest& request) override;

 private:
  const std::shared_ptr<apiclient::RestClient> client_;
};

}  // namespace kubelet::app

#endif  // KUBELET_APP_CLUSTER_CONTENT_H_
