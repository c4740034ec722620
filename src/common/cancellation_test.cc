#include "common/cancellation.h"

#include <stdexcept>
#include <thread>

#include "gtest/gtest.h"

namespace kubelet {
namespace {

TEST(CancellationTest, CallbacksRunOnceWhileRegistered) {
  auto c = std::make_shared<Cancellation>();
  ScopedCancellation scope(c);
  ASSERT_EQ(CurrentCancellation(), c.get());
  int ran = 0, unregistered = 0;
  {
    OnCancel gone([&] { ++unregistered; });
  }
  OnCancel on([&] { ++ran; });
  EXPECT_FALSE(on.cancelled());
  c->Cancel();
  c->Cancel();
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(unregistered, 0);
  EXPECT_TRUE(on.cancelled());
  // Registering after the fact: nothing runs, and the caller can see it is cancelled.
  int late = 0;
  OnCancel after([&] { ++late; });
  EXPECT_TRUE(after.cancelled());
  EXPECT_EQ(late, 0);
}

TEST(CancellationTest, AThrowingCallbackDoesNotStopTheOthers) {
  auto c = std::make_shared<Cancellation>();
  ScopedCancellation scope(c);
  int ran = 0;
  OnCancel first([] { throw std::runtime_error("hook failed"); });
  OnCancel second([&] { ++ran; });
  c->Cancel();
  EXPECT_EQ(ran, 1);
  EXPECT_TRUE(second.cancelled());
}

TEST(CancellationTest, ScopesNestAndStayOnTheirThread) {
  EXPECT_EQ(CurrentCancellation(), nullptr);
  auto outer = std::make_shared<Cancellation>();
  auto inner = std::make_shared<Cancellation>();
  {
    ScopedCancellation a(outer);
    {
      ScopedCancellation b(inner);
      EXPECT_EQ(CurrentCancellation(), inner.get());
      Cancellation* seen = outer.get();
      std::thread([&] { seen = CurrentCancellation(); }).join();
      EXPECT_EQ(seen, nullptr);
    }
    EXPECT_EQ(CurrentCancellation(), outer.get());
  }
  EXPECT_EQ(CurrentCancellation(), nullptr);
  // Without a cancellation, OnCancel does nothing.
  OnCancel none([] {});
  EXPECT_FALSE(none.cancelled());
}

TEST(CancellationTest, CancelFromAnotherThreadReachesABlockedWaiter) {
  auto c = std::make_shared<Cancellation>();
  ScopedCancellation scope(c);
  absl::Mutex mu;
  bool woken = false;
  OnCancel on([&] {
    absl::MutexLock l(&mu);
    woken = true;
  });
  std::thread t([c] { c->Cancel(); });
  {
    absl::MutexLock l(&mu);
    mu.Await(absl::Condition(&woken));
  }
  t.join();
  EXPECT_TRUE(on.cancelled());
}

}  // namespace
}  // namespace kubelet
