#include "kubelet/events/event_correlator.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "api/codec.h"
#include "common/strings.h"

namespace kubelet::events {
namespace {

api::Time ToApiTime(absl::Time t) {
  const int64_t nanos = absl::ToUnixNanos(t);
  int64_t secs = nanos / 1000000000;
  int64_t rem = nanos % 1000000000;
  if (rem < 0) {
    rem += 1000000000;
    --secs;
  }
  return api::Time::FromUnix(secs, static_cast<int32_t>(rem));
}

// "<name>.<UnixNano in lower-case hex>" (Go's fmt "%v.%x").
std::string EventName(std::string_view object_name, absl::Time now) {
  char hex[32];
  std::snprintf(hex, sizeof(hex), "%" PRIx64, static_cast<uint64_t>(absl::ToUnixNanos(now)));
  return absl::StrCat(AV(object_name), ".", hex);
}

api::ObjectReference ToApiRef(const ObjectReference& o) {
  api::ObjectReference r;
  r.kind = o.kind;
  r.namespace_ = o.namespace_;
  r.name = o.name;
  r.uid = o.uid;
  r.api_version = o.api_version;
  r.resource_version = o.resource_version;
  r.field_path = o.field_path;
  return r;
}

// Upstream EventAggregatorByReasonFunc's aggregate key (everything but the message).
std::string AggregateKey(const api::Event& e) {
  const api::ObjectReference& o = e.involved_object;
  return absl::StrCat(e.source.component, e.source.host, o.kind, o.namespace_, o.name, o.uid,
                      o.api_version, e.type, e.reason, e.reporting_component, e.reporting_instance);
}

}  // namespace

api::Event MakeEvent(const ObjectReference& object, std::string_view type, std::string_view reason,
                     std::string_view message, std::string_view component, std::string_view host,
                     absl::Time now) {
  api::Event e;
  e.metadata.name = EventName(object.name, now);
  e.metadata.namespace_ = object.namespace_.empty() ? "default" : object.namespace_;
  e.involved_object = ToApiRef(object);
  e.reason = std::string(reason);
  e.message = std::string(message);
  e.first_timestamp = ToApiTime(now);
  e.last_timestamp = e.first_timestamp;
  e.count = 1;
  e.type = std::string(type);
  e.source.component = std::string(component);
  e.source.host = std::string(host);
  e.reporting_component = std::string(component);
  e.reporting_instance = std::string(host);
  return e;
}

std::string EventKey(const api::Event& e) {
  const api::ObjectReference& o = e.involved_object;
  return absl::StrCat(e.source.component, e.source.host, o.kind, o.namespace_, o.name, o.field_path,
                      o.uid, o.api_version, e.type, e.reason, e.message);
}

std::string SpamKey(const api::Event& e) {
  const api::ObjectReference& o = e.involved_object;
  return absl::StrCat(e.source.component, e.source.host, o.kind, o.namespace_, o.name, o.uid,
                      o.api_version);
}

EventCorrelator::EventCorrelator(Clock& clock, CorrelatorOptions options)
    : clock_(clock),
      options_(options),
      aggregates_(options.lru_size),
      logs_(options.lru_size),
      buckets_(options.lru_size) {}

CorrelateResult EventCorrelator::Correlate(api::Event event) {
  auto [aggregated, key] = Aggregate(std::move(event));
  CorrelateResult result;
  result.patch = Observe(key, &aggregated);
  result.event = std::move(aggregated);
  if (Filter(result.event)) {
    result.skip = true;
    result.patch.clear();
  }
  return result;
}

std::pair<api::Event, std::string> EventCorrelator::Aggregate(api::Event event) {
  const absl::Time now = clock_.Now();
  std::string event_key = EventKey(event);
  const std::string aggregate_key = AggregateKey(event);

  AggregateRecord record;
  if (AggregateRecord* found = aggregates_.Get(aggregate_key)) record = *found;
  if (now - record.last > options_.aggregate_max_interval) record = AggregateRecord{};
  const bool inserted = record.local_keys.insert(event.message).second;
  record.last = now;
  if (record.local_keys.size() < options_.aggregate_max_events) {
    aggregates_.Put(aggregate_key, std::move(record));
    return {std::move(event), std::move(event_key)};
  }
  // Over the threshold: the set stays below it. Upstream pops an arbitrary member; we pop the
  // message just added, so every further new message of the group keeps going to the aggregate.
  if (inserted) record.local_keys.erase(event.message);
  aggregates_.Put(aggregate_key, std::move(record));

  api::Event aggregate;
  aggregate.metadata.name = EventName(event.involved_object.name, now);
  aggregate.metadata.namespace_ = event.metadata.namespace_;
  aggregate.count = 1;
  aggregate.first_timestamp = ToApiTime(now);
  aggregate.last_timestamp = aggregate.first_timestamp;
  aggregate.involved_object = event.involved_object;
  aggregate.message = absl::StrCat(kAggregatePrefix, event.message);
  aggregate.type = event.type;
  aggregate.reason = event.reason;
  aggregate.source = event.source;
  // As upstream, the aggregate carries no reportingComponent / reportingInstance.
  return {std::move(aggregate), aggregate_key};
}

std::string EventCorrelator::Observe(const std::string& key, api::Event* event) {
  std::string patch;
  if (EventLog* last = logs_.Get(key); last != nullptr && last->count > 0) {
    event->metadata.name = last->name;
    event->metadata.resource_version = last->resource_version;
    event->first_timestamp = last->first_timestamp;
    event->count = last->count + 1;
    // Upstream's two-way strategic merge patch between the event with count 0, lastTimestamp
    // at the epoch and no message, and the event: the fields that differ, keys sorted.
    api::Json p = api::Json::object();
    p["count"] = event->count;
    p["lastTimestamp"] = event->last_timestamp.RFC3339();
    if (!event->message.empty()) p["message"] = event->message;
    patch = api::SerializeJson(p);
  }
  logs_.Put(key, EventLog{event->count, event->first_timestamp, event->metadata.name,
                          event->metadata.resource_version});
  return patch;
}

void EventCorrelator::UpdateState(const api::Event& event) {
  logs_.Put(EventKey(event), EventLog{event.count, event.first_timestamp, event.metadata.name,
                                      event.metadata.resource_version});
}

bool EventCorrelator::Filter(const api::Event& event) {
  const absl::Time now = clock_.Now();
  const std::string key = SpamKey(event);
  Bucket bucket{static_cast<double>(options_.spam_burst), now};
  if (Bucket* found = buckets_.Get(key)) {
    bucket = *found;
    const double elapsed = absl::ToDoubleSeconds(std::max(now - bucket.last, absl::ZeroDuration()));
    bucket.tokens = std::min(static_cast<double>(options_.spam_burst),
                             bucket.tokens + elapsed * options_.spam_qps);
    bucket.last = std::max(now, bucket.last);
  }
  bool spam = true;
  if (bucket.tokens >= 1.0) {
    bucket.tokens -= 1.0;
    spam = false;
  }
  buckets_.Put(key, bucket);
  return spam;
}

}  // namespace kubelet::events
