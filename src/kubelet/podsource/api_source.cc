#include "kubelet/podsource/api_source.h"

#include <memory>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "api/pod_codec.h"
#include "api/pod_defaults.h"
#include "common/log.h"
#include "common/object_key.h"

namespace kubelet::podsource {

ApiSource::ApiSource(PodConfig& config) : config_(config) { config_.AddSource(kApiSourceName); }

void ApiSource::Store(const std::string& key, const nlohmann::json& object,
                      std::map<std::string, api::PodPtr>* previous) {
  // A list's items come without kind and apiVersion. Never throws (pod_codec.h).
  absl::StatusOr<api::Pod> pod = api::DecodePodDocument(object, /*list_item=*/true);
  if (pod.ok()) {
    logged_.erase(key);
    api::SetDefaultsPod(&*pod);
    pods_[key] = std::make_shared<const api::Pod>(*std::move(pod));
    return;
  }
  std::string message(pod.status().message());
  auto it = logged_.find(key);
  if (it == logged_.end() || it->second != message) {
    KLOG_ERROR(pod.status(), "Failed to decode pod from the API server", "pod", key);
    logged_[key] = message;
  }
  // The last good version of a known pod stays.
  if (previous != nullptr) {
    if (auto old = previous->find(key); old != previous->end()) pods_[key] = old->second;
  }
}

void ApiSource::Replace(std::vector<nlohmann::json> objects) {
  absl::MutexLock lock(&deliver_mu_);
  std::map<std::string, api::PodPtr> previous;
  previous.swap(pods_);
  for (const nlohmann::json& o : objects) {
    std::string key = ObjectKey(o);
    if (key.empty()) {
      KLOG_ERROR(absl::InvalidArgumentError("object without metadata.name"),
                 "Failed to decode pod from the API server");
      continue;
    }
    Store(key, o, &previous);
  }
  // Errors of objects that are gone are forgotten.
  std::set<std::string> keys;
  for (const nlohmann::json& o : objects) keys.insert(ObjectKey(o));
  std::erase_if(logged_, [&](const auto& entry) { return !keys.count(entry.first); });
  Deliver();
}

void ApiSource::Add(const nlohmann::json& object) { Update(object); }

void ApiSource::Update(const nlohmann::json& object) {
  std::string key = ObjectKey(object);
  if (key.empty()) {
    KLOG_ERROR(absl::InvalidArgumentError("object without metadata.name"),
               "Failed to decode pod from the API server");
    return;
  }
  absl::MutexLock lock(&deliver_mu_);
  Store(key, object, nullptr);  // a failed update leaves pods_[key] as it was
  Deliver();
}

void ApiSource::Delete(const nlohmann::json& object) {
  std::string key = ObjectKey(object);
  if (key.empty()) return;
  absl::MutexLock lock(&deliver_mu_);
  logged_.erase(key);
  if (pods_.erase(key) == 0) return;
  Deliver();
}

void ApiSource::Stop() { stopping_ = true; }

void ApiSource::Deliver() {
  if (stopping_.load()) return;
  std::vector<api::PodPtr> pods;
  pods.reserve(pods_.size());
  for (const auto& [key, pod] : pods_) pods.push_back(pod);
  if (config_.SetSource(kApiSourceName, std::move(pods), &stopping_)) ++deliveries_;
}

}  // namespace kubelet::podsource
