#include "kubelet/container/testing/fake_container_runtime.h"

namespace kubelet::container {

absl::StatusOr<std::vector<Pod>> FakeContainerRuntime::GetPods(bool) {
  absl::MutexLock lock(&mu_);
  calls_.push_back("GetPods");
  return pods_;
}

PodSyncResult FakeContainerRuntime::SyncPod(const api::Pod& pod, const PodStatus&) {
  absl::MutexLock lock(&mu_);
  calls_.push_back("SyncPod:" + pod.metadata.uid);
  synced_[pod.metadata.uid] = pod;
  return sync_result_;
}

std::optional<api::Pod> FakeContainerRuntime::LastSyncedPod(const std::string& uid) const {
  absl::MutexLock lock(&mu_);
  auto it = synced_.find(uid);
  if (it == synced_.end()) return std::nullopt;
  return it->second;
}

absl::Status FakeContainerRuntime::KillPod(const api::Pod* pod, const Pod& running,
                                           std::optional<int64_t>) {
  absl::MutexLock lock(&mu_);
  calls_.push_back("KillPod:" + (pod ? pod->metadata.uid : running.id));
  return absl::OkStatus();
}

absl::StatusOr<PodStatus> FakeContainerRuntime::GetPodStatus(const std::string& uid,
                                                             const std::string& name,
                                                             const std::string& ns) {
  absl::MutexLock lock(&mu_);
  auto it = statuses_.find(uid);
  if (it != statuses_.end()) return it->second;
  PodStatus s;
  s.id = uid;
  s.name = name;
  s.namespace_ = ns;
  return s;
}

absl::Status FakeContainerRuntime::GarbageCollect(const GCPolicy&, bool) {
  absl::MutexLock lock(&mu_);
  calls_.push_back("GarbageCollect");
  return absl::OkStatus();
}

void FakeContainerRuntime::ForgetPod(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  calls_.push_back("ForgetPod:" + uid);
}

void FakeContainerRuntime::SetPods(std::vector<Pod> pods) {
  absl::MutexLock lock(&mu_);
  pods_ = std::move(pods);
}

void FakeContainerRuntime::SetStatus(const std::string& uid, PodStatus status) {
  absl::MutexLock lock(&mu_);
  statuses_[uid] = std::move(status);
}

void FakeContainerRuntime::SetSyncResult(PodSyncResult r) {
  absl::MutexLock lock(&mu_);
  sync_result_ = std::move(r);
}

std::vector<std::string> FakeContainerRuntime::Calls() const {
  absl::MutexLock lock(&mu_);
  return calls_;
}

}  // namespace kubelet::container
