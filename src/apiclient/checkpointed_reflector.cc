#include "apiclient/checkpointed_reflector.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "common/guarded.h"
#include "common/log.h"

namespace kubelet::apiclient {

CheckpointedReflector::CheckpointedReflector(RestClient& client, ResourceEventHandler& handler,
                                             ReflectorOptions options, CheckpointOptions checkpoint,
                                             Clock& clock)
    : handler_(handler),
      name_(options.name),
      checkpoint_(std::move(checkpoint)),
      clock_(clock),
      reflector_(client, checkpoint_.path.empty() ? handler : recorder_, std::move(options),
                 clock) {}

CheckpointedReflector::~CheckpointedReflector() { Stop(); }

void CheckpointedReflector::Start() {
  reflector_.Start();
  if (checkpoint_.path.empty() || restorer_.joinable()) return;
  const absl::Time restore_at = clock_.Now() + checkpoint_.restore_after;
  restorer_ = GuardedThread(absl::StrCat("checkpoint restore ", name_), [this, restore_at] {
    {
      absl::MutexLock lock(&mu_);
      auto done = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopped_ || listed_; };
      if (clock_.AwaitWithDeadline(mu_, absl::Condition(&done), restore_at)) return;
    }
    Restore();
  });
}

void CheckpointedReflector::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
  }
  reflector_.Stop();
  if (restorer_.joinable()) restorer_.join();
}

void CheckpointedReflector::Restore() {
  absl::StatusOr<std::string> text = ReadFileToString(checkpoint_.path);
  if (!text.ok()) return;
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
  const nlohmann::json* items = nullptr;
  if (doc.is_array()) {
    items = &doc;
  } else if (doc.is_object() && doc.contains("items") && doc["items"].is_array()) {
    items = &doc["items"];
  }
  if (items == nullptr) {
    KLOG_ERROR(absl::DataLossError("not a list"), "Ignoring an unreadable checkpoint", "path",
               checkpoint_.path);
    return;
  }
  std::vector<nlohmann::json> objects(items->begin(), items->end());
  absl::MutexLock deliver(&deliver_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (listed_ || stopped_) return;  // the API server answered first
  }
  KLOG_INFO(
      absl::StrCat("Restored ", name_, " from the checkpoint while the API server is unreachable"),
      "count", objects.size(), "path", checkpoint_.path);
  handler_.Replace(std::move(objects), "");
}

void CheckpointedReflector::Put(const nlohmann::json& object) {
  const std::string key = Store::KeyOf(object);
  if (key.empty() || !object.is_object()) return;
  // Built from what is kept: the stripped members (a pod's status, its managed fields) are
  // never copied.
  nlohmann::json item = nlohmann::json::object();
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string& name = it.key();
    if (std::find(checkpoint_.strip.begin(), checkpoint_.strip.end(), name) !=
        checkpoint_.strip.end()) {
      continue;
    }
    if (name != "metadata" || !it->is_object()) {
      item[name] = *it;
      continue;
    }
    nlohmann::json& md = item[name] = nlohmann::json::object();
    for (auto m = it->begin(); m != it->end(); ++m) {
      if (m.key() != "resourceVersion" && m.key() != "managedFields") md[m.key()] = *m;
    }
  }
  items_[key] = item.dump();
}

void CheckpointedReflector::Record(const nlohmann::json& object) {
  absl::MutexLock lock(&mu_);
  Put(object);
  Write();
}

void CheckpointedReflector::Write() {
  std::string text = absl::StrCat(R"({"apiVersion":"v1","kind":)",
                                  nlohmann::json(checkpoint_.list_kind).dump(), R"(,"items":[)");
  bool first = true;
  for (const auto& [key, item] : items_) {
    if (!first) text += ',';
    text += item;
    first = false;
  }
  text += "]}";
  if (text == written_) return;
  if (absl::Status st = WriteFileAtomically(checkpoint_.path, text, 0600); !st.ok()) {
    KLOG_ERROR(st, "Failed to write a checkpoint", "name", name_, "path", checkpoint_.path);
    return;
  }
  written_ = std::move(text);
}

void CheckpointedReflector::Recorder::Replace(std::vector<nlohmann::json> objects,
                                              const std::string& rv) {
  absl::MutexLock deliver(&owner_.deliver_mu_);
  {
    absl::MutexLock lock(&owner_.mu_);
    owner_.listed_ = true;
    owner_.items_.clear();
    for (const nlohmann::json& o : objects) owner_.Put(o);
    owner_.Write();
  }
  owner_.handler_.Replace(std::move(objects), rv);
}

void CheckpointedReflector::Recorder::Add(const nlohmann::json& object) {
  absl::MutexLock deliver(&owner_.deliver_mu_);
  owner_.Record(object);
  owner_.handler_.Add(object);
}

void CheckpointedReflector::Recorder::Update(const nlohmann::json& object) {
  absl::MutexLock deliver(&owner_.deliver_mu_);
  owner_.Record(object);
  owner_.handler_.Update(object);
}

void CheckpointedReflector::Recorder::Delete(const nlohmann::json& object) {
  absl::MutexLock deliver(&owner_.deliver_mu_);
  {
    absl::MutexLock lock(&owner_.mu_);
    owner_.items_.erase(Store::KeyOf(object));
    owner_.Write();
  }
  owner_.handler_.Delete(object);
}

}  // namespace kubelet::apiclient
