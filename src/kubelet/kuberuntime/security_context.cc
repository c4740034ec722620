#include "kubelet/kuberuntime/security_context.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "kubelet/kuberuntime/helpers.h"

namespace kubelet::kuberuntime {
namespace {

namespace v1 = ::runtime::v1;

constexpr char kAppArmorAnnotationPrefix[] = "container.apparmor.security.beta.kubernetes.io/";
constexpr char kAppArmorRuntimeDefault[] = "runtime/default";
constexpr char kAppArmorUnconfined[] = "unconfined";
constexpr char kAppArmorLocalhostPrefix[] = "localhost/";

// These must be kept in sync with moby's oci/defaults.go (upstream securitycontext/util.go).
const char* const kDefaultMaskedPaths[] = {
    "/proc/asound",        "/proc/acpi",       "/proc/kcore",       "/proc/keys",
    "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
    "/proc/scsi",          "/sys/firmware",
};
const char* const kDefaultReadonlyPaths[] = {
    "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
};

v1::SELinuxOption ToSELinux(const api::SELinuxOptions& o) {
  v1::SELinuxOption out;
  out.set_user(o.user);
  out.set_role(o.role);
  out.set_type(o.type);
  out.set_level(o.level);
  return out;
}

absl::StatusOr<v1::SecurityProfile> FieldSeccompProfile(const api::SeccompProfile& p,
                                                        const SecurityOptions& opts) {
  v1::SecurityProfile out;
  if (p.type == "RuntimeDefault") {
    out.set_profile_type(v1::SecurityProfile::RuntimeDefault);
    return out;
  }
  if (p.type == "Localhost") {
    if (!p.localhost_profile.has_value() || p.localhost_profile->empty()) {
      return absl::InvalidArgumentError(
          "localhostProfile must be set if seccompProfile type is Localhost.");
    }
    out.set_profile_type(v1::SecurityProfile::Localhost);
    out.set_localhost_ref(absl::StrCat(opts.seccomp_profile_root, "/", *p.localhost_profile));
    return out;
  }
  out.set_profile_type(v1::SecurityProfile::Unconfined);
  return out;
}

// getAppArmorProfile: the structured profile and the deprecated string form ("" = none).
absl::Status ApplyAppArmor(const api::Pod& pod, const api::Container& container,
                           v1::LinuxContainerSecurityContext* sc) {
  auto it = pod.metadata.annotations.find(absl::StrCat(kAppArmorAnnotationPrefix, container.name));
  if (it == pod.metadata.annotations.end() || it->second.empty()) return absl::OkStatus();
  const std::string& profile = it->second;
  if (profile == kAppArmorRuntimeDefault) {
    sc->mutable_apparmor()->set_profile_type(v1::SecurityProfile::RuntimeDefault);
  } else if (profile == kAppArmorUnconfined) {
    sc->mutable_apparmor()->set_profile_type(v1::SecurityProfile::Unconfined);
  } else if (absl::StartsWith(profile, kAppArmorLocalhostPrefix)) {
    const std::string name = profile.substr(sizeof(kAppArmorLocalhostPrefix) - 1);
    if (name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("apparmor profile is not set correctly for container ", container.name));
    }
    sc->mutable_apparmor()->set_profile_type(v1::SecurityProfile::Localhost);
    sc->mutable_apparmor()->set_localhost_ref(name);
  }
  // The deprecated string form, still read by older runtimes (containerd 1.6).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  sc->set_apparmor_profile(profile);
#pragma GCC diagnostic pop
  return absl::OkStatus();
}

}  // namespace

v1::NamespaceMode NetworkNamespaceForPod(const api::Pod& pod) {
  return pod.spec.host_network ? v1::NODE : v1::POD;
}

v1::NamespaceMode PidNamespaceForPod(const api::Pod& pod) {
  if (pod.spec.host_pid) return v1::NODE;
  if (pod.spec.share_process_namespace.value_or(false)) return v1::POD;
  return v1::CONTAINER;
}

v1::NamespaceMode IpcNamespaceForPod(const api::Pod& pod) {
  return pod.spec.host_ipc ? v1::NODE : v1::POD;
}

v1::NamespaceOption NamespacesForPod(const api::Pod& pod) {
  v1::NamespaceOption ns;
  ns.set_network(NetworkNamespaceForPod(pod));
  ns.set_pid(PidNamespaceForPod(pod));
  ns.set_ipc(IpcNamespaceForPod(pod));
  return ns;
}

bool HasPrivilegedContainer(const api::Pod& pod) {
  auto privileged = [](const api::Container& c) {
    return c.security_context.has_value() && c.security_context->privileged.value_or(false);
  };
  for (const api::Container& c : pod.spec.init_containers) {
    if (privileged(c)) return true;
  }
  for (const api::Container& c : pod.spec.containers) {
    if (privileged(c)) return true;
  }
  for (const api::EphemeralContainer& c : pod.spec.ephemeral_containers) {
    if (privileged(c.common)) return true;
  }
  return false;
}

api::SecurityContext DetermineEffectiveSecurityContext(const api::Pod& pod,
                                                       const api::Container& container) {
  api::SecurityContext sc;
  if (pod.spec.security_context.has_value()) {
    const api::PodSecurityContext& psc = *pod.spec.security_context;
    sc.se_linux_options = psc.se_linux_options;
    sc.windows_options = psc.windows_options;
    sc.run_as_user = psc.run_as_user;
    sc.run_as_group = psc.run_as_group;
    sc.run_as_non_root = psc.run_as_non_root;
  }
  if (!container.security_context.has_value()) return sc;
  const api::SecurityContext& c = *container.security_context;
  if (c.se_linux_options.has_value()) sc.se_linux_options = c.se_linux_options;
  if (c.windows_options.has_value()) sc.windows_options = c.windows_options;
  if (c.capabilities.has_value()) sc.capabilities = c.capabilities;
  if (c.privileged.has_value()) sc.privileged = c.privileged;
  if (c.run_as_user.has_value()) sc.run_as_user = c.run_as_user;
  if (c.run_as_group.has_value()) sc.run_as_group = c.run_as_group;
  if (c.run_as_non_root.has_value()) sc.run_as_non_root = c.run_as_non_root;
  if (c.read_only_root_filesystem.has_value()) {
    sc.read_only_root_filesystem = c.read_only_root_filesystem;
  }
  if (c.allow_privilege_escalation.has_value()) {
    sc.allow_privilege_escalation = c.allow_privilege_escalation;
  }
  if (c.proc_mount.has_value()) sc.proc_mount = c.proc_mount;
  return sc;
}

std::vector<std::string> MaskedPathsFor(const std::optional<std::string>& proc_mount) {
  if (proc_mount.has_value() && *proc_mount == "Unmasked") return {};
  return {std::begin(kDefaultMaskedPaths), std::end(kDefaultMaskedPaths)};
}

std::vector<std::string> ReadonlyPathsFor(const std::optional<std::string>& proc_mount) {
  if (proc_mount.has_value() && *proc_mount == "Unmasked") return {};
  return {std::begin(kDefaultReadonlyPaths), std::end(kDefaultReadonlyPaths)};
}

absl::StatusOr<v1::SecurityProfile> GetSeccompProfile(const api::Pod& pod,
                                                      const api::Container& container,
                                                      const SecurityOptions& opts) {
  if (container.security_context.has_value() &&
      container.security_context->seccomp_profile.has_value()) {
    return FieldSeccompProfile(*container.security_context->seccomp_profile, opts);
  }
  if (pod.spec.security_context.has_value() &&
      pod.spec.security_context->seccomp_profile.has_value()) {
    return FieldSeccompProfile(*pod.spec.security_context->seccomp_profile, opts);
  }
  v1::SecurityProfile out;
  out.set_profile_type(opts.seccomp_default ? v1::SecurityProfile::RuntimeDefault
                                            : v1::SecurityProfile::Unconfined);
  return out;
}

absl::StatusOr<v1::LinuxContainerSecurityContext> GenerateContainerSecurityContext(
    const api::Pod& pod, const api::Container& container, std::optional<int64_t> image_uid,
    const std::string& image_user, const SecurityOptions& opts) {
  const api::SecurityContext eff = DetermineEffectiveSecurityContext(pod, container);
  v1::LinuxContainerSecurityContext sc;
  if (eff.capabilities.has_value()) {
    v1::Capability* caps = sc.mutable_capabilities();
    for (const std::string& c : eff.capabilities->add) caps->add_add_capabilities(c);
    for (const std::string& c : eff.capabilities->drop) caps->add_drop_capabilities(c);
  }
  if (eff.se_linux_options.has_value()) {
    *sc.mutable_selinux_options() = ToSELinux(*eff.se_linux_options);
  }
  if (eff.run_as_user.has_value()) sc.mutable_run_as_user()->set_value(*eff.run_as_user);
  if (eff.run_as_group.has_value()) sc.mutable_run_as_group()->set_value(*eff.run_as_group);
  sc.set_privileged(eff.privileged.value_or(false));
  sc.set_readonly_rootfs(eff.read_only_root_filesystem.value_or(false));

  absl::StatusOr<v1::SecurityProfile> seccomp = GetSeccompProfile(pod, container, opts);
  if (!seccomp.ok()) return seccomp.status();
  *sc.mutable_seccomp() = *std::move(seccomp);
  if (absl::Status s = ApplyAppArmor(pod, container, &sc); !s.ok()) return s;

  if (!sc.has_run_as_user()) {
    if (image_uid.has_value()) sc.mutable_run_as_user()->set_value(*image_uid);
    sc.set_run_as_username(image_user);
  }
  *sc.mutable_namespace_options() = NamespacesForPod(pod);
  if (pod.spec.security_context.has_value()) {
    const api::PodSecurityContext& psc = *pod.spec.security_context;
    if (psc.fs_group.has_value()) sc.add_supplemental_groups(*psc.fs_group);
    for (int64_t g : psc.supplemental_groups) sc.add_supplemental_groups(g);
  }
  sc.set_no_new_privs(eff.allow_privilege_escalation.has_value() &&
                      !*eff.allow_privilege_escalation);
  for (const std::string& p : MaskedPathsFor(eff.proc_mount)) sc.add_masked_paths(p);
  for (const std::string& p : ReadonlyPathsFor(eff.proc_mount)) sc.add_readonly_paths(p);
  return sc;
}

absl::Status VerifyRunAsNonRoot(const api::Pod& pod, const api::Container& container,
                                std::optional<int64_t> image_uid, const std::string& image_user) {
  const api::SecurityContext eff = DetermineEffectiveSecurityContext(pod, container);
  if (!eff.run_as_non_root.value_or(false)) return absl::OkStatus();
  if (eff.run_as_user.has_value()) {
    if (*eff.run_as_user == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("container's runAsUser breaks non-root policy (pod: \"", FormatPod(pod),
                       "\", container: ", container.name, ")"));
    }
    return absl::OkStatus();
  }
  if (image_uid.has_value() && *image_uid == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("container has runAsNonRoot and image will run as root (pod: \"",
                     FormatPod(pod), "\", container: ", container.name, ")"));
  }
  if (!image_uid.has_value() && !image_user.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("container has runAsNonRoot and image has non-numeric user (", image_user,
                     "), cannot verify user is non-root (pod: \"", FormatPod(pod),
                     "\", container: ", container.name, ")"));
  }
  return absl::OkStatus();
}

}  // namespace kubelet::kuberuntime
