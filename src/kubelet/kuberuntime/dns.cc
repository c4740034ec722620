#include "kubelet/kuberuntime/dns.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/pod_validation.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/kuberuntime/helpers.h"

namespace kubelet::kuberuntime {
namespace {

constexpr size_t kMaxDNSNameservers = 3;
constexpr size_t kMaxDNSSearchPaths = 32;
constexpr size_t kMaxDNSSearchListChars = 2048;
constexpr size_t kDNS1123SubdomainMaxLength = 253;
constexpr size_t kMaxResolvConfLength = 10 * 1 << 20;

enum class PodDNSType { kCluster, kHost, kNone };

std::vector<std::string> OmitDuplicates(const std::vector<std::string>& in) {
  std::set<std::string> seen;
  std::vector<std::string> out;
  for (const std::string& s : in) {
    if (seen.insert(s).second) out.push_back(s);
  }
  return out;
}

std::string OptionName(std::string_view option) {
  return std::string(option.substr(0, option.find(':')));
}

// Overrides options with the same name, keeping first-seen order.
void AppendOptions(std::vector<std::string>* options, const std::vector<std::string>& added) {
  for (const std::string& opt : added) {
    const std::string name = OptionName(opt);
    bool replaced = false;
    for (std::string& existing : *options) {
      if (OptionName(existing) == name) {
        existing = opt;
        replaced = true;
        break;
      }
    }
    if (!replaced) options->push_back(opt);
  }
}

bool IsIPv6(std::string_view ip) { return ip.find(':') != std::string_view::npos; }

PodDNSType GetPodDNSType(const api::Pod& pod) {
  const std::string& policy = pod.spec.dns_policy;
  if (policy == api::kDNSNone) return PodDNSType::kNone;
  if (policy == api::kDNSClusterFirstWithHostNet) return PodDNSType::kCluster;
  if (policy == api::kDNSClusterFirst) {
    return pod.spec.host_network ? PodDNSType::kHost : PodDNSType::kCluster;
  }
  if (policy == api::kDNSDefault) return PodDNSType::kHost;
  KLOG_WARNING("Failed to get DNS type for pod. Falling back to DNSClusterFirst policy.", "pod",
               FormatPod(pod), "dnsPolicy", policy);
  return PodDNSType::kCluster;
}

std::vector<std::string> FitSearches(std::vector<std::string> search, const api::Pod& pod) {
  bool exceeded = false;
  if (search.size() > kMaxDNSSearchPaths) {
    search.resize(kMaxDNSSearchPaths);
    exceeded = true;
  }
  std::vector<std::string> kept;
  for (std::string& s : search) {
    if (s.size() > kDNS1123SubdomainMaxLength) {
      exceeded = true;
      continue;
    }
    kept.push_back(std::move(s));
  }
  const size_t line_len = absl::StrJoin(kept, " ").size();
  if (line_len > kMaxDNSSearchListChars) {
    size_t cut_len = 0;
    size_t cut_num = 0;
    for (size_t i = kept.size(); i-- > 0;) {
      cut_len += kept[i].size() + 1;
      ++cut_num;
      if (line_len - cut_len <= kMaxDNSSearchListChars) break;
    }
    kept.resize(kept.size() - cut_num);
    exceeded = true;
  }
  if (exceeded) {
    KLOG_ERROR(absl::InvalidArgumentError(absl::StrCat(
                   "Search Line limits were exceeded, some search paths have been omitted, the "
                   "applied search line is: ",
                   absl::StrJoin(kept, " "))),
               "Search Line limits exceeded", "pod", FormatPod(pod));
  }
  return kept;
}

}  // namespace

absl::StatusOr<ResolvConf> ParseResolvConf(std::string_view content) {
  if (content.size() > kMaxResolvConfLength) {
    return absl::InvalidArgumentError("resolv.conf is too large");
  }
  ResolvConf rc;
  std::vector<std::string> errors;
  for (absl::string_view raw : absl::StrSplit(AV(content), '\n')) {
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (absl::StartsWith(line, "#")) continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r\f\v"), absl::SkipEmpty());
    if (fields.empty()) continue;
    if (fields[0] == "nameserver") {
      if (fields.size() >= 2) {
        rc.nameservers.emplace_back(fields[1]);
      } else {
        errors.push_back("nameserver list is empty ");
      }
    } else if (fields[0] == "search") {
      rc.searches.clear();
      for (size_t i = 1; i < fields.size(); ++i) {
        if (fields[i] == ".") continue;
        absl::string_view s = fields[i];
        if (absl::EndsWith(s, ".")) s.remove_suffix(1);
        rc.searches.emplace_back(s);
      }
    } else if (fields[0] == "options") {
      std::vector<std::string> opts(fields.begin() + 1, fields.end());
      AppendOptions(&rc.options, opts);
    }
  }
  if (!errors.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Encountered error while parsing resolv conf file. Error: ",
        errors.size() == 1 ? errors[0] : absl::StrCat("[", absl::StrJoin(errors, ", "), "]")));
  }
  return rc;
}

absl::StatusOr<runtime::v1::DNSConfig> GetPodDNS(const api::Pod& pod, const DnsSettings& settings) {
  ResolvConf host;
  if (!settings.resolv_conf.empty()) {
    std::ifstream in(settings.resolv_conf);
    if (!in) {
      return absl::NotFoundError(
          absl::StrCat("open ", settings.resolv_conf, ": no such file or directory"));
    }
    std::stringstream ss;
    ss << in.rdbuf();
    absl::StatusOr<ResolvConf> parsed = ParseResolvConf(ss.str());
    if (!parsed.ok()) return parsed.status();
    host = *std::move(parsed);
  }
  std::vector<std::string> servers = host.nameservers;
  std::vector<std::string> searches = host.searches;
  std::vector<std::string> options = host.options;

  PodDNSType type = GetPodDNSType(pod);
  if (type == PodDNSType::kNone) {
    servers.clear();
    searches.clear();
    options.clear();
  } else if (type == PodDNSType::kCluster) {
    if (!settings.cluster_dns.empty()) {
      servers = settings.cluster_dns;
      if (!settings.cluster_domain.empty()) {
        std::vector<std::string> cluster_search = {
            absl::StrCat(pod.metadata.namespace_, ".svc.", settings.cluster_domain),
            absl::StrCat("svc.", settings.cluster_domain), settings.cluster_domain};
        cluster_search.insert(cluster_search.end(), searches.begin(), searches.end());
        searches = OmitDuplicates(cluster_search);
      }
      options = {"ndots:5"};
    } else {
      const std::string message =
          "kubelet does not have ClusterDNS IP configured and cannot create Pod using "
          "\"ClusterFirst\" policy. Falling back to \"Default\" policy.";
      KLOG_WARNING(message, "pod", FormatPod(pod));
      if (settings.missing_cluster_dns) settings.missing_cluster_dns(pod, message);
      type = PodDNSType::kHost;
    }
  }
  if (type == PodDNSType::kHost && settings.resolv_conf.empty()) {
    for (const std::string& ip : settings.node_ips) {
      servers.push_back(IsIPv6(ip) ? "::1" : "127.0.0.1");
    }
    if (servers.empty()) servers.push_back("127.0.0.1");
    searches = {"."};
  }

  if (pod.spec.dns_config.has_value()) {
    const api::PodDNSConfig& dc = *pod.spec.dns_config;
    servers.insert(servers.end(), dc.nameservers.begin(), dc.nameservers.end());
    servers = OmitDuplicates(servers);
    searches.insert(searches.end(), dc.searches.begin(), dc.searches.end());
    searches = OmitDuplicates(searches);
    // mergeDNSOptions: by name, the pod's options win. Upstream's order is a Go map's; ours is
    // sorted by name for stable output.
    std::map<std::string, std::string> merged;
    for (const std::string& op : options) {
      const size_t colon = op.find(':');
      if (colon == std::string::npos) {
        merged[op] = "";
      } else {
        merged[op.substr(0, colon)] = op.substr(colon + 1);
      }
    }
    for (const api::PodDNSConfigOption& op : dc.options) merged[op.name] = op.value.value_or("");
    options.clear();
    for (const auto& [name, value] : merged) {
      options.push_back(value.empty() ? name : absl::StrCat(name, ":", value));
    }
  }

  if (servers.size() > kMaxDNSNameservers) {
    servers.resize(kMaxDNSNameservers);
    KLOG_ERROR(absl::InvalidArgumentError(absl::StrCat(
                   "Nameserver limits were exceeded, some nameservers have been omitted, the "
                   "applied nameserver line is: ",
                   absl::StrJoin(servers, " "))),
               "Nameserver limits exceeded", "pod", FormatPod(pod));
  }
  searches = FitSearches(std::move(searches), pod);

  runtime::v1::DNSConfig out;
  for (const std::string& s : servers) out.add_servers(s);
  for (const std::string& s : searches) out.add_searches(s);
  for (const std::string& s : options) out.add_options(s);
  return out;
}

absl::StatusOr<PodHostname> GeneratePodHostNameAndDomain(const api::Pod& pod,
                                                         std::string_view cluster_domain) {
  PodHostname out;
  out.hostname = pod.metadata.name;
  if (!pod.spec.hostname.empty()) {
    if (std::vector<std::string> msgs = api::IsDNS1123Label(pod.spec.hostname); !msgs.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("pod Hostname \"", pod.spec.hostname,
                       "\" is not a valid DNS label: ", absl::StrJoin(msgs, ";")));
    }
    out.hostname = pod.spec.hostname;
  }
  constexpr size_t kHostnameMaxLen = 63;
  if (out.hostname.size() > kHostnameMaxLen) {
    std::string truncated = out.hostname.substr(0, kHostnameMaxLen);
    KLOG_ERROR(absl::InvalidArgumentError("hostname too long"),
               "Hostname for pod was too long, truncated it", "podName", pod.metadata.name,
               "hostnameMaxLen", static_cast<int64_t>(kHostnameMaxLen), "truncatedHostname",
               truncated);
    while (!truncated.empty() && (truncated.back() == '-' || truncated.back() == '.')) {
      truncated.pop_back();
    }
    if (truncated.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("hostname for pod \"", pod.metadata.name,
                                                     "\" was invalid: \"", out.hostname, "\""));
    }
    out.hostname = truncated;
  }
  if (!pod.spec.subdomain.empty()) {
    if (std::vector<std::string> msgs = api::IsDNS1123Label(pod.spec.subdomain); !msgs.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("pod Subdomain \"", pod.spec.subdomain,
                       "\" is not a valid DNS label: ", absl::StrJoin(msgs, ";")));
    }
    out.domain =
        absl::StrCat(pod.spec.subdomain, ".", pod.metadata.namespace_, ".svc.", AV(cluster_domain));
  }
  return out;
}

absl::StatusOr<std::string> GetNodenameForKernel(const std::string& hostname,
                                                 const std::string& domain,
                                                 std::optional<bool> set_hostname_as_fqdn) {
  constexpr size_t kFqdnMaxLen = 64;
  if (!domain.empty() && set_hostname_as_fqdn.value_or(false)) {
    std::string fqdn = absl::StrCat(hostname, ".", domain);
    if (fqdn.size() > kFqdnMaxLen) {
      return absl::InvalidArgumentError(
          absl::StrCat("failed to construct FQDN from pod hostname and cluster domain, FQDN ", fqdn,
                       " is too long (", kFqdnMaxLen, " characters is the max, ", fqdn.size(),
                       " characters requested)"));
    }
    return fqdn;
  }
  return hostname;
}

}  // namespace kubelet::kuberuntime
