// Service environment variables (Docker-links style), ported from upstream
// pkg/kubelet/envvars/envvars.go (FromServices) and kubelet_pods.go (getServiceEnvVarMap and the
// service-sync gate of makeEnvironmentVariables), v1.28.
//
// Per service NAME (upper-cased, '-' -> '_') with a cluster IP that is set and not "None":
//   NAME_SERVICE_HOST=<clusterIP>, NAME_SERVICE_PORT=<first port>,
//   NAME_SERVICE_PORT_<PORTNAME>=<port> for every named port,
//   NAME_PORT=<proto>://<ip>:<port> (first port), and for every port
//   NAME_PORT_<port>_<PROTO>=<proto>://<ip>:<port> with _PROTO, _PORT and _ADDR; the protocol
//   defaults to TCP, IPv6 addresses are bracketed in the URLs.
// Which services a pod sees: those of its namespace when spec.enableServiceLinks (unset counts
// as true, the API default), plus always the "kubernetes" service of "default" (upstream's master
// services), which a same-named service of the pod's own namespace replaces when links are on.
//
// ServiceEnvCache holds the services a list/watch delivered (it knows nothing of the API client;
// the wiring feeds it, typed or as the API server's JSON objects: each is decoded once when it
// arrives, one that cannot be read is logged and left out). Until its first Replace(), EnvFor()
// fails for pods that are not static with upstream's "services have not yet been read at least
// once, cannot construct envvars" (the container start then fails with CreateContainerConfigError
// and is retried); static pods get what is known so far, as upstream. Thread-safe: the feeder
// writes on its thread while pod workers read.
#ifndef KUBELET_KUBELET_KUBERUNTIME_SERVICE_ENV_H_
#define KUBELET_KUBELET_KUBERUNTIME_SERVICE_ENV_H_

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "api/core_misc.h"
#include "api/pod.h"
#include "kubelet/kuberuntime/env.h"
#include "nlohmann/json.hpp"

namespace kubelet::kuberuntime {

// The cluster IP is set and not "None" (upstream v1helper.IsServiceIPSet).
bool IsServiceIPSet(const api::Service& service);

// The variables of `services` in upstream's order (per service: host, port, named ports, link
// variables). Services without a cluster IP are skipped.
std::vector<EnvVar> FromServices(const std::vector<const api::Service*>& services);

// getServiceEnvVarMap's projection: the variables a pod of namespace `ns` gets from `services`
// (all namespaces).
std::map<std::string, std::string> ServiceEnvVarMap(
    const std::vector<const api::Service*>& services, const std::string& ns,
    bool enable_service_links);

class ServiceEnvCache {
 public:
  // The complete set after a LIST; marks the cache synced.
  void Replace(std::vector<api::Service> services);
  // An added or updated service (keyed by namespace/name).
  void Upsert(api::Service service);
  void Remove(const std::string& ns, const std::string& name);
  bool HasSynced() const;
  size_t size() const;

  // The same from the API server's objects, in the shape of a reflector's handler.
  void Replace(std::vector<nlohmann::json> objects);
  void Add(const nlohmann::json& object);
  void Update(const nlohmann::json& object);
  void Delete(const nlohmann::json& object);

  // The service variables of `pod`'s containers.
  absl::StatusOr<std::map<std::string, std::string>> EnvFor(const api::Pod& pod) const;

 private:
  mutable absl::Mutex mu_;
  // namespace -> name -> service.
  std::map<std::string, std::map<std::string, api::Service>> services_ ABSL_GUARDED_BY(mu_);
  bool synced_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace kubelet::kuberuntime

#endif  // KUBELET_KUBELET_KUBERUNTIME_SERVICE_ENV_H_
