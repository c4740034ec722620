// The pod manager (upstream pkg/kubelet/pod/pod_manager.go): the desired pods, as the sources
// last described them, by UID and by full name, and apart from them the mirror pods (the API
// server's copies of static pods, kubernetes.io/config.mirror set), by UID and by full name.
//
// Mirror pods are never desired pods: AddOrUpdatePod files a pod carrying the config.mirror
// annotation with the mirror pods, so GetPods/UIDs/GetPodByUID never return one and nothing runs
// it. A static pod and its mirror pod share their full name (<name>_<namespace>), which is how
// each finds the other (GetMirrorPodByPod / GetPodByMirrorPod). Mirror pods whose full name has
// no pod are orphans (GetOrphanedMirrorPods).
//
// Thread-safe; returns the shared pods it holds (never copies).
#ifndef KUBELET_KUBELET_POD_MANAGER_H_
#define KUBELET_KUBELET_POD_MANAGER_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/pod.h"

namespace kubelet {

class PodManager {
 public:
  // A mirror pod (api::IsMirrorPod) replaces the mirror pod of its full name. The pod is kept
  // as given (shared, never copied).
  void AddOrUpdatePod(api::PodPtr pod);
  void AddOrUpdatePod(const api::Pod& pod) { AddOrUpdatePod(std::make_shared<api::Pod>(pod)); }
  // Removes the pod or the mirror pod with `uid` (a no-op when neither has it).
  void RemovePod(const std::string& uid);
  // Null when absent.
  api::PodPtr GetPodByUID(const std::string& uid) const;
  api::PodPtr GetPodByFullName(const std::string& full_name) const;
  std::vector<api::PodPtr> GetPods() const;  // ordered by creation (first seen)
  std::set<std::string> UIDs() const;
  size_t Size() const;

  // The mirror pod of `pod` (same full name), if any.
  api::PodPtr GetMirrorPodByPod(const api::Pod& pod) const;
  // The pod (static) that `mirror` mirrors (same full name), if any.
  api::PodPtr GetPodByMirrorPod(const api::Pod& mirror) const;
  std::vector<api::PodPtr> GetMirrorPods() const;
  // Mirror pods whose full name has no pod.
  std::vector<api::PodPtr> GetOrphanedMirrorPods() const;

 private:
  api::PodPtr FindByFullNameLocked(const std::string& full_name) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, api::PodPtr> by_uid_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, uint64_t> order_ ABSL_GUARDED_BY(mu_);
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, api::PodPtr> mirror_by_full_name_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet

#endif  // KUBELET_KUBELET_POD_MANAGER_H_
