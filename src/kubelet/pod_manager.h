// The pod manager (upstream pkg/kubelet/pod): the desired pods, as the sources last described
// them, by UID and by full name. Thread-safe; returns copies.
#ifndef KUBELET_KUBELET_POD_MANAGER_H_
#define KUBELET_KUBELET_POD_MANAGER_H_

#include <map>
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
  void AddOrUpdatePod(const api::Pod& pod);
  void RemovePod(const std::string& uid);
  std::optional<api::Pod> GetPodByUID(const std::string& uid) const;
  std::optional<api::Pod> GetPodByFullName(const std::string& full_name) const;
  std::vector<api::Pod> GetPods() const;  // ordered by creation (first seen)
  std::set<std::string> UIDs() const;
  size_t Size() const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, api::Pod> by_uid_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, uint64_t> order_ ABSL_GUARDED_BY(mu_);
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kubelet

#endif  // KUBELET_KUBELET_POD_MANAGER_H_
