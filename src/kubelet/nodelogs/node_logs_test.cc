#include "kubelet/nodelogs/node_logs.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "common/testing/eventually.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::nodelogs {
namespace {

using ::testing::ElementsAre;

// Answers `journalctl --field _SYSTEMD_UNIT` with `units` and a log run with `journal`.
class FakeRunner : public CommandRunner {
 public:
  CommandResult Run(const std::vector<std::string>& argv, absl::Time,
                    const OutputSink& out) override {
    calls.push_back(absl::StrJoin(argv, " "));
    CommandResult r;
    if (argv.size() == 3 && argv[1] == "--field") {
      if (units_fail) r.exit_code = 1;
      out(units);
      return r;
    }
    if (!start_error.empty()) {
      r.outcome = CommandResult::Outcome::kFailedToStart;
      r.error = start_error;
      return r;
    }
    for (const std::string& chunk : journal) {
      if (!out(chunk)) {
        r.outcome = CommandResult::Outcome::kKilled;
        return r;
      }
    }
    r.exit_code = exit_code;
    return r;
  }
  std::string units = "kubelet.service\ncontainerd.service\n";
  bool units_fail = false;
  std::vector<std::string> journal = {"journal line 1\n", "journal line 2\n"};
  int exit_code = 0;
  std::string start_error;
  std::vector<std::string> calls;
};

class NodeLogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/kubelet-nodelogs-XXXXXX";
    dir_ = ::mkdtemp(templ);
    options_.log_dir = dir_ + "/";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void WriteLog(const std::string& name, const std::string& body) {
    std::filesystem::create_directories(std::filesystem::path(dir_ + "/" + name).parent_path());
    std::ofstream(dir_ + "/" + name) << body;
  }
  std::string Copy(const NodeLogQuery& q) {
    std::string out;
    CopyNodeLogs(q, options_, runner_, clock_, [&out](std::string_view d) {
      out.append(d);
      return true;
    });
    return out;
  }
  std::string dir_;
  CopyOptions options_;
  FakeRunner runner_;
  FakeClock clock_;
};

TEST_F(NodeLogsTest, JournaldServicesInOneRun) {
  NodeLogQuery q;
  q.services = {"kubelet", "containerd"};
  q.options.tail_lines = 5;
  EXPECT_EQ(Copy(q), "journal line 1\njournal line 2\n");
  EXPECT_THAT(runner_.calls,
              ElementsAre("journalctl --field _SYSTEMD_UNIT", "journalctl --field _SYSTEMD_UNIT",
                          "journalctl --utc --no-pager --output=short-precise --pager-end "
                          "--lines=5 --unit=kubelet --unit=containerd"));
  // A failing run is not reported; one that cannot start is, for the current boot.
  runner_.exit_code = 1;
  runner_.journal = {"-- No entries --\n"};
  EXPECT_EQ(Copy(q), "-- No entries --\n");
  runner_.start_error = "exec: \"journalctl\": executable file not found in $PATH";
  EXPECT_EQ(Copy(q), "\nerror: journal output not available\n");
  q.options.boot = -1;
  EXPECT_EQ(Copy(q), "");
}

TEST_F(NodeLogsTest, OtherServicesFromTheirFiles) {
  WriteLog("kube-proxy.log", "proxy started\n");
  WriteLog("foo/foo.log", "foo started\n");
  WriteLog("bar", "bar started\n");
  WriteLog("bar.log", "not this one\n");
  std::filesystem::create_directories(dir_ + "/baz");  // a directory is not a log
  NodeLogQuery q;
  q.services = {"kubelet", "kube-proxy", "foo", "bar", "baz"};
  EXPECT_EQ(Copy(q),
            "journal line 1\njournal line 2\nproxy started\nfoo started\nbar started\n"
            "\nlog not found for baz\n");
  // With options, file services are not read.
  q.options.pattern = "x";
  EXPECT_EQ(Copy(q),
            "journal line 1\njournal line 2\n\noptions present and query resolved to log files "
            "for [kube-proxy foo bar baz]\ntry without specifying options\n");
  // journald unreachable: every service is looked for in files.
  runner_.units_fail = true;
  q.services = {"kube-proxy"};
  q.options = {};
  EXPECT_EQ(Copy(q), "proxy started\n");
}

TEST_F(NodeLogsTest, FileErrorsAreReportedInBand) {
  std::filesystem::create_symlink("loop", dir_ + "/loop");
  NodeLogQuery q;
  q.services = {"loop"};
  runner_.units = "";
  EXPECT_EQ(Copy(q), "\nerror getting log for loop: SecureJoin " + dir_ +
                         "//loop: too many levels of symbolic links\n");
  // Past the deadline no file is read.
  options_.timeout = absl::ZeroDuration();
  EXPECT_EQ(Copy(q), "");
}

TEST_F(NodeLogsTest, StopsWhenTheClientGoes) {
  WriteLog("a.log", "aaa");
  NodeLogQuery q;
  q.services = {"kubelet", "a"};
  int writes = 0;
  CopyNodeLogs(q, options_, runner_, clock_, [&writes](std::string_view) {
    ++writes;
    return false;
  });
  EXPECT_EQ(writes, 1);
}

TEST(ProcessRunner, StreamsCombinedOutputAndExitCode) {
  RealClock clock;
  ProcessRunner runner(clock);
  std::string out;
  CommandResult r = runner.Run({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"},
                               absl::Now() + absl::Seconds(60), [&out](std::string_view d) {
                                 out.append(d);
                                 return true;
                               });
  EXPECT_EQ(r.outcome, CommandResult::Outcome::kExited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(out.find("out\n"), std::string::npos);
  EXPECT_NE(out.find("err\n"), std::string::npos);

  r = runner.Run({"no-such-command-for-the-kubelet"}, absl::Now() + absl::Seconds(60),
                 [](std::string_view) { return true; });
  EXPECT_EQ(r.outcome, CommandResult::Outcome::kFailedToStart);
  EXPECT_EQ(r.error,
            "exec: \"no-such-command-for-the-kubelet\": executable file not found in $PATH");
}

TEST(ProcessRunner, KilledAtTheDeadlineOrWhenTheSinkRefuses) {
  FakeClock clock;
  ProcessRunner runner(clock);
  CommandResult r;
  std::thread t([&] {
    r = runner.Run({"/bin/sh", "-c", "echo started; exec sleep 600"},
                   clock.Now() + absl::Seconds(30), [](std::string_view) { return true; });
  });
  ASSERT_TRUE(testing::Eventually([&] { return clock.Waiters() > 0; }));
  clock.Advance(absl::Seconds(31));
  t.join();
  EXPECT_EQ(r.outcome, CommandResult::Outcome::kKilled);

  r = runner.Run({"/bin/sh", "-c", "while true; do echo spam; done"},
                 clock.Now() + absl::Seconds(30), [](std::string_view) { return false; });
  EXPECT_EQ(r.outcome, CommandResult::Outcome::kKilled);

  // Past the deadline nothing starts.
  r = runner.Run({"/bin/true"}, clock.Now() - absl::Seconds(1),
                 [](std::string_view) { return true; });
  EXPECT_EQ(r.outcome, CommandResult::Outcome::kFailedToStart);
  EXPECT_EQ(r.error, "context deadline exceeded");
}

}  // namespace
}  // namespace kubelet::nodelogs
