#include "kubelet/kuberuntime/kuberuntime_manager.h"

#include <sys/stat.h>

#include <fstream>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/events/testing/fake_recorder.h"
#include "kubelet/kuberuntime/labels.h"
#include "kubelet/kuberuntime/test_util.h"

namespace kubelet::kuberuntime {
namespace {

namespace v1 = ::runtime::v1;
using container::State;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::MakeContainer;
using testing::MakePod;
using testing::ManagerFixture;
using testing::Sidecar;

bool IsDir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Containers of a pod in the fake, by name -> newest config / status.
std::vector<v1::Container> ListContainers(cri::FakeRuntime& fake) {
  return *fake.ListContainers(nullptr);
}

std::string IdOf(cri::FakeRuntime& fake, const std::string& name, v1::ContainerState state) {
  std::string id;
  for (const v1::Container& c : ListContainers(fake)) {
    if (c.metadata().name() == name && c.state() == state) id = c.id();
  }
  return id;
}

int CountState(cri::FakeRuntime& fake, v1::ContainerState state) {
  int n = 0;
  for (const v1::Container& c : ListContainers(fake)) n += c.state() == state;
  return n;
}

const container::SyncResult* FindResult(const container::PodSyncResult& r,
                                        container::SyncResult::Action action,
                                        const std::string& target) {
  for (const container::SyncResult& s : r.results) {
    if (s.action == action && s.target == target) return &s;
  }
  return nullptr;
}

class FakePodState final : public container::PodStateProvider {
 public:
  bool ShouldPodContentBeRemoved(const std::string& uid) const override {
    return removed.count(uid) > 0;
  }
  bool ShouldPodRuntimeBeRemoved(const std::string& uid) const override {
    return removed.count(uid) > 0 || terminated.count(uid) > 0;
  }
  std::set<std::string> removed;
  std::set<std::string> terminated;
};

api::Pod WebPod() {
  api::Container app = MakeContainer("app");
  api::EnvVar e1;
  e1.name = "GREETING";
  e1.value = "hello";
  api::EnvVar e2;
  e2.name = "MSG";
  e2.value = "$(GREETING) from $(POD_NAME)";
  api::EnvVar e3;
  e3.name = "POD_NAME";
  e3.value_from = api::EnvVarSource{};
  e3.value_from->field_ref = api::ObjectFieldSelector{"v1", "metadata.name"};
  app.env = {e1, e3, e2};
  app.command = {"sh", "-c", "echo $(MSG); sleep 3600"};
  app.resources.requests = {{"cpu", *api::ParseQuantity("100m")},
                            {"memory", *api::ParseQuantity("64Mi")}};
  app.resources.limits = {{"cpu", *api::ParseQuantity("500m")}};
  api::Container side = MakeContainer("side");
  api::Pod pod = MakePod("web", {app, side}, {}, "default", "uid-web");
  pod.metadata.labels = {{"app", "web"}};
  return pod;
}

TEST(KubeRuntimeManagerTest, InitChecksVersion) {
  ManagerFixture f;
  EXPECT_TRUE(f.manager->Init().ok());
  EXPECT_EQ(f.manager->Type(), cri::FakeRuntime::kRuntimeName);
  v1::VersionResponse v;
  v.set_version("0.2.0");
  v.set_runtime_name("x");
  f.fake.SetVersion(v);
  EXPECT_FALSE(f.manager->Init().ok());
}

TEST(KubeRuntimeManagerTest, SyncPodCreatesSandboxAndContainers) {
  ManagerFixture f;
  api::Pod pod = WebPod();
  container::PodSyncResult r = f.Sync(pod);
  ASSERT_TRUE(r.Error().ok()) << r.Error();

  // Sandbox.
  std::vector<std::string> sandboxes = f.fake.sandbox_ids();
  ASSERT_EQ(sandboxes.size(), 1u);
  std::optional<v1::PodSandboxStatus> sb = f.fake.GetSandbox(sandboxes[0]);
  ASSERT_TRUE(sb.has_value());
  EXPECT_EQ(sb->metadata().name(), "web");
  EXPECT_EQ(sb->metadata().attempt(), 0u);
  EXPECT_EQ(sb->labels().at(kPodUIDLabel), "uid-web");
  EXPECT_EQ(sb->labels().at("app"), "web");
  const std::string log_dir = f.options.pod_logs_dir + "/default_web_uid-web";
  EXPECT_TRUE(IsDir(log_dir));
  EXPECT_TRUE(IsDir(log_dir + "/app"));
  EXPECT_TRUE(IsDir(log_dir + "/side"));

  // Containers.
  ASSERT_EQ(CountState(f.fake, v1::CONTAINER_RUNNING), 2);
  const std::string app_id = IdOf(f.fake, "app", v1::CONTAINER_RUNNING);
  std::optional<v1::ContainerConfig> cfg = f.fake.GetContainerConfig(app_id);
  ASSERT_TRUE(cfg.has_value());
  EXPECT_EQ(cfg->metadata().attempt(), 0u);
  EXPECT_EQ(cfg->log_path(), "app/0.log");
  EXPECT_EQ(cfg->labels().at(kContainerNameLabel), "app");
  EXPECT_EQ(cfg->labels().at(kPodNameLabel), "web");
  EXPECT_EQ(cfg->labels().at(kPodNamespaceLabel), "default");
  EXPECT_EQ(cfg->labels().at(kPodUIDLabel), "uid-web");
  EXPECT_EQ(cfg->annotations().at(kContainerHashLabel),
            HashToString(HashContainerSpec(pod.spec.containers[0])));
  EXPECT_EQ(cfg->annotations().at(kContainerRestartCountLabel), "0");
  EXPECT_EQ(cfg->annotations().at(kPodTerminationGracePeriodLabel), "30");
  EXPECT_EQ(cfg->annotations().at(kContainerTerminationMessagePathLabel), "/dev/termination-log");
  EXPECT_THAT(cfg->command(), ElementsAre("sh", "-c", "echo hello from web; sleep 3600"));
  std::map<std::string, std::string> env;
  for (const v1::KeyValue& kv : cfg->envs()) env[kv.key()] = kv.value();
  EXPECT_EQ(env["MSG"], "hello from web");
  EXPECT_EQ(env["POD_NAME"], "web");
  EXPECT_FALSE(cfg->image().image().empty());

  // Linux: resources and security.
  const v1::LinuxContainerResources& res = cfg->linux().resources();
  EXPECT_EQ(res.cpu_shares(), 102);
  EXPECT_EQ(res.cpu_quota(), 50000);
  EXPECT_EQ(res.cpu_period(), 100000);
  EXPECT_EQ(res.memory_limit_in_bytes(), 0);
  EXPECT_EQ(res.oom_score_adj(), 1000 - (1000 * (int64_t{64} << 20)) / (int64_t{8} << 30));
  const v1::LinuxContainerSecurityContext& sc = cfg->linux().security_context();
  EXPECT_EQ(sc.namespace_options().pid(), v1::CONTAINER);
  EXPECT_EQ(sc.namespace_options().network(), v1::POD);
  EXPECT_EQ(sc.run_as_user().value(), 0);  // the image has no user

  // Mounts: /etc/hosts and the termination-message file.
  ASSERT_EQ(cfg->mounts_size(), 2);
  EXPECT_EQ(cfg->mounts(0).container_path(), "/etc/hosts");
  std::ifstream hosts(cfg->mounts(0).host_path());
  std::stringstream hs;
  hs << hosts.rdbuf();
  EXPECT_THAT(hs.str(), HasSubstr(sb->network().ip() + "\tweb\n"));
  EXPECT_EQ(cfg->mounts(1).container_path(), "/dev/termination-log");
  struct stat st;
  ASSERT_EQ(stat(cfg->mounts(1).host_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666);
  EXPECT_THAT(cfg->mounts(1).host_path(),
              HasSubstr(f.options.root_dir + "/pods/uid-web/containers/app/"));

  // The side container is BestEffort? No: the pod is Burstable, the container has no request.
  std::optional<v1::ContainerConfig> side =
      f.fake.GetContainerConfig(IdOf(f.fake, "side", v1::CONTAINER_RUNNING));
  ASSERT_TRUE(side.has_value());
  EXPECT_EQ(side->linux().resources().oom_score_adj(), 999);
  EXPECT_EQ(side->linux().resources().cpu_shares(), 2);
}

TEST(KubeRuntimeManagerTest, GuaranteedAndBestEffortOOMScores) {
  ManagerFixture f;
  api::Container g = MakeContainer("g");
  g.resources.limits = {{"cpu", *api::ParseQuantity("1")}, {"memory", *api::ParseQuantity("1Gi")}};
  api::Pod guaranteed = MakePod("g", {g});
  ASSERT_TRUE(f.Sync(guaranteed).Error().ok());
  api::Pod best = MakePod("b", {MakeContainer("b")});
  ASSERT_TRUE(f.Sync(best).Error().ok());
  EXPECT_EQ(f.fake.GetContainerConfig(IdOf(f.fake, "g", v1::CONTAINER_RUNNING))
                ->linux()
                .resources()
                .oom_score_adj(),
            -997);
  EXPECT_EQ(f.fake.GetContainerConfig(IdOf(f.fake, "b", v1::CONTAINER_RUNNING))
                ->linux()
                .resources()
                .oom_score_adj(),
            1000);
}

TEST(KubeRuntimeManagerTest, GetPodsAndStatus) {
  ManagerFixture f;
  api::Pod pod = WebPod();
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  absl::StatusOr<std::vector<container::Pod>> pods = f.manager->GetPods(false);
  ASSERT_TRUE(pods.ok());
  ASSERT_EQ(pods->size(), 1u);
  EXPECT_EQ((*pods)[0].id, "uid-web");
  EXPECT_EQ((*pods)[0].name, "web");
  EXPECT_EQ((*pods)[0].containers.size(), 2u);
  EXPECT_EQ((*pods)[0].sandboxes.size(), 1u);
  EXPECT_EQ((*pods)[0].containers[0].id.type, cri::FakeRuntime::kRuntimeName);

  container::PodStatus s = f.Status(pod);
  EXPECT_THAT(s.ips, ElementsAre(f.fake.GetSandbox(f.fake.sandbox_ids()[0])->network().ip()));
  ASSERT_EQ(s.sandbox_statuses.size(), 1u);
  EXPECT_TRUE(s.sandbox_statuses[0].ready);
  ASSERT_EQ(s.container_statuses.size(), 2u);
  const container::ContainerStatus* app = s.FindContainerStatusByName("app");
  ASSERT_NE(app, nullptr);
  EXPECT_EQ(app->state, State::kRunning);
  EXPECT_EQ(app->hash, HashContainerSpec(pod.spec.containers[0]));
  EXPECT_EQ(app->restart_count, 0);
  EXPECT_THAT(app->log_path, HasSubstr("default_web_uid-web/app/0.log"));

  // A sandbox/container not created by a kubelet is ignored.
  v1::PodSandboxConfig foreign;
  foreign.mutable_metadata()->set_name("foreign");
  foreign.mutable_metadata()->set_uid("x");
  ASSERT_TRUE(f.fake.RunPodSandbox(foreign, "").ok());
  pods = f.manager->GetPods(true);
  ASSERT_TRUE(pods.ok());
  EXPECT_EQ(pods->size(), 1u);
}

TEST(KubeRuntimeManagerTest, RestartSafety) {
  ManagerFixture f;
  api::Pod pod = WebPod();
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  f.clock.Advance(absl::Seconds(5));

  // A brand-new manager (kubelet restart) sees nothing to do.
  std::unique_ptr<KubeGenericRuntimeManager> fresh = f.NewManager();
  absl::StatusOr<container::PodStatus> status =
      fresh->GetPodStatus(pod.metadata.uid, pod.metadata.name, pod.metadata.namespace_);
  ASSERT_TRUE(status.ok());
  PodActions actions = ComputePodActions(pod, *status);
  EXPECT_FALSE(actions.kill_pod);
  EXPECT_FALSE(actions.create_sandbox);
  EXPECT_THAT(actions.containers_to_start, IsEmpty());
  EXPECT_THAT(actions.containers_to_kill, IsEmpty());
  f.fake.ClearCalls();
  container::PodSyncResult r = fresh->SyncPod(pod, *status);
  EXPECT_TRUE(r.Error().ok());
  EXPECT_EQ(f.fake.CallCount("RunPodSandbox"), 0);
  EXPECT_EQ(f.fake.CallCount("CreateContainer"), 0);
  EXPECT_EQ(f.fake.CallCount("StopContainer"), 0);
  // The same holds with sidecars and completed init containers.
  api::Pod side = MakePod("side", {MakeContainer("app")}, {MakeContainer("init"), Sidecar("s")});
  ASSERT_TRUE(f.Sync(side).Error().ok());  // init
  ASSERT_TRUE(f.fake.SetContainerExited(IdOf(f.fake, "init", v1::CONTAINER_RUNNING), 0).ok());
  f.clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(f.Sync(side).Error().ok());  // sidecar
  f.clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(f.Sync(side).Error().ok());  // app
  ASSERT_FALSE(IdOf(f.fake, "app", v1::CONTAINER_RUNNING).empty());
  fresh = f.NewManager();
  status = fresh->GetPodStatus(side.metadata.uid, side.metadata.name, side.metadata.namespace_);
  ASSERT_TRUE(status.ok());
  actions = ComputePodActions(side, *status);
  EXPECT_EQ(actions, (PodActions{false, false, actions.sandbox_id, 0, {}, {}, {}, {}}));
}

TEST(KubeRuntimeManagerTest, InitContainersAndSidecarsEndToEnd) {
  ManagerFixture f;
  api::Pod pod =
      MakePod("p", {MakeContainer("app")}, {Sidecar("s1"), MakeContainer("init"), Sidecar("s2")});
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  EXPECT_FALSE(IdOf(f.fake, "s1", v1::CONTAINER_RUNNING).empty());
  EXPECT_EQ(CountState(f.fake, v1::CONTAINER_RUNNING), 1);
  f.clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  const std::string init = IdOf(f.fake, "init", v1::CONTAINER_RUNNING);
  ASSERT_FALSE(init.empty());
  // Waiting for init: nothing new.
  f.clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  EXPECT_EQ(CountState(f.fake, v1::CONTAINER_RUNNING), 2);
  ASSERT_TRUE(f.fake.SetContainerExited(init, 0).ok());
  f.clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  EXPECT_FALSE(IdOf(f.fake, "s2", v1::CONTAINER_RUNNING).empty());
  EXPECT_TRUE(IdOf(f.fake, "app", v1::CONTAINER_RUNNING).empty());
  f.clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  EXPECT_FALSE(IdOf(f.fake, "app", v1::CONTAINER_RUNNING).empty());
  EXPECT_EQ(CountState(f.fake, v1::CONTAINER_RUNNING), 3);

  // A crashed sidecar is restarted (attempt 1).
  const std::string s1 = IdOf(f.fake, "s1", v1::CONTAINER_RUNNING);
  ASSERT_TRUE(f.fake.SetContainerExited(s1, 1).ok());
  f.clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  const std::string s1b = IdOf(f.fake, "s1", v1::CONTAINER_RUNNING);
  ASSERT_FALSE(s1b.empty());
  EXPECT_EQ(f.fake.GetContainerConfig(s1b)->metadata().attempt(), 1u);

  // KillPod stops the app container before the sidecars, and s2 before s1.
  f.runtime.ClearStops();
  container::PodStatus status = f.Status(pod);
  ASSERT_TRUE(
      f.manager
          ->KillPod(&pod, ConvertPodStatusToRunningPod(f.manager->Type(), status), std::nullopt)
          .ok());
  std::vector<std::string> order;
  std::map<std::string, std::string> names;
  for (const v1::Container& c : ListContainers(f.fake)) names[c.id()] = c.metadata().name();
  for (const auto& stop : f.runtime.stops()) order.push_back(names[stop.id]);
  EXPECT_THAT(order, ElementsAre("app", "s2", "s1"));
  EXPECT_EQ(CountState(f.fake, v1::CONTAINER_RUNNING), 0);
}

TEST(KubeRuntimeManagerTest, FailedInitContainerNeverFailsPod) {
  ManagerFixture f;
  api::Pod pod = MakePod("p", {MakeContainer("app")}, {MakeContainer("init")});
  pod.spec.restart_policy = api::kRestartPolicyNever;
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  ASSERT_TRUE(f.fake.SetContainerExited(IdOf(f.fake, "init", v1::CONTAINER_RUNNING), 3).ok());
  f.clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  EXPECT_EQ(f.fake.CallCount("CreateContainer"), 1);
  EXPECT_EQ(f.fake.GetSandbox(f.fake.sandbox_ids()[0])->state(), v1::SANDBOX_NOTREADY);
}

TEST(KubeRuntimeManagerTest, SpecChangeRestartsContainer) {
  ManagerFixture f;
  api::Pod pod = WebPod();
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  const std::string old_id = IdOf(f.fake, "side", v1::CONTAINER_RUNNING);
  pod.spec.containers[1].image = "busybox:1.37";
  f.clock.Advance(absl::Seconds(1));
  container::PodSyncResult r = f.Sync(pod);
  ASSERT_TRUE(r.Error().ok()) << r.Error();
  EXPECT_NE(FindResult(r, container::SyncResult::Action::kKillContainer, "side"), nullptr);
  EXPECT_EQ(f.fake.GetContainer(old_id)->state(), v1::CONTAINER_EXITED);
  const std::string new_id = IdOf(f.fake, "side", v1::CONTAINER_RUNNING);
  ASSERT_FALSE(new_id.empty());
  EXPECT_EQ(f.fake.GetContainerConfig(new_id)->metadata().attempt(), 1u);
  EXPECT_EQ(f.fake.GetContainerConfig(new_id)->log_path(), "side/1.log");
}

TEST(KubeRuntimeManagerTest, SandboxDiedIsRecreated) {
  ManagerFixture f;
  api::Pod pod = MakePod("p", {MakeContainer("app")});
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  const std::string sb = f.fake.sandbox_ids()[0];
  ASSERT_TRUE(f.fake.StopPodSandbox(sb).ok());
  f.clock.Advance(absl::Seconds(1));
  container::PodSyncResult r = f.Sync(pod);
  ASSERT_TRUE(r.Error().ok()) << r.Error();
  ASSERT_EQ(f.fake.sandbox_ids().size(), 2u);
  EXPECT_EQ(f.fake.GetSandbox(f.fake.sandbox_ids()[1])->metadata().attempt(), 1u);
  EXPECT_EQ(CountState(f.fake, v1::CONTAINER_RUNNING), 1);
}

TEST(KubeRuntimeManagerTest, CrashLoopBackOff) {
  ManagerFixture f;
  api::Pod pod = MakePod("p", {MakeContainer("app")});
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  // First crash: restarted at once.
  f.clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(f.fake.SetContainerExited(IdOf(f.fake, "app", v1::CONTAINER_RUNNING), 1).ok());
  f.clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  ASSERT_FALSE(IdOf(f.fake, "app", v1::CONTAINER_RUNNING).empty());

  const int64_t expected[] = {10, 20, 40, 80, 160, 300, 300};
  for (int64_t backoff : expected) {
    SCOPED_TRACE(backoff);
    ASSERT_TRUE(f.fake.SetContainerExited(IdOf(f.fake, "app", v1::CONTAINER_RUNNING), 1).ok());
    f.clock.Advance(absl::Seconds(1));
    container::PodSyncResult r = f.Sync(pod);
    const container::SyncResult* start =
        FindResult(r, container::SyncResult::Action::kStartContainer, "app");
    ASSERT_NE(start, nullptr);
    EXPECT_EQ(start->reason, kErrCrashLoopBackOff);
    const std::string d = backoff < 60 ? absl::StrCat(backoff, "s")
                                       : absl::StrCat(backoff / 60, "m", backoff % 60, "s");
    EXPECT_EQ(
        start->message,
        absl::StrCat("back-off ", d, " restarting failed container=app pod=p_default(uid-p)"));
    EXPECT_FALSE(r.Error().ok());
    EXPECT_TRUE(IdOf(f.fake, "app", v1::CONTAINER_RUNNING).empty());
    // Just before the back-off ends: still backing off.
    f.clock.Advance(absl::Seconds(backoff - 2));
    EXPECT_EQ(
        FindResult(f.Sync(pod), container::SyncResult::Action::kStartContainer, "app")->reason,
        kErrCrashLoopBackOff);
    f.clock.Advance(absl::Seconds(1));
    r = f.Sync(pod);
    ASSERT_TRUE(r.Error().ok()) << r.Error();
    ASSERT_FALSE(IdOf(f.fake, "app", v1::CONTAINER_RUNNING).empty());
  }
  // Running cleanly for more than 10 minutes resets the back-off.
  f.clock.Advance(absl::Minutes(11));
  ASSERT_TRUE(f.fake.SetContainerExited(IdOf(f.fake, "app", v1::CONTAINER_RUNNING), 1).ok());
  f.clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  ASSERT_TRUE(f.fake.SetContainerExited(IdOf(f.fake, "app", v1::CONTAINER_RUNNING), 1).ok());
  f.clock.Advance(absl::Seconds(1));
  container::PodSyncResult r = f.Sync(pod);
  EXPECT_THAT(FindResult(r, container::SyncResult::Action::kStartContainer, "app")->message,
              HasSubstr("back-off 10s "));
  // ForgetPod drops the state.
  f.manager->ForgetPod(pod.metadata.uid);
  EXPECT_EQ(f.manager->crash_backoff().size(), 0u);
}

TEST(KubeRuntimeManagerTest, RestartCountContinuesFromLogDir) {
  ManagerFixture f;
  api::Pod pod = MakePod("p", {MakeContainer("app")});
  const std::string dir = f.options.pod_logs_dir + "/default_p_uid-p/app";
  ASSERT_TRUE(std::filesystem::create_directories(dir));
  std::ofstream(dir + "/4.log") << "old";
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  EXPECT_EQ(
      f.fake.GetContainerConfig(IdOf(f.fake, "app", v1::CONTAINER_RUNNING))->metadata().attempt(),
      5u);
}

TEST(KubeRuntimeManagerTest, ImagePullErrorsInSyncResult) {
  ManagerFixture f;
  api::Pod pod = MakePod("p", {MakeContainer("app", "busybox:1.36")});
  f.fake.InjectError("PullImage", absl::NotFoundError("PullImage: not found"));
  container::PodSyncResult r = f.Sync(pod);
  const container::SyncResult* s =
      FindResult(r, container::SyncResult::Action::kStartContainer, "app");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->reason, kErrImagePull);
  EXPECT_EQ(r.Error().message(),
            "failed to \"StartContainer\" for \"app\" with ErrImagePull: \"rpc error: code = "
            "NotFound desc = not found\"");
  f.clock.Advance(absl::Seconds(1));
  r = f.Sync(pod);
  EXPECT_EQ(FindResult(r, container::SyncResult::Action::kStartContainer, "app")->reason,
            kErrImagePullBackOff);
  f.clock.Advance(absl::Seconds(10));
  EXPECT_TRUE(f.Sync(pod).Error().ok());
  EXPECT_FALSE(IdOf(f.fake, "app", v1::CONTAINER_RUNNING).empty());
}

TEST(KubeRuntimeManagerTest, CreateAndStartErrors) {
  ManagerFixture f;
  api::Pod pod = MakePod("p", {MakeContainer("app")});
  f.fake.InjectError("CreateContainer", absl::UnknownError("CreateContainer: boom"));
  container::PodSyncResult r = f.Sync(pod);
  const container::SyncResult* s =
      FindResult(r, container::SyncResult::Action::kStartContainer, "app");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->reason, kErrCreateContainer);
  EXPECT_EQ(s->message, "boom");
  f.fake.InjectError("StartContainer", absl::UnknownError("StartContainer: exec failed"));
  f.clock.Advance(absl::Seconds(1));
  r = f.Sync(pod);
  EXPECT_EQ(FindResult(r, container::SyncResult::Action::kStartContainer, "app")->reason,
            kErrRunContainer);
  // A bad env reference: CreateContainerConfigError.
  api::Pod bad = MakePod("bad", {MakeContainer("app")});
  api::EnvVar e;
  e.name = "X";
  e.value_from = api::EnvVarSource{};
  e.value_from->secret_key_ref = api::SecretKeySelector{"s", "k", std::nullopt};
  bad.spec.containers[0].env = {e};
  r = f.Sync(bad);
  s = FindResult(r, container::SyncResult::Action::kStartContainer, "app");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->reason, kErrCreateContainerConfig);
  EXPECT_EQ(s->message, "couldn't get secret default/s, no kubeClient defined");
  // Sandbox failure.
  api::Pod sbfail = MakePod("sbfail", {MakeContainer("app")});
  f.fake.InjectError("RunPodSandbox", absl::UnknownError("RunPodSandbox: cni failed"));
  r = f.Sync(sbfail);
  s = FindResult(r, container::SyncResult::Action::kCreatePodSandbox, "sbfail_default(uid-sbfail)");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->reason, kErrCreatePodSandbox);
  EXPECT_EQ(s->message,
            "Failed to create sandbox for pod \"sbfail_default(uid-sbfail)\": rpc error: code = "
            "Unknown desc = cni failed");
}

TEST(KubeRuntimeManagerTest, KillPodGracePeriods) {
  ManagerFixture f;
  api::Pod pod = MakePod("p", {MakeContainer("app")});
  pod.spec.termination_grace_period_seconds = 45;
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  auto kill = [&](const api::Pod* p, std::optional<int64_t> override_grace) {
    f.runtime.ClearStops();
    container::PodStatus status = f.Status(pod);
    EXPECT_TRUE(
        f.manager
            ->KillPod(p, ConvertPodStatusToRunningPod(f.manager->Type(), status), override_grace)
            .ok());
    std::vector<int64_t> out;
    for (const auto& s : f.runtime.stops()) out.push_back(s.timeout);
    return out;
  };
  EXPECT_THAT(kill(&pod, std::nullopt), ElementsAre(45));
  EXPECT_EQ(f.fake.GetSandbox(f.fake.sandbox_ids()[0])->state(), v1::SANDBOX_NOTREADY);

  // Each scenario on a fresh running pod.
  auto restart = [&] {
    f.clock.Advance(absl::Minutes(6));  // past the crash-loop back-off
    ASSERT_TRUE(f.Sync(pod).Error().ok());
  };
  restart();
  EXPECT_THAT(kill(&pod, 0), ElementsAre(2));  // minimum 2s
  restart();
  EXPECT_THAT(kill(&pod, 7), ElementsAre(7));
  restart();
  api::Pod deleting = pod;
  deleting.metadata.deletion_grace_period_seconds = 12;
  EXPECT_THAT(kill(&deleting, std::nullopt), ElementsAre(12));
  // Orphans: the grace period comes from the container's annotations.
  restart();
  EXPECT_THAT(kill(nullptr, std::nullopt), ElementsAre(45));
}

TEST(KubeRuntimeManagerTest, PreStopHookConsumesGrace) {
  Options opts;
  std::vector<std::string> hooks;
  FakeClock* clock = nullptr;
  opts.run_lifecycle_handler = [&](const container::ContainerID&, const api::Pod&,
                                   const api::Container& c, const api::LifecycleHandler& h,
                                   absl::Duration timeout) {
    hooks.push_back(c.name + ":" + (h.exec ? h.exec->command[0] : "") + ":" +
                    std::to_string(absl::ToInt64Seconds(timeout)));
    if (clock != nullptr) clock->Advance(absl::Seconds(10));
    return absl::OkStatus();
  };
  ManagerFixture f(opts);
  clock = &f.clock;
  api::Container c = MakeContainer("app");
  api::LifecycleHandler pre;
  pre.exec = api::ExecAction{{"drain"}};
  c.lifecycle = api::Lifecycle{};
  c.lifecycle->pre_stop = pre;
  api::Pod pod = MakePod("p", {c});
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  container::PodStatus status = f.Status(pod);
  // Orphan kill: the preStop handler is restored from the annotation.
  ASSERT_TRUE(
      f.manager->KillPod(nullptr, ConvertPodStatusToRunningPod("x", status), std::nullopt).ok());
  EXPECT_THAT(hooks, ElementsAre("app:drain:30"));
  ASSERT_EQ(f.runtime.stops().size(), 1u);
  EXPECT_EQ(f.runtime.stops()[0].timeout, 20);
}

TEST(KubeRuntimeManagerTest, PostStartFailureKillsContainer) {
  Options opts;
  opts.run_lifecycle_handler = [](const container::ContainerID&, const api::Pod&,
                                  const api::Container&, const api::LifecycleHandler&,
                                  absl::Duration) { return absl::UnknownError("hook failed"); };
  ManagerFixture f(opts);
  api::Container c = MakeContainer("app");
  c.lifecycle = api::Lifecycle{};
  c.lifecycle->post_start = api::LifecycleHandler{api::ExecAction{{"x"}}, {}, {}};
  api::Pod pod = MakePod("p", {c});
  container::PodSyncResult r = f.Sync(pod);
  const container::SyncResult* s =
      FindResult(r, container::SyncResult::Action::kStartContainer, "app");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->reason, kErrPostStartHook);
  EXPECT_EQ(CountState(f.fake, v1::CONTAINER_RUNNING), 0);
}

TEST(KubeRuntimeManagerTest, TerminationMessageRead) {
  ManagerFixture f;
  api::Pod pod = MakePod("p", {MakeContainer("app")});
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  const std::string id = IdOf(f.fake, "app", v1::CONTAINER_RUNNING);
  std::optional<v1::ContainerConfig> cfg = f.fake.GetContainerConfig(id);
  std::string file;
  for (const v1::Mount& m : cfg->mounts()) {
    if (m.container_path() == "/dev/termination-log") file = m.host_path();
  }
  ASSERT_FALSE(file.empty());
  std::ofstream(file) << "bye";
  ASSERT_TRUE(f.fake.SetContainerExited(id, 2).ok());
  container::PodStatus s = f.Status(pod);
  const container::ContainerStatus* app = s.FindContainerStatusByName("app");
  ASSERT_NE(app, nullptr);
  EXPECT_EQ(app->state, State::kExited);
  EXPECT_EQ(app->exit_code, 2);
  EXPECT_EQ(app->reason, "Error");
  EXPECT_EQ(app->message, "bye");
}

TEST(KubeRuntimeManagerTest, TerminationMessageFallsBackToLogs) {
  ManagerFixture f;
  api::Container c = MakeContainer("app");
  c.termination_message_policy = api::kTerminationMessageFallbackToLogsOnError;
  api::Pod pod = MakePod("p", {c});
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  const std::string id = IdOf(f.fake, "app", v1::CONTAINER_RUNNING);
  const std::string log = f.fake.GetContainer(id)->log_path();
  ASSERT_FALSE(log.empty());
  std::ofstream(log) << "2023-11-22T01:02:03.000000001Z stdout F line one\n"
                     << "2023-11-22T01:02:03.000000002Z stderr P part-\n"
                     << "2023-11-22T01:02:03.000000003Z stderr F two\n";
  ASSERT_TRUE(f.fake.SetContainerExited(id, 1).ok());
  container::PodStatus s = f.Status(pod);
  EXPECT_EQ(s.FindContainerStatusByName("app")->message, "line one\npart-two\n");
}

TEST(KubeRuntimeManagerTest, GarbageCollect) {
  FakePodState state;
  ManagerFixture f(Options{}, &state);
  api::Pod pod = MakePod("p", {MakeContainer("app")});
  pod.spec.restart_policy = api::kRestartPolicyAlways;
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  // Three dead instances, each restarted once the back-off passed.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(f.fake.SetContainerExited(IdOf(f.fake, "app", v1::CONTAINER_RUNNING), 1).ok());
    f.clock.Advance(absl::Minutes(6));
    ASSERT_TRUE(f.Sync(pod).Error().ok());
  }
  ASSERT_EQ(CountState(f.fake, v1::CONTAINER_EXITED), 3);
  container::GCPolicy policy;
  policy.min_age = absl::Minutes(1);
  policy.max_per_pod_container = 1;
  ASSERT_TRUE(f.manager->GarbageCollect(policy, true).ok());
  // The newest dead instance is kept (the younger-than-min_age rule does not apply here).
  EXPECT_EQ(CountState(f.fake, v1::CONTAINER_EXITED), 1);
  EXPECT_EQ(CountState(f.fake, v1::CONTAINER_RUNNING), 1);

  // The pod is killed: its sandbox stays while containers remain.
  container::PodStatus status = f.Status(pod);
  ASSERT_TRUE(
      f.manager
          ->KillPod(&pod, ConvertPodStatusToRunningPod(f.manager->Type(), status), std::nullopt)
          .ok());
  f.clock.Advance(absl::Minutes(2));
  ASSERT_TRUE(f.manager->GarbageCollect(policy, true).ok());
  EXPECT_EQ(f.fake.sandbox_ids().size(), 1u);
  // Deleted pod, but sources not ready: containers stay.
  state.removed.insert(pod.metadata.uid);
  ASSERT_TRUE(f.manager->GarbageCollect(policy, false).ok());
  EXPECT_EQ(ListContainers(f.fake).size(), 1u);
  const std::string log_dir = f.options.pod_logs_dir + "/default_p_uid-p";
  EXPECT_TRUE(IsDir(log_dir));
  // All sources ready: everything of the pod goes, logs included.
  ASSERT_TRUE(f.manager->GarbageCollect(policy, true).ok());
  EXPECT_THAT(ListContainers(f.fake), IsEmpty());
  EXPECT_THAT(f.fake.sandbox_ids(), IsEmpty());
  EXPECT_FALSE(IsDir(log_dir));
}

TEST(KubeRuntimeManagerTest, GarbageCollectMaxContainers) {
  ManagerFixture f;
  api::Pod a = MakePod("a", {MakeContainer("app")});
  api::Pod b = MakePod("b", {MakeContainer("app")});
  for (const api::Pod* p : {&a, &b}) ASSERT_TRUE(f.Sync(*p).Error().ok());
  for (int i = 0; i < 3; ++i) {
    for (const v1::Container& c : ListContainers(f.fake)) {
      if (c.state() == v1::CONTAINER_RUNNING)
        ASSERT_TRUE(f.fake.SetContainerExited(c.id(), 1).ok());
    }
    f.clock.Advance(absl::Minutes(6));
    for (const api::Pod* p : {&a, &b}) ASSERT_TRUE(f.Sync(*p).Error().ok());
  }
  ASSERT_EQ(CountState(f.fake, v1::CONTAINER_EXITED), 6);
  container::GCPolicy policy;
  policy.max_per_pod_container = -1;
  policy.max_containers = 3;
  ASSERT_TRUE(f.manager->GarbageCollect(policy, true).ok());
  // An equal share per (pod, container): 3 / 2 units = 1 each.
  EXPECT_EQ(CountState(f.fake, v1::CONTAINER_EXITED), 2);
  EXPECT_EQ(CountState(f.fake, v1::CONTAINER_RUNNING), 2);
  policy.max_containers = 1;
  ASSERT_TRUE(f.manager->GarbageCollect(policy, true).ok());
  EXPECT_EQ(CountState(f.fake, v1::CONTAINER_EXITED), 1);
}

TEST(KubeRuntimeManagerTest, GarbageCollectKeepsNewestSandbox) {
  ManagerFixture f;
  api::Pod pod = MakePod("p", {MakeContainer("app")});
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(f.fake.StopPodSandbox(f.fake.sandbox_ids().back()).ok());
    f.clock.Advance(absl::Minutes(1));
    ASSERT_TRUE(f.Sync(pod).Error().ok());
  }
  ASSERT_EQ(f.fake.sandbox_ids().size(), 3u);
  container::GCPolicy policy;
  policy.max_per_pod_container = 0;
  ASSERT_TRUE(f.manager->GarbageCollect(policy, true).ok());
  // Dead containers removed first, then the two dead sandboxes; the ready one stays.
  EXPECT_EQ(f.fake.sandbox_ids().size(), 1u);
  EXPECT_EQ(CountState(f.fake, v1::CONTAINER_RUNNING), 1);
}

TEST(KubeRuntimeManagerTest, HostNetworkPod) {
  ManagerFixture f;
  api::Pod pod = MakePod("p", {MakeContainer("app")});
  pod.spec.host_network = true;
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  std::optional<v1::PodSandboxStatus> sb = f.fake.GetSandbox(f.fake.sandbox_ids()[0]);
  EXPECT_EQ(sb->linux().namespaces().options().network(), v1::NODE);
  // No IP for a host-network sandbox is fine: nothing to do on the next sync.
  f.fake.ClearCalls();
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  EXPECT_EQ(f.fake.CallCount("RunPodSandbox"), 0);
  EXPECT_EQ(f.fake.CallCount("CreateContainer"), 0);
}

}  // namespace
}  // namespace kubelet::kuberuntime

namespace kubelet::kuberuntime {
namespace {

using testing::ManagerFixture;

// The events a user reads in `kubectl describe pod`, with upstream's reasons and messages.
TEST(KubeRuntimeManagerEventsTest, LifecycleOfAContainerIsRecorded) {
  events::FakeRecorder recorder;
  Options opts;
  opts.recorder = &recorder;
  bool liveness_failed = false;
  opts.liveness_failed = [&](const container::ContainerID&) { return liveness_failed; };
  ManagerFixture f(opts);
  api::Container c = testing::MakeContainer("app");
  c.image_pull_policy = "IfNotPresent";
  c.liveness_probe = api::Probe{};
  c.liveness_probe->exec = api::ExecAction{{"true"}};
  api::Pod pod = testing::MakePod("p", {c});
  ASSERT_TRUE(f.Sync(pod).Error().ok());
  std::vector<std::string> got = recorder.Strings();
  // "already present on machine" or "Successfully pulled", as the fake runtime has the image.
  EXPECT_THAT(got, ::testing::Contains(::testing::HasSubstr("Normal Pulled ")));
  EXPECT_THAT(got, ::testing::Contains("Normal Created Created container app"));
  EXPECT_THAT(got, ::testing::Contains("Normal Started Started container app"));
  auto started = recorder.WithReason(events::kStartedContainer);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].object.field_path, "spec.containers{app}");
  EXPECT_EQ(started[0].object.name, "p");
  EXPECT_EQ(started[0].object.uid, "uid-p");

  // A failed liveness probe: the container is killed with upstream's message.
  liveness_failed = true;
  f.clock.Advance(absl::Seconds(1));
  f.Sync(pod);
  auto killing = recorder.WithReason(events::kKillingContainer);
  ASSERT_FALSE(killing.empty());
  EXPECT_EQ(killing[0].type, "Normal");
  EXPECT_EQ(killing[0].message, "Container app failed liveness probe, will be restarted");
  liveness_failed = false;

  // Crash looping: a BackOff warning naming the container and the pod.
  for (int i = 0; i < 3; ++i) {
    std::string id = IdOf(f.fake, "app", v1::CONTAINER_RUNNING);
    if (!id.empty()) ASSERT_TRUE(f.fake.SetContainerExited(id, 1).ok());
    f.clock.Advance(absl::Seconds(1));
    f.Sync(pod);
  }
  auto backoff = recorder.WithReason(events::kBackOffStartContainer);
  ASSERT_FALSE(backoff.empty());
  EXPECT_EQ(backoff[0].type, "Warning");
  EXPECT_EQ(backoff[0].message, "Back-off restarting failed container app in pod p_default(uid-p)");
}

TEST(KubeRuntimeManagerEventsTest, HookFailuresAndNeverPullAreWarnings) {
  events::FakeRecorder recorder;
  Options opts;
  opts.recorder = &recorder;
  opts.run_lifecycle_handler = [](const container::ContainerID&, const api::Pod&,
                                  const api::Container&, const api::LifecycleHandler&,
                                  absl::Duration) { return absl::UnknownError("hook failed"); };
  ManagerFixture f(opts);
  api::Container c = testing::MakeContainer("app");
  c.lifecycle = api::Lifecycle{};
  c.lifecycle->post_start = api::LifecycleHandler{api::ExecAction{{"x"}}, {}, {}};
  api::Container never = testing::MakeContainer("never");
  never.image = "example.invalid/absent:1";
  never.image_pull_policy = "Never";
  api::Pod pod = testing::MakePod("p", {c, never});
  f.Sync(pod);
  auto hook = recorder.WithReason(events::kFailedPostStartHook);
  ASSERT_EQ(hook.size(), 1u);
  EXPECT_EQ(hook[0].type, "Warning");
  EXPECT_EQ(hook[0].message, "hook failed");
  EXPECT_EQ(hook[0].object.field_path, "spec.containers{app}");
  // The container the failed hook belonged to is killed with the hook's reason.
  EXPECT_FALSE(recorder.WithReason(events::kKillingContainer).empty());
  auto never_pull = recorder.WithReason(events::kErrImageNeverPull);
  ASSERT_EQ(never_pull.size(), 1u);
  EXPECT_EQ(never_pull[0].message,
            "Container image \"example.invalid/absent:1\" is not present with pull policy of "
            "Never");
  EXPECT_EQ(never_pull[0].object.field_path, "spec.containers{never}");
}

}  // namespace
}  // namespace kubelet::kuberuntime
