#include "kubelet/csi/registration_handler.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::csi {
namespace {

constexpr char kLogPrefix[] = "kubernetes.io/csi: ";

std::string Quoted(const std::vector<std::string>& versions) {
  std::vector<std::string> q;
  for (const std::string& v : versions) q.push_back(absl::StrCat("\"", v, "\""));
  return absl::StrCat("[", absl::StrJoin(q, " "), "]");
}

}  // namespace

void DriverRegistry::Set(const std::string& name, Driver d) {
  absl::MutexLock lock(&mu_);
  drivers_[name] = std::move(d);
}

void DriverRegistry::Delete(const std::string& name) {
  absl::MutexLock lock(&mu_);
  drivers_.erase(name);
}

std::optional<Driver> DriverRegistry::Get(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto it = drivers_.find(name);
  if (it == drivers_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<Version> RegistrationHandler::ValidateVersions(
    const std::string& caller, const std::string& name, const std::vector<std::string>& versions) {
  const std::string failed =
      absl::StrCat(kLogPrefix, caller, " for CSI driver \"", name, "\" failed.");
  if (versions.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(failed, " Plugin returned an empty list for supported versions"));
  }
  absl::StatusOr<Version> highest = HighestSupportedVersion(versions);
  if (!highest.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(failed, " None of the versions specified ", Quoted(versions),
                     " are supported. err=", highest.status().message()));
  }
  if (std::optional<Driver> existing = drivers_.Get(name);
      existing.has_value() && Compare(existing->highest_version, *highest) >= 0) {
    return absl::AlreadyExistsError(absl::StrCat(
        failed,
        " Another driver with the same name is already registered with a higher supported "
        "version: \"",
        existing->highest_version.String(), "\""));
  }
  return highest;
}

absl::Status RegistrationHandler::ValidatePlugin(const std::string& name,
                                                 const std::string& endpoint,
                                                 const std::vector<std::string>& versions) {
  KLOG_INFO(absl::StrCat(kLogPrefix, "Trying to validate a new CSI Driver with name: ", name,
                         " endpoint: ", endpoint, " versions: ", absl::StrJoin(versions, ",")));
  absl::StatusOr<Version> v = ValidateVersions("ValidatePlugin", name, versions);
  if (!v.ok()) {
    return absl::Status(v.status().code(),
                        absl::StrCat("validation failed for CSI Driver ", name, " at endpoint ",
                                     endpoint, ": ", v.status().message()));
  }
  return absl::OkStatus();
}

absl::Status RegistrationHandler::RegisterPlugin(const std::string& name,
                                                 const std::string& endpoint,
                                                 const std::vector<std::string>& versions) {
  KLOG_INFO(absl::StrCat(kLogPrefix, "Register new plugin with name: ", name,
                         " at endpoint: ", endpoint));
  absl::StatusOr<Version> v = ValidateVersions("RegisterPlugin", name, versions);
  if (!v.ok()) return v.status();
  drivers_.Set(name, Driver{endpoint, *v});
  absl::StatusOr<NodeInfo> info = client_.NodeGetInfo(endpoint, timeout_);
  if (!info.ok()) {
    KLOG_ERROR(info.status(), absl::StrCat(kLogPrefix, "Error calling CSI NodeGetInfo()"));
    Unregister(name);
    return info.status();
  }
  if (node_info_ != nullptr) {
    absl::Status st =
        node_info_->InstallDriver(name, info->node_id, info->max_volumes_per_node, info->topology);
    if (!st.ok()) {
      KLOG_ERROR(st, absl::StrCat(kLogPrefix, "Failed to initialize CSINodeInfo"));
      Unregister(name);
      return st;
    }
  }
  return absl::OkStatus();
}

void RegistrationHandler::DeRegisterPlugin(const std::string& name) {
  KLOG_INFO(
      absl::StrCat(kLogPrefix, "registrationHandler.DeRegisterPlugin request for plugin ", name));
  Unregister(name);
}

void RegistrationHandler::Unregister(const std::string& name) {
  drivers_.Delete(name);
  if (node_info_ == nullptr) return;
  if (absl::Status st = node_info_->UninstallDriver(name); !st.ok()) {
    KLOG_ERROR(st, absl::StrCat(kLogPrefix, "Error uninstalling CSI driver"));
  }
}

}  // namespace kubelet::csi
