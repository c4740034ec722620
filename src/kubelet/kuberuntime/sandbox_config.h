// PodSandboxConfig generation, ported from upstream kuberuntime_sandbox.go
// (generatePodSandboxConfig, generatePodSandboxLinuxConfig) and kubecontainer.MakePortMappings.
//
//   metadata      {name, namespace, uid, attempt}
//   hostname      spec.hostname or the pod name (<= 63 chars), the FQDN with setHostnameAsFQDN;
//                 empty for host-network pods (the runtime uses the node's)
//   log_directory <pod_logs_dir>/<ns>_<name>_<uid>
//   dns_config    see dns.h
//   port_mappings every declared port of the regular containers (the runtime maps those with a
//                 hostPort), duplicates (same name, or same family/protocol/hostIP/ports) dropped
//   labels        the pod's labels + io.kubernetes.pod.{name,namespace,uid}; annotations: the pod's
//   linux         cgroup_parent (hook), sysctls (slash form converted to dots), security context
//                 (namespaces, runAsUser/Group, fsGroup + supplementalGroups, SELinux,
//                 privileged if any container is, seccomp RuntimeDefault), resources and overhead.
// Pure apart from reading resolv.conf (DNS). Thread-safe.
#ifndef KUBELET_KUBELET_KUBERUNTIME_SANDBOX_CONFIG_H_
#define KUBELET_KUBELET_KUBERUNTIME_SANDBOX_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/pod.h"
#include "cri/proto/api.pb.h"
#include "kubelet/kuberuntime/dns.h"
#include "kubelet/kuberuntime/resources.h"

namespace kubelet::kuberuntime {

struct SandboxSettings {
  std::string pod_logs_dir = "/var/log/pods";
  std::string cgroup_parent;  // already resolved for the pod
  DnsSettings dns;
  ResourceSettings resources;
};

std::vector<runtime::v1::PortMapping> MakePortMappings(const api::Container& container);

absl::StatusOr<runtime::v1::PodSandboxConfig> GeneratePodSandboxConfig(
    const api::Pod& pod, uint32_t attempt, const SandboxSettings& settings);

}  // namespace kubelet::kuberuntime

#endif  // KUBELET_KUBELET_KUBERUNTIME_SANDBOX_CONFIG_H_
