#include "kubelet/podsource/api_source.h"

#include <set>
#include <utility>

#include "absl/status/status.h"
#include "api/pod_codec.h"
#include "api/pod_defaults.h"
#include "common/files.h"
#include "common/log.h"

namespace kubelet::podsource {

ApiSource::ApiSource(PodConfig& config, ApiSourceOptions options)
    : config_(config), options_(std::move(options)) {
  config_.AddSource(kApiSourceName);
}

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

void ApiSource::Store(const std::string& key, const nlohmann::json& object,
                      std::map<std::string, api::Pod>* previous) {
  absl::StatusOr<api::Pod> pod = absl::UnknownError("not decoded");
  try {
    if (object.is_object() && (!object.contains("kind") || !object.contains("apiVersion"))) {
      // A list item: the API server leaves out the type of a list's items.
      nlohmann::json typed = object;
      if (!typed.contains("kind")) typed["kind"] = "Pod";
      if (!typed.contains("apiVersion")) typed["apiVersion"] = "v1";
      pod = api::DecodePod(typed.dump());
    } else {
      pod = api::DecodePod(object.dump());
    }
  } catch (const std::exception& e) {
    pod = absl::InvalidArgumentError(e.what());
  }
  if (pod.ok()) {
    logged_.erase(key);
    api::SetDefaultsPod(&*pod);
    pods_[key] = *std::move(pod);
    checkpoint_dirty_.insert(key);
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
  if (!listed_ && !pods_.empty()) {
    KLOG_INFO("The API server's pod list replaces the pods restored from the checkpoint",
              "restored", pods_.size(), "listed", objects.size());
  }
  listed_ = true;
  std::map<std::string, api::Pod> previous;
  previous.swap(pods_);
  for (const nlohmann::json& o : objects) {
    std::string key = KeyOf(o);
    if (key.empty()) {
      KLOG_ERROR(absl::InvalidArgumentError("object without metadata.name"),
                 "Failed to decode pod from the API server");
      continue;
    }
    Store(key, o, &previous);
  }
  // Errors of objects that are gone are forgotten.
  std::set<std::string> keys;
  for (const nlohmann::json& o : objects) keys.insert(KeyOf(o));
  std::erase_if(logged_, [&](const auto& entry) { return !keys.count(entry.first); });
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
  Store(key, object, nullptr);  // a failed update leaves pods_[key] as it was
  Deliver();
}

void ApiSource::Delete(const nlohmann::json& object) {
  std::string key = KeyOf(object);
  if (key.empty()) return;
  absl::MutexLock lock(&deliver_mu_);
  logged_.erase(key);
  if (pods_.erase(key) == 0) return;
  Deliver();
}

void ApiSource::Stop() { stopping_ = true; }

void ApiSource::Deliver() {
  if (stopping_.load()) return;
  std::vector<api::Pod> pods;
  pods.reserve(pods_.size());
  for (const auto& [key, pod] : pods_) pods.push_back(pod);
  if (config_.SetSource(kApiSourceName, std::move(pods), &stopping_)) ++deliveries_;
  if (listed_) WriteCheckpoint();
}

void ApiSource::WriteCheckpoint() {
  if (options_.checkpoint_path.empty()) return;
  // Only pods stored since the last write are encoded again (a status update of one pod does
  // not re-encode the others); items of pods that are gone are dropped.
  std::erase_if(checkpoint_items_, [&](const auto& item) { return pods_.count(item.first) == 0; });
  for (const std::string& key : checkpoint_dirty_) {
    auto it = pods_.find(key);
    if (it == pods_.end()) continue;
    nlohmann::json j = nlohmann::json::parse(api::EncodePodJson(it->second), nullptr, false);
    if (!j.is_object()) continue;
    j.erase("status");
    if (j.contains("metadata") && j["metadata"].is_object()) {
      j["metadata"].erase("resourceVersion");
      j["metadata"].erase("managedFields");
    }
    checkpoint_items_[key] = j.dump();
  }
  checkpoint_dirty_.clear();
  std::string text = R"({"apiVersion":"v1","kind":"PodList","items":[)";
  bool first = true;
  for (const auto& [key, item] : checkpoint_items_) {
    if (!first) text += ',';
    text += item;
    first = false;
  }
  text += "]}";
  if (text == last_checkpoint_) return;
  if (absl::Status st = WriteFileAtomically(options_.checkpoint_path, text, 0600); !st.ok()) {
    KLOG_ERROR(st, "Failed to write the API pods checkpoint", "path", options_.checkpoint_path);
    return;
  }
  last_checkpoint_ = std::move(text);
}

size_t ApiSource::RestoreFromCheckpoint() {
  if (options_.checkpoint_path.empty()) return 0;
  absl::StatusOr<std::string> text = ReadFileToString(options_.checkpoint_path);
  if (!text.ok()) return 0;
  nlohmann::json list = nlohmann::json::parse(*text, nullptr, false);
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) {
    KLOG_ERROR(absl::DataLossError("not a pod list"), "Ignoring an unreadable API pods checkpoint",
               "path", options_.checkpoint_path);
    return 0;
  }
  absl::MutexLock lock(&deliver_mu_);
  if (listed_) return 0;  // the API server answered first
  pods_.clear();
  for (const nlohmann::json& o : list["items"]) {
    std::string key = KeyOf(o);
    if (!key.empty()) Store(key, o, nullptr);
  }
  last_checkpoint_ = *text;
  KLOG_INFO("Restored pods from the checkpoint while the API server is unreachable", "pods",
            pods_.size(), "path", options_.checkpoint_path);
  Deliver();
  return pods_.size();
}

}  // namespace kubelet::podsource
