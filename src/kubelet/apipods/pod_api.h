// The pod calls of API-server mode on the shared API client (upstream: the clientset calls of
// pkg/kubelet/status/status_manager.go): GET a pod, PATCH its status with a strategic merge
// patch, DELETE it with grace period 0 and a UID precondition. src/app adapts this to the core's
// status::PodStatusClient, so the core never depends on the API client.
//
// Errors: a transport failure as the client reports it; an HTTP error as
// apiclient::ResponseStatus maps it (404 NotFound, 409 Conflict Aborted, ...).
// Thread-safety: thread-safe (the RestClient is). Ownership: shares the client.
#ifndef KUBELET_KUBELET_APIPODS_POD_API_H_
#define KUBELET_KUBELET_APIPODS_POD_API_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "apiclient/rest_client.h"
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
  // DELETE .../pods/<name> with {"gracePeriodSeconds":0,"preconditions":{"uid":<uid>}}.
  absl::Status Delete(const std::string& ns, const std::string& name, const std::string& uid);

 private:
  std::shared_ptr<apiclient::RestClient> client_;
};

}  // namespace kubelet::apipods

#endif  // KUBELET_KUBELET_APIPODS_POD_API_H_
