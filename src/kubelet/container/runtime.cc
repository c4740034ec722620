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

Pod ConvertPodStatusToPod(const std::string& runtime_name, const PodStatus& status) {
  Pod pod;
  pod.id = status.id;
  pod.name = status.name;
  pod.namespace_ = status.namespace_;
  pod.containers.reserve(status.container_statuses.size());
  for (const ContainerStatus& s : status.container_statuses) {
    Container c;
    c.id = s.id;
    c.name = s.name;
    c.image = s.image;
    c.image_id = s.image_id;
    c.hash = s.hash;
    c.state = s.state;
    c.created_at = s.created_at;
    pod.containers.push_back(std::move(c));
  }
  for (const SandboxStatus& s : status.sandbox_statuses) {
    Container c;
    c.id = ContainerID{runtime_name, s.id};
    c.state = s.ready ? State::kRunning : State::kExited;
    c.created_at = s.created_at;
    pod.sandboxes.push_back(std::move(c));
  }
  return pod;
}

Pod ConvertPodStatusToRunningPod(const std::string& runtime_name, const PodStatus& status) {
  Pod pod = ConvertPodStatusToPod(runtime_name, status);
  std::erase_if(pod.containers, [](const Container& c) { return c.state != State::kRunning; });
  return pod;
}

}  // namespace kubelet::container
