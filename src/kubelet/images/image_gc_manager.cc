#include "kubelet/images/image_gc_manager.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/files.h"
#include "common/guarded.h"
#include "common/log.h"

namespace kubelet::images {
namespace {

namespace v1 = runtime::v1;

bool InUse(const v1::Image& image, const std::set<std::string>& in_use) {
  if (in_use.contains(image.id())) return true;
  for (const std::string& t : image.repo_tags()) {
    if (in_use.contains(t)) return true;
  }
  for (const std::string& d : image.repo_digests()) {
    if (in_use.contains(d)) return true;
  }
  return false;
}

}  // namespace

ImageFsUsageFn CriImageFsUsage(cri::ImageManagerService& images) {
  return [&images]() -> absl::StatusOr<ImageFsUsage> {
    absl::StatusOr<std::vector<v1::FilesystemUsage>> info = images.ImageFsInfo();
    if (!info.ok()) return info.status();
    if (info->empty() || info->front().fs_id().mountpoint().empty()) {
      return absl::NotFoundError("ImageFsInfo: no image filesystem mount point reported");
    }
    const std::string& mountpoint = info->front().fs_id().mountpoint();
    absl::StatusOr<FsInfo> fs = StatFs(mountpoint);
    if (!fs.ok()) return fs.status();
    return ImageFsUsage{fs->capacity_bytes, fs->available_bytes};
  };
}

absl::StatusOr<std::unique_ptr<ImageGCManager>> ImageGCManager::Create(ImageGCOptions options) {
  const ImageGCPolicy& p = options.policy;
  if (p.high_threshold_percent < 0 || p.high_threshold_percent > 100) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid HighThresholdPercent ", p.high_threshold_percent, ", must be in range [0-100]"));
  }
  if (p.low_threshold_percent < 0 || p.low_threshold_percent > 100) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid LowThresholdPercent ", p.low_threshold_percent, ", must be in range [0-100]"));
  }
  if (p.low_threshold_percent > p.high_threshold_percent) {
    return absl::InvalidArgumentError(absl::StrCat("LowThresholdPercent ", p.low_threshold_percent,
                                                   " can not be higher than HighThresholdPercent ",
                                                   p.high_threshold_percent));
  }
  if (options.runtime == nullptr || options.images == nullptr || options.clock == nullptr) {
    return absl::InvalidArgumentError("image GC manager needs the CRI services and a clock");
  }
  if (!options.fs_usage) options.fs_usage = CriImageFsUsage(*options.images);
  return std::unique_ptr<ImageGCManager>(new ImageGCManager(std::move(options)));
}

ImageGCManager::ImageGCManager(ImageGCOptions options) : options_(std::move(options)) {}

ImageGCManager::~ImageGCManager() { Stop(); }

void ImageGCManager::Start() {
  if (thread_.joinable()) return;
  {
    absl::MutexLock lock(&mu_);
    stop_ = false;
  }
  if (options_.policy.high_threshold_percent == 100) {
    KLOG_V(2, "ImageGCHighThresholdPercent is set 100, Disable image GC");
  }
  thread_ = GuardedThread("image GC loop", [this] { Loop(); });
}

void ImageGCManager::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void ImageGCManager::Loop() {
  for (;;) {
    RunGuarded("image GC round", [this] { RunOnce(); });
    absl::MutexLock lock(&mu_);
    auto stopped = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; };
    if (mu_.AwaitWithTimeout(absl::Condition(&stopped), options_.period)) return;
  }
}

void ImageGCManager::RunOnce() {
  if (auto in_use = DetectImages(); !in_use.ok()) {
    KLOG_WARNING("Failed to monitor images", "err", in_use.status());
  }
  if (options_.policy.high_threshold_percent != 100) {
    if (absl::Status s = GarbageCollect(); !s.ok()) {
      if (prev_gc_failed_) {
        KLOG_ERROR(s, "Image garbage collection failed multiple times in a row");
      } else {
        KLOG_ERROR(s,
                   "Image garbage collection failed once. Stats initialization may not have "
                   "completed yet");
      }
      prev_gc_failed_ = true;
    } else {
      KLOG_V(prev_gc_failed_ ? 1 : 4, "Image garbage collection succeeded");
      prev_gc_failed_ = false;
    }
  }
}

absl::StatusOr<std::vector<std::string>> ImageGCManager::DetectImages() {
  absl::MutexLock round(&round_mu_);
  return DetectImagesAt(options_.clock->Now());
}

absl::StatusOr<std::vector<std::string>> ImageGCManager::DetectImagesAt(absl::Time now) {
  absl::StatusOr<std::vector<v1::Image>> images = options_.images->ListImages(nullptr);
  if (!images.ok()) return images.status();
  absl::StatusOr<std::vector<v1::Container>> containers = options_.runtime->ListContainers(nullptr);
  if (!containers.ok()) return containers.status();
  // Every container the runtime still has keeps its image, whatever its state; so does the
  // sandbox image.
  std::set<std::string> in_use;
  for (const v1::Container& c : *containers) {
    if (!c.image_ref().empty()) in_use.insert(c.image_ref());
    if (!c.image().image().empty()) in_use.insert(c.image().image());
  }
  if (!options_.sandbox_image.empty()) {
    in_use.insert(options_.sandbox_image);
    v1::ImageSpec spec;
    spec.set_image(options_.sandbox_image);
    if (auto st = options_.images->ImageStatus(spec, false); st.ok() && st->has_image()) {
      in_use.insert(st->image().id());
    }
  }
  std::vector<std::string> used_ids;
  absl::MutexLock lock(&mu_);
  std::set<std::string> present;
  for (const v1::Image& image : *images) {
    present.insert(image.id());
    auto [it, inserted] = records_.try_emplace(image.id());
    ImageRecord& r = it->second;
    if (inserted) {
      r.id = image.id();
      r.first_detected = now;
      KLOG_V(4, "Adding image ID to currentImages", "imageID", image.id());
    }
    if (InUse(image, in_use)) {
      r.last_used = now;
      used_ids.push_back(image.id());
    }
    r.size = image.size();
    r.pinned = image.pinned();
  }
  for (auto it = records_.begin(); it != records_.end();) {
    if (!present.contains(it->first)) {
      KLOG_V(4, "Image ID is no longer present; removing from imageRecords", "imageID", it->first);
      it = records_.erase(it);
    } else {
      ++it;
    }
  }
  return used_ids;
}

absl::Status ImageGCManager::FreeSpace(uint64_t bytes_to_free, uint64_t& freed) {
  absl::MutexLock round(&round_mu_);
  return FreeSpaceAt(bytes_to_free, options_.clock->Now(), freed);
}

absl::Status ImageGCManager::FreeSpaceAt(uint64_t bytes_to_free, absl::Time now, uint64_t& freed) {
  freed = 0;
  absl::StatusOr<std::vector<std::string>> used = DetectImagesAt(now);
  if (!used.ok()) return used.status();
  const std::set<std::string> in_use(used->begin(), used->end());
  std::vector<ImageRecord> candidates;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, r] : records_) {
      if (!in_use.contains(id)) candidates.push_back(r);
    }
  }
  std::sort(candidates.begin(), candidates.end(), [](const ImageRecord& a, const ImageRecord& b) {
    if (a.last_used != b.last_used) return a.last_used < b.last_used;
    return a.first_detected < b.first_detected;
  });
  std::vector<std::string> errors;
  for (const ImageRecord& image : candidates) {
    if (image.last_used >= now) {
      KLOG_V(5, "Image ID was used too recently, not eligible for garbage collection", "imageID",
             image.id, "lastUsed", absl::FormatTime(image.last_used), "freeTime",
             absl::FormatTime(now));
      continue;
    }
    if (now - image.first_detected < options_.policy.min_age) {
      KLOG_V(5,
             "Image ID's age is less than the policy's minAge, not eligible for garbage "
             "collection",
             "imageID", image.id, "age", now - image.first_detected, "minAge",
             options_.policy.min_age);
      continue;
    }
    if (image.pinned) {
      KLOG_V(4, "Image is pinned, skipping garbage collection", "imageID", image.id);
      continue;
    }
    KLOG_INFO("Removing image to free bytes", "imageID", image.id, "size", image.size);
    v1::ImageSpec spec;
    spec.set_image(image.id);
    if (absl::Status s = options_.images->RemoveImage(spec); !s.ok()) {
      errors.push_back(s.ToString());
      continue;
    }
    {
      absl::MutexLock lock(&mu_);
      records_.erase(image.id);
    }
    freed += image.size;
    if (freed >= bytes_to_free) break;
  }
  if (!errors.empty()) {
    return absl::UnknownError(
        absl::StrCat("wanted to free ", bytes_to_free, " bytes, but freed ", freed,
                     " bytes space with errors in image deletion: ", absl::StrJoin(errors, ", ")));
  }
  return absl::OkStatus();
}

absl::Status ImageGCManager::GarbageCollect() {
  absl::MutexLock round(&round_mu_);
  absl::StatusOr<ImageFsUsage> fs = options_.fs_usage();
  if (!fs.ok()) return fs.status();
  const int64_t capacity = static_cast<int64_t>(fs->capacity_bytes);
  int64_t available = static_cast<int64_t>(fs->available_bytes);
  if (available > capacity) {
    KLOG_WARNING("Available space is greater than capacity", "available", available, "capacity",
                 capacity);
    available = capacity;
  }
  if (capacity == 0) {
    return absl::FailedPreconditionError("invalid capacity 0 on image filesystem");
  }
  const int usage_percent = 100 - static_cast<int>(available * 100 / capacity);
  const ImageGCPolicy& p = options_.policy;
  if (usage_percent < p.high_threshold_percent) return absl::OkStatus();
  const int64_t amount_to_free = capacity * (100 - p.low_threshold_percent) / 100 - available;
  KLOG_INFO(
      "Disk usage on image filesystem is over the high threshold, trying to free bytes "
      "down to the low threshold",
      "usage", usage_percent, "highThreshold", p.high_threshold_percent, "amountToFree",
      amount_to_free, "lowThreshold", p.low_threshold_percent);
  if (amount_to_free <= 0) return absl::OkStatus();
  uint64_t freed = 0;
  if (absl::Status s =
          FreeSpaceAt(static_cast<uint64_t>(amount_to_free), options_.clock->Now(), freed);
      !s.ok()) {
    return s;
  }
  if (freed < static_cast<uint64_t>(amount_to_free)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("Failed to garbage collect required amount of images. Attempted to free ",
                     amount_to_free, " bytes, but only found ", freed, " bytes eligible to free."));
  }
  return absl::OkStatus();
}

std::vector<ImageRecord> ImageGCManager::Records() const {
  absl::MutexLock lock(&mu_);
  std::vector<ImageRecord> out;
  for (const auto& [id, r] : records_) out.push_back(r);
  return out;
}

}  // namespace kubelet::images
