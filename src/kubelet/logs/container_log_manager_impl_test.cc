#include "kubelet/logs/container_log_manager_impl.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/clock.h"
#include "cri/testing/fake_runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/logs/testing/files.h"

namespace kubelet::logs {
namespace {

namespace v1 = ::runtime::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using testing::Gunzip;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

std::set<std::string> Files(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out.insert(e.path().filename().string());
  }
  return out;
}

std::string Line(const std::string& s) {
  return absl::StrCat("2016-10-06T00:17:09Z stdout F ", s, "\n");
}

class ContainerLogManagerTest : public ::testing::Test {
 protected:
  ContainerLogManagerTest()
      : clock_(absl::FromCivil(absl::CivilSecond(2024, 3, 4, 5, 6, 7), absl::LocalTimeZone())) {}

  void SetUp() override {
    ContainerLogManagerOptions o;
    o.max_size = "100";
    o.max_files = 3;
    o.follow_check_period = absl::Milliseconds(50);
    auto m = NewContainerLogManager(fake_, clock_, o);
    ASSERT_TRUE(m.ok()) << m.status();
    manager_ = std::move(*m);
  }

  // A sandbox of pod default/web (uid) with its log directory in the temp dir.
  std::string Sandbox(const std::string& uid = "u1") {
    sandbox_config_ = v1::PodSandboxConfig();
    sandbox_config_.mutable_metadata()->set_name("web");
    sandbox_config_.mutable_metadata()->set_namespace_("default");
    sandbox_config_.mutable_metadata()->set_uid(uid);
    pod_dir_ = dir_.path() + "/default_web_" + uid;
    sandbox_config_.set_log_directory(pod_dir_);
    (*sandbox_config_.mutable_labels())["io.kubernetes.pod.namespace"] = "default";
    (*sandbox_config_.mutable_labels())["io.kubernetes.pod.name"] = "web";
    (*sandbox_config_.mutable_labels())["io.kubernetes.pod.uid"] = uid;
    std::filesystem::create_directories(pod_dir_ + "/app");
    auto id = fake_.RunPodSandbox(sandbox_config_, "");
    EXPECT_TRUE(id.ok());
    return id.value_or("");
  }

  // Instance `attempt` of container "app", with its log file holding `content`.
  std::string Container(const std::string& sandbox, int attempt, const std::string& content,
                        bool start = true) {
    v1::ContainerConfig cc;
    cc.mutable_metadata()->set_name("app");
    cc.mutable_metadata()->set_attempt(attempt);
    cc.mutable_image()->set_image("busybox");
    cc.set_log_path(absl::StrCat("app/", attempt, ".log"));
    (*cc.mutable_labels())["io.kubernetes.pod.namespace"] = "default";
    (*cc.mutable_labels())["io.kubernetes.pod.name"] = "web";
    (*cc.mutable_labels())["io.kubernetes.pod.uid"] = sandbox_config_.metadata().uid();
    (*cc.mutable_labels())["io.kubernetes.container.name"] = "app";
    (*cc.mutable_annotations())["io.kubernetes.container.restartCount"] = absl::StrCat(attempt);
    WriteFile(absl::StrCat(pod_dir_, "/app/", attempt, ".log"), content);
    auto id = fake_.CreateContainer(sandbox, cc, sandbox_config_);
    EXPECT_TRUE(id.ok());
    if (start) EXPECT_TRUE(fake_.StartContainer(*id).ok());
    return id.value_or("");
  }

  absl::StatusOr<std::string> Logs(const LogOptions& o, const std::string& container = "app",
                                   const std::string& pod = "web") {
    std::string out;
    absl::Status st =
        manager_->GetContainerLogs("default", pod, container, o, [&](std::string_view d) {
          out.append(d.data(), d.size());
          return true;
        });
    if (!st.ok()) return st;
    return out;
  }

  TempDir dir_;
  FakeClock clock_;
  cri::FakeRuntime fake_;
  std::unique_ptr<ContainerLogManagerImpl> manager_;
  v1::PodSandboxConfig sandbox_config_;
  std::string pod_dir_;
};

TEST(NewContainerLogManagerTest, ValidatesOptions) {
  cri::FakeRuntime fake;
  FakeClock clock;
  ContainerLogManagerOptions o;
  o.max_files = 1;
  EXPECT_EQ(NewContainerLogManager(fake, clock, o).status().message(),
            "invalid MaxFiles 1, must be > 1");
  o.max_files = 5;
  o.max_size = "ten";
  EXPECT_THAT(std::string(NewContainerLogManager(fake, clock, o).status().message()),
              HasSubstr("failed to parse container log max size \"ten\""));
  o.max_size = "-1";
  auto m = NewContainerLogManager(fake, clock, o);
  ASSERT_TRUE(m.ok());
  (*m)->Start();  // rotation disabled: no thread
  (*m)->Stop();
}

TEST_F(ContainerLogManagerTest, UnknownPodAndContainer) {
  auto r = Logs({});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "pod \"web\" cannot be found - no logs available");
  Sandbox();
  r = Logs({});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "container \"app\" in pod \"web\" is not available");
}

TEST_F(ContainerLogManagerTest, CurrentAndPreviousInstances) {
  std::string sb = Sandbox();
  std::string c0 = Container(sb, 0, Line("first run"));
  EXPECT_EQ(*Logs({}), "first run\n");
  LogOptions prev;
  prev.previous = true;
  auto r = Logs(prev);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "previous terminated container \"app\" in pod \"web\" not found");

  ASSERT_TRUE(fake_.SetContainerExited(c0, 1).ok());
  EXPECT_EQ(*Logs({}), "first run\n");  // exited, not restarted yet: still the newest
  // The restart is created but not started: the terminated one is still what is shown.
  std::string c1 = Container(sb, 1, Line("second run"), /*start=*/false);
  EXPECT_EQ(*Logs({}), "first run\n");
  ASSERT_TRUE(fake_.StartContainer(c1).ok());
  EXPECT_EQ(*Logs({}), "second run\n");
  EXPECT_EQ(*Logs(prev), "first run\n");
  LogOptions ts;
  ts.timestamps = true;
  ts.tail_lines = 1;
  EXPECT_EQ(*Logs(ts), "2016-10-06T00:17:09.000000000Z second run\n");
}

TEST_F(ContainerLogManagerTest, WaitingContainer) {
  std::string sb = Sandbox();
  Container(sb, 0, "", /*start=*/false);
  auto r = Logs({});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().message(),
            "container \"app\" in pod \"web\" is waiting to start: ContainerCreating");
}

TEST_F(ContainerLogManagerTest, RecreatedPodNewestUidWins) {
  std::string old_sb = Sandbox("u1");
  std::string old_c = Container(old_sb, 3, Line("old pod"));
  ASSERT_TRUE(fake_.SetContainerExited(old_c, 0).ok());
  std::string sb = Sandbox("u2");
  Container(sb, 0, Line("new pod"));
  EXPECT_EQ(*Logs({}), "new pod\n");
}

TEST_F(ContainerLogManagerTest, FollowEndsOnStop) {
  std::string sb = Sandbox();
  Container(sb, 0, Line("hello"));
  LogOptions o;
  o.follow = true;
  absl::Notification got_data, done;
  std::thread reader([&] {
    absl::Status st = manager_->GetContainerLogs("default", "web", "app", o, [&](std::string_view) {
      if (!got_data.HasBeenNotified()) {
        got_data.Notify();
      }
      return true;
    });
    EXPECT_TRUE(st.ok()) << st;
    done.Notify();
  });
  ASSERT_TRUE(got_data.WaitForNotificationWithTimeout(absl::Seconds(10)));
  manager_->Stop();
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  reader.join();
}

TEST_F(ContainerLogManagerTest, RotationKeepsMaxFilesCompressesAndReopens) {
  std::string sb = Sandbox();
  std::string id = Container(sb, 0, std::string(50, 'x'));
  const std::string log = pod_dir_ + "/app/0.log";

  // Below max size: nothing happens.
  ASSERT_TRUE(manager_->RotateLogs().ok());
  EXPECT_THAT(Files(pod_dir_ + "/app"), ElementsAre("0.log"));
  EXPECT_EQ(fake_.CallCount("ReopenContainerLog"), 0);

  // Round 1: the log is renamed with the clock's local time and the runtime reopens it.
  WriteFile(log, std::string(100, 'a'));
  ASSERT_TRUE(manager_->RotateLogs().ok());
  EXPECT_EQ(fake_.CallCount("ReopenContainerLog"), 1);
  EXPECT_THAT(Files(pod_dir_ + "/app"), ElementsAre("0.log.20240304-050607"));
  WriteFile(log, std::string(200, 'b'));  // what the runtime's reopen does

  // Round 2: the previous rotated file is compressed.
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(manager_->RotateLogs().ok());
  EXPECT_THAT(Files(pod_dir_ + "/app"),
              ElementsAre("0.log.20240304-050607.gz", "0.log.20240304-050608"));
  EXPECT_EQ(Gunzip(pod_dir_ + "/app/0.log.20240304-050607.gz"), std::string(100, 'a'));
  WriteFile(log, std::string(300, 'c'));

  // Round 3: max_files 3 = current + 2 rotated; the oldest goes.
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(manager_->RotateLogs().ok());
  EXPECT_THAT(Files(pod_dir_ + "/app"),
              ElementsAre("0.log.20240304-050608.gz", "0.log.20240304-050609"));
  EXPECT_EQ(Gunzip(pod_dir_ + "/app/0.log.20240304-050608.gz"), std::string(200, 'b'));
  EXPECT_EQ(ReadFile(pod_dir_ + "/app/0.log.20240304-050609"), std::string(300, 'c'));
  EXPECT_EQ(fake_.CallCount("ReopenContainerLog"), 3);
  // The log path was asked for once, not every round.
  EXPECT_EQ(fake_.CallCount("ContainerStatus"), 1);
}

TEST_F(ContainerLogManagerTest, ReopenFailureRenamesBack) {
  std::string sb = Sandbox();
  std::string id = Container(sb, 0, std::string(150, 'x'));
  fake_.InjectError("ReopenContainerLog", absl::UnavailableError("ReopenContainerLog: busy"));
  absl::Status st = manager_->RotateLog(id, pod_dir_ + "/app/0.log");
  EXPECT_THAT(std::string(st.message()), HasSubstr("failed to reopen container log"));
  EXPECT_THAT(Files(pod_dir_ + "/app"), ElementsAre("0.log"));
  EXPECT_EQ(ReadFile(pod_dir_ + "/app/0.log"), std::string(150, 'x'));
  // The periodic round logs the error and carries on; the next one succeeds.
  fake_.InjectError("ReopenContainerLog", absl::UnavailableError("ReopenContainerLog: busy"));
  EXPECT_TRUE(manager_->RotateLogs().ok());
  EXPECT_THAT(Files(pod_dir_ + "/app"), ElementsAre("0.log"));
  EXPECT_TRUE(manager_->RotateLogs().ok());
  EXPECT_THAT(Files(pod_dir_ + "/app"), ElementsAre("0.log.20240304-050607"));
}

TEST_F(ContainerLogManagerTest, OnlyRunningContainersAndLeftoversCleaned) {
  std::string sb = Sandbox();
  std::string id = Container(sb, 0, std::string(150, 'x'));
  ASSERT_TRUE(fake_.SetContainerExited(id, 0).ok());
  ASSERT_TRUE(manager_->RotateLogs().ok());
  EXPECT_THAT(Files(pod_dir_ + "/app"), ElementsAre("0.log"));

  std::string id1 = Container(sb, 1, std::string(150, 'y'));
  const std::string base = pod_dir_ + "/app/1.log";
  WriteFile(base + ".20240101-000000.tmp", "partial gzip");
  WriteFile(base + ".20240101-000001", "already compressed");
  WriteFile(base + ".20240101-000001.gz", "compressed");
  ASSERT_TRUE(manager_->RotateLogs().ok());
  EXPECT_THAT(Files(pod_dir_ + "/app"),
              ElementsAre("0.log", "1.log.20240101-000001.gz", "1.log.20240304-050607"));
}

TEST_F(ContainerLogManagerTest, MissingLogIsReopened) {
  std::string sb = Sandbox();
  std::string id = Container(sb, 0, "");
  std::filesystem::remove(pod_dir_ + "/app/0.log");
  ASSERT_TRUE(manager_->RotateLogs().ok());
  EXPECT_EQ(fake_.CallCount("ReopenContainerLog"), 1);
}

TEST_F(ContainerLogManagerTest, BackgroundThreadRotates) {
  ContainerLogManagerOptions o;
  o.max_size = "10";
  o.max_files = 2;
  o.monitor_interval = absl::Milliseconds(20);
  auto m = NewContainerLogManager(fake_, clock_, o);
  ASSERT_TRUE(m.ok());
  std::string sb = Sandbox();
  Container(sb, 0, std::string(150, 'x'));
  (*m)->Start();
  absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (fake_.CallCount("ReopenContainerLog") == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  (*m)->Stop();
  EXPECT_GE(fake_.CallCount("ReopenContainerLog"), 1);
}

}  // namespace
}  // namespace kubelet::logs
