#include "kubelet/volume/container_mounts.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <set>

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

absl::StatusOr<std::string> PrepareSubPath(const SubPath& sp) {
  if (!sp.sub_path.empty() && sp.sub_path[0] == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("error SubPath `", sp.sub_path, "` must not be an absolute path"));
  }
  for (absl::string_view part : absl::StrSplit(AV(sp.sub_path), '/')) {
    if (part == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat("unable to provision SubPath `", sp.sub_path, "`: must not contain '..'"));
    }
  }
  // Details name host paths: they go to the log, the pod gets upstream's generic message.
  const std::string host_path =
      (fs::path(sp.volume_path) / sp.sub_path).lexically_normal().string();
  struct stat st;
  if (::stat(host_path.c_str(), &st) != 0) {
    // Created before the runtime sees it, with the volume directory's mode (so a non-root
    // container can use a subPath of a shared volume), never following a symlink out.
    absl::Status made = absl::OkStatus();
    const std::string base = RealPath(sp.volume_path);
    struct stat vst;
    if (base.empty() || ::stat(base.c_str(), &vst) != 0) {
      made = absl::NotFoundError(absl::StrCat("volume path ", sp.volume_path, " does not exist"));
    } else {
      made = SafeMakeDir(base, sp.sub_path, vst.st_mode & 07777);
    }
    if (!made.ok()) {
      KLOG_ERROR(made, "Failed to create subPath directory for volumeMount of the container",
                 "containerName", sp.container_name, "volumeMountName", sp.volume_name);
      return absl::InternalError(absl::StrCat("failed to create subPath directory for volumeMount ",
                                              log::Quote(sp.volume_name), " of container ",
                                              log::Quote(sp.container_name)));
    }
  }
  absl::StatusOr<std::string> target = BindSubPath(sp);
  if (!target.ok()) {
    KLOG_ERROR(target.status(), "Failed to prepare subPath for volumeMount of the container",
               "containerName", sp.container_name, "volumeMountName", sp.volume_name);
    return absl::InternalError(absl::StrCat("failed to prepare subPath for volumeMount ",
                                            log::Quote(sp.volume_name), " of container ",
                                            log::Quote(sp.container_name)));
  }
  return target;
}

absl::StatusOr<std::vector<v1::Mount>> MakeContainerMounts(const api::Pod& pod,
                                                           const api::Container& container,
                                                           const VolumeLookup& lookup,
                                                           const std::string& pod_dir) {
  const bool privileged = container.security_context.has_value() &&
                          container.security_context->privileged.value_or(false);
  std::optional<std::map<std::string, std::string>> env;  // built on first subPathExpr
  std::vector<v1::Mount> mounts;
  for (size_t i = 0; i < container.volume_mounts.size(); ++i) {
    const api::VolumeMount& vm = container.volume_mounts[i];
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
      absl::StatusOr<std::string> p = PrepareSubPath(SubPath{
          .volume_path = vol->host_path,
          .sub_path = sub_path,
          .pod_dir = pod_dir,
          .volume_name = vm.name,
          .container_name = container.name,
          .mount_index = static_cast<int>(i),
      });
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
