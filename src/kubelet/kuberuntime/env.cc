#include "kubelet/kuberuntime/env.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/pod_validation.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/kuberuntime/helpers.h"

namespace kubelet::kuberuntime {
namespace {

// Variables in definition order, later definitions replacing earlier values in place.
class OrderedEnv {
 public:
  void Set(const std::string& name, std::string value) {
    auto [it, inserted] = values_.emplace(name, value);
    if (inserted) {
      order_.push_back(name);
    } else {
      it->second = std::move(value);
    }
  }
  std::optional<std::string> Get(std::string_view name) const {
    auto it = values_.find(std::string(name));
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }
  std::vector<EnvVar> List() const {
    std::vector<EnvVar> out;
    out.reserve(order_.size());
    for (const std::string& n : order_) out.push_back(EnvVar{n, values_.at(n)});
    return out;
  }

 private:
  std::vector<std::string> order_;
  std::map<std::string, std::string> values_;
};

bool IsIPv6(std::string_view ip) { return ip.find(':') != std::string_view::npos; }

// fieldpath.SplitMaybeSubscriptedPath.
bool SplitSubscriptedPath(std::string_view path, std::string_view* base,
                          std::string_view* subscript) {
  if (!absl::EndsWith(AV(path), "']")) return false;
  std::string_view s = path.substr(0, path.size() - 2);
  const size_t open = s.find("['");
  if (open == std::string_view::npos || open == 0) return false;
  *base = s.substr(0, open);
  *subscript = s.substr(open + 2);
  return true;
}

// fieldpath.FormatMap: sorted `k="v"` lines.
std::string FormatMap(const std::map<std::string, std::string>& m) {
  std::vector<std::string> lines;
  for (const auto& [k, v] : m) lines.push_back(absl::StrCat(k, "=", log::Quote(v)));
  return absl::StrJoin(lines, "\n");
}

absl::StatusOr<std::vector<std::string>> HostIPs(const EnvContext& ctx) {
  if (ctx.node_ips.empty()) {
    return absl::FailedPreconditionError("host IP unknown; known addresses: []");
  }
  return ctx.node_ips;
}

const api::Quantity* FindQuantity(const api::ResourceList& list, const std::string& name) {
  auto it = list.find(name);
  return it == list.end() ? nullptr : &it->second;
}

std::string CeilDiv(double value, double divisor) {
  if (divisor == 0) return "0";
  const double r = std::ceil(value / divisor);
  if (!(r < 9.2e18 && r > -9.2e18)) return "0";
  return std::to_string(static_cast<int64_t>(r));
}

absl::StatusOr<std::string> ExtractContainerResourceValue(const api::ResourceFieldSelector& fs,
                                                          const api::Container& c) {
  api::Quantity divisor = fs.divisor;
  if (divisor.IsZero()) divisor = api::Quantity::FromValue(1);
  const api::Quantity zero;
  auto get = [&](const api::ResourceList& list, const char* name) {
    const api::Quantity* q = FindQuantity(list, name);
    return q == nullptr ? zero : *q;
  };
  const std::string& r = fs.resource;
  auto cpu = [&](const api::Quantity& q) {
    return CeilDiv(static_cast<double>(q.MilliValue()), static_cast<double>(divisor.MilliValue()));
  };
  auto bytes = [&](const api::Quantity& q) {
    return CeilDiv(static_cast<double>(q.Value()), static_cast<double>(divisor.Value()));
  };
  if (r == "limits.cpu") return cpu(get(c.resources.limits, api::kResourceCPU));
  if (r == "limits.memory") return bytes(get(c.resources.limits, api::kResourceMemory));
  if (r == "limits.ephemeral-storage") {
    return bytes(get(c.resources.limits, api::kResourceEphemeralStorage));
  }
  if (r == "requests.cpu") return cpu(get(c.resources.requests, api::kResourceCPU));
  if (r == "requests.memory") return bytes(get(c.resources.requests, api::kResourceMemory));
  if (r == "requests.ephemeral-storage") {
    return bytes(get(c.resources.requests, api::kResourceEphemeralStorage));
  }
  if (absl::StartsWith(r, "requests.hugepages-")) {
    return bytes(get(c.resources.requests, r.substr(9).c_str()));
  }
  if (absl::StartsWith(r, "limits.hugepages-")) {
    return bytes(get(c.resources.limits, r.substr(7).c_str()));
  }
  return absl::InvalidArgumentError(absl::StrCat("unsupported container resource : ", r));
}

// resource.MergeContainerResourceLimits: unset or zero cpu/memory/ephemeral-storage limits take
// the node's allocatable.
api::Container WithAllocatableLimits(api::Container c, const api::ResourceList& allocatable) {
  for (const char* name :
       {api::kResourceCPU, api::kResourceMemory, api::kResourceEphemeralStorage}) {
    auto it = c.resources.limits.find(name);
    if (it != c.resources.limits.end() && !it->second.IsZero()) continue;
    if (const api::Quantity* cap = FindQuantity(allocatable, name); cap != nullptr) {
      c.resources.limits[name] = *cap;
    }
  }
  return c;
}

absl::StatusOr<std::map<std::string, std::string>> Lookup(const DataLookup& fn, const char* kind,
                                                          const std::string& ns,
                                                          const std::string& name) {
  if (!fn) {
    return absl::FailedPreconditionError(
        absl::StrCat("couldn't get ", kind, " ", ns, "/", name, ", no kubeClient defined"));
  }
  return fn(ns, name);
}

}  // namespace

std::vector<std::string> SortPodIPs(const std::vector<std::string>& pod_ips,
                                    const std::vector<std::string>& node_ips) {
  const bool primary_v6 = !node_ips.empty() && IsIPv6(node_ips[0]);
  std::vector<std::string> out;
  for (bool want_v6 : {primary_v6, !primary_v6}) {
    for (const std::string& ip : pod_ips) {
      if (!ip.empty() && IsIPv6(ip) == want_v6) {
        out.push_back(ip);
        break;
      }
    }
  }
  return out;
}

absl::StatusOr<std::string> PodFieldSelectorRuntimeValue(const api::ObjectFieldSelector& fs,
                                                         const api::Pod& pod,
                                                         const std::vector<std::string>& pod_ips,
                                                         const EnvContext& ctx) {
  // ConvertDownwardAPIFieldLabel (v1).
  if (!fs.api_version.empty() && fs.api_version != "v1") {
    return absl::InvalidArgumentError(absl::StrCat("unsupported pod version: ", fs.api_version));
  }
  std::string path = fs.field_path;
  std::string_view base, subscript;
  const bool subscripted = SplitSubscriptedPath(path, &base, &subscript);
  if (subscripted) {
    if (base != "metadata.annotations" && base != "metadata.labels") {
      return absl::InvalidArgumentError(
          absl::StrCat("field label does not support subscript: ", path));
    }
  } else {
    static const char* const kSupported[] = {
        "metadata.annotations", "metadata.labels", "metadata.name",      "metadata.namespace",
        "metadata.uid",         "spec.nodeName",   "spec.restartPolicy", "spec.serviceAccountName",
        "spec.schedulerName",   "status.phase",    "status.hostIP",      "status.hostIPs",
        "status.podIP",         "status.podIPs"};
    if (path == "spec.host") path = "spec.nodeName";
    if (std::find(std::begin(kSupported), std::end(kSupported), path) == std::end(kSupported)) {
      return absl::InvalidArgumentError(absl::StrCat("field label not supported: ", path));
    }
  }

  const std::vector<std::string> ips = SortPodIPs(pod_ips, ctx.node_ips);
  const std::string pod_ip = ips.empty() ? "" : ips[0];
  if (path == "spec.nodeName") return pod.spec.node_name;
  if (path == "spec.serviceAccountName") return pod.spec.service_account_name;
  if (path == "status.hostIP") {
    absl::StatusOr<std::vector<std::string>> host = HostIPs(ctx);
    if (!host.ok()) return host.status();
    return (*host)[0];
  }
  if (path == "status.hostIPs") {
    if (!ctx.pod_host_ips) return std::string();
    absl::StatusOr<std::vector<std::string>> host = HostIPs(ctx);
    if (!host.ok()) return host.status();
    return absl::StrJoin(*host, ",");
  }
  if (path == "status.podIP") return pod_ip;
  if (path == "status.podIPs") return absl::StrJoin(ips, ",");

  // fieldpath.ExtractFieldPathAsString.
  if (subscripted) {
    const std::string key(subscript);
    if (base == "metadata.annotations") {
      if (std::vector<std::string> errs = api::IsQualifiedName(absl::AsciiStrToLower(key));
          !errs.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("invalid key subscript in ", path, ": ", absl::StrJoin(errs, ";")));
      }
      auto it = pod.metadata.annotations.find(key);
      return it == pod.metadata.annotations.end() ? "" : it->second;
    }
    if (std::vector<std::string> errs = api::IsQualifiedName(key); !errs.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid key subscript in ", path, ": ", absl::StrJoin(errs, ";")));
    }
    auto it = pod.metadata.labels.find(key);
    return it == pod.metadata.labels.end() ? "" : it->second;
  }
  if (path == "metadata.annotations") return FormatMap(pod.metadata.annotations);
  if (path == "metadata.labels") return FormatMap(pod.metadata.labels);
  if (path == "metadata.name") return pod.metadata.name;
  if (path == "metadata.namespace") return pod.metadata.namespace_;
  if (path == "metadata.uid") return pod.metadata.uid;
  return absl::InvalidArgumentError(absl::StrCat("unsupported fieldPath: ", path));
}

absl::StatusOr<std::string> ContainerResourceRuntimeValue(const api::ResourceFieldSelector& fs,
                                                          const api::Pod& pod,
                                                          const api::Container& container,
                                                          const api::ResourceList& allocatable) {
  if (fs.container_name.empty()) {
    return ExtractContainerResourceValue(fs, WithAllocatableLimits(container, allocatable));
  }
  // defaultPodLimitsForDownwardAPI defaults the regular containers of the pod only.
  for (const api::Container& c : pod.spec.containers) {
    if (c.name == fs.container_name) {
      return ExtractContainerResourceValue(fs, WithAllocatableLimits(c, allocatable));
    }
  }
  for (const api::Container& c : pod.spec.init_containers) {
    if (c.name == fs.container_name) return ExtractContainerResourceValue(fs, c);
  }
  return absl::NotFoundError(absl::StrCat("container ", fs.container_name, " not found"));
}

absl::StatusOr<std::vector<EnvVar>> MakeEnvironmentVariables(
    const api::Pod& pod, const api::Container& container, const std::vector<std::string>& pod_ips,
    const EnvContext& ctx) {
  const std::string& ns = pod.metadata.namespace_;
  std::map<std::string, std::map<std::string, std::string>> config_maps;
  std::map<std::string, std::map<std::string, std::string>> secrets;
  // Fetches (and caches) a config map or secret. Returns nullptr with OK status when the object is
  // missing and `optional`.
  auto fetch = [&](bool secret, const std::string& name,
                   bool optional) -> absl::StatusOr<const std::map<std::string, std::string>*> {
    auto& cache = secret ? secrets : config_maps;
    if (auto it = cache.find(name); it != cache.end()) return &it->second;
    if (secret ? !ctx.get_secret : !ctx.get_config_map) {
      return Lookup(nullptr, secret ? "secret" : "configMap", ns, name).status();
    }
    absl::StatusOr<std::map<std::string, std::string>> data = Lookup(
        secret ? ctx.get_secret : ctx.get_config_map, secret ? "secret" : "configMap", ns, name);
    if (!data.ok()) {
      if (absl::IsNotFound(data.status()) && optional) return nullptr;
      return data.status();
    }
    return &cache.emplace(name, *std::move(data)).first->second;
  };

  OrderedEnv env;
  for (const api::EnvFromSource& from : container.env_from) {
    const bool is_secret = !from.config_map_ref.has_value() && from.secret_ref.has_value();
    if (!from.config_map_ref.has_value() && !from.secret_ref.has_value()) continue;
    const std::string& name = is_secret ? from.secret_ref->name : from.config_map_ref->name;
    const bool optional = is_secret ? from.secret_ref->optional.value_or(false)
                                    : from.config_map_ref->optional.value_or(false);
    absl::StatusOr<const std::map<std::string, std::string>*> data =
        fetch(is_secret, name, optional);
    if (!data.ok()) return data.status();
    if (*data == nullptr) continue;
    std::vector<std::string> invalid;
    for (const auto& [k, v] : **data) {
      const std::string key = from.prefix + k;
      if (!api::IsEnvVarName(key).empty()) {
        invalid.push_back(key);
        continue;
      }
      env.Set(key, v);
    }
    if (!invalid.empty()) {
      KLOG_WARNING(absl::StrCat("Keys [", absl::StrJoin(invalid, ", "), "] from the EnvFrom ",
                                is_secret ? "secret " : "configMap ", ns, "/", name,
                                " were skipped since they are considered invalid environment "
                                "variable names."),
                   "pod", FormatPod(pod));
    }
  }

  for (const api::EnvVar& var : container.env) {
    std::string value = var.value;
    if (!value.empty()) {
      value = Expand(value, [&](std::string_view n) { return env.Get(n); });
    } else if (var.value_from.has_value()) {
      const api::EnvVarSource& src = *var.value_from;
      if (src.field_ref.has_value()) {
        absl::StatusOr<std::string> v =
            PodFieldSelectorRuntimeValue(*src.field_ref, pod, pod_ips, ctx);
        if (!v.ok()) return v.status();
        value = *std::move(v);
      } else if (src.resource_field_ref.has_value()) {
        absl::StatusOr<std::string> v = ContainerResourceRuntimeValue(
            *src.resource_field_ref, pod, container, ctx.node_allocatable);
        if (!v.ok()) return v.status();
        value = *std::move(v);
      } else if (src.config_map_key_ref.has_value() || src.secret_key_ref.has_value()) {
        const bool is_secret = !src.config_map_key_ref.has_value();
        const std::string& name =
            is_secret ? src.secret_key_ref->name : src.config_map_key_ref->name;
        const std::string& key = is_secret ? src.secret_key_ref->key : src.config_map_key_ref->key;
        const bool optional = is_secret ? src.secret_key_ref->optional.value_or(false)
                                        : src.config_map_key_ref->optional.value_or(false);
        absl::StatusOr<const std::map<std::string, std::string>*> data =
            fetch(is_secret, name, optional);
        if (!data.ok()) return data.status();
        if (*data == nullptr) continue;
        auto it = (*data)->find(key);
        if (it == (*data)->end()) {
          if (optional) continue;
          return absl::NotFoundError(absl::StrCat("couldn't find key ", key, " in ",
                                                  is_secret ? "Secret " : "ConfigMap ", ns, "/",
                                                  name));
        }
        value = it->second;
      }
    }
    env.Set(var.name, std::move(value));
  }
  return env.List();
}

std::pair<std::vector<std::string>, std::vector<std::string>> ExpandContainerCommandAndArgs(
    const api::Container& container, const std::vector<EnvVar>& envs) {
  std::map<std::string, std::string, std::less<>> vars;
  for (const EnvVar& e : envs) vars[e.name] = e.value;
  auto lookup = [&](std::string_view n) -> std::optional<std::string> {
    auto it = vars.find(n);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
  std::vector<std::string> command, args;
  for (const std::string& c : container.command) command.push_back(Expand(c, lookup));
  for (const std::string& a : container.args) args.push_back(Expand(a, lookup));
  return {command, args};
}

}  // namespace kubelet::kuberuntime
