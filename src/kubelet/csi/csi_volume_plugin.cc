#include "kubelet/csi/csi_volume_plugin.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/codec.h"
#include "apiclient/rest_client.h"
#include "common/files.h"
#include "common/log.h"
#include "common/openssl.h"
#include "cri/grpc_client.h"
#include "kubelet/volume/cluster_content.h"
#include "kubelet/volume/content_plugins.h"
#include "kubelet/volume/mount_utils.h"
#include "kubelet/volume/plugins.h"
#include "metrics/metrics.h"

namespace kubelet::csi {
namespace {

constexpr char kVolDataFile[] = "vol_data.json";
constexpr char kPersistent[] = "Persistent";
constexpr char kEphemeral[] = "Ephemeral";

// The `csi:` source of a volume (opaque in api::Volume).
struct InlineSource {
  std::string driver;
  bool read_only = false;
  std::string fs_type;
  std::map<std::string, std::string> attributes;
  std::optional<api::SecretReference> secret_ref;  // nodePublishSecretRef, the pod's namespace
};

absl::StatusOr<InlineSource> ParseInline(const api::Volume& v, const std::string& ns) {
  auto it = v.other_sources.find("csi");
  if (it == v.other_sources.end()) return absl::InvalidArgumentError("not a csi volume");
  nlohmann::json j = apiclient::ParseBoundedJson(it->second.json);
  if (!j.is_object()) return absl::InvalidArgumentError("the csi volume source is not an object");
  InlineSource s;
  if (auto d = j.find("driver"); d != j.end() && d->is_string()) s.driver = d->get<std::string>();
  if (auto r = j.find("readOnly"); r != j.end() && r->is_boolean()) s.read_only = r->get<bool>();
  if (auto f = j.find("fsType"); f != j.end() && f->is_string()) s.fs_type = f->get<std::string>();
  if (auto a = j.find("volumeAttributes"); a != j.end() && a->is_object()) {
    for (auto e = a->begin(); e != a->end(); ++e) {
      if (e.value().is_string()) s.attributes[e.key()] = e.value().get<std::string>();
    }
  }
  if (auto r = j.find("nodePublishSecretRef"); r != j.end() && r->is_object()) {
    if (auto n = r->find("name"); n != r->end() && n->is_string()) {
      s.secret_ref = api::SecretReference{n->get<std::string>(), ns};
    }
  }
  if (s.driver.empty()) return absl::InvalidArgumentError("the csi volume source names no driver");
  return s;
}

// Go's json.NewEncoder(f).Encode(map[string]string): sorted keys, HTML-safe, a newline.
std::string VolData(const std::map<std::string, std::string>& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return api::SerializeJson(j) + "\n";
}

// A vol_data.json file as a map (empty when missing or unreadable).
std::map<std::string, std::string> ReadVolData(const std::string& path) {
  std::map<std::string, std::string> out;
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return out;
  nlohmann::json j = apiclient::ParseBoundedJson(*text);
  if (!j.is_object()) return out;
  for (auto e = j.begin(); e != j.end(); ++e) {
    if (e.value().is_string()) out[e.key()] = e.value().get<std::string>();
  }
  return out;
}

// The entries of `dir`; empty when it does not exist, an error when it cannot be read.
absl::StatusOr<std::vector<std::string>> ListDirStrict(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) {
      return out;
    }
    return absl::UnavailableError(absl::StrCat("cannot list ", dir, ": ", ec.message()));
  }
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) return absl::UnavailableError(absl::StrCat("cannot list ", dir, ": ", ec.message()));
    out.push_back(it->path().filename().string());
  }
  return out;
}

// Calls `fn` with the vol_data.json of every CSI volume published into a pod dir below
// <root>/pods. Errors: a dir that cannot be listed; a vol_data.json that exists but cannot be
// read (then it is not passed on). `fn` returns false to stop early.
absl::Status ForEachPublished(const std::string& root_dir,
                              const std::function<bool(std::map<std::string, std::string>&)>& fn) {
  const std::string pods_dir = absl::StrCat(root_dir, "/pods");
  absl::StatusOr<std::vector<std::string>> uids = ListDirStrict(pods_dir);
  if (!uids.ok()) return uids.status();
  absl::Status unreadable;
  for (const std::string& uid : *uids) {
    const std::string plugin_dir =
        absl::StrCat(pods_dir, "/", uid, "/volumes/", volume::EscapePluginName(kCSIPluginName));
    absl::StatusOr<std::vector<std::string>> names = ListDirStrict(plugin_dir);
    if (!names.ok()) return names.status();
    for (const std::string& name : *names) {
      const std::string path = absl::StrCat(plugin_dir, "/", name, "/", kVolDataFile);
      std::map<std::string, std::string> d = ReadVolData(path);
      if (d.empty()) {
        if (::access(path.c_str(), F_OK) == 0) {
          unreadable = absl::FailedPreconditionError(absl::StrCat(path, " cannot be read"));
        }
        continue;
      }
      if (!fn(d)) return absl::OkStatus();
    }
  }
  return unreadable;
}

std::string UniqueName(const std::string& driver, const std::string& handle) {
  return absl::StrCat(kCSIPluginName, "/", driver, "^", handle);
}

std::string DriverNotFound(const std::string& driver) {
  return absl::StrCat("driver name ", driver, " not found in the list of registered CSI drivers");
}

absl::Status MakeDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("failed to create ", dir, ": ", ec.message()));
  ::chmod(dir.c_str(), 0750);
  return absl::OkStatus();
}

// Upstream's access mode mapping (csi_client.go asCSIAccessModeV1), from the PV's first mode.
int AccessMode(const api::PersistentVolume& pv, bool single_node_multi_writer) {
  const std::string mode = pv.spec.access_modes.empty() ? "" : pv.spec.access_modes[0];
  if (mode == api::kReadOnlyMany) return 3;   // MULTI_NODE_READER_ONLY
  if (mode == api::kReadWriteMany) return 5;  // MULTI_NODE_MULTI_WRITER
  if (mode == api::kReadWriteOncePod) return single_node_multi_writer ? 6 : 1;
  return single_node_multi_writer ? 7 : 1;  // ReadWriteOnce (and the default)
}

// gRPC codes after which the driver may still be working on the volume (upstream
// isFinalError's complement): the volume is in an uncertain state and must not be cleaned up.
bool IsFinal(const absl::Status& st) {
  switch (st.code()) {
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kAborted:
      return false;
    default:
      return true;
  }
}

const absl::Status& StatusOf(const absl::Status& st) { return st; }
template <typename T>
absl::Status StatusOf(const absl::StatusOr<T>& st) {
  return st.status();
}

// Runs one call to the driver and records it in csi_operations_seconds.
template <typename F>
auto Timed(const std::string& driver, const char* method, F&& call) {
  const absl::Time start = absl::Now();
  auto result = call();
  metrics::ObserveCsiOperation(driver, absl::StrCat("/csi.v1.Node/", method),
                               std::string(cri::GoCodeName(StatusOf(result).code())),
                               absl::ToDoubleSeconds(absl::Now() - start));
  return result;
}

// storage_operation_duration_seconds of one operation on a volume of `driver`.
class StorageOp {
 public:
  StorageOp(std::string driver, const char* op) : driver_(std::move(driver)), op_(op) {}
  template <typename R>
  R Done(R result) {
    metrics::ObserveStorageOperation(absl::StrCat(kCSIPluginName, ":", driver_), op_,
                                     StatusOf(result).ok(),
                                     absl::ToDoubleSeconds(absl::Now() - start_));
    return result;
  }

 private:
  const std::string driver_;
  const char* op_;
  const absl::Time start_ = absl::Now();
};

// Whether `dir` holds a volume published before (e.g. by the kubelet before a restart): its
// vol_data.json names this driver and handle and its target is mounted. Such a volume is
// adopted as it is, without asking the driver again (upstream's reconstruction).
bool AlreadyPublished(const std::string& dir, const std::string& driver,
                      const std::string& handle) {
  std::map<std::string, std::string> d = ReadVolData(absl::StrCat(dir, "/", kVolDataFile));
  return d["driverName"] == driver && d["volumeHandle"] == handle &&
         volume::IsMountPoint(absl::StrCat(dir, "/mount"));
}

absl::Status RpcError(const char* rpc, const absl::Status& st) {
  return absl::Status(st.code(), absl::StrCat("rpc error: ", rpc, ": ", st.message()));
}

}  // namespace

std::string CsiHandle(const std::string& data) { return "csi-" + ossl::Sha256Hex(data); }

CsiVolumePlugin::CsiVolumePlugin(DriverRegistry& drivers, CsiClient& client,
                                 CSIDriverLister* drivers_api, VolumeAttachmentGetter* attachments,
                                 CsiVolumePluginOptions options)
    : drivers_(drivers),
      client_(client),
      drivers_api_(drivers_api),
      attachments_(attachments),
      options_(std::move(options)) {}

bool CsiVolumePlugin::CanSupport(const volume::VolumeSpec& spec) const {
  if (spec.pv != nullptr) return spec.pv->spec.csi.has_value();
  return spec.volume != nullptr && spec.volume->other_sources.count("csi") != 0;
}

std::string CsiVolumePlugin::StagingPath(const std::string& driver,
                                         const std::string& handle) const {
  return absl::StrCat(options_.root_dir, "/plugins/", kCSIPluginName, "/", driver, "/",
                      ossl::Sha256Hex(handle), "/globalmount");
}

std::shared_ptr<absl::Mutex> CsiVolumePlugin::VolumeLock(const std::string& unique) {
  absl::MutexLock lock(&mu_);
  std::shared_ptr<absl::Mutex>& m = volume_locks_[unique];
  if (m == nullptr) m = std::make_shared<absl::Mutex>();
  return m;
}

absl::StatusOr<CSIDriverInfo> CsiVolumePlugin::DriverInfo(const std::string& driver) {
  CSIDriverInfo info;
  if (drivers_api_ == nullptr) return info;
  absl::StatusOr<std::optional<CSIDriverInfo>> got = drivers_api_->Get(driver);
  if (!got.ok()) return got.status();
  if (got->has_value()) info = **got;
  return info;
}

absl::Status CsiVolumePlugin::AddPodContext(const api::Pod& pod, const CSIDriverInfo& info,
                                            bool ephemeral,
                                            std::map<std::string, std::string>* context) {
  const std::string sa =
      pod.spec.service_account_name.empty() ? "default" : pod.spec.service_account_name;
  if (info.pod_info_on_mount) {
    (*context)["csi.storage.k8s.io/pod.name"] = pod.metadata.name;
    (*context)["csi.storage.k8s.io/pod.namespace"] = pod.metadata.namespace_;
    (*context)["csi.storage.k8s.io/pod.uid"] = pod.metadata.uid;
    (*context)["csi.storage.k8s.io/serviceAccount.name"] = sa;
    (*context)["csi.storage.k8s.io/ephemeral"] = ephemeral ? "true" : "false";
  }
  if (info.token_requests.empty()) return absl::OkStatus();
  if (options_.tokens == nullptr) {
    return absl::FailedPreconditionError(volume::kStandaloneTokenError);
  }
  // {"<audience>": {"token": ..., "expirationTimestamp": ...}} (upstream
  // podServiceAccountTokenAttrs).
  nlohmann::json tokens = nlohmann::json::object();
  for (const CSITokenRequest& t : info.token_requests) {
    api::TokenRequest tr;
    if (!t.audience.empty()) tr.spec.audiences = {t.audience};
    tr.spec.expiration_seconds = t.expiration_seconds;
    tr.spec.bound_object_ref =
        api::BoundObjectReference{"Pod", "v1", pod.metadata.name, pod.metadata.uid};
    absl::StatusOr<api::TokenRequest> got =
        options_.tokens->GetServiceAccountToken(pod.metadata.namespace_, sa, tr);
    if (!got.ok()) return got.status();
    tokens[t.audience] = {{"token", got->status.token},
                          {"expirationTimestamp", got->status.expiration_timestamp.RFC3339()}};
  }
  (*context)["csi.storage.k8s.io/serviceAccount.tokens"] = api::SerializeJson(tokens);
  return absl::OkStatus();
}

absl::Status CsiVolumePlugin::Secrets(const std::optional<api::SecretReference>& ref,
                                      std::map<std::string, std::string>* out) {
  if (!ref.has_value()) return absl::OkStatus();
  const std::string& ns = ref->namespace_;
  const std::string& name = ref->name;
  if (!options_.get_secret) {
    return absl::FailedPreconditionError(
        absl::StrCat("failed to find the secret ", name, " in the namespace ", ns,
                     " with error: ", volume::kStandaloneObjectError));
  }
  absl::StatusOr<std::map<std::string, std::string>> data = options_.get_secret(ns, name);
  if (!data.ok()) {
    return absl::Status(data.status().code(),
                        absl::StrCat("failed to find the secret ", name, " in the namespace ", ns,
                                     " with error: ", data.status().message()));
  }
  *out = *std::move(data);
  return absl::OkStatus();
}

absl::StatusOr<volume::ExternalVolume> CsiVolumePlugin::SetUp(const api::Pod& pod,
                                                              const volume::VolumeSpec& spec,
                                                              const std::string& dir) {
  if (spec.pv != nullptr) {
    return StorageOp(spec.pv->spec.csi->driver, "volume_mount")
        .Done(SetUpPersistent(pod, spec, dir));
  }
  absl::StatusOr<InlineSource> src = ParseInline(*spec.volume, pod.metadata.namespace_);
  return StorageOp(src.ok() ? src->driver : "", "volume_mount")
      .Done(SetUpInline(pod, *spec.volume, dir));
}

absl::StatusOr<volume::ExternalVolume> CsiVolumePlugin::SetUpInline(const api::Pod& pod,
                                                                    const api::Volume& volume,
                                                                    const std::string& dir) {
  absl::StatusOr<InlineSource> src = ParseInline(volume, pod.metadata.namespace_);
  if (!src.ok()) return src.status();
  std::optional<Driver> driver = drivers_.Get(src->driver);
  if (!driver.has_value()) return absl::UnavailableError(DriverNotFound(src->driver));
  absl::StatusOr<CSIDriverInfo> info = DriverInfo(src->driver);
  if (!info.ok()) return info.status();
  if (info->lifecycle_modes.count(kEphemeral) == 0) {
    std::vector<std::string> modes;
    for (const std::string& m : info->lifecycle_modes) modes.push_back(absl::StrCat("\"", m, "\""));
    return absl::FailedPreconditionError(
        absl::StrCat("volume mode \"Ephemeral\" not supported by driver ", src->driver,
                     " (only supports [", absl::StrJoin(modes, " "), "])"));
  }
  const std::string handle = CsiHandle(pod.metadata.uid + volume.name);
  if (AlreadyPublished(dir, src->driver, handle)) {
    KLOG_V(2, "Volume is already published, adopting it", "volume", volume.name, "dir", dir);
    return volume::ExternalVolume{absl::StrCat(dir, "/mount"), src->read_only};
  }
  if (absl::Status st = MakeDir(dir); !st.ok()) return st;
  const std::map<std::string, std::string> vol_data = {
      {"specVolID", volume.name},
      {"volumeHandle", handle},
      {"driverName", src->driver},
      {"nodeName", options_.node_name},
      {"attachmentID", CsiHandle(handle + src->driver + options_.node_name)},
      {"volumeLifecycleMode", kEphemeral}};
  if (absl::Status st =
          WriteFileAtomically(absl::StrCat(dir, "/", kVolDataFile), VolData(vol_data), 0644);
      !st.ok()) {
    return st;
  }
  PublishRequest r;
  r.volume_id = handle;
  r.target_path = absl::StrCat(dir, "/mount");
  r.capability.fs_type = src->fs_type;
  r.readonly = src->read_only;
  r.volume_context = src->attributes;
  if (absl::Status st = AddPodContext(pod, *info, /*ephemeral=*/true, &r.volume_context);
      !st.ok()) {
    return st;
  }
  if (absl::Status st = Secrets(src->secret_ref, &r.secrets); !st.ok()) return st;
  if (absl::Status st =
          Timed(src->driver, "NodePublishVolume",
                [&] { return client_.NodePublishVolume(driver->endpoint, r, options_.timeout); });
      !st.ok()) {
    return RpcError("NodePublishVolume", st);
  }
  KLOG_V(4, "kubernetes.io/csi: mounter.SetUp successfully requested NodePublish", "volume",
         volume.name, "target", r.target_path);
  return volume::ExternalVolume{r.target_path, r.readonly};
}

absl::Status CsiVolumePlugin::WaitReportedInUse(const std::string& unique,
                                                const std::string& pod_uid, absl::Time deadline,
                                                const std::function<bool()>& cancelled) {
  bool added = false;
  {
    absl::MutexLock lock(&mu_);
    added = in_use_.count(unique) == 0 && wanted_.count(unique) == 0;
    // A report from before the volume was last released does not count.
    if (added) reported_.erase(unique);
    // In use from now on, for as long as the pod is (not just while this attempt runs).
    wanted_[unique].insert(pod_uid);
  }
  if (added && options_.in_use_changed) options_.in_use_changed();
  auto reported = [this, &unique]()
                      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return reported_.count(unique) > 0; };
  // In slices, to give up soon once the set-up is no longer wanted.
  for (absl::Time now = absl::Now(); now < deadline; now = absl::Now()) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithDeadline(absl::Condition(&reported),
                                std::min(deadline, now + absl::Milliseconds(500)))) {
        return absl::OkStatus();
      }
    }
    if (cancelled && cancelled()) return absl::CancelledError("the volume is no longer wanted");
  }
  return absl::UnavailableError(
      absl::StrCat("volume ", unique,
                   " has not been added to the list of VolumesInUse in the node's volume status"));
}

absl::StatusOr<std::map<std::string, std::string>> CsiVolumePlugin::WaitForAttach(
    const std::string& name, const std::string& pv_name, absl::Time deadline,
    const std::function<bool()>& cancelled) {
  if (attachments_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "volume ", pv_name, " needs attaching, which is not possible without an API server"));
  }
  absl::Duration delay = absl::Milliseconds(50);
  std::string last;
  while (true) {
    absl::StatusOr<std::optional<api::VolumeAttachment>> va = attachments_->Get(name);
    if (!va.ok()) {
      last =
          absl::StrCat("volume attachment ", name, " could not be read: ", va.status().message());
    } else if (!va->has_value()) {
      last = absl::StrCat("volumeattachments.storage.k8s.io \"", name, "\" not found");
    } else if ((*va)->metadata.deletion_timestamp.has_value()) {
      last = absl::StrCat("volume attachment is being deleted");
    } else if ((*va)->status.attached) {
      return (*va)->status.attachment_metadata;
    } else if ((*va)->status.attach_error.has_value()) {
      return absl::UnavailableError(
          absl::StrCat("rpc error: code = Unknown desc = ", (*va)->status.attach_error->message));
    } else {
      last = absl::StrCat("volume ", pv_name, " is not attached yet");
    }
    if (absl::Now() + delay > deadline) break;
    if (cancelled && cancelled()) return absl::CancelledError("the volume is no longer wanted");
    absl::SleepFor(delay);
    delay = std::min(delay * 3 / 2, absl::Seconds(1));
  }
  return absl::DeadlineExceededError(absl::StrCat("timed out waiting for external-attacher of ",
                                                  kCSIPluginName, " CSI driver to attach volume ",
                                                  pv_name, ": ", last));
}

absl::StatusOr<volume::ExternalVolume> CsiVolumePlugin::SetUpPersistent(
    const api::Pod& pod, const volume::VolumeSpec& spec, const std::string& dir) {
  Reconstruct();
  const api::PersistentVolume& pv = *spec.pv;
  const api::CSIPersistentVolumeSource& src = *pv.spec.csi;
  if (pv.spec.volume_mode == api::kVolumeModeBlock) {
    return absl::UnimplementedError("raw block CSI volumes are not supported by this kubelet yet");
  }
  std::optional<Driver> driver = drivers_.Get(src.driver);
  if (!driver.has_value()) return absl::UnavailableError(DriverNotFound(src.driver));
  absl::StatusOr<CSIDriverInfo> info = DriverInfo(src.driver);
  if (!info.ok()) return info.status();
  const std::string unique = UniqueName(src.driver, src.volume_handle);
  const std::string attachment = CsiHandle(src.volume_handle + src.driver + options_.node_name);
  // While this SetUp runs, a tear-down of the volume in another pod does not unstage it.
  {
    absl::MutexLock lock(&mu_);
    ++setting_up_[unique];
  }
  absl::Cleanup done = [&] {
    absl::MutexLock lock(&mu_);
    if (--setting_up_[unique] == 0) setting_up_.erase(unique);
  };
  if (AlreadyPublished(dir, src.driver, src.volume_handle)) {
    KLOG_V(2, "Volume is already published, adopting it", "volume", pv.metadata.name, "dir", dir);
    absl::MutexLock lock(&mu_);
    staged_.insert(unique);  // published implies staged
    if (info->attach_required) in_use_.insert(unique);
    return volume::ExternalVolume{absl::StrCat(dir, "/mount"), spec.read_only || src.read_only};
  }

  std::map<std::string, std::string> publish_context;
  if (info->attach_required) {
    // One bound for both waits (the volume manager retries after it).
    const absl::Time deadline = absl::Now() + options_.attach_wait;
    if (absl::Status st = WaitReportedInUse(unique, pod.metadata.uid, deadline, spec.cancelled);
        !st.ok()) {
      return st;
    }
    absl::StatusOr<std::map<std::string, std::string>> ctx =
        WaitForAttach(attachment, pv.metadata.name, deadline, spec.cancelled);
    if (!ctx.ok()) return ctx.status();
    publish_context = *std::move(ctx);
  }
  absl::StatusOr<NodeCapabilities> caps = Timed(src.driver, "NodeGetCapabilities", [&] {
    return client_.NodeGetCapabilities(driver->endpoint, options_.timeout);
  });
  if (!caps.ok()) return RpcError("NodeGetCapabilities", caps.status());

  VolumeCapability capability;
  capability.fs_type = src.fs_type;
  capability.mount_flags = pv.spec.mount_options;
  capability.access_mode = AccessMode(pv, caps->single_node_multi_writer);
  const std::optional<int64_t> fs_group =
      pod.spec.security_context.has_value() ? pod.spec.security_context->fs_group : std::nullopt;
  const bool delegate_fs_group =
      caps->volume_mount_group && fs_group.has_value() && info->fs_group_policy != "None";
  if (delegate_fs_group) capability.volume_mount_group = std::to_string(*fs_group);

  std::shared_ptr<absl::Mutex> vlock = VolumeLock(unique);
  absl::MutexLock vl(vlock.get());
  // Stage (MountDevice): once per volume on this node.
  const std::string staging = StagingPath(src.driver, src.volume_handle);
  bool staged;
  {
    absl::MutexLock lock(&mu_);
    staged = staged_.count(unique) > 0;
  }
  if (!staged) {
    if (absl::Status st = MakeDir(staging); !st.ok()) return st;
    const std::string data =
        absl::StrCat(std::filesystem::path(staging).parent_path().string(), "/", kVolDataFile);
    if (absl::Status st = WriteFileAtomically(
            data, VolData({{"driverName", src.driver}, {"volumeHandle", src.volume_handle}}), 0644);
        !st.ok()) {
      return st;
    }
    if (caps->stage_unstage) {
      StageRequest r;
      r.volume_id = src.volume_handle;
      r.publish_context = publish_context;
      r.staging_target_path = staging;
      r.capability = capability;
      r.volume_context = src.volume_attributes;
      if (absl::Status st = Secrets(src.node_stage_secret_ref, &r.secrets); !st.ok()) return st;
      if (absl::Status st =
              Timed(src.driver, "NodeStageVolume",
                    [&] { return client_.NodeStageVolume(driver->endpoint, r, options_.timeout); });
          !st.ok()) {
        if (IsFinal(st)) {
          (void)volume::RemoveAllNoCrossMounts(
              std::filesystem::path(staging).parent_path().string());
        }
        return RpcError("NodeStageVolume", st);
      }
      KLOG_INFO(
          absl::StrCat("MountVolume.MountDevice succeeded for volume ",
                       log::Quote(pv.metadata.name), " device mount path ", log::Quote(staging)),
          "pod", absl::StrCat(pod.metadata.namespace_, "/", pod.metadata.name));
    } else {
      KLOG_V(4,
             "kubernetes.io/csi: attacher.MountDevice STAGE_UNSTAGE_VOLUME capability not set. "
             "Skipping MountDevice...");
    }
    absl::MutexLock lock(&mu_);
    staged_.insert(unique);
    if (info->attach_required) in_use_.insert(unique);  // until it is unstaged
  }
  // Publish (SetUp).
  if (absl::Status st = MakeDir(dir); !st.ok()) return st;
  const std::map<std::string, std::string> vol_data = {
      {"specVolID", pv.metadata.name}, {"volumeHandle", src.volume_handle},
      {"driverName", src.driver},      {"nodeName", options_.node_name},
      {"attachmentID", attachment},    {"volumeLifecycleMode", kPersistent}};
  if (absl::Status st =
          WriteFileAtomically(absl::StrCat(dir, "/", kVolDataFile), VolData(vol_data), 0644);
      !st.ok()) {
    return st;
  }
  PublishRequest r;
  r.volume_id = src.volume_handle;
  r.publish_context = publish_context;
  if (caps->stage_unstage) r.staging_target_path = staging;
  r.target_path = absl::StrCat(dir, "/mount");
  r.capability = capability;
  r.readonly = spec.read_only || src.read_only;
  r.volume_context = src.volume_attributes;
  if (absl::Status st = AddPodContext(pod, *info, /*ephemeral=*/false, &r.volume_context);
      !st.ok()) {
    return st;
  }
  if (absl::Status st = Secrets(src.node_publish_secret_ref, &r.secrets); !st.ok()) return st;
  if (absl::Status st =
          Timed(src.driver, "NodePublishVolume",
                [&] { return client_.NodePublishVolume(driver->endpoint, r, options_.timeout); });
      !st.ok()) {
    if (IsFinal(st) && !volume::IsMountPoint(r.target_path)) {
      (void)volume::RemoveAllNoCrossMounts(dir);
    }
    return RpcError("NodePublishVolume", st);
  }
  // fsGroup (upstream supportsFSGroup).
  bool apply_fs_group = false;
  if (fs_group.has_value() && !delegate_fs_group && !r.readonly) {
    if (info->fs_group_policy == "File") {
      apply_fs_group = true;
    } else if (info->fs_group_policy == "ReadWriteOnceWithFSType") {
      // Upstream: an fsType, and ReadWriteOnce among the PV's access modes.
      apply_fs_group = !src.fs_type.empty() &&
                       std::find(pv.spec.access_modes.begin(), pv.spec.access_modes.end(),
                                 api::kReadWriteOnce) != pv.spec.access_modes.end();
    }
  }
  if (apply_fs_group) {
    if (absl::Status st = volume::ApplyFsGroup(pod, r.target_path, false); !st.ok()) return st;
  }
  KLOG_V(4, "kubernetes.io/csi: mounter.SetUp successfully requested NodePublish", "volume",
         pv.metadata.name, "target", r.target_path);
  return volume::ExternalVolume{r.target_path, r.readonly};
}

absl::Status CsiVolumePlugin::TearDown(const std::string& pod_uid, const std::string& dir) {
  const absl::Time start = absl::Now();
  {
    absl::MutexLock lock(&mu_);
    stats_cache_.erase(dir);
  }
  Reconstruct();
  const std::map<std::string, std::string> data = ReadVolData(absl::StrCat(dir, "/", kVolDataFile));
  const std::string target = absl::StrCat(dir, "/mount");
  auto field = [&data](const char* k) {
    auto it = data.find(k);
    return it == data.end() ? std::string() : it->second;
  };
  const std::string driver_name = field("driverName");
  const std::string handle = field("volumeHandle");
  const bool persistent = field("volumeLifecycleMode") != kEphemeral;
  if (!driver_name.empty() && !handle.empty()) {
    std::optional<Driver> driver = drivers_.Get(driver_name);
    if (!driver.has_value()) return absl::UnavailableError(DriverNotFound(driver_name));
    std::shared_ptr<absl::Mutex> vlock = VolumeLock(UniqueName(driver_name, handle));
    absl::MutexLock vl(vlock.get());
    if (absl::Status st = Timed(driver_name, "NodeUnpublishVolume",
                                [&] {
                                  return client_.NodeUnpublishVolume(driver->endpoint, handle,
                                                                     target, options_.timeout);
                                });
        !st.ok()) {
      return RpcError("NodeUnpublishVolume", st);
    }
    KLOG_V(4, "kubernetes.io/csi: mounter.TearDownAt successfully unmounted dir", "podUID", pod_uid,
           "target", target);
    if (volume::IsMountPoint(target)) {
      return absl::FailedPreconditionError(absl::StrCat(target, " is still mounted"));
    }
    if (absl::Status st = volume::RemoveAllNoCrossMounts(dir); !st.ok()) return st;
    metrics::ObserveStorageOperation(absl::StrCat(kCSIPluginName, ":", driver_name),
                                     "volume_unmount", true,
                                     absl::ToDoubleSeconds(absl::Now() - start));
    if (persistent) {
      absl::Status st =
          StorageOp(driver_name, "unmount_device").Done(ReleaseIfUnused(driver_name, handle));
      if (!st.ok()) {
        // The pod's dir is gone; housekeeping retries the release.
        KLOG_ERROR(st, "UnmountDevice failed, will retry", "volume",
                   UniqueName(driver_name, handle));
        absl::MutexLock lock(&mu_);
        pending_release_.emplace(driver_name, handle);
      }
    }
    return absl::OkStatus();
  }
  if (volume::IsMountPoint(target)) {
    return absl::FailedPreconditionError(absl::StrCat(target, " is still mounted"));
  }
  return volume::RemoveAllNoCrossMounts(dir);
}

absl::Status CsiVolumePlugin::ReleaseIfUnused(const std::string& driver_name,
                                              const std::string& handle) {
  const std::string unique = UniqueName(driver_name, handle);
  {
    // A set-up of the volume for another pod is under way: it keeps the volume.
    absl::MutexLock lock(&mu_);
    if (setting_up_.count(unique) > 0) return absl::OkStatus();
  }
  // Any pod dir still publishing the volume keeps it staged (upstream: the device stays
  // mounted while the actual state has a pod mounting it). Disk is the truth, also after a
  // restart; the caller holds the volume lock, so no publish of it is under way. What cannot
  // be read counts as a user: a volume is never unstaged on a guess.
  bool used = false;
  absl::Status scanned =
      ForEachPublished(options_.root_dir, [&](std::map<std::string, std::string>& d) {
        used = d["driverName"] == driver_name && d["volumeHandle"] == handle;
        return !used;
      });
  if (used) return absl::OkStatus();
  if (!scanned.ok()) return scanned;
  const std::string staging = StagingPath(driver_name, handle);
  const std::string volume_dir = std::filesystem::path(staging).parent_path().string();
  const std::string data_path = absl::StrCat(volume_dir, "/", kVolDataFile);
  if (::access(data_path.c_str(), F_OK) == 0) {
    std::optional<Driver> driver = drivers_.Get(driver_name);
    if (!driver.has_value()) return absl::UnavailableError(DriverNotFound(driver_name));
    absl::StatusOr<NodeCapabilities> caps = Timed(driver_name, "NodeGetCapabilities", [&] {
      return client_.NodeGetCapabilities(driver->endpoint, options_.timeout);
    });
    if (!caps.ok()) return RpcError("NodeGetCapabilities", caps.status());
    if (caps->stage_unstage) {
      if (absl::Status st = Timed(driver_name, "NodeUnstageVolume",
                                  [&] {
                                    return client_.NodeUnstageVolume(driver->endpoint, handle,
                                                                     staging, options_.timeout);
                                  });
          !st.ok()) {
        return RpcError("NodeUnstageVolume", st);
      }
    }
    if (volume::IsMountPoint(staging)) {
      return absl::FailedPreconditionError(absl::StrCat(staging, " is still mounted"));
    }
    if (absl::Status st = volume::RemoveAllNoCrossMounts(volume_dir); !st.ok()) return st;
    KLOG_INFO(absl::StrCat("UnmountDevice succeeded for volume ", log::Quote(unique)), "devicePath",
              staging);
  }
  bool removed;
  {
    absl::MutexLock lock(&mu_);
    staged_.erase(unique);
    removed = in_use_.erase(unique) > 0 && wanted_.count(unique) == 0;
    if (removed) reported_.erase(unique);
  }
  if (removed && options_.in_use_changed) options_.in_use_changed();
  return absl::OkStatus();
}

void CsiVolumePlugin::PodRemoved(const std::string& pod_uid) {
  bool changed = false;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = wanted_.begin(); it != wanted_.end();) {
      it->second.erase(pod_uid);
      if (!it->second.empty()) {
        ++it;
        continue;
      }
      // No pod wants it any more; it stays in use while it is still staged or published.
      if (in_use_.count(it->first) == 0) {
        reported_.erase(it->first);
        changed = true;
      }
      it = wanted_.erase(it);
    }
  }
  if (changed && options_.in_use_changed) options_.in_use_changed();
}

void CsiVolumePlugin::Housekeeping() {
  Reconstruct();
  std::set<std::pair<std::string, std::string>> pending;
  {
    absl::MutexLock lock(&mu_);
    pending.swap(pending_release_);
  }
  for (const auto& [driver, handle] : pending) {
    const std::string unique = UniqueName(driver, handle);
    std::shared_ptr<absl::Mutex> vlock = VolumeLock(unique);
    absl::MutexLock vl(vlock.get());
    if (absl::Status st = ReleaseIfUnused(driver, handle); !st.ok()) {
      KLOG_V(2, "Volume release failed, will retry", "volume", unique, "err", st);
      absl::MutexLock lock(&mu_);
      pending_release_.emplace(driver, handle);
    }
  }
}

void CsiVolumePlugin::Reconstruct() {
  {
    absl::MutexLock lock(&mu_);
    if (reconstructed_) return;
  }
  // Volumes published into pod dirs or still staged when the previous kubelet stopped.
  std::set<std::pair<std::string, std::string>> found;  // (driver, handle)
  // What cannot be read now is left out; its release is retried by housekeeping later.
  (void)ForEachPublished(options_.root_dir, [&](std::map<std::string, std::string>& d) {
    if (d["volumeLifecycleMode"] != kEphemeral && !d["driverName"].empty()) {
      found.emplace(d["driverName"], d["volumeHandle"]);
    }
    return true;
  });
  const std::string plugin_root = absl::StrCat(options_.root_dir, "/plugins/", kCSIPluginName);
  for (const std::string& driver : volume::ListDir(plugin_root)) {
    for (const std::string& sha : volume::ListDir(absl::StrCat(plugin_root, "/", driver))) {
      std::map<std::string, std::string> d =
          ReadVolData(absl::StrCat(plugin_root, "/", driver, "/", sha, "/", kVolDataFile));
      if (!d["driverName"].empty()) found.emplace(d["driverName"], d["volumeHandle"]);
    }
  }
  std::set<std::string> attachable;
  std::map<std::string, bool> attaches;  // by driver: one CSIDriver read each
  for (const auto& [driver, handle] : found) {
    // A volume of a driver that does not need attaching is not reported in use (upstream
    // reports attachable volumes only); when that cannot be told, it is reported.
    auto it = attaches.find(driver);
    if (it == attaches.end()) {
      absl::StatusOr<CSIDriverInfo> info = DriverInfo(driver);
      it = attaches.emplace(driver, !info.ok() || info->attach_required).first;
    }
    if (it->second) attachable.insert(UniqueName(driver, handle));
  }
  absl::MutexLock lock(&mu_);
  if (reconstructed_) return;
  reconstructed_ = true;
  in_use_.insert(attachable.begin(), attachable.end());
  // Housekeeping releases those no pod uses any more (e.g. the last pod was torn down by a
  // kubelet that stopped before it could unstage).
  pending_release_.insert(found.begin(), found.end());
  if (!found.empty()) {
    KLOG_INFO("Reconstructed CSI volumes from disk", "volumes", found.size(), "inUse",
              attachable.size());
  }
}

absl::StatusOr<volume::VolumeUsageStats> CsiVolumePlugin::GetVolumeStats(const std::string& dir) {
  // Answers are kept for stats_cache_ttl (upstream measures volumes once per
  // volumeStatsAggPeriod), so /stats/summary, /metrics and the eviction manager do not each
  // call the driver.
  {
    absl::MutexLock lock(&mu_);
    auto it = stats_cache_.find(dir);
    if (it != stats_cache_.end() && absl::Now() - it->second.at < options_.stats_cache_ttl) {
      return it->second.stats;
    }
  }
  absl::StatusOr<volume::VolumeUsageStats> stats = ReadVolumeStats(dir);
  absl::MutexLock lock(&mu_);
  if (stats.ok()) {
    stats_cache_[dir] = {*stats, absl::Now()};
  } else {
    stats_cache_.erase(dir);
  }
  return stats;
}

absl::StatusOr<volume::VolumeUsageStats> CsiVolumePlugin::ReadVolumeStats(const std::string& dir) {
  std::map<std::string, std::string> data = ReadVolData(absl::StrCat(dir, "/", kVolDataFile));
  const std::string driver_name = data["driverName"];
  std::optional<Driver> driver = drivers_.Get(driver_name);
  if (!driver.has_value()) return absl::UnavailableError(DriverNotFound(driver_name));
  absl::StatusOr<NodeCapabilities> caps = Timed(driver_name, "NodeGetCapabilities", [&] {
    return client_.NodeGetCapabilities(driver->endpoint, options_.stats_timeout);
  });
  if (!caps.ok()) return RpcError("NodeGetCapabilities", caps.status());
  if (!caps->get_volume_stats) {
    return absl::UnimplementedError(
        absl::StrCat("driver ", driver_name, " does not support NodeGetVolumeStats"));
  }
  absl::StatusOr<VolumeStats> st = Timed(driver_name, "NodeGetVolumeStats", [&] {
    return client_.NodeGetVolumeStats(driver->endpoint, data["volumeHandle"],
                                      absl::StrCat(dir, "/mount"), options_.stats_timeout);
  });
  if (!st.ok()) return RpcError("NodeGetVolumeStats", st.status());
  volume::VolumeUsageStats out;
  if (st->bytes.has_value()) {
    out.capacity_bytes = st->bytes->total;
    out.available_bytes = st->bytes->available;
    out.used_bytes = st->bytes->used;
  }
  if (st->inodes.has_value()) {
    out.inodes = st->inodes->total;
    out.inodes_free = st->inodes->available;
    out.inodes_used = st->inodes->used;
  }
  if (caps->volume_condition) out.abnormal = st->abnormal;
  return out;
}

std::vector<std::string> CsiVolumePlugin::VolumesInUse() {
  Reconstruct();
  absl::MutexLock lock(&mu_);
  std::set<std::string> out = in_use_;
  for (const auto& [unique, pods] : wanted_) out.insert(unique);
  return std::vector<std::string>(out.begin(), out.end());
}

void CsiVolumePlugin::MarkVolumesAsReportedInUse(const std::vector<std::string>& names) {
  absl::MutexLock lock(&mu_);
  reported_ = std::set<std::string>(names.begin(), names.end());
}

}  // namespace kubelet::csi
