#include "kubelet/events/event_correlator.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "api/codec.h"
#include "gtest/gtest.h"

namespace kubelet::events {
namespace {

constexpr char kNode[] = "node-1";

class EventCorrelatorTest : public ::testing::Test {
 protected:
  ObjectReference Container() {
    ObjectReference r;
    r.namespace_ = "default";
    r.name = "web";
    r.uid = "uid-1";
    r.resource_version = "42";
    r.field_path = "spec.containers{main}";
    return r;
  }
  api::Event Make(const ObjectReference& o, const std::string& reason, const std::string& msg,
                  const std::string& type = kNormal) {
    return MakeEvent(o, type, reason, msg, "kubelet", kNode, clock_.Now());
  }

  FakeClock clock_{absl::FromUnixNanos(1700000000123456789)};
  EventCorrelator correlator_{clock_};
};

TEST_F(EventCorrelatorTest, MakeEventHasUpstreamsFields) {
  api::Event e = Make(Container(), "Pulled", "Successfully pulled image");
  // "%v.%x" of UnixNano.
  EXPECT_EQ(e.metadata.name, "web.17979cfe3d85cd15");
  EXPECT_EQ(e.metadata.namespace_, "default");
  EXPECT_EQ(e.involved_object.kind, "Pod");
  EXPECT_EQ(e.involved_object.api_version, "v1");
  EXPECT_EQ(e.involved_object.name, "web");
  EXPECT_EQ(e.involved_object.uid, "uid-1");
  EXPECT_EQ(e.involved_object.resource_version, "42");
  EXPECT_EQ(e.involved_object.field_path, "spec.containers{main}");
  EXPECT_EQ(e.reason, "Pulled");
  EXPECT_EQ(e.message, "Successfully pulled image");
  EXPECT_EQ(e.type, "Normal");
  EXPECT_EQ(e.count, 1);
  EXPECT_EQ(e.first_timestamp.RFC3339(), "2023-11-14T22:13:20Z");
  EXPECT_EQ(e.last_timestamp, e.first_timestamp);
  EXPECT_EQ(e.source.component, "kubelet");
  EXPECT_EQ(e.source.host, kNode);
  EXPECT_EQ(e.reporting_component, "kubelet");
  EXPECT_EQ(e.reporting_instance, kNode);
  EXPECT_TRUE(e.event_time.IsZero());
}

TEST_F(EventCorrelatorTest, NodeEventsGoToTheDefaultNamespace) {
  api::Event e = Make(NodeRef(kNode), kStartingKubelet, "Starting kubelet.");
  EXPECT_EQ(e.metadata.namespace_, "default");
  EXPECT_EQ(e.involved_object.kind, "Node");
  EXPECT_EQ(e.involved_object.namespace_, "");
  EXPECT_EQ(e.involved_object.name, kNode);
  EXPECT_EQ(e.involved_object.uid, kNode);
  EXPECT_EQ(e.involved_object.api_version, "");
  api::Json j = api::ToJson(e);
  EXPECT_EQ(api::SerializeJson(j["involvedObject"]),
            R"({"kind":"Node","name":"node-1","uid":"node-1"})");
}

TEST_F(EventCorrelatorTest, IdenticalEventIsAPatchOfTheFirstWithCountAndLastTimestamp) {
  CorrelateResult first = correlator_.Correlate(Make(Container(), "BackOff", "Back-off"));
  EXPECT_FALSE(first.skip);
  EXPECT_EQ(first.patch, "");
  EXPECT_EQ(first.event.count, 1);
  const std::string name = first.event.metadata.name;
  const api::Time first_time = first.event.first_timestamp;

  clock_.Advance(absl::Seconds(30));
  CorrelateResult second = correlator_.Correlate(Make(Container(), "BackOff", "Back-off"));
  EXPECT_FALSE(second.skip);
  EXPECT_EQ(second.event.metadata.name, name);
  EXPECT_EQ(second.event.count, 2);
  EXPECT_EQ(second.event.first_timestamp, first_time);
  EXPECT_EQ(second.event.last_timestamp.RFC3339(), "2023-11-14T22:13:50Z");
  EXPECT_EQ(second.patch,
            R"({"count":2,"lastTimestamp":"2023-11-14T22:13:50Z","message":"Back-off"})");

  clock_.Advance(absl::Seconds(30));
  CorrelateResult third = correlator_.Correlate(Make(Container(), "BackOff", "Back-off"));
  EXPECT_EQ(third.event.count, 3);
  EXPECT_EQ(third.event.metadata.name, name);

  // A different message is a different event (until aggregation).
  CorrelateResult other = correlator_.Correlate(Make(Container(), "BackOff", "other"));
  EXPECT_EQ(other.event.count, 1);
  EXPECT_EQ(other.patch, "");
  EXPECT_NE(other.event.metadata.name, name);
}

TEST_F(EventCorrelatorTest, UpdateStateRecordsTheServersResourceVersion) {
  CorrelateResult first = correlator_.Correlate(Make(Container(), "Killing", "Stopping"));
  api::Event stored = first.event;
  stored.metadata.resource_version = "777";
  correlator_.UpdateState(stored);
  CorrelateResult second = correlator_.Correlate(Make(Container(), "Killing", "Stopping"));
  EXPECT_EQ(second.event.metadata.resource_version, "777");
  EXPECT_EQ(second.event.count, 2);
}

TEST_F(EventCorrelatorTest, TenSimilarEventsAreAggregated) {
  for (int i = 0; i < 9; ++i) {
    CorrelateResult r =
        correlator_.Correlate(Make(Container(), "Unhealthy", absl::StrCat("probe failed ", i)));
    EXPECT_EQ(r.event.message, absl::StrCat("probe failed ", i));
    EXPECT_EQ(r.event.count, 1);
    clock_.Advance(absl::Seconds(10));
  }
  CorrelateResult tenth = correlator_.Correlate(Make(Container(), "Unhealthy", "probe failed 9"));
  EXPECT_EQ(tenth.event.message, "(combined from similar events): probe failed 9");
  EXPECT_EQ(tenth.event.count, 1);
  EXPECT_EQ(tenth.patch, "");
  EXPECT_EQ(tenth.event.reason, "Unhealthy");
  EXPECT_EQ(tenth.event.involved_object.field_path, "spec.containers{main}");
  EXPECT_EQ(tenth.event.source.host, kNode);
  EXPECT_EQ(tenth.event.reporting_component, "");

  clock_.Advance(absl::Seconds(10));
  CorrelateResult eleventh =
      correlator_.Correlate(Make(Container(), "Unhealthy", "probe failed 10"));
  EXPECT_EQ(eleventh.event.message, "(combined from similar events): probe failed 10");
  EXPECT_EQ(eleventh.event.metadata.name, tenth.event.metadata.name);
  EXPECT_EQ(eleventh.event.count, 2);
  EXPECT_EQ(
      eleventh.patch,
      absl::StrCat(R"({"count":2,"lastTimestamp":")", eleventh.event.last_timestamp.RFC3339(),
                   R"(","message":"(combined from similar events): )", R"(probe failed 10"})"));

  // A repeat of a message seen before the threshold is de-duplicated under its own key.
  CorrelateResult repeat = correlator_.Correlate(Make(Container(), "Unhealthy", "probe failed 3"));
  EXPECT_EQ(repeat.event.message, "probe failed 3");
  EXPECT_EQ(repeat.event.count, 2);

  // Other reasons are other groups.
  CorrelateResult other = correlator_.Correlate(Make(Container(), "Killing", "probe failed 11"));
  EXPECT_EQ(other.event.message, "probe failed 11");
}

TEST_F(EventCorrelatorTest, AggregationStartsOverAfterTenQuietMinutes) {
  for (int i = 0; i < 9; ++i) {
    correlator_.Correlate(Make(Container(), "Unhealthy", absl::StrCat("m", i)));
  }
  clock_.Advance(absl::Minutes(10) + absl::Seconds(1));
  CorrelateResult r = correlator_.Correlate(Make(Container(), "Unhealthy", "m9"));
  EXPECT_EQ(r.event.message, "m9");
}

TEST_F(EventCorrelatorTest, SpamFilterAllowsBurstOf25PerObjectThenOneEveryFiveMinutes) {
  int sent = 0;
  for (int i = 0; i < 40; ++i) {
    // Distinct reasons: neither aggregated nor de-duplicated, one spam bucket (same object).
    CorrelateResult r =
        correlator_.Correlate(Make(Container(), absl::StrCat("Reason", i), "message"));
    if (!r.skip) ++sent;
  }
  EXPECT_EQ(sent, 25);
  // Another object of the same source has a bucket of its own.
  ObjectReference other = Container();
  other.name = "db";
  other.uid = "uid-2";
  EXPECT_FALSE(correlator_.Correlate(Make(other, "Started", "x")).skip);
  // The field path is not part of the spam key.
  ObjectReference pod = Container();
  pod.field_path = "";
  EXPECT_TRUE(correlator_.Correlate(Make(pod, "Other", "x")).skip);

  clock_.Advance(absl::Minutes(4));
  EXPECT_TRUE(correlator_.Correlate(Make(Container(), "Later", "x")).skip);
  clock_.Advance(absl::Minutes(1));
  EXPECT_FALSE(correlator_.Correlate(Make(Container(), "Later2", "x")).skip);
  EXPECT_TRUE(correlator_.Correlate(Make(Container(), "Later3", "x")).skip);
}

TEST_F(EventCorrelatorTest, LruForgetsTheOldestEntries) {
  EventCorrelator small(clock_, CorrelatorOptions{.lru_size = 2});
  api::Event a = Make(Container(), "A", "a");
  small.Correlate(a);
  small.Correlate(Make(Container(), "B", "b"));
  small.Correlate(Make(Container(), "C", "c"));
  // "A" was evicted from the event log: it is new again.
  EXPECT_EQ(small.Correlate(Make(Container(), "A", "a")).event.count, 1);
  EXPECT_EQ(small.Correlate(Make(Container(), "A", "a")).event.count, 2);
}

}  // namespace
}  // namespace kubelet::events
