// Image garbage collection (upstream pkg/kubelet/images realImageGCManager, v1.28).
//
// The manager tracks every image the runtime holds: when it was first detected and when a
// container last used it (any container the runtime lists, running or not, counts as a user;
// so does the sandbox image). Every `period` (upstream ImageGCPeriod, 5 minutes) it re-detects
// the images and checks the image file system: when usage (100 - available*100/capacity) is at
// or above the high threshold, it frees bytes down to the low threshold by removing unused
// images, least recently used first (then oldest detected), skipping images used at this
// round, pinned images, the sandbox image, and images detected less than `min_age` ago.
// A high threshold of 100 disables the periodic collection (detection still runs).
//
// Thread-safety: thread-safe. GarbageCollect/FreeSpace/DetectImages may be called from any
// thread (the eviction manager calls FreeSpace); rounds are serialized. CRI calls are never made
// under the record lock. Start() runs the periodic rounds on one thread of the manager's own;
// Stop() (or the destructor) ends it and waits for it.
// Ownership: borrows the CRI services and the clock, which must outlive the manager.
#ifndef KUBELET_KUBELET_IMAGES_IMAGE_GC_MANAGER_H_
#define KUBELET_KUBELET_IMAGES_IMAGE_GC_MANAGER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "config/kubelet_configuration.h"
#include "cri/runtime_service.h"

namespace kubelet::images {

struct ImageGCPolicy {
  int high_threshold_percent = 85;            // imageGCHighThresholdPercent
  int low_threshold_percent = 80;             // imageGCLowThresholdPercent
  absl::Duration min_age = absl::Minutes(2);  // imageMinimumGCAge
};

// Capacity and free space of the image file system.
struct ImageFsUsage {
  uint64_t capacity_bytes = 0;
  uint64_t available_bytes = 0;
};
using ImageFsUsageFn = std::function<absl::StatusOr<ImageFsUsage>()>;

// The default ImageFsUsageFn: CRI ImageFsInfo's mount point, then statfs(2) of it.
ImageFsUsageFn CriImageFsUsage(cri::ImageManagerService& images);

struct ImageGCOptions {
  cri::RuntimeService* runtime = nullptr;      // required
  cri::ImageManagerService* images = nullptr;  // required
  Clock* clock = nullptr;                      // required
  ImageGCPolicy policy;
  std::string sandbox_image = "registry.k8s.io/pause:3.9";  // --pod-infra-container-image
  ImageFsUsageFn fs_usage;                                  // default CriImageFsUsage(*images)
  absl::Duration period = absl::Minutes(5);
};

// Reads the policy: imageGCHighThresholdPercent, imageGCLowThresholdPercent, imageMinimumGCAge.
ImageGCOptions ImageGCOptionsFromConfig(const config::KubeletConfiguration& c);
inline constexpr std::string_view kImageGCConfigFields[] = {
    "imageGCHighThresholdPercent", "imageGCLowThresholdPercent", "imageMinimumGCAge"};

// What the manager knows of one image (for tests and debugging).
struct ImageRecord {
  std::string id;
  absl::Time first_detected;
  absl::Time last_used = absl::InfinitePast();
  uint64_t size = 0;
  bool pinned = false;
};

class ImageGCManager {
 public:
  // Validates the policy (thresholds within [0, 100], low <= high) as upstream.
  static absl::StatusOr<std::unique_ptr<ImageGCManager>> Create(ImageGCOptions options);
  ~ImageGCManager();
  ImageGCManager(const ImageGCManager&) = delete;
  ImageGCManager& operator=(const ImageGCManager&) = delete;

  // Starts the periodic detection + collection thread (the first round runs at once).
  void Start();
  void Stop();

  // One collection round: frees down to the low threshold when usage is at or above the high
  // threshold. Fails when the file system figures cannot be read or fewer bytes than needed
  // could be freed.
  absl::Status GarbageCollect();
  // Removes unused images until `bytes_to_free` bytes are freed or none is eligible; `freed`
  // is the bytes freed, also when some removals failed (their errors make up the status).
  absl::Status FreeSpace(uint64_t bytes_to_free, uint64_t& freed);
  // Refreshes the records; returns the ids of the images in use.
  absl::StatusOr<std::vector<std::string>> DetectImages();

  std::vector<ImageRecord> Records() const;

 private:
  explicit ImageGCManager(ImageGCOptions options);
  absl::StatusOr<std::vector<std::string>> DetectImagesAt(absl::Time now);
  absl::Status FreeSpaceAt(uint64_t bytes_to_free, absl::Time now, uint64_t& freed);
  void Loop();
  // One round of the loop: detect images, then collect by thresholds.
  void RunOnce();

  const ImageGCOptions options_;

  absl::Mutex round_mu_;  // serializes detection and collection rounds
  mutable absl::Mutex mu_;
  std::map<std::string, ImageRecord> records_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool prev_gc_failed_ = false;  // touched by the loop thread only
  std::thread thread_;
};

}  // namespace kubelet::images

#endif  // KUBELET_KUBELET_IMAGES_IMAGE_GC_MANAGER_H_
