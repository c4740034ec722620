// The pod calls of API-server mode on the shared API client (upstream: the clientset calls of
// pkg/kubelet/status/status_manager.go and pkg/kubelet/pod/mirror_client.go): GET a pod, PATCH
// its status with a strategic merge patch, DELETE it with grace period 0 and a UID precondition,
// POST a (mirror) pod; and NodeUidLookup, the uid of this node's Node for mirror pods' owner
// reference. src/app adapts these to the core's status::PodStatusClient and MirrorClient, so the
// core never depends on the API client.
//
// Errors: a transport failure as the client reports it; an HTTP error as
// apiclient::ResponseStatus maps it (404 NotFound, 409 Conflict Aborted, ...).
// Thread-safety: thread-safe (the RestClient is). Ownership: shares the client.
#ifndef KUBELET_KUBELET_APIPODS_POD_API_H_
#define KUBELET_KUBELET_APIPODS_POD_API_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "apiclient/rest_client.h"
#include "common/clock.h"
#include "nlohmann/json.hpp"

namespace kubelet::apipods {

class PodApi {
 public:
  explicit PodApi(std::shared_ptr<apiclient::RestClient> client);

  // GET /api/v1/namespaces/<ns>/pods/<name>.
  absl::StatusOr<nlohmann::json> Get(const std::string& ns, const std::string& name);
  // PATCH .../pods/<name>/status, application/strategic-merge-patch+json.
  absl::Status PatchStatus(const std::string& ns, const std::string& name,
                           const std::string& patch);
  // DELETE .../pods/<name> with {"gracePeriodSeconds":0,"preconditions":{"uid":<uid>}} (no
  // preconditions when `uid` is empty).
  absl::Status Delete(const std::string& ns, const std::string& name, const std::string& uid);
  // POST /api/v1/namespaces/<ns>/pods of `pod` (a Pod as JSON); the created object.
  absl::StatusOr<nlohmann::json> Create(const std::string& ns, const std::string& pod);

 private:
  std::shared_ptr<apiclient::RestClient> client_;
};

// The uid of Node `node_name` as GET /api/v1/nodes/<name> reports it (upstream's mirror client
// asks its node lister). nullopt while the Node does not exist, is being deleted, or cannot be
// read. Cheap to call often: a known uid is reused for `refresh`; while unknown the Node is read
// at most once per `retry`, and concurrent callers never wait for a read in flight (they get the
// last answer).
// Thread-safety: thread-safe. Ownership: shares the client; `clock` must outlive it.
class NodeUidLookup {
 public:
  struct Options {
    absl::Duration refresh = absl::Minutes(1);
    absl::Duration retry = absl::Seconds(5);
  };
  NodeUidLookup(std::shared_ptr<apiclient::RestClient> client, std::string node_name,
                const Clock& clock, Options options);
  NodeUidLookup(std::shared_ptr<apiclient::RestClient> client, std::string node_name,
                const Clock& clock)
      : NodeUidLookup(std::move(client), std::move(node_name), clock, Options{}) {}

  std::optional<std::string> Get();

 private:
  std::shared_ptr<apiclient::RestClient> client_;
  const std::string node_name_;
  const Clock& clock_;
  const Options options_;
  absl::Mutex mu_;
  std::optional<std::string> uid_ ABSL_GUARDED_BY(mu_);
  absl::Time read_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace kubelet::apipods

#endif  // KUBELET_KUBELET_APIPODS_POD_API_H_
