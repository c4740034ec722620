#include "kubelet/kuberuntime/image_manager.h"

#include <atomic>
#include <thread>

#include "gtest/gtest.h"
#include "kubelet/kuberuntime/test_util.h"

namespace kubelet::kuberuntime {
namespace {

using testing::MakeContainer;
using testing::MakePod;

class ImageManagerTest : public ::testing::Test {
 protected:
  ImageManagerTest() {
    fake_.SetClock([this] { return clock_.Now(); });
  }

  ImageManagerOptions Opts() {
    ImageManagerOptions o;
    o.pull_qps = 0;
    return o;
  }

  FakeClock clock_;
  cri::FakeRuntime fake_;
};

TEST_F(ImageManagerTest, IfNotPresentPullsOnce) {
  ImageManager m(fake_, clock_, Opts());
  api::Pod pod = MakePod("p", {MakeContainer("a", "busybox:1.36")});
  ASSERT_EQ(pod.spec.containers[0].image_pull_policy, api::kPullIfNotPresent);
  EnsureImageResult r = m.EnsureImageExists(pod, pod.spec.containers[0], nullptr);
  ASSERT_TRUE(r.ok()) << r.reason << ": " << r.message;
  EXPECT_FALSE(r.image_ref.empty());
  EXPECT_EQ(fake_.CallCount("PullImage"), 1);
  r = m.EnsureImageExists(pod, pod.spec.containers[0], nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(fake_.CallCount("PullImage"), 1);
  // The pull carries the pod's annotations and the image with its tag.
  ASSERT_EQ(fake_.pull_requests().size(), 1u);
  EXPECT_EQ(fake_.pull_requests()[0].image().image(), "busybox:1.36");
}

TEST_F(ImageManagerTest, AlwaysPullsEveryTime) {
  ImageManager m(fake_, clock_, Opts());
  api::Pod pod = MakePod("p", {MakeContainer("a", "busybox")});
  ASSERT_EQ(pod.spec.containers[0].image_pull_policy, api::kPullAlways);
  EXPECT_TRUE(m.EnsureImageExists(pod, pod.spec.containers[0], nullptr).ok());
  EXPECT_TRUE(m.EnsureImageExists(pod, pod.spec.containers[0], nullptr).ok());
  EXPECT_EQ(fake_.CallCount("PullImage"), 2);
  EXPECT_EQ(fake_.pull_requests()[0].image().image(), "busybox:latest");
}

TEST_F(ImageManagerTest, NeverPolicy) {
  ImageManager m(fake_, clock_, Opts());
  api::Container c = MakeContainer("a", "busybox:1.36");
  c.image_pull_policy = api::kPullNever;
  api::Pod pod = MakePod("p", {c});
  EnsureImageResult r = m.EnsureImageExists(pod, pod.spec.containers[0], nullptr);
  EXPECT_EQ(r.reason, kErrImageNeverPull);
  EXPECT_EQ(r.message, "Container image \"busybox:1.36\" is not present with pull policy of Never");
  EXPECT_EQ(fake_.CallCount("PullImage"), 0);
  runtime::v1::Image img;
  img.set_id("sha256:abc");
  img.add_repo_tags("docker.io/library/busybox:1.36");
  fake_.AddImage(img);
  r = m.EnsureImageExists(pod, pod.spec.containers[0], nullptr);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.image_ref, "sha256:abc");
}

TEST_F(ImageManagerTest, InvalidImageName) {
  ImageManager m(fake_, clock_, Opts());
  api::Pod pod = MakePod("p", {MakeContainer("a", "Not/Valid Image")});
  EnsureImageResult r = m.EnsureImageExists(pod, pod.spec.containers[0], nullptr);
  EXPECT_EQ(r.reason, kErrInvalidImageName);
  EXPECT_EQ(r.message.rfind("Failed to apply default image tag \"Not/Valid Image\"", 0), 0u)
      << r.message;
}

TEST_F(ImageManagerTest, InspectError) {
  ImageManager m(fake_, clock_, Opts());
  api::Pod pod = MakePod("p", {MakeContainer("a", "busybox:1.36")});
  fake_.InjectError("ImageStatus", absl::UnavailableError("ImageStatus: connection refused"));
  EnsureImageResult r = m.EnsureImageExists(pod, pod.spec.containers[0], nullptr);
  EXPECT_EQ(r.reason, kErrImageInspect);
  EXPECT_EQ(r.message,
            "Failed to inspect image \"busybox:1.36\": rpc error: code = Unavailable desc = "
            "connection refused");
}

// Upstream's CRI image client strips the code of an Unknown error (containerd's 401s and most
// pull failures come that way).
TEST_F(ImageManagerTest, UnknownPullErrorsCarryOnlyTheRuntimeMessage) {
  ImageManager m(fake_, clock_, Opts());
  api::Pod pod = MakePod("p", {MakeContainer("a", "busybox:1.36")});
  fake_.InjectError("PullImage", absl::UnknownError("PullImage: failed to pull and unpack image"));
  EnsureImageResult r = m.EnsureImageExists(pod, pod.spec.containers[0], nullptr);
  EXPECT_EQ(r.reason, kErrImagePull);
  EXPECT_EQ(r.message, "failed to pull and unpack image");
  EXPECT_EQ(PullErrorString(absl::UnknownError("x")), "x");
  EXPECT_EQ(PullErrorString(absl::NotFoundError("x")), "rpc error: code = NotFound desc = x");
}

TEST_F(ImageManagerTest, PullErrorThenBackOff) {
  ImageManager m(fake_, clock_, Opts());
  api::Pod pod = MakePod("p", {MakeContainer("a", "busybox:1.36")});
  const api::Container& c = pod.spec.containers[0];
  fake_.InjectError("PullImage", absl::NotFoundError("PullImage: failed to resolve reference"));
  EnsureImageResult r = m.EnsureImageExists(pod, c, nullptr);
  EXPECT_EQ(r.reason, kErrImagePull);
  EXPECT_EQ(r.message, "rpc error: code = NotFound desc = failed to resolve reference");
  // Within the back-off: no pull.
  clock_.Advance(absl::Seconds(5));
  r = m.EnsureImageExists(pod, c, nullptr);
  EXPECT_EQ(r.reason, kErrImagePullBackOff);
  EXPECT_EQ(r.message, "Back-off pulling image \"busybox:1.36\"");
  EXPECT_EQ(fake_.CallCount("PullImage"), 1);
  // After 10s: pulls again; a second failure doubles the back-off.
  clock_.Advance(absl::Seconds(5));
  fake_.InjectError("PullImage", absl::NotFoundError("PullImage: failed"));
  EXPECT_EQ(m.EnsureImageExists(pod, c, nullptr).reason, kErrImagePull);
  clock_.Advance(absl::Seconds(19));
  EXPECT_EQ(m.EnsureImageExists(pod, c, nullptr).reason, kErrImagePullBackOff);
  clock_.Advance(absl::Seconds(1));
  EXPECT_TRUE(m.EnsureImageExists(pod, c, nullptr).ok());
  EXPECT_EQ(fake_.CallCount("PullImage"), 3);
  // Another pod pulling the same image is not affected by this pod's back-off; ForgetPod drops it.
  m.ForgetPod(pod.metadata.uid);
}

TEST_F(ImageManagerTest, RegistryUnavailable) {
  ImageManager m(fake_, clock_, Opts());
  api::Pod pod = MakePod("p", {MakeContainer("a", "busybox:1.36")});
  fake_.InjectError("PullImage",
                    absl::UnknownError("PullImage: RegistryUnavailable: dial tcp: refused"));
  EnsureImageResult r = m.EnsureImageExists(pod, pod.spec.containers[0], nullptr);
  EXPECT_EQ(r.reason, kErrRegistryUnavailable);
  EXPECT_EQ(r.message,
            "image pull failed for busybox:1.36 because the registry is unavailable: dial tcp: "
            "refused");
}

TEST_F(ImageManagerTest, PullQPS) {
  ImageManagerOptions o = Opts();
  o.pull_qps = 1;
  o.pull_burst = 1;
  ImageManager m(fake_, clock_, o);
  api::Pod pod = MakePod("p", {MakeContainer("a", "busybox"), MakeContainer("b", "alpine")});
  EXPECT_TRUE(m.EnsureImageExists(pod, pod.spec.containers[0], nullptr).ok());
  EnsureImageResult r = m.EnsureImageExists(pod, pod.spec.containers[1], nullptr);
  EXPECT_EQ(r.reason, kErrImagePull);
  EXPECT_EQ(r.message, "pull QPS exceeded");
}

TEST_F(ImageManagerTest, CredentialsTriedInOrder) {
  ImageManagerOptions o = Opts();
  o.pull_credentials = [](const api::Pod&, const std::string&) {
    std::vector<runtime::v1::AuthConfig> creds(2);
    creds[0].set_username("first");
    creds[1].set_username("second");
    return creds;
  };
  ImageManager m(fake_, clock_, o);
  api::Pod pod = MakePod("p", {MakeContainer("a", "busybox:1.36")});
  fake_.InjectError("PullImage", absl::PermissionDeniedError("PullImage: denied"));
  EXPECT_TRUE(m.EnsureImageExists(pod, pod.spec.containers[0], nullptr).ok());
  ASSERT_EQ(fake_.pull_requests().size(), 2u);
  EXPECT_EQ(fake_.pull_requests()[0].auth().username(), "first");
  EXPECT_EQ(fake_.pull_requests()[1].auth().username(), "second");
}

TEST_F(ImageManagerTest, CredentialErrorFailsThePull) {
  ImageManagerOptions o = Opts();
  o.pull_credentials =
      [](const api::Pod&,
         const std::string&) -> absl::StatusOr<std::vector<runtime::v1::AuthConfig>> {
    return absl::InvalidArgumentError("pull secret \"regcred\": invalid .dockerconfigjson");
  };
  ImageManager m(fake_, clock_, o);
  api::Pod pod = MakePod("p", {MakeContainer("a", "busybox:1.36")});
  EnsureImageResult r = m.EnsureImageExists(pod, pod.spec.containers[0], nullptr);
  EXPECT_EQ(r.reason, kErrImagePull);
  EXPECT_NE(r.message.find("invalid .dockerconfigjson"), std::string::npos) << r.message;
  EXPECT_TRUE(fake_.pull_requests().empty());
}

TEST_F(ImageManagerTest, ParallelPullsRun) {
  ImageManagerOptions o = Opts();
  o.serialize_image_pulls = false;
  o.max_parallel_image_pulls = 2;
  ImageManager m(fake_, clock_, o);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&, i] {
      api::Pod pod =
          MakePod("p" + std::to_string(i), {MakeContainer("a", "img" + std::to_string(i) + ":1")});
      if (m.EnsureImageExists(pod, pod.spec.containers[0], nullptr).ok()) ++ok;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok.load(), 6);
}

}  // namespace
}  // namespace kubelet::kuberuntime
