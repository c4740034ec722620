// What a request path means to the API server: the parts its RequestInfo resolver reads from a
// resource path (/api/v1/... and /apis/<group>/<version>/...) and the verb it derives from the
// method, for clients that count or route their requests the way the server does.
//
//   /api/v1/namespaces/ns/pods/p/status?x=y  -> base "/api/v1", namespace "ns", resource "pods",
//                                               name "p", subresource "status", query {x: y}
//   /api/v1/namespaces/ns                    -> resource "namespaces", name "ns"
//   /api/v1/namespaces/ns/status             -> resource "namespaces", name "ns", subresource
//                                               "status" (also "finalize")
//
// Verbs: GET of a name is get, of a collection list (watch with watch=true or watch=1); POST
// create, PUT update, PATCH patch, DELETE of a name delete, of a collection deletecollection.
#ifndef KUBELET_APICLIENT_REQUEST_INFO_H_
#define KUBELET_APICLIENT_REQUEST_INFO_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace kubelet::apiclient {

struct RequestInfo {
  std::string base;  // "/api/v1" or "/apis/<group>/<version>"
  std::string namespace_;
  std::string resource;
  std::string name;
  std::string subresource;
  std::map<std::string, std::string> query;  // unescaped
  // base + "/" + resource, e.g. "/api/v1/pods".
  std::string Collection() const { return base + "/" + resource; }
};

// Nullopt for a path that names no resource (/healthz, /api, /apis/g/v, deeper than a
// subresource).
std::optional<RequestInfo> ParseRequestPath(std::string_view path_and_query);

// The API server's verb for `method` on `info` ("" for a method it has no verb for).
std::string RequestVerb(std::string_view method, const RequestInfo& info);

}  // namespace kubelet::apiclient

#endif  // KUBELET_APICLIENT_REQUEST_INFO_H_
