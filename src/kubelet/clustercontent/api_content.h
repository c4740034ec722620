// The volume component's cluster interfaces (volume/cluster_content.h) on the API client, for
// API-server mode. MakeObjectSource picks the implementation by the KubeletConfiguration's
// configMapAndSecretChangeDetectionStrategy, as upstream's configmap/secret managers:
//
//   Watch (default)  WatchingObjectSource: each configMap and secret a registered pod references
//     (api/pod_refs.h: volumes, env, envFrom, imagePullSecrets) gets its own Reflector (LIST +
//     WATCH of /api/v1/namespaces/<ns>/<resource> with fieldSelector metadata.name=<name>, what
//     the Node authorizer grants a node for objects of its pods), started at once and stopped
//     when no registered pod references it any more. Get* waits up to `sync_wait` for the first
//     LIST ("failed to sync configmap cache: timed out waiting for the condition"), then answers
//     from the reflector's store: the object, or NotFound (`configmap "x" not found`). An
//     immutable object stops its watch once read and is served from then on as read. A change
//     of a watched object is reported for the pods referencing it (on_object_changed).
//   Cache            CachingObjectSource: a GET per object, kept for a TTL (the Node's
//     node.alpha.kubernetes.io/ttl annotation in seconds, else one minute); a pod registered
//     anew (new UID, other references or another resourceVersion) makes its objects stale;
//     refreshes after the first read ask the API server's cache (resourceVersion=0); a failed
//     refresh keeps the last good object (a NotFound replaces it). Immutable objects never
//     expire.
//   Get              SimpleObjectSource: a GET on every call; registration is a no-op.
//
// Watch and Cache answer an object no registered pod references with
// `object "ns"/"name" not registered`, as upstream's. Secret contents are never logged.
//
//   RestTokenClient  POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token.
//
// Thread-safety: thread-safe; reflector threads are never stopped with a lock held.
// Ownership: each keeps the shared RestClient; the clock is borrowed.
#ifndef KUBELET_KUBELET_CLUSTERCONTENT_API_CONTENT_H_
#define KUBELET_KUBELET_CLUSTERCONTENT_API_CONTENT_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "apiclient/reflector.h"
#include "apiclient/rest_client.h"
#include "common/clock.h"
#include "config/kubelet_configuration.h"
#include "kubelet/volume/cluster_content.h"

namespace kubelet::clustercontent {

// An ObjectSource the wiring can stop at shutdown.
class ClusterObjectSource : public volume::ObjectSource {
 public:
  // Stops background work (watches); later registrations start none. Idempotent.
  virtual void Stop() {}
};

struct ObjectSourceOptions {
  // Watch: how long Get* waits for a new object's first LIST.
  absl::Duration sync_wait = absl::Seconds(1);
  apiclient::ReflectorOptions reflector;  // name, path and field_selector are set per object
  // Cache: the TTL the Node announces (node.alpha.kubernetes.io/ttl); nullopt: default_ttl.
  std::function<std::optional<absl::Duration>()> ttl;
  absl::Duration default_ttl = absl::Minutes(1);
  // Watch: called (in a reflector's loop, no lock held) with the UID of each registered pod
  // referencing an object whose content changed after it was first listed, so the kubelet can
  // sync the pod and republish its volumes at once (upstream waits for the pod's next periodic
  // sync, up to syncFrequency later). Unset: nothing is called.
  std::function<void(const std::string& pod_uid)> on_object_changed;
};

// "Watch", "Cache" or "Get"; anything else is an InvalidArgument error.
absl::StatusOr<std::shared_ptr<ClusterObjectSource>> MakeObjectSource(
    std::string_view strategy, std::shared_ptr<apiclient::RestClient> client, Clock& clock,
    ObjectSourceOptions options);

// Reads configMapAndSecretChangeDetectionStrategy: MakeObjectSource's `strategy`.
std::string ObjectSourceStrategyFromConfig(const config::KubeletConfiguration& c);
inline constexpr std::string_view kObjectSourceConfigFields[] = {
    "configMapAndSecretChangeDetectionStrategy"};

// The TTL a Node's annotations announce (upstream GetObjectTTLFromNodeFunc): the integer
// seconds of node.alpha.kubernetes.io/ttl; nullopt when absent or not an integer.
std::optional<absl::Duration> ObjectTTLFromAnnotations(
    const std::map<std::string, std::string>& annotations);

// (resource, namespace, name); resource is "configmaps" or "secrets".
using ObjectKey = std::tuple<std::string, std::string, std::string>;
// Every configMap and secret `pod` references.
std::set<ObjectKey> ReferencedObjects(const api::Pod& pod);

class WatchingObjectSource final : public ClusterObjectSource {
 public:
  WatchingObjectSource(std::shared_ptr<apiclient::RestClient> client, Clock& clock,
                       ObjectSourceOptions options);
  ~WatchingObjectSource() override;

  void RegisterPod(const api::Pod& pod) override;
  void UnregisterPod(const std::string& pod_uid) override;
  absl::StatusOr<api::ConfigMap> GetConfigMap(const std::string& ns,
                                              const std::string& name) override;
  absl::StatusOr<api::Secret> GetSecret(const std::string& ns, const std::string& name) override;
  void Stop() override;

  // Objects referenced now, and those of them with a running watch (for tests).
  size_t referenced() const;
  size_t watched() const;

 private:
  struct Item {
    std::unique_ptr<apiclient::Store> store;
    std::unique_ptr<apiclient::Reflector> reflector;
    int refs = 0;
    // Set once the object was read as immutable: its watch is stopped, the store keeps it.
    bool immutable = false;
    // The object's resourceVersion when last seen ("-" absent); nullopt before the first list.
    std::optional<std::string> seen_version;
  };
  // The store's change callback: reports a new version of `key` to the pods referencing it.
  void OnStoreChange(const ObjectKey& key, const Item* which);
  absl::StatusOr<nlohmann::json> Get(const std::string& resource, const char* singular,
                                     const std::string& ns, const std::string& name);
  // Drops references; returns the items to stop (outside the lock).
  std::vector<std::shared_ptr<Item>> Release(const std::set<ObjectKey>& keys)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::shared_ptr<apiclient::RestClient> client_;
  Clock& clock_;
  const ObjectSourceOptions options_;
  mutable absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::map<ObjectKey, std::shared_ptr<Item>> items_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<ObjectKey>> pods_ ABSL_GUARDED_BY(mu_);  // by pod UID
};

class CachingObjectSource final : public ClusterObjectSource {
 public:
  CachingObjectSource(std::shared_ptr<apiclient::RestClient> client, Clock& clock,
                      ObjectSourceOptions options);

  void RegisterPod(const api::Pod& pod) override;
  void UnregisterPod(const std::string& pod_uid) override;
  absl::StatusOr<api::ConfigMap> GetConfigMap(const std::string& ns,
                                              const std::string& name) override;
  absl::StatusOr<api::Secret> GetSecret(const std::string& ns, const std::string& name) override;

 private:
  // One object's cached answer; its own lock serializes fetches of that object.
  struct Entry {
    absl::Mutex mu;
    std::atomic<bool> stale{false};            // set by RegisterPod: fetch on the next Get
    bool fetched ABSL_GUARDED_BY(mu) = false;  // false: fetch on the next Get
    std::optional<nlohmann::json> object ABSL_GUARDED_BY(mu);
    absl::Status error ABSL_GUARDED_BY(mu);  // NotFound of the last fetch
    absl::Time updated ABSL_GUARDED_BY(mu);
  };
  struct Item {
    std::shared_ptr<Entry> entry = std::make_shared<Entry>();
    int refs = 0;
  };
  struct PodRefs {
    std::set<ObjectKey> keys;
    std::string resource_version;
  };
  absl::StatusOr<nlohmann::json> Get(const std::string& resource, const char* singular,
                                     const std::string& ns, const std::string& name);
  void Release(const std::set<ObjectKey>& keys) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Duration Ttl() const;

  const std::shared_ptr<apiclient::RestClient> client_;
  Clock& clock_;
  const ObjectSourceOptions options_;
  absl::Mutex mu_;
  std::map<ObjectKey, Item> items_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, PodRefs> pods_ ABSL_GUARDED_BY(mu_);  // by pod UID
};

class SimpleObjectSource final : public ClusterObjectSource {
 public:
  explicit SimpleObjectSource(std::shared_ptr<apiclient::RestClient> client)
      : client_(std::move(client)) {}
  void RegisterPod(const api::Pod&) override {}
  void UnregisterPod(const std::string&) override {}
  absl::StatusOr<api::ConfigMap> GetConfigMap(const std::string& ns,
                                              const std::string& name) override;
  absl::StatusOr<api::Secret> GetSecret(const std::string& ns, const std::string& name) override;

 private:
  const std::shared_ptr<apiclient::RestClient> client_;
};

//   RestClaimSource  GET /api/v1/namespaces/<ns>/persistentvolumeclaims/<name> and
//                    /api/v1/persistentvolumes/<name> on every call (a 404 as Get's).
class RestClaimSource final : public volume::ClaimSource {
 public:
  explicit RestClaimSource(std::shared_ptr<apiclient::RestClient> client)
      : client_(std::move(client)) {}
  absl::StatusOr<api::PersistentVolumeClaim> GetPersistentVolumeClaim(
      const std::string& ns, const std::string& name) override;
  absl::StatusOr<api::PersistentVolume> GetPersistentVolume(const std::string& name) override;

 private:
  const std::shared_ptr<apiclient::RestClient> client_;
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

}  // namespace kubelet::clustercontent

#endif  // KUBELET_KUBELET_CLUSTERCONTENT_API_CONTENT_H_
