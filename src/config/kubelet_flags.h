// The kubelet's flag-only settings (upstream cmd/kubelet/app/options.KubeletFlags, v1.28, Linux).
//
// These are the per-node settings that have no KubeletConfiguration field: --kubeconfig,
// --config, --root-dir, --node-labels, ... AddKubeletFlags registers them on a FlagSet with the
// upstream names, defaults and deprecation notices (deprecated KubeletFlags stay visible in
// --help, as upstream un-hides them). Windows-only flags (--windows-service,
// --windows-priorityclass) are not registered, as on a Linux build.
//
// Flags that upstream removed but real deployments still pass (--container-runtime,
// --network-plugin, --cni-*, --docker-endpoint, ...) are accepted with a deprecation warning, have
// no effect, and are hidden from --help. --container-runtime only accepts "remote".
//
// ValidateKubeletFlags applies upstream's checks (node labels; container runtime kind).
// Plain data; thread-compatible.
#ifndef KUBELET_CONFIG_KUBELET_FLAGS_H_
#define KUBELET_CONFIG_KUBELET_FLAGS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "config/flagset.h"

namespace kubelet::config {

inline constexpr char kDefaultRootDir[] = "/var/lib/kubelet";
inline constexpr char kDefaultCertDir[] = "/var/lib/kubelet/pki";
// --pod-infra-container-image default of v1.28.
inline constexpr char kDefaultPodSandboxImage[] = "registry.k8s.io/pause:3.9";

struct KubeletFlags {
  std::string kube_config;                         // --kubeconfig
  std::string bootstrap_kubeconfig;                // --bootstrap-kubeconfig
  std::string kubelet_config_file;                 // --config
  std::string kubelet_dropin_config_dir;           // --config-dir
  std::string hostname_override;                   // --hostname-override
  std::string node_ip;                             // --node-ip (comma-separated for dual-stack)
  std::string cert_directory = kDefaultCertDir;    // --cert-dir
  std::string cloud_provider;                      // --cloud-provider (deprecated)
  std::string cloud_config_file;                   // --cloud-config (deprecated)
  std::string root_directory = kDefaultRootDir;    // --root-dir
  bool seccomp_default = false;                    // --seccomp-default
  std::map<std::string, std::string> node_labels;  // --node-labels

  // Container runtime options (upstream config.ContainerRuntimeOptions).
  std::string runtime_cgroups;                              // --runtime-cgroups
  std::string pod_sandbox_image = kDefaultPodSandboxImage;  // --pod-infra-container-image
  std::string image_credential_provider_config_file;        // --image-credential-provider-config
  std::string image_credential_provider_bin_dir;            // --image-credential-provider-bin-dir

  // Experimental.
  std::string lock_file_path;            // --lock-file
  bool exit_on_lock_contention = false;  // --exit-on-lock-contention

  // Deprecated upstream, still honoured.
  absl::Duration minimum_gc_age = absl::ZeroDuration();  // --minimum-container-ttl-duration
  int32_t max_per_pod_container_count = 1;               // --maximum-dead-containers-per-container
  int32_t max_container_count = -1;                      // --maximum-dead-containers
  bool register_schedulable = true;                      // --register-schedulable
  bool keep_terminated_pod_volumes = false;              // --keep-terminated-pod-volumes
  std::string experimental_mounter_path;                 // --experimental-mounter-path
  bool experimental_node_allocatable_ignore_eviction_threshold =
      false;  // --experimental-allocatable-ignore-eviction

  // Removed upstream; accepted for compatibility, no effect. Only "remote" is valid.
  std::string container_runtime = "remote";  // --container-runtime
};

// Registers every KubeletFlags flag (and the accepted removed flags) bound to `flags`.
// `flags` must outlive `fs`; its current values are shown as the --help defaults.
void AddKubeletFlags(FlagSet& fs, KubeletFlags* flags);

// Upstream ValidateKubeletFlags: node labels in the kubernetes.io / k8s.io namespaces must be
// kubelet-settable, keys and values must be valid label syntax, and the container runtime must be
// "remote". Messages match upstream, e.g.
//   unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [foo.k8s.io/bar]
//   --node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (...) or be
//   in the specifically allowed set (...)
absl::Status ValidateKubeletFlags(const KubeletFlags& flags);

// Label keys a kubelet may set on its own Node (k8s.io/kubelet/pkg/apis), sorted.
const std::vector<std::string>& KubeletLabels();
// Label namespaces (and their subdomains) a kubelet may set on its own Node, sorted.
const std::vector<std::string>& KubeletLabelNamespaces();
bool IsKubeletLabel(std::string_view key);
// The node role labels OpenShift's kubelet lets --node-labels set beyond upstream v1.28
// (node-role.kubernetes.io/ master, worker, control-plane, etcd): accepted with a warning.
bool IsAllowedRoleLabel(std::string_view key);

}  // namespace kubelet::config

#endif  // KUBELET_CONFIG_KUBELET_FLAGS_H_
