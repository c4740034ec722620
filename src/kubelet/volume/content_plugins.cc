#include "kubelet/volume/content_plugins.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "kubelet/volume/plugins.h"

namespace kubelet::volume {
namespace {

namespace fs = std::filesystem;

uint32_t ModeOf(const api::KeyToPath& ktp, int32_t default_mode) {
  return static_cast<uint32_t>(ktp.mode.value_or(default_mode));
}

// Upstream's optional-object rule: a NotFound of an optional source reads as an empty object;
// any other error (or a required source) is returned as is.
template <typename T>
absl::StatusOr<T> OrEmptyIfOptional(absl::StatusOr<T> got, bool optional, const char* what,
                                    const std::string& ns, const std::string& name) {
  if (got.ok()) return got;
  if (optional && absl::IsNotFound(got.status())) {
    T empty;
    empty.metadata.namespace_ = ns;
    empty.metadata.name = name;
    return empty;
  }
  KLOG_ERROR(got.status(), absl::StrCat("Couldn't get ", what), "namespace", ns, "name", name);
  return got.status();
}

absl::StatusOr<api::ConfigMap> GetConfigMap(ObjectSource* objects, const std::string& ns,
                                            const std::string& name, bool optional) {
  absl::StatusOr<api::ConfigMap> got =
      objects == nullptr
          ? absl::StatusOr<api::ConfigMap>(absl::UnavailableError(kStandaloneObjectError))
          : objects->GetConfigMap(ns, name);
  return OrEmptyIfOptional(std::move(got), optional, "configMap", ns, name);
}

absl::StatusOr<api::Secret> GetSecret(ObjectSource* objects, const std::string& ns,
                                      const std::string& name, bool optional) {
  absl::StatusOr<api::Secret> got =
      objects == nullptr
          ? absl::StatusOr<api::Secret>(absl::UnavailableError(kStandaloneObjectError))
          : objects->GetSecret(ns, name);
  return OrEmptyIfOptional(std::move(got), optional, "secret", ns, name);
}

// utilerrors.NewAggregate(...).Error().
absl::Status Aggregate(const std::vector<absl::Status>& errors) {
  if (errors.empty()) return absl::OkStatus();
  if (errors.size() == 1) return errors.front();
  std::vector<std::string> msgs;
  for (const absl::Status& st : errors) msgs.emplace_back(st.message());
  return absl::Status(errors.front().code(), absl::StrCat("[", absl::StrJoin(msgs, ", "), "]"));
}

}  // namespace

absl::StatusOr<Payload> MakeConfigMapPayload(const std::vector<api::KeyToPath>& items,
                                             const api::ConfigMap& config_map, int32_t default_mode,
                                             bool optional) {
  Payload payload;
  const uint32_t mode = static_cast<uint32_t>(default_mode);
  if (items.empty()) {
    for (const auto& [key, value] : config_map.data) payload[key] = {value, mode};
    for (const auto& [key, value] : config_map.binary_data) payload[key] = {value, mode};
    return payload;
  }
  for (const api::KeyToPath& ktp : items) {
    FileProjection fp;
    if (auto it = config_map.data.find(ktp.key); it != config_map.data.end()) {
      fp.data = it->second;
    } else if (auto bit = config_map.binary_data.find(ktp.key);
               bit != config_map.binary_data.end()) {
      fp.data = bit->second;
    } else {
      if (optional) continue;
      return absl::NotFoundError(
          absl::StrCat("configmap references non-existent config key: ", ktp.key));
    }
    fp.mode = ModeOf(ktp, default_mode);
    payload[ktp.path] = std::move(fp);
  }
  return payload;
}

absl::StatusOr<Payload> MakeSecretPayload(const std::vector<api::KeyToPath>& items,
                                          const api::Secret& secret, int32_t default_mode,
                                          bool optional) {
  Payload payload;
  const uint32_t mode = static_cast<uint32_t>(default_mode);
  if (items.empty()) {
    for (const auto& [key, value] : secret.data) payload[key] = {value, mode};
    return payload;
  }
  for (const api::KeyToPath& ktp : items) {
    auto it = secret.data.find(ktp.key);
    if (it == secret.data.end()) {
      if (optional) continue;
      return absl::NotFoundError(absl::StrCat("references non-existent secret key: ", ktp.key));
    }
    payload[ktp.path] = {it->second, ModeOf(ktp, default_mode)};
  }
  return payload;
}

absl::StatusOr<Payload> ConfigMapVolumePayload(const api::Pod& pod,
                                               const api::ConfigMapVolumeSource& source,
                                               ObjectSource* objects) {
  const bool optional = source.optional.value_or(false);
  absl::StatusOr<api::ConfigMap> cm =
      GetConfigMap(objects, pod.metadata.namespace_, source.name, optional);
  if (!cm.ok()) return cm.status();
  KLOG_V(3, "Received configMap", "namespace", pod.metadata.namespace_, "name", source.name,
         "pieces", cm->data.size() + cm->binary_data.size());
  return MakeConfigMapPayload(source.items, *cm,
                              source.default_mode.value_or(kDefaultVolumeFileMode), optional);
}

absl::StatusOr<Payload> SecretVolumePayload(const api::Pod& pod,
                                            const api::SecretVolumeSource& source,
                                            ObjectSource* objects) {
  const bool optional = source.optional.value_or(false);
  absl::StatusOr<api::Secret> secret =
      GetSecret(objects, pod.metadata.namespace_, source.secret_name, optional);
  if (!secret.ok()) return secret.status();
  KLOG_V(3, "Received secret", "namespace", pod.metadata.namespace_, "name", source.secret_name,
         "pieces", secret->data.size());
  return MakeSecretPayload(source.items, *secret,
                           source.default_mode.value_or(kDefaultVolumeFileMode), optional);
}

absl::StatusOr<Payload> ProjectedVolumePayload(const api::Pod& pod,
                                               const api::ProjectedVolumeSource& source,
                                               ObjectSource* objects, TokenManager* tokens,
                                               const api::ResourceList& node_allocatable) {
  const std::string& ns = pod.metadata.namespace_;
  const int32_t default_mode = source.default_mode.value_or(kDefaultVolumeFileMode);
  const bool has_fs_group =
      pod.spec.security_context.has_value() && pod.spec.security_context->fs_group.has_value();
  std::vector<absl::Status> errors;
  Payload payload;
  auto merge = [&payload](Payload part) {
    for (auto& [path, fp] : part) payload[path] = std::move(fp);
  };
  for (const api::VolumeProjection& p : source.sources) {
    if (p.secret.has_value()) {
      const bool optional = p.secret->optional.value_or(false);
      absl::StatusOr<api::Secret> secret = GetSecret(objects, ns, p.secret->name, optional);
      if (!secret.ok()) {
        errors.push_back(secret.status());
        continue;
      }
      absl::StatusOr<Payload> part =
          MakeSecretPayload(p.secret->items, *secret, default_mode, optional);
      if (!part.ok()) {
        KLOG_ERROR(part.status(), "Couldn't get secret payload", "namespace", ns, "name",
                   p.secret->name);
        errors.push_back(part.status());
        continue;
      }
      merge(*std::move(part));
    } else if (p.config_map.has_value()) {
      const bool optional = p.config_map->optional.value_or(false);
      absl::StatusOr<api::ConfigMap> cm = GetConfigMap(objects, ns, p.config_map->name, optional);
      if (!cm.ok()) {
        errors.push_back(cm.status());
        continue;
      }
      absl::StatusOr<Payload> part =
          MakeConfigMapPayload(p.config_map->items, *cm, default_mode, optional);
      if (!part.ok()) {
        KLOG_ERROR(part.status(), "Couldn't get configMap payload", "namespace", ns, "name",
                   p.config_map->name);
        errors.push_back(part.status());
        continue;
      }
      merge(*std::move(part));
    } else if (p.downward_api.has_value()) {
      absl::StatusOr<Payload> part =
          CollectDownwardAPIData(pod, p.downward_api->items, default_mode, node_allocatable);
      if (!part.ok()) {
        errors.push_back(part.status());
        continue;
      }
      merge(*std::move(part));
    } else if (p.service_account_token.has_value()) {
      const api::ServiceAccountTokenProjection& tp = *p.service_account_token;
      // With an fsGroup, SetVolumeOwnership widens 0600 to 0640.
      const uint32_t mode = has_fs_group ? 0600u : static_cast<uint32_t>(default_mode);
      api::TokenRequest tr;
      if (!tp.audience.empty()) tr.spec.audiences.push_back(tp.audience);
      tr.spec.expiration_seconds = tp.expiration_seconds.value_or(kDefaultTokenExpirationSeconds);
      tr.spec.bound_object_ref =
          api::BoundObjectReference{"Pod", "v1", pod.metadata.name, pod.metadata.uid};
      const std::string sa =
          pod.spec.service_account_name.empty() ? "default" : pod.spec.service_account_name;
      absl::StatusOr<api::TokenRequest> got =
          tokens == nullptr ? absl::StatusOr<api::TokenRequest>(absl::FailedPreconditionError(
                                  absl::StrCat("failed to fetch token: ", kStandaloneTokenError)))
                            : tokens->GetServiceAccountToken(ns, sa, tr);
      if (!got.ok()) {
        errors.push_back(got.status());
        continue;
      }
      payload[tp.path] = {got->status.token, mode};
    }
  }
  if (absl::Status st = Aggregate(errors); !st.ok()) return st;
  return payload;
}

absl::Status SetVolumeOwnership(const std::string& dir, int64_t fs_group, bool read_only,
                                bool on_root_mismatch) {
  const gid_t gid = static_cast<gid_t>(fs_group);
  const mode_t file_mask = read_only ? 0440 : 0660;
  const mode_t dir_mask = file_mask | S_ISGID | 0110;
  if (on_root_mismatch) {
    struct stat st;
    if (::stat(dir.c_str(), &st) == 0 && st.st_gid == gid && (st.st_mode & dir_mask) == dir_mask) {
      return absl::OkStatus();  // upstream: "skipping permission and ownership change for volume"
    }
  }
  auto change = [&](const fs::path& p) -> absl::Status {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) return absl::OkStatus();  // gone meanwhile
    if (::lchown(p.c_str(), static_cast<uid_t>(-1), gid) != 0) {
      return absl::InternalError(absl::StrCat("lchown ", p.string(), ": ", strerror(errno)));
    }
    if (S_ISLNK(st.st_mode)) return absl::OkStatus();
    const mode_t mask = S_ISDIR(st.st_mode) ? dir_mask : file_mask;
    if (::chmod(p.c_str(), (st.st_mode & 07777) | mask) != 0) {
      return absl::InternalError(absl::StrCat("chmod ", p.string(), ": ", strerror(errno)));
    }
    return absl::OkStatus();
  };
  if (absl::Status st = change(dir); !st.ok()) return st;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (absl::Status st = change(it->path()); !st.ok()) return st;
  }
  if (ec) return absl::InternalError(absl::StrCat("walk ", dir, ": ", ec.message()));
  return absl::OkStatus();
}

absl::Status ApplyFsGroup(const api::Pod& pod, const std::string& dir, bool read_only) {
  if (!pod.spec.security_context.has_value() || !pod.spec.security_context->fs_group.has_value()) {
    return absl::OkStatus();
  }
  const api::PodSecurityContext& sc = *pod.spec.security_context;
  return SetVolumeOwnership(dir, *sc.fs_group, read_only,
                            sc.fs_group_change_policy.value_or("") == "OnRootMismatch");
}

}  // namespace kubelet::volume
