#include "common/guarded.h"

#include <pthread.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/log.h"
#include "gtest/gtest.h"

namespace kubelet {
namespace {

class GuardedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log::Configure(log::Options{0, log::Format::kText, [this](std::string_view l) {
                                  absl::MutexLock lock(&mu_);
                                  lines_.emplace_back(l);
                                }});
  }
  void TearDown() override { log::Configure(log::Options{}); }
  std::vector<std::string> Lines() {
    absl::MutexLock lock(&mu_);
    return lines_;
  }
  absl::Mutex mu_;
  std::vector<std::string> lines_;
};

TEST_F(GuardedTest, ReturnsTrueWhenTheWorkReturns) {
  int runs = 0;
  EXPECT_TRUE(RunGuarded("counting", [&] { ++runs; }));
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(Lines().empty());
}

TEST_F(GuardedTest, StdExceptionIsLoggedWithTheBoundary) {
  // What Boost.Beast throws for a field value over 64 KiB.
  EXPECT_FALSE(
      RunGuarded("probe worker", [] { throw std::length_error("field value too large"); }));
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0][0], 'E');
  EXPECT_NE(lines[0].find("err=\"field value too large\""), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("boundary=\"probe worker\""), std::string::npos) << lines[0];
}

TEST_F(GuardedTest, TheMessageIsHandedBackForAnErrorValue) {
  std::string error = "unchanged";
  EXPECT_TRUE(RunGuarded(
      "fine", [] {}, &error));
  EXPECT_EQ(error, "unchanged");
  EXPECT_FALSE(RunGuarded(
      "bad", [] { throw std::out_of_range("basic_string::substr"); }, &error));
  EXPECT_EQ(error, "basic_string::substr");
  EXPECT_FALSE(RunGuarded(
      "odd", [] { throw 1.5; }, &error));
  EXPECT_EQ(error, "unknown exception");
}

TEST_F(GuardedTest, NonStdExceptionIsCaughtToo) {
  EXPECT_FALSE(RunGuarded("odd", [] { throw 42; }));
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("unknown exception"), std::string::npos) << lines[0];
}

TEST_F(GuardedTest, GuardedThreadEndsInsteadOfTerminating) {
  std::thread t = GuardedThread("worker", [] { throw std::runtime_error("boom"); });
  t.join();
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("boundary=\"worker\""), std::string::npos) << lines[0];
}

TEST_F(GuardedTest, GuardedThreadIsNamedAfterItsFirstFifteenCharacters) {
  char comm[16] = {};
  std::thread t = GuardedThread("a rather long thread name",
                                [&comm] { pthread_getname_np(pthread_self(), comm, sizeof comm); });
  t.join();
  EXPECT_STREQ(comm, "a rather long t");
}

}  // namespace
}  // namespace kubelet
