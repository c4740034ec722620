#include "cri/remote/remote_runtime.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "cri/proto/api.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::cri {
namespace {

namespace v1 = ::runtime::v1;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr absl::Duration kTimeout = absl::Milliseconds(200);

// Blocks a handler until the client gives up (deadline or cancellation), bounded for safety.
void WaitForClientToGiveUp(grpc::ServerContext* context) {
  const absl::Time limit = absl::Now() + absl::Seconds(10);
  while (!context->IsCancelled() && absl::Now() < limit) absl::SleepFor(absl::Milliseconds(5));
}

class TestRuntimeService final : public v1::RuntimeService::Service {
 public:
  std::atomic<bool> stream_events{false};
  std::atomic<int> version_calls{0};
  std::atomic<bool> empty_version{false};
  absl::Notification stream_started;

  grpc::Status Version(grpc::ServerContext*, const v1::VersionRequest* req,
                       v1::VersionResponse* resp) override {
    ++version_calls;
    if (empty_version) return grpc::Status::OK;
    resp->set_version(req->version().empty() ? "0.1.0" : req->version());
    resp->set_runtime_name("testruntime");
    resp->set_runtime_version("1.2.3");
    resp->set_runtime_api_version("v1");
    return grpc::Status::OK;
  }

  grpc::Status RunPodSandbox(grpc::ServerContext*, const v1::RunPodSandboxRequest* req,
                             v1::RunPodSandboxResponse* resp) override {
    if (req->config().metadata().name() == "fail") {
      return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "failed to setup network");
    }
    if (req->config().metadata().name() == "noid") return grpc::Status::OK;
    resp->set_pod_sandbox_id("sb-" + req->config().metadata().uid() + "-" + req->runtime_handler());
    return grpc::Status::OK;
  }

  grpc::Status StopContainer(grpc::ServerContext*, const v1::StopContainerRequest* req,
                             v1::StopContainerResponse*) override {
    if (req->container_id() == "missing") {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "container \"missing\" not found");
    }
    last_stop_timeout = req->timeout();
    return grpc::Status::OK;
  }
  std::atomic<int64_t> last_stop_timeout{-1};

  grpc::Status ListContainers(grpc::ServerContext*, const v1::ListContainersRequest* req,
                              v1::ListContainersResponse* resp) override {
    for (int i = 0; i < 3; ++i) {
      v1::Container* c = resp->add_containers();
      c->set_id("c" + std::to_string(i));
      (*c->mutable_labels())["app"] = i == 1 ? "web" : "db";
    }
    // Echo the filter back so the test sees it crossed the wire.
    if (req->has_filter()) {
      v1::Container* echo = resp->add_containers();
      echo->set_id("filter:" + req->filter().pod_sandbox_id());
      *echo->mutable_labels() = req->filter().label_selector();
    }
    return grpc::Status::OK;
  }

  grpc::Status ContainerStatus(grpc::ServerContext* context, const v1::ContainerStatusRequest* req,
                               v1::ContainerStatusResponse* resp) override {
    if (req->container_id() == "slow") {
      WaitForClientToGiveUp(context);
      return grpc::Status(grpc::StatusCode::CANCELLED, "gave up");
    }
    if (req->container_id() == "incomplete") {
      resp->mutable_status()->set_id("incomplete");  // no metadata, image...
      return grpc::Status::OK;
    }
    v1::ContainerStatus* st = resp->mutable_status();
    st->set_id(req->container_id());
    st->mutable_metadata()->set_name("app");
    st->set_created_at(1);
    st->mutable_image()->set_image("busybox");
    st->set_image_ref("sha256:abc");
    st->set_state(v1::CONTAINER_RUNNING);
    return grpc::Status::OK;
  }

  grpc::Status ExecSync(grpc::ServerContext* context, const v1::ExecSyncRequest* req,
                        v1::ExecSyncResponse* resp) override {
    last_exec_timeout = req->timeout();
    if (req->cmd_size() > 0 && req->cmd(0) == "hang") {
      WaitForClientToGiveUp(context);
      return grpc::Status(grpc::StatusCode::CANCELLED, "gave up");
    }
    resp->set_stdout("out");
    resp->set_stderr("err");
    resp->set_exit_code(3);
    return grpc::Status::OK;
  }
  std::atomic<int64_t> last_exec_timeout{-1};

  grpc::Status Status(grpc::ServerContext*, const v1::StatusRequest*,
                      v1::StatusResponse* resp) override {
    v1::RuntimeCondition* c = resp->mutable_status()->add_conditions();
    c->set_type("RuntimeReady");
    c->set_status(true);
    return grpc::Status::OK;  // NetworkReady missing on purpose
  }

  grpc::Status GetContainerEvents(grpc::ServerContext* context, const v1::GetEventsRequest*,
                                  grpc::ServerWriter<v1::ContainerEventResponse>* writer) override {
    if (!stream_events) {
      return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "unknown method GetContainerEvents");
    }
    for (int i = 0; i < 2; ++i) {
      v1::ContainerEventResponse event;
      event.set_container_id("c" + std::to_string(i));
      event.set_container_event_type(v1::CONTAINER_STARTED_EVENT);
      writer->Write(event);
    }
    stream_started.Notify();
    WaitForClientToGiveUp(context);
    return grpc::Status::OK;
  }
};

class TestImageService final : public v1::ImageService::Service {
 public:
  grpc::Status ImageFsInfo(grpc::ServerContext*, const v1::ImageFsInfoRequest*,
                           v1::ImageFsInfoResponse* resp) override {
    v1::FilesystemUsage* u = resp->add_image_filesystems();
    u->set_timestamp(1);
    u->mutable_fs_id()->set_mountpoint("/images");
    u->mutable_used_bytes()->set_value(42);
    return grpc::Status::OK;
  }

  grpc::Status PullImage(grpc::ServerContext*, const v1::PullImageRequest* req,
                         v1::PullImageResponse* resp) override {
    // Slower than the request timeout: pulls must not be cut by it.
    absl::SleepFor(kTimeout * 2);
    if (req->auth().username() != "user") {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "pull access denied");
    }
    resp->set_image_ref("sha256:" + req->image().image());
    return grpc::Status::OK;
  }

  grpc::Status ImageStatus(grpc::ServerContext*, const v1::ImageStatusRequest* req,
                           v1::ImageStatusResponse* resp) override {
    if (req->image().image() == "present") {
      resp->mutable_image()->set_id("sha256:present");
      resp->mutable_image()->set_size(10);
    }
    return grpc::Status::OK;
  }
};

class RemoteRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/cri-test-XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    dir_ = dir_template;
    socket_ = dir_ + "/cri.sock";
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket_, grpc::InsecureServerCredentials());
    builder.RegisterService(&runtime_);
    builder.RegisterService(&image_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }

  void TearDown() override {
    if (server_ != nullptr) {
      server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
      server_->Wait();
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::unique_ptr<RuntimeService> Connect() {
    auto service = NewRemoteRuntimeService("unix://" + socket_, kTimeout);
    EXPECT_TRUE(service.ok()) << service.status();
    return service.ok() ? *std::move(service) : nullptr;
  }

  std::string dir_;
  std::string socket_;
  TestRuntimeService runtime_;
  TestImageService image_;
  std::unique_ptr<grpc::Server> server_;
};

TEST(EndpointTest, AcceptsUnixUrlsAndBarePaths) {
  EXPECT_EQ(*UnixSocketPathFromEndpoint("unix:///run/containerd/containerd.sock"),
            "/run/containerd/containerd.sock");
  EXPECT_EQ(*UnixSocketPathFromEndpoint("/run/containerd/containerd.sock"),
            "/run/containerd/containerd.sock");
  EXPECT_EQ(*UnixSocketPathFromEndpoint("unix:/run/crio/crio.sock"), "/run/crio/crio.sock");
  EXPECT_EQ(*UnixSocketPathFromEndpoint("UNIX:///x.sock"), "/x.sock");
  EXPECT_EQ(*UnixSocketPathFromEndpoint("run/relative.sock"), "run/relative.sock");
}

TEST(EndpointTest, RejectsOtherSchemesNamingTheEndpoint) {
  for (const char* endpoint :
       {"tcp://127.0.0.1:2375", "npipe:////./pipe/containerd", "http://localhost/run.sock"}) {
    absl::StatusOr<std::string> path = UnixSocketPathFromEndpoint(endpoint);
    ASSERT_FALSE(path.ok()) << endpoint;
    EXPECT_EQ(path.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(path.status().message()), HasSubstr(endpoint));
    EXPECT_THAT(std::string(path.status().message()), HasSubstr("only unix socket"));
  }
}

TEST(EndpointTest, RejectsEmptyAndOverlongPaths) {
  EXPECT_EQ(UnixSocketPathFromEndpoint("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(UnixSocketPathFromEndpoint("unix://").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(UnixSocketPathFromEndpoint("/" + std::string(200, 'a')).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(EndpointTest, FactoryRejectsTcpBeforeDialing) {
  auto service = NewRemoteRuntimeService("tcp://127.0.0.1:1234", kTimeout);
  ASSERT_FALSE(service.ok());
  EXPECT_EQ(service.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(service.status().message()), HasSubstr("tcp://127.0.0.1:1234"));
  auto images = NewRemoteImageService("tcp://127.0.0.1:1234", kTimeout);
  EXPECT_EQ(images.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(EndpointTest, FactoryFailsWhenNoRuntimeListens) {
  auto service = NewRemoteRuntimeService("unix:///nonexistent/dir/cri.sock", kTimeout);
  ASSERT_FALSE(service.ok());
  EXPECT_THAT(service.status().code(), ::testing::AnyOf(absl::StatusCode::kUnavailable,
                                                        absl::StatusCode::kDeadlineExceeded));
  EXPECT_THAT(std::string(service.status().message()), HasSubstr("/nonexistent/dir/cri.sock"));
}

TEST_F(RemoteRuntimeTest, ConnectValidatesWithVersion) {
  auto service = Connect();
  ASSERT_NE(service, nullptr);
  EXPECT_EQ(runtime_.version_calls.load(), 1);
  // Bare path form works too.
  auto bare = NewRemoteRuntimeService(socket_, kTimeout);
  EXPECT_TRUE(bare.ok()) << bare.status();
}

TEST_F(RemoteRuntimeTest, VersionRoundTrip) {
  auto service = Connect();
  ASSERT_NE(service, nullptr);
  absl::StatusOr<v1::VersionResponse> version = service->Version(kKubeRuntimeAPIVersion);
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(version->version(), "0.1.0");
  EXPECT_EQ(version->runtime_name(), "testruntime");
  EXPECT_EQ(version->runtime_api_version(), "v1");
}

TEST_F(RemoteRuntimeTest, VersionWithEmptyFieldsIsAnError) {
  auto service = Connect();
  ASSERT_NE(service, nullptr);
  runtime_.empty_version = true;
  absl::StatusOr<v1::VersionResponse> version = service->Version(kKubeRuntimeAPIVersion);
  ASSERT_FALSE(version.ok());
  EXPECT_EQ(version.status().code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(std::string(version.status().message()), StartsWith("Version: "));
}

TEST_F(RemoteRuntimeTest, RunPodSandboxRoundTrip) {
  auto service = Connect();
  ASSERT_NE(service, nullptr);
  v1::PodSandboxConfig config;
  config.mutable_metadata()->set_name("pod");
  config.mutable_metadata()->set_uid("uid1");
  absl::StatusOr<std::string> id = service->RunPodSandbox(config, "runc");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, "sb-uid1-runc");
}

TEST_F(RemoteRuntimeTest, ErrorsKeepCodeAndGetMethodPrefix) {
  auto service = Connect();
  ASSERT_NE(service, nullptr);
  v1::PodSandboxConfig config;
  config.mutable_metadata()->set_name("fail");
  absl::StatusOr<std::string> id = service->RunPodSandbox(config, "");
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(id.status().message(), "RunPodSandbox: failed to setup network");

  absl::Status stop = service->StopContainer("missing", 5);
  EXPECT_EQ(stop.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(stop.message(), "StopContainer: container \"missing\" not found");

  // Methods the server does not implement map to kUnimplemented.
  absl::Status reopen = service->ReopenContainerLog("c");
  EXPECT_EQ(reopen.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(reopen.message()), StartsWith("ReopenContainerLog: "));
}

TEST_F(RemoteRuntimeTest, MissingIdsAreContractErrors) {
  auto service = Connect();
  ASSERT_NE(service, nullptr);
  v1::PodSandboxConfig config;
  config.mutable_metadata()->set_name("noid");
  absl::StatusOr<std::string> id = service->RunPodSandbox(config, "");
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(std::string(id.status().message()),
              StartsWith("RunPodSandbox: PodSandboxId is not set"));

  auto status = service->ContainerStatus("incomplete", false);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.status().message()),
              StartsWith("ContainerStatus: status.Metadata"));

  auto runtime_status = service->Status(false);
  ASSERT_FALSE(runtime_status.ok());
  EXPECT_THAT(std::string(runtime_status.status().message()), HasSubstr("NetworkReady"));
}

TEST_F(RemoteRuntimeTest, StopContainerSendsGracePeriod) {
  auto service = Connect();
  ASSERT_NE(service, nullptr);
  EXPECT_TRUE(service->StopContainer("c1", 7).ok());
  EXPECT_EQ(runtime_.last_stop_timeout.load(), 7);
}

TEST_F(RemoteRuntimeTest, ListContainersRoundTripWithFilter) {
  auto service = Connect();
  ASSERT_NE(service, nullptr);
  auto all = service->ListContainers(nullptr);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[1].id(), "c1");
  EXPECT_EQ((*all)[1].labels().at("app"), "web");

  v1::ContainerFilter filter;
  filter.set_pod_sandbox_id("sb1");
  (*filter.mutable_label_selector())["app"] = "web";
  auto filtered = service->ListContainers(&filter);
  ASSERT_TRUE(filtered.ok()) << filtered.status();
  ASSERT_EQ(filtered->size(), 4u);
  EXPECT_EQ(filtered->back().id(), "filter:sb1");
  EXPECT_EQ(filtered->back().labels().at("app"), "web");
}

TEST_F(RemoteRuntimeTest, SlowCallHitsRequestDeadline) {
  auto service = Connect();
  ASSERT_NE(service, nullptr);
  auto status = service->ContainerStatus("slow", false);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(status.status().message()), StartsWith("ContainerStatus: "));
  // The channel stays usable afterwards.
  auto ok = service->ContainerStatus("fast", false);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->status().state(), v1::CONTAINER_RUNNING);
}

TEST_F(RemoteRuntimeTest, ExecSyncReturnsExitCodeAndTimesOut) {
  auto service = Connect();
  ASSERT_NE(service, nullptr);
  auto result = service->ExecSync("c1", {"ls", "/"}, absl::Seconds(3));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code(), 3);
  EXPECT_EQ(result->stdout(), "out");
  EXPECT_EQ(runtime_.last_exec_timeout.load(), 3);

  // Deadline = request timeout + command timeout.
  auto hung = service->ExecSync("c1", {"hang"}, absl::Milliseconds(100));
  ASSERT_FALSE(hung.ok());
  EXPECT_EQ(hung.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(hung.status().message()), HasSubstr("'hang' timed out"));
}

TEST_F(RemoteRuntimeTest, GetContainerEventsUnimplemented) {
  auto service = Connect();
  ASSERT_NE(service, nullptr);
  StreamCancellation cancel;
  int events = 0;
  absl::Status status =
      service->GetContainerEvents([&](const v1::ContainerEventResponse&) { ++events; }, cancel);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(status.message()), StartsWith("GetContainerEvents: "));
  EXPECT_EQ(events, 0);
}

TEST_F(RemoteRuntimeTest, GetContainerEventsStreamsUntilCancelled) {
  auto service = Connect();
  ASSERT_NE(service, nullptr);
  runtime_.stream_events = true;
  StreamCancellation cancel;
  std::atomic<int> events{0};
  absl::Status status;
  std::thread reader([&] {
    status = service->GetContainerEvents(
        [&](const v1::ContainerEventResponse& event) {
          EXPECT_EQ(event.container_event_type(), v1::CONTAINER_STARTED_EVENT);
          ++events;
        },
        cancel);
  });
  ASSERT_TRUE(runtime_.stream_started.WaitForNotificationWithTimeout(absl::Seconds(10)));
  const absl::Time limit = absl::Now() + absl::Seconds(10);
  while (events.load() < 2 && absl::Now() < limit) absl::SleepFor(absl::Milliseconds(5));
  cancel.Cancel();
  reader.join();
  EXPECT_EQ(events.load(), 2);
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
}

TEST_F(RemoteRuntimeTest, CancelBeforeStreamStartsReturnsAtOnce) {
  auto service = Connect();
  ASSERT_NE(service, nullptr);
  runtime_.stream_events = true;
  StreamCancellation cancel;
  cancel.Cancel();
  absl::Status status =
      service->GetContainerEvents([](const v1::ContainerEventResponse&) {}, cancel);
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
}

TEST_F(RemoteRuntimeTest, ImageServiceRoundTrip) {
  auto images = NewRemoteImageService("unix://" + socket_, kTimeout);
  ASSERT_TRUE(images.ok()) << images.status();

  auto fs = (*images)->ImageFsInfo();
  ASSERT_TRUE(fs.ok()) << fs.status();
  ASSERT_EQ(fs->size(), 1u);
  EXPECT_EQ((*fs)[0].used_bytes().value(), 42u);

  v1::ImageSpec spec;
  spec.set_image("present");
  auto present = (*images)->ImageStatus(spec, false);
  ASSERT_TRUE(present.ok()) << present.status();
  EXPECT_TRUE(present->has_image());
  spec.set_image("absent");
  auto absent = (*images)->ImageStatus(spec, false);
  ASSERT_TRUE(absent.ok()) << absent.status();
  EXPECT_FALSE(absent->has_image());

  // The pull takes longer than the request timeout and still succeeds.
  spec.set_image("busybox");
  v1::AuthConfig auth;
  auth.set_username("user");
  auto ref = (*images)->PullImage(spec, &auth, nullptr);
  ASSERT_TRUE(ref.ok()) << ref.status();
  EXPECT_EQ(*ref, "sha256:busybox");

  auto denied = (*images)->PullImage(spec, nullptr, nullptr);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(denied.status().message(), "PullImage: pull access denied");

  // Unimplemented on the test server.
  auto list = (*images)->ListImages(nullptr);
  EXPECT_EQ(list.status().code(), absl::StatusCode::kUnimplemented);
}

TEST_F(RemoteRuntimeTest, PullTimeoutCapsPulls) {
  auto images = NewRemoteImageService("unix://" + socket_, kTimeout, kTimeout);
  ASSERT_TRUE(images.ok()) << images.status();
  v1::ImageSpec spec;
  spec.set_image("busybox");
  auto ref = (*images)->PullImage(spec, nullptr, nullptr);
  EXPECT_EQ(ref.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(StreamCancellationTest, HookRunsOnceAndClearWaits) {
  StreamCancellation cancel;
  int runs = 0;
  cancel.SetCancelHook([&] { ++runs; });
  EXPECT_FALSE(cancel.IsCancelled());
  cancel.Cancel();
  cancel.Cancel();
  EXPECT_TRUE(cancel.IsCancelled());
  EXPECT_EQ(runs, 1);
  cancel.ClearCancelHook();
  // A hook set after cancellation runs at once.
  cancel.SetCancelHook([&] { ++runs; });
  EXPECT_EQ(runs, 2);
  cancel.ClearCancelHook();
}

}  // namespace
}  // namespace kubelet::cri
