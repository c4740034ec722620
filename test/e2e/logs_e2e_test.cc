// End-to-end: container logs on the harness's real containerd. The kubelet binary runs static
// pods and rotates their logs; the test reads them with the logs library itself (linked in,
// talking CRI to the same containerd), as the kubelet's /containerLogs handler does.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "kubelet/logs/container_log_manager_impl.h"
#include "kubelet/logs/testing/files.h"
#include "test/e2e/static_pod_fixture.h"

namespace kubelet::e2e {
namespace {

using logs::testing::Gunzip;

// The numbers N of the "seq-N " lines in `text`, in order.
std::vector<int64_t> Seq(const std::string& text) {
  std::vector<int64_t> out;
  static const std::regex re("seq-([0-9]+) ");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    int64_t n;
    if (absl::SimpleAtoi((*it)[1].str(), &n)) out.push_back(n);
  }
  return out;
}

::testing::AssertionResult Consecutive(const std::vector<int64_t>& v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] != v[i - 1] + 1) {
      return ::testing::AssertionFailure() << "gap after seq-" << v[i - 1] << ": next is seq-"
                                           << v[i] << " (index " << i << " of " << v.size() << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

class LogsTest : public StaticPodTest {
 protected:
  LogsTest() { verbosity_ = 4; }

  std::string ExtraConfig() override { return log_config_; }

  void TearDown() override {
    if (manager_) manager_->Stop();
    StaticPodTest::TearDown();
    // Keep the kubelet's log of a failed test for inspection.
    std::error_code ec;
    if (!dir_.empty() && !HasFailure()) std::filesystem::remove_all(dir_, ec);
  }

  // Starts the kubelet with `extra_config` (KubeletConfiguration lines) and the test's own log
  // reader, on the same runtime.
  void StartKubelet(const std::string& extra_config = "") {
    log_config_ = extra_config;
    StaticPodTest::StartKubelet();
    if (HasFatalFailure()) return;
    auto m = logs::NewContainerLogManager(*cri_, clock_, logs::ContainerLogManagerOptions{});
    ASSERT_TRUE(m.ok()) << m.status();
    manager_ = std::move(*m);
  }

  std::optional<Container> RunningAttempt(const std::string& base, uint32_t attempt) {
    for (const auto& c : Running(base)) {
      if (c.metadata().attempt() == attempt) return c;
    }
    return std::nullopt;
  }

  // Each container's attempt, state and log file (whether it exists), for failure messages.
  std::string Listing(const std::string& base) {
    std::string out;
    for (const auto& c : Containers(base)) {
      std::string path = Status(c.id()).log_path();
      absl::StrAppend(&out, "attempt ", c.metadata().attempt(), " state ", c.state(), " log ", path,
                      std::filesystem::exists(path) ? " (exists)" : " (missing)", "\n");
    }
    return out;
  }

  absl::StatusOr<std::string> Logs(const std::string& base, const logs::LogOptions& o) {
    std::string out;
    absl::Status st =
        manager_->GetContainerLogs("default", PodName(base), "main", o, [&](std::string_view d) {
          out.append(d.data(), d.size());
          return true;
        });
    if (!st.ok()) return st;
    return out;
  }

  std::string log_config_;
  RealClock clock_;
  std::unique_ptr<logs::ContainerLogManagerImpl> manager_;
};

TEST_F(LogsTest, TailTimestampsFollowAndPrevious) {
  StartKubelet();
  // Each run prints its own id, a stderr line, numbered lines, then lives a few seconds and
  // fails, so the kubelet restarts it.
  WriteManifest(
      "talker.yaml",
      BusyboxPod("talker",
                 "\"echo run-$(cat /proc/sys/kernel/random/uuid); sleep 1; echo to-stderr >&2; "
                 "sleep 1; for i in 1 2 3 4 5; do echo line-$i; done; sleep 6; "
                 "echo bye; exit 1\""));
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto r = Logs("talker", {});
        return r.ok() && r->find("line-5\n") != std::string::npos;
      },
      absl::Seconds(90)))
      << kubelet_->Log();

  auto all = Logs("talker", {});
  ASSERT_TRUE(all.ok()) << all.status();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(*all, m, std::regex("run-([0-9a-f-]+)\n"))) << *all;
  const std::string first_run = m[1].str();
  EXPECT_NE(all->find("to-stderr\n"), std::string::npos) << *all;
  EXPECT_NE(all->find("line-1\nline-2\nline-3\nline-4\nline-5\n"), std::string::npos) << *all;

  logs::LogOptions tail;
  tail.tail_lines = 2;
  EXPECT_EQ(*Logs("talker", tail), "line-4\nline-5\n");

  logs::LogOptions ts;
  ts.timestamps = true;
  ts.tail_lines = 1;
  auto stamped = Logs("talker", ts);
  ASSERT_TRUE(stamped.ok());
  EXPECT_TRUE(std::regex_match(
      *stamped, std::regex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{9}"
                           "(Z|[+-][0-9]{2}:[0-9]{2}) line-5\n")))
      << *stamped;

  logs::LogOptions future;
  future.since_time = absl::Now() + absl::Hours(1);
  EXPECT_EQ(*Logs("talker", future), "");
  logs::LogOptions limit;
  limit.limit_bytes = 6;
  limit.tail_lines = 1;
  EXPECT_EQ(*Logs("talker", limit), "line-5");

  logs::LogOptions prev;
  prev.previous = true;
  auto none = Logs("talker", prev);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(none.status().message(), "previous terminated container \"main\" in pod \"" +
                                         PodName("talker") + "\" not found");

  // Following the running container ends by itself once it has exited, with its last line.
  logs::LogOptions follow;
  follow.follow = true;
  auto followed = Logs("talker", follow);
  ASSERT_TRUE(followed.ok()) << followed.status();
  EXPECT_NE(followed->find("line-5\nbye\n"), std::string::npos) << *followed;

  // The kubelet restarts it (after its back-off); then `previous` is the first run.
  ASSERT_TRUE(WaitUntil([&] { return RunningAttempt("talker", 1).has_value(); }, absl::Seconds(90)))
      << kubelet_->Log();
  auto before = Logs("talker", prev);
  ASSERT_TRUE(before.ok()) << before.status() << "\n" << Listing("talker");
  EXPECT_NE(before->find("run-" + first_run + "\n"), std::string::npos) << *before;
  EXPECT_NE(before->find("bye\n"), std::string::npos) << *before;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto r = Logs("talker", {});
        return r.ok() && r->find("run-") != std::string::npos;
      },
      absl::Seconds(30)));
  auto current = Logs("talker", {});
  ASSERT_TRUE(current.ok());
  EXPECT_NE(current->find("run-"), std::string::npos) << *current;
  EXPECT_EQ(current->find(first_run), std::string::npos) << *current;

  auto unknown = manager_->GetContainerLogs("default", PodName("talker"), "nope", {},
                                            [](std::string_view) { return true; });
  EXPECT_EQ(unknown.message(),
            "container \"nope\" in pod \"" + PodName("talker") + "\" is not available");
}

TEST_F(LogsTest, RotationKeepsMaxFilesWhileFollowing) {
  StartKubelet("containerLogMaxSize: 1Ki\ncontainerLogMaxFiles: 3\n");
  WriteManifest("chatty.yaml",
                BusyboxPod("chatty",
                           "\"trap 'exit 0' TERM; i=0; while true; do echo seq-$i "
                           "padding-padding-padding-padding-padding-padding; i=$((i+1)); "
                           "usleep 20000; done\""));
  std::optional<Container> c;
  ASSERT_TRUE(WaitUntil(
      [&] {
        c = RunningAttempt("chatty", 0);
        return c.has_value();
      },
      absl::Seconds(90)))
      << kubelet_->Log();
  auto st = cri_->ContainerStatus(c->id(), false);
  ASSERT_TRUE(st.ok()) << st.status();
  const std::string log_path = st->status().log_path();
  const std::string log_dir = std::filesystem::path(log_path).parent_path().string();
  ASSERT_TRUE(WaitUntil([&] { return std::filesystem::exists(log_path); }, absl::Seconds(30)));

  // A follower across the rotations.
  absl::Mutex mu;
  std::string followed;
  absl::Status follow_status;
  absl::Notification follow_done;
  std::thread follower([&] {
    logs::LogOptions o;
    o.follow = true;
    follow_status = manager_->GetContainerLogs("default", PodName("chatty"), "main", o,
                                               [&](std::string_view d) {
                                                 absl::MutexLock lock(&mu);
                                                 followed.append(d.data(), d.size());
                                                 return true;
                                               });
    follow_done.Notify();
  });

  // Watch the directory through at least three rotations (the kubelet checks every 10s).
  size_t max_seen = 0;
  std::set<std::string> rotated_seen;  // names
  std::set<std::string> rotations;     // names without .gz: one per rotation
  auto scan = [&] {
    size_t n = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(log_dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.ends_with(".tmp")) continue;  // a compression in progress
      ++n;
      if (name != "0.log") {
        rotated_seen.insert(name);
        rotations.insert(name.substr(0, name.find(".gz")));
      }
    }
    max_seen = std::max(max_seen, n);
  };
  bool rotated_thrice = WaitUntil(
      [&] {
        scan();
        return rotations.size() >= 3;
      },
      absl::Seconds(120), absl::Milliseconds(100));
  ASSERT_TRUE(rotated_thrice) << kubelet_->Log();
  EXPECT_LE(max_seen, 3u);
  // Names as upstream: <log>.<YYYYMMDD-hhmmss>, older ones gzip-compressed.
  size_t gz = 0;
  for (const std::string& name : rotated_seen) {
    EXPECT_TRUE(std::regex_match(name, std::regex("0\\.log\\.[0-9]{8}-[0-9]{6}(\\.gz)?"))) << name;
    if (name.ends_with(".gz")) ++gz;
  }
  EXPECT_GE(gz, 1u);
  // The oldest rotation is gone: at most containerLogMaxFiles - 1 rotated files remain.
  EXPECT_FALSE(std::filesystem::exists(log_dir + "/" + *rotations.begin()));
  EXPECT_FALSE(std::filesystem::exists(log_dir + "/" + *rotations.begin() + ".gz"));

  // The current file keeps growing after a rotation.
  auto size = [&] {
    std::error_code ec;
    auto s = std::filesystem::file_size(log_path, ec);
    return ec ? 0 : s;
  };
  const auto s1 = size();
  ASSERT_TRUE(WaitUntil([&] { return size() > s1; }, absl::Seconds(10)));

  // What is on disk, oldest first, is one unbroken sequence.
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(log_dir)) {
    const std::string name = e.path().string();
    if (!name.ends_with(".tmp") && name != log_path) files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  std::string disk;
  for (const std::string& f : files) disk += f.ends_with(".gz") ? Gunzip(f) : ReadFile(f);
  disk += ReadFile(log_path);
  auto disk_seq = Seq(disk);
  ASSERT_FALSE(disk_seq.empty());
  EXPECT_TRUE(Consecutive(disk_seq));

  // Stop the pod: the follower ends by itself, having seen every line across the rotations.
  std::filesystem::remove(manifests_ + "/chatty.yaml");
  ASSERT_TRUE(follow_done.WaitForNotificationWithTimeout(absl::Seconds(90)));
  follower.join();
  EXPECT_TRUE(follow_status.ok()) << follow_status;
  absl::MutexLock lock(&mu);
  auto seq = Seq(followed);
  ASSERT_FALSE(seq.empty());
  EXPECT_EQ(seq.front(), 0);
  EXPECT_TRUE(Consecutive(seq));
  EXPECT_GT(seq.back(), disk_seq.front()) << "the follower read past the first rotation";
}

}  // namespace
}  // namespace kubelet::e2e
