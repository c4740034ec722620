#include "kubelet/logs/log_reader.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "cri/testing/fake_runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/logs/testing/files.h"

namespace kubelet::logs {
namespace {

namespace v1 = ::runtime::v1;

using testing::TempDir;
using testing::WriteFile;

// Collects what ReadLogs writes.
struct Collector {
  absl::Mutex mu;
  std::string out ABSL_GUARDED_BY(mu);
  LogSink Sink() {
    return [this](std::string_view d) {
      absl::MutexLock lock(&mu);
      out.append(d.data(), d.size());
      return true;
    };
  }
  std::string Get() {
    absl::MutexLock lock(&mu);
    return out;
  }
  bool WaitFor(const std::string& text, absl::Duration timeout) {
    absl::MutexLock lock(&mu);
    auto has = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      return out.find(text) != std::string::npos;
    };
    return mu.AwaitWithTimeout(absl::Condition(&has), timeout);
  }
};

absl::StatusOr<std::string> Read(const std::string& path, const ReadOptions& options) {
  std::string out;
  absl::Status st = ReadLogs(path, "c", options, FollowOptions{}, [&](std::string_view d) {
    out.append(d.data(), d.size());
    return true;
  });
  if (!st.ok()) return st;
  return out;
}

constexpr char kSample[] =
    "2016-10-06T00:17:09.669794202Z stdout F line one\n"
    "2016-10-06T00:17:10.113242941Z stderr F line two\n"
    "2016-10-06T00:17:11.000000000Z stdout P par\n"
    "2016-10-06T00:17:11.100000000Z stdout P tial\n"
    "2016-10-06T00:17:11.200000000Z stdout F  done\n"
    "2016-10-06T00:17:12Z stdout F line four\n";

TEST(ParseCriLogLineTest, FullAndPartial) {
  LogMessage m;
  ASSERT_TRUE(ParseCriLogLine("2016-10-06T00:17:09.669794202Z stdout F hello world\n", &m).ok());
  EXPECT_EQ(m.stream, LogStream::kStdout);
  EXPECT_FALSE(m.partial);
  EXPECT_EQ(m.content, "hello world\n");
  EXPECT_EQ(m.timestamp, absl::FromUnixSeconds(1475713029) + absl::Nanoseconds(669794202));

  ASSERT_TRUE(ParseCriLogLine("2016-10-06T00:17:09.5+02:00 stderr P:x partial\n", &m).ok());
  EXPECT_EQ(m.stream, LogStream::kStderr);
  EXPECT_TRUE(m.partial);
  EXPECT_EQ(m.content, "partial");
  EXPECT_EQ(m.utc_offset_seconds, 7200);
  EXPECT_EQ(m.timestamp, absl::FromUnixSeconds(1475713029 - 7200) + absl::Milliseconds(500));

  ASSERT_TRUE(ParseCriLogLine("2016-10-06T00:17:09Z stdout F \n", &m).ok());
  EXPECT_EQ(m.content, "\n");
}

TEST(ParseCriLogLineTest, Errors) {
  LogMessage m;
  EXPECT_EQ(ParseCriLogLine("garbage", &m).message(), "timestamp is not found");
  EXPECT_THAT(std::string(ParseCriLogLine("2016-13-06T00:17:09Z stdout F x", &m).message()),
              ::testing::HasSubstr("unexpected timestamp format"));
  EXPECT_EQ(ParseCriLogLine("2016-10-06T00:17:09Z stdin F x", &m).message(),
            "unexpected stream type \"stdin\"");
  EXPECT_EQ(ParseCriLogLine("2016-10-06T00:17:09Z stdout", &m).message(),
            "stream type is not found");
  EXPECT_EQ(ParseCriLogLine("2016-10-06T00:17:09Z stdout F", &m).message(), "log tag is not found");
}

TEST(FormatLogTimestampTest, FixedNanosAndOffset) {
  absl::Time t = absl::FromUnixSeconds(1475713029) + absl::Nanoseconds(669794200);
  EXPECT_EQ(FormatLogTimestamp(t, 0), "2016-10-06T00:17:09.669794200Z");
  EXPECT_EQ(FormatLogTimestamp(absl::FromUnixSeconds(1475713029), -3600),
            "2016-10-05T23:17:09.000000000-01:00");
}

// Found by fuzz/cri_log_fuzzer.cc: a record dated before year 1000 came out with a three-digit
// year, which neither Go's RFC3339NanoFixed writes nor ParseCriLogLine reads back.
TEST(FormatLogTimestampTest, YearsBelowOneThousandHaveFourDigits) {
  LogMessage m;
  ASSERT_TRUE(ParseCriLogLine("0859-10-06T00:17:12+01:00 stdout F x\n", &m).ok());
  const std::string ts = FormatLogTimestamp(m.timestamp, m.utc_offset_seconds);
  EXPECT_EQ(ts, "0859-10-06T00:17:12.000000000+01:00");
  LogMessage again;
  ASSERT_TRUE(ParseCriLogLine(ts + " stdout F x\n", &again).ok());
  EXPECT_EQ(again.timestamp, m.timestamp);
  ASSERT_TRUE(ParseCriLogLine("0000-01-01T00:00:00Z stdout F x\n", &m).ok());
  EXPECT_EQ(FormatLogTimestamp(m.timestamp, 0), "0000-01-01T00:00:00.000000000Z");
}

TEST(NewReadOptionsTest, SinceIsTheLaterOfBoth) {
  absl::Time now = absl::FromUnixSeconds(1000);
  LogOptions o;
  ReadOptions r = NewReadOptions(o, now);
  EXPECT_EQ(r.tail, -1);
  EXPECT_EQ(r.bytes, -1);
  EXPECT_EQ(r.since, absl::InfinitePast());
  o.since_seconds = 10;
  o.since_time = absl::FromUnixSeconds(500);
  EXPECT_EQ(NewReadOptions(o, now).since, absl::FromUnixSeconds(990));
  o.since_time = absl::FromUnixSeconds(995);
  o.tail_lines = 3;
  o.limit_bytes = 7;
  r = NewReadOptions(o, now);
  EXPECT_EQ(r.since, absl::FromUnixSeconds(995));
  EXPECT_EQ(r.tail, 3);
  EXPECT_EQ(r.bytes, 7);
}

TEST(FindTailLineStartIndexTest, CountsCompleteLines) {
  TempDir dir;
  const std::string p = dir.path() + "/f";
  std::string content;
  for (int i = 0; i < 500; ++i) content += absl::StrCat("line number ", i, "\n");
  content += "incomplete";
  WriteFile(p, content);
  int fd = ::open(p.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(*FindTailLineStartIndex(fd, -1), 0);
  EXPECT_EQ(*FindTailLineStartIndex(fd, 0), content.size() - 10);
  int64_t two = *FindTailLineStartIndex(fd, 2);
  EXPECT_EQ(content.substr(two), "line number 498\nline number 499\nincomplete");
  EXPECT_EQ(*FindTailLineStartIndex(fd, 500), 0);
  EXPECT_EQ(*FindTailLineStartIndex(fd, 10000), 0);
  int64_t i = *FindTailLineStartIndex(fd, 499);
  EXPECT_EQ(content.substr(i, 14), "line number 1\n");
  ::close(fd);
}

class ReadLogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path() + "/0.log";
    WriteFile(path_, kSample);
  }
  TempDir dir_;
  std::string path_;
};

TEST_F(ReadLogsTest, AllContentBothStreamsPartialJoined) {
  EXPECT_EQ(*Read(path_, {}), "line one\nline two\npartial done\nline four\n");
}

TEST_F(ReadLogsTest, TimestampsPrefixOnlyNewLines) {
  ReadOptions o;
  o.timestamps = true;
  EXPECT_EQ(*Read(path_, o),
            "2016-10-06T00:17:09.669794202Z line one\n"
            "2016-10-06T00:17:10.113242941Z line two\n"
            "2016-10-06T00:17:11.000000000Z partial done\n"
            "2016-10-06T00:17:12.000000000Z line four\n");
}

TEST_F(ReadLogsTest, TailCountsRecordsOfTheFile) {
  ReadOptions o;
  o.tail = 1;
  EXPECT_EQ(*Read(path_, o), "line four\n");
  o.tail = 2;
  // As upstream, a partial record is a line of the file.
  EXPECT_EQ(*Read(path_, o), " done\nline four\n");
  o.tail = 0;
  EXPECT_EQ(*Read(path_, o), "");
  o.tail = 100;
  EXPECT_EQ(*Read(path_, o), "line one\nline two\npartial done\nline four\n");
}

TEST_F(ReadLogsTest, SinceSkipsOlderRecords) {
  ReadOptions o;
  o.since = absl::FromUnixSeconds(1475713030);  // 00:17:10
  EXPECT_EQ(*Read(path_, o), "line two\npartial done\nline four\n");
  o.since = absl::FromUnixSeconds(1475713031) + absl::Milliseconds(150);
  EXPECT_EQ(*Read(path_, o), " done\nline four\n");
}

TEST_F(ReadLogsTest, LimitBytesCutsOutput) {
  ReadOptions o;
  o.bytes = 12;
  EXPECT_EQ(*Read(path_, o), "line one\nlin");
  o.bytes = 9;
  EXPECT_EQ(*Read(path_, o), "line one\n");
  o.timestamps = true;
  o.bytes = 35;
  EXPECT_EQ(*Read(path_, o), "2016-10-06T00:17:09.669794202Z line");
}

TEST_F(ReadLogsTest, SinkFalseStops) {
  int calls = 0;
  absl::Status st = ReadLogs(path_, "c", {}, {}, [&](std::string_view) {
    ++calls;
    return false;
  });
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_EQ(calls, 1);
}

TEST_F(ReadLogsTest, BadLinesSkippedIncompleteLastLineKept) {
  WriteFile(path_,
            "not a log line\n"
            "2016-10-06T00:17:09Z stdout F good\n"
            "2016-10-06T00:17:10Z stdout F no newline");
  EXPECT_EQ(*Read(path_, {}), "good\nno newline");
}

TEST_F(ReadLogsTest, TruncatedAndBinaryLinesAreSkipped) {
  constexpr char kBad[] =
      "2016-10-06T00:17:09Z\n"               // no stream
      "2016-10-0\n"                          // cut timestamp
      "2016-10-06T00:17:09Z stdfoo F bad\n"  // unknown stream
      "2016-10-06T00:17:09Z stdout\n"        // no tag
      "2016-10-06T00:17:09Z stdout F\n"      // tag without content
      "\xff\xfe\x00\x01 \x80 \x7f \n"        // binary noise
      "2016-10-06T00:17:09Z stdout F good\n";
  WriteFile(path_, std::string(kBad, sizeof(kBad) - 1));
  EXPECT_EQ(*Read(path_, {}), "good\n");
}

TEST_F(ReadLogsTest, OverlongLinesAreSkippedWithoutBufferingThemWhole) {
  const std::string huge(3 * kMaxLogLineBytes + 17, 'x');
  WriteFile(path_, "2016-10-06T00:17:09Z stdout F before\n" + huge + "\n" +
                       "2016-10-06T00:17:10Z stdout F " + huge + "\n" +
                       "2016-10-06T00:17:11Z stdout F after\n" + huge);  // and no newline at EOF
  EXPECT_EQ(*Read(path_, {}), "before\nafter\n");
  ReadOptions o;
  o.tail = 2;
  EXPECT_EQ(*Read(path_, o), "after\n");
}

TEST_F(ReadLogsTest, MissingFile) {
  auto r = Read(dir_.path() + "/nope.log", {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(r.status().message()),
              ::testing::HasSubstr("failed to try resolving symlinks in path"));
}

TEST_F(ReadLogsTest, FollowsSymlinks) {
  std::filesystem::create_symlink(path_, dir_.path() + "/link.log");
  EXPECT_EQ(*Read(dir_.path() + "/link.log", {}), "line one\nline two\npartial done\nline four\n");
}

// Following needs a container in the runtime.
class FollowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    v1::PodSandboxConfig sc;
    sc.mutable_metadata()->set_name("p");
    sc.mutable_metadata()->set_namespace_("default");
    sc.mutable_metadata()->set_uid("u");
    sc.set_log_directory(dir_.path());
    auto sb = fake_.RunPodSandbox(sc, "");
    ASSERT_TRUE(sb.ok());
    v1::ContainerConfig cc;
    cc.mutable_metadata()->set_name("c");
    cc.mutable_image()->set_image("busybox");
    cc.set_log_path("0.log");
    auto id = fake_.CreateContainer(*sb, cc, sc);
    ASSERT_TRUE(id.ok());
    id_ = *id;
    ASSERT_TRUE(fake_.StartContainer(id_).ok());
    path_ = dir_.path() + "/0.log";
    WriteFile(path_, "2016-10-06T00:17:09Z stdout F one\n");
    follow_.runtime = &fake_;
    follow_.force_check_period = absl::Milliseconds(50);
  }

  static std::string Line(const std::string& s) {
    return absl::StrCat("2016-10-06T00:17:09Z stdout F ", s, "\n");
  }

  TempDir dir_;
  cri::FakeRuntime fake_;
  std::string id_, path_;
  FollowOptions follow_;
};

TEST_F(FollowTest, AppendRotateAndStopWhenContainerExits) {
  Collector got;
  ReadOptions o;
  o.follow = true;
  absl::Status result;
  absl::Notification done;
  std::thread reader([&] {
    result = ReadLogs(path_, id_, o, follow_, got.Sink());
    done.Notify();
  });
  ASSERT_TRUE(got.WaitFor("one\n", absl::Seconds(10)));
  WriteFile(path_, Line("two"), /*append=*/true);
  // A partial record followed later by its end.
  WriteFile(path_, "2016-10-06T00:17:09Z stdout P hal", true);
  ASSERT_TRUE(got.WaitFor("two\n", absl::Seconds(10)));
  WriteFile(path_, "\n2016-10-06T00:17:09Z stdout F ves\n", true);
  ASSERT_TRUE(got.WaitFor("halves\n", absl::Seconds(10)));
  // Rotation: the file is renamed away (a last line still lands in it), a new one appears.
  std::filesystem::rename(path_, path_ + ".20240101-000000");
  WriteFile(path_ + ".20240101-000000", Line("three"), true);
  WriteFile(path_, Line("four"));
  ASSERT_TRUE(got.WaitFor("four\n", absl::Seconds(10))) << got.Get();
  WriteFile(path_, Line("five"), true);
  ASSERT_TRUE(got.WaitFor("five\n", absl::Seconds(10)));
  EXPECT_FALSE(done.HasBeenNotified());
  // The container stops after a last line: it is read, then ReadLogs returns.
  WriteFile(path_, Line("six"), true);
  ASSERT_TRUE(fake_.SetContainerExited(id_, 0).ok());
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  reader.join();
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_EQ(got.Get(), "one\ntwo\nhalves\nthree\nfour\nfive\nsix\n");
}

TEST_F(FollowTest, TailThenFollowNotLimited) {
  WriteFile(path_, Line("a") + Line("b") + Line("c"));
  Collector got;
  ReadOptions o;
  o.follow = true;
  o.tail = 1;
  absl::Notification done;
  std::thread reader([&] {
    EXPECT_TRUE(ReadLogs(path_, id_, o, follow_, got.Sink()).ok());
    done.Notify();
  });
  ASSERT_TRUE(got.WaitFor("c\n", absl::Seconds(10)));
  WriteFile(path_, Line("d"), true);
  ASSERT_TRUE(got.WaitFor("d\n", absl::Seconds(10)));
  ASSERT_TRUE(fake_.SetContainerExited(id_, 1).ok());
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  reader.join();
  EXPECT_EQ(got.Get(), "c\nd\n");
}

TEST_F(FollowTest, StopFdEndsFollow) {
  int efd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  follow_.stop_fd = efd;
  follow_.force_check_period = absl::Seconds(30);  // the stop fd must wake the reader
  Collector got;
  ReadOptions o;
  o.follow = true;
  absl::Notification done;
  std::thread reader([&] {
    EXPECT_TRUE(ReadLogs(path_, id_, o, follow_, got.Sink()).ok());
    done.Notify();
  });
  ASSERT_TRUE(got.WaitFor("one\n", absl::Seconds(10)));
  uint64_t one = 1;
  ASSERT_EQ(::write(efd, &one, sizeof(one)), 8);
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  reader.join();
  ::close(efd);
}

TEST_F(FollowTest, SinkFalseEndsFollow) {
  ReadOptions o;
  o.follow = true;
  std::atomic<int> calls = 0;
  absl::Notification done;
  std::thread reader([&] {
    EXPECT_TRUE(
        ReadLogs(path_, id_, o, follow_, [&](std::string_view d) { return ++calls < 2; }).ok());
    done.Notify();
  });
  WriteFile(path_, Line("two"), true);
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  reader.join();
  EXPECT_EQ(calls.load(), 2);
}

TEST_F(FollowTest, ExitedContainerReadsToEndAndReturns) {
  ASSERT_TRUE(fake_.SetContainerExited(id_, 0).ok());
  WriteFile(path_, Line("two"), true);
  Collector got;
  ReadOptions o;
  o.follow = true;
  EXPECT_TRUE(ReadLogs(path_, id_, o, follow_, got.Sink()).ok());
  EXPECT_EQ(got.Get(), "one\ntwo\n");
}

TEST_F(FollowTest, StatusErrorEndsFollow) {
  fake_.SetPersistentError("ContainerStatus", absl::NotFoundError("ContainerStatus: gone"));
  ReadOptions o;
  o.follow = true;
  Collector got;
  absl::Status st = ReadLogs(path_, id_, o, follow_, got.Sink());
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(got.Get(), "one\n");
}

}  // namespace
}  // namespace kubelet::logs
