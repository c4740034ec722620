// A recorder for unit tests: keeps every event in order. Thread-safe.
#ifndef KUBELET_KUBELET_EVENTS_TESTING_FAKE_RECORDER_H_
#define KUBELET_KUBELET_EVENTS_TESTING_FAKE_RECORDER_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "kubelet/events/event_recorder.h"

namespace kubelet::events {

class FakeRecorder : public EventRecorder {
 public:
  struct Entry {
    ObjectReference object;
    std::string type, reason, message;
    // "<type> <reason> <message>", as upstream's FakeRecorder formats its channel entries.
    std::string String() const { return absl::StrCat(type, " ", reason, " ", message); }
  };

  void Record(const ObjectReference& object, std::string_view type, std::string_view reason,
              std::string_view message) override {
    absl::MutexLock lock(&mu_);
    events_.push_back(Entry{object, std::string(type), std::string(reason), std::string(message)});
  }
  std::vector<Entry> Events() const {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  // Every event's String(), in order.
  std::vector<std::string> Strings() const {
    std::vector<std::string> out;
    for (const Entry& e : Events()) out.push_back(e.String());
    return out;
  }
  // Events of `reason`.
  std::vector<Entry> WithReason(const std::string& reason) const {
    std::vector<Entry> out;
    for (const Entry& e : Events()) {
      if (e.reason == reason) out.push_back(e);
    }
    return out;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<Entry> events_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet::events

#endif  // KUBELET_KUBELET_EVENTS_TESTING_FAKE_RECORDER_H_
