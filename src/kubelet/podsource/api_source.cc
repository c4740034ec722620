#include "kubelet/podsource/api_source.h"

#include <utility>

#include "absl/status/status.h"
#include "api/pod_codec.h"
#include "api/pod_defaults.h"
#include "common/log.h"

namespace kubelet::podsource {

ApiSource::ApiSource(PodConfig& config) : config_(config) { config_.AddSource(kApiSourceName); }

std::string ApiSource::KeyOf(const nlohmann::json& object) {
  if (!object.is_object()) return "";
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  std::string ns, name;
  if (auto it = meta->find("namespace"); it != meta->end() && it->is_string()) {
    ns = it->get<std::string>();
  }
  if (auto it = meta->find("name"); it != meta->end() && it->is_string()) {
    name = it->get<std::string>();
  }
  if (name.empty()) return "";
  return ns.empty() ? name : ns + "/" + name;
}

void ApiSource::Replace(std::vector<nlohmann::json> objects) {
  absl::MutexLock lock(&deliver_mu_);
  objects_.clear();
  for (nlohmann::json& o : objects) {
    std::string key = KeyOf(o);
    if (key.empty()) {
      KLOG_ERROR(absl::InvalidArgumentError("object without metadata.name"),
                 "Failed to decode pod from the API server");
      continue;
    }
    objects_[key] = std::move(o);
  }
  Deliver();
}

void ApiSource::Add(const nlohmann::json& object) { Update(object); }

void ApiSource::Update(const nlohmann::json& object) {
  std::string key = KeyOf(object);
  if (key.empty()) {
    KLOG_ERROR(absl::InvalidArgumentError("object without metadata.name"),
               "Failed to decode pod from the API server");
    return;
  }
  absl::MutexLock lock(&deliver_mu_);
  objects_[key] = object;
  Deliver();
}

void ApiSource::Delete(const nlohmann::json& object) {
  std::string key = KeyOf(object);
  absl::MutexLock lock(&deliver_mu_);
  if (objects_.erase(key) == 0) return;
  logged_.erase(key);
  Deliver();
}

void ApiSource::Stop() { stopping_ = true; }

void ApiSource::Deliver() {
  if (stopping_.load()) return;
  std::vector<api::Pod> pods;
  pods.reserve(objects_.size());
  for (const auto& [key, object] : objects_) {
    absl::StatusOr<api::Pod> pod = absl::UnknownError("not decoded");
    try {
      pod = api::DecodePod(object.dump());
    } catch (const std::exception& e) {
      pod = absl::InvalidArgumentError(e.what());
    }
    if (!pod.ok()) {
      std::string message(pod.status().message());
      auto it = logged_.find(key);
      if (it == logged_.end() || it->second != message) {
        KLOG_ERROR(pod.status(), "Failed to decode pod from the API server", "pod", key);
        logged_[key] = message;
      }
      continue;
    }
    logged_.erase(key);
    api::SetDefaultsPod(&*pod);
    pods.push_back(std::move(*pod));
  }
  if (config_.SetSource(kApiSourceName, std::move(pods), &stopping_)) ++deliveries_;
}

}  // namespace kubelet::podsource
