// Linux security settings of sandboxes and containers, ported from upstream
// pkg/kubelet/kuberuntime/security_context.go, helpers.go (seccomp, AppArmor),
// kuberuntime/util (namespace modes) and pkg/securitycontext (effective context, /proc masks).
//
//   namespaces: network NODE for hostNetwork else POD; pid NODE for hostPID, POD with
//               shareProcessNamespace, else CONTAINER; ipc NODE for hostIPC else POD.
//   effective:  the pod's runAsUser/runAsGroup/runAsNonRoot/seLinuxOptions overridden by the
//               container's fields; capabilities, privileged, readOnlyRootFilesystem,
//               allowPrivilegeEscalation and procMount come from the container only.
//   run_as_user falls back to the image's uid (or run_as_username to its user name).
//   supplemental groups: fsGroup, then supplementalGroups.
//   no_new_privs only when allowPrivilegeEscalation is explicitly false (upstream kubelet
//   behaviour; the API-level default is applied by admission, not here).
//   masked/readonly /proc paths: Docker's defaults unless procMount is Unmasked.
//   capabilities: passed verbatim (the runtime adds the CAP_ prefix).
//   seccomp: container field, else pod field, else RuntimeDefault when seccompDefault, else
//            Unconfined; Localhost profiles resolve under <root_dir>/seccomp.
//   AppArmor: container.apparmor.security.beta.kubernetes.io/<container> annotation.
// Pure functions; thread-safe.
#ifndef KUBELET_KUBELET_KUBERUNTIME_SECURITY_CONTEXT_H_
#define KUBELET_KUBELET_KUBERUNTIME_SECURITY_CONTEXT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/pod.h"
#include "cri/proto/api.pb.h"

namespace kubelet::kuberuntime {

runtime::v1::NamespaceMode NetworkNamespaceForPod(const api::Pod& pod);
runtime::v1::NamespaceMode PidNamespaceForPod(const api::Pod& pod);
runtime::v1::NamespaceMode IpcNamespaceForPod(const api::Pod& pod);
runtime::v1::NamespaceOption NamespacesForPod(const api::Pod& pod);

// True when any (init, regular, ephemeral) container asks for privileged.
bool HasPrivilegedContainer(const api::Pod& pod);

// securitycontext.DetermineEffectiveSecurityContext.
api::SecurityContext DetermineEffectiveSecurityContext(const api::Pod& pod,
                                                       const api::Container& container);

// The default /proc paths the runtime masks / mounts read-only (empty for procMount Unmasked).
std::vector<std::string> MaskedPathsFor(const std::optional<std::string>& proc_mount);
std::vector<std::string> ReadonlyPathsFor(const std::optional<std::string>& proc_mount);

struct SecurityOptions {
  std::string seccomp_profile_root;  // <root_dir>/seccomp
  bool seccomp_default = false;
};

absl::StatusOr<runtime::v1::SecurityProfile> GetSeccompProfile(const api::Pod& pod,
                                                               const api::Container& container,
                                                               const SecurityOptions& opts);

// The container's CRI security context. `image_uid` / `image_user` describe the image's user
// (uid set, or a non-numeric name).
absl::StatusOr<runtime::v1::LinuxContainerSecurityContext> GenerateContainerSecurityContext(
    const api::Pod& pod, const api::Container& container, std::optional<int64_t> image_uid,
    const std::string& image_user, const SecurityOptions& opts);

// verifyRunAsNonRoot: with runAsNonRoot true the effective user must be a non-zero uid (from the
// security context or the image); a non-numeric image user cannot be verified.
absl::Status VerifyRunAsNonRoot(const api::Pod& pod, const api::Container& container,
                                std::optional<int64_t> image_uid, const std::string& image_user);

}  // namespace kubelet::kuberuntime

#endif  // KUBELET_KUBELET_KUBERUNTIME_SECURITY_CONTEXT_H_
