// The graceful shutdown state file: Go's encoding of two time.Time, read back (offsets,
// fractions, the zero time), a missing file, and bad files as errors.
#include "kubelet/nodeshutdown/state.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace kubelet::nodeshutdown {
namespace {

TEST(ShutdownStateTest, EncodeAsGo) {
  ShutdownState s;
  EXPECT_EQ(EncodeShutdownState(s),
            R"({"startTime":"0001-01-01T00:00:00Z","endTime":"0001-01-01T00:00:00Z"})");
  s.start_time = absl::FromUnixSeconds(1700000000) + absl::Milliseconds(500);
  s.end_time = absl::FromUnixSeconds(1700000030);
  EXPECT_EQ(EncodeShutdownState(s),
            R"({"startTime":"2023-11-14T22:13:20.5Z","endTime":"2023-11-14T22:13:50Z"})");
}

TEST(ShutdownStateTest, DecodeWhatGoWrites) {
  absl::StatusOr<ShutdownState> s = DecodeShutdownState(
      R"({"startTime":"2023-11-15T00:13:20.123456789+02:00","endTime":"0001-01-01T00:00:00Z"})");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->start_time, absl::FromUnixSeconds(1700000000) + absl::Nanoseconds(123456789));
  EXPECT_FALSE(s->end_time.has_value());
  ShutdownState round;
  round.start_time = absl::FromUnixSeconds(1700000000) + absl::Nanoseconds(1);
  round.end_time = absl::FromUnixSeconds(1700000001);
  EXPECT_EQ(*DecodeShutdownState(EncodeShutdownState(round)), round);
  EXPECT_EQ(*DecodeShutdownState("null"), ShutdownState{});
  EXPECT_EQ(*DecodeShutdownState(R"({"StartTime":"2023-11-14T22:13:20Z","other":1})"),
            (ShutdownState{absl::FromUnixSeconds(1700000000), std::nullopt}));
}

TEST(ShutdownStateTest, BadInputIsAnError) {
  EXPECT_FALSE(DecodeShutdownState("{").ok());
  EXPECT_FALSE(DecodeShutdownState("[]").ok());
  EXPECT_FALSE(DecodeShutdownState(R"({"startTime":5})").ok());
  EXPECT_FALSE(DecodeShutdownState(R"({"startTime":"yesterday"})").ok());
  EXPECT_FALSE(DecodeShutdownState(std::string(100000, '[')).ok());
}

TEST(ShutdownStateTest, StoreAndLoad) {
  char tmpl[] = "/tmp/nodeshutdown_state.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const std::string path = dir + "/graceful_node_shutdown_state";
  absl::StatusOr<ShutdownState> missing = LoadShutdownState(path);
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(*missing, ShutdownState{});

  ShutdownState s{absl::FromUnixSeconds(100), absl::FromUnixSeconds(130)};
  ASSERT_TRUE(StoreShutdownState(path, s).ok());
  EXPECT_EQ(*LoadShutdownState(path), s);
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            std::filesystem::perms(0644));

  std::ofstream(path) << "garbage";
  absl::StatusOr<ShutdownState> bad = LoadShutdownState(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(path), absl::string_view::npos);

  EXPECT_EQ(ShutdownTimestamp(std::nullopt), 0);
  EXPECT_EQ(ShutdownTimestamp(absl::FromUnixSeconds(100) + absl::Milliseconds(900)), 100);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kubelet::nodeshutdown
