// Both loop runners against one contract (loops.h): due times by the runner's clock, wakes
// that coalesce, calls of a loop that never overlap, Stop() that waits and ends the calls, a
// throwing body called again; then many loops on a few shared threads.
#include "common/loops.h"

#include <atomic>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "common/testing/eventually.h"
#include "gtest/gtest.h"

namespace kubelet {
namespace {

using testing::Eventually;

enum class Runner { kThreads, kShared };

class LoopsTest : public ::testing::TestWithParam<Runner> {
 protected:
  std::unique_ptr<Loops> New(Clock& clock) {
    if (GetParam() == Runner::kThreads) return NewLoopThreads(clock);
    return NewSharedLoops(clock, {.max_threads = 4, .idle_timeout = absl::Milliseconds(100)});
  }
  FakeClock clock_;
};

TEST_P(LoopsTest, CalledAtFirstThenWhenEachCallSaysByTheRunnersClock) {
  auto loops = New(clock_);
  std::atomic<int> calls{0};
  auto loop = loops->Start("periodic", clock_.Now() + absl::Seconds(5), [&](bool woken) {
    EXPECT_FALSE(woken);
    ++calls;
    return clock_.Now() + absl::Seconds(10);
  });
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(calls, 0);  // not due yet
  clock_.Advance(absl::Seconds(5));
  ASSERT_TRUE(Eventually([&] { return calls == 1; }));
  clock_.Advance(absl::Seconds(9));
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(calls, 1);
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(Eventually([&] { return calls == 2; }));
  loop->Stop();
}

TEST_P(LoopsTest, AWakeCallsItSoonAndWakesDuringACallCoalesceIntoOne) {
  auto loops = New(clock_);
  absl::Notification entered, release;
  std::atomic<int> calls{0}, woken_calls{0};
  auto loop = loops->Start("woken", absl::InfiniteFuture(), [&](bool woken) {
    if (woken) ++woken_calls;
    if (++calls == 1) {
      entered.Notify();
      release.WaitForNotification();
    }
    return absl::InfiniteFuture();
  });
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(calls, 0);  // only when woken
  loop->Wake();
  entered.WaitForNotification();
  for (int i = 0; i < 100; ++i) loop->Wake();  // while the first call runs
  release.Notify();
  ASSERT_TRUE(Eventually([&] { return calls == 2; }));
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(woken_calls, 2);
  loop->Stop();
}

TEST_P(LoopsTest, CallsOfALoopNeverOverlap) {
  auto loops = New(clock_);
  std::atomic<int> in_body{0}, calls{0};
  std::atomic<bool> overlapped{false};
  auto loop = loops->Start("serial", absl::InfinitePast(), [&](bool) {
    if (++in_body > 1) overlapped = true;
    absl::SleepFor(absl::Microseconds(50));
    --in_body;
    ++calls;
    return absl::InfiniteFuture();
  });
  std::vector<std::thread> wakers;
  for (int t = 0; t < 4; ++t) {
    wakers.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        loop->Wake();
        if (i % 10 == 0) absl::SleepFor(absl::Microseconds(100));
      }
    });
  }
  for (auto& t : wakers) t.join();
  ASSERT_TRUE(Eventually([&] { return in_body == 0; }));
  loop->Stop();
  EXPECT_FALSE(overlapped);
  EXPECT_GE(calls, 2);
}

TEST_P(LoopsTest, StopWaitsForTheRunningCallAndNoCallFollows) {
  auto loops = New(clock_);
  absl::Notification entered;
  std::atomic<bool> finished{false};
  std::atomic<int> calls{0};
  auto loop = loops->Start("stopped", absl::InfinitePast(), [&](bool) {
    ++calls;
    entered.Notify();
    absl::SleepFor(absl::Milliseconds(50));
    finished = true;
    return absl::InfinitePast();  // due again at once
  });
  entered.WaitForNotification();
  loop->Stop();
  EXPECT_TRUE(finished);
  const int at_stop = calls;
  loop->Wake();
  clock_.Advance(absl::Hours(1));
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(calls, at_stop);
  loop->Stop();  // idempotent
}

TEST_P(LoopsTest, ABodyThatThrowsIsCalledAgainAfterTheRetryDelay) {
  auto loops = New(clock_);
  std::atomic<int> calls{0};
  auto loop = loops->Start("throws", absl::InfinitePast(), [&](bool) -> absl::Time {
    ++calls;
    throw std::runtime_error("boom");
  });
  ASSERT_TRUE(Eventually([&] { return calls == 1; }));
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(calls, 1);
  clock_.Advance(kLoopRetryAfter);
  ASSERT_TRUE(Eventually([&] { return calls == 2; }));
  loop->Stop();
}

INSTANTIATE_TEST_SUITE_P(Runners, LoopsTest, ::testing::Values(Runner::kThreads, Runner::kShared),
                         [](const ::testing::TestParamInfo<Runner>& info) {
                           return info.param == Runner::kThreads ? "ThreadPerLoop" : "Shared";
                         });

TEST(SharedLoopsTest, AThousandLoopsOnEightThreadsEachSerial) {
  RealClock clock;
  auto loops = NewSharedLoops(clock, {.max_threads = 8, .idle_timeout = absl::Seconds(1)});
  constexpr int kLoops = 1000, kCalls = 5;
  struct Counter {
    std::atomic<int> calls{0}, in_body{0};
  };
  std::vector<Counter> counters(kLoops);
  std::atomic<bool> overlapped{false};
  std::vector<std::unique_ptr<Loop>> started;
  for (int i = 0; i < kLoops; ++i) {
    Counter& c = counters[i];
    started.push_back(loops->Start("loop", absl::InfinitePast(), [&c, &overlapped](bool) {
      if (++c.in_body > 1) overlapped = true;
      const int n = ++c.calls;
      --c.in_body;
      return n < kCalls ? absl::Now() + absl::Milliseconds(1) : absl::InfiniteFuture();
    }));
  }
  ASSERT_TRUE(Eventually([&] {
    for (const Counter& c : counters) {
      if (c.calls < kCalls) return false;
    }
    return true;
  }));
  for (int i = 0; i < kLoops; i += 7) started[i]->Wake();
  ASSERT_TRUE(Eventually([&] { return counters[7].calls == kCalls + 1; }));
  for (auto& l : started) l->Stop();
  EXPECT_FALSE(overlapped);
  EXPECT_EQ(counters[1].calls, kCalls);
}

}  // namespace
}  // namespace kubelet
