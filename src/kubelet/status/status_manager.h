// The status manager (upstream pkg/kubelet/status): the latest API status of every pod, versioned
// so a later API-server syncer can push only what changed. In standalone mode it is the source
// of /pods' status. Thread-safe.
#ifndef KUBELET_KUBELET_STATUS_STATUS_MANAGER_H_
#define KUBELET_KUBELET_STATUS_STATUS_MANAGER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/pod.h"

namespace kubelet::status {

class StatusManager {
 public:
  struct Versioned {
    api::PodStatus status;
    uint64_t version = 0;  // increases with every change
  };

  // Stores `status` for `uid`; unchanged statuses keep their version. Returns the version.
  uint64_t SetPodStatus(const std::string& uid, api::PodStatus status);
  std::optional<Versioned> GetPodStatus(const std::string& uid) const;
  // Drops statuses of pods not in `keep`.
  void RemoveOrphanedStatuses(const std::set<std::string>& keep);

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, Versioned> statuses_ ABSL_GUARDED_BY(mu_);
  uint64_t next_version_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace kubelet::status

#endif  // KUBELET_KUBELET_STATUS_STATUS_MANAGER_H_
