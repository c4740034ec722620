// The runtime's version and image list for the node status, as last read (upstream reads them
// in the status loop; here a hung runtime must not hold the status and the Lease).
//
// Contract: the first Version() / Images() call reads on the caller's thread; later calls
// answer from the cache at once and wake the refresher, which reads both again, one CRI call at
// a time (a hung runtime holds only its thread). The refresher's thread starts with a refresh
// and leaves `refresher_idle` after the last one (between status updates no thread is held). A
// failed read keeps the last good answer; until one succeeded, the error is the answer (the
// status says why the node is not ready). Stop() (also the destructor) joins the refresher;
// calls after it answer from the cache. Thread-safe.
#ifndef KUBELET_KUBELET_NODESTATUS_RUNTIME_INFO_H_
#define KUBELET_KUBELET_NODESTATUS_RUNTIME_INFO_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/thread_pool.h"
#include "cri/runtime_service.h"
#include "kubelet/nodestatus/node_status.h"

namespace kubelet::nodestatus {

class RuntimeInfoCache {
 public:
  using VersionFn = std::function<absl::StatusOr<std::string>()>;
  using ImagesFn = std::function<absl::StatusOr<std::vector<ImageInfo>>()>;
  RuntimeInfoCache(VersionFn version, ImagesFn images,
                   absl::Duration refresher_idle = absl::Seconds(1));
  ~RuntimeInfoCache();
  RuntimeInfoCache(const RuntimeInfoCache&) = delete;
  RuntimeInfoCache& operator=(const RuntimeInfoCache&) = delete;

  absl::StatusOr<std::string> Version();
  absl::StatusOr<std::vector<ImageInfo>> Images();
  void Stop();
  // Threads the refresher holds now (tests).
  int RefresherThreads() const { return pool_.threads(); }

 private:
  // Marks a refresh wanted and hands one to the pool unless one is queued or running.
  void WantRefreshLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Refresh();

  const VersionFn version_fn_;
  const ImagesFn images_fn_;
  absl::Mutex mu_;
  std::optional<absl::StatusOr<std::string>> version_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::StatusOr<std::vector<ImageInfo>>> images_ ABSL_GUARDED_BY(mu_);
  bool wanted_ ABSL_GUARDED_BY(mu_) = false;
  bool refreshing_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  ThreadPool pool_;  // last: its thread runs Refresh() on the members above
};

// A cache reading the CRI: Version ("<name>://<version>", RuntimeVersionString) and
// ListImages (repo tags, digests, size). Both services are borrowed and must outlive it.
std::shared_ptr<RuntimeInfoCache> NewCriRuntimeInfoCache(cri::RuntimeService& runtime,
                                                         cri::ImageManagerService& images);

}  // namespace kubelet::nodestatus

#endif  // KUBELET_KUBELET_NODESTATUS_RUNTIME_INFO_H_
