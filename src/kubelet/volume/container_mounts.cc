#include "kubelet/volume/container_mounts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <filesystem>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/volume/plugins.h"

namespace kubelet::volume {
namespace {

namespace v1 = ::runtime::v1;
namespace fs = std::filesystem;

// Go's third_party expansion: $(VAR) references, "$$" escapes "$", anything else literal.
// `mapping` returns the replacement for a closed reference.
std::string Expand(const std::string& in,
                   const std::function<std::string(const std::string& name)>& mapping) {
  std::string out;
  size_t i = 0;
  while (i < in.size()) {
    if (in[i] != '$' || i + 1 >= in.size()) {
      out.push_back(in[i++]);
      continue;
    }
    const char next = in[i + 1];
    if (next == '$') {
      out.push_back('$');
      i += 2;
    } else if (next == '(') {
      const size_t close = in.find(')', i + 2);
      if (close == std::string::npos) {
        out.append("$(");
        i += 2;
      } else {
        out.append(mapping(in.substr(i + 2, close - i - 2)));
        i = close + 1;
      }
    } else {
      out.push_back('$');
      out.push_back(next);
      i += 2;
    }
  }
  return out;
}

std::optional<std::string> FieldRefValue(const api::Pod& pod, const std::string& path) {
  if (path == "spec.nodeName" || path == "spec.host") return pod.spec.node_name;
  if (path == "spec.serviceAccountName") return pod.spec.service_account_name;
  absl::StatusOr<std::string> v = api::ExtractFieldPathAsString(pod, path);
  if (!v.ok()) return std::nullopt;
  return *std::move(v);
}

absl::StatusOr<v1::MountPropagation> TranslatePropagation(const std::optional<std::string>& mode,
                                                          bool privileged) {
  if (!mode.has_value() || *mode == "None") return v1::PROPAGATION_PRIVATE;
  if (*mode == "HostToContainer") return v1::PROPAGATION_HOST_TO_CONTAINER;
  if (*mode == "Bidirectional") {
    if (!privileged) {
      return absl::InvalidArgumentError(
          "Bidirectional mount propagation is available only to privileged containers");
    }
    return v1::PROPAGATION_BIDIRECTIONAL;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("invalid MountPropagation mode: ", log::Quote(*mode)));
}

bool Within(const std::string& path, const std::string& base) {
  return path == base || absl::StartsWith(path, base == "/" ? base : base + "/");
}

std::string RealPath(const std::string& p) {
  char* r = ::realpath(p.c_str(), nullptr);
  if (r == nullptr) return "";
  std::string out(r);
  ::free(r);
  return out;
}

}  // namespace

std::map<std::string, std::string> SubPathExprEnv(const api::Pod& pod,
                                                  const api::Container& container) {
  std::map<std::string, std::string> env;
  for (const api::EnvVar& var : container.env) {
    if (!var.value.empty()) {
      env[var.name] = Expand(var.value, [&](const std::string& n) {
        auto it = env.find(n);
        return it == env.end() ? absl::StrCat("$(", n, ")") : it->second;
      });
      continue;
    }
    if (var.value_from.has_value()) {
      if (var.value_from->field_ref.has_value()) {
        if (std::optional<std::string> v =
                FieldRefValue(pod, var.value_from->field_ref->field_path)) {
          env[var.name] = *v;
        }
      }
      continue;  // other sources are not visible here
    }
    env[var.name] = "";
  }
  return env;
}

absl::StatusOr<std::string> ExpandSubPathExpr(const std::string& expr,
                                              const std::map<std::string, std::string>& env) {
  std::set<std::string> missing;
  std::string out = Expand(expr, [&](const std::string& n) -> std::string {
    auto it = env.find(n);
    if (it == env.end() || it->second.empty()) {
      missing.insert(n);
      return "";
    }
    return it->second;
  });
  if (!missing.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("missing value for ", absl::StrJoin(missing, ", ")));
  }
  return out;
}

absl::StatusOr<std::string> PrepareSubPath(const std::string& volume_path,
                                           const std::string& sub_path,
                                           const std::string& mount_name,
                                           const std::string& container_name) {
  if (!sub_path.empty() && sub_path[0] == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("error SubPath `", sub_path, "` must not be an absolute path"));
  }
  for (absl::string_view part : absl::StrSplit(AV(sub_path), '/')) {
    if (part == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat("unable to provision SubPath `", sub_path, "`: must not contain '..'"));
    }
  }
  const std::string host_path = (fs::path(volume_path) / sub_path).lexically_normal().string();
  const std::string prepare_error =
      absl::StrCat("failed to prepare subPath for volumeMount ", log::Quote(mount_name),
                   " of container ", log::Quote(container_name));
  const std::string base = RealPath(volume_path);
  if (base.empty()) {
    KLOG_ERROR(absl::NotFoundError(absl::StrCat("volume path ", volume_path, " does not exist")),
               "Failed to prepare subPath for volumeMount of the container", "containerName",
               container_name, "volumeMountName", mount_name);
    return absl::InternalError(prepare_error);
  }
  struct stat st;
  if (::lstat(host_path.c_str(), &st) != 0) {
    // Created one element at a time with the volume's mode, never following a symlink out.
    struct stat vst;
    ::stat(base.c_str(), &vst);
    const mode_t perm = vst.st_mode & 07777;
    fs::path cur = base;
    for (const fs::path& part : fs::path(sub_path).lexically_normal()) {
      if (part.empty() || part == ".") continue;
      cur /= part;
      struct stat pst;
      if (::lstat(cur.c_str(), &pst) == 0) {
        const std::string resolved = RealPath(cur.string());
        if (resolved.empty() || !Within(resolved, base)) {
          KLOG_ERROR(absl::PermissionDeniedError(
                         absl::StrCat(cur.string(), " resolves outside of ", base)),
                     "Failed to create subPath directory for volumeMount of the container",
                     "containerName", container_name, "volumeMountName", mount_name);
          return absl::InternalError(
              absl::StrCat("failed to create subPath directory for volumeMount ",
                           log::Quote(mount_name), " of container ", log::Quote(container_name)));
        }
        cur = resolved;
        continue;
      }
      if (::mkdir(cur.c_str(), perm) != 0 && errno != EEXIST) {
        const int err = errno;
        KLOG_ERROR(absl::InternalError(absl::StrCat("mkdir ", cur.string(), ": ", strerror(err))),
                   "Failed to create subPath directory for volumeMount of the container",
                   "containerName", container_name, "volumeMountName", mount_name);
        return absl::InternalError(
            absl::StrCat("failed to create subPath directory for volumeMount ",
                         log::Quote(mount_name), " of container ", log::Quote(container_name)));
      }
      ::chmod(cur.c_str(), perm);
    }
  }
  const std::string resolved = RealPath(host_path);
  if (resolved.empty() || !Within(resolved, base)) {
    KLOG_ERROR(absl::PermissionDeniedError(absl::StrCat(host_path, " resolves outside of ", base)),
               "Failed to prepare subPath for volumeMount of the container", "containerName",
               container_name, "volumeMountName", mount_name);
    return absl::InternalError(prepare_error);
  }
  return host_path;
}

absl::StatusOr<std::vector<v1::Mount>> MakeContainerMounts(const api::Pod& pod,
                                                           const api::Container& container,
                                                           const VolumeLookup& lookup) {
  const bool privileged = container.security_context.has_value() &&
                          container.security_context->privileged.value_or(false);
  std::optional<std::map<std::string, std::string>> env;  // built on first subPathExpr
  std::vector<v1::Mount> mounts;
  for (const api::VolumeMount& vm : container.volume_mounts) {
    std::optional<MountableVolume> vol = lookup(vm.name);
    if (!vol.has_value()) {
      KLOG_ERROR(absl::OkStatus(),
                 "Mount cannot be satisfied for the container, because the volume is missing or "
                 "the volume mounter (vol.Mounter) is nil",
                 "containerName", container.name, "ok", false, "volumeMounter", vm.name);
      return absl::NotFoundError(absl::StrCat("cannot find volume ", log::Quote(vm.name),
                                              " to mount into container ",
                                              log::Quote(container.name)));
    }
    std::string sub_path = vm.sub_path;
    if (!vm.sub_path_expr.empty()) {
      if (!env.has_value()) env = SubPathExprEnv(pod, container);
      absl::StatusOr<std::string> expanded = ExpandSubPathExpr(vm.sub_path_expr, *env);
      if (!expanded.ok()) return expanded.status();
      sub_path = *std::move(expanded);
    }
    std::string host_path = vol->host_path;
    if (!sub_path.empty()) {
      absl::StatusOr<std::string> p =
          PrepareSubPath(vol->host_path, sub_path, vm.name, container.name);
      if (!p.ok()) return p.status();
      host_path = *std::move(p);
    }
    absl::StatusOr<v1::MountPropagation> propagation =
        TranslatePropagation(vm.mount_propagation, privileged);
    if (!propagation.ok()) return propagation.status();
    v1::Mount m;
    m.set_container_path(vm.mount_path);
    m.set_host_path(host_path);
    m.set_readonly(vm.read_only || vol->read_only);
    m.set_selinux_relabel(false);
    m.set_propagation(*propagation);
    mounts.push_back(std::move(m));
  }
  return mounts;
}

}  // namespace kubelet::volume
