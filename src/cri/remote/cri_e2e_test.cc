// End-to-end test of the remote CRI client against a real containerd.
//
// Environment (provided by the e2e harness):
//   KUBELET_E2E_RUNTIME_SOCK     containerd's CRI socket (path or unix:// URL); the test skips
//                                itself when unset.
//   KUBELET_E2E_REGISTRY         host:port of a plain-HTTP registry holding e2e/busybox:1.36;
//                                the pull test skips itself when unset.
// The runtime must already hold docker.io/library/busybox:1.36 and its sandbox (pause) image,
// and have a working CNI configuration.
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "cri/remote/remote_runtime.h"
#include "gtest/gtest.h"

namespace kubelet::cri {
namespace {

namespace v1 = ::runtime::v1;

constexpr char kBusybox[] = "docker.io/library/busybox:1.36";
constexpr char kRunLabel[] = "kubelet-cpp.test/cri-e2e-run";

std::string Env(const char* name) {
  const char* value = getenv(name);
  return value == nullptr ? "" : value;
}

class CriE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    endpoint_ = Env("KUBELET_E2E_RUNTIME_SOCK");
    if (endpoint_.empty()) GTEST_SKIP() << "KUBELET_E2E_RUNTIME_SOCK is not set";
    auto runtime = NewRemoteRuntimeService(endpoint_, absl::Minutes(2));
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = *std::move(runtime);
    auto images = NewRemoteImageService(endpoint_, absl::Minutes(2));
    ASSERT_TRUE(images.ok()) << images.status();
    images_ = *std::move(images);

    run_id_ = absl::StrCat(getpid(), "-", absl::ToUnixNanos(absl::Now()));
    char dir_template[] = "/tmp/cri-e2e-XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    log_dir_ = dir_template;
  }

  void TearDown() override {
    // Best effort: leave no pod behind when an assertion failed half-way.
    if (runtime_ != nullptr && !sandbox_id_.empty()) {
      (void)runtime_->StopPodSandbox(sandbox_id_);
      (void)runtime_->RemovePodSandbox(sandbox_id_);
    }
    if (!log_dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(log_dir_, ec);
    }
  }

  v1::PodSandboxConfig SandboxConfig() const {
    v1::PodSandboxConfig config;
    v1::PodSandboxMetadata* md = config.mutable_metadata();
    md->set_name(absl::StrCat("cri-e2e-", run_id_));
    md->set_namespace_("cri-e2e");
    md->set_uid(absl::StrCat("uid-", run_id_));
    md->set_attempt(0);
    config.set_hostname("cri-e2e");
    config.set_log_directory(log_dir_);
    (*config.mutable_labels())[kRunLabel] = run_id_;
    (*config.mutable_labels())["io.kubernetes.pod.name"] = md->name();
    (*config.mutable_annotations())["kubelet-cpp.test/purpose"] = "cri-e2e";
    v1::NamespaceOption* ns =
        config.mutable_linux()->mutable_security_context()->mutable_namespace_options();
    ns->set_network(v1::POD);
    ns->set_pid(v1::CONTAINER);
    ns->set_ipc(v1::POD);
    return config;
  }

  v1::ContainerConfig BusyboxConfig() const {
    v1::ContainerConfig config;
    config.mutable_metadata()->set_name("busybox");
    config.mutable_image()->set_image(kBusybox);
    config.add_command("sh");
    config.add_args("-c");
    config.add_args("trap 'exit 0' TERM; while true; do sleep 1; done");
    config.set_log_path("busybox/0.log");
    (*config.mutable_labels())[kRunLabel] = run_id_;
    (*config.mutable_labels())["io.kubernetes.container.name"] = "busybox";
    v1::LinuxContainerConfig* linux_config = config.mutable_linux();
    linux_config->mutable_security_context()->mutable_namespace_options()->set_network(v1::POD);
    linux_config->mutable_security_context()->mutable_namespace_options()->set_pid(v1::CONTAINER);
    linux_config->mutable_security_context()->mutable_namespace_options()->set_ipc(v1::POD);
    return config;
  }

  std::string endpoint_;
  std::unique_ptr<RuntimeService> runtime_;
  std::unique_ptr<ImageManagerService> images_;
  std::string run_id_;
  std::string log_dir_;
  std::string sandbox_id_;
};

TEST_F(CriE2ETest, Version) {
  auto version = runtime_->Version(kKubeRuntimeAPIVersion);
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(version->runtime_name(), "containerd");
  EXPECT_EQ(version->runtime_api_version(), "v1");
  EXPECT_FALSE(version->runtime_version().empty());
}

TEST_F(CriE2ETest, StatusReportsRuntimeReady) {
  auto status = runtime_->Status(false);
  ASSERT_TRUE(status.ok()) << status.status();
  bool runtime_ready = false;
  for (const v1::RuntimeCondition& c : status->status().conditions()) {
    if (c.type() == "RuntimeReady") runtime_ready = c.status();
  }
  EXPECT_TRUE(runtime_ready) << status->ShortDebugString();
}

TEST_F(CriE2ETest, PodAndContainerLifecycle) {
  const v1::PodSandboxConfig sandbox_config = SandboxConfig();
  auto sandbox = runtime_->RunPodSandbox(sandbox_config, "");
  ASSERT_TRUE(sandbox.ok()) << sandbox.status();
  sandbox_id_ = *sandbox;

  // The kubelet creates the container's log directory before CreateContainer.
  std::filesystem::create_directories(std::filesystem::path(log_dir_) / "busybox");
  auto container = runtime_->CreateContainer(sandbox_id_, BusyboxConfig(), sandbox_config);
  ASSERT_TRUE(container.ok()) << container.status();
  const std::string container_id = *container;
  ASSERT_TRUE(runtime_->StartContainer(container_id).ok());

  v1::PodSandboxFilter sandbox_filter;
  (*sandbox_filter.mutable_label_selector())[kRunLabel] = run_id_;
  auto sandboxes = runtime_->ListPodSandbox(&sandbox_filter);
  ASSERT_TRUE(sandboxes.ok()) << sandboxes.status();
  ASSERT_EQ(sandboxes->size(), 1u);
  EXPECT_EQ((*sandboxes)[0].id(), sandbox_id_);
  EXPECT_EQ((*sandboxes)[0].state(), v1::SANDBOX_READY);
  EXPECT_EQ((*sandboxes)[0].metadata().uid(), sandbox_config.metadata().uid());

  v1::ContainerFilter container_filter;
  (*container_filter.mutable_label_selector())[kRunLabel] = run_id_;
  auto containers = runtime_->ListContainers(&container_filter);
  ASSERT_TRUE(containers.ok()) << containers.status();
  ASSERT_EQ(containers->size(), 1u);
  EXPECT_EQ((*containers)[0].id(), container_id);
  EXPECT_EQ((*containers)[0].pod_sandbox_id(), sandbox_id_);
  EXPECT_EQ((*containers)[0].state(), v1::CONTAINER_RUNNING);

  auto status = runtime_->ContainerStatus(container_id, false);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->status().state(), v1::CONTAINER_RUNNING);
  EXPECT_GT(status->status().started_at(), 0);
  EXPECT_EQ(status->status().metadata().name(), "busybox");
  EXPECT_EQ(status->status().log_path(), log_dir_ + "/busybox/0.log");

  auto sandbox_status = runtime_->PodSandboxStatus(sandbox_id_, false);
  ASSERT_TRUE(sandbox_status.ok()) << sandbox_status.status();
  EXPECT_EQ(sandbox_status->status().state(), v1::SANDBOX_READY);
  EXPECT_FALSE(sandbox_status->status().network().ip().empty())
      << sandbox_status->ShortDebugString();

  auto exec = runtime_->ExecSync(container_id, {"echo", "hello"}, absl::Seconds(10));
  ASSERT_TRUE(exec.ok()) << exec.status();
  EXPECT_EQ(exec->exit_code(), 0);
  EXPECT_EQ(exec->stdout(), "hello\n");
  auto failing = runtime_->ExecSync(container_id, {"sh", "-c", "exit 3"}, absl::Seconds(10));
  ASSERT_TRUE(failing.ok()) << failing.status();
  EXPECT_EQ(failing->exit_code(), 3);

  auto stats = runtime_->ContainerStats(container_id);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->attributes().id(), container_id);

  ASSERT_TRUE(runtime_->StopContainer(container_id, 5).ok());
  status = runtime_->ContainerStatus(container_id, false);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->status().state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(status->status().exit_code(), 0);  // the TERM trap exits cleanly
  EXPECT_GT(status->status().finished_at(), 0);

  ASSERT_TRUE(runtime_->RemoveContainer(container_id).ok());
  auto gone = runtime_->ContainerStatus(container_id, false);
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound) << gone.status();
  EXPECT_TRUE(runtime_->RemoveContainer(container_id).ok());  // idempotent

  ASSERT_TRUE(runtime_->StopPodSandbox(sandbox_id_).ok());
  ASSERT_TRUE(runtime_->RemovePodSandbox(sandbox_id_).ok());
  sandboxes = runtime_->ListPodSandbox(&sandbox_filter);
  ASSERT_TRUE(sandboxes.ok()) << sandboxes.status();
  EXPECT_TRUE(sandboxes->empty());
  EXPECT_TRUE(runtime_->RemovePodSandbox(sandbox_id_).ok());  // idempotent
  sandbox_id_.clear();
}

TEST_F(CriE2ETest, ErrorsCarryMethodAndCode) {
  auto status = runtime_->ContainerStatus("does-not-exist-" + run_id_, false);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.status().code(), absl::StatusCode::kNotFound) << status.status();
  EXPECT_EQ(status.status().message().substr(0, 17), "ContainerStatus: ");
}

TEST_F(CriE2ETest, PullFromLocalRegistry) {
  const std::string registry = Env("KUBELET_E2E_REGISTRY");
  if (registry.empty()) GTEST_SKIP() << "KUBELET_E2E_REGISTRY is not set";
  v1::ImageSpec spec;
  spec.set_image(absl::StrCat(registry, "/e2e/busybox:1.36"));
  auto ref = images_->PullImage(spec, nullptr, nullptr);
  ASSERT_TRUE(ref.ok()) << ref.status();
  EXPECT_FALSE(ref->empty());

  auto status = images_->ImageStatus(spec, false);
  ASSERT_TRUE(status.ok()) << status.status();
  ASSERT_TRUE(status->has_image()) << spec.image();
  EXPECT_EQ(status->image().id(), *ref);
  bool tagged = false;
  for (const std::string& tag : status->image().repo_tags()) tagged |= tag == spec.image();
  EXPECT_TRUE(tagged) << status->ShortDebugString();

  v1::ImageFilter filter;
  filter.mutable_image()->set_image(spec.image());
  auto listed = images_->ListImages(&filter);
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_FALSE(listed->empty());
}

TEST_F(CriE2ETest, ImageStatusOfMissingImageIsEmpty) {
  v1::ImageSpec spec;
  spec.set_image("docker.io/library/no-such-image-kubelet-cpp:" + run_id_);
  auto status = images_->ImageStatus(spec, false);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_FALSE(status->has_image());
}

TEST_F(CriE2ETest, ImageFsInfoAndListImages) {
  auto fs = images_->ImageFsInfo();
  ASSERT_TRUE(fs.ok()) << fs.status();
  ASSERT_FALSE(fs->empty());
  EXPECT_FALSE((*fs)[0].fs_id().mountpoint().empty());
  EXPECT_GT((*fs)[0].timestamp(), 0);

  auto images = images_->ListImages(nullptr);
  ASSERT_TRUE(images.ok()) << images.status();
  bool has_busybox = false;
  for (const v1::Image& image : *images) {
    for (const std::string& tag : image.repo_tags()) has_busybox |= tag == kBusybox;
  }
  EXPECT_TRUE(has_busybox);
}

TEST_F(CriE2ETest, GetContainerEventsIsUnimplementedOrStreams) {
  StreamCancellation cancel;
  absl::Notification done;
  absl::Status result;
  std::thread reader([&] {
    result = runtime_->GetContainerEvents([](const v1::ContainerEventResponse&) {}, cancel);
    done.Notify();
  });
  // containerd 1.6 answers at once; a runtime that streams is cancelled after a while.
  if (!done.WaitForNotificationWithTimeout(absl::Seconds(2))) cancel.Cancel();
  reader.join();
  EXPECT_TRUE(result.code() == absl::StatusCode::kUnimplemented ||
              result.code() == absl::StatusCode::kCancelled)
      << result;
}

}  // namespace
}  // namespace kubelet::cri
