#include "kubelet/csi/csi_driver.h"

#include <exception>

#include "absl/strings/str_cat.h"

namespace kubelet::csi {

CSIDriverInfo CSIDriverInfoFromJson(const nlohmann::json& object) {
  CSIDriverInfo info;
  if (!object.is_object()) return info;
  auto spec = object.find("spec");
  if (spec == object.end() || !spec->is_object()) return info;
  if (auto it = spec->find("attachRequired"); it != spec->end() && it->is_boolean()) {
    info.attach_required = it->get<bool>();
  }
  if (auto it = spec->find("podInfoOnMount"); it != spec->end() && it->is_boolean()) {
    info.pod_info_on_mount = it->get<bool>();
  }
  if (auto it = spec->find("volumeLifecycleModes"); it != spec->end() && it->is_array()) {
    std::set<std::string> modes;
    for (const nlohmann::json& m : *it) {
      if (m.is_string()) modes.insert(m.get<std::string>());
    }
    if (!modes.empty()) info.lifecycle_modes = std::move(modes);
  }
  if (auto it = spec->find("fsGroupPolicy"); it != spec->end() && it->is_string()) {
    info.fs_group_policy = it->get<std::string>();
  }
  if (auto it = spec->find("tokenRequests"); it != spec->end() && it->is_array()) {
    for (const nlohmann::json& t : *it) {
      if (!t.is_object()) continue;
      CSITokenRequest r;
      if (auto a = t.find("audience"); a != t.end() && a->is_string()) {
        r.audience = a->get<std::string>();
      }
      if (auto e = t.find("expirationSeconds"); e != t.end() && e->is_number_integer()) {
        r.expiration_seconds = e->get<int64_t>();
      }
      info.token_requests.push_back(std::move(r));
    }
  }
  return info;
}

namespace {

class ApiCSIDriverLister final : public CSIDriverLister {
 public:
  explicit ApiCSIDriverLister(apiclient::RestClient& client) : client_(client) {}

  absl::StatusOr<std::optional<CSIDriverInfo>> Get(const std::string& name) override {
    apiclient::Request r;
    r.path = absl::StrCat("/apis/storage.k8s.io/v1/csidrivers/", name);
    absl::StatusOr<apiclient::Response> got = client_.Do(r);
    if (!got.ok()) return got.status();
    if (got->code == 404) return std::optional<CSIDriverInfo>();
    if (absl::Status st = apiclient::ResponseStatus(*got); !st.ok()) return st;
    return std::optional<CSIDriverInfo>(
        CSIDriverInfoFromJson(apiclient::ParseBoundedJson(got->body)));
  }

 private:
  apiclient::RestClient& client_;
};

class ApiVolumeAttachmentGetter final : public VolumeAttachmentGetter {
 public:
  explicit ApiVolumeAttachmentGetter(apiclient::RestClient& client) : client_(client) {}

  absl::StatusOr<std::optional<api::VolumeAttachment>> Get(const std::string& name) override {
    apiclient::Request r;
    r.path = absl::StrCat("/apis/storage.k8s.io/v1/volumeattachments/", name);
    absl::StatusOr<apiclient::Response> got = client_.Do(r);
    if (!got.ok()) return got.status();
    if (got->code == 404) return std::optional<api::VolumeAttachment>();
    if (absl::Status st = apiclient::ResponseStatus(*got); !st.ok()) return st;
    absl::StatusOr<api::VolumeAttachment> va = api::Decode<api::VolumeAttachment>(got->body);
    if (!va.ok()) return va.status();
    return std::optional<api::VolumeAttachment>(*std::move(va));
  }

 private:
  apiclient::RestClient& client_;
};

}  // namespace

std::unique_ptr<VolumeAttachmentGetter> NewApiVolumeAttachmentGetter(
    apiclient::RestClient& client) {
  return std::make_unique<ApiVolumeAttachmentGetter>(client);
}

std::unique_ptr<CSIDriverLister> NewApiCSIDriverLister(apiclient::RestClient& client) {
  return std::make_unique<ApiCSIDriverLister>(client);
}

}  // namespace kubelet::csi
