#include "cri/sim/sim_runtime.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::cri {
namespace {

namespace v1 = ::runtime::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr int64_t kMiB = int64_t{1} << 20;

v1::PodSandboxConfig SandboxConfig(const std::string& name,
                                   std::map<std::string, std::string> annotations = {}) {
  v1::PodSandboxConfig config;
  const std::string uid = "uid-" + name;
  config.mutable_metadata()->set_name(name);
  config.mutable_metadata()->set_namespace_("default");
  config.mutable_metadata()->set_uid(uid);
  config.set_log_directory("/var/log/pods/default_" + name + "_" + uid);
  (*config.mutable_labels())["io.kubernetes.pod.uid"] = uid;
  (*config.mutable_labels())["io.kubernetes.pod.name"] = name;
  for (const auto& [k, v] : annotations) (*config.mutable_annotations())[k] = v;
  return config;
}

v1::PodSandboxConfig HostNetwork(v1::PodSandboxConfig config) {
  config.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_network(
      v1::NODE);
  return config;
}

v1::ContainerConfig ContainerConfig(const std::string& name) {
  v1::ContainerConfig config;
  config.mutable_metadata()->set_name(name);
  config.mutable_image()->set_image("busybox:1.36");
  config.set_log_path(name + "/0.log");
  (*config.mutable_labels())["io.kubernetes.container.name"] = name;
  (*config.mutable_annotations())["io.kubernetes.container.hash"] = "1234";
  (*config.mutable_mounts()->Add()).set_container_path("/data");
  return config;
}

class SimRuntimeTest : public ::testing::Test {
 protected:
  SimRuntimeOptions Options() {
    SimRuntimeOptions options;
    options.now = [this] { return now_; };
    options.sleep = [this](absl::Duration d) {
      sleeps_.push_back(d);
      now_ += d;
    };
    return options;
  }
  void Make(SimRuntimeOptions options) { rt_ = std::make_unique<SimRuntime>(std::move(options)); }
  void SetUp() override { Make(Options()); }

  std::string RunSandbox(const v1::PodSandboxConfig& config) {
    absl::StatusOr<std::string> id = rt_->RunPodSandbox(config, "");
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }
  std::string SandboxIp(const std::string& id) {
    absl::StatusOr<v1::PodSandboxStatusResponse> st = rt_->PodSandboxStatus(id, false);
    EXPECT_TRUE(st.ok()) << st.status();
    return st.ok() ? st->status().network().ip() : "";
  }
  // Creates and starts container `name` in the sandbox made from `config`.
  std::string StartContainer(const std::string& sandbox_id, const v1::PodSandboxConfig& config,
                             const std::string& name) {
    absl::StatusOr<std::string> id =
        rt_->CreateContainer(sandbox_id, ContainerConfig(name), config);
    EXPECT_TRUE(id.ok()) << id.status();
    if (!id.ok()) return "";
    EXPECT_TRUE(rt_->StartContainer(*id).ok());
    return *id;
  }
  v1::ContainerStatus Status(const std::string& id) {
    absl::StatusOr<v1::ContainerStatusResponse> st = rt_->ContainerStatus(id, false);
    EXPECT_TRUE(st.ok()) << st.status();
    return st.ok() ? st->status() : v1::ContainerStatus();
  }
  int64_t NowNanos() const { return absl::ToUnixNanos(now_); }

  absl::Time now_ = absl::FromUnixSeconds(1700000000);
  std::vector<absl::Duration> sleeps_;
  std::unique_ptr<SimRuntime> rt_;
};

// ---- Options ----------------------------------------------------------------------------------

TEST(SimRuntimeOptionsTest, Validate) {
  EXPECT_TRUE(ValidateSimRuntimeOptions(SimRuntimeOptions()).ok());
  for (const char* bad : {"", "10.64.0.0", "10.64.0.0/33", "10.64.0/24", "10.64.0.256/24",
                          "10.064.0.0/24", "fd00::/64", "10.64.0.0/24x", "a.b.c.d/8"}) {
    SimRuntimeOptions options;
    options.pod_cidr = bad;
    EXPECT_EQ(ValidateSimRuntimeOptions(options).code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  SimRuntimeOptions negative;
  negative.start_delay = absl::Seconds(-1);
  EXPECT_FALSE(ValidateSimRuntimeOptions(negative).ok());
}

TEST_F(SimRuntimeTest, InvalidCidrFailsOnlyPodsThatNeedAnIp) {
  SimRuntimeOptions options = Options();
  options.pod_cidr = "not-a-cidr";
  Make(options);
  absl::StatusOr<std::string> id = rt_->RunPodSandbox(SandboxConfig("a"), "");
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(id.status().message(), HasSubstr("not-a-cidr"));
  EXPECT_TRUE(rt_->RunPodSandbox(HostNetwork(SandboxConfig("b")), "").ok());
}

TEST_F(SimRuntimeTest, VersionAndStatus) {
  SimRuntimeOptions options = Options();
  options.runtime_name = "hollow-x";
  options.runtime_version = "9.9.9";
  Make(options);
  absl::StatusOr<v1::VersionResponse> v = rt_->Version("0.1.0");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->runtime_name(), "hollow-x");
  EXPECT_EQ(v->runtime_version(), "9.9.9");
  EXPECT_EQ(v->runtime_api_version(), "v1");
  EXPECT_EQ(v->version(), kKubeRuntimeAPIVersion);
  absl::StatusOr<v1::StatusResponse> st = rt_->Status(false);
  ASSERT_TRUE(st.ok());
  ASSERT_THAT(st->status().conditions(), SizeIs(2));
  for (const v1::RuntimeCondition& c : st->status().conditions()) EXPECT_TRUE(c.status());
  EXPECT_EQ(st->status().conditions(0).type(), "RuntimeReady");
  EXPECT_EQ(st->status().conditions(1).type(), "NetworkReady");
}

// ---- Sandboxes and IPs ------------------------------------------------------------------------

TEST_F(SimRuntimeTest, IpsAllocatedSequentiallyAndReused) {
  const std::string a = RunSandbox(SandboxConfig("a"));
  const std::string b = RunSandbox(SandboxConfig("b"));
  const std::string c = RunSandbox(SandboxConfig("c"));
  EXPECT_EQ(SandboxIp(a), "10.64.0.2");
  EXPECT_EQ(SandboxIp(b), "10.64.0.3");
  EXPECT_EQ(SandboxIp(c), "10.64.0.4");
  EXPECT_LT(a, b);  // ids sort in creation order
  EXPECT_EQ(a.size(), 64u);

  ASSERT_TRUE(rt_->StopPodSandbox(b).ok());
  EXPECT_EQ(SandboxIp(b), "");  // released
  EXPECT_EQ(SandboxIp(RunSandbox(SandboxConfig("d"))), "10.64.0.3");
  ASSERT_TRUE(rt_->RemovePodSandbox(a).ok());  // removal without a stop releases too
  EXPECT_EQ(SandboxIp(RunSandbox(SandboxConfig("e"))), "10.64.0.2");
  EXPECT_EQ(SandboxIp(RunSandbox(SandboxConfig("f"))), "10.64.0.5");
  // A stopped sandbox's IP is released once only.
  ASSERT_TRUE(rt_->StopPodSandbox(c).ok());
  ASSERT_TRUE(rt_->StopPodSandbox(c).ok());
  ASSERT_TRUE(rt_->RemovePodSandbox(c).ok());
  EXPECT_EQ(SandboxIp(RunSandbox(SandboxConfig("g"))), "10.64.0.4");
  EXPECT_EQ(SandboxIp(RunSandbox(SandboxConfig("h"))), "10.64.0.6");
}

TEST_F(SimRuntimeTest, CidrExhaustion) {
  SimRuntimeOptions options = Options();
  options.pod_cidr = "192.168.7.9/29";  // host bits are ignored: 192.168.7.8/29
  Make(options);
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(RunSandbox(SandboxConfig(absl::StrCat("p", i))));
  EXPECT_EQ(SandboxIp(ids.front()), "192.168.7.10");
  EXPECT_EQ(SandboxIp(ids.back()), "192.168.7.14");  // .15 is the broadcast address
  absl::StatusOr<std::string> full = rt_->RunPodSandbox(SandboxConfig("full"), "");
  EXPECT_EQ(full.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(full.status().message(), HasSubstr("192.168.7.9/29"));
  // Host network pods need no address.
  EXPECT_TRUE(rt_->RunPodSandbox(HostNetwork(SandboxConfig("host")), "").ok());
  // A freed address makes room again.
  ASSERT_TRUE(rt_->RemovePodSandbox(ids[2]).ok());
  EXPECT_EQ(SandboxIp(RunSandbox(SandboxConfig("full"))), "192.168.7.12");
}

TEST_F(SimRuntimeTest, CidrsWithoutUsableAddresses) {
  for (const char* cidr : {"10.0.0.7/32", "10.0.0.6/31", "10.0.0.4/30"}) {
    SimRuntimeOptions options = Options();
    options.pod_cidr = cidr;
    Make(options);
    if (std::string(cidr) == "10.0.0.4/30") {
      // Network .4, gateway .5, broadcast .7: one address.
      EXPECT_EQ(SandboxIp(RunSandbox(SandboxConfig("a"))), "10.0.0.6");
    }
    EXPECT_EQ(rt_->RunPodSandbox(SandboxConfig("b"), "").status().code(),
              absl::StatusCode::kResourceExhausted)
        << cidr;
  }
}

TEST_F(SimRuntimeTest, HostNetworkHasNoIp) {
  const std::string id = RunSandbox(HostNetwork(SandboxConfig("host")));
  EXPECT_EQ(SandboxIp(id), "");
  EXPECT_EQ(SandboxIp(RunSandbox(SandboxConfig("pod"))), "10.64.0.2");
}

TEST_F(SimRuntimeTest, SandboxStatusAndDuplicates) {
  v1::PodSandboxConfig config = SandboxConfig("a", {{"team", "x"}});
  absl::StatusOr<std::string> id = rt_->RunPodSandbox(config, "runc");
  ASSERT_TRUE(id.ok());
  absl::StatusOr<v1::PodSandboxStatusResponse> st = rt_->PodSandboxStatus(*id, false);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->status().id(), *id);
  EXPECT_EQ(st->status().state(), v1::SANDBOX_READY);
  EXPECT_EQ(st->status().metadata().name(), "a");
  EXPECT_EQ(st->status().created_at(), NowNanos());
  EXPECT_EQ(st->status().annotations().at("team"), "x");
  EXPECT_EQ(st->status().runtime_handler(), "runc");

  EXPECT_EQ(rt_->RunPodSandbox(config, "").status().code(), absl::StatusCode::kAlreadyExists);
  config.mutable_metadata()->set_attempt(1);
  EXPECT_TRUE(rt_->RunPodSandbox(config, "").ok());

  EXPECT_EQ(rt_->PodSandboxStatus("nope", false).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rt_->StopPodSandbox("nope").code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(rt_->RemovePodSandbox("nope").ok());
  EXPECT_EQ(rt_->RunPodSandbox(v1::PodSandboxConfig(), "").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(SimRuntimeTest, StopPodSandboxStopsContainersAndFreesIp) {
  const v1::PodSandboxConfig config =
      SandboxConfig("a", {{SimRuntime::kExitAfterAnnotation, "5s"}});
  const std::string sb = RunSandbox(config);
  const std::string running = StartContainer(sb, config, "app");
  now_ += absl::Seconds(10);  // app's exit is due but not yet applied
  const std::string late = StartContainer(sb, config, "late");
  now_ += absl::Seconds(1);
  absl::StatusOr<std::string> created = rt_->CreateContainer(sb, ContainerConfig("idle"), config);
  ASSERT_TRUE(created.ok());

  ASSERT_TRUE(rt_->StopPodSandbox(sb).ok());
  absl::StatusOr<v1::PodSandboxStatusResponse> st = rt_->PodSandboxStatus(sb, false);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->status().state(), v1::SANDBOX_NOTREADY);
  EXPECT_EQ(st->status().network().ip(), "");
  ASSERT_THAT(st->containers_statuses(), SizeIs(3));

  // The exit that was due keeps its own time and code; the running one is killed.
  const v1::ContainerStatus app = Status(running);
  EXPECT_EQ(app.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(app.exit_code(), 0);
  EXPECT_EQ(app.reason(), "Completed");
  EXPECT_EQ(app.finished_at(), app.started_at() + absl::ToInt64Nanoseconds(absl::Seconds(5)));
  const v1::ContainerStatus killed = Status(late);
  EXPECT_EQ(killed.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(killed.exit_code(), SimRuntime::kKilledExitCode);
  EXPECT_EQ(killed.reason(), "Error");
  EXPECT_EQ(killed.finished_at(), NowNanos());
  EXPECT_EQ(Status(*created).state(), v1::CONTAINER_CREATED);

  // Nothing new starts in a stopped sandbox.
  EXPECT_EQ(rt_->StartContainer(*created).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(rt_->CreateContainer(sb, ContainerConfig("more"), config).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(rt_->Counts(), (SimRuntimeCounts{1, 0, 3, 0}));
  EXPECT_EQ(SandboxIp(RunSandbox(SandboxConfig("b"))), "10.64.0.2");
}

TEST_F(SimRuntimeTest, RemovePodSandboxRemovesContainers) {
  const v1::PodSandboxConfig config = SandboxConfig("a");
  const std::string sb = RunSandbox(config);
  const std::string other_sb = RunSandbox(SandboxConfig("b"));
  const std::string c1 = StartContainer(sb, config, "one");
  const std::string c2 = StartContainer(sb, config, "two");
  const std::string keep = StartContainer(other_sb, SandboxConfig("b"), "three");
  EXPECT_EQ(rt_->Counts(), (SimRuntimeCounts{2, 2, 3, 3}));

  ASSERT_TRUE(rt_->RemovePodSandbox(sb).ok());
  ASSERT_TRUE(rt_->RemovePodSandbox(sb).ok());  // idempotent
  EXPECT_EQ(rt_->ContainerStatus(c1, false).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rt_->ContainerStatus(c2, false).status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<std::vector<v1::Container>> list = rt_->ListContainers(nullptr);
  ASSERT_TRUE(list.ok());
  ASSERT_THAT(*list, SizeIs(1));
  EXPECT_EQ((*list)[0].id(), keep);
  EXPECT_EQ(rt_->Counts(), (SimRuntimeCounts{1, 1, 1, 1}));
}

// ---- Containers -------------------------------------------------------------------------------

TEST_F(SimRuntimeTest, ContainerLifecycle) {
  const v1::PodSandboxConfig config = SandboxConfig("a");
  const std::string sb = RunSandbox(config);
  v1::ContainerConfig cc = ContainerConfig("app");
  cc.mutable_linux()->mutable_resources()->set_cpu_shares(512);
  absl::StatusOr<std::string> id = rt_->CreateContainer(sb, cc, config);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(rt_->CreateContainer(sb, cc, config).status().code(), absl::StatusCode::kAlreadyExists);

  v1::ContainerStatus st = Status(*id);
  EXPECT_EQ(st.state(), v1::CONTAINER_CREATED);
  EXPECT_EQ(st.created_at(), NowNanos());
  EXPECT_EQ(st.image().image(), "busybox:1.36");
  EXPECT_EQ(st.image_ref(), "busybox:1.36");  // never pulled
  EXPECT_EQ(st.labels().at("io.kubernetes.container.name"), "app");
  EXPECT_EQ(st.annotations().at("io.kubernetes.container.hash"), "1234");
  EXPECT_EQ(st.log_path(), config.log_directory() + "/app/0.log");
  EXPECT_THAT(st.mounts(), IsEmpty());
  EXPECT_EQ(st.resources().linux().cpu_shares(), 512);

  now_ += absl::Seconds(1);
  ASSERT_TRUE(rt_->StartContainer(*id).ok());
  EXPECT_EQ(rt_->StartContainer(*id).code(), absl::StatusCode::kFailedPrecondition);
  st = Status(*id);
  EXPECT_EQ(st.state(), v1::CONTAINER_RUNNING);
  EXPECT_EQ(st.started_at(), NowNanos());
  EXPECT_THAT(sleeps_, IsEmpty());  // no delay, no sleep

  v1::ContainerResources res;
  res.mutable_linux()->set_memory_limit_in_bytes(64 * kMiB);
  ASSERT_TRUE(rt_->UpdateContainerResources(*id, res).ok());
  EXPECT_EQ(Status(*id).resources().linux().memory_limit_in_bytes(), 64 * kMiB);
  EXPECT_TRUE(rt_->ReopenContainerLog(*id).ok());

  now_ += absl::Seconds(1);
  ASSERT_TRUE(rt_->StopContainer(*id, 30).ok());
  st = Status(*id);
  EXPECT_EQ(st.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(st.exit_code(), 0);
  EXPECT_EQ(st.reason(), "Completed");
  EXPECT_EQ(st.finished_at(), NowNanos());
  ASSERT_TRUE(rt_->StopContainer(*id, 30).ok());  // no-op
  EXPECT_EQ(Status(*id).finished_at(), NowNanos());

  ASSERT_TRUE(rt_->RemoveContainer(*id).ok());
  ASSERT_TRUE(rt_->RemoveContainer(*id).ok());
  EXPECT_EQ(rt_->ContainerStatus(*id, false).status().code(), absl::StatusCode::kNotFound);
  // The name is free again once the container is gone.
  EXPECT_TRUE(rt_->CreateContainer(sb, cc, config).ok());
}

TEST_F(SimRuntimeTest, UnknownIds) {
  EXPECT_EQ(rt_->StartContainer("x").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rt_->StopContainer("x", 1).code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(rt_->RemoveContainer("x").ok());
  EXPECT_EQ(rt_->ContainerStatus("x", false).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rt_->ContainerStats("x").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rt_->PodSandboxStats("x").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rt_->ExecSync("x", {"true"}, absl::ZeroDuration()).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(rt_->UpdateContainerResources("x", {}).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rt_->ReopenContainerLog("x").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rt_->CreateContainer("x", ContainerConfig("a"), SandboxConfig("a")).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(SimRuntimeTest, ExitAfterAppliedLazilyOnList) {
  const v1::PodSandboxConfig config = SandboxConfig(
      "a", {{SimRuntime::kExitAfterAnnotation, "1m30s"}, {SimRuntime::kExitCodeAnnotation, "3"}});
  const std::string sb = RunSandbox(config);
  const std::string id = StartContainer(sb, config, "app");
  const int64_t started = NowNanos();

  now_ += absl::Seconds(89);
  v1::ContainerFilter running;
  running.mutable_state()->set_state(v1::CONTAINER_RUNNING);
  absl::StatusOr<std::vector<v1::Container>> list = rt_->ListContainers(&running);
  ASSERT_TRUE(list.ok());
  EXPECT_THAT(*list, SizeIs(1));

  now_ += absl::Minutes(5);  // read long after the exit time
  list = rt_->ListContainers(&running);
  ASSERT_TRUE(list.ok());
  EXPECT_THAT(*list, IsEmpty());
  list = rt_->ListContainers(nullptr);
  ASSERT_TRUE(list.ok());
  ASSERT_THAT(*list, SizeIs(1));
  EXPECT_EQ((*list)[0].state(), v1::CONTAINER_EXITED);

  const v1::ContainerStatus st = Status(id);
  EXPECT_EQ(st.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(st.exit_code(), 3);
  EXPECT_EQ(st.reason(), "Error");
  EXPECT_EQ(st.finished_at(), started + absl::ToInt64Nanoseconds(absl::Seconds(90)));
  EXPECT_EQ(rt_->Counts(), (SimRuntimeCounts{1, 1, 1, 0}));
}

TEST_F(SimRuntimeTest, ExitAfterAppliedLazilyOnStatus) {
  const v1::PodSandboxConfig config =
      SandboxConfig("a", {{SimRuntime::kExitAfterAnnotation, "2s"}});
  const std::string sb = RunSandbox(config);
  const std::string id = StartContainer(sb, config, "app");
  const int64_t started = NowNanos();
  now_ += absl::Milliseconds(1999);
  EXPECT_EQ(Status(id).state(), v1::CONTAINER_RUNNING);
  now_ += absl::Milliseconds(1);  // exactly at the exit time
  const v1::ContainerStatus st = Status(id);
  EXPECT_EQ(st.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(st.exit_code(), 0);
  EXPECT_EQ(st.reason(), "Completed");
  EXPECT_EQ(st.finished_at(), started + absl::ToInt64Nanoseconds(absl::Seconds(2)));
  // An exited container cannot be exec'd into; stopping it is a no-op that keeps its code.
  EXPECT_EQ(rt_->ExecSync(id, {"true"}, absl::ZeroDuration()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(rt_->StopContainer(id, 0).ok());
  EXPECT_EQ(Status(id).finished_at(), st.finished_at());
}

TEST_F(SimRuntimeTest, NoExitAfterMeansRunningForever) {
  const v1::PodSandboxConfig config = SandboxConfig("a");
  const std::string id = StartContainer(RunSandbox(config), config, "app");
  now_ += absl::Hours(24 * 365);
  EXPECT_EQ(Status(id).state(), v1::CONTAINER_RUNNING);
}

TEST_F(SimRuntimeTest, PerContainerOverrides) {
  const v1::PodSandboxConfig config = SandboxConfig("a", {{SimRuntime::kExitAfterAnnotation, "1h"},
                                                          {SimRuntime::kExitCodeAnnotation, "1"},
                                                          {"hollow.kubelet/exit-after-init", "0s"},
                                                          {"hollow.kubelet/exit-code-init", "0"},
                                                          {"hollow.kubelet/exit-code-side", "42"}});
  const std::string sb = RunSandbox(config);
  const std::string init = StartContainer(sb, config, "init");
  const std::string side = StartContainer(sb, config, "side");
  const std::string app = StartContainer(sb, config, "app");

  v1::ContainerStatus st = Status(init);  // 0s: exited on the first read
  EXPECT_EQ(st.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(st.exit_code(), 0);
  EXPECT_EQ(st.reason(), "Completed");
  EXPECT_EQ(st.finished_at(), st.started_at());
  EXPECT_EQ(Status(side).state(), v1::CONTAINER_RUNNING);
  EXPECT_EQ(Status(app).state(), v1::CONTAINER_RUNNING);

  now_ += absl::Hours(1);
  st = Status(side);
  EXPECT_EQ(st.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(st.exit_code(), 42);
  EXPECT_EQ(st.reason(), "Error");
  st = Status(app);
  EXPECT_EQ(st.exit_code(), 1);
  EXPECT_EQ(st.reason(), "Error");
}

TEST_F(SimRuntimeTest, SettingsComeFromTheCreateContainerConfig) {
  // The pod was annotated after its sandbox was made: a new container sees the edit.
  const v1::PodSandboxConfig original = SandboxConfig("a");
  const std::string sb = RunSandbox(original);
  const v1::PodSandboxConfig edited =
      SandboxConfig("a", {{SimRuntime::kExitAfterAnnotation, "1s"}});
  const std::string before = StartContainer(sb, original, "before");
  const std::string after = StartContainer(sb, edited, "after");
  // A config without annotations falls back to the sandbox's.
  const v1::PodSandboxConfig annotated =
      SandboxConfig("b", {{SimRuntime::kExitAfterAnnotation, "1s"}});
  const std::string sb2 = RunSandbox(annotated);
  const std::string bare = StartContainer(sb2, v1::PodSandboxConfig(), "bare");
  now_ += absl::Seconds(1);
  EXPECT_EQ(Status(before).state(), v1::CONTAINER_RUNNING);
  EXPECT_EQ(Status(after).state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(Status(bare).state(), v1::CONTAINER_EXITED);
}

TEST_F(SimRuntimeTest, BadAnnotationValuesIgnored) {
  const v1::PodSandboxConfig config =
      SandboxConfig("a", {{SimRuntime::kExitAfterAnnotation, "soon"},
                          {SimRuntime::kExitCodeAnnotation, "-1"},
                          {"hollow.kubelet/exit-after-neg", "-5s"},
                          {"hollow.kubelet/exit-after-fallback", "garbage"},
                          {"hollow.kubelet/exit-code-fallback", "256"},
                          {SimRuntime::kStartDelayAnnotation, "1 second"},
                          {SimRuntime::kExecExitCodeAnnotation, "one"},
                          {SimRuntime::kCpuMillicoresAnnotation, "-3"},
                          {SimRuntime::kMemoryBytesAnnotation, "64Mi"}});
  const std::string sb = RunSandbox(config);
  const std::string neg = StartContainer(sb, config, "neg");
  const std::string fallback = StartContainer(sb, config, "fallback");
  EXPECT_THAT(sleeps_, IsEmpty());  // bad start delay: the default (0)
  now_ += absl::Hours(1);
  EXPECT_EQ(Status(neg).state(), v1::CONTAINER_RUNNING);
  EXPECT_EQ(Status(fallback).state(), v1::CONTAINER_RUNNING);
  absl::StatusOr<v1::ExecSyncResponse> exec = rt_->ExecSync(neg, {"true"}, absl::Seconds(1));
  ASSERT_TRUE(exec.ok());
  EXPECT_EQ(exec->exit_code(), 0);
  absl::StatusOr<v1::ContainerStats> stats = rt_->ContainerStats(neg);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->cpu().usage_nano_cores().value(), 1000000u);  // default 1 millicore
  EXPECT_EQ(stats->memory().working_set_bytes().value(), static_cast<uint64_t>(4 * kMiB));

  // A bad per-container value falls back to a good pod-wide one.
  const v1::PodSandboxConfig mixed = SandboxConfig("b", {{SimRuntime::kExitAfterAnnotation, "1s"},
                                                         {SimRuntime::kExitCodeAnnotation, "7"},
                                                         {"hollow.kubelet/exit-after-x", "bad"},
                                                         {"hollow.kubelet/exit-code-x", "x"}});
  const std::string x = StartContainer(RunSandbox(mixed), mixed, "x");
  now_ += absl::Seconds(1);
  const v1::ContainerStatus st = Status(x);
  EXPECT_EQ(st.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(st.exit_code(), 7);
}

TEST_F(SimRuntimeTest, StartDelayPassedToSleep) {
  SimRuntimeOptions options = Options();
  options.start_delay = absl::Milliseconds(250);
  Make(options);
  const v1::PodSandboxConfig config = SandboxConfig("a");
  const std::string sb = RunSandbox(config);
  EXPECT_THAT(sleeps_, ElementsAre(absl::Milliseconds(250)));
  EXPECT_EQ(rt_->PodSandboxStatus(sb, false)->status().created_at(), NowNanos());
  const std::string id = StartContainer(sb, config, "app");
  EXPECT_THAT(sleeps_, ElementsAre(absl::Milliseconds(250), absl::Milliseconds(250)));
  EXPECT_EQ(Status(id).started_at(), NowNanos());  // started after the delay

  // The pod's annotation overrides the option, for the sandbox and its containers.
  sleeps_.clear();
  const v1::PodSandboxConfig slow = SandboxConfig("b", {{SimRuntime::kStartDelayAnnotation, "3s"}});
  StartContainer(RunSandbox(slow), slow, "app");
  EXPECT_THAT(sleeps_, ElementsAre(absl::Seconds(3), absl::Seconds(3)));
  sleeps_.clear();
  const v1::PodSandboxConfig fast = SandboxConfig("c", {{SimRuntime::kStartDelayAnnotation, "0s"}});
  StartContainer(RunSandbox(fast), fast, "app");
  EXPECT_THAT(sleeps_, IsEmpty());
}

TEST_F(SimRuntimeTest, ContainerRemovedDuringStartDelayIsNotStarted) {
  // The delay runs outside the lock: the runtime can be called meanwhile (here, from `sleep`).
  SimRuntimeOptions options = Options();
  std::string victim;
  options.sleep = [&](absl::Duration) {
    if (!victim.empty()) EXPECT_TRUE(rt_->RemoveContainer(victim).ok());
  };
  Make(options);
  const v1::PodSandboxConfig config =
      SandboxConfig("a", {{SimRuntime::kStartDelayAnnotation, "1s"}});
  const std::string sb = RunSandbox(config);
  absl::StatusOr<std::string> id = rt_->CreateContainer(sb, ContainerConfig("app"), config);
  ASSERT_TRUE(id.ok());
  victim = *id;
  EXPECT_EQ(rt_->StartContainer(*id).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rt_->Counts(), (SimRuntimeCounts{1, 1, 0, 0}));
}

TEST_F(SimRuntimeTest, ExecSyncExitCode) {
  const v1::PodSandboxConfig failing =
      SandboxConfig("a", {{SimRuntime::kExecExitCodeAnnotation, "1"}});
  const std::string bad = StartContainer(RunSandbox(failing), failing, "app");
  absl::StatusOr<v1::ExecSyncResponse> r = rt_->ExecSync(bad, {"cat", "/ready"}, absl::Seconds(1));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code(), 1);
  EXPECT_TRUE(r->stdout().empty());
  EXPECT_TRUE(r->stderr().empty());

  const v1::PodSandboxConfig ok = SandboxConfig("b");
  const std::string good = StartContainer(RunSandbox(ok), ok, "app");
  r = rt_->ExecSync(good, {"true"}, absl::ZeroDuration());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code(), 0);

  absl::StatusOr<std::string> created = rt_->CreateContainer(
      rt_->ListPodSandbox(nullptr)->front().id(), ContainerConfig("c"), failing);
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(rt_->ExecSync(*created, {"true"}, absl::ZeroDuration()).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(SimRuntimeTest, UnsupportedCalls) {
  EXPECT_EQ(rt_->Exec(v1::ExecRequest()).status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(rt_->Exec(v1::ExecRequest()).status().message(), HasSubstr("no streaming"));
  EXPECT_EQ(rt_->Attach(v1::AttachRequest()).status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(rt_->PortForward(v1::PortForwardRequest()).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(rt_->CheckpointContainer(v1::CheckpointContainerRequest()).code(),
            absl::StatusCode::kUnimplemented);
  StreamCancellation cancel;
  EXPECT_EQ(rt_->GetContainerEvents([](const v1::ContainerEventResponse&) {}, cancel).code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(rt_->UpdateRuntimeConfig(v1::RuntimeConfig()).ok());
  absl::StatusOr<std::vector<v1::MetricDescriptor>> descriptors = rt_->ListMetricDescriptors();
  ASSERT_TRUE(descriptors.ok());
  EXPECT_THAT(*descriptors, IsEmpty());
  absl::StatusOr<std::vector<v1::PodSandboxMetrics>> metrics = rt_->ListPodSandboxMetrics();
  ASSERT_TRUE(metrics.ok());
  EXPECT_THAT(*metrics, IsEmpty());
}

// ---- Filters ----------------------------------------------------------------------------------

TEST_F(SimRuntimeTest, Filters) {
  const v1::PodSandboxConfig ca = SandboxConfig("a");
  const v1::PodSandboxConfig cb = SandboxConfig("b");
  const std::string a = RunSandbox(ca);
  const std::string b = RunSandbox(cb);
  const std::string a1 = StartContainer(a, ca, "one");
  absl::StatusOr<std::string> a2 = rt_->CreateContainer(a, ContainerConfig("two"), ca);
  ASSERT_TRUE(a2.ok());
  const std::string b1 = StartContainer(b, cb, "one");
  ASSERT_TRUE(rt_->StopPodSandbox(b).ok());

  auto ids = [](const auto& items) {
    std::vector<std::string> out;
    for (const auto& item : items) out.push_back(item.id());
    return out;
  };
  auto stat_ids = [](const auto& items) {
    std::vector<std::string> out;
    for (const auto& item : items) out.push_back(item.attributes().id());
    return out;
  };

  v1::PodSandboxFilter sf;
  sf.mutable_state()->set_state(v1::SANDBOX_READY);
  EXPECT_THAT(ids(*rt_->ListPodSandbox(&sf)), ElementsAre(a));
  sf.Clear();
  sf.set_id(b);
  EXPECT_THAT(ids(*rt_->ListPodSandbox(&sf)), ElementsAre(b));
  sf.Clear();
  (*sf.mutable_label_selector())["io.kubernetes.pod.name"] = "b";
  EXPECT_THAT(ids(*rt_->ListPodSandbox(&sf)), ElementsAre(b));
  EXPECT_THAT(ids(*rt_->ListPodSandbox(nullptr)), ElementsAre(a, b));

  v1::ContainerFilter cf;
  cf.set_pod_sandbox_id(a);
  EXPECT_THAT(ids(*rt_->ListContainers(&cf)), ElementsAre(a1, *a2));
  cf.mutable_state()->set_state(v1::CONTAINER_CREATED);
  EXPECT_THAT(ids(*rt_->ListContainers(&cf)), ElementsAre(*a2));
  cf.Clear();
  cf.mutable_state()->set_state(v1::CONTAINER_EXITED);
  EXPECT_THAT(ids(*rt_->ListContainers(&cf)), ElementsAre(b1));
  cf.Clear();
  (*cf.mutable_label_selector())["io.kubernetes.container.name"] = "one";
  EXPECT_THAT(ids(*rt_->ListContainers(&cf)), ElementsAre(a1, b1));
  cf.Clear();
  cf.set_id(a1);
  EXPECT_THAT(ids(*rt_->ListContainers(&cf)), ElementsAre(a1));
  const v1::Container item = rt_->ListContainers(&cf)->front();
  EXPECT_EQ(item.pod_sandbox_id(), a);
  EXPECT_EQ(item.metadata().name(), "one");
  EXPECT_EQ(item.image().image(), "busybox:1.36");

  v1::ContainerStatsFilter csf;
  csf.set_pod_sandbox_id(b);
  EXPECT_THAT(stat_ids(*rt_->ListContainerStats(&csf)), ElementsAre(b1));
  csf.Clear();
  (*csf.mutable_label_selector())["io.kubernetes.container.name"] = "two";
  EXPECT_THAT(stat_ids(*rt_->ListContainerStats(&csf)), ElementsAre(*a2));
  csf.Clear();
  csf.set_id(a1);
  EXPECT_THAT(stat_ids(*rt_->ListContainerStats(&csf)), ElementsAre(a1));
  EXPECT_THAT(*rt_->ListContainerStats(nullptr), SizeIs(3));

  v1::PodSandboxStatsFilter psf;
  psf.set_id(a);
  EXPECT_THAT(stat_ids(*rt_->ListPodSandboxStats(&psf)), ElementsAre(a));
  psf.Clear();
  (*psf.mutable_label_selector())["io.kubernetes.pod.name"] = "b";
  EXPECT_THAT(stat_ids(*rt_->ListPodSandboxStats(&psf)), ElementsAre(b));
  EXPECT_THAT(*rt_->ListPodSandboxStats(nullptr), SizeIs(2));
}

// ---- Stats ------------------------------------------------------------------------------------

TEST_F(SimRuntimeTest, StatsGrowWithTime) {
  const v1::PodSandboxConfig config =
      SandboxConfig("a", {{SimRuntime::kCpuMillicoresAnnotation, "250"},
                          {SimRuntime::kMemoryBytesAnnotation, "1048576"},
                          {"hollow.kubelet/exit-after-short", "2s"}});
  const std::string sb = RunSandbox(config);
  const std::string app = StartContainer(sb, config, "app");
  const std::string short_lived = StartContainer(sb, config, "short");

  now_ += absl::Seconds(4);
  absl::StatusOr<v1::ContainerStats> stats = rt_->ContainerStats(app);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->attributes().id(), app);
  EXPECT_EQ(stats->attributes().metadata().name(), "app");
  EXPECT_EQ(stats->cpu().timestamp(), NowNanos());
  EXPECT_EQ(stats->cpu().usage_core_nano_seconds().value(), 1000000000u);  // 0.25 core * 4 s
  EXPECT_EQ(stats->cpu().usage_nano_cores().value(), 250000000u);
  EXPECT_EQ(stats->memory().timestamp(), NowNanos());
  EXPECT_EQ(stats->memory().working_set_bytes().value(), 1048576u);
  EXPECT_EQ(stats->writable_layer().fs_id().mountpoint(), SimRuntime::kImageFsMountpoint);

  now_ += absl::Seconds(6);
  stats = rt_->ContainerStats(app);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->cpu().usage_core_nano_seconds().value(), 2500000000u);

  // The exited container uses nothing.
  stats = rt_->ContainerStats(short_lived);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->cpu().usage_core_nano_seconds().value(), 0u);
  EXPECT_EQ(stats->cpu().usage_nano_cores().value(), 0u);
  EXPECT_EQ(stats->memory().working_set_bytes().value(), 0u);

  absl::StatusOr<v1::PodSandboxStats> pod = rt_->PodSandboxStats(sb);
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ(pod->attributes().id(), sb);
  EXPECT_EQ(pod->attributes().metadata().name(), "a");
  ASSERT_THAT(pod->linux().containers(), SizeIs(2));
  EXPECT_EQ(pod->linux().cpu().timestamp(), NowNanos());
  EXPECT_EQ(pod->linux().cpu().usage_core_nano_seconds().value(), 2500000000u);
  EXPECT_EQ(pod->linux().cpu().usage_nano_cores().value(), 250000000u);
  EXPECT_EQ(pod->linux().memory().working_set_bytes().value(), 1048576u);
  EXPECT_EQ(pod->linux().process().process_count().value(), 1u);
  EXPECT_EQ(pod->linux().network().default_interface().name(), "eth0");

  // Options set the defaults.
  SimRuntimeOptions options = Options();
  options.cpu_millicores = 2000;
  options.memory_bytes = 3 * kMiB;
  Make(options);
  const v1::PodSandboxConfig plain = SandboxConfig("b");
  const std::string id = StartContainer(RunSandbox(plain), plain, "app");
  now_ += absl::Milliseconds(1500);
  stats = rt_->ContainerStats(id);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->cpu().usage_core_nano_seconds().value(), 3000000000u);
  EXPECT_EQ(stats->cpu().usage_nano_cores().value(), 2000000000u);
  EXPECT_EQ(stats->memory().working_set_bytes().value(), static_cast<uint64_t>(3 * kMiB));
}

TEST_F(SimRuntimeTest, StatsOfACreatedContainerAreZero) {
  const v1::PodSandboxConfig config = SandboxConfig("a");
  const std::string sb = RunSandbox(config);
  absl::StatusOr<std::string> id = rt_->CreateContainer(sb, ContainerConfig("app"), config);
  ASSERT_TRUE(id.ok());
  now_ += absl::Seconds(10);
  absl::StatusOr<v1::ContainerStats> stats = rt_->ContainerStats(*id);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->cpu().usage_core_nano_seconds().value(), 0u);
  EXPECT_EQ(stats->memory().working_set_bytes().value(), 0u);
}

// ---- Images -----------------------------------------------------------------------------------

TEST_F(SimRuntimeTest, Images) {
  SimRuntimeOptions options = Options();
  options.pull_delay = absl::Seconds(2);
  options.image_size_bytes = 5 * kMiB;
  Make(options);

  v1::ImageSpec spec;
  spec.set_image("busybox");
  absl::StatusOr<v1::ImageStatusResponse> st = rt_->ImageStatus(spec, false);
  ASSERT_TRUE(st.ok());
  EXPECT_FALSE(st->has_image());

  absl::StatusOr<std::string> id = rt_->PullImage(spec, nullptr, nullptr);
  ASSERT_TRUE(id.ok());
  EXPECT_THAT(*id, ::testing::StartsWith("sha256:"));
  EXPECT_EQ(id->size(), 7u + 64u);
  EXPECT_THAT(sleeps_, ElementsAre(absl::Seconds(2)));

  // Every spelling of the reference finds it; a present image is not pulled again.
  for (const char* ref : {"busybox", "busybox:latest", "docker.io/library/busybox:latest",
                          "library/busybox", id->c_str()}) {
    v1::ImageSpec s;
    s.set_image(ref);
    st = rt_->ImageStatus(s, false);
    ASSERT_TRUE(st.ok());
    ASSERT_TRUE(st->has_image()) << ref;
    EXPECT_EQ(st->image().id(), *id);
    EXPECT_EQ(rt_->PullImage(s, nullptr, nullptr).value_or(""), *id);
  }
  EXPECT_THAT(sleeps_, SizeIs(1));
  EXPECT_THAT(st->image().repo_tags(), ElementsAre("docker.io/library/busybox:latest"));
  EXPECT_EQ(st->image().size(), static_cast<uint64_t>(5 * kMiB));

  // The id is stable: another runtime gives the same image the same id.
  SimRuntime other(Options());
  EXPECT_EQ(other.PullImage(spec, nullptr, nullptr).value_or(""), *id);

  v1::ImageSpec pause;
  pause.set_image("registry.k8s.io/pause:3.9");
  absl::StatusOr<std::string> pause_id = rt_->PullImage(pause, nullptr, nullptr);
  ASSERT_TRUE(pause_id.ok());
  EXPECT_NE(*pause_id, *id);
  absl::StatusOr<std::vector<v1::Image>> images = rt_->ListImages(nullptr);
  ASSERT_TRUE(images.ok());
  EXPECT_THAT(*images, SizeIs(2));
  v1::ImageFilter filter;
  filter.mutable_image()->set_image("registry.k8s.io/pause:3.9");
  images = rt_->ListImages(&filter);
  ASSERT_TRUE(images.ok());
  ASSERT_THAT(*images, SizeIs(1));
  EXPECT_EQ((*images)[0].id(), *pause_id);

  absl::StatusOr<std::vector<v1::FilesystemUsage>> fs = rt_->ImageFsInfo();
  ASSERT_TRUE(fs.ok());
  ASSERT_THAT(*fs, SizeIs(1));
  EXPECT_EQ((*fs)[0].fs_id().mountpoint(), "/var/lib/hollow/images");
  EXPECT_EQ((*fs)[0].used_bytes().value(), static_cast<uint64_t>(10 * kMiB));
  EXPECT_EQ((*fs)[0].inodes_used().value(), 2u);
  EXPECT_EQ((*fs)[0].timestamp(), NowNanos());

  // A container of a pulled image reports its id as image_ref.
  const v1::PodSandboxConfig config = SandboxConfig("a");
  v1::ContainerConfig cc = ContainerConfig("app");
  cc.mutable_image()->set_image("busybox");
  absl::StatusOr<std::string> cid = rt_->CreateContainer(RunSandbox(config), cc, config);
  ASSERT_TRUE(cid.ok());
  EXPECT_EQ(Status(*cid).image_ref(), *id);

  ASSERT_TRUE(rt_->RemoveImage(spec).ok());
  ASSERT_TRUE(rt_->RemoveImage(spec).ok());
  st = rt_->ImageStatus(spec, false);
  ASSERT_TRUE(st.ok());
  EXPECT_FALSE(st->has_image());
  EXPECT_EQ(rt_->ImageFsInfo()->front().used_bytes().value(), static_cast<uint64_t>(5 * kMiB));
  EXPECT_EQ(rt_->PullImage(v1::ImageSpec(), nullptr, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(SimRuntimeTest, DigestReference) {
  v1::ImageSpec spec;
  spec.set_image("example.com/app@sha256:" + std::string(64, 'a'));
  absl::StatusOr<std::string> id = rt_->PullImage(spec, nullptr, nullptr);
  ASSERT_TRUE(id.ok());
  absl::StatusOr<v1::ImageStatusResponse> st = rt_->ImageStatus(spec, false);
  ASSERT_TRUE(st.ok() && st->has_image());
  EXPECT_THAT(st->image().repo_tags(), IsEmpty());
  EXPECT_THAT(st->image().repo_digests(), ElementsAre(spec.image()));
}

// ---- Memory -----------------------------------------------------------------------------------

TEST_F(SimRuntimeTest, RemovedPodsAreFreed) {
  for (int i = 0; i < 1000; ++i) {
    const v1::PodSandboxConfig config =
        SandboxConfig(absl::StrCat("pod-", i), {{"hollow.kubelet/exit-after-init", "0s"}});
    const std::string sb = RunSandbox(config);
    ASSERT_FALSE(sb.empty());
    StartContainer(sb, config, "init");
    StartContainer(sb, config, "app");
    if (i % 2 == 0) {
      ASSERT_TRUE(rt_->StopPodSandbox(sb).ok());
    } else {
      // As the kubelet's GC does: containers first, then the sandbox.
      absl::StatusOr<std::vector<v1::Container>> containers = rt_->ListContainers(nullptr);
      ASSERT_TRUE(containers.ok());
      ASSERT_THAT(*containers, SizeIs(2));
      for (const v1::Container& c : *containers) ASSERT_TRUE(rt_->RemoveContainer(c.id()).ok());
    }
    ASSERT_TRUE(rt_->RemovePodSandbox(sb).ok());
  }
  EXPECT_EQ(rt_->Counts(), SimRuntimeCounts{});
  EXPECT_THAT(*rt_->ListPodSandbox(nullptr), IsEmpty());
  EXPECT_THAT(*rt_->ListContainers(nullptr), IsEmpty());
  // Every address went back: the pool starts over at the lowest one.
  EXPECT_EQ(SandboxIp(RunSandbox(SandboxConfig("again"))), "10.64.0.2");
}

TEST_F(SimRuntimeTest, ManyLivePodsGetDistinctIps) {
  SimRuntimeOptions options = Options();
  options.pod_cidr = "10.64.0.0/22";
  Make(options);
  std::set<std::string> ips;
  for (int i = 0; i < 1000; ++i) ips.insert(SandboxIp(RunSandbox(SandboxConfig(absl::StrCat(i)))));
  EXPECT_THAT(ips, SizeIs(1000));
  EXPECT_EQ(rt_->Counts(), (SimRuntimeCounts{1000, 1000, 0, 0}));
}

TEST_F(SimRuntimeTest, ConcurrentCalls) {
  SimRuntimeOptions options;  // the real clock; no delays, so nothing sleeps
  options.pod_cidr = "10.64.0.0/16";
  Make(options);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < 200; ++i) {
        const v1::PodSandboxConfig config = SandboxConfig(absl::StrCat("pod-", t, "-", i));
        absl::StatusOr<std::string> sb = rt_->RunPodSandbox(config, "");
        ASSERT_TRUE(sb.ok()) << sb.status();
        absl::StatusOr<std::string> c = rt_->CreateContainer(*sb, ContainerConfig("app"), config);
        ASSERT_TRUE(c.ok()) << c.status();
        ASSERT_TRUE(rt_->StartContainer(*c).ok());
        ASSERT_TRUE(rt_->ListContainers(nullptr).ok());
        ASSERT_TRUE(rt_->ListPodSandboxStats(nullptr).ok());
        ASSERT_TRUE(rt_->StopPodSandbox(*sb).ok());
        ASSERT_TRUE(rt_->RemovePodSandbox(*sb).ok());
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(rt_->Counts(), SimRuntimeCounts{});
}

}  // namespace
}  // namespace kubelet::cri
