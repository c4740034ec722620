#include "kubelet/container/runtime.h"

namespace kubelet::container {

const char* StateName(State s) {
  switch (s) {
    case State::kCreated:
      return "created";
    case State::kRunning:
      return "running";
    case State::kExited:
      return "exited";
    case State::kUnknown:
      return "unknown";
  }
  return "unknown";
}

const ContainerStatus* PodStatus::FindContainerStatusByName(const std::string& name) const {
  for (const ContainerStatus& s : container_statuses) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const ContainerStatus* PodStatus::GetRunningContainerStatus(const std::string& name) const {
  for (const ContainerStatus& s : container_statuses) {
    if (s.name == name && s.state == State::kRunning) return &s;
  }
  return nullptr;
}

absl::Status PodSyncResult::Error() const {
  if (!sync_error.ok()) return sync_error;
  for (const SyncResult& r : results) {
    if (!r.error.ok()) return r.error;
  }
  return absl::OkStatus();
}

}  // namespace kubelet::container
