#include "kubelet/events/sink_recorder.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "gtest/gtest.h"
#include "kubelet/events/testing/fake_event_sink.h"

namespace kubelet::events {
namespace {

ObjectReference Container() {
  ObjectReference r;
  r.namespace_ = "default";
  r.name = "web";
  r.uid = "uid-1";
  r.field_path = "spec.containers{main}";
  return r;
}

// --- WriteEvent (one attempt), driven directly. ---

class WriteEventTest : public ::testing::Test {
 protected:
  api::Event Make(const std::string& msg = "Back-off restarting failed container") {
    return MakeEvent(Container(), kWarning, kBackOffStartContainer, msg, "kubelet", "node-1",
                     clock_.Now());
  }
  FakeClock clock_;
  EventCorrelator correlator_{clock_};
  FakeEventSink sink_;
};

TEST_F(WriteEventTest, NewEventIsCreatedAndTheServersStateKept) {
  CorrelateResult r = correlator_.Correlate(Make());
  EXPECT_TRUE(WriteEvent(sink_, r.event, r.patch, correlator_));
  ASSERT_EQ(sink_.Calls().size(), 1u);
  EXPECT_EQ(sink_.Calls()[0].method, "POST");
  // The next identical event patches the object the server stored (its resourceVersion).
  CorrelateResult again = correlator_.Correlate(Make());
  EXPECT_EQ(again.event.metadata.resource_version, "rv-1");
  EXPECT_TRUE(WriteEvent(sink_, again.event, again.patch, correlator_));
  ASSERT_EQ(sink_.Calls().size(), 2u);
  EXPECT_EQ(sink_.Calls()[1].method, "PATCH");
  EXPECT_EQ(sink_.Calls()[1].event.metadata.name, r.event.metadata.name);
  EXPECT_NE(sink_.Calls()[1].patch.find("\"count\":2"), std::string::npos);
}

TEST_F(WriteEventTest, PatchOfAVanishedEventFallsBackToCreateWithoutResourceVersion) {
  CorrelateResult r = correlator_.Correlate(Make());
  ASSERT_TRUE(WriteEvent(sink_, r.event, r.patch, correlator_));
  CorrelateResult again = correlator_.Correlate(Make());
  sink_.FailWith({absl::NotFoundError("404 NotFound: events \"web.x\" not found")});
  EXPECT_TRUE(WriteEvent(sink_, again.event, again.patch, correlator_));
  auto calls = sink_.Calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[1].method, "PATCH");
  EXPECT_EQ(calls[2].method, "POST");
  EXPECT_EQ(calls[2].event.metadata.resource_version, "");
  EXPECT_EQ(calls[2].event.count, 2);
}

TEST_F(WriteEventTest, AlreadyExistsAndRejectionsAreFinalTransportErrorsAreRetried) {
  CorrelateResult r = correlator_.Correlate(Make());
  sink_.FailWith({absl::AlreadyExistsError("409 AlreadyExists")});
  EXPECT_TRUE(WriteEvent(sink_, r.event, r.patch, correlator_));
  sink_.FailWith({absl::InvalidArgumentError("422 Invalid")});
  EXPECT_TRUE(WriteEvent(sink_, r.event, r.patch, correlator_));
  sink_.FailWith({absl::PermissionDeniedError("403 Forbidden")});
  EXPECT_TRUE(WriteEvent(sink_, r.event, r.patch, correlator_));
  sink_.FailWith({absl::UnavailableError("connection refused")});
  EXPECT_FALSE(WriteEvent(sink_, r.event, r.patch, correlator_));
  sink_.FailWith({absl::DeadlineExceededError("timeout")});
  EXPECT_FALSE(WriteEvent(sink_, r.event, r.patch, correlator_));
  sink_.FailWith({absl::ResourceExhaustedError("429 TooManyRequests")});
  EXPECT_FALSE(WriteEvent(sink_, r.event, r.patch, correlator_));
}

// --- The recorder with its sender thread. ---

class SinkRecorderTest : public ::testing::Test {
 protected:
  std::unique_ptr<SinkRecorder> New(SinkRecorderOptions o = {
                                        .retry_sleep = absl::Milliseconds(1)}) {
    o.host = "node-1";
    return NewSinkRecorder(sink_, clock_, o);
  }
  FakeClock clock_;
  std::shared_ptr<FakeEventSink> sink_ = std::make_shared<FakeEventSink>();
};

TEST_F(SinkRecorderTest, RecordsAreLoggedAndPostedThenRepeatsArePatched) {
  std::vector<std::string> lines;
  log::Configure({.verbosity = 3, .sink = [&](std::string_view l) { lines.emplace_back(l); }});
  auto recorder = New();
  recorder->Record(Container(), kNormal, kPulledImage, "Successfully pulled image");
  recorder->Record(Container(), kWarning, kBackOffStartContainer, "Back-off");
  clock_.Advance(absl::Seconds(10));
  recorder->Record(Container(), kWarning, kBackOffStartContainer, "Back-off");
  ASSERT_TRUE(recorder->WaitIdle(absl::Seconds(10)));
  recorder->Stop();
  log::Configure({});

  auto calls = sink_->Calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].method, "POST");
  EXPECT_EQ(calls[0].event.reason, "Pulled");
  EXPECT_EQ(calls[0].event.source.host, "node-1");
  EXPECT_EQ(calls[0].event.reporting_instance, "node-1");
  EXPECT_EQ(calls[1].method, "POST");
  EXPECT_EQ(calls[2].method, "PATCH");
  EXPECT_EQ(calls[2].event.metadata.name, calls[1].event.metadata.name);
  EXPECT_EQ(calls[2].event.count, 2);
  int logged = 0;
  for (const auto& l : lines) logged += l.find("\"Event occurred\"") != std::string::npos;
  EXPECT_EQ(logged, 3);
}

TEST_F(SinkRecorderTest, FailedWritesAreRetriedUpToTwelveTries) {
  auto recorder = New();
  sink_->FailWith({absl::UnavailableError("down"), absl::UnavailableError("down")});
  recorder->Record(Container(), kNormal, kStartedContainer, "Started container main");
  ASSERT_TRUE(recorder->WaitIdle(absl::Seconds(10)));
  EXPECT_EQ(sink_->Calls().size(), 3u);

  std::vector<absl::Status> down(20, absl::UnavailableError("down"));
  sink_->FailWith(down);
  recorder->Record(Container(), kNormal, kKillingContainer, "Stopping container main");
  ASSERT_TRUE(recorder->WaitIdle(absl::Seconds(10)));
  EXPECT_EQ(sink_->Calls().size(), 3u + 12u);
  recorder->Stop();
}

TEST_F(SinkRecorderTest, TheSenderRunsOnlyWhileThereIsWork) {
  auto recorder = New(SinkRecorderOptions{.retry_sleep = absl::Milliseconds(1),
                                          .sender_idle_timeout = absl::Milliseconds(50)});
  EXPECT_FALSE(recorder->SenderRunning());  // nothing recorded yet
  for (int round = 1; round <= 3; ++round) {
    recorder->Record(Container(), kNormal, absl::StrCat("R", round), "m");
    ASSERT_TRUE(recorder->WaitIdle(absl::Seconds(10)));
    EXPECT_EQ(sink_->Calls().size(), static_cast<size_t>(round));
    // Idle for longer than the timeout: the sender leaves, the next event starts another.
    for (int i = 0; i < 1000 && recorder->SenderRunning(); ++i) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    EXPECT_FALSE(recorder->SenderRunning());
  }
  recorder->Stop();
  EXPECT_FALSE(recorder->SenderRunning());
}

TEST_F(SinkRecorderTest, UnsupportedTypeIsRefused) {
  auto recorder = New();
  recorder->Record(Container(), "Bogus", "Reason", "message");
  ASSERT_TRUE(recorder->WaitIdle(absl::Seconds(10)));
  recorder->Stop();
  EXPECT_TRUE(sink_->Calls().empty());
}

TEST_F(SinkRecorderTest, FullQueueDropsAndCountsWithoutBlocking) {
  sink_->Block();
  auto recorder = New(SinkRecorderOptions{.queue_size = 3});
  // Three fill the queue; the sender may have taken the first one (it is blocked in the sink).
  for (int i = 0; i < 10; ++i) {
    recorder->Record(Container(), kNormal, absl::StrCat("R", i), "m");
  }
  EXPECT_GE(recorder->Dropped(), 6u);
  EXPECT_LE(recorder->Dropped(), 7u);
  sink_->Release();
  ASSERT_TRUE(recorder->WaitIdle(absl::Seconds(10)));
  recorder->Stop();
  EXPECT_EQ(sink_->Calls().size() + recorder->Dropped(), 10u);
}

TEST_F(SinkRecorderTest, StopFlushesWhatIsQueuedAndLaterEventsAreOnlyLogged) {
  auto recorder = New();
  for (int i = 0; i < 5; ++i) {
    recorder->Record(Container(), kNormal, absl::StrCat("R", i), "m");
  }
  recorder->Stop();
  EXPECT_EQ(sink_->Calls().size(), 5u);
  recorder->Record(Container(), kNormal, "After", "m");
  recorder->Stop();  // idempotent
  EXPECT_EQ(sink_->Calls().size(), 5u);
}

TEST_F(SinkRecorderTest, StopGivesUpOnAnUnreachableServerWithinTheFlushTimeout) {
  // Long retry sleeps: without Stop the first event would be retried for minutes.
  auto recorder = New(SinkRecorderOptions{.retry_sleep = absl::Seconds(30),
                                          .flush_timeout = absl::Milliseconds(200)});
  sink_->FailWith(std::vector<absl::Status>(100, absl::UnavailableError("down")));
  for (int i = 0; i < 3; ++i) {
    recorder->Record(Container(), kNormal, absl::StrCat("R", i), "m");
  }
  sink_->WaitForCalls(1);
  recorder->Stop();
  // The first event's retry sleep ended at Stop; the others had one try each (the first sleep
  // is jittered and may have allowed one more try of the first).
  const size_t calls = sink_->Calls().size();
  EXPECT_GE(calls, 1u);
  EXPECT_LE(calls, 4u);
  recorder->Record(Container(), kNormal, "After", "m");
  EXPECT_EQ(sink_->Calls().size(), calls);
}

}  // namespace
}  // namespace kubelet::events
