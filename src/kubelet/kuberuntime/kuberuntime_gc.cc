// Garbage collection of dead containers, sandboxes and pod log directories (upstream
// kuberuntime_gc.go):
//   * containers: not running and created more than min_age ago are evictable, grouped by (pod
//     uid, container name). With all sources ready, every evictable container of a pod whose
//     content should be removed (deleted pod; or terminated with evict_non_deleted_pods) goes.
//     Then each group keeps its newest max_per_pod_container, then the total is brought under
//     max_containers (an equal share per group, at least one, then the oldest overall).
//     Unknown-state containers are stopped before removal.
//   * sandboxes: not ready and without containers are evictable; the newest of a pod is kept
//     unless the pod's content should be removed.
//   * pod log directories <pod_logs_dir>/<ns>_<name>_<uid> of pods whose content should be
//     removed, once all sources are ready.
#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "kubelet/kuberuntime/helpers.h"
#include "kubelet/kuberuntime/kuberuntime_manager.h"
#include "kubelet/kuberuntime/labels.h"
#include "kubelet/kuberuntime/manager_internal.h"

namespace kubelet::kuberuntime {

namespace v1 = ::runtime::v1;

namespace {

struct ContainerGCInfo {
  std::string id;
  std::string name;
  absl::Time create_time;
  bool unknown = false;
  uint32_t attempt = 0;
};

struct SandboxGCInfo {
  std::string id;
  absl::Time create_time;
  bool active = false;
  uint32_t attempt = 0;
};

// Newest first: higher attempt, then later creation.
template <typename T>
bool NewerFirst(const T& a, const T& b) {
  if (a.attempt == b.attempt) return a.create_time > b.create_time;
  return a.attempt > b.attempt;
}

using EvictUnit = std::pair<std::string, std::string>;  // (pod uid, container name)

}  // namespace

bool KubeGenericRuntimeManager::ShouldRemoveContent(const std::string& uid) const {
  return pod_state_ != nullptr && pod_state_->ShouldPodContentBeRemoved(uid);
}

bool KubeGenericRuntimeManager::ShouldRemoveRuntime(const std::string& uid) const {
  return pod_state_ != nullptr && pod_state_->ShouldPodRuntimeBeRemoved(uid);
}

absl::Status KubeGenericRuntimeManager::EvictContainers(const container::GCPolicy& policy,
                                                        bool all_sources_ready,
                                                        bool evict_non_deleted_pods) {
  absl::StatusOr<std::vector<v1::Container>> containers = runtime_.ListContainers(nullptr);
  if (!containers.ok()) return containers.status();
  const absl::Time newest_gc_time = clock_.Now() - policy.min_age;
  std::map<EvictUnit, std::vector<ContainerGCInfo>> units;
  for (const v1::Container& c : *containers) {
    if (c.state() == v1::CONTAINER_RUNNING) continue;
    const absl::Time created = absl::FromUnixNanos(c.created_at());
    if (newest_gc_time < created) continue;
    const LabeledContainerInfo info = GetContainerInfoFromLabels(ToStringMap(c.labels()));
    if (info.pod_uid.empty()) continue;  // not ours
    units[{info.pod_uid, c.metadata().name()}].push_back(
        ContainerGCInfo{c.id(), c.metadata().name(), created, c.state() == v1::CONTAINER_UNKNOWN,
                        c.metadata().attempt()});
  }

  // Removes the oldest `to_remove` of `list` and returns the rest.
  auto remove_oldest = [&](std::vector<ContainerGCInfo> list, int to_remove) {
    const int keep = std::max(0, static_cast<int>(list.size()) - to_remove);
    std::stable_sort(list.begin(), list.end(), NewerFirst<ContainerGCInfo>);
    for (int i = static_cast<int>(list.size()) - 1; i >= keep; --i) {
      const ContainerGCInfo& c = list[i];
      if (c.unknown) {
        absl::Status s =
            KillContainer(nullptr, MakeID(c.id), c.name,
                          "Container is in unknown state, try killing it before removal", "",
                          std::nullopt, nullptr);
        if (!s.ok()) {
          KLOG_ERROR(s, "Failed to stop container", "containerID", c.id);
          continue;
        }
      }
      if (absl::Status s = RemoveContainer(c.id); !s.ok()) {
        KLOG_ERROR(s, "Failed to remove container", "containerID", c.id);
      }
    }
    list.resize(keep);
    return list;
  };

  if (all_sources_ready) {
    for (auto it = units.begin(); it != units.end();) {
      const std::string& uid = it->first.first;
      if (ShouldRemoveContent(uid) || (evict_non_deleted_pods && ShouldRemoveRuntime(uid))) {
        const int all = static_cast<int>(it->second.size());
        remove_oldest(std::move(it->second), all);
        it = units.erase(it);
      } else {
        ++it;
      }
    }
  }
  auto enforce_per_unit = [&](int max) {
    for (auto& [key, list] : units) {
      const int to_remove = static_cast<int>(list.size()) - max;
      if (to_remove > 0) list = remove_oldest(std::move(list), to_remove);
    }
  };
  if (policy.max_per_pod_container >= 0) enforce_per_unit(policy.max_per_pod_container);

  auto count = [&] {
    size_t n = 0;
    for (const auto& [key, list] : units) n += list.size();
    return n;
  };
  if (policy.max_containers >= 0 && count() > static_cast<size_t>(policy.max_containers)) {
    int per_unit = units.empty() ? 1 : policy.max_containers / static_cast<int>(units.size());
    enforce_per_unit(std::max(per_unit, 1));
    const size_t n = count();
    if (n > static_cast<size_t>(policy.max_containers)) {
      std::vector<ContainerGCInfo> flat;
      for (auto& [key, list] : units) flat.insert(flat.end(), list.begin(), list.end());
      remove_oldest(std::move(flat), static_cast<int>(n) - policy.max_containers);
    }
  }
  return absl::OkStatus();
}

absl::Status KubeGenericRuntimeManager::EvictSandboxes(bool evict_non_deleted_pods) {
  absl::StatusOr<std::vector<v1::Container>> containers = runtime_.ListContainers(nullptr);
  if (!containers.ok()) return containers.status();
  absl::StatusOr<std::vector<v1::PodSandbox>> sandboxes = runtime_.ListPodSandbox(nullptr);
  if (!sandboxes.ok()) return sandboxes.status();
  std::set<std::string> with_containers;
  for (const v1::Container& c : *containers) with_containers.insert(c.pod_sandbox_id());

  std::map<std::string, std::vector<SandboxGCInfo>> by_pod;
  for (const v1::PodSandbox& s : *sandboxes) {
    if (!s.has_metadata() || s.labels().find(kPodUIDLabel) == s.labels().end()) continue;
    SandboxGCInfo info{s.id(), absl::FromUnixNanos(s.created_at()),
                       s.state() == v1::SANDBOX_READY || with_containers.count(s.id()) > 0,
                       s.metadata().attempt()};
    by_pod[s.metadata().uid()].push_back(std::move(info));
  }
  for (auto& [uid, list] : by_pod) {
    const bool remove_all =
        ShouldRemoveContent(uid) || (evict_non_deleted_pods && ShouldRemoveRuntime(uid));
    const int keep = remove_all ? 0 : 1;
    std::stable_sort(list.begin(), list.end(), NewerFirst<SandboxGCInfo>);
    for (int i = static_cast<int>(list.size()) - 1; i >= keep; --i) {
      if (list[i].active) continue;
      KLOG_V(4, "Removing sandbox", "sandboxID", list[i].id);
      // Normally already stopped; make sure before removing.
      if (absl::Status s = runtime_.StopPodSandbox(list[i].id); !s.ok() && !absl::IsNotFound(s)) {
        KLOG_ERROR(s, "Failed to stop sandbox before removing", "sandboxID", list[i].id);
        continue;
      }
      if (absl::Status s = runtime_.RemovePodSandbox(list[i].id); !s.ok()) {
        KLOG_ERROR(s, "Failed to remove sandbox", "sandboxID", list[i].id);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status KubeGenericRuntimeManager::EvictPodLogsDirectories(bool all_sources_ready) {
  if (!all_sources_ready) return absl::OkStatus();
  DIR* dir = opendir(options_.pod_logs_dir.c_str());
  if (dir == nullptr) {
    if (errno == ENOENT) return absl::OkStatus();
    return absl::InternalError(absl::StrCat("failed to read podLogsDirectory \"",
                                            options_.pod_logs_dir, "\": ", std::strerror(errno)));
  }
  std::vector<std::string> names;
  while (struct dirent* ent = readdir(dir)) {
    const std::string name = ent->d_name;
    if (name == "." || name == "..") continue;
    names.push_back(name);
  }
  closedir(dir);
  for (const std::string& name : names) {
    const std::string uid = ParsePodUIDFromLogsDirectory(name);
    if (!ShouldRemoveContent(uid)) continue;
    KLOG_V(4, "Removing pod logs", "podUID", uid);
    std::string err;
    if (!internal::RemoveAll(absl::StrCat(options_.pod_logs_dir, "/", name), &err)) {
      KLOG_ERROR(absl::InternalError(err), "Failed to remove pod logs directory", "path", name);
    }
  }
  return absl::OkStatus();
}

absl::Status KubeGenericRuntimeManager::GarbageCollect(const container::GCPolicy& policy,
                                                       bool all_sources_ready) {
  return GarbageCollect(policy, all_sources_ready, false);
}

absl::Status KubeGenericRuntimeManager::GarbageCollect(const container::GCPolicy& policy,
                                                       bool all_sources_ready,
                                                       bool evict_non_deleted_pods) {
  std::vector<std::string> errors;
  if (absl::Status s = EvictContainers(policy, all_sources_ready, evict_non_deleted_pods);
      !s.ok()) {
    errors.emplace_back(s.message());
  }
  if (absl::Status s = EvictSandboxes(evict_non_deleted_pods); !s.ok()) {
    errors.emplace_back(s.message());
  }
  if (absl::Status s = EvictPodLogsDirectories(all_sources_ready); !s.ok()) {
    errors.emplace_back(s.message());
  }
  BackOffGC();
  if (errors.empty()) return absl::OkStatus();
  return absl::UnknownError(
      errors.size() == 1 ? errors[0] : absl::StrCat("[", absl::StrJoin(errors, ", "), "]"));
}

}  // namespace kubelet::kuberuntime
