// The sd-bus Logind against a logind stand-in on a private dbus-daemon (skipped, naming the
// Debian package, when dbus-daemon is not installed): the delay read and raised through the
// drop-in and KillUnit, the lock in ListInhibitors and gone once released, PrepareForShutdown
// from the stand-in and from dbus-send, malformed signals skipped, Interrupt, the bus going away;
// then the whole manager on that bus. Also the drop-in's text and the errors without a bus.
#include "kubelet/nodeshutdown/dbus_logind.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/testing/pod_builder.h"
#include "common/clock.h"
#include "common/testing/eventually.h"
#include "kubelet/nodeshutdown/nodeshutdown_manager.h"
#include "kubelet/nodeshutdown/testing/logind_stand_in.h"
#include "kubelet/nodeshutdown/testing/private_bus.h"

namespace kubelet::nodeshutdown {
namespace {

using ::kubelet::testing::Eventually;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::StartsWith;

std::string TempDir() {
  char tmpl[] = "/tmp/nodeshutdown_bus.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return "";
  return tmpl;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool HaveDBusSend() {
  return access("/usr/bin/dbus-send", X_OK) == 0 || access("/bin/dbus-send", X_OK) == 0;
}

// Runs dbus-send against the private bus as upstream's node e2e emits the signal.
int DBusSend(const std::string& address, const std::string& argument) {
  std::string cmd = absl::StrCat("DBUS_SYSTEM_BUS_ADDRESS='", address,
                                 "' dbus-send --system --type=signal /org/freedesktop/login1 "
                                 "org.freedesktop.login1.Manager.PrepareForShutdown ",
                                 argument);
  return std::system(cmd.c_str());
}

TEST(WriteInhibitDelayOverrideTest, WritesUpstreamsDropIn) {
  const std::string dir = TempDir();
  const std::string conf = dir + "/logind.conf.d/";
  ASSERT_TRUE(WriteInhibitDelayOverride(conf, absl::Seconds(45)).ok());
  EXPECT_EQ(ReadFile(conf + "99-kubelet.conf"),
            "# Kubelet logind override\n[Login]\nInhibitDelayMaxSec=45\n");
  ASSERT_TRUE(WriteInhibitDelayOverride(conf, absl::Milliseconds(30400)).ok());
  EXPECT_THAT(ReadFile(conf + "99-kubelet.conf"), HasSubstr("InhibitDelayMaxSec=30\n"));

  // A directory that cannot be made.
  std::ofstream(dir + "/file") << "x";
  absl::Status st = WriteInhibitDelayOverride(dir + "/file/sub/", absl::Seconds(1));
  EXPECT_THAT(std::string(st.message()),
              StartsWith(absl::StrCat("failed creating ", dir, "/file/sub/ directory: ")));
  std::filesystem::remove_all(dir);
}

TEST(DBusLogindTest, NoBusIsGodbussError) {
  DBusLogindOptions o;
  o.bus_address = "unix:path=/nonexistent/kubelet-test/bus";
  absl::StatusOr<std::unique_ptr<Logind>> l = NewDBusLogind(o);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().message(),
            "dial unix /nonexistent/kubelet-test/bus: connect: no such file or directory");
}

TEST(ReadInhibitDelayMaxSecTest, DropInsInNameOrder) {
  const std::string dir = TempDir();
  EXPECT_EQ(testing::ReadInhibitDelayMaxSec(dir, absl::Seconds(5)), absl::Seconds(5));
  std::ofstream(dir + "/10-a.conf") << "[Login]\nInhibitDelayMaxSec=1min 30s\n";
  EXPECT_EQ(testing::ReadInhibitDelayMaxSec(dir, absl::Seconds(5)), absl::Seconds(90));
  std::ofstream(dir + "/99-kubelet.conf") << "# c\n[Login]\nInhibitDelayMaxSec=45\n";
  std::ofstream(dir + "/50-other.conf") << "[Other]\nInhibitDelayMaxSec=7\n";
  std::ofstream(dir + "/ignored.txt") << "[Login]\nInhibitDelayMaxSec=8\n";
  EXPECT_EQ(testing::ReadInhibitDelayMaxSec(dir, absl::Seconds(5)), absl::Seconds(45));
  std::filesystem::remove_all(dir);
}

class BusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::FindDBusDaemon().empty()) {
      GTEST_SKIP() << "SKIPPED: dbus-daemon not found (Debian package dbus-daemon)";
    }
    dir_ = TempDir();
    conf_ = dir_ + "/logind.conf.d/";
    absl::StatusOr<std::unique_ptr<testing::PrivateBus>> bus = testing::PrivateBus::Start(dir_);
    ASSERT_TRUE(bus.ok()) << bus.status();
    bus_ = *std::move(bus);
    testing::LogindStandInOptions so;
    so.bus_address = bus_->address();
    so.inhibit_delay_max = absl::Seconds(5);
    so.config_directory = conf_;
    absl::StatusOr<std::unique_ptr<testing::LogindStandIn>> logind =
        testing::LogindStandIn::Start(so);
    ASSERT_TRUE(logind.ok()) << logind.status();
    logind_ = *std::move(logind);
  }
  void TearDown() override {
    logind_.reset();
    bus_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  DBusLogindOptions ClientOptions() const {
    DBusLogindOptions o;
    o.bus_address = bus_->address();
    o.config_directory = conf_;
    return o;
  }

  // ListInhibitors over the bus, as `systemd-inhibit --list` asks: the "who" of each.
  std::vector<std::string> ListInhibitorsWho() {
    std::vector<std::string> out;
    sd_bus* bus = nullptr;
    if (sd_bus_new(&bus) < 0) return out;
    sd_bus_set_address(bus, bus_->address().c_str());
    sd_bus_set_bus_client(bus, 1);
    sd_bus_message* reply = nullptr;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    if (sd_bus_start(bus) >= 0 &&
        sd_bus_call_method(bus, "org.freedesktop.login1", "/org/freedesktop/login1",
                           "org.freedesktop.login1.Manager", "ListInhibitors", &error, &reply,
                           "") >= 0) {
      sd_bus_message_enter_container(reply, 'a', "(ssssuu)");
      const char *what, *who, *why, *mode;
      uint32_t uid, pid;
      while (sd_bus_message_read(reply, "(ssssuu)", &what, &who, &why, &mode, &uid, &pid) > 0) {
        out.push_back(absl::StrCat(who, " ", what, " ", mode, " ", why));
      }
    }
    sd_bus_error_free(&error);
    sd_bus_message_unref(reply);
    sd_bus_flush_close_unref(bus);
    return out;
  }

  std::string dir_;
  std::string conf_;
  std::unique_ptr<testing::PrivateBus> bus_;
  std::unique_ptr<testing::LogindStandIn> logind_;
};

TEST_F(BusTest, DelayLockAndShutdownSignals) {
  absl::StatusOr<std::unique_ptr<Logind>> conn = NewDBusLogind(ClientOptions());
  ASSERT_TRUE(conn.ok()) << conn.status();
  Logind& l = **conn;

  absl::StatusOr<absl::Duration> delay = l.CurrentInhibitDelay();
  ASSERT_TRUE(delay.ok()) << delay.status();
  EXPECT_EQ(*delay, absl::Seconds(5));
  ASSERT_TRUE(l.OverrideInhibitDelay(absl::Seconds(30)).ok());
  ASSERT_TRUE(l.ReloadLogindConf().ok());
  EXPECT_EQ(logind_->Reloads(), 1);
  EXPECT_EQ(*l.CurrentInhibitDelay(), absl::Seconds(30));

  absl::StatusOr<InhibitLock> lock = l.InhibitShutdown();
  ASSERT_TRUE(lock.ok()) << lock.status();
  std::vector<testing::Inhibitor> held = logind_->Inhibitors();
  ASSERT_THAT(held, SizeIs(1));
  EXPECT_EQ(held[0].what, "shutdown");
  EXPECT_EQ(held[0].who, "kubelet");
  EXPECT_EQ(held[0].why, "Kubelet needs time to handle node shutdown");
  EXPECT_EQ(held[0].mode, "delay");
  EXPECT_EQ(held[0].pid, static_cast<uint32_t>(getpid()));
  EXPECT_THAT(ListInhibitorsWho(),
              ::testing::ElementsAre("kubelet shutdown delay Kubelet needs time to handle node "
                                     "shutdown"));

  ASSERT_TRUE(l.MonitorShutdown().ok());
  ASSERT_TRUE(logind_->EmitPrepareForShutdown(true).ok());
  absl::StatusOr<std::optional<bool>> event = l.WaitForShutdownEvent();
  ASSERT_TRUE(event.ok()) << event.status();
  EXPECT_EQ(*event, std::optional<bool>(true));

  if (HaveDBusSend()) {
    // From another sender, as upstream's node e2e sends it; a malformed one is skipped.
    ASSERT_EQ(DBusSend(bus_->address(), "string:oops"), 0);
    ASSERT_EQ(DBusSend(bus_->address(), "boolean:false"), 0);
    event = l.WaitForShutdownEvent();
    ASSERT_TRUE(event.ok()) << event.status();
    EXPECT_EQ(*event, std::optional<bool>(false));
  }

  ASSERT_TRUE(l.ReleaseInhibitLock(*lock).ok());
  EXPECT_TRUE(Eventually([&] { return logind_->Inhibitors().empty(); }));
  EXPECT_THAT(ListInhibitorsWho(), IsEmpty());

  l.Interrupt();
  event = l.WaitForShutdownEvent();
  ASSERT_TRUE(event.ok());
  EXPECT_FALSE(event->has_value());

  // The bus goes away: the wait ends with an error.
  logind_.reset();
  bus_.reset();
  event = l.WaitForShutdownEvent();
  EXPECT_FALSE(event.ok());
}

TEST_F(BusTest, KillUnitOfAnotherUnitFails) {
  // ReloadLogindConf names systemd-logind.service; the stand-in refuses other units, and a bus
  // without systemd's name fails as the call does on a machine without systemd.
  testing::LogindStandInOptions so;
  logind_.reset();
  so.bus_address = bus_->address();
  so.serve_systemd = false;
  absl::StatusOr<std::unique_ptr<testing::LogindStandIn>> no_systemd =
      testing::LogindStandIn::Start(so);
  ASSERT_TRUE(no_systemd.ok()) << no_systemd.status();
  absl::StatusOr<std::unique_ptr<Logind>> conn = NewDBusLogind(ClientOptions());
  ASSERT_TRUE(conn.ok());
  absl::Status st = (*conn)->ReloadLogindConf();
  EXPECT_THAT(std::string(st.message()), StartsWith("unable to reload logind conf: "));
}

TEST_F(BusTest, WholeManagerOnTheBus) {
  absl::Mutex mu;
  std::vector<std::string> killed;
  ManagerOptions o;
  o.shutdown_grace_period_by_pod_priority = {GracePeriodByPriority{0, 4},
                                             GracePeriodByPriority{2000000000, 3}};
  o.state_directory = dir_;
  o.node_name = "node-1";
  o.logind = DBusLogindFactory(ClientOptions());
  o.active_pods = [] {
    api::Pod a = api::testing::PodBuilder("a");
    api::Pod b = api::testing::PodBuilder("b");
    b.spec.priority = 2000000000;
    return std::vector<api::Pod>{a, b};
  };
  o.kill_pod = [&](const api::Pod& pod, const PodTermination&) {
    absl::MutexLock lock(&mu);
    killed.push_back(pod.metadata.name);
    return absl::OkStatus();
  };
  RealClock clock;
  Manager m(std::move(o), clock);
  absl::Status st = m.Start();
  ASSERT_TRUE(st.ok()) << st;
  // The delay was raised from 5 s to the 7 s of the groups, and the lock taken.
  EXPECT_EQ(logind_->InhibitDelayMax(), absl::Seconds(7));
  EXPECT_EQ(ReadFile(conf_ + "99-kubelet.conf"),
            "# Kubelet logind override\n[Login]\nInhibitDelayMaxSec=7\n");
  EXPECT_THAT(ListInhibitorsWho(), SizeIs(1));

  ASSERT_TRUE(logind_->EmitPrepareForShutdown(true).ok());
  ASSERT_TRUE(Eventually([&] { return logind_->Inhibitors().empty(); }));
  {
    absl::MutexLock lock(&mu);
    EXPECT_THAT(killed, ::testing::ElementsAre("a", "b"));
  }
  EXPECT_FALSE(m.ShutdownStatus().ok());
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/graceful_node_shutdown_state"));

  ASSERT_TRUE(logind_->EmitPrepareForShutdown(false).ok());
  ASSERT_TRUE(Eventually([&] { return logind_->Inhibitors().size() == 1; }));
  EXPECT_TRUE(m.ShutdownStatus().ok());
  m.Stop();
  EXPECT_TRUE(Eventually([&] { return logind_->Inhibitors().empty(); }));
}

}  // namespace
}  // namespace kubelet::nodeshutdown
