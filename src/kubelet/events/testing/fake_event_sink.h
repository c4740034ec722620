// An EventSink for unit tests: keeps every call in order, answers from a script of errors
// (consumed one per call; none left: success), and on success returns the event with a
// resourceVersion "rv-<n>" as the server would. Optionally blocks every call until Release().
// Thread-safe.
#ifndef KUBELET_KUBELET_EVENTS_TESTING_FAKE_EVENT_SINK_H_
#define KUBELET_KUBELET_EVENTS_TESTING_FAKE_EVENT_SINK_H_

#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "kubelet/events/event_sink.h"

namespace kubelet::events {

class FakeEventSink : public EventSink {
 public:
  struct Call {
    std::string method;  // "POST" or "PATCH"
    api::Event event;
    std::string patch;
  };

  absl::StatusOr<api::Event> Create(const api::Event& event) override {
    return Answer({"POST", event, ""});
  }
  absl::StatusOr<api::Event> Patch(const api::Event& event, std::string_view patch) override {
    return Answer({"PATCH", event, std::string(patch)});
  }

  // The next calls fail with these, in order.
  void FailWith(std::vector<absl::Status> errors) {
    absl::MutexLock lock(&mu_);
    for (auto& e : errors) script_.push_back(std::move(e));
  }
  void Block() {
    absl::MutexLock lock(&mu_);
    blocked_ = true;
  }
  void Release() {
    absl::MutexLock lock(&mu_);
    blocked_ = false;
  }
  std::vector<Call> Calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  // Blocks until `n` calls were made (or 10 s passed); returns the count.
  size_t WaitForCalls(size_t n) const {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return calls_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(10));
    return calls_.size();
  }

 private:
  absl::StatusOr<api::Event> Answer(Call call) {
    absl::MutexLock lock(&mu_);
    auto open = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !blocked_; };
    mu_.Await(absl::Condition(&open));
    calls_.push_back(call);
    if (!script_.empty()) {
      absl::Status st = script_.front();
      script_.pop_front();
      if (!st.ok()) return st;
    }
    api::Event stored = call.event;
    stored.metadata.resource_version = absl::StrCat("rv-", ++version_);
    if (call.method == "PATCH") stored.metadata.resource_version += "-patched";
    return stored;
  }

  mutable absl::Mutex mu_;
  std::vector<Call> calls_ ABSL_GUARDED_BY(mu_);
  std::deque<absl::Status> script_ ABSL_GUARDED_BY(mu_);
  bool blocked_ ABSL_GUARDED_BY(mu_) = false;
  int version_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kubelet::events

#endif  // KUBELET_KUBELET_EVENTS_TESTING_FAKE_EVENT_SINK_H_
