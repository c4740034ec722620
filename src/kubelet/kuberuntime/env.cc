#include "kubelet/kuberuntime/env.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/fieldpath.h"
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

absl::StatusOr<std::vector<std::string>> HostIPs(const EnvContext& ctx) {
  if (ctx.node_ips.empty()) {
    return absl::FailedPreconditionError("host IP unknown; known addresses: []");
  }
  return ctx.node_ips;
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
  std::string base, subscript;
  const bool subscripted = api::SplitMaybeSubscriptedPath(path, &base, &subscript);
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

  return api::ExtractFieldPathAsString(pod, path);
}

absl::StatusOr<std::string> ContainerResourceRuntimeValue(const api::ResourceFieldSelector& fs,
                                                          const api::Pod& pod,
                                                          const api::Container& container,
                                                          const api::ResourceList& allocatable) {
  if (fs.container_name.empty()) {
    return api::ExtractContainerResourceValue(
        fs, api::MergeContainerResourceLimits(container, allocatable));
  }
  // defaultPodLimitsForDownwardAPI defaults the regular containers of the pod only.
  for (const api::Container& c : pod.spec.containers) {
    if (c.name == fs.container_name) {
      return api::ExtractContainerResourceValue(fs,
                                                api::MergeContainerResourceLimits(c, allocatable));
    }
  }
  for (const api::Container& c : pod.spec.init_containers) {
    if (c.name == fs.container_name) return api::ExtractContainerResourceValue(fs, c);
  }
  return absl::NotFoundError(absl::StrCat("container ", fs.container_name, " not found"));
}

absl::StatusOr<std::vector<EnvVar>> MakeEnvironmentVariables(
    const api::Pod& pod, const api::Container& container, const std::vector<std::string>& pod_ips,
    const EnvContext& ctx) {
  const std::string& ns = pod.metadata.namespace_;
  // Upstream computes the service variables (and fails on an unsynced cache) before anything
  // else.
  std::map<std::string, std::string> service_env;
  if (ctx.service_env) {
    absl::StatusOr<std::map<std::string, std::string>> s = ctx.service_env(pod);
    if (!s.ok()) return s.status();
    service_env = *std::move(s);
  }
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
      const std::string msg = absl::StrCat(
          "Keys [", absl::StrJoin(invalid, ", "), "] from the EnvFrom ",
          is_secret ? "secret " : "configMap ", ns, "/", name,
          " were skipped since they are considered invalid environment variable names.");
      KLOG_WARNING(msg, "pod", FormatPod(pod));
      if (ctx.recorder != nullptr) {
        ctx.recorder->Record(events::PodRef(pod), events::kWarning,
                             "InvalidEnvironmentVariableNames", msg);
      }
    }
  }

  for (const api::EnvVar& var : container.env) {
    std::string value = var.value;
    if (!value.empty()) {
      value = Expand(value, [&](std::string_view n) -> std::optional<std::string> {
        if (std::optional<std::string> v = env.Get(n)) return v;
        if (auto it = service_env.find(std::string(n)); it != service_env.end()) {
          return it->second;
        }
        return std::nullopt;
      });
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
  std::vector<EnvVar> out = env.List();
  for (auto& [name, value] : service_env) {
    if (!env.Get(name).has_value()) out.push_back(EnvVar{name, std::move(value)});
  }
  return out;
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
