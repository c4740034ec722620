// EventCorrelator: what happens to a core/v1 Event between the recorder and the API server, as
// upstream client-go's tools/record EventCorrelator (v1.28) does it, in pure code driven by an
// injected clock:
//
// 1. Aggregation (EventAggregator): events that differ only in their message (same source,
//    involved object, type, reason, reporting controller and instance) are grouped; once 10
//    distinct messages were seen in a group with less than 10 minutes between one and the next,
//    each further event of the group is replaced by one aggregate event whose message is
//    "(combined from similar events): <message>", de-duplicated under the group's key.
// 2. De-duplication (the event logger): an event seen before (same key: source, involved object
//    with field path, type, reason, message) is the same Event object again: its name, first
//    timestamp and resourceVersion are the first one's, count is the last count + 1, and it is
//    sent as a strategic merge patch {"count":N,"lastTimestamp":...,"message":...} of the
//    existing object instead of a new POST.
// 3. Spam filter: a token bucket per source + involved object (not the reason or message):
//    burst 25, refilled at 1 token every 5 minutes; an event that finds it empty is dropped.
//
// Every cache is an LRU of 4096 entries, as upstream. UpdateState() records what the server
// answered (name, count, resourceVersion) so a later duplicate patches the right object.
//
// MakeEvent builds the Event a recorder queues (upstream makeEvent + generateEvent): name
// "<object name>.<nanoseconds since the epoch in lower-case hex>", the object's namespace
// ("default" for cluster-scoped objects), count 1, first = last timestamp = now, the source and
// reportingComponent / reportingInstance from the recorder's component and host.
//
// Thread-safety: an EventCorrelator is thread-compatible (upstream's sender goroutine is its
// only user; ours is the recorder's sender thread). `clock` is borrowed and must outlive it.
#ifndef KUBELET_KUBELET_EVENTS_EVENT_CORRELATOR_H_
#define KUBELET_KUBELET_EVENTS_EVENT_CORRELATOR_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "absl/time/time.h"
#include "api/event.h"
#include "common/clock.h"
#include "kubelet/events/event_recorder.h"

namespace kubelet::events {

inline constexpr char kAggregatePrefix[] = "(combined from similar events): ";

struct CorrelatorOptions {
  size_t lru_size = 4096;
  // Aggregation: distinct messages per group before aggregating, and the longest gap between
  // two events of one group.
  size_t aggregate_max_events = 10;
  absl::Duration aggregate_max_interval = absl::Seconds(600);
  // Spam filter token bucket per source + object.
  int spam_burst = 25;
  double spam_qps = 1.0 / 300.0;
};

// The Event to queue for `object` at `now` (see the header comment).
api::Event MakeEvent(const ObjectReference& object, std::string_view type, std::string_view reason,
                     std::string_view message, std::string_view component, std::string_view host,
                     absl::Time now);

// Upstream getEventKey / getSpamKey (fields concatenated without separator, as upstream).
std::string EventKey(const api::Event& event);
std::string SpamKey(const api::Event& event);

struct CorrelateResult {
  api::Event event;
  // Non-empty: a strategic merge patch of the existing Event `event.metadata.name`.
  std::string patch;
  // Filtered by the spam filter: do not send.
  bool skip = false;
};

class EventCorrelator {
 public:
  explicit EventCorrelator(Clock& clock, CorrelatorOptions options = {});

  CorrelateResult Correlate(api::Event event);
  // The Event as the API server returned it after a successful write.
  void UpdateState(const api::Event& event);

 private:
  // A small LRU map: Get refreshes, Put inserts or replaces and evicts the oldest.
  template <typename V>
  class Lru {
   public:
    explicit Lru(size_t capacity) : capacity_(capacity) {}
    V* Get(const std::string& key) {
      auto it = index_.find(key);
      if (it == index_.end()) return nullptr;
      order_.splice(order_.begin(), order_, it->second);
      return &it->second->second;
    }
    void Put(const std::string& key, V value) {
      if (V* v = Get(key)) {
        *v = std::move(value);
        return;
      }
      order_.emplace_front(key, std::move(value));
      index_[key] = order_.begin();
      if (order_.size() > capacity_) {
        index_.erase(order_.back().first);
        order_.pop_back();
      }
    }

   private:
    size_t capacity_;
    std::list<std::pair<std::string, V>> order_;
    std::unordered_map<std::string, typename std::list<std::pair<std::string, V>>::iterator> index_;
  };

  struct AggregateRecord {
    std::set<std::string> local_keys;  // distinct messages
    absl::Time last = absl::InfinitePast();
  };
  struct EventLog {
    int32_t count = 0;
    api::Time first_timestamp;
    std::string name;
    std::string resource_version;
  };
  struct Bucket {
    double tokens = 0;
    absl::Time last;
  };

  // Returns the event to observe and its de-duplication key.
  std::pair<api::Event, std::string> Aggregate(api::Event event);
  // Fills name/count/first timestamp from an earlier observation; returns the patch ("" when
  // the event is new).
  std::string Observe(const std::string& key, api::Event* event);
  // True when the event is spam (no token left).
  bool Filter(const api::Event& event);

  Clock& clock_;
  const CorrelatorOptions options_;
  Lru<AggregateRecord> aggregates_;
  Lru<EventLog> logs_;
  Lru<Bucket> buckets_;
};

}  // namespace kubelet::events

#endif  // KUBELET_KUBELET_EVENTS_EVENT_CORRELATOR_H_
