#include "kubelet/hollow/fleet.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace kubelet::hollow {

HollowNodeIdentity HollowNode(const std::string& prefix, int index) {
  HollowNodeIdentity id;
  id.name = absl::StrCat(prefix, index);
  // 100.64.0.0/10: 22 bits of host part; index + 1 skips the network address.
  const uint32_t ip = (100u << 24) | (64u << 16) | static_cast<uint32_t>(index + 1);
  id.node_ip =
      absl::StrCat(ip >> 24, ".", (ip >> 16) & 0xff, ".", (ip >> 8) & 0xff, ".", ip & 0xff);
  // 10.64.0.0/10 in /24s: 2^14 of them.
  const uint32_t net = (10u << 24) | (64u << 16) | (static_cast<uint32_t>(index) << 8);
  id.pod_cidr = absl::StrCat(net >> 24, ".", (net >> 16) & 0xff, ".", (net >> 8) & 0xff, ".0/24");
  return id;
}

Fleet::Fleet(FleetOptions options, StartFn start, Clock& clock)
    : options_(std::move(options)), start_(std::move(start)), clock_(clock) {
  absl::MutexLock lock(&mu_);
  members_.resize(static_cast<size_t>(std::max(0, options_.nodes)));
}

Fleet::~Fleet() { Stop(); }

void Fleet::Start() {
  absl::MutexLock lock(&mu_);
  if (pool_ || stopped_) return;
  // Elastic: the start threads leave once every node has started.
  pool_ =
      std::make_unique<ThreadPool>(0, std::max(1, options_.start_concurrency), absl::Seconds(10));
  pool_->SetThreadName("fleet start");
  for (int i = 0; i < options_.nodes; ++i) {
    pool_->Submit([this, i] { StartOne(i); });
  }
}

void Fleet::StartOne(int index) {
  std::mt19937_64 rng(static_cast<uint64_t>(index) * 0x9e3779b97f4a7c15ULL ^
                      static_cast<uint64_t>(absl::ToUnixNanos(clock_.Now())));
  std::uniform_real_distribution<double> jitter(0.5, 1.5);
  absl::Duration step = options_.retry_initial;
  while (!stopping_.HasBeenNotified()) {
    absl::StatusOr<std::unique_ptr<FleetMember>> member = start_(index);
    if (member.ok()) {
      absl::MutexLock lock(&mu_);
      // Stop() collects the members only after the starts in progress have finished.
      members_[static_cast<size_t>(index)] = *std::move(member);
      ++started_;
      return;
    }
    {
      absl::MutexLock lock(&mu_);
      ++failed_;
    }
    const absl::Duration wait = step * jitter(rng);
    KLOG_ERROR(member.status(), "Hollow node failed to start, retrying", "index", index, "after",
               wait);
    clock_.WaitForNotification(stopping_, clock_.Now() + wait);
    step = std::min(step * 2, options_.retry_max);
  }
}

bool Fleet::WaitAllStarted(absl::Time deadline) const {
  absl::MutexLock lock(&mu_);
  auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return started_ >= options_.nodes || stopped_;
  };
  clock_.AwaitWithDeadline(mu_, absl::Condition(&done), deadline);
  return started_ >= options_.nodes;
}

int Fleet::started() const {
  absl::MutexLock lock(&mu_);
  return started_;
}

int Fleet::failed_starts() const {
  absl::MutexLock lock(&mu_);
  return failed_;
}

void Fleet::Stop() {
  if (!stopping_.HasBeenNotified()) stopping_.Notify();
  std::unique_ptr<ThreadPool> pool;
  {
    absl::MutexLock lock(&mu_);
    pool = std::move(pool_);
  }
  // Starts not begun return at once; one in progress finishes and keeps its member.
  if (pool) pool->Stop();
  std::vector<std::unique_ptr<FleetMember>> members;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    members = std::move(members_);
    members_.clear();
  }
  ThreadPool stoppers(std::max(1, options_.start_concurrency));
  for (auto& m : members) {
    if (m == nullptr) continue;
    FleetMember* raw = m.get();
    stoppers.Submit([raw] { raw->Stop(); });
  }
  stoppers.Stop();
}

}  // namespace kubelet::hollow
