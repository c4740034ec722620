// A scriptable container::Runtime for unit tests of the sync loop, PLEG and pod workers: the
// test sets the listed pods and statuses; calls are recorded. Thread-safe.
#ifndef KUBELET_KUBELET_CONTAINER_TESTING_FAKE_CONTAINER_RUNTIME_H_
#define KUBELET_KUBELET_CONTAINER_TESTING_FAKE_CONTAINER_RUNTIME_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "kubelet/container/runtime.h"

namespace kubelet::container {

class FakeContainerRuntime : public Runtime {
 public:
  std::string Type() const override { return "fake"; }
  absl::StatusOr<std::vector<Pod>> GetPods(bool all) override;
  PodSyncResult SyncPod(const api::Pod& pod, const PodStatus& status) override;
  absl::Status KillPod(const api::Pod* pod, const Pod& running,
                       std::optional<int64_t> grace_period_override) override;
  absl::StatusOr<PodStatus> GetPodStatus(const std::string& uid, const std::string& name,
                                         const std::string& ns) override;
  absl::Status GarbageCollect(const GCPolicy& policy, bool all_sources_ready) override;
  void ForgetPod(const std::string& uid) override;

  void SetPods(std::vector<Pod> pods);
  void SetStatus(const std::string& uid, PodStatus status);
  void SetSyncResult(PodSyncResult r);
  std::vector<std::string> Calls() const;  // e.g. "SyncPod:<uid>", "KillPod:<uid>"
  // The pod the last SyncPod of `uid` was given.
  std::optional<api::Pod> LastSyncedPod(const std::string& uid) const;

 private:
  mutable absl::Mutex mu_;
  std::vector<Pod> pods_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, PodStatus> statuses_ ABSL_GUARDED_BY(mu_);
  PodSyncResult sync_result_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, api::Pod> synced_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet::container

#endif  // KUBELET_KUBELET_CONTAINER_TESTING_FAKE_CONTAINER_RUNTIME_H_
