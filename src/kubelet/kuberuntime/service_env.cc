#include "kubelet/kuberuntime/service_env.h"

#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/codec.h"
#include "api/static_pod.h"
#include "common/log.h"
#include "common/object_key.h"

namespace kubelet::kuberuntime {
namespace {

// Upstream's masterServices: always visible, from the default namespace.
constexpr char kMasterServiceNamespace[] = "default";
constexpr char kMasterServiceName[] = "kubernetes";

// makeEnvVariableName.
std::string EnvName(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = c == '-' ? '_' : absl::ascii_toupper(static_cast<unsigned char>(c));
  return out;
}

// net.JoinHostPort.
std::string JoinHostPort(const std::string& host, int32_t port) {
  if (host.find(':') != std::string::npos) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

// makeLinkVariables.
void AppendLinkVariables(const api::Service& service, std::vector<EnvVar>* out) {
  const std::string prefix = EnvName(service.metadata.name);
  const std::string& ip = service.spec.cluster_ip;
  for (size_t i = 0; i < service.spec.ports.size(); ++i) {
    const api::ServicePort& sp = service.spec.ports[i];
    const std::string protocol = sp.protocol.empty() ? "TCP" : sp.protocol;
    const std::string lower = absl::AsciiStrToLower(protocol);
    const std::string url = absl::StrCat(lower, "://", JoinHostPort(ip, sp.port));
    if (i == 0) out->push_back(EnvVar{prefix + "_PORT", url});
    const std::string port_prefix =
        absl::StrCat(prefix, "_PORT_", sp.port, "_", absl::AsciiStrToUpper(protocol));
    out->push_back(EnvVar{port_prefix, url});
    out->push_back(EnvVar{port_prefix + "_PROTO", lower});
    out->push_back(EnvVar{port_prefix + "_PORT", std::to_string(sp.port)});
    out->push_back(EnvVar{port_prefix + "_ADDR", ip});
  }
}

}  // namespace

bool IsServiceIPSet(const api::Service& service) {
  return !service.spec.cluster_ip.empty() && service.spec.cluster_ip != api::kClusterIPNone;
}

std::vector<EnvVar> FromServices(const std::vector<const api::Service*>& services) {
  std::vector<EnvVar> out;
  for (const api::Service* service : services) {
    if (!IsServiceIPSet(*service)) continue;
    const std::string prefix = EnvName(service->metadata.name);
    out.push_back(EnvVar{prefix + "_SERVICE_HOST", service->spec.cluster_ip});
    // Validation requires a port on every service with a cluster IP; upstream would panic on
    // one without, we only leave the port variables out.
    if (service->spec.ports.empty()) continue;
    const std::string port_name = prefix + "_SERVICE_PORT";
    out.push_back(EnvVar{port_name, std::to_string(service->spec.ports[0].port)});
    for (const api::ServicePort& sp : service->spec.ports) {
      if (sp.name.empty()) continue;
      out.push_back(EnvVar{port_name + "_" + EnvName(sp.name), std::to_string(sp.port)});
    }
    AppendLinkVariables(*service, &out);
  }
  return out;
}

std::map<std::string, std::string> ServiceEnvVarMap(
    const std::vector<const api::Service*>& services, const std::string& ns,
    bool enable_service_links) {
  std::map<std::string, const api::Service*> by_name;
  for (const api::Service* service : services) {
    if (!IsServiceIPSet(*service)) continue;
    const std::string& name = service->metadata.name;
    if (service->metadata.namespace_ == kMasterServiceNamespace && name == kMasterServiceName) {
      by_name.emplace(name, service);  // a service of the pod's namespace keeps its place
    } else if (service->metadata.namespace_ == ns && enable_service_links) {
      by_name[name] = service;
    }
  }
  std::vector<const api::Service*> mapped;
  mapped.reserve(by_name.size());
  for (const auto& [name, service] : by_name) mapped.push_back(service);
  std::map<std::string, std::string> out;
  for (EnvVar& e : FromServices(mapped)) out[e.name] = std::move(e.value);
  return out;
}

void ServiceEnvCache::Replace(std::vector<api::Service> services) {
  std::map<std::string, std::map<std::string, api::Service>> next;
  for (api::Service& s : services) {
    std::string ns = s.metadata.namespace_;
    std::string name = s.metadata.name;
    next[std::move(ns)][std::move(name)] = std::move(s);
  }
  absl::MutexLock lock(&mu_);
  services_ = std::move(next);
  synced_ = true;
}

void ServiceEnvCache::Upsert(api::Service service) {
  std::string ns = service.metadata.namespace_;
  std::string name = service.metadata.name;
  absl::MutexLock lock(&mu_);
  services_[std::move(ns)][std::move(name)] = std::move(service);
}

void ServiceEnvCache::Remove(const std::string& ns, const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = services_.find(ns);
  if (it == services_.end()) return;
  it->second.erase(name);
  if (it->second.empty()) services_.erase(it);
}

namespace {

std::optional<api::Service> DecodeService(const nlohmann::json& object) {
  absl::StatusOr<api::Service> s = api::FromJson<api::Service>(object);
  if (!s.ok()) {
    KLOG_ERROR(s.status(), "Could not read a service", "service", ObjectKey(object));
    return std::nullopt;
  }
  return *std::move(s);
}

}  // namespace

void ServiceEnvCache::Replace(std::vector<nlohmann::json> objects) {
  std::vector<api::Service> services;
  services.reserve(objects.size());
  for (const nlohmann::json& o : objects) {
    if (std::optional<api::Service> s = DecodeService(o)) services.push_back(*std::move(s));
  }
  Replace(std::move(services));
  KLOG_V(4, "Services read", "count", std::to_string(size()));
}

void ServiceEnvCache::Add(const nlohmann::json& object) { Update(object); }

void ServiceEnvCache::Update(const nlohmann::json& object) {
  if (std::optional<api::Service> s = DecodeService(object)) Upsert(*std::move(s));
}

void ServiceEnvCache::Delete(const nlohmann::json& object) {
  ObjectName n = NameOf(object);
  if (n.namespace_name.empty() || n.name.empty()) return;
  Remove(n.namespace_name, n.name);
}

bool ServiceEnvCache::HasSynced() const {
  absl::MutexLock lock(&mu_);
  return synced_;
}

size_t ServiceEnvCache::size() const {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [ns, by_name] : services_) n += by_name.size();
  return n;
}

absl::StatusOr<std::map<std::string, std::string>> ServiceEnvCache::EnvFor(
    const api::Pod& pod) const {
  const std::string& ns = pod.metadata.namespace_;
  const bool links = pod.spec.enable_service_links.value_or(true);
  absl::MutexLock lock(&mu_);
  if (!synced_ && !api::IsStaticPod(pod)) {
    return absl::UnavailableError(
        "services have not yet been read at least once, cannot construct envvars");
  }
  // Only the services the projection can pick: default/kubernetes and the pod's namespace.
  std::vector<const api::Service*> candidates;
  if (auto it = services_.find(kMasterServiceNamespace); it != services_.end()) {
    if (auto s = it->second.find(kMasterServiceName); s != it->second.end()) {
      candidates.push_back(&s->second);
    }
  }
  if (links) {
    if (auto it = services_.find(ns); it != services_.end()) {
      for (const auto& [name, service] : it->second) candidates.push_back(&service);
    }
  }
  return ServiceEnvVarMap(candidates, ns, links);
}

}  // namespace kubelet::kuberuntime
