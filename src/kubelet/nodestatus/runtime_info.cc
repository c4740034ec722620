#include "kubelet/nodestatus/runtime_info.h"

#include <utility>

#include "common/guarded.h"

namespace kubelet::nodestatus {

RuntimeInfoCache::RuntimeInfoCache(VersionFn version, ImagesFn images,
                                   absl::Duration refresher_idle)
    : version_fn_(std::move(version)),
      images_fn_(std::move(images)),
      pool_(/*min_threads=*/0, /*max_threads=*/1, refresher_idle) {
  pool_.SetThreadName("runtime info");
}

RuntimeInfoCache::~RuntimeInfoCache() { Stop(); }

absl::StatusOr<std::string> RuntimeInfoCache::Version() {
  {
    absl::MutexLock lock(&mu_);
    if (version_) {
      WantRefreshLocked();
      return *version_;
    }
  }
  absl::StatusOr<std::string> v = version_fn_();
  absl::MutexLock lock(&mu_);
  version_ = v;
  return v;
}

absl::StatusOr<std::vector<ImageInfo>> RuntimeInfoCache::Images() {
  {
    absl::MutexLock lock(&mu_);
    if (images_) {
      WantRefreshLocked();
      return *images_;
    }
  }
  absl::StatusOr<std::vector<ImageInfo>> i = images_fn_();
  absl::MutexLock lock(&mu_);
  images_ = i;
  return i;
}

void RuntimeInfoCache::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  pool_.Stop();
}

void RuntimeInfoCache::WantRefreshLocked() {
  wanted_ = true;
  if (refreshing_ || stopping_) return;
  refreshing_ = true;
  // Submit takes the pool's own lock only, never mu_.
  pool_.Submit([this] { Refresh(); });
}

void RuntimeInfoCache::Refresh() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (!wanted_ || stopping_) {
        refreshing_ = false;
        return;
      }
      wanted_ = false;
    }
    absl::StatusOr<std::string> v = version_fn_();
    absl::StatusOr<std::vector<ImageInfo>> i = images_fn_();
    absl::MutexLock lock(&mu_);
    // A failed call keeps the last good answer.
    if (v.ok() || !version_ || !version_->ok()) version_ = v;
    if (i.ok() || !images_ || !images_->ok()) images_ = i;
  }
}

std::shared_ptr<RuntimeInfoCache> NewCriRuntimeInfoCache(cri::RuntimeService& runtime,
                                                         cri::ImageManagerService& images) {
  return std::make_shared<RuntimeInfoCache>(
      [&runtime]() -> absl::StatusOr<std::string> {
        auto v = runtime.Version("v1");
        if (!v.ok()) return v.status();
        return RuntimeVersionString(v->runtime_name(), v->runtime_version());
      },
      [&images]() -> absl::StatusOr<std::vector<ImageInfo>> {
        auto list = images.ListImages(nullptr);
        if (!list.ok()) return list.status();
        std::vector<ImageInfo> out;
        out.reserve(list->size());
        for (const auto& image : *list) {
          ImageInfo info;
          info.repo_tags.assign(image.repo_tags().begin(), image.repo_tags().end());
          info.repo_digests.assign(image.repo_digests().begin(), image.repo_digests().end());
          info.size_bytes = static_cast<int64_t>(image.size());
          out.push_back(std::move(info));
        }
        return out;
      });
}

}  // namespace kubelet::nodestatus
