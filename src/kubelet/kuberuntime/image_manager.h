// Image presence and pulling for container starts, ported from upstream pkg/kubelet/images
// (imageManager.EnsureImageExists, the serial/parallel pullers, the throttled image service) and
// kuberuntime_image.go (PullImage with credentials, GetImageRef).
//
// EnsureImageExists(pod, container):
//   1. ":latest" is appended to references without tag or digest; an unparsable reference fails
//      with InvalidImageName ("Failed to apply default image tag ...").
//   2. ImageStatus tells whether the image is present (its id is the image ref); a failing call
//      gives ImageInspectError.
//   3. Pull policy: Never -> the present image or ErrImageNeverPull ("Container image \"x\" is not
//      present with pull policy of Never"); IfNotPresent -> pull only when absent; Always -> pull.
//   4. While the per-(pod uid, image) back-off (10 s doubling to 5 min) runs since the last
//      failure: ImagePullBackOff ("Back-off pulling image \"x\"").
//   5. Pull (credentials from the hook tried in order, else anonymous), bounded by
//      registryPullQPS/registryBurst ("pull QPS exceeded") and by the puller: one at a time
//      when serialized, else at most maxParallelImagePulls at once. A failure moves the back-off
//      and returns ErrImagePull (or RegistryUnavailable / SignatureValidationFailed when the
//      runtime's message says so) with the runtime's error as message.
//
// Thread-safety: thread-safe; EnsureImageExists blocks (pull) and may run concurrently for
// different pods.
#ifndef KUBELET_KUBELET_KUBERUNTIME_IMAGE_MANAGER_H_
#define KUBELET_KUBELET_KUBERUNTIME_IMAGE_MANAGER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/pod.h"
#include "common/backoff.h"
#include "common/clock.h"
#include "cri/runtime_service.h"
#include "kubelet/events/event_recorder.h"

namespace kubelet::kuberuntime {

inline constexpr char kErrImagePullBackOff[] = "ImagePullBackOff";
inline constexpr char kErrImageInspect[] = "ImageInspectError";
inline constexpr char kErrImagePull[] = "ErrImagePull";
inline constexpr char kErrImageNeverPull[] = "ErrImageNeverPull";
inline constexpr char kErrInvalidImageName[] = "InvalidImageName";
inline constexpr char kErrRegistryUnavailable[] = "RegistryUnavailable";
inline constexpr char kErrSignatureValidationFailed[] = "SignatureValidationFailed";

struct EnsureImageResult {
  std::string image_ref;  // the image id to create the container with (on success)
  std::string reason;     // "" on success, else one of the kErr* reasons
  std::string message;    // human-readable detail for the container's waiting state
  bool ok() const { return reason.empty(); }
};

struct ImageManagerOptions {
  bool serialize_image_pulls = true;
  std::optional<int32_t> max_parallel_image_pulls;
  double pull_qps = 5;  // <= 0: unlimited
  int32_t pull_burst = 10;
  absl::Duration backoff_initial = absl::Seconds(10);
  absl::Duration backoff_max = absl::Seconds(300);
  std::function<absl::StatusOr<std::vector<runtime::v1::AuthConfig>>(const api::Pod&,
                                                                     const std::string& image)>
      pull_credentials;
  // Pulling / Pulled / Failed / BackOff / ErrImageNeverPull events on the container. Unset:
  // dropped. Borrowed.
  events::EventRecorder* recorder = nullptr;
};

class ImageManager {
 public:
  // `images` and `clock` must outlive the manager.
  ImageManager(cri::ImageManagerService& images, Clock& clock, ImageManagerOptions options);

  ImageManager(const ImageManager&) = delete;
  ImageManager& operator=(const ImageManager&) = delete;

  // `sandbox_config` may be null.
  EnsureImageResult EnsureImageExists(const api::Pod& pod, const api::Container& container,
                                      const runtime::v1::PodSandboxConfig* sandbox_config);

  // The image's id when present, "" when absent.
  absl::StatusOr<std::string> GetImageRef(const runtime::v1::ImageSpec& spec);

  // Drops the pull back-off entries of a pod.
  void ForgetPod(const std::string& uid);
  // Drops stale back-off entries.
  void GC() { backoff_.GC(); }

 private:
  // Blocks until the puller admits one more pull; returns a release callback's token.
  void AcquirePullSlot();
  void ReleasePullSlot();
  bool TryAcceptPullToken();
  absl::StatusOr<std::string> PullImage(const api::Pod& pod, const runtime::v1::ImageSpec& spec,
                                        const runtime::v1::PodSandboxConfig* sandbox_config);

  cri::ImageManagerService& images_;
  Clock& clock_;
  const ImageManagerOptions options_;
  Backoff backoff_;
  // 0 = unlimited concurrent pulls.
  const int pull_limit_;

  absl::Mutex mu_;
  int pulls_in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  double tokens_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time tokens_updated_ ABSL_GUARDED_BY(mu_);
};

// Renders a CRI error the way a Go gRPC client prints it: "rpc error: code = NotFound desc =
// <message>" (the "<Method>: " prefix our CRI client adds is removed).
std::string GrpcErrorString(const absl::Status& status);
// A PullImage error as upstream's CRI image client returns it: GrpcErrorString, except that
// an Unknown code is stripped to the runtime's message ("they add no value").
std::string PullErrorString(const absl::Status& status);
// Just the runtime's message (grpc status.Message()), without the "<Method>: " prefix.
std::string GrpcErrorMessage(const absl::Status& status);
// The Go name of the status code ("NotFound", "DeadlineExceeded", ...).
std::string GrpcCodeName(const absl::Status& status);

}  // namespace kubelet::kuberuntime

#endif  // KUBELET_KUBELET_KUBERUNTIME_IMAGE_MANAGER_H_
