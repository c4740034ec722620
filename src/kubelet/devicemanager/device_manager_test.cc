#include "kubelet/devicemanager/device_manager.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/testing/eventually.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/devicemanager/checkpoint.h"
#include "kubelet/devicemanager/testing/fake_device_plugin.h"

namespace kubelet::devicemanager {
namespace {

using ::kubelet::testing::Eventually;
using ::testing::ElementsAre;
using testing::FakeDevice;
using testing::FakeDevicePlugin;
using testing::FakePluginOptions;
using ::testing::HasSubstr;

constexpr char kResource[] = "example.com/dev";

api::Container C(const std::string& name, int devices) {
  api::Container c;
  c.name = name;
  if (devices > 0) {
    c.resources.limits[kResource] = api::Quantity::FromValue(devices);
    c.resources.requests[kResource] = api::Quantity::FromValue(devices);
  }
  return c;
}

api::PodPtr P(const std::string& uid, std::vector<api::Container> containers,
              std::vector<api::Container> init = {}) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.uid = uid;
  p->metadata.name = "pod-" + uid;
  p->metadata.namespace_ = "default";
  p->spec.containers = std::move(containers);
  p->spec.init_containers = std::move(init);
  return p;
}

class FixedAffinity : public topologymanager::AffinityStore {
 public:
  topologymanager::TopologyHint GetAffinity(const std::string&, const std::string&) const override {
    return hint;
  }
  topologymanager::TopologyHint hint{std::nullopt, true};
};

class DeviceManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/devmgr-test-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  void TearDown() override {
    plugin_.reset();
    manager_.reset();
    std::filesystem::remove_all(dir_);
  }

  void StartManager(std::vector<int> numa = {0}) {
    DeviceManagerOptions o;
    o.plugin_dir = dir_;
    o.numa_nodes = std::move(numa);
    o.cdi_devices = true;
    manager_ = std::make_unique<DeviceManager>(o, &affinity_, clock_);
    DeviceManager::Hooks hooks;
    hooks.active_pods = [this]() -> std::optional<std::vector<api::PodPtr>> {
      absl::MutexLock lock(&mu_);
      return active_;
    };
    ASSERT_TRUE(manager_->Start(hooks).ok());
  }

  void StartPlugin(FakePluginOptions o) {
    o.resource = kResource;
    auto p = FakeDevicePlugin::Start(dir_, "fake.sock", std::move(o));
    ASSERT_TRUE(p.ok()) << p.status();
    plugin_ = std::move(*p);
    ASSERT_TRUE(plugin_->Register(manager_->SocketPath()).ok());
  }

  static std::vector<FakeDevice> Devices(int n) {
    std::vector<FakeDevice> d;
    for (int i = 1; i <= n; ++i) d.push_back({"d" + std::to_string(i), true, {}});
    return d;
  }

  int64_t Allocatable() {
    DevicePluginCapacity c = manager_->GetCapacity();
    auto it = c.allocatable.find(kResource);
    return it == c.allocatable.end() ? -1 : it->second.Value();
  }
  int64_t Capacity() {
    DevicePluginCapacity c = manager_->GetCapacity();
    auto it = c.capacity.find(kResource);
    return it == c.capacity.end() ? -1 : it->second.Value();
  }
  void Activate(const api::PodPtr& p) {
    absl::MutexLock lock(&mu_);
    active_.push_back(p);
  }
  void Deactivate() {
    absl::MutexLock lock(&mu_);
    active_.clear();
  }
  // Admission as the topology manager does it with policy none: init containers, then the app
  // containers.
  absl::Status Admit(const api::PodPtr& p) {
    Activate(p);
    for (const api::Container& c : p->spec.init_containers) {
      if (absl::Status st = manager_->Allocate(*p, c); !st.ok()) return st;
    }
    for (const api::Container& c : p->spec.containers) {
      if (absl::Status st = manager_->Allocate(*p, c); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  std::vector<std::string> DeviceIds(const api::PodPtr& p, const std::string& container) {
    std::vector<std::string> out;
    ResourceDeviceInstances devices = manager_->GetDevices(p->metadata.uid, container);
    for (const auto& [id, numa] : devices[kResource]) out.push_back(id);
    return out;
  }

  std::string dir_;
  FakeClock clock_;
  FixedAffinity affinity_;
  absl::Mutex mu_;
  std::vector<api::PodPtr> active_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<DeviceManager> manager_;
  std::unique_ptr<FakeDevicePlugin> plugin_;
};

TEST_F(DeviceManagerTest, RegistrationIsCheckedAsUpstream) {
  StartManager();
  FakePluginOptions o;
  o.resource = kResource;
  auto p = FakeDevicePlugin::Start(dir_, "p.sock", o);
  ASSERT_TRUE(p.ok());
  absl::Status st = (*p)->Register(manager_->SocketPath(), "v1alpha");
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("requested API version \"v1alpha\" is not supported by kubelet. "
                        "Supported versions are [\"v1beta1\"]"));
  o.resource = "cpu";
  auto bad = FakeDevicePlugin::Start(dir_, "q.sock", o);
  ASSERT_TRUE(bad.ok());
  st = (*bad)->Register(manager_->SocketPath());
  EXPECT_THAT(std::string(st.message()), HasSubstr("the ResourceName \"cpu\" is invalid"));
  o.resource = "kubernetes.io/dev";
  auto native = FakeDevicePlugin::Start(dir_, "r.sock", o);
  ASSERT_TRUE(native.ok());
  EXPECT_FALSE((*native)->Register(manager_->SocketPath()).ok());
  EXPECT_TRUE(manager_->GetCapacity().capacity.empty());
}

TEST_F(DeviceManagerTest, DevicesFeedCapacityAndAllocatable) {
  StartManager();
  FakePluginOptions o;
  o.devices = Devices(2);
  StartPlugin(o);
  ASSERT_TRUE(Eventually([&] { return Allocatable() == 2; }));
  EXPECT_EQ(Capacity(), 2);
  EXPECT_TRUE(manager_->IsDevicePluginResource(kResource));

  // An unhealthy device leaves allocatable, not capacity.
  std::vector<FakeDevice> d = Devices(3);
  d[2].healthy = false;
  plugin_->SetDevices(d);
  ASSERT_TRUE(Eventually([&] { return Capacity() == 3; }));
  EXPECT_EQ(Allocatable(), 2);

  // The plugin goes away: everything is unhealthy; after the grace period the resource is
  // removed and reported as such until a plugin registers it again.
  plugin_->Stop();
  ASSERT_TRUE(Eventually([&] { return Allocatable() == 0; }));
  EXPECT_EQ(Capacity(), 3);
  EXPECT_TRUE(manager_->GetCapacity().removed.empty());
  clock_.Advance(absl::Minutes(5) + absl::Seconds(1));
  DevicePluginCapacity c = manager_->GetCapacity();
  EXPECT_THAT(c.removed, ElementsAre(kResource));
  EXPECT_TRUE(c.capacity.empty());
  EXPECT_THAT(manager_->GetCapacity().removed, ElementsAre(kResource));
  FakePluginOptions o2;
  o2.resource = kResource;
  o2.devices = Devices(1);
  auto again = FakeDevicePlugin::Start(dir_, "again.sock", o2);
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE((*again)->Register(manager_->SocketPath()).ok());
  ASSERT_TRUE(Eventually([&] { return Allocatable() == 1; }));
  EXPECT_TRUE(manager_->GetCapacity().removed.empty());
}

TEST_F(DeviceManagerTest, AllocatesPassesResultsToTheContainerAndRefusesWhenShort) {
  StartManager();
  FakePluginOptions o;
  o.devices = Devices(2);
  StartPlugin(o);
  ASSERT_TRUE(Eventually([&] { return Allocatable() == 2; }));

  api::PodPtr a = P("a", {C("c", 1)});
  api::PodPtr b = P("b", {C("c", 1)});
  ASSERT_TRUE(Admit(a).ok());
  ASSERT_TRUE(Admit(b).ok());
  EXPECT_EQ(plugin_->AllocateCalls().size(), 2u);
  std::vector<std::string> da = DeviceIds(a, "c"), db = DeviceIds(b, "c");
  ASSERT_EQ(da.size(), 1u);
  ASSERT_EQ(db.size(), 1u);
  EXPECT_NE(da[0], db[0]);

  absl::StatusOr<DeviceRunContainerOptions> opts =
      manager_->GetDeviceRunContainerOptions(*a, a->spec.containers[0]);
  ASSERT_TRUE(opts.ok()) << opts.status();
  ASSERT_EQ(opts->mounts.size(), 1u);
  EXPECT_EQ(opts->mounts[0].container_path(), "/dev/" + da[0]);
  EXPECT_EQ(opts->mounts[0].host_path(), "/tmp/" + da[0]);
  ASSERT_EQ(opts->devices.size(), 1u);
  EXPECT_EQ(opts->devices[0].permissions(), "rw");
  EXPECT_THAT(opts->envs, ElementsAre(std::pair<std::string, std::string>("FAKE_DEVICES", da[0])));
  EXPECT_EQ(opts->annotations.at("example.com/devices"), da[0]);
  EXPECT_THAT(opts->cdi_devices, ElementsAre("example.com/dev=" + da[0]));

  // A third pod: none left.
  absl::Status st = Admit(P("c", {C("c", 1)}));
  EXPECT_EQ(st.message(),
            "requested number of devices unavailable for example.com/dev. Requested: 1, "
            "Available: 0");

  // Pod a is gone: its device is free again.
  Deactivate();
  Activate(b);
  EXPECT_TRUE(Admit(P("d", {C("c", 1)})).ok());
  EXPECT_EQ(plugin_->AllocateCalls().size(), 3u);
  // Pod b terminates: released at once, even while it still counts as active.
  manager_->RemovePod("b");
  EXPECT_TRUE(DeviceIds(b, "c").empty());
  EXPECT_TRUE(Admit(P("e", {C("c", 1)})).ok());
}

TEST_F(DeviceManagerTest, UnregisteredOrUnhealthyResourcesAreRefused) {
  StartManager();
  EXPECT_EQ(manager_->Allocate(*P("x", {}), C("c", 0)), absl::OkStatus());
  FakePluginOptions o;
  o.devices = Devices(1);
  o.devices[0].healthy = false;
  StartPlugin(o);
  ASSERT_TRUE(Eventually([&] { return Capacity() == 1; }));
  EXPECT_EQ(Admit(P("a", {C("c", 1)})).message(),
            "no healthy devices present; cannot allocate unhealthy devices example.com/dev");
}

TEST_F(DeviceManagerTest, InitContainerDevicesAreReusedByAppContainers) {
  StartManager();
  FakePluginOptions o;
  o.devices = Devices(2);
  StartPlugin(o);
  ASSERT_TRUE(Eventually([&] { return Allocatable() == 2; }));
  api::PodPtr p = P("p", {C("app", 1)}, {C("init", 1)});
  ASSERT_TRUE(Admit(p).ok());
  EXPECT_EQ(DeviceIds(p, "init"), DeviceIds(p, "app"));
  // The other device is still free for another pod.
  EXPECT_TRUE(Admit(P("q", {C("c", 1)})).ok());
}

TEST_F(DeviceManagerTest, PreferredAllocationAndPreStartContainer) {
  StartManager();
  FakePluginOptions o;
  o.devices = Devices(3);
  o.get_preferred_allocation_available = true;
  o.pre_start_required = true;
  o.preferred = {"d3"};
  StartPlugin(o);
  ASSERT_TRUE(Eventually([&] { return Allocatable() == 3; }));
  api::PodPtr p = P("p", {C("c", 1)});
  ASSERT_TRUE(Admit(p).ok());
  EXPECT_EQ(plugin_->PreferredCalls(), 1);
  EXPECT_THAT(DeviceIds(p, "c"), ElementsAre("d3"));
  ASSERT_TRUE(manager_->GetDeviceRunContainerOptions(*p, p->spec.containers[0]).ok());
  EXPECT_THAT(plugin_->PreStartCalls(), ElementsAre(ElementsAre("d3")));
}

TEST_F(DeviceManagerTest, TopologyHintsAndAlignedAllocation) {
  StartManager({0, 1});
  FakePluginOptions o;
  o.devices = {{"a0", true, {0}}, {"b0", true, {0}}, {"a1", true, {1}}};
  StartPlugin(o);
  ASSERT_TRUE(Eventually([&] { return Allocatable() == 3; }));
  api::PodPtr p = P("p", {C("c", 2)});
  topologymanager::TopologyHints hints = manager_->GetTopologyHints(*p, p->spec.containers[0]);
  ASSERT_TRUE(hints.at(kResource).has_value());
  // Two devices fit on node 0 alone (preferred) or across both nodes.
  EXPECT_THAT(*hints.at(kResource),
              ElementsAre(topologymanager::TopologyHint{topologymanager::NUMAMask{0}, true},
                          topologymanager::TopologyHint{topologymanager::NUMAMask{0, 1}, false}));
  affinity_.hint = {topologymanager::NUMAMask{0}, true};
  ASSERT_TRUE(Admit(p).ok());
  EXPECT_THAT(DeviceIds(p, "c"), ElementsAre("a0", "b0"));
  EXPECT_THAT(manager_->GetDevices("p", "c")[kResource]["a0"], ElementsAre(0));
  // Only one device left: no hint can satisfy two more.
  api::PodPtr q = P("q", {C("c", 2)});
  Activate(q);
  hints = manager_->GetTopologyHints(*q, q->spec.containers[0]);
  ASSERT_TRUE(hints.at(kResource).has_value());
  EXPECT_TRUE(hints.at(kResource)->empty());
}

TEST_F(DeviceManagerTest, ARestartedManagerKeepsAllocationsFromTheCheckpoint) {
  StartManager();
  FakePluginOptions o;
  o.devices = Devices(2);
  StartPlugin(o);
  ASSERT_TRUE(Eventually([&] { return Allocatable() == 2; }));
  api::PodPtr p = P("p", {C("c", 1)});
  ASSERT_TRUE(Admit(p).ok());
  const std::vector<std::string> before = DeviceIds(p, "c");
  ASSERT_TRUE(std::filesystem::exists(dir_ + "/" + kCheckpointFileName));

  plugin_.reset();
  manager_.reset();
  StartManager();
  EXPECT_EQ(DeviceIds(p, "c"), before);
  // Until the plugin registers again: registered with no devices.
  EXPECT_EQ(Capacity(), 0);
  EXPECT_TRUE(manager_->IsDevicePluginResource(kResource));
  // Re-admission of the running pod needs no new allocation, and its container options come
  // from the checkpoint.
  EXPECT_TRUE(Admit(p).ok());
  absl::StatusOr<DeviceRunContainerOptions> opts =
      manager_->GetDeviceRunContainerOptions(*p, p->spec.containers[0]);
  ASSERT_TRUE(opts.ok()) << opts.status();
  ASSERT_EQ(opts->mounts.size(), 1u);
  EXPECT_EQ(opts->mounts[0].container_path(), "/dev/" + before[0]);

  // The plugin registers again: the other device is what is left.
  StartPlugin(o);
  ASSERT_TRUE(Eventually([&] { return Allocatable() == 2; }));
  api::PodPtr q = P("q", {C("c", 1)});
  ASSERT_TRUE(Admit(q).ok());
  EXPECT_NE(DeviceIds(q, "c"), before);
  EXPECT_EQ(Admit(P("r", {C("c", 1)})).code(), absl::StatusCode::kResourceExhausted);
}

TEST_F(DeviceManagerTest, ABadCheckpointIsIgnoredAndStaleSocketsRemoved) {
  std::filesystem::create_directories(dir_);
  {
    std::ofstream(dir_ + "/" + kCheckpointFileName) << "{broken";
    std::ofstream(dir_ + "/stale.sock") << "";
  }
  StartManager();
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/stale.sock"));
  EXPECT_TRUE(std::filesystem::exists(manager_->SocketPath()));
  EXPECT_TRUE(manager_->GetCapacity().capacity.empty());
}

}  // namespace
}  // namespace kubelet::devicemanager
