#include "kubelet/pod_manager.h"

#include <algorithm>
#include <utility>

#include "api/static_pod.h"

namespace kubelet {

void PodManager::AddOrUpdatePod(api::PodPtr pod) {
  if (pod == nullptr) return;
  absl::MutexLock lock(&mu_);
  if (api::IsMirrorPod(*pod)) {
    mirror_by_full_name_[api::PodFullName(*pod)] = std::move(pod);
    return;
  }
  const std::string uid = pod->metadata.uid;
  by_uid_[uid] = std::move(pod);
  if (!order_.count(uid)) order_[uid] = next_++;
}

void PodManager::RemovePod(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  if (by_uid_.erase(uid) > 0) {
    order_.erase(uid);
    return;
  }
  // Only the mirror pod with this UID: a newer one of the same name stays.
  std::erase_if(mirror_by_full_name_,
                [&](const auto& entry) { return entry.second->metadata.uid == uid; });
}

api::PodPtr PodManager::GetPodByUID(const std::string& uid) const {
  absl::MutexLock lock(&mu_);
  auto it = by_uid_.find(uid);
  if (it == by_uid_.end()) return nullptr;
  return it->second;
}

api::PodPtr PodManager::FindByFullNameLocked(const std::string& full_name) const {
  for (const auto& [uid, pod] : by_uid_) {
    if (api::PodFullName(*pod) == full_name) return pod;
  }
  return nullptr;
}

api::PodPtr PodManager::GetPodByFullName(const std::string& full_name) const {
  absl::MutexLock lock(&mu_);
  return FindByFullNameLocked(full_name);
}

std::vector<api::PodPtr> PodManager::GetPods() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<uint64_t, const api::PodPtr*>> sorted;
  sorted.reserve(by_uid_.size());
  for (const auto& [uid, pod] : by_uid_) sorted.emplace_back(order_.at(uid), &pod);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<api::PodPtr> out;
  out.reserve(sorted.size());
  for (const auto& [order, pod] : sorted) out.push_back(*pod);
  return out;
}

std::set<std::string> PodManager::UIDs() const {
  absl::MutexLock lock(&mu_);
  std::set<std::string> out;
  for (const auto& [uid, pod] : by_uid_) out.insert(uid);
  return out;
}

size_t PodManager::Size() const {
  absl::MutexLock lock(&mu_);
  return by_uid_.size();
}

api::PodPtr PodManager::GetMirrorPodByPod(const api::Pod& pod) const {
  absl::MutexLock lock(&mu_);
  auto it = mirror_by_full_name_.find(api::PodFullName(pod));
  if (it == mirror_by_full_name_.end()) return nullptr;
  return it->second;
}

api::PodPtr PodManager::GetPodByMirrorPod(const api::Pod& mirror) const {
  absl::MutexLock lock(&mu_);
  return FindByFullNameLocked(api::PodFullName(mirror));
}

std::vector<api::PodPtr> PodManager::GetMirrorPods() const {
  absl::MutexLock lock(&mu_);
  std::vector<api::PodPtr> out;
  for (const auto& [name, pod] : mirror_by_full_name_) out.push_back(pod);
  return out;
}

std::vector<api::PodPtr> PodManager::GetOrphanedMirrorPods() const {
  absl::MutexLock lock(&mu_);
  std::set<std::string> names;
  for (const auto& [uid, pod] : by_uid_) names.insert(api::PodFullName(*pod));
  std::vector<api::PodPtr> out;
  for (const auto& [name, pod] : mirror_by_full_name_) {
    if (!names.count(name)) out.push_back(pod);
  }
  return out;
}

}  // namespace kubelet
