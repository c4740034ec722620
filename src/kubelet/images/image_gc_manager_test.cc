#include "kubelet/images/image_gc_manager.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/log.h"
#include "cri/testing/fake_runtime.h"
#include "gtest/gtest.h"

namespace kubelet::images {
namespace {

namespace v1 = runtime::v1;

class ImageGCManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log::Options opts;
    opts.verbosity = 5;
    opts.sink = [this](std::string_view line) {
      absl::MutexLock l(&log_mu_);
      log_.append(line);
    };
    log::Configure(opts);
  }
  void TearDown() override { log::Configure(log::Options{}); }

  void AddImage(const std::string& id, const std::string& tag, uint64_t size, bool pinned = false) {
    v1::Image image;
    image.set_id(id);
    image.add_repo_tags(tag);
    image.set_size(size);
    image.set_pinned(pinned);
    fake_.AddImage(image);
  }

  // A container (any state) using `image`.
  void RunContainer(const std::string& pod, const std::string& image) {
    v1::PodSandboxConfig sb;
    sb.mutable_metadata()->set_name(pod);
    sb.mutable_metadata()->set_uid(pod + "-uid");
    sb.mutable_metadata()->set_namespace_("default");
    auto id = fake_.RunPodSandbox(sb, "");
    ASSERT_TRUE(id.ok()) << id.status();
    v1::ContainerConfig cc;
    cc.mutable_metadata()->set_name("main");
    cc.mutable_image()->set_image(image);
    auto cid = fake_.CreateContainer(*id, cc, sb);
    ASSERT_TRUE(cid.ok()) << cid.status();
  }

  std::unique_ptr<ImageGCManager> Make(ImageGCPolicy policy) {
    ImageGCOptions o;
    o.runtime = &fake_;
    o.images = &fake_;
    o.clock = &clock_;
    o.policy = policy;
    o.sandbox_image = "registry.k8s.io/pause:3.9";
    o.fs_usage = [this]() -> absl::StatusOr<ImageFsUsage> {
      if (!fs_error_.ok()) return fs_error_;
      return usage_;
    };
    auto m = ImageGCManager::Create(std::move(o));
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? std::move(*m) : nullptr;
  }

  std::vector<std::string> ImageIds() {
    std::vector<std::string> out;
    auto list = fake_.ListImages(nullptr);
    for (const auto& i : *list) out.push_back(i.id());
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string Log() {
    absl::MutexLock l(&log_mu_);
    return log_;
  }

  cri::FakeRuntime fake_;
  FakeClock clock_;
  ImageFsUsage usage_{1000, 1000};
  absl::Status fs_error_;
  absl::Mutex log_mu_;
  std::string log_ ABSL_GUARDED_BY(log_mu_);
};

TEST_F(ImageGCManagerTest, PolicyValidation) {
  ImageGCOptions o;
  o.runtime = &fake_;
  o.images = &fake_;
  o.clock = &clock_;
  o.policy.high_threshold_percent = 101;
  EXPECT_FALSE(ImageGCManager::Create(o).ok());
  o.policy = {70, 80, absl::Minutes(2)};
  auto m = ImageGCManager::Create(o);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "LowThresholdPercent 80 can not be higher than "
            "HighThresholdPercent 70");
  o.policy = {85, 80, absl::Minutes(2)};
  EXPECT_TRUE(ImageGCManager::Create(o).ok());
}

TEST_F(ImageGCManagerTest, BelowHighThresholdRemovesNothing) {
  AddImage("sha256:a", "docker.io/library/a:1", 100);
  auto m = Make({85, 80, absl::Minutes(2)});
  ASSERT_TRUE(m->DetectImages().ok());
  clock_.Advance(absl::Minutes(10));
  usage_ = {1000, 160};  // 84% used
  EXPECT_TRUE(m->GarbageCollect().ok());
  EXPECT_EQ(fake_.CallCount("RemoveImage"), 0);
}

TEST_F(ImageGCManagerTest, FreesDownToLowThresholdOldestFirst) {
  AddImage("sha256:old", "docker.io/library/old:1", 100);
  AddImage("sha256:mid", "docker.io/library/mid:1", 100);
  AddImage("sha256:new", "docker.io/library/new:1", 100);
  AddImage("sha256:used", "docker.io/library/used:1", 500);
  AddImage("sha256:pause", "registry.k8s.io/pause:3.9", 50);
  AddImage("sha256:pinned", "docker.io/library/pinned:1", 500, /*pinned=*/true);
  auto m = Make({90, 80, absl::Minutes(2)});
  // "old" was used by a container that is gone by the first collection; "mid" and "new" are
  // used later, in that order.
  RunContainer("p-old", "docker.io/library/old:1");
  ASSERT_TRUE(m->DetectImages().ok());
  for (const std::string& id : fake_.container_ids()) ASSERT_TRUE(fake_.RemoveContainer(id).ok());
  for (const std::string& id : fake_.sandbox_ids()) ASSERT_TRUE(fake_.RemovePodSandbox(id).ok());
  clock_.Advance(absl::Minutes(1));
  RunContainer("p-mid", "docker.io/library/mid:1");
  ASSERT_TRUE(m->DetectImages().ok());
  for (const std::string& id : fake_.container_ids()) ASSERT_TRUE(fake_.RemoveContainer(id).ok());
  clock_.Advance(absl::Minutes(1));
  RunContainer("p-new", "docker.io/library/new:1");
  ASSERT_TRUE(m->DetectImages().ok());
  for (const std::string& id : fake_.container_ids()) {
    auto c = fake_.GetContainer(id);
    if (c && c->image().image() == "docker.io/library/new:1") {
      ASSERT_TRUE(fake_.RemoveContainer(id).ok());
    }
  }
  RunContainer("p-used", "docker.io/library/used:1");
  clock_.Advance(absl::Minutes(5));

  // 95% used; down to 80% needs 1000*20/100 - 50 = 150 bytes: "old" then "mid".
  usage_ = {1000, 50};
  fake_.ClearCalls();
  ASSERT_TRUE(m->GarbageCollect().ok());
  EXPECT_EQ(ImageIds(), (std::vector<std::string>{"sha256:new", "sha256:pause", "sha256:pinned",
                                                  "sha256:used"}));
  const std::string log = Log();
  EXPECT_NE(log.find("\"Disk usage on image filesystem is over the high threshold, trying to "
                     "free bytes down to the low threshold\" usage=95 highThreshold=90 "
                     "amountToFree=150 lowThreshold=80"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("\"Removing image to free bytes\" imageID=\"sha256:old\" size=100"),
            std::string::npos);

  // Needing more than is eligible: "new" goes, in-use, pause and pinned stay, and it fails.
  usage_ = {1000, 0};
  absl::Status s = m->GarbageCollect();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Attempted to free 200 bytes, but only found 100 bytes eligible"),
            std::string::npos)
      << s;
  EXPECT_EQ(ImageIds(), (std::vector<std::string>{"sha256:pause", "sha256:pinned", "sha256:used"}));
}

TEST_F(ImageGCManagerTest, ImagesYoungerThanMinAgeStay) {
  AddImage("sha256:a", "docker.io/library/a:1", 400);
  AddImage("sha256:b", "docker.io/library/b:1", 400);
  auto m = Make({80, 70, absl::Minutes(2)});
  ASSERT_TRUE(m->DetectImages().ok());
  clock_.Advance(absl::Minutes(1));
  AddImage("sha256:c", "docker.io/library/c:1", 400);
  clock_.Advance(absl::Seconds(90));  // a, b: 2.5 min old; c: first seen now
  usage_ = {1000, 100};               // 90% -> free 200
  uint64_t freed = 0;
  ASSERT_TRUE(m->FreeSpace(2000, freed).ok());
  EXPECT_EQ(freed, 800u);
  EXPECT_EQ(ImageIds(), (std::vector<std::string>{"sha256:c"}));
}

TEST_F(ImageGCManagerTest, ExitedContainersKeepTheirImage) {
  AddImage("sha256:a", "docker.io/library/a:1", 400);
  auto m = Make({50, 40, absl::Seconds(0)});
  RunContainer("p", "docker.io/library/a:1");
  for (const std::string& id : fake_.container_ids()) {
    ASSERT_TRUE(fake_.SetContainerState(id, v1::CONTAINER_EXITED).ok());
  }
  clock_.Advance(absl::Minutes(10));
  usage_ = {1000, 0};
  EXPECT_FALSE(m->GarbageCollect().ok());  // nothing eligible
  EXPECT_EQ(ImageIds(), (std::vector<std::string>{"sha256:a"}));
}

TEST_F(ImageGCManagerTest, FsErrorsAndZeroCapacity) {
  auto m = Make({85, 80, absl::Minutes(2)});
  fs_error_ = absl::UnavailableError("ImageFsInfo: down");
  EXPECT_EQ(m->GarbageCollect().code(), absl::StatusCode::kUnavailable);
  fs_error_ = absl::OkStatus();
  usage_ = {0, 0};
  EXPECT_EQ(m->GarbageCollect().message(), "invalid capacity 0 on image filesystem");
}

TEST_F(ImageGCManagerTest, RemoveErrorsAreReported) {
  AddImage("sha256:a", "docker.io/library/a:1", 400);
  auto m = Make({50, 40, absl::Seconds(0)});
  ASSERT_TRUE(m->DetectImages().ok());
  clock_.Advance(absl::Minutes(1));
  fake_.InjectError("RemoveImage", absl::InternalError("RemoveImage: busy"));
  usage_ = {1000, 0};
  absl::Status s = m->GarbageCollect();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("RemoveImage: busy"), std::string::npos) << s;
  EXPECT_EQ(ImageIds(), (std::vector<std::string>{"sha256:a"}));
}

TEST_F(ImageGCManagerTest, StartRunsARoundAndStops) {
  AddImage("sha256:a", "docker.io/library/a:1", 400);
  auto m = Make({85, 80, absl::Minutes(2)});
  m->Start();
  for (int i = 0; i < 500 && m->Records().empty(); ++i) absl::SleepFor(absl::Milliseconds(10));
  m->Stop();
  ASSERT_EQ(m->Records().size(), 1u);
  EXPECT_EQ(m->Records()[0].first_detected, clock_.Now());
}

}  // namespace
}  // namespace kubelet::images
