#include "kubelet/pod_manager.h"

#include <algorithm>

#include "api/static_pod.h"

namespace kubelet {

void PodManager::AddOrUpdatePod(const api::Pod& pod) {
  absl::MutexLock lock(&mu_);
  if (api::IsMirrorPod(pod)) {
    mirror_by_full_name_[api::PodFullName(pod)] = pod;
    return;
  }
  by_uid_[pod.metadata.uid] = pod;
  if (!order_.count(pod.metadata.uid)) order_[pod.metadata.uid] = next_++;
}

void PodManager::RemovePod(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  if (by_uid_.erase(uid) > 0) {
    order_.erase(uid);
    return;
  }
  // Only the mirror pod with this UID: a newer one of the same name stays.
  std::erase_if(mirror_by_full_name_,
                [&](const auto& entry) { return entry.second.metadata.uid == uid; });
}

std::optional<api::Pod> PodManager::GetPodByUID(const std::string& uid) const {
  absl::MutexLock lock(&mu_);
  auto it = by_uid_.find(uid);
  if (it == by_uid_.end()) return std::nullopt;
  return it->second;
}

std::optional<api::Pod> PodManager::FindByFullNameLocked(const std::string& full_name) const {
  for (const auto& [uid, pod] : by_uid_) {
    if (api::PodFullName(pod) == full_name) return pod;
  }
  return std::nullopt;
}

std::optional<api::Pod> PodManager::GetPodByFullName(const std::string& full_name) const {
  absl::MutexLock lock(&mu_);
  return FindByFullNameLocked(full_name);
}

std::vector<api::Pod> PodManager::GetPods() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<uint64_t, const api::Pod*>> sorted;
  for (const auto& [uid, pod] : by_uid_) sorted.emplace_back(order_.at(uid), &pod);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<api::Pod> out;
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

std::optional<api::Pod> PodManager::GetMirrorPodByPod(const api::Pod& pod) const {
  absl::MutexLock lock(&mu_);
  auto it = mirror_by_full_name_.find(api::PodFullName(pod));
  if (it == mirror_by_full_name_.end()) return std::nullopt;
  return it->second;
}

std::optional<api::Pod> PodManager::GetPodByMirrorPod(const api::Pod& mirror) const {
  absl::MutexLock lock(&mu_);
  return FindByFullNameLocked(api::PodFullName(mirror));
}

std::vector<api::Pod> PodManager::GetMirrorPods() const {
  absl::MutexLock lock(&mu_);
  std::vector<api::Pod> out;
  for (const auto& [name, pod] : mirror_by_full_name_) out.push_back(pod);
  return out;
}

std::vector<api::Pod> PodManager::GetOrphanedMirrorPods() const {
  absl::MutexLock lock(&mu_);
  std::set<std::string> names;
  for (const auto& [uid, pod] : by_uid_) names.insert(api::PodFullName(pod));
  std::vector<api::Pod> out;
  for (const auto& [name, pod] : mirror_by_full_name_) {
    if (!names.count(name)) out.push_back(pod);
  }
  return out;
}

}  // namespace kubelet
