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
  nlohmann::json options = {
      {"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"gracePeriodSeconds", 0}};
  if (!uid.empty()) options["preconditions"] = {{"uid", uid}};
  req.body = options.dump();
  req.content_type = apiclient::kJsonContentType;
  return Send(*client_, req);
}

absl::StatusOr<nlohmann::json> PodApi::Create(const std::string& ns, const std::string& pod) {
  apiclient::Request req;
  req.method = "POST";
  req.path = absl::StrCat("/api/v1/namespaces/", ns, "/pods");
  req.body = pod;
  req.content_type = apiclient::kJsonContentType;
  absl::StatusOr<apiclient::Response> r = client_->Do(req);
  if (!r.ok()) return r.status();
  if (!r->ok()) return apiclient::ResponseStatus(*r);
  nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
  if (!j.is_object()) return absl::DataLossError("the created pod is not a JSON object");
  return j;
}

NodeUidLookup::NodeUidLookup(std::shared_ptr<apiclient::RestClient> client, std::string node_name,
                             const Clock& clock, Options options)
    : client_(std::move(client)),
      node_name_(std::move(node_name)),
      clock_(clock),
      options_(options) {}

std::optional<std::string> NodeUidLookup::Get() {
  {
    absl::MutexLock lock(&mu_);
    const absl::Duration fresh_for = uid_ ? options_.refresh : options_.retry;
    if (reading_ || clock_.Now() - read_at_ < fresh_for) return uid_;
    reading_ = true;
  }
  std::optional<std::string> uid;
  apiclient::Request req;
  req.path = absl::StrCat("/api/v1/nodes/", node_name_);
  absl::StatusOr<apiclient::Response> r = client_->Do(req);
  bool answered = r.ok() && (r->ok() || r->code == 404);
  if (r.ok() && r->ok()) {
    nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_object() && j.contains("metadata") && j["metadata"].is_object()) {
      const nlohmann::json& m = j["metadata"];
      std::string value;
      if (auto it = m.find("uid"); it != m.end() && it->is_string()) value = it->get<std::string>();
      // A Node being deleted gets no new mirror pods (upstream syncPod).
      bool deleting = m.contains("deletionTimestamp") && !m["deletionTimestamp"].is_null();
      if (!value.empty() && !deleting) uid = value;
    }
  }
  absl::MutexLock lock(&mu_);
  reading_ = false;
  read_at_ = clock_.Now();
  // A transport error keeps the last known uid (the Node did not change because the API server
  // is away); an answer replaces it.
  if (answered) uid_ = uid;
  return uid_;
}

}  // namespace kubelet::apipods
