#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "cri/proto/api.grpc.pb.h"
#include "cri/remote/grpc_util.h"
#include "cri/remote/remote_runtime.h"

namespace kubelet::cri {
namespace {

namespace v1 = ::runtime::v1;
using Stub = v1::ImageService::Stub;
using internal::CallUnary;
using internal::ContractError;

class RemoteImageService final : public ImageManagerService {
 public:
  RemoteImageService(std::shared_ptr<grpc::Channel> channel, absl::Duration timeout,
                     absl::Duration pull_timeout)
      : channel_(std::move(channel)),
        stub_(v1::ImageService::NewStub(channel_)),
        timeout_(timeout),
        pull_timeout_(pull_timeout) {}

  absl::Status Validate(const std::string& endpoint) {
    auto resp =
        CallUnary(*stub_, &Stub::ImageFsInfo, "ImageFsInfo", v1::ImageFsInfoRequest(), timeout_);
    if (!resp.ok()) {
      return absl::Status(resp.status().code(),
                          absl::StrFormat("validate CRI v1 image API for endpoint \"%s\": %s",
                                          endpoint, resp.status().message()));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<v1::Image>> ListImages(const v1::ImageFilter* filter) override {
    v1::ListImagesRequest req;
    if (filter != nullptr) *req.mutable_filter() = *filter;
    auto resp = CallUnary(*stub_, &Stub::ListImages, "ListImages", req, timeout_);
    if (!resp.ok()) return resp.status();
    return std::vector<v1::Image>(resp->images().begin(), resp->images().end());
  }

  absl::StatusOr<v1::ImageStatusResponse> ImageStatus(const v1::ImageSpec& image,
                                                      bool verbose) override {
    v1::ImageStatusRequest req;
    *req.mutable_image() = image;
    req.set_verbose(verbose);
    auto resp = CallUnary(*stub_, &Stub::ImageStatus, "ImageStatus", req, timeout_);
    if (!resp.ok()) return resp.status();
    if (resp->has_image() && (resp->image().id().empty() || resp->image().size() == 0)) {
      return ContractError("ImageStatus",
                           absl::StrFormat("Id or size of image \"%s\" is not set", image.image()));
    }
    return resp;
  }

  absl::StatusOr<std::string> PullImage(const v1::ImageSpec& image, const v1::AuthConfig* auth,
                                        const v1::PodSandboxConfig* sandbox_config) override {
    v1::PullImageRequest req;
    *req.mutable_image() = image;
    if (auth != nullptr) *req.mutable_auth() = *auth;
    if (sandbox_config != nullptr) *req.mutable_sandbox_config() = *sandbox_config;
    // Pulls may legitimately take long: like upstream, no request timeout applies.
    auto resp = CallUnary(*stub_, &Stub::PullImage, "PullImage", req, pull_timeout_);
    if (!resp.ok()) return resp.status();
    if (resp->image_ref().empty()) {
      return ContractError("PullImage",
                           absl::StrFormat("imageRef of image \"%s\" is not set", image.image()));
    }
    return std::move(*resp->mutable_image_ref());
  }

  absl::Status RemoveImage(const v1::ImageSpec& image) override {
    v1::RemoveImageRequest req;
    *req.mutable_image() = image;
    return CallUnary(*stub_, &Stub::RemoveImage, "RemoveImage", req, timeout_).status();
  }

  absl::StatusOr<std::vector<v1::FilesystemUsage>> ImageFsInfo() override {
    // Upstream sets no deadline: computing usage can take long on big image stores.
    auto resp = CallUnary(*stub_, &Stub::ImageFsInfo, "ImageFsInfo", v1::ImageFsInfoRequest(),
                          absl::InfiniteDuration());
    if (!resp.ok()) return resp.status();
    return std::vector<v1::FilesystemUsage>(resp->image_filesystems().begin(),
                                            resp->image_filesystems().end());
  }

 private:
  const std::shared_ptr<grpc::Channel> channel_;
  const std::unique_ptr<Stub> stub_;
  const absl::Duration timeout_;
  const absl::Duration pull_timeout_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ImageManagerService>> NewRemoteImageService(
    const std::string& endpoint, absl::Duration request_timeout, absl::Duration pull_timeout) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = internal::DialEndpoint(endpoint);
  if (!channel.ok()) return channel.status();
  auto service =
      std::make_unique<RemoteImageService>(*std::move(channel), request_timeout, pull_timeout);
  if (absl::Status s = service->Validate(endpoint); !s.ok()) return s;
  return std::unique_ptr<ImageManagerService>(std::move(service));
}

}  // namespace kubelet::cri
