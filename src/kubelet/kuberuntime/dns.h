// Pod DNS and hostname, ported from upstream pkg/kubelet/network/dns (Configurer.GetPodDNS) and
// the kubelet's GeneratePodHostNameAndDomain / util.GetNodenameForKernel.
//
// DNS policy:
//   None                      empty base; only spec.dnsConfig applies.
//   ClusterFirst (pod net)    nameservers = clusterDNS, searches = <ns>.svc.<domain> svc.<domain>
//   ClusterFirstWithHostNet   <domain> + the host's searches, options ndots:5. Without clusterDNS:
//                             a warning and the Default policy.
//   Default, ClusterFirst     the host's resolv.conf (resolvConf); resolvConf "" means
//   with host network         nameserver 127.0.0.1 (::1 per IPv6 node IP) and search ".".
// spec.dnsConfig is merged last (duplicates dropped; options by name, pod's win). Limits: 3
// nameservers, 32 search paths / 2048 characters, search paths longer than 253 are dropped.
//
// Pure functions except that GetPodDNS reads the resolv.conf file. Thread-safe.
#ifndef KUBELET_KUBELET_KUBERUNTIME_DNS_H_
#define KUBELET_KUBELET_KUBERUNTIME_DNS_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/pod.h"
#include "cri/proto/api.pb.h"

namespace kubelet::kuberuntime {

struct DnsSettings {
  std::vector<std::string> cluster_dns;
  std::string cluster_domain;
  std::string resolv_conf;  // path; "" = no host DNS
  std::vector<std::string> node_ips;
  // Called when a ClusterFirst pod falls back to the host's DNS for want of clusterDNS, with
  // upstream's message (its MissingClusterDNS events, on the Node and on the pod). May be unset.
  std::function<void(const api::Pod&, const std::string& message)> missing_cluster_dns;
};

struct ResolvConf {
  std::vector<std::string> nameservers;
  std::vector<std::string> searches;
  std::vector<std::string> options;
};

// parseResolvConf: nameservers accumulate, the last "search" line wins (trailing dots dropped,
// "." ignored), "options" merge by name. Fails on a "nameserver" line without an address.
absl::StatusOr<ResolvConf> ParseResolvConf(std::string_view content);

absl::StatusOr<runtime::v1::DNSConfig> GetPodDNS(const api::Pod& pod, const DnsSettings& settings);

struct PodHostname {
  std::string hostname;  // spec.hostname or the pod name, at most 63 characters
  std::string domain;    // "<subdomain>.<ns>.svc.<clusterDomain>" or ""
};

// Fails when spec.hostname / spec.subdomain are not DNS labels.
absl::StatusOr<PodHostname> GeneratePodHostNameAndDomain(const api::Pod& pod,
                                                         std::string_view cluster_domain);

// The kernel nodename: the FQDN "<hostname>.<domain>" when setHostnameAsFQDN (at most 64
// characters, else an error), otherwise the hostname.
absl::StatusOr<std::string> GetNodenameForKernel(const std::string& hostname,
                                                 const std::string& domain,
                                                 std::optional<bool> set_hostname_as_fqdn);

}  // namespace kubelet::kuberuntime

#endif  // KUBELET_KUBELET_KUBERUNTIME_DNS_H_
