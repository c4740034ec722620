#include "kubelet/csi/csi_volume_plugin.h"

#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/codec.h"
#include "apiclient/rest_client.h"
#include "common/files.h"
#include "common/log.h"
#include "kubelet/volume/mount_utils.h"

namespace kubelet::csi {
namespace {

constexpr char kVolDataFile[] = "vol_data.json";

// The `csi:` source of a volume (opaque in api::Volume).
struct InlineSource {
  std::string driver;
  bool read_only = false;
  std::string fs_type;
  std::map<std::string, std::string> attributes;
  bool has_secret_ref = false;
};

absl::StatusOr<InlineSource> ParseInline(const api::Volume& v) {
  auto it = v.other_sources.find("csi");
  if (it == v.other_sources.end()) return absl::InvalidArgumentError("not a csi volume");
  nlohmann::json j = apiclient::ParseBoundedJson(it->second.json);
  if (!j.is_object()) return absl::InvalidArgumentError("the csi volume source is not an object");
  InlineSource s;
  s.driver = j.value("driver", "");
  if (auto r = j.find("readOnly"); r != j.end() && r->is_boolean()) s.read_only = r->get<bool>();
  if (auto f = j.find("fsType"); f != j.end() && f->is_string()) s.fs_type = f->get<std::string>();
  if (auto a = j.find("volumeAttributes"); a != j.end() && a->is_object()) {
    for (auto e = a->begin(); e != a->end(); ++e) {
      if (e.value().is_string()) s.attributes[e.key()] = e.value().get<std::string>();
    }
  }
  s.has_secret_ref = j.contains("nodePublishSecretRef") && !j["nodePublishSecretRef"].is_null();
  if (s.driver.empty()) return absl::InvalidArgumentError("the csi volume source names no driver");
  return s;
}

// Go's json.NewEncoder(f).Encode(map[string]string): sorted keys, HTML-safe, a newline.
std::string VolData(const std::map<std::string, std::string>& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return api::SerializeJson(j) + "\n";
}

}  // namespace

std::string CsiHandle(const std::string& data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  static const char kHex[] = "0123456789abcdef";
  std::string out = "csi-";
  for (unsigned char c : digest) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

bool CsiVolumePlugin::CanSupport(const api::Volume& volume) const {
  return volume.other_sources.count("csi") != 0;
}

absl::StatusOr<volume::ExternalVolume> CsiVolumePlugin::SetUp(const api::Pod& pod,
                                                              const api::Volume& volume,
                                                              const std::string& dir) {
  absl::StatusOr<InlineSource> src = ParseInline(volume);
  if (!src.ok()) return src.status();
  std::optional<Driver> driver = drivers_.Get(src->driver);
  if (!driver.has_value()) {
    return absl::UnavailableError(absl::StrCat("driver name ", src->driver,
                                               " not found in the list of registered CSI drivers"));
  }
  CSIDriverInfo info;
  if (drivers_api_ != nullptr) {
    absl::StatusOr<std::optional<CSIDriverInfo>> got = drivers_api_->Get(src->driver);
    if (!got.ok()) return got.status();
    if (got->has_value()) info = **got;
  }
  if (info.lifecycle_modes.count("Ephemeral") == 0) {
    std::vector<std::string> modes;
    for (const std::string& m : info.lifecycle_modes) modes.push_back(absl::StrCat("\"", m, "\""));
    return absl::FailedPreconditionError(
        absl::StrCat("volume mode \"Ephemeral\" not supported by driver ", src->driver,
                     " (only supports [", absl::StrJoin(modes, " "), "])"));
  }
  if (src->has_secret_ref) {
    return absl::UnimplementedError("nodePublishSecretRef is not supported by this kubelet yet");
  }
  const std::string handle = CsiHandle(pod.metadata.uid + volume.name);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("failed to create ", dir, ": ", ec.message()));
  ::chmod(dir.c_str(), 0750);
  const std::map<std::string, std::string> vol_data = {
      {"specVolID", volume.name},
      {"volumeHandle", handle},
      {"driverName", src->driver},
      {"nodeName", node_name_},
      {"attachmentID", CsiHandle(handle + src->driver + node_name_)},
      {"volumeLifecycleMode", "Ephemeral"}};
  if (absl::Status st =
          WriteFileAtomically(absl::StrCat(dir, "/", kVolDataFile), VolData(vol_data), 0644);
      !st.ok()) {
    return st;
  }
  PublishRequest r;
  r.volume_id = handle;
  r.target_path = absl::StrCat(dir, "/mount");
  r.fs_type = src->fs_type;
  r.readonly = src->read_only;
  r.volume_context = src->attributes;
  if (info.pod_info_on_mount) {
    r.volume_context["csi.storage.k8s.io/pod.name"] = pod.metadata.name;
    r.volume_context["csi.storage.k8s.io/pod.namespace"] = pod.metadata.namespace_;
    r.volume_context["csi.storage.k8s.io/pod.uid"] = pod.metadata.uid;
    r.volume_context["csi.storage.k8s.io/serviceAccount.name"] = pod.spec.service_account_name;
    r.volume_context["csi.storage.k8s.io/ephemeral"] = "true";
  }
  if (absl::Status st = client_.NodePublishVolume(driver->endpoint, r, timeout_); !st.ok()) {
    return absl::Status(st.code(), absl::StrCat("rpc error: NodePublishVolume: ", st.message()));
  }
  KLOG_V(4, "kubernetes.io/csi: mounter.SetUp successfully requested NodePublish", "volume",
         volume.name, "target", r.target_path);
  return volume::ExternalVolume{r.target_path, r.readonly};
}

absl::Status CsiVolumePlugin::TearDown(const std::string& pod_uid, const std::string& dir) {
  const std::string data_path = absl::StrCat(dir, "/", kVolDataFile);
  const std::string target = absl::StrCat(dir, "/mount");
  if (absl::StatusOr<std::string> text = ReadFileToString(data_path); text.ok()) {
    nlohmann::json data = apiclient::ParseBoundedJson(*text);
    const std::string driver_name = data.is_object() ? data.value("driverName", "") : "";
    const std::string handle = data.is_object() ? data.value("volumeHandle", "") : "";
    std::optional<Driver> driver = drivers_.Get(driver_name);
    if (!driver.has_value()) {
      return absl::UnavailableError(absl::StrCat(
          "driver name ", driver_name, " not found in the list of registered CSI drivers"));
    }
    if (absl::Status st = client_.NodeUnpublishVolume(driver->endpoint, handle, target, timeout_);
        !st.ok()) {
      return absl::Status(st.code(),
                          absl::StrCat("rpc error: NodeUnpublishVolume: ", st.message()));
    }
    KLOG_V(4, "kubernetes.io/csi: mounter.TearDownAt successfully unmounted dir", "podUID", pod_uid,
           "target", target);
  }
  if (volume::IsMountPoint(target)) {
    return absl::FailedPreconditionError(absl::StrCat(target, " is still mounted"));
  }
  return volume::RemoveAllNoCrossMounts(dir);
}

}  // namespace kubelet::csi
