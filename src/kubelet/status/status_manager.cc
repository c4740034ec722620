#include "kubelet/status/status_manager.h"

namespace kubelet::status {

uint64_t StatusManager::SetPodStatus(const std::string& uid, api::PodStatus status) {
  absl::MutexLock lock(&mu_);
  auto it = statuses_.find(uid);
  if (it != statuses_.end() && it->second.status == status) return it->second.version;
  Versioned& v = statuses_[uid];
  v.status = std::move(status);
  v.version = next_version_++;
  return v.version;
}

std::optional<StatusManager::Versioned> StatusManager::GetPodStatus(const std::string& uid) const {
  absl::MutexLock lock(&mu_);
  auto it = statuses_.find(uid);
  if (it == statuses_.end()) return std::nullopt;
  return it->second;
}

void StatusManager::RemoveOrphanedStatuses(const std::set<std::string>& keep) {
  absl::MutexLock lock(&mu_);
  for (auto it = statuses_.begin(); it != statuses_.end();) {
    it = keep.count(it->first) ? std::next(it) : statuses_.erase(it);
  }
}

}  // namespace kubelet::status
