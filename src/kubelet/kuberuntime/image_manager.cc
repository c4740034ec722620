#include "kubelet/kuberuntime/image_manager.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/duration.h"
#include "common/log.h"
#include "common/strings.h"
#include "cri/grpc_client.h"
#include "kubelet/kuberuntime/helpers.h"

namespace kubelet::kuberuntime {
namespace {

std::string_view StripMethodPrefix(std::string_view msg) {
  const size_t colon = msg.find(": ");
  if (colon == std::string_view::npos || colon == 0) return msg;
  if (!std::isupper(static_cast<unsigned char>(msg[0]))) return msg;
  for (size_t i = 0; i < colon; ++i) {
    if (!std::isalnum(static_cast<unsigned char>(msg[i]))) return msg;
  }
  return msg.substr(colon + 2);
}

std::string PodAnnotationsKey(const api::Pod& pod, const std::string& image) {
  return absl::StrCat(pod.metadata.uid, "_", image);
}

bool ShouldPullImage(const api::Container& c, bool present) {
  if (c.image_pull_policy == api::kPullNever) return false;
  return c.image_pull_policy == api::kPullAlways ||
         (c.image_pull_policy == api::kPullIfNotPresent && !present);
}

}  // namespace

std::string GrpcErrorMessage(const absl::Status& status) {
  return std::string(StripMethodPrefix(SV(status.message())));
}

std::string GrpcCodeName(const absl::Status& status) {
  return std::string(cri::GoCodeName(status.code()));
}

std::string GrpcErrorString(const absl::Status& status) {
  return cri::GoRpcErrorText(status.code(), GrpcErrorMessage(status));
}

std::string PullErrorString(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kUnknown) return GrpcErrorMessage(status);
  return GrpcErrorString(status);
}

ImageManager::ImageManager(cri::ImageManagerService& images, Clock& clock,
                           ImageManagerOptions options)
    : images_(images),
      clock_(clock),
      options_(std::move(options)),
      backoff_(clock, options_.backoff_initial, options_.backoff_max),
      pull_limit_(options_.serialize_image_pulls ? 1
                  : (options_.max_parallel_image_pulls.has_value() &&
                     *options_.max_parallel_image_pulls >= 1)
                      ? *options_.max_parallel_image_pulls
                      : 0) {
  absl::MutexLock lock(&mu_);
  tokens_ = std::max<double>(options_.pull_burst, 1);
  tokens_updated_ = clock_.Now();
}

void ImageManager::ForgetPod(const std::string& uid) {
  const std::string prefix = absl::StrCat(uid, "_");
  backoff_.DeleteIf([&](std::string_view id) { return absl::StartsWith(AV(id), prefix); });
}

absl::StatusOr<std::string> ImageManager::GetImageRef(const runtime::v1::ImageSpec& spec) {
  absl::StatusOr<runtime::v1::ImageStatusResponse> resp = images_.ImageStatus(spec, false);
  if (!resp.ok()) {
    KLOG_ERROR(resp.status(), "Failed to get image status", "image", spec.image());
    return resp.status();
  }
  if (!resp->has_image()) return std::string();
  return resp->image().id();
}

void ImageManager::AcquirePullSlot() {
  if (pull_limit_ == 0) return;
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](ImageManager* m)
           ABSL_EXCLUSIVE_LOCKS_REQUIRED(m->mu_) { return m->pulls_in_flight_ < m->pull_limit_; },
      this));
  ++pulls_in_flight_;
}

void ImageManager::ReleasePullSlot() {
  if (pull_limit_ == 0) return;
  absl::MutexLock lock(&mu_);
  --pulls_in_flight_;
}

bool ImageManager::TryAcceptPullToken() {
  if (options_.pull_qps <= 0) return true;
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  const double burst = std::max<double>(options_.pull_burst, 1);
  const double elapsed = absl::ToDoubleSeconds(now - tokens_updated_);
  if (elapsed > 0) tokens_ = std::min(burst, tokens_ + elapsed * options_.pull_qps);
  tokens_updated_ = std::max(tokens_updated_, now);
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

absl::StatusOr<std::string> ImageManager::PullImage(
    const api::Pod& pod, const runtime::v1::ImageSpec& spec,
    const runtime::v1::PodSandboxConfig* sandbox_config) {
  if (!TryAcceptPullToken()) return absl::ResourceExhaustedError("pull QPS exceeded");
  std::vector<runtime::v1::AuthConfig> creds;
  if (options_.pull_credentials) {
    absl::StatusOr<std::vector<runtime::v1::AuthConfig>> got =
        options_.pull_credentials(pod, spec.image());
    if (!got.ok()) return got.status();
    creds = *std::move(got);
  }
  AcquirePullSlot();
  absl::StatusOr<std::string> result;
  if (creds.empty()) {
    KLOG_V(3, "Pulling image without credentials", "image", spec.image());
    result = images_.PullImage(spec, nullptr, sandbox_config);
  } else {
    std::vector<std::string> errs;
    for (const runtime::v1::AuthConfig& auth : creds) {
      result = images_.PullImage(spec, &auth, sandbox_config);
      if (result.ok()) break;
      errs.push_back(GrpcErrorString(result.status()));
    }
    if (!result.ok() && errs.size() > 1) {
      result =
          absl::Status(result.status().code(), absl::StrCat("[", absl::StrJoin(errs, ", "), "]"));
    }
  }
  ReleasePullSlot();
  return result;
}

EnsureImageResult ImageManager::EnsureImageExists(
    const api::Pod& pod, const api::Container& container,
    const runtime::v1::PodSandboxConfig* sandbox_config) {
  events::EventRecorder& recorder =
      options_.recorder != nullptr ? *options_.recorder : events::DiscardingRecorder();
  const events::ObjectReference ref_obj = events::ContainerRef(pod, container.name);
  auto event = [&](const char* type, const char* reason, const std::string& msg) {
    recorder.Record(ref_obj, type, reason, msg);
  };
  absl::StatusOr<std::string> image = ApplyDefaultImageTag(container.image);
  if (!image.ok()) {
    std::string msg = absl::StrCat("Failed to apply default image tag \"", container.image,
                                   "\": ", image.status().message());
    KLOG_WARNING(msg, "pod", FormatPod(pod), "container", container.name);
    event(events::kWarning, events::kFailedToInspectImage, msg);
    return {"", kErrInvalidImageName, msg};
  }
  runtime::v1::ImageSpec spec;
  spec.set_image(*image);
  for (const auto& [k, v] : pod.metadata.annotations) (*spec.mutable_annotations())[k] = v;

  absl::StatusOr<std::string> ref = GetImageRef(spec);
  if (!ref.ok()) {
    std::string msg = absl::StrCat("Failed to inspect image \"", container.image,
                                   "\": ", GrpcErrorString(ref.status()));
    KLOG_WARNING(msg, "pod", FormatPod(pod), "container", container.name);
    event(events::kWarning, events::kFailedToInspectImage, msg);
    return {"", kErrImageInspect, msg};
  }
  const bool present = !ref->empty();
  if (!ShouldPullImage(container, present)) {
    if (present) {
      std::string msg =
          absl::StrCat("Container image \"", container.image, "\" already present on machine");
      KLOG_V(2, msg, "pod", FormatPod(pod), "container", container.name);
      event(events::kNormal, events::kPulledImage, msg);
      return {*ref, "", ""};
    }
    std::string msg = absl::StrCat("Container image \"", container.image,
                                   "\" is not present with pull policy of Never");
    KLOG_WARNING(msg, "pod", FormatPod(pod), "container", container.name);
    event(events::kWarning, events::kErrImageNeverPull, msg);
    return {"", kErrImageNeverPull, msg};
  }

  const std::string backoff_key = PodAnnotationsKey(pod, container.image);
  if (backoff_.IsInBackOffSinceUpdate(backoff_key, clock_.Now())) {
    std::string msg = absl::StrCat("Back-off pulling image \"", container.image, "\"");
    KLOG_INFO(msg, "pod", FormatPod(pod), "container", container.name);
    event(events::kNormal, events::kBackOffPullImage, msg);
    return {"", kErrImagePullBackOff, msg};
  }

  const std::string pulling = absl::StrCat("Pulling image \"", container.image, "\"");
  KLOG_INFO(pulling, "pod", FormatPod(pod), "container", container.name);
  event(events::kNormal, events::kPullingImage, pulling);
  const absl::Time start = clock_.Now();
  absl::StatusOr<std::string> pulled = PullImage(pod, spec, sandbox_config);
  if (!pulled.ok()) {
    std::string err = pulled.status().code() == absl::StatusCode::kResourceExhausted &&
                              pulled.status().message() == "pull QPS exceeded"
                          ? std::string(pulled.status().message())
                          : PullErrorString(pulled.status());
    const std::string failed =
        absl::StrCat("Failed to pull image \"", container.image, "\": ", err);
    KLOG_WARNING(failed, "pod", FormatPod(pod), "container", container.name);
    event(events::kWarning, events::kFailedToPullImage, failed);
    backoff_.Next(backoff_key, clock_.Now());
    const std::string runtime_msg = GrpcErrorMessage(pulled.status());
    for (const char* reason : {kErrRegistryUnavailable, kErrSignatureValidationFailed}) {
      if (absl::StartsWith(runtime_msg, reason)) {
        const std::string detail = runtime_msg.substr(std::string_view(reason).size());
        const char* what = reason == kErrRegistryUnavailable
                               ? "because the registry is unavailable"
                               : "because the signature validation failed";
        return {"", reason,
                absl::StrCat("image pull failed for ", container.image, " ", what, detail)};
      }
    }
    return {"", kErrImagePull, err};
  }
  const std::string pulled_msg = absl::StrCat("Successfully pulled image \"", container.image,
                                              "\" in ", FormatGoDuration(clock_.Now() - start));
  KLOG_INFO(pulled_msg, "pod", FormatPod(pod), "container", container.name);
  event(events::kNormal, events::kPulledImage, pulled_msg);
  backoff_.GC();
  return {*pulled, "", ""};
}

}  // namespace kubelet::kuberuntime
