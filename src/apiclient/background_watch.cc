// RestClient::StartWatch's default: Watch() on a thread of the BackgroundWatch (fakes and
// forwarding clients; the Beast client streams on its I/O threads instead).
#include <memory>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "apiclient/rest_client.h"
#include "common/cancellation.h"
#include "common/guarded.h"

namespace kubelet::apiclient {
namespace {

class ThreadWatch final : public BackgroundWatch {
 public:
  ThreadWatch(RestClient& client, Request request, WatchEventFn on_event, WatchEndFn on_end)
      : on_event_(std::move(on_event)), on_end_(std::move(on_end)) {
    thread_ = GuardedThread("background watch", [this, &client, request = std::move(request)] {
      ScopedCancellation scope(cancel_);
      absl::StatusOr<Response> result = client.Watch(request, [this](WatchEvent event) {
        if (Stopping()) return false;
        return on_event_(std::move(event));
      });
      if (!Stopping()) on_end_(std::move(result));
    });
  }
  ~ThreadWatch() override { Stop(); }

  void Stop() override {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    cancel_->Cancel();
    absl::MutexLock join_lock(&join_mu_);
    if (thread_.joinable()) thread_.join();
  }

 private:
  bool Stopping() {
    absl::MutexLock lock(&mu_);
    return stopping_;
  }

  const WatchEventFn on_event_;
  const WatchEndFn on_end_;
  const std::shared_ptr<Cancellation> cancel_ = std::make_shared<Cancellation>();
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Mutex join_mu_;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<BackgroundWatch> RestClient::StartWatch(const Request& request,
                                                        WatchEventFn on_event, WatchEndFn on_end) {
  return std::make_unique<ThreadWatch>(*this, request, std::move(on_event), std::move(on_end));
}

}  // namespace kubelet::apiclient
