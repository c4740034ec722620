#include "kubelet/pluginmanager/plugin_manager.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/testing/eventually.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/pluginmanager/registration_client.h"
#include "kubelet/pluginmanager/testing/fake_plugin.h"

namespace kubelet::pluginmanager {
namespace {

using ::kubelet::testing::Eventually;
using ::testing::ElementsAre;
using testing::FakePlugin;
using ::testing::HasSubstr;

// Records the calls; fails validation or registration when told to.
class RecordingHandler final : public PluginHandler {
 public:
  absl::Status ValidatePlugin(const std::string& name, const std::string& endpoint,
                              const std::vector<std::string>& versions) override {
    absl::MutexLock lock(&mu_);
    calls_.push_back(absl::StrCat("validate ", name, " ", endpoint, " ", versions.size()));
    return fail_validation_ ? absl::InvalidArgumentError("bad versions") : absl::OkStatus();
  }
  absl::Status RegisterPlugin(const std::string& name, const std::string& endpoint,
                              const std::vector<std::string>&) override {
    absl::MutexLock lock(&mu_);
    calls_.push_back(absl::StrCat("register ", name, " ", endpoint));
    return absl::OkStatus();
  }
  void DeRegisterPlugin(const std::string& name) override {
    absl::MutexLock lock(&mu_);
    calls_.push_back(absl::StrCat("deregister ", name));
  }
  std::vector<std::string> Calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  void FailValidation() {
    absl::MutexLock lock(&mu_);
    fail_validation_ = true;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> calls_;
  bool fail_validation_ = false;
};

class PluginManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pluginmgr-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/plugins_registry";
    client_ = NewGrpcRegistrationClient();
  }
  void TearDown() override {
    if (manager_) manager_->Stop();
    std::filesystem::remove_all(root_);
  }

  void StartManager() {
    PluginManagerOptions o;
    o.registry_dir = dir_;
    o.clock = &clock_;
    o.client = client_.get();
    manager_ = std::make_unique<PluginManager>(o);
    manager_->AddHandler(kCSIPlugin, &handler_);
    ASSERT_TRUE(manager_->Start().ok());
  }

  std::unique_ptr<FakePlugin> Serve(const std::string& file, PluginInfo info) {
    std::filesystem::create_directories(dir_);
    auto p = FakePlugin::Start(absl::StrCat(dir_, "/", file), std::move(info));
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? std::move(*p) : nullptr;
  }

  // Runs reconcile passes, 1 s of fake time apart, until `pred` holds (each pass is given a
  // moment of real time to be seen before the next).
  template <typename Pred>
  bool ReconcileUntil(Pred pred) {
    for (int i = 0; i < 300; ++i) {
      if (Eventually(pred, absl::Milliseconds(200))) return true;
      clock_.Advance(absl::Seconds(1));
    }
    return false;
  }

  std::string root_, dir_;
  FakeClock clock_;
  std::unique_ptr<RegistrationClient> client_;
  RecordingHandler handler_;
  std::unique_ptr<PluginManager> manager_;
};

PluginInfo CsiInfo(const std::string& name, const std::string& endpoint = "") {
  return PluginInfo{kCSIPlugin, name, endpoint, {"1.0.0"}};
}

TEST_F(PluginManagerTest, RegistersSocketsFoundAtStartAndCreatedLater) {
  auto early = Serve("early-reg.sock", CsiInfo("early.csi.io", "/plugins/early/csi.sock"));
  StartManager();
  ASSERT_TRUE(ReconcileUntil([&] { return early->Notified().size() == 1; }));
  EXPECT_TRUE(early->Notified()[0].registered);

  std::filesystem::create_directories(dir_ + "/nested");
  auto late = Serve("nested/late-reg.sock", CsiInfo("late.csi.io"));
  ASSERT_TRUE(ReconcileUntil([&] { return late->Notified().size() == 1; }));
  EXPECT_TRUE(late->Notified()[0].registered);

  // An empty endpoint is the registration socket itself.
  EXPECT_THAT(handler_.Calls(),
              ElementsAre("validate early.csi.io /plugins/early/csi.sock 1",
                          "register early.csi.io /plugins/early/csi.sock",
                          absl::StrCat("validate late.csi.io ", dir_, "/nested/late-reg.sock 1"),
                          absl::StrCat("register late.csi.io ", dir_, "/nested/late-reg.sock")));
  EXPECT_EQ(manager_->Plugins().size(), 2u);
}

TEST_F(PluginManagerTest, ARemovedSocketIsDeregisteredAndARecreatedOneRegisteredAgain) {
  StartManager();
  auto p = Serve("a-reg.sock", CsiInfo("a.csi.io"));
  ASSERT_TRUE(ReconcileUntil([&] { return p->Notified().size() == 1; }));
  p.reset();  // the plugin goes away with its socket
  ASSERT_TRUE(ReconcileUntil([&] { return manager_->Plugins().empty(); }));
  EXPECT_EQ(handler_.Calls().back(), "deregister a.csi.io");

  p = Serve("a-reg.sock", CsiInfo("a.csi.io"));
  ASSERT_TRUE(ReconcileUntil([&] { return p->Notified().size() == 1; }));
  EXPECT_EQ(manager_->Plugins().size(), 1u);
}

TEST_F(PluginManagerTest, UnknownTypesAndFailedValidationAreToldToThePlugin) {
  StartManager();
  auto dp = Serve("dp.sock", PluginInfo{kDevicePlugin, "vendor.com/gpu", "", {"v1beta1"}});
  ASSERT_TRUE(ReconcileUntil([&] { return !dp->Notified().empty(); }));
  EXPECT_FALSE(dp->Notified()[0].registered);
  EXPECT_THAT(dp->Notified()[0].error,
              HasSubstr("RegisterPlugin error -- no handler registered for plugin type: "
                        "DevicePlugin at socket"));

  handler_.FailValidation();
  auto bad = Serve("bad-reg.sock", CsiInfo("bad.csi.io"));
  ASSERT_TRUE(ReconcileUntil([&] { return !bad->Notified().empty(); }));
  EXPECT_FALSE(bad->Notified()[0].registered);
  EXPECT_EQ(bad->Notified()[0].error,
            "RegisterPlugin error -- plugin validation failed with err: bad versions");
  EXPECT_TRUE(manager_->Plugins().empty());
}

TEST_F(PluginManagerTest, FailedAttemptsBackOffPerSocket) {
  StartManager();
  auto dp = Serve("dp.sock", PluginInfo{kDevicePlugin, "vendor.com/gpu", "", {"v1beta1"}});
  ASSERT_TRUE(ReconcileUntil([&] { return dp->GetInfoCalls() == 1; }));
  const absl::Time first = clock_.Now();
  // Retried after 0.5 s, then 1 s, then 2 s: the fourth attempt comes 4 s (of 1 s passes) after
  // the first at the earliest; without back-off it would come after 3.
  ASSERT_TRUE(ReconcileUntil([&] { return dp->GetInfoCalls() >= 4; }));
  EXPECT_GE(clock_.Now() - first, absl::Seconds(4));
}

TEST_F(PluginManagerTest, DotFilesAndOtherFilesAreIgnored) {
  StartManager();
  auto hidden = Serve(".hidden-reg.sock", CsiInfo("hidden.csi.io"));
  std::ofstream(dir_ + "/not-a-socket") << "x";
  auto visible = Serve("v-reg.sock", CsiInfo("v.csi.io"));
  ASSERT_TRUE(ReconcileUntil([&] { return visible->Notified().size() == 1; }));
  for (int i = 0; i < 3; ++i) clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(hidden->GetInfoCalls(), 0);
  EXPECT_EQ(manager_->Plugins().size(), 1u);
}

}  // namespace
}  // namespace kubelet::pluginmanager
