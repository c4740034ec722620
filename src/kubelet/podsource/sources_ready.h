// SourcesReady (upstream pkg/kubelet/config/sources.go): tracks the pod sources the sync loop
// has received updates from, and answers whether every configured source has been seen.
// Upstream uses it to hold back work that is only safe with the complete pod set: cleaning up
// orphaned pods and their volumes/cgroups, container GC of unknown pods, housekeeping (the sync
// loop logs "SyncLoop (housekeeping, skipped): sources aren't ready yet" until then).
//
// Typical wiring:
//   SourcesReady ready([&config](const std::set<std::string>& seen) {
//     return config.SeenAllSources(seen);
//   });
//   ... for each PodUpdate u the sync loop receives: ready.AddSource(u.source);
//
// Thread-safety: all methods may be called from any thread. The readiness function is called
// without the internal lock held.
#ifndef KUBELET_KUBELET_PODSOURCE_SOURCES_READY_H_
#define KUBELET_KUBELET_PODSOURCE_SOURCES_READY_H_

#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace kubelet::podsource {

class SourcesReady {
 public:
  // Given the sources seen so far, returns whether all sources are ready.
  using ReadyFn = std::function<bool(const std::set<std::string>& sources_seen)>;

  explicit SourcesReady(ReadyFn ready_fn) : ready_fn_(std::move(ready_fn)) {}

  // Records that an update from `source` has been received.
  void AddSource(std::string_view source) {
    absl::MutexLock lock(&mu_);
    sources_seen_.emplace(source);
  }

  // True when the readiness function accepts the sources seen so far.
  bool AllReady() const {
    std::set<std::string> seen;
    {
      absl::MutexLock lock(&mu_);
      seen = sources_seen_;
    }
    return ready_fn_ ? ready_fn_(seen) : false;
  }

 private:
  const ReadyFn ready_fn_;
  mutable absl::Mutex mu_;
  std::set<std::string> sources_seen_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet::podsource

#endif  // KUBELET_KUBELET_PODSOURCE_SOURCES_READY_H_
