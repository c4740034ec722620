#include "kubelet/volume/volume_manager.h"

#include <errno.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/events/testing/fake_recorder.h"
#include "kubelet/volume/mount_utils.h"
#include "kubelet/volume/testing/mount_test_util.h"

namespace kubelet::volume {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

api::Quantity Q(const char* s) { return *api::ParseQuantity(s); }

std::string ReadFile(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class VolumeManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/volume-manager-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    fs::create_directories(root_ + "/host/data");
  }
  void TearDown() override {
    for (const std::string& m : MountPointsUnder(root_)) (void)Unmount(m);
    fs::remove_all(root_);
  }

  VolumeManagerOptions Options() {
    VolumeManagerOptions o;
    o.root_dir = root_ + "/kubelet";
    o.node_allocatable_memory = [] { return int64_t{64} << 20; };
    o.node_allocatable = [] { return api::ResourceList{{"cpu", Q("2")}, {"memory", Q("64Mi")}}; };
    o.mount_timeout = absl::ZeroDuration();
    o.usage_check_period = absl::ZeroDuration();
    o.on_limit_exceeded = [this](const std::string& uid, const std::string& msg) {
      exceeded_.emplace_back(uid, msg);
    };
    return o;
  }

  api::Pod MakePod(const std::string& uid, bool memory = true) {
    api::Pod pod;
    pod.metadata.name = "web";
    pod.metadata.namespace_ = "default";
    pod.metadata.uid = uid;
    pod.metadata.labels = {{"app", "web"}};
    api::Volume cache;
    cache.name = "cache";
    cache.empty_dir = api::EmptyDirVolumeSource{};
    cache.empty_dir->size_limit = Q("100Ki");
    pod.spec.volumes.push_back(cache);
    if (memory && ::geteuid() == 0) {
      api::Volume mem;
      mem.name = "mem";
      mem.empty_dir = api::EmptyDirVolumeSource{"Memory", Q("2Mi")};
      pod.spec.volumes.push_back(mem);
      api::Volume info;
      info.name = "info";
      info.downward_api = api::DownwardAPIVolumeSource{};
      info.downward_api->items.push_back({"labels",
                                          api::ObjectFieldSelector{"v1", "metadata.labels"},
                                          std::nullopt, std::nullopt});
      info.downward_api->items.push_back(
          {"cpu", std::nullopt, api::ResourceFieldSelector{"app", "limits.cpu", Q("1m")}, 0600});
      pod.spec.volumes.push_back(info);
    }
    api::Volume host;
    host.name = "host";
    host.host_path = api::HostPathVolumeSource{root_ + "/host/data", std::string("Directory")};
    pod.spec.volumes.push_back(host);
    api::Container c;
    c.name = "app";
    for (const api::Volume& v : pod.spec.volumes) {
      c.volume_mounts.push_back({v.name, false, "/mnt/" + v.name, "", std::nullopt, ""});
    }
    pod.spec.containers.push_back(c);
    return pod;
  }

  std::string VolDir(const std::string& uid, const std::string& plugin, const std::string& name) {
    return root_ + "/kubelet/pods/" + uid + "/volumes/kubernetes.io~" + plugin + "/" + name;
  }

  std::string root_;
  FakeClock clock_;
  std::vector<std::pair<std::string, std::string>> exceeded_;
};

TEST_F(VolumeManagerTest, SetsUpMountsAndTearsDown) {
  VolumeManager vm(Options(), clock_);
  api::Pod pod = MakePod("uid-1");
  ASSERT_TRUE(vm.PrepareForSync(pod).ok());
  const std::string cache = VolDir("uid-1", "empty-dir", "cache");
  EXPECT_TRUE(fs::is_directory(cache));
  EXPECT_FALSE(fs::exists(root_ + "/kubelet/pods/uid-1/volumes/kubernetes.io~host-path"));

  absl::StatusOr<std::vector<runtime::v1::Mount>> mounts =
      vm.ContainerMounts(pod, pod.spec.containers[0]);
  ASSERT_TRUE(mounts.ok()) << mounts.status();
  ASSERT_EQ(mounts->size(), pod.spec.volumes.size());
  EXPECT_EQ((*mounts)[0].host_path(), cache);
  EXPECT_EQ(mounts->back().host_path(), root_ + "/host/data");

  if (::geteuid() == 0) {
    const std::string mem = VolDir("uid-1", "empty-dir", "mem");
    const std::string info = VolDir("uid-1", "downward-api", "info");
    EXPECT_TRUE(IsMountPoint(mem));
    EXPECT_TRUE(IsTmpfs(mem));
    EXPECT_TRUE(IsMountPoint(info));
    EXPECT_EQ(ReadFile(info + "/labels"), "app=\"web\"");
    EXPECT_EQ(ReadFile(info + "/cpu"), "2000");  // no limit: node allocatable
    EXPECT_TRUE((*mounts)[2].readonly());
    // A label change reaches the file on the next sync.
    pod.metadata.labels["tier"] = "front";
    ASSERT_TRUE(vm.PrepareForSync(pod).ok());
    EXPECT_EQ(ReadFile(info + "/labels"), "app=\"web\"\ntier=\"front\"");
    EXPECT_EQ(MountPointsUnder(mem).size(), 1u);  // not mounted twice
  }

  ASSERT_TRUE(vm.CleanupTerminatedPod(pod).ok());
  EXPECT_THAT(MountPointsUnder(root_ + "/kubelet"), IsEmpty());
  EXPECT_THAT(vm.PodsWithVolumes(), IsEmpty());
  EXPECT_FALSE(fs::exists(cache));
  EXPECT_TRUE(fs::exists(root_ + "/host/data"));  // hostPath content is never touched
  EXPECT_FALSE(vm.ContainerMounts(pod, pod.spec.containers[0]).ok());
}

TEST_F(VolumeManagerTest, WrongHostPathTypeFailsWithUpstreamMessage) {
  events::FakeRecorder recorder;
  VolumeManagerOptions o = Options();
  o.recorder = &recorder;
  VolumeManager vm(o, clock_);
  api::Pod pod = MakePod("uid-2", /*memory=*/false);
  pod.spec.volumes.back().host_path->type = "File";
  absl::Status st = vm.PrepareForSync(pod);
  EXPECT_EQ(std::string(st.message()),
            "unable to attach or mount volumes: unmounted volumes=[host], unattached "
            "volumes=[], failed to process volumes=[]: timed out waiting for the condition");
  // What `kubectl describe pod` shows: why the volume failed, then that the wait gave up.
  std::vector<events::FakeRecorder::Entry> failed = recorder.WithReason(events::kFailedMountVolume);
  ASSERT_GE(failed.size(), 2u);
  EXPECT_EQ(failed.front().type, "Warning");
  EXPECT_EQ(failed.front().object.uid, "uid-2");
  EXPECT_EQ(failed.front().message,
            "MountVolume.SetUp failed for volume \"host\" : hostPath type check failed: " + root_ +
                "/host/data is not a file");
  EXPECT_EQ(failed.back().message,
            "Unable to attach or mount volumes: unmounted volumes=[host], unattached "
            "volumes=[], failed to process volumes=[]: timed out waiting for the condition");
  // The volumes that could be set up are; the missing one cannot be mounted.
  EXPECT_TRUE(fs::is_directory(VolDir("uid-2", "empty-dir", "cache")));
  EXPECT_EQ(std::string(vm.ContainerMounts(pod, pod.spec.containers[0]).status().message()),
            "cannot find volume \"host\" to mount into container \"app\"");
  ASSERT_TRUE(vm.CleanupTerminatedPod(pod).ok());
}

TEST_F(VolumeManagerTest, UnsupportedVolumeTypeFails) {
  VolumeManager vm(Options(), clock_);
  api::Pod pod = MakePod("uid-3", false);
  api::Volume secret;
  secret.name = "creds";
  secret.secret = api::SecretVolumeSource{"creds", {}, std::nullopt, std::nullopt};
  pod.spec.volumes.push_back(secret);
  absl::Status st = vm.PrepareForSync(pod);
  EXPECT_THAT(std::string(st.message()), ::testing::HasSubstr("unmounted volumes=[creds]"));
  ASSERT_TRUE(vm.CleanupTerminatedPod(pod).ok());
}

// A plugin of another component: makes <dir>/data, records the tear-downs.
class DirPlugin final : public ExternalVolumePlugin {
 public:
  std::string Name() const override { return "example.com/dir"; }
  bool CanSupport(const VolumeSpec& s) const override {
    return s.pv == nullptr && s.volume->other_sources.count("nfs") != 0;
  }
  absl::StatusOr<ExternalVolume> SetUp(const api::Pod&, const VolumeSpec&,
                                       const std::string& dir) override {
    fs::create_directories(dir + "/data");
    return ExternalVolume{dir + "/data", true};
  }
  absl::Status TearDown(const std::string& uid, const std::string& dir) override {
    torn_down.push_back(uid + " " + dir);
    fs::remove_all(dir);
    return absl::OkStatus();
  }
  std::vector<std::string> torn_down;
};

TEST_F(VolumeManagerTest, ExternalPluginsSetUpAndTearDownTheirVolumes) {
  DirPlugin plugin;
  VolumeManagerOptions o = Options();
  o.external_plugins = {&plugin};
  VolumeManager vm(o, clock_);
  api::Pod pod = MakePod("uid-ext", false);
  api::Volume nfs;
  nfs.name = "share";
  nfs.other_sources["nfs"] = api::RawJson{R"({"server":"s","path":"/"})"};
  pod.spec.volumes.push_back(nfs);
  ASSERT_TRUE(vm.PrepareForSync(pod).ok());
  const std::string dir = root_ + "/kubelet/pods/uid-ext/volumes/example.com~dir/share";
  EXPECT_EQ(vm.MountedVolumes("uid-ext").at("share"), dir + "/data");
  ASSERT_TRUE(vm.CleanupTerminatedPod(pod).ok());
  EXPECT_THAT(plugin.torn_down, ElementsAre("uid-ext " + dir));
}

TEST_F(VolumeManagerTest, RestartRediscoversAndCleansOrphans) {
  api::Pod keep = MakePod("keep");
  api::Pod orphan = MakePod("orphan");
  {
    VolumeManager before(Options(), clock_);
    ASSERT_TRUE(before.PrepareForSync(keep).ok());
    ASSERT_TRUE(before.PrepareForSync(orphan).ok());
    std::ofstream(VolDir("keep", "empty-dir", "cache") + "/state") << "x";
  }  // "kubelet restart": nothing is torn down
  VolumeManager after(Options(), clock_);
  EXPECT_THAT(after.PodsWithVolumes(), ElementsAre("keep", "orphan"));
  after.Housekeeping({"keep"});
  EXPECT_THAT(after.PodsWithVolumes(), ElementsAre("keep"));
  EXPECT_FALSE(fs::exists(VolDir("orphan", "empty-dir", "cache")));
  EXPECT_THAT(MountPointsUnder(root_ + "/kubelet/pods/orphan"), IsEmpty());
  // The kept pod is adopted: same data, no second tmpfs.
  ASSERT_TRUE(after.PrepareForSync(keep).ok());
  EXPECT_EQ(ReadFile(VolDir("keep", "empty-dir", "cache") + "/state"), "x");
  if (::geteuid() == 0) {
    EXPECT_EQ(MountPointsUnder(VolDir("keep", "empty-dir", "mem")).size(), 1u);
  }
  after.Housekeeping({});
  after.Housekeeping({});
  EXPECT_THAT(after.PodsWithVolumes(), IsEmpty());
  EXPECT_THAT(MountPointsUnder(root_ + "/kubelet"), IsEmpty());
}

TEST_F(VolumeManagerTest, HousekeepingSparesPodPreparedSinceLastPass) {
  VolumeManager vm(Options(), clock_);
  api::Pod pod = MakePod("new", false);
  vm.Housekeeping({});
  // The pod was added after the pass computed its `active` set.
  ASSERT_TRUE(vm.PrepareForSync(pod).ok());
  vm.Housekeeping({});
  EXPECT_THAT(vm.PodsWithVolumes(), ElementsAre("new"));
  vm.Housekeeping({});
  EXPECT_THAT(vm.PodsWithVolumes(), IsEmpty());
}

TEST_F(VolumeManagerTest, ReportsEmptyDirOverSizeLimitOnce) {
  VolumeManager vm(Options(), clock_);
  api::Pod pod = MakePod("big", false);
  ASSERT_TRUE(vm.PrepareForSync(pod).ok());
  vm.Housekeeping({"big"});
  EXPECT_THAT(exceeded_, IsEmpty());
  std::ofstream(VolDir("big", "empty-dir", "cache") + "/blob") << std::string(256 * 1024, 'x');
  vm.Housekeeping({"big"});
  vm.Housekeeping({"big"});
  EXPECT_THAT(exceeded_, ElementsAre(Pair("big",
                                          "Usage of EmptyDir volume \"cache\" exceeds the "
                                          "limit \"100Ki\". ")));
  ASSERT_TRUE(vm.CleanupTerminatedPod(pod).ok());
}

TEST_F(VolumeManagerTest, UsageCheckIsRateLimited) {
  VolumeManagerOptions o = Options();
  o.usage_check_period = absl::Seconds(10);
  VolumeManager vm(o, clock_);
  api::Pod pod = MakePod("big", false);
  ASSERT_TRUE(vm.PrepareForSync(pod).ok());
  vm.Housekeeping({"big"});  // first check: under the limit
  std::ofstream(VolDir("big", "empty-dir", "cache") + "/blob") << std::string(256 * 1024, 'x');
  vm.Housekeeping({"big"});
  EXPECT_THAT(exceeded_, IsEmpty());
  clock_.Advance(absl::Seconds(10));
  vm.Housekeeping({"big"});
  EXPECT_EQ(exceeded_.size(), 1u);
  ASSERT_TRUE(vm.CleanupTerminatedPod(pod).ok());
}

TEST_F(VolumeManagerTest, WaitSucceedsOnceTheHostPathAppears) {
  VolumeManagerOptions o = Options();
  o.mount_timeout = absl::Seconds(60);
  o.retry_period = absl::Milliseconds(20);
  VolumeManager vm(o, clock_);
  api::Pod pod = MakePod("late", false);
  const std::string file = root_ + "/host/late.sock";
  pod.spec.volumes.back().host_path = api::HostPathVolumeSource{file, std::string("File")};
  std::thread creator([&] {
    absl::SleepFor(absl::Milliseconds(200));
    std::ofstream(file) << "x";
  });
  absl::Status st = vm.PrepareForSync(pod);
  creator.join();
  EXPECT_TRUE(st.ok()) << st;
  ASSERT_TRUE(vm.CleanupTerminatedPod(pod).ok());
}

TEST_F(VolumeManagerTest, WaitEndsWhenThePodIsNoLongerDesired) {
  VolumeManagerOptions o = Options();
  o.mount_timeout = absl::Seconds(600);
  o.pod_desired = [](const std::string&) { return false; };
  VolumeManager vm(o, clock_);
  api::Pod pod = MakePod("gone", false);
  pod.spec.volumes.back().host_path->type = "Socket";
  EXPECT_EQ(std::string(vm.PrepareForSync(pod).message()),
            "unable to attach or mount volumes: unmounted volumes=[host], unattached "
            "volumes=[], failed to process volumes=[]: pod is no longer desired");
  ASSERT_TRUE(vm.CleanupTerminatedPod(pod).ok());
}

TEST_F(VolumeManagerTest, StopEndsWaits) {
  VolumeManagerOptions o = Options();
  o.mount_timeout = absl::Seconds(600);
  VolumeManager vm(o, clock_);
  api::Pod pod = MakePod("stopping", false);
  pod.spec.volumes.back().host_path->type = "Socket";
  absl::Status st;
  std::thread worker([&] { st = vm.PrepareForSync(pod); });
  absl::SleepFor(absl::Milliseconds(100));
  vm.Stop();
  worker.join();
  EXPECT_THAT(std::string(st.message()), ::testing::HasSubstr(": volume manager is stopping"));
  ASSERT_TRUE(vm.CleanupTerminatedPod(pod).ok());
}

TEST_F(VolumeManagerTest, OrphanCleanupHandlesLeftoversOfOtherPlugins) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount";
  const std::string pod = root_ + "/kubelet/pods/legacy";
  const std::string secret = pod + "/volumes/kubernetes.io~secret/token";
  const std::string csi = pod + "/volumes/kubernetes.io~csi/pv1/mount";
  fs::create_directories(secret);
  fs::create_directories(csi);
  fs::create_directories(pod + "/plugins/kubernetes.io~empty-dir/cache");
  ASSERT_TRUE(MountTmpfs(secret, 1 << 20).ok());
  ASSERT_TRUE(MountTmpfs(csi, 1 << 20).ok());
  std::ofstream(csi + "/data") << "not ours";
  VolumeManager vm(Options(), clock_);
  vm.Housekeeping({});
  vm.Housekeeping({});
  EXPECT_FALSE(fs::exists(secret));
  EXPECT_FALSE(IsMountPoint(secret));
  // A CSI mount is not ours to unmount: it and its data stay.
  EXPECT_TRUE(IsMountPoint(csi));
  EXPECT_EQ(ReadFile(csi + "/data"), "not ours");
  EXPECT_TRUE(fs::exists(pod + "/plugins/kubernetes.io~empty-dir"));
  ASSERT_TRUE(Unmount(csi).ok());
  vm.Housekeeping({});
  EXPECT_THAT(vm.PodsWithVolumes(), IsEmpty());
  EXPECT_FALSE(fs::exists(pod + "/plugins/kubernetes.io~empty-dir"));
}

using testing::MountAllowed;

// A pod with subPath mounts of an emptyDir (a directory and a file) and of a hostPath.
api::Pod SubPathPod(const std::string& uid, const std::string& host_dir) {
  api::Pod pod;
  pod.metadata.name = "sub";
  pod.metadata.namespace_ = "default";
  pod.metadata.uid = uid;
  api::Volume cache;
  cache.name = "cache";
  cache.empty_dir = api::EmptyDirVolumeSource{};
  pod.spec.volumes.push_back(cache);
  api::Volume host;
  host.name = "host";
  host.host_path = api::HostPathVolumeSource{host_dir, std::string("Directory")};
  pod.spec.volumes.push_back(host);
  api::Container c;
  c.name = "app";
  c.volume_mounts.push_back({"cache", false, "/logs", "logs/app", std::nullopt, ""});
  c.volume_mounts.push_back({"host", false, "/cfg", "conf", std::nullopt, ""});
  c.volume_mounts.push_back({"cache", false, "/all", "", std::nullopt, ""});
  pod.spec.containers.push_back(c);
  return pod;
}

TEST_F(VolumeManagerTest, SubPathBindMountsAreTornDownWithThePod) {
  if (!MountAllowed(root_)) GTEST_SKIP() << "mount(2) not permitted";
  fs::create_directories(root_ + "/host/data/conf");
  std::ofstream(root_ + "/host/data/conf/app.ini") << "k=v";
  VolumeManager vm(Options(), clock_);
  api::Pod pod = SubPathPod("uid-sp", root_ + "/host/data");
  ASSERT_TRUE(vm.PrepareForSync(pod).ok());
  absl::StatusOr<std::vector<runtime::v1::Mount>> mounts =
      vm.ContainerMounts(pod, pod.spec.containers[0]);
  ASSERT_TRUE(mounts.ok()) << mounts.status();
  const std::string subpaths = root_ + "/kubelet/pods/uid-sp/volume-subpaths";
  EXPECT_EQ((*mounts)[0].host_path(), subpaths + "/cache/app/0");
  EXPECT_EQ((*mounts)[1].host_path(), subpaths + "/host/app/1");
  EXPECT_EQ((*mounts)[2].host_path(), VolDir("uid-sp", "empty-dir", "cache"));
  EXPECT_EQ(ReadFile(subpaths + "/host/app/1/app.ini"), "k=v");
  std::ofstream(subpaths + "/cache/app/0/out.log") << "line";
  EXPECT_EQ(ReadFile(VolDir("uid-sp", "empty-dir", "cache") + "/logs/app/out.log"), "line");
  // A container restart reuses the bind mounts.
  ASSERT_TRUE(vm.ContainerMounts(pod, pod.spec.containers[0]).ok());
  EXPECT_EQ(MountPointsUnder(subpaths).size(), 2u);

  ASSERT_TRUE(vm.CleanupTerminatedPod(pod).ok());
  EXPECT_THAT(MountPointsUnder(root_ + "/kubelet"), IsEmpty());
  EXPECT_FALSE(fs::exists(subpaths));
  EXPECT_FALSE(fs::exists(VolDir("uid-sp", "empty-dir", "cache")));
  // The hostPath content the subPath pointed at is never deleted.
  EXPECT_EQ(ReadFile(root_ + "/host/data/conf/app.ini"), "k=v");
  // The pod dir is now free of mounts: a plain recursive delete is safe.
  fs::remove_all(root_ + "/kubelet/pods/uid-sp");
  EXPECT_EQ(ReadFile(root_ + "/host/data/conf/app.ini"), "k=v");
}

TEST_F(VolumeManagerTest, OrphanedSubPathBindMountsAreCleanedAfterRestart) {
  if (!MountAllowed(root_)) GTEST_SKIP() << "mount(2) not permitted";
  fs::create_directories(root_ + "/host/data/conf");
  std::ofstream(root_ + "/host/data/conf/app.ini") << "k=v";
  api::Pod pod = SubPathPod("uid-orphan", root_ + "/host/data");
  // Only the hostPath volume: nothing below volumes/ marks the pod on disk.
  pod.spec.volumes.erase(pod.spec.volumes.begin());
  pod.spec.containers[0].volume_mounts = {{"host", false, "/cfg", "conf", std::nullopt, ""}};
  {
    VolumeManager before(Options(), clock_);
    ASSERT_TRUE(before.PrepareForSync(pod).ok());
    ASSERT_TRUE(before.ContainerMounts(pod, pod.spec.containers[0]).ok());
  }  // "kubelet restart"
  const std::string subpaths = root_ + "/kubelet/pods/uid-orphan/volume-subpaths";
  ASSERT_EQ(MountPointsUnder(subpaths).size(), 1u);
  VolumeManager after(Options(), clock_);
  EXPECT_THAT(after.PodsWithVolumes(), ElementsAre("uid-orphan"));
  after.Housekeeping({});
  EXPECT_THAT(after.PodsWithVolumes(), IsEmpty());
  EXPECT_THAT(MountPointsUnder(root_ + "/kubelet"), IsEmpty());
  EXPECT_FALSE(fs::exists(subpaths));
  EXPECT_EQ(ReadFile(root_ + "/host/data/conf/app.ini"), "k=v");
}

// PVCs and PVs by name; a missing one is NotFound with the API server's message.
class MapClaims final : public ClaimSource {
 public:
  absl::StatusOr<api::PersistentVolumeClaim> GetPersistentVolumeClaim(
      const std::string& ns, const std::string& name) override {
    auto it = pvcs.find(ns + "/" + name);
    if (it == pvcs.end()) {
      return absl::NotFoundError("persistentvolumeclaims \"" + name + "\" not found");
    }
    return it->second;
  }
  absl::StatusOr<api::PersistentVolume> GetPersistentVolume(const std::string& name) override {
    auto it = pvs.find(name);
    if (it == pvs.end()) {
      return absl::NotFoundError("persistentvolumes \"" + name + "\" not found");
    }
    return it->second;
  }
  // A bound claim ns/claim with uid claim-uid, and its hostPath PV `pv` at `path`.
  void Bind(const std::string& claim, const std::string& pv_name, const std::string& path) {
    api::PersistentVolumeClaim pvc;
    pvc.metadata.name = claim;
    pvc.metadata.namespace_ = "default";
    pvc.metadata.uid = claim + "-uid";
    pvc.spec.volume_name = pv_name;
    pvc.status.phase = "Bound";
    pvcs["default/" + claim] = pvc;
    api::PersistentVolume pv;
    pv.metadata.name = pv_name;
    pv.spec.host_path = api::HostPathVolumeSource{path, std::nullopt};
    pv.spec.claim_ref = api::ObjectReference{};
    pv.spec.claim_ref->uid = claim + "-uid";
    pvs[pv_name] = pv;
  }
  std::map<std::string, api::PersistentVolumeClaim> pvcs;
  std::map<std::string, api::PersistentVolume> pvs;
};

api::Volume ClaimVolume(const std::string& name, const std::string& claim) {
  api::Volume v;
  v.name = name;
  v.persistent_volume_claim = api::PersistentVolumeClaimVolumeSource{claim, false};
  return v;
}

TEST_F(VolumeManagerTest, ClaimsResolveToTheirBoundVolumes) {
  MapClaims claims;
  claims.Bind("data", "pv-1", root_ + "/host/data");
  VolumeManagerOptions o = Options();
  o.claims = &claims;
  VolumeManager vm(o, clock_);
  api::Pod pod = MakePod("uid-claim", false);
  pod.spec.volumes = {ClaimVolume("store", "data")};
  ASSERT_TRUE(vm.PrepareForSync(pod).ok());
  EXPECT_EQ(vm.MountedVolumes("uid-claim").at("store"), root_ + "/host/data");

  // A generic ephemeral volume's claim <pod>-<volume> must be controlled by the pod.
  api::Pod eph = MakePod("uid-eph", false);
  api::Volume scratch;
  scratch.name = "scratch";
  scratch.other_sources["ephemeral"] = api::RawJson{R"({"volumeClaimTemplate":{"spec":{}}})"};
  eph.spec.volumes = {scratch};
  claims.Bind("web-scratch", "pv-2", root_ + "/host/data");
  EXPECT_EQ(std::string(vm.PrepareForSync(eph).message()),
            "unable to attach or mount volumes: unmounted volumes=[scratch], unattached "
            "volumes=[], failed to process volumes=[scratch]: PVC default/web-scratch was not "
            "created for pod default/web (pod is not owner)");
  claims.pvcs["default/web-scratch"].metadata.owner_references = {
      {"v1", "Pod", "web", "uid-eph", true, true}};
  ASSERT_TRUE(vm.PrepareForSync(eph).ok());
  EXPECT_EQ(vm.MountedVolumes("uid-eph").at("scratch"), root_ + "/host/data");
}

TEST_F(VolumeManagerTest, UnusableClaimsHoldThePodWithUpstreamErrors) {
  events::FakeRecorder recorder;
  MapClaims claims;
  VolumeManagerOptions o = Options();
  o.claims = &claims;
  o.recorder = &recorder;
  VolumeManager vm(o, clock_);
  api::Pod pod = MakePod("uid-wait", false);
  pod.spec.volumes = {ClaimVolume("store", "data")};
  auto message = [&] { return std::string(vm.PrepareForSync(pod).message()); };
  const std::string head =
      "unable to attach or mount volumes: unmounted volumes=[store], unattached volumes=[], "
      "failed to process volumes=[store]: error processing PVC default/data: ";
  EXPECT_EQ(message(), head +
                           "failed to fetch PVC from API server: persistentvolumeclaims "
                           "\"data\" not found");
  std::vector<events::FakeRecorder::Entry> failed = recorder.WithReason(events::kFailedMountVolume);
  ASSERT_FALSE(failed.empty());
  EXPECT_EQ(failed.front().message,
            "Unable to attach or mount volumes: unmounted volumes=[store], unattached volumes=[], "
            "failed to process volumes=[store]: error processing PVC default/data: failed to "
            "fetch PVC from API server: persistentvolumeclaims \"data\" not found");

  claims.Bind("data", "pv-1", root_ + "/host/data");
  claims.pvcs["default/data"].status.phase = "Pending";
  EXPECT_EQ(message(), head + "PVC is not bound");
  claims.pvcs["default/data"].status.phase = "Bound";
  claims.pvs["pv-1"].spec.claim_ref->uid = "someone-else";
  EXPECT_EQ(message(), head +
                           "found PV object pv-1 but its pv.Spec.ClaimRef.UID someone-else "
                           "does not point to claim.UID data-uid");
  claims.pvs.clear();
  EXPECT_EQ(message(), head +
                           "failed to fetch PV pv-1 from API server: persistentvolumes "
                           "\"pv-1\" not found");
  EXPECT_TRUE(vm.MountedVolumes("uid-wait").empty());

  // Standalone: no API server to read claims from.
  VolumeManager standalone(Options(), clock_);
  EXPECT_THAT(std::string(standalone.PrepareForSync(pod).message()),
              ::testing::HasSubstr("failed to fetch PVC from API server: not supported due to "
                                   "running kubelet in standalone mode"));
}

TEST_F(VolumeManagerTest, ResourcesAreReclaimedOnceVolumesAreGone) {
  VolumeManager vm(Options(), clock_);
  api::Pod pod = MakePod("uid-r", false);
  EXPECT_TRUE(vm.PodResourcesReclaimed("uid-r"));
  ASSERT_TRUE(vm.PrepareForSync(pod).ok());
  EXPECT_FALSE(vm.PodResourcesReclaimed("uid-r"));
  ASSERT_TRUE(vm.CleanupTerminatedPod(pod).ok());
  EXPECT_TRUE(vm.PodResourcesReclaimed("uid-r"));
}

// Plugins' volumes in use, merged and sorted for the Node status; the report goes back to them.
class InUsePlugin final : public ExternalVolumePlugin {
 public:
  explicit InUsePlugin(std::vector<std::string> in_use) : in_use_(std::move(in_use)) {}
  std::string Name() const override { return "example.com/in-use"; }
  bool CanSupport(const VolumeSpec&) const override { return false; }
  absl::StatusOr<ExternalVolume> SetUp(const api::Pod&, const VolumeSpec&,
                                       const std::string&) override {
    return absl::UnimplementedError("unused");
  }
  absl::Status TearDown(const std::string&, const std::string&) override {
    return absl::OkStatus();
  }
  std::vector<std::string> VolumesInUse() override { return in_use_; }
  void MarkVolumesAsReportedInUse(const std::vector<std::string>& names) override {
    reported = names;
  }
  std::vector<std::string> reported;

 private:
  std::vector<std::string> in_use_;
};

TEST_F(VolumeManagerTest, VolumesInUseComeFromThePlugins) {
  InUsePlugin a({"kubernetes.io/csi/d^b"});
  InUsePlugin b({"kubernetes.io/csi/d^a", "kubernetes.io/csi/d^b"});
  VolumeManagerOptions o = Options();
  o.external_plugins = {&a, &b};
  VolumeManager vm(o, clock_);
  EXPECT_THAT(vm.GetVolumesInUse(), ElementsAre("kubernetes.io/csi/d^a", "kubernetes.io/csi/d^b"));
  vm.MarkVolumesAsReportedInUse({"kubernetes.io/csi/d^a"});
  EXPECT_THAT(a.reported, ElementsAre("kubernetes.io/csi/d^a"));
  EXPECT_THAT(b.reported, ElementsAre("kubernetes.io/csi/d^a"));
}

}  // namespace
}  // namespace kubelet::volume
