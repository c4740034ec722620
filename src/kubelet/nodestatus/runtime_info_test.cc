// RuntimeInfoCache: the first read is synchronous, later reads answer from the cache and
// refresh it in the background, a failure keeps the last good answer, a hung runtime holds only
// the refresher.
#include "kubelet/nodestatus/runtime_info.h"

#include <atomic>

#include "absl/synchronization/notification.h"
#include "common/testing/eventually.h"
#include "gtest/gtest.h"

namespace kubelet::nodestatus {
namespace {

using testing::Eventually;

TEST(RuntimeInfoCacheTest, CachedAnswersAreRefreshedInTheBackground) {
  std::atomic<int> version_calls{0};
  std::atomic<bool> fail{false};
  RuntimeInfoCache cache(
      [&]() -> absl::StatusOr<std::string> {
        const int n = ++version_calls;
        if (fail) return absl::UnavailableError("runtime down");
        return "containerd://1." + std::to_string(n);
      },
      []() -> absl::StatusOr<std::vector<ImageInfo>> {
        return std::vector<ImageInfo>{ImageInfo{.repo_tags = {"busybox:1.36"}}};
      });
  EXPECT_EQ(cache.Version().value(), "containerd://1.1");  // read on this thread
  EXPECT_EQ(version_calls, 1);
  ASSERT_EQ(cache.Images().value().size(), 1u);
  // The next read answers the cached value and wakes the refresher.
  EXPECT_EQ(cache.Version().value(), "containerd://1.1");
  ASSERT_TRUE(Eventually([&] { return cache.Version().value() != "containerd://1.1"; }));
  // A failed refresh keeps the last good answer.
  fail = true;
  const int before = version_calls;
  ASSERT_TRUE(Eventually([&] {
    (void)cache.Version();
    return version_calls > before + 1;
  }));
  EXPECT_TRUE(cache.Version().ok());
}

TEST(RuntimeInfoCacheTest, AHungRuntimeHoldsOnlyTheRefresher) {
  absl::Notification release;
  std::atomic<int> calls{0};
  RuntimeInfoCache cache(
      [&]() -> absl::StatusOr<std::string> {
        if (++calls > 1) release.WaitForNotification();
        return "cri-o://1.28.11";
      },
      []() -> absl::StatusOr<std::vector<ImageInfo>> { return std::vector<ImageInfo>{}; });
  EXPECT_EQ(cache.Version().value(), "cri-o://1.28.11");
  // The refresher hangs in the runtime; every read still answers at once.
  for (int i = 0; i < 50; ++i) EXPECT_EQ(cache.Version().value(), "cri-o://1.28.11");
  ASSERT_TRUE(Eventually([&] { return calls >= 2; }));
  release.Notify();
  cache.Stop();
}

TEST(RuntimeInfoCacheTest, TheRefresherHoldsAThreadOnlyWhileItRefreshes) {
  std::atomic<int> calls{0};
  RuntimeInfoCache cache(
      [&]() -> absl::StatusOr<std::string> { return "containerd://1." + std::to_string(++calls); },
      []() -> absl::StatusOr<std::vector<ImageInfo>> { return std::vector<ImageInfo>{}; },
      /*refresher_idle=*/absl::Milliseconds(20));
  EXPECT_EQ(cache.Version().value(), "containerd://1.1");
  EXPECT_EQ(cache.RefresherThreads(), 0);  // the first read ran here
  for (int round = 2; round <= 4; ++round) {
    (void)cache.Version();  // wakes a refresh, on a thread started for it
    ASSERT_TRUE(Eventually([&] { return calls >= round; }));
    ASSERT_TRUE(Eventually([&] { return cache.RefresherThreads() == 0; }));
  }
  EXPECT_EQ(cache.Version().value(), "containerd://1.4");
}

TEST(RuntimeInfoCacheTest, UntilAReadSucceedsTheErrorIsTheAnswer) {
  RuntimeInfoCache cache(
      []() -> absl::StatusOr<std::string> { return absl::UnavailableError("no"); },
      []() -> absl::StatusOr<std::vector<ImageInfo>> {
        return absl::DeadlineExceededError("slow");
      });
  EXPECT_EQ(cache.Version().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(cache.Images().status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(cache.Version().status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace kubelet::nodestatus
