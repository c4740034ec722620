#include "app/cluster_content.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/codec.h"
#include "common/log.h"

namespace kubelet::app {

WatchingObjectSource::WatchingObjectSource(std::shared_ptr<apiclient::RestClient> client,
                                           Clock& clock, Options options)
    : client_(std::move(client)), clock_(clock), options_(std::move(options)) {}

WatchingObjectSource::~WatchingObjectSource() { Stop(); }

std::set<WatchingObjectSource::Key> WatchingObjectSource::Referenced(const api::Pod& pod) {
  std::set<Key> out;
  const std::string& ns = pod.metadata.namespace_;
  for (const api::Volume& v : pod.spec.volumes) {
    if (v.config_map.has_value()) out.emplace("configmaps", ns, v.config_map->name);
    if (v.secret.has_value()) out.emplace("secrets", ns, v.secret->secret_name);
    if (!v.projected.has_value()) continue;
    for (const api::VolumeProjection& p : v.projected->sources) {
      if (p.config_map.has_value()) out.emplace("configmaps", ns, p.config_map->name);
      if (p.secret.has_value()) out.emplace("secrets", ns, p.secret->name);
    }
  }
  return out;
}

void WatchingObjectSource::RegisterPod(const api::Pod& pod) {
  const std::set<Key> keys = Referenced(pod);
  std::vector<std::shared_ptr<Item>> to_stop;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    // References first, releases after: an object the pod keeps is never stopped and restarted.
    for (const Key& k : keys) {
      std::shared_ptr<Item>& item = items_[k];
      if (item == nullptr) {
        const auto& [resource, ns, name] = k;
        item = std::make_shared<Item>();
        item->store = std::make_unique<apiclient::Store>();
        apiclient::ReflectorOptions ro = options_.reflector;
        ro.name = absl::StrCat(resource, " ", ns, "/", name);
        ro.path = absl::StrCat("/api/v1/namespaces/", ns, "/", resource);
        ro.field_selector = absl::StrCat("metadata.name=", name);
        ro.label_selector.clear();
        item->reflector =
            std::make_unique<apiclient::Reflector>(*client_, *item->store, ro, clock_);
        item->reflector->Start();
        KLOG_V(4, "Watching object for its pods", "resource", resource, "namespace", ns, "name",
               name);
      }
      ++item->refs;
    }
    auto it = pods_.find(pod.metadata.uid);
    if (it != pods_.end()) to_stop = Release(it->second);
    pods_[pod.metadata.uid] = keys;
  }
  for (const std::shared_ptr<Item>& item : to_stop) item->reflector->Stop();
}

std::vector<std::shared_ptr<WatchingObjectSource::Item>> WatchingObjectSource::Release(
    const std::set<Key>& keys) {
  std::vector<std::shared_ptr<Item>> out;
  for (const Key& k : keys) {
    auto it = items_.find(k);
    if (it == items_.end()) continue;
    if (--it->second->refs <= 0) {
      out.push_back(it->second);
      items_.erase(it);
    }
  }
  return out;
}

void WatchingObjectSource::UnregisterPod(const std::string& pod_uid) {
  std::vector<std::shared_ptr<Item>> to_stop;
  {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(pod_uid);
    if (it == pods_.end()) return;
    to_stop = Release(it->second);
    pods_.erase(it);
  }
  for (const std::shared_ptr<Item>& item : to_stop) item->reflector->Stop();
}

void WatchingObjectSource::Stop() {
  std::map<Key, std::shared_ptr<Item>> items;
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
    items.swap(items_);
    pods_.clear();
  }
  for (auto& [k, item] : items) item->reflector->Stop();
}

size_t WatchingObjectSource::watched() const {
  absl::MutexLock lock(&mu_);
  return items_.size();
}

absl::StatusOr<nlohmann::json> WatchingObjectSource::Get(const std::string& resource,
                                                         const char* singular,
                                                         const std::string& ns,
                                                         const std::string& name) {
  std::shared_ptr<Item> item;
  {
    absl::MutexLock lock(&mu_);
    auto it = items_.find(Key{resource, ns, name});
    if (it != items_.end()) item = it->second;
  }
  if (item == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("object ", log::Quote(ns), "/", log::Quote(name), " not registered"));
  }
  const absl::Time deadline = absl::Now() + options_.sync_wait;
  while (!item->store->HasSynced()) {
    if (absl::Now() >= deadline) {
      return absl::UnavailableError(
          absl::StrCat("failed to sync ", singular, " cache: timed out waiting for the condition"));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  std::optional<nlohmann::json> obj = item->store->Get(absl::StrCat(ns, "/", name));
  if (!obj.has_value()) {
    return absl::NotFoundError(absl::StrCat(singular, " ", log::Quote(name), " not found"));
  }
  return *std::move(obj);
}

absl::StatusOr<api::ConfigMap> WatchingObjectSource::GetConfigMap(const std::string& ns,
                                                                  const std::string& name) {
  absl::StatusOr<nlohmann::json> j = Get("configmaps", "configmap", ns, name);
  if (!j.ok()) return j.status();
  return api::FromJson<api::ConfigMap>(*j);
}

absl::StatusOr<api::Secret> WatchingObjectSource::GetSecret(const std::string& ns,
                                                            const std::string& name) {
  absl::StatusOr<nlohmann::json> j = Get("secrets", "secret", ns, name);
  if (!j.ok()) return j.status();
  return api::FromJson<api::Secret>(*j);
}

absl::StatusOr<api::TokenRequest> RestTokenClient::CreateToken(const std::string& ns,
                                                               const std::string& name,
                                                               const api::TokenRequest& request) {
  apiclient::Request req;
  req.method = "POST";
  req.path = absl::StrCat("/api/v1/namespaces/", ns, "/serviceaccounts/", name, "/token");
  req.body = api::Encode(request);
  req.content_type = apiclient::kJsonContentType;
  absl::StatusOr<apiclient::Response> resp = client_->Do(req);
  if (!resp.ok()) return resp.status();
  if (!resp->ok()) return apiclient::ResponseStatus(*resp);
  return api::Decode<api::TokenRequest>(resp->body);
}

}  // namespace kubelet::app
