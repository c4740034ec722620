// A CsiClient for unit tests: records every call, answers with configurable capabilities and
// node info, and acts like a driver on disk (publish creates the target directory, unpublish
// removes it). Thread-safe.
#ifndef KUBELET_KUBELET_CSI_TESTING_FAKE_CSI_CLIENT_H_
#define KUBELET_KUBELET_CSI_TESTING_FAKE_CSI_CLIENT_H_

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "kubelet/csi/csi_client.h"

namespace kubelet::csi::testing {

class FakeCsiClient final : public CsiClient {
 public:
  absl::StatusOr<NodeInfo> NodeGetInfo(const std::string& endpoint, absl::Duration) override {
    absl::MutexLock lock(&mu);
    calls.push_back(absl::StrCat("NodeGetInfo ", endpoint));
    return node_info;
  }
  absl::StatusOr<NodeCapabilities> NodeGetCapabilities(const std::string&,
                                                       absl::Duration) override {
    absl::MutexLock lock(&mu);
    return capabilities;
  }
  absl::Status NodeStageVolume(const std::string&, const StageRequest& r, absl::Duration) override {
    absl::MutexLock lock(&mu);
    calls.push_back(absl::StrCat("NodeStageVolume ", r.volume_id, " ", r.staging_target_path));
    staged.push_back(r);
    return stage_error;
  }
  absl::Status NodeUnstageVolume(const std::string&, const std::string& volume_id,
                                 const std::string& path, absl::Duration) override {
    absl::MutexLock lock(&mu);
    calls.push_back(absl::StrCat("NodeUnstageVolume ", volume_id, " ", path));
    return unstage_error;
  }
  absl::Status NodePublishVolume(const std::string& endpoint, const PublishRequest& r,
                                 absl::Duration) override {
    absl::MutexLock lock(&mu);
    calls.push_back(absl::StrCat("NodePublishVolume ", r.volume_id, " ", r.target_path));
    published.push_back(r);
    endpoints.push_back(endpoint);
    if (!publish_error.ok()) return publish_error;
    std::filesystem::create_directories(r.target_path);  // the driver creates the target
    return absl::OkStatus();
  }
  absl::Status NodeUnpublishVolume(const std::string&, const std::string& volume_id,
                                   const std::string& target_path, absl::Duration) override {
    absl::MutexLock lock(&mu);
    calls.push_back(absl::StrCat("NodeUnpublishVolume ", volume_id, " ", target_path));
    std::error_code ec;
    std::filesystem::remove(target_path, ec);
    return absl::OkStatus();
  }
  absl::StatusOr<VolumeStats> NodeGetVolumeStats(const std::string&, const std::string& volume_id,
                                                 const std::string& path, absl::Duration) override {
    absl::MutexLock lock(&mu);
    calls.push_back(absl::StrCat("NodeGetVolumeStats ", volume_id, " ", path));
    return stats;
  }

  // Calls of `prefix` (e.g. "NodeStageVolume"), in order.
  std::vector<std::string> Calls(const std::string& prefix) {
    absl::MutexLock lock(&mu);
    std::vector<std::string> out;
    for (const std::string& c : calls) {
      if (c.rfind(prefix + " ", 0) == 0) out.push_back(c);
    }
    return out;
  }

  absl::Mutex mu;
  absl::StatusOr<NodeInfo> node_info = NodeInfo{};
  NodeCapabilities capabilities;
  absl::Status stage_error;
  absl::Status unstage_error;
  absl::Status publish_error;
  absl::StatusOr<VolumeStats> stats = VolumeStats{};
  std::vector<std::string> calls;
  std::vector<StageRequest> staged;
  std::vector<PublishRequest> published;
  std::vector<std::string> endpoints;
};

}  // namespace kubelet::csi::testing

#endif  // KUBELET_KUBELET_CSI_TESTING_FAKE_CSI_CLIENT_H_
