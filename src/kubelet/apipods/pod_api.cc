#include "kubelet/apipods/pod_api.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace kubelet::apipods {
namespace {

std::string PodPath(const std::string& ns, const std::string& name) {
  return absl::StrCat("/api/v1/namespaces/", ns, "/pods/", name);
}

absl::Status Send(apiclient::RestClient& client, const apiclient::Request& req) {
  absl::StatusOr<apiclient::Response> r = client.Do(req);
  if (!r.ok()) return r.status();
  return apiclient::ResponseStatus(*r);
}

}  // namespace

PodApi::PodApi(std::shared_ptr<apiclient::RestClient> client) : client_(std::move(client)) {}

absl::StatusOr<nlohmann::json> PodApi::Get(const std::string& ns, const std::string& name) {
  apiclient::Request req;
  req.path = PodPath(ns, name);
  absl::StatusOr<apiclient::Response> r = client_->Do(req);
  if (!r.ok()) return r.status();
  if (!r->ok()) return apiclient::ResponseStatus(*r);
  nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
  if (!j.is_object()) return absl::DataLossError("the pod is not a JSON object");
  return j;
}

absl::Status PodApi::PatchStatus(const std::string& ns, const std::string& name,
                                 const std::string& patch) {
  apiclient::Request req;
  req.method = "PATCH";
  req.path = PodPath(ns, name) + "/status";
  req.body = patch;
  req.content_type = apiclient::kStrategicMergePatchType;
  return Send(*client_, req);
}

absl::Status PodApi::Delete(const std::string& ns, const std::string& name,
                            const std::string& uid) {
  apiclient::Request req;
  req.method = "DELETE";
  req.path = PodPath(ns, name);
  req.body = nlohmann::json{{"kind", "DeleteOptions"},
                            {"apiVersion", "v1"},
                            {"gracePeriodSeconds", 0},
                            {"preconditions", {{"uid", uid}}}}
                 .dump();
  req.content_type = apiclient::kJsonContentType;
  return Send(*client_, req);
}

}  // namespace kubelet::apipods
