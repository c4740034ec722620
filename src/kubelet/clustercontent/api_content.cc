#include "kubelet/clustercontent/api_content.h"

#include <charconv>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/codec.h"
#include "api/pod_refs.h"
#include "common/log.h"

namespace kubelet::clustercontent {
namespace {

constexpr char kObjectTTLAnnotation[] = "node.alpha.kubernetes.io/ttl";

bool IsImmutable(const nlohmann::json& object) {
  auto it = object.find("immutable");
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

absl::Status NotRegistered(const std::string& ns, const std::string& name) {
  return absl::FailedPreconditionError(
      absl::StrCat("object ", log::Quote(ns), "/", log::Quote(name), " not registered"));
}

// GET of one core/v1 object (cluster-scoped when `ns` is empty). A 404 is NotFound with the API
// server's message (`configmaps "x" not found`), as upstream's managers hand it on.
absl::StatusOr<nlohmann::json> FetchObject(apiclient::RestClient& client,
                                           const std::string& resource, const std::string& ns,
                                           const std::string& name, bool from_cache) {
  apiclient::Request req;
  req.path = absl::StrCat("/api/v1/", ns.empty() ? "" : absl::StrCat("namespaces/", ns, "/"),
                          resource, "/", name, from_cache ? "?resourceVersion=0" : "");
  absl::StatusOr<apiclient::Response> resp = client.Do(req);
  if (!resp.ok()) return resp.status();
  if (resp->code == 404) {
    apiclient::ApiError e = apiclient::DecodeApiError(*resp);
    return absl::NotFoundError(e.message.empty()
                                   ? absl::StrCat(resource, " ", log::Quote(name), " not found")
                                   : e.message);
  }
  if (!resp->ok()) return apiclient::ResponseStatus(*resp);
  nlohmann::json j = nlohmann::json::parse(resp->body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    return absl::InternalError(absl::StrCat("cannot decode ", resource, " ", ns, "/", name));
  }
  return j;
}

// upstream isObjectOlder: both resourceVersions are integers and `a` is below `b`.
bool ResourceVersionOlder(const std::string& a, const std::string& b) {
  uint64_t x = 0, y = 0;
  auto [pa, ea] = std::from_chars(a.data(), a.data() + a.size(), x);
  auto [pb, eb] = std::from_chars(b.data(), b.data() + b.size(), y);
  if (a.empty() || b.empty() || ea != std::errc() || eb != std::errc()) return false;
  if (pa != a.data() + a.size() || pb != b.data() + b.size()) return false;
  return x < y;
}

template <typename T>
absl::StatusOr<T> As(absl::StatusOr<nlohmann::json> j) {
  if (!j.ok()) return j.status();
  return api::FromJson<T>(*j);
}

}  // namespace

std::optional<absl::Duration> ObjectTTLFromAnnotations(
    const std::map<std::string, std::string>& annotations) {
  auto it = annotations.find(kObjectTTLAnnotation);
  if (it == annotations.end()) return std::nullopt;
  const std::string& v = it->second;
  int64_t seconds = 0;
  const char* end = v.data() + v.size();
  auto [ptr, ec] = std::from_chars(v.data() + (!v.empty() && v[0] == '+' ? 1 : 0), end, seconds);
  if (ec != std::errc() || ptr != end || v.empty()) return std::nullopt;
  return absl::Seconds(seconds);
}

std::set<ObjectKey> ReferencedObjects(const api::Pod& pod) {
  std::set<ObjectKey> out;
  const std::string& ns = pod.metadata.namespace_;
  // An empty name names nothing to watch.
  for (const std::string& n : api::PodConfigMapNames(pod)) {
    if (!n.empty()) out.emplace("configmaps", ns, n);
  }
  for (const std::string& n : api::PodSecretNames(pod)) {
    if (!n.empty()) out.emplace("secrets", ns, n);
  }
  return out;
}

absl::StatusOr<std::shared_ptr<ClusterObjectSource>> MakeObjectSource(
    std::string_view strategy, std::shared_ptr<apiclient::RestClient> client, Clock& clock,
    ObjectSourceOptions options) {
  if (strategy == "Watch" || strategy.empty()) {
    return std::make_shared<WatchingObjectSource>(std::move(client), clock, std::move(options));
  }
  if (strategy == "Cache") {
    return std::make_shared<CachingObjectSource>(std::move(client), clock, std::move(options));
  }
  if (strategy == "Get") return std::make_shared<SimpleObjectSource>(std::move(client));
  return absl::InvalidArgumentError(
      absl::StrCat("unknown configMapAndSecretChangeDetectionStrategy: ", log::Quote(strategy)));
}

// ---- Watch ------------------------------------------------------------------------------------

WatchingObjectSource::WatchingObjectSource(std::shared_ptr<apiclient::RestClient> client,
                                           Clock& clock, ObjectSourceOptions options)
    : client_(std::move(client)), clock_(clock), options_(std::move(options)) {}

WatchingObjectSource::~WatchingObjectSource() { Stop(); }

void WatchingObjectSource::RegisterPod(const api::Pod& pod) {
  const std::set<ObjectKey> keys = ReferencedObjects(pod);
  std::vector<std::shared_ptr<Item>> to_stop;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    // References first, releases after: an object the pod keeps is never stopped and restarted.
    for (const ObjectKey& k : keys) {
      std::shared_ptr<Item>& item = items_[k];
      if (item == nullptr) {
        const auto& [resource, ns, name] = k;
        item = std::make_shared<Item>();
        // The callback names its item too: a released item's reflector still stopping must not
        // speak for a newer item of the same key.
        const Item* self = item.get();
        item->store = std::make_unique<apiclient::Store>(
            options_.on_object_changed
                ? std::function<void()>([this, k, self] { OnStoreChange(k, self); })
                : std::function<void()>());
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

void WatchingObjectSource::OnStoreChange(const ObjectKey& key, const Item* which) {
  std::vector<std::string> pods;
  {
    absl::MutexLock lock(&mu_);
    auto it = items_.find(key);
    if (it == items_.end() || it->second.get() != which) return;
    Item& item = *it->second;
    const auto& [resource, ns, name] = key;
    std::optional<nlohmann::json> obj = item.store->Get(absl::StrCat(ns, "/", name));
    std::string version = "-";
    if (obj.has_value()) {
      version = apiclient::MetadataString(*obj, "resourceVersion");
    }
    const bool first = !item.seen_version.has_value();
    // Bookmarks and relists of an unchanged object change nothing.
    if (!first && *item.seen_version == version) return;
    item.seen_version = version;
    if (first) return;
    for (const auto& [uid, keys] : pods_) {
      if (keys.count(key) > 0) pods.push_back(uid);
    }
  }
  for (const std::string& uid : pods) {
    KLOG_V(4, "Object changed, syncing the pods that reference it", "podUID", uid);
    options_.on_object_changed(uid);
  }
}

std::vector<std::shared_ptr<WatchingObjectSource::Item>> WatchingObjectSource::Release(
    const std::set<ObjectKey>& keys) {
  std::vector<std::shared_ptr<Item>> out;
  for (const ObjectKey& k : keys) {
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
  std::map<ObjectKey, std::shared_ptr<Item>> items;
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
    items.swap(items_);
    pods_.clear();
  }
  for (auto& [k, item] : items) item->reflector->Stop();
}

size_t WatchingObjectSource::referenced() const {
  absl::MutexLock lock(&mu_);
  return items_.size();
}

size_t WatchingObjectSource::watched() const {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [k, item] : items_) n += item->immutable ? 0 : 1;
  return n;
}

absl::StatusOr<nlohmann::json> WatchingObjectSource::Get(const std::string& resource,
                                                         const char* singular,
                                                         const std::string& ns,
                                                         const std::string& name) {
  std::shared_ptr<Item> item;
  {
    absl::MutexLock lock(&mu_);
    auto it = items_.find(ObjectKey{resource, ns, name});
    if (it != items_.end()) item = it->second;
  }
  if (item == nullptr) return NotRegistered(ns, name);
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
  if (IsImmutable(*obj)) {
    // It cannot change any more: its watch is no longer needed (upstream stops it too). The
    // store keeps the object for every later Get while pods reference it.
    bool stop = false;
    {
      absl::MutexLock lock(&mu_);
      if (!item->immutable) item->immutable = stop = true;
    }
    if (stop) {
      item->reflector->Stop();
      KLOG_V(4, "Stopped watching for changes - object is immutable", "obj",
             absl::StrCat(ns, "/", name));
    }
  }
  return *std::move(obj);
}

absl::StatusOr<api::ConfigMap> WatchingObjectSource::GetConfigMap(const std::string& ns,
                                                                  const std::string& name) {
  return As<api::ConfigMap>(Get("configmaps", "configmap", ns, name));
}

absl::StatusOr<api::Secret> WatchingObjectSource::GetSecret(const std::string& ns,
                                                            const std::string& name) {
  return As<api::Secret>(Get("secrets", "secret", ns, name));
}

// ---- Cache ------------------------------------------------------------------------------------

CachingObjectSource::CachingObjectSource(std::shared_ptr<apiclient::RestClient> client,
                                         Clock& clock, ObjectSourceOptions options)
    : client_(std::move(client)), clock_(clock), options_(std::move(options)) {}

void CachingObjectSource::RegisterPod(const api::Pod& pod) {
  PodRefs refs{ReferencedObjects(pod), pod.metadata.resource_version};
  std::vector<std::shared_ptr<Entry>> stale;
  {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(pod.metadata.uid);
    // The kubelet registers a pod on every sync; only a new or changed pod makes its objects
    // stale (upstream registers on pod add and update).
    if (it != pods_.end() && it->second.keys == refs.keys &&
        it->second.resource_version == refs.resource_version) {
      return;
    }
    for (const ObjectKey& k : refs.keys) {
      Item& item = items_[k];
      ++item.refs;
      stale.push_back(item.entry);
    }
    if (it != pods_.end()) Release(it->second.keys);
    pods_[pod.metadata.uid] = std::move(refs);
  }
  // Never waits for a fetch in flight (an entry's lock is held across it).
  for (const std::shared_ptr<Entry>& e : stale) e->stale.store(true);
}

void CachingObjectSource::Release(const std::set<ObjectKey>& keys) {
  for (const ObjectKey& k : keys) {
    auto it = items_.find(k);
    if (it == items_.end()) continue;
    if (--it->second.refs <= 0) items_.erase(it);
  }
}

void CachingObjectSource::UnregisterPod(const std::string& pod_uid) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(pod_uid);
  if (it == pods_.end()) return;
  Release(it->second.keys);
  pods_.erase(it);
}

absl::Duration CachingObjectSource::Ttl() const {
  if (options_.ttl) {
    if (std::optional<absl::Duration> ttl = options_.ttl()) return *ttl;
  }
  return options_.default_ttl;
}

absl::StatusOr<nlohmann::json> CachingObjectSource::Get(const std::string& resource,
                                                        const char* /*singular*/,
                                                        const std::string& ns,
                                                        const std::string& name) {
  std::shared_ptr<Entry> entry;
  {
    absl::MutexLock lock(&mu_);
    auto it = items_.find(ObjectKey{resource, ns, name});
    if (it != items_.end()) entry = it->second.entry;
  }
  if (entry == nullptr) return NotRegistered(ns, name);
  absl::MutexLock lock(&entry->mu);
  if (entry->stale.exchange(false)) entry->fetched = false;
  const absl::Time now = clock_.Now();
  const bool have_object = entry->object.has_value() && entry->error.ok();
  const bool fresh = entry->fetched &&
                     ((have_object && IsImmutable(*entry->object)) || now < entry->updated + Ttl());
  if (!fresh) {
    // A refresh of an object read before may come from the API server's cache.
    absl::StatusOr<nlohmann::json> got = FetchObject(*client_, resource, ns, name, have_object);
    if (got.ok() || absl::IsNotFound(got.status())) {
      const bool older =
          got.ok() && have_object &&
          ResourceVersionOlder(apiclient::MetadataString(*got, "resourceVersion"),
                               apiclient::MetadataString(*entry->object, "resourceVersion"));
      if (!older) {
        if (got.ok()) {
          entry->object = *std::move(got);
          entry->error = absl::OkStatus();
        } else {
          entry->object.reset();
          entry->error = got.status();
        }
        entry->updated = now;
        entry->fetched = true;
      }
    } else if (!entry->object.has_value() && entry->error.ok()) {
      // Nothing read yet: hand on the failure (the next Get tries again).
      return got.status();
    }
    // Otherwise a failed refresh keeps the last answer, to be retried on the next Get.
  }
  if (!entry->error.ok()) return entry->error;
  if (!entry->object.has_value()) return NotRegistered(ns, name);
  return *entry->object;
}

absl::StatusOr<api::ConfigMap> CachingObjectSource::GetConfigMap(const std::string& ns,
                                                                 const std::string& name) {
  return As<api::ConfigMap>(Get("configmaps", "configmap", ns, name));
}

absl::StatusOr<api::Secret> CachingObjectSource::GetSecret(const std::string& ns,
                                                           const std::string& name) {
  return As<api::Secret>(Get("secrets", "secret", ns, name));
}

// ---- Get --------------------------------------------------------------------------------------

absl::StatusOr<api::ConfigMap> SimpleObjectSource::GetConfigMap(const std::string& ns,
                                                                const std::string& name) {
  return As<api::ConfigMap>(FetchObject(*client_, "configmaps", ns, name, false));
}

absl::StatusOr<api::Secret> SimpleObjectSource::GetSecret(const std::string& ns,
                                                          const std::string& name) {
  return As<api::Secret>(FetchObject(*client_, "secrets", ns, name, false));
}

// ---- Tokens -----------------------------------------------------------------------------------

absl::StatusOr<api::PersistentVolumeClaim> RestClaimSource::GetPersistentVolumeClaim(
    const std::string& ns, const std::string& name) {
  return As<api::PersistentVolumeClaim>(
      FetchObject(*client_, "persistentvolumeclaims", ns, name, false));
}

absl::StatusOr<api::PersistentVolume> RestClaimSource::GetPersistentVolume(
    const std::string& name) {
  return As<api::PersistentVolume>(FetchObject(*client_, "persistentvolumes", "", name, false));
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

}  // namespace kubelet::clustercontent
