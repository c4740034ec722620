#include "kubelet/pod_manager.h"

#include <algorithm>

#include "api/static_pod.h"

namespace kubelet {

void PodManager::AddOrUpdatePod(const api::Pod& pod) {
  absl::MutexLock lock(&mu_);
  by_uid_[pod.metadata.uid] = pod;
  if (!order_.count(pod.metadata.uid)) order_[pod.metadata.uid] = next_++;
}

void PodManager::RemovePod(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  by_uid_.erase(uid);
  order_.erase(uid);
}

std::optional<api::Pod> PodManager::GetPodByUID(const std::string& uid) const {
  absl::MutexLock lock(&mu_);
  auto it = by_uid_.find(uid);
  if (it == by_uid_.end()) return std::nullopt;
  return it->second;
}

std::optional<api::Pod> PodManager::GetPodByFullName(const std::string& full_name) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [uid, pod] : by_uid_) {
    if (api::PodFullName(pod) == full_name) return pod;
  }
  return std::nullopt;
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

}  // namespace kubelet
