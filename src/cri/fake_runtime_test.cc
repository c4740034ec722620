#include "cri/testing/fake_runtime.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::cri {
namespace {

namespace v1 = ::runtime::v1;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

v1::PodSandboxConfig SandboxConfig(const std::string& name, const std::string& uid) {
  v1::PodSandboxConfig config;
  config.mutable_metadata()->set_name(name);
  config.mutable_metadata()->set_namespace_("default");
  config.mutable_metadata()->set_uid(uid);
  config.set_log_directory("/var/log/pods/default_" + name + "_" + uid);
  (*config.mutable_labels())["io.kubernetes.pod.uid"] = uid;
  return config;
}

v1::ContainerConfig ContainerConfig(const std::string& name, const std::string& app) {
  v1::ContainerConfig config;
  config.mutable_metadata()->set_name(name);
  config.mutable_image()->set_image("busybox:1.36");
  config.set_log_path(name + "/0.log");
  (*config.mutable_labels())["app"] = app;
  (*config.mutable_annotations())["io.kubernetes.container.hash"] = "1234";
  return config;
}

class FakeRuntimeTest : public ::testing::Test {
 protected:
  FakeRuntimeTest() {
    fake_.SetClock([this] { return now_; });
  }

  std::string RunSandbox(const std::string& name, const std::string& uid) {
    absl::StatusOr<std::string> id = fake_.RunPodSandbox(SandboxConfig(name, uid), "");
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }

  std::string CreateContainer(const std::string& sandbox, const std::string& name,
                              const std::string& app = "web") {
    absl::StatusOr<std::string> id =
        fake_.CreateContainer(sandbox, ContainerConfig(name, app), SandboxConfig("p", "u"));
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }

  absl::Time now_ = absl::FromUnixSeconds(1700000000);
  FakeRuntime fake_;
};

TEST_F(FakeRuntimeTest, VersionAndStatusDefaults) {
  auto version = fake_.Version(kKubeRuntimeAPIVersion);
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(version->runtime_name(), "fakeruntime");
  EXPECT_EQ(version->runtime_api_version(), "v1");
  auto status = fake_.Status(false);
  ASSERT_TRUE(status.ok());
  ASSERT_THAT(status->status().conditions(), SizeIs(2));
  EXPECT_TRUE(status->status().conditions(0).status());
}

TEST_F(FakeRuntimeTest, SandboxLifecycle) {
  const std::string id = RunSandbox("nginx", "uid-1");
  auto status = fake_.PodSandboxStatus(id, false);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->status().state(), v1::SANDBOX_READY);
  EXPECT_EQ(status->status().metadata().name(), "nginx");
  EXPECT_EQ(status->status().created_at(), absl::ToUnixNanos(now_));
  EXPECT_FALSE(status->status().network().ip().empty());

  ASSERT_TRUE(fake_.StopPodSandbox(id).ok());
  EXPECT_EQ(fake_.PodSandboxStatus(id, false)->status().state(), v1::SANDBOX_NOTREADY);
  ASSERT_TRUE(fake_.StopPodSandbox(id).ok());  // idempotent
  ASSERT_TRUE(fake_.RemovePodSandbox(id).ok());
  ASSERT_TRUE(fake_.RemovePodSandbox(id).ok());  // idempotent
  EXPECT_EQ(fake_.PodSandboxStatus(id, false).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(fake_.StopPodSandbox(id).code(), absl::StatusCode::kNotFound);
}

TEST_F(FakeRuntimeTest, HostNetworkSandboxHasNoIP) {
  v1::PodSandboxConfig config = SandboxConfig("host", "uid-h");
  config.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_network(
      v1::NODE);
  auto id = fake_.RunPodSandbox(config, "");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(fake_.PodSandboxStatus(*id, false)->status().network().ip(), "");
}

TEST_F(FakeRuntimeTest, DuplicateSandboxNameIsRejected) {
  RunSandbox("nginx", "uid-1");
  auto again = fake_.RunPodSandbox(SandboxConfig("nginx", "uid-1"), "");
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  v1::PodSandboxConfig next = SandboxConfig("nginx", "uid-1");
  next.mutable_metadata()->set_attempt(1);
  EXPECT_TRUE(fake_.RunPodSandbox(next, "").ok());
}

TEST_F(FakeRuntimeTest, ContainerLifecycle) {
  const std::string sb = RunSandbox("nginx", "uid-1");
  const std::string id = CreateContainer(sb, "app");
  auto status = fake_.ContainerStatus(id, false);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->status().state(), v1::CONTAINER_CREATED);
  EXPECT_EQ(status->status().created_at(), absl::ToUnixNanos(now_));
  EXPECT_EQ(status->status().log_path(), "/var/log/pods/default_p_u/app/0.log");
  EXPECT_EQ(status->status().annotations().at("io.kubernetes.container.hash"), "1234");

  now_ += absl::Seconds(1);
  ASSERT_TRUE(fake_.StartContainer(id).ok());
  status = fake_.ContainerStatus(id, false);
  EXPECT_EQ(status->status().state(), v1::CONTAINER_RUNNING);
  EXPECT_EQ(status->status().started_at(), absl::ToUnixNanos(now_));
  EXPECT_EQ(fake_.StartContainer(id).code(), absl::StatusCode::kFailedPrecondition);

  now_ += absl::Seconds(1);
  ASSERT_TRUE(fake_.StopContainer(id, 30).ok());
  status = fake_.ContainerStatus(id, false);
  EXPECT_EQ(status->status().state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(status->status().finished_at(), absl::ToUnixNanos(now_));
  EXPECT_EQ(status->status().exit_code(), 0);
  EXPECT_EQ(status->status().reason(), "Completed");
  ASSERT_TRUE(fake_.StopContainer(id, 30).ok());  // no-op once exited

  ASSERT_TRUE(fake_.RemoveContainer(id).ok());
  ASSERT_TRUE(fake_.RemoveContainer(id).ok());  // idempotent
  EXPECT_EQ(fake_.ContainerStatus(id, false).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(fake_.StopContainer(id, 0).code(), absl::StatusCode::kNotFound);
}

TEST_F(FakeRuntimeTest, CreateContainerChecksSandbox) {
  auto missing = fake_.CreateContainer("nope", ContainerConfig("a", "x"), v1::PodSandboxConfig());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  const std::string sb = RunSandbox("nginx", "uid-1");
  CreateContainer(sb, "app");
  auto dup = fake_.CreateContainer(sb, ContainerConfig("app", "x"), v1::PodSandboxConfig());
  EXPECT_EQ(dup.status().code(), absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(fake_.StopPodSandbox(sb).ok());
  auto stopped = fake_.CreateContainer(sb, ContainerConfig("b", "x"), v1::PodSandboxConfig());
  EXPECT_EQ(stopped.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(FakeRuntimeTest, SimulatedCrash) {
  const std::string sb = RunSandbox("nginx", "uid-1");
  const std::string id = CreateContainer(sb, "app");
  ASSERT_TRUE(fake_.StartContainer(id).ok());
  ASSERT_TRUE(fake_.SetContainerExited(id, 2).ok());
  auto status = fake_.ContainerStatus(id, false);
  EXPECT_EQ(status->status().state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(status->status().exit_code(), 2);
  EXPECT_EQ(status->status().reason(), "Error");
  ASSERT_TRUE(fake_.SetContainerExited(id, 137, "OOMKilled").ok());
  EXPECT_EQ(fake_.ContainerStatus(id, false)->status().reason(), "OOMKilled");
  EXPECT_EQ(fake_.SetContainerExited("nope", 1).code(), absl::StatusCode::kNotFound);
}

TEST_F(FakeRuntimeTest, StopAndRemoveSandboxAffectContainers) {
  const std::string sb = RunSandbox("nginx", "uid-1");
  const std::string a = CreateContainer(sb, "a");
  const std::string b = CreateContainer(sb, "b");
  ASSERT_TRUE(fake_.StartContainer(a).ok());
  ASSERT_TRUE(fake_.StopPodSandbox(sb).ok());
  EXPECT_EQ(fake_.GetContainer(a)->state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(fake_.GetContainer(a)->exit_code(), FakeRuntime::kKilledExitCode);
  EXPECT_EQ(fake_.GetContainer(b)->state(), v1::CONTAINER_CREATED);
  ASSERT_TRUE(fake_.RemovePodSandbox(sb).ok());
  EXPECT_THAT(fake_.container_ids(), IsEmpty());
  EXPECT_THAT(fake_.sandbox_ids(), IsEmpty());
}

TEST_F(FakeRuntimeTest, ListFiltersAreHonoured) {
  const std::string sb1 = RunSandbox("one", "uid-1");
  const std::string sb2 = RunSandbox("two", "uid-2");
  const std::string web1 = CreateContainer(sb1, "web", "web");
  const std::string db1 = CreateContainer(sb1, "db", "db");
  const std::string web2 = CreateContainer(sb2, "web", "web");
  ASSERT_TRUE(fake_.StartContainer(web1).ok());
  ASSERT_TRUE(fake_.StopPodSandbox(sb2).ok());

  auto ids = [](const std::vector<v1::Container>& cs) {
    std::vector<std::string> out;
    for (const auto& c : cs) out.push_back(c.id());
    return out;
  };
  EXPECT_THAT(ids(*fake_.ListContainers(nullptr)), ElementsAre(web1, db1, web2));

  v1::ContainerFilter by_label;
  (*by_label.mutable_label_selector())["app"] = "web";
  EXPECT_THAT(ids(*fake_.ListContainers(&by_label)), ElementsAre(web1, web2));

  v1::ContainerFilter by_sandbox_and_label = by_label;
  by_sandbox_and_label.set_pod_sandbox_id(sb1);
  EXPECT_THAT(ids(*fake_.ListContainers(&by_sandbox_and_label)), ElementsAre(web1));

  v1::ContainerFilter by_state;
  by_state.mutable_state()->set_state(v1::CONTAINER_RUNNING);
  EXPECT_THAT(ids(*fake_.ListContainers(&by_state)), ElementsAre(web1));

  v1::ContainerFilter by_id;
  by_id.set_id(db1);
  EXPECT_THAT(ids(*fake_.ListContainers(&by_id)), ElementsAre(db1));

  auto sandboxes = fake_.ListPodSandbox(nullptr);
  ASSERT_THAT(*sandboxes, SizeIs(2));
  v1::PodSandboxFilter ready;
  ready.mutable_state()->set_state(v1::SANDBOX_READY);
  auto ready_list = fake_.ListPodSandbox(&ready);
  ASSERT_THAT(*ready_list, SizeIs(1));
  EXPECT_EQ((*ready_list)[0].id(), sb1);
  v1::PodSandboxFilter by_uid;
  (*by_uid.mutable_label_selector())["io.kubernetes.pod.uid"] = "uid-2";
  auto uid_list = fake_.ListPodSandbox(&by_uid);
  ASSERT_THAT(*uid_list, SizeIs(1));
  EXPECT_EQ((*uid_list)[0].id(), sb2);
  EXPECT_EQ((*uid_list)[0].metadata().name(), "two");
}

TEST_F(FakeRuntimeTest, InjectedErrorsAndCallLog) {
  fake_.InjectError("RunPodSandbox", absl::UnavailableError("RunPodSandbox: boom"));
  auto first = fake_.RunPodSandbox(SandboxConfig("a", "1"), "");
  EXPECT_EQ(first.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(fake_.RunPodSandbox(SandboxConfig("a", "1"), "").ok());  // consumed

  fake_.SetPersistentError("ListContainers", absl::InternalError("ListContainers: down"));
  EXPECT_FALSE(fake_.ListContainers(nullptr).ok());
  EXPECT_FALSE(fake_.ListContainers(nullptr).ok());
  fake_.ClearErrors();
  EXPECT_TRUE(fake_.ListContainers(nullptr).ok());

  EXPECT_THAT(fake_.calls(), ElementsAre("RunPodSandbox", "RunPodSandbox", "ListContainers",
                                         "ListContainers", "ListContainers"));
  EXPECT_EQ(fake_.CallCount("ListContainers"), 3);
  fake_.ClearCalls();
  EXPECT_THAT(fake_.calls(), IsEmpty());
}

TEST_F(FakeRuntimeTest, ExecSyncUsesHandlerAndNeedsRunningContainer) {
  const std::string sb = RunSandbox("nginx", "uid-1");
  const std::string id = CreateContainer(sb, "app");
  EXPECT_EQ(fake_.ExecSync(id, {"true"}, absl::Seconds(1)).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(fake_.StartContainer(id).ok());
  fake_.SetExecSyncHandler([](const std::string&, const std::vector<std::string>& cmd,
                              absl::Duration) -> absl::StatusOr<v1::ExecSyncResponse> {
    v1::ExecSyncResponse resp;
    resp.set_stdout(cmd.back());
    resp.set_exit_code(1);
    return resp;
  });
  auto result = fake_.ExecSync(id, {"echo", "hi"}, absl::Seconds(1));
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->stdout(), "hi");
  EXPECT_EQ(result->exit_code(), 1);
}

TEST_F(FakeRuntimeTest, ImagesPullStatusListRemove) {
  v1::ImageSpec spec;
  spec.set_image("busybox:1.36");
  auto status = fake_.ImageStatus(spec, false);
  ASSERT_TRUE(status.ok());
  EXPECT_FALSE(status->has_image());

  v1::AuthConfig auth;
  auth.set_username("me");
  auto ref = fake_.PullImage(spec, &auth, nullptr);
  ASSERT_TRUE(ref.ok());
  status = fake_.ImageStatus(spec, false);
  ASSERT_TRUE(status->has_image());
  EXPECT_EQ(status->image().id(), *ref);
  EXPECT_THAT(status->image().repo_tags(), ElementsAre("docker.io/library/busybox:1.36"));
  ASSERT_THAT(fake_.pull_requests(), SizeIs(1));
  EXPECT_EQ(fake_.pull_requests()[0].auth().username(), "me");

  // Pulling again returns the same image; lookups work by id and full name too.
  EXPECT_EQ(*fake_.PullImage(spec, nullptr, nullptr), *ref);
  v1::ImageSpec by_id;
  by_id.set_image(*ref);
  EXPECT_TRUE(fake_.ImageStatus(by_id, false)->has_image());

  v1::Image extra;
  extra.set_id("sha256:pause");
  extra.add_repo_tags("registry.k8s.io/pause:3.9");
  extra.set_size(300000);
  fake_.AddImage(extra);
  EXPECT_THAT(*fake_.ListImages(nullptr), SizeIs(2));
  auto fs = fake_.ImageFsInfo();
  ASSERT_THAT(*fs, SizeIs(1));
  EXPECT_EQ((*fs)[0].used_bytes().value(), (1u << 20) + 300000u);

  ASSERT_TRUE(fake_.RemoveImage(spec).ok());
  ASSERT_TRUE(fake_.RemoveImage(spec).ok());  // idempotent
  EXPECT_THAT(*fake_.ListImages(nullptr), SizeIs(1));

  // A container's image_ref resolves to the image id when the image is known.
  const std::string sb = RunSandbox("nginx", "uid-1");
  v1::ContainerConfig pause = ContainerConfig("p", "x");
  pause.mutable_image()->set_image("registry.k8s.io/pause:3.9");
  auto cid = fake_.CreateContainer(sb, pause, v1::PodSandboxConfig());
  ASSERT_TRUE(cid.ok());
  EXPECT_EQ(fake_.GetContainer(*cid)->image_ref(), "sha256:pause");
}

TEST_F(FakeRuntimeTest, StatsCoverSandboxesAndContainers) {
  const std::string sb = RunSandbox("nginx", "uid-1");
  const std::string id = CreateContainer(sb, "app");
  ASSERT_TRUE(fake_.StartContainer(id).ok());
  auto stats = fake_.ContainerStats(id);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->attributes().id(), id);
  EXPECT_EQ(stats->cpu().timestamp(), absl::ToUnixNanos(now_));
  auto pod = fake_.PodSandboxStats(sb);
  ASSERT_TRUE(pod.ok());
  ASSERT_THAT(pod->linux().containers(), SizeIs(1));
  EXPECT_EQ(pod->linux().process().process_count().value(), 1u);
  EXPECT_THAT(*fake_.ListContainerStats(nullptr), SizeIs(1));
  EXPECT_THAT(*fake_.ListPodSandboxStats(nullptr), SizeIs(1));
}

TEST_F(FakeRuntimeTest, EventsUnimplementedByDefault) {
  StreamCancellation cancel;
  absl::Status status = fake_.GetContainerEvents([](const v1::ContainerEventResponse&) {}, cancel);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
}

TEST_F(FakeRuntimeTest, EventsStreamTransitions) {
  fake_.set_events_supported(true);
  StreamCancellation cancel;
  absl::Mutex mu;
  std::vector<v1::ContainerEventType> seen;
  std::thread reader([&] {
    absl::Status status = fake_.GetContainerEvents(
        [&](const v1::ContainerEventResponse& event) {
          absl::MutexLock lock(&mu);
          seen.push_back(event.container_event_type());
        },
        cancel);
    EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  });
  const absl::Time limit = absl::Now() + absl::Seconds(10);
  while (fake_.event_subscriber_count() == 0 && absl::Now() < limit) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  const std::string sb = RunSandbox("nginx", "uid-1");
  const std::string id = CreateContainer(sb, "app");
  ASSERT_TRUE(fake_.StartContainer(id).ok());
  ASSERT_TRUE(fake_.StopContainer(id, 0).ok());
  ASSERT_TRUE(fake_.RemoveContainer(id).ok());
  {
    absl::MutexLock lock(&mu);
    mu.AwaitWithTimeout(
        absl::Condition(
            +[](std::vector<v1::ContainerEventType>* v) { return v->size() >= 4; }, &seen),
        absl::Seconds(10));
    EXPECT_THAT(seen, ElementsAre(v1::CONTAINER_CREATED_EVENT, v1::CONTAINER_STARTED_EVENT,
                                  v1::CONTAINER_STOPPED_EVENT, v1::CONTAINER_DELETED_EVENT));
  }
  cancel.Cancel();
  reader.join();
}

TEST_F(FakeRuntimeTest, ConcurrentUseIsSafe) {
  const std::string sb = RunSandbox("nginx", "uid-1");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        auto id = fake_.CreateContainer(
            sb, ContainerConfig("c" + std::to_string(t) + "-" + std::to_string(i), "x"),
            v1::PodSandboxConfig());
        ASSERT_TRUE(id.ok()) << id.status();
        ASSERT_TRUE(fake_.StartContainer(*id).ok());
        ASSERT_TRUE(fake_.ListContainers(nullptr).ok());
        ASSERT_TRUE(fake_.RemoveContainer(*id).ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_THAT(fake_.container_ids(), IsEmpty());
}

}  // namespace
}  // namespace kubelet::cri
