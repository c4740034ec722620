#include "api/pod_defaults.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "common/strings.h"

namespace kubelet::api {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)); }

// path-component := [a-z0-9]+ (separator [a-z0-9]+)*, separator := [_.] | __ | [-]+
bool ValidPathComponent(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  size_t i = 0;
  while (i < s.size()) {
    if (IsLowerAlnum(s[i])) {
      ++i;
      continue;
    }
    // A separator run between alphanumerics.
    size_t j = i;
    while (j < s.size() && !IsLowerAlnum(s[j])) ++j;
    std::string_view sep = s.substr(i, j - i);
    const bool ok = sep == "." || sep == "_" || sep == "__" ||
                    sep.find_first_not_of('-') == std::string_view::npos;
    if (!ok) return false;
    i = j;
  }
  return true;
}

// domain := domain-component ('.' domain-component)* [':' port]
bool ValidDomain(std::string_view d) {
  if (d.empty()) return false;
  size_t colon = d.rfind(':');
  std::string_view host = d;
  if (colon != std::string_view::npos) {
    std::string_view port = d.substr(colon + 1);
    if (port.empty() || port.find_first_not_of("0123456789") != std::string_view::npos) {
      return false;
    }
    host = d.substr(0, colon);
  }
  if (host.empty()) return false;
  size_t start = 0;
  while (start <= host.size()) {
    size_t dot = host.find('.', start);
    std::string_view comp =
        host.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (comp.empty() || !IsAlnum(comp.front()) || !IsAlnum(comp.back())) return false;
    for (char c : comp) {
      if (!IsAlnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return true;
}

bool ValidTag(std::string_view t) {
  if (t.empty() || t.size() > 128) return false;
  auto word = [](char c) { return IsAlnum(c) || c == '_'; };
  if (!word(t[0])) return false;
  for (char c : t) {
    if (!word(c) && c != '.' && c != '-') return false;
  }
  return true;
}

// digest := algorithm ':' hex; algorithm := [A-Za-z][A-Za-z0-9]* ([+._-] [A-Za-z][A-Za-z0-9]*)*
bool ValidDigest(std::string_view d) {
  size_t colon = d.find(':');
  if (colon == std::string_view::npos) return false;
  std::string_view alg = d.substr(0, colon), hex = d.substr(colon + 1);
  if (alg.empty() || hex.size() < 32) return false;
  bool need_alpha = true;
  for (char c : alg) {
    if (need_alpha) {
      if (!absl::ascii_isalpha(static_cast<unsigned char>(c))) return false;
      need_alpha = false;
    } else if (c == '+' || c == '.' || c == '_' || c == '-') {
      need_alpha = true;
    } else if (!IsAlnum(c)) {
      return false;
    }
  }
  if (need_alpha) return false;
  for (char c : hex) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

void RoundUpToMilli(Quantity* q) {
  static const Quantity kLimit = Quantity::FromValue(9'000'000'000'000'000LL);
  static const Quantity kNegLimit = Quantity::FromValue(-9'000'000'000'000'000LL);
  if (*q > kLimit || *q < kNegLimit) return;
  const Quantity rounded = Quantity::FromMilli(q->MilliValue(), q->format());
  if (!(rounded == *q)) *q = rounded;
}

void DefaultResourceList(ResourceList* rl) {
  for (auto& [name, q] : *rl) RoundUpToMilli(&q);
}

void DefaultFieldSelector(ObjectFieldSelector* fs) {
  if (fs->api_version.empty()) fs->api_version = "v1";
}

void DefaultHTTPGet(HTTPGetAction* h) {
  if (h->path.empty()) h->path = "/";
  if (h->scheme.empty()) h->scheme = "HTTP";
}

void DefaultProbe(Probe* p) {
  if (p->timeout_seconds == 0) p->timeout_seconds = 1;
  if (p->period_seconds == 0) p->period_seconds = 10;
  if (p->success_threshold == 0) p->success_threshold = 1;
  if (p->failure_threshold == 0) p->failure_threshold = 3;
  if (p->http_get.has_value()) DefaultHTTPGet(&*p->http_get);
  if (p->grpc.has_value() && !p->grpc->service.has_value()) p->grpc->service = "";
}

void DefaultLifecycleHandler(std::optional<LifecycleHandler>* h) {
  if (h->has_value() && (*h)->http_get.has_value()) DefaultHTTPGet(&*(*h)->http_get);
}

void DefaultContainer(Container* c) {
  // SetDefaults_Container.
  if (c->image_pull_policy.empty()) c->image_pull_policy = DefaultImagePullPolicy(c->image);
  if (c->termination_message_path.empty()) {
    c->termination_message_path = kTerminationMessagePathDefault;
  }
  if (c->termination_message_policy.empty()) {
    c->termination_message_policy = kTerminationMessageReadFile;
  }
  // +default="TCP" on ContainerPort.Protocol.
  for (auto& port : c->ports) {
    if (port.protocol.empty()) port.protocol = kProtocolTCP;
  }
  for (auto& env : c->env) {
    if (env.value_from.has_value() && env.value_from->field_ref.has_value()) {
      DefaultFieldSelector(&*env.value_from->field_ref);
    }
  }
  DefaultResourceList(&c->resources.limits);
  DefaultResourceList(&c->resources.requests);
  for (auto* probe : {&c->liveness_probe, &c->readiness_probe, &c->startup_probe}) {
    if (probe->has_value()) DefaultProbe(&**probe);
  }
  if (c->lifecycle.has_value()) {
    DefaultLifecycleHandler(&c->lifecycle->post_start);
    DefaultLifecycleHandler(&c->lifecycle->pre_stop);
  }
}

// SetDefaults_Pod: requests default to limits (regular and init containers).
void DefaultRequestsFromLimits(Container* c) {
  for (const auto& [name, q] : c->resources.limits) {
    c->resources.requests.emplace(name, q);
  }
}

void DefaultHostNetworkPorts(std::vector<Container>* containers) {
  for (auto& c : *containers) {
    for (auto& port : c.ports) {
      if (port.host_port == 0) port.host_port = port.container_port;
    }
  }
}

void DefaultDownwardAPIItems(std::vector<DownwardAPIVolumeFile>* items) {
  for (auto& item : *items) {
    if (item.field_ref.has_value()) DefaultFieldSelector(&*item.field_ref);
  }
}

void DefaultVolume(Volume* v) {
  const bool no_source = !v->host_path && !v->empty_dir && !v->secret &&
                         !v->persistent_volume_claim && !v->downward_api && !v->config_map &&
                         !v->projected && v->other_sources.empty();
  if (no_source) v->empty_dir = EmptyDirVolumeSource{};
  if (v->host_path.has_value() && !v->host_path->type.has_value()) v->host_path->type = "";
  if (v->secret.has_value() && !v->secret->default_mode.has_value()) {
    v->secret->default_mode = kDefaultVolumeMode;
  }
  if (v->downward_api.has_value()) {
    if (!v->downward_api->default_mode.has_value()) {
      v->downward_api->default_mode = kDefaultVolumeMode;
    }
    DefaultDownwardAPIItems(&v->downward_api->items);
  }
  if (v->config_map.has_value() && !v->config_map->default_mode.has_value()) {
    v->config_map->default_mode = kDefaultVolumeMode;
  }
  if (v->projected.has_value()) {
    if (!v->projected->default_mode.has_value()) v->projected->default_mode = kDefaultVolumeMode;
    for (auto& src : v->projected->sources) {
      if (src.downward_api.has_value()) DefaultDownwardAPIItems(&src.downward_api->items);
      if (src.service_account_token.has_value() &&
          !src.service_account_token->expiration_seconds.has_value()) {
        src.service_account_token->expiration_seconds = 3600;
      }
    }
  }
}

void DefaultContainerStatuses(std::vector<ContainerStatus>* statuses) {
  for (auto& s : *statuses) {
    DefaultResourceList(&s.allocated_resources);
    if (s.resources.has_value()) {
      DefaultResourceList(&s.resources->limits);
      DefaultResourceList(&s.resources->requests);
    }
  }
}

}  // namespace

bool ParseImageReference(std::string_view image, std::string* tag, std::string* digest) {
  tag->clear();
  digest->clear();
  if (image.empty()) return false;
  std::string_view rest = image;
  if (size_t at = rest.find('@'); at != std::string_view::npos) {
    std::string_view d = rest.substr(at + 1);
    if (!ValidDigest(d)) return false;
    *digest = std::string(d);
    rest = rest.substr(0, at);
  }
  const size_t slash = rest.rfind('/');
  const size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    std::string_view t = rest.substr(colon + 1);
    if (!ValidTag(t)) return false;
    *tag = std::string(t);
    rest = rest.substr(0, colon);
  }
  if (rest.empty() || rest.size() > 255) return false;
  // A bare 64-hex name is rejected as ambiguous with an image ID.
  if (rest.size() == 64 && rest.find_first_not_of("0123456789abcdef") == std::string_view::npos) {
    return false;
  }
  std::string_view remote = rest;
  if (size_t i = rest.find('/'); i != std::string_view::npos) {
    std::string_view first = rest.substr(0, i);
    const bool is_domain = first.find_first_of(".:") != std::string_view::npos ||
                           first == "localhost" || absl::AsciiStrToLower(AV(first)) != first;
    if (is_domain) {
      if (!ValidDomain(first)) return false;
      remote = rest.substr(i + 1);
    }
  }
  size_t start = 0;
  while (true) {
    size_t next = remote.find('/', start);
    std::string_view comp = remote.substr(
        start, next == std::string_view::npos ? std::string_view::npos : next - start);
    if (!ValidPathComponent(comp)) return false;
    if (next == std::string_view::npos) break;
    start = next + 1;
  }
  return true;
}

std::string DefaultImagePullPolicy(std::string_view image) {
  std::string tag, digest;
  if (!ParseImageReference(image, &tag, &digest)) {
    tag.clear();  // parse errors are ignored upstream: tag "" -> IfNotPresent
  } else if (tag.empty() && digest.empty()) {
    tag = "latest";
  }
  return tag == "latest" ? kPullAlways : kPullIfNotPresent;
}

void SetDefaultsPod(Pod* pod) {
  PodSpec& spec = pod->spec;
  // SetDefaults_Pod.
  for (auto& c : spec.containers) DefaultRequestsFromLimits(&c);
  for (auto& c : spec.init_containers) DefaultRequestsFromLimits(&c);
  if (!spec.enable_service_links.has_value()) spec.enable_service_links = true;
  if (spec.host_network) {
    DefaultHostNetworkPorts(&spec.containers);
    DefaultHostNetworkPorts(&spec.init_containers);
  }
  // SetDefaults_PodSpec.
  if (spec.dns_policy.empty()) spec.dns_policy = kDNSClusterFirst;
  if (spec.restart_policy.empty()) spec.restart_policy = kRestartPolicyAlways;
  if (!spec.security_context.has_value()) spec.security_context = PodSecurityContext{};
  if (!spec.termination_grace_period_seconds.has_value()) {
    spec.termination_grace_period_seconds = kDefaultTerminationGracePeriodSeconds;
  }
  if (spec.scheduler_name.empty()) spec.scheduler_name = kDefaultSchedulerName;
  // Nested objects, in SetObjectDefaults_Pod order.
  for (auto& v : spec.volumes) DefaultVolume(&v);
  for (auto& c : spec.init_containers) DefaultContainer(&c);
  for (auto& c : spec.containers) DefaultContainer(&c);
  for (auto& ec : spec.ephemeral_containers) DefaultContainer(&ec.common);
  DefaultResourceList(&spec.overhead);
  DefaultContainerStatuses(&pod->status.init_container_statuses);
  DefaultContainerStatuses(&pod->status.container_statuses);
  DefaultContainerStatuses(&pod->status.ephemeral_container_statuses);
}

}  // namespace kubelet::api
