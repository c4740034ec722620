// The hollow nodes of one process (the kubelet's hollow mode, app/hollow.h): each node a real
// node agent over a simulated runtime, started and stopped together.
//
// - Start() returns at once; node i's start (the StartFn: its credentials, TLS bootstrap, its
//   agent's start-up) runs on one of `start_concurrency` threads, so a thousand nodes do not
//   bootstrap at the same instant and one slow node does not hold the others. A start that
//   fails is logged and retried after a jittered back-off (1 s doubling to 30 s, each wait
//   drawn from [0.5, 1.5) of the step): an API server that is not there yet costs a retry, not
//   the node.
// - Stop() abandons the starts still to come (a start in progress finishes), then stops every
//   started node, `start_concurrency` at a time. Idempotent; the destructor calls it.
//
// Naming (HollowNode): node i of prefix P is "P<i>"; its InternalIP 100.64.0.0/10 + i + 1
// (the shared address space: never a real neighbour's); its pods' CIDR 10.64.0.0/10 cut into
// /24s, the i-th one. Up to kMaxNodes nodes.
//
// Thread-safety: all methods thread-safe; the StartFn runs on the fleet's threads, several at
// once for different nodes.
#ifndef KUBELET_KUBELET_HOLLOW_FLEET_H_
#define KUBELET_KUBELET_HOLLOW_FLEET_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/thread_pool.h"

namespace kubelet::hollow {

inline constexpr int kMaxNodes = 16384;

struct HollowNodeIdentity {
  std::string name;
  std::string node_ip;   // 100.64.x.y
  std::string pod_cidr;  // 10.a.b.0/24
};
// Node `index` (0-based, < kMaxNodes) of `prefix`.
HollowNodeIdentity HollowNode(const std::string& prefix, int index);

// One started node.
class FleetMember {
 public:
  virtual ~FleetMember() = default;
  // Stops the node (its agent, then what it owns). Called once, from a fleet thread.
  virtual void Stop() = 0;
};

struct FleetOptions {
  int nodes = 0;
  int start_concurrency = 8;
  absl::Duration retry_initial = absl::Seconds(1);
  absl::Duration retry_max = absl::Seconds(30);
};

class Fleet {
 public:
  using StartFn = std::function<absl::StatusOr<std::unique_ptr<FleetMember>>(int index)>;
  Fleet(FleetOptions options, StartFn start, Clock& clock);
  ~Fleet();
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  void Start();
  // Blocks until every node has started, Stop() is called or `deadline` passes; true when all
  // have started.
  bool WaitAllStarted(absl::Time deadline) const;
  int started() const;
  // Failed start attempts so far (each retried).
  int failed_starts() const;
  void Stop();

 private:
  void StartOne(int index);

  const FleetOptions options_;
  const StartFn start_;
  Clock& clock_;
  absl::Notification stopping_;
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<FleetMember>> members_ ABSL_GUARDED_BY(mu_);
  int started_ ABSL_GUARDED_BY(mu_) = 0;
  int failed_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace kubelet::hollow

#endif  // KUBELET_KUBELET_HOLLOW_FLEET_H_
