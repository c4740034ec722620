#include "kubelet/kuberuntime/sandbox_config.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "kubelet/kuberuntime/helpers.h"
#include "kubelet/kuberuntime/labels.h"
#include "kubelet/kuberuntime/security_context.h"

namespace kubelet::kuberuntime {
namespace {

namespace v1 = ::runtime::v1;

v1::Protocol ToRuntimeProtocol(const std::string& protocol) {
  if (protocol == api::kProtocolTCP) return v1::TCP;
  if (protocol == api::kProtocolUDP) return v1::UDP;
  if (protocol == api::kProtocolSCTP) return v1::SCTP;
  KLOG_WARNING("Unknown protocol, defaulting to TCP", "protocol", protocol);
  return v1::TCP;
}

}  // namespace

std::vector<v1::PortMapping> MakePortMappings(const api::Container& container) {
  std::vector<v1::PortMapping> out;
  std::set<std::string> names;
  for (const api::ContainerPort& p : container.ports) {
    std::string family = "any";
    if (!p.host_ip.empty()) family = p.host_ip.find(':') != std::string::npos ? "v6" : "v4";
    std::string name = p.name;
    if (name.empty()) {
      name = absl::StrCat(family, "-", p.protocol, "-", p.host_ip, ":", p.container_port, ":",
                          p.host_port);
    }
    if (!names.insert(name).second) {
      KLOG_INFO("Port name conflicted, it is defined more than once", "portName", name);
      continue;
    }
    v1::PortMapping& pm = out.emplace_back();
    pm.set_host_ip(p.host_ip);
    pm.set_host_port(p.host_port);
    pm.set_container_port(p.container_port);
    pm.set_protocol(ToRuntimeProtocol(p.protocol));
  }
  return out;
}

absl::StatusOr<v1::PodSandboxConfig> GeneratePodSandboxConfig(const api::Pod& pod, uint32_t attempt,
                                                              const SandboxSettings& settings) {
  v1::PodSandboxConfig config;
  v1::PodSandboxMetadata* md = config.mutable_metadata();
  md->set_name(pod.metadata.name);
  md->set_namespace_(pod.metadata.namespace_);
  md->set_uid(pod.metadata.uid);
  md->set_attempt(attempt);
  for (const auto& [k, v] : NewPodLabels(pod)) (*config.mutable_labels())[k] = v;
  for (const auto& [k, v] : NewPodAnnotations(pod)) (*config.mutable_annotations())[k] = v;

  absl::StatusOr<v1::DNSConfig> dns = GetPodDNS(pod, settings.dns);
  if (!dns.ok()) return dns.status();
  *config.mutable_dns_config() = *std::move(dns);

  if (!pod.spec.host_network) {
    absl::StatusOr<PodHostname> hn = GeneratePodHostNameAndDomain(pod, settings.dns.cluster_domain);
    if (!hn.ok()) return hn.status();
    absl::StatusOr<std::string> nodename =
        GetNodenameForKernel(hn->hostname, hn->domain, pod.spec.set_hostname_as_fqdn);
    if (!nodename.ok()) return nodename.status();
    config.set_hostname(*nodename);
  }

  config.set_log_directory(BuildPodLogsDirectory(settings.pod_logs_dir, pod.metadata.namespace_,
                                                 pod.metadata.name, pod.metadata.uid));

  for (const api::Container& c : pod.spec.containers) {
    for (v1::PortMapping& pm : MakePortMappings(c)) *config.add_port_mappings() = std::move(pm);
  }

  v1::LinuxPodSandboxConfig* lc = config.mutable_linux();
  lc->set_cgroup_parent(settings.cgroup_parent);
  v1::LinuxSandboxSecurityContext* sc = lc->mutable_security_context();
  sc->set_privileged(HasPrivilegedContainer(pod));
  // The sandbox always runs RuntimeDefault so least-privileged pod profiles work (#84623).
  sc->mutable_seccomp()->set_profile_type(v1::SecurityProfile::RuntimeDefault);
  *sc->mutable_namespace_options() = NamespacesForPod(pod);
  if (pod.spec.security_context.has_value()) {
    const api::PodSecurityContext& psc = *pod.spec.security_context;
    for (const api::Sysctl& s : psc.sysctls) {
      (*lc->mutable_sysctls())[ConvertSysctlVariableToDotsSeparator(s.name)] = s.value;
    }
    if (psc.run_as_user.has_value()) sc->mutable_run_as_user()->set_value(*psc.run_as_user);
    if (psc.run_as_group.has_value()) sc->mutable_run_as_group()->set_value(*psc.run_as_group);
    if (psc.fs_group.has_value()) sc->add_supplemental_groups(*psc.fs_group);
    for (int64_t g : psc.supplemental_groups) sc->add_supplemental_groups(g);
    if (psc.se_linux_options.has_value()) {
      v1::SELinuxOption* se = sc->mutable_selinux_options();
      se->set_user(psc.se_linux_options->user);
      se->set_role(psc.se_linux_options->role);
      se->set_type(psc.se_linux_options->type);
      se->set_level(psc.se_linux_options->level);
    }
  }
  ApplySandboxResources(pod, settings.resources, &config);
  return config;
}

}  // namespace kubelet::kuberuntime
