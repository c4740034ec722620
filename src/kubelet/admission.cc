#include "kubelet/admission.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/resource_helpers.h"
#include "api/static_pod.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"

namespace kubelet {

PodRequests ComputePodRequests(const api::Pod& pod, bool in_place_pod_vertical_scaling) {
  const api::ResourceList reqs =
      api::PodRequests(pod, {.in_place_pod_vertical_scaling = in_place_pod_vertical_scaling});
  PodRequests r;
  if (auto cpu = reqs.find(api::kResourceCPU); cpu != reqs.end())
    r.milli_cpu = cpu->second.MilliValue();
  if (auto mem = reqs.find(api::kResourceMemory); mem != reqs.end())
    r.memory_bytes = mem->second.Value();
  return r;
}

namespace {

struct Port {
  std::string ip;
  std::string protocol;
  int32_t port;
};

std::vector<Port> HostPorts(const api::Pod& pod) {
  std::vector<Port> out;
  auto add = [&](const std::vector<api::Container>& cs) {
    for (const auto& c : cs) {
      for (const auto& p : c.ports) {
        if (p.host_port <= 0) continue;
        out.push_back({p.host_ip.empty() ? "0.0.0.0" : p.host_ip,
                       p.protocol.empty() ? "TCP" : p.protocol, p.host_port});
      }
    }
  };
  add(pod.spec.init_containers);
  add(pod.spec.containers);
  return out;
}

bool PortsConflict(const Port& a, const Port& b) {
  if (a.port != b.port || a.protocol != b.protocol) return false;
  return a.ip == b.ip || a.ip == "0.0.0.0" || b.ip == "0.0.0.0";
}

// Member `key` of the object `o` as Go decodes a string field: absent or null is "", a string is
// itself, anything else does not decode (nullopt; json::value() would throw).
std::optional<std::string> StringMember(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return std::string();
  if (!it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// One requirement of a node selector term (matchExpressions on labels, matchFields on
// metadata.name), component-helpers' semantics.
bool RequirementMatches(const nlohmann::json& req,
                        const std::map<std::string, std::string>& values) {
  if (!req.is_object()) return false;
  const std::optional<std::string> key_member = StringMember(req, "key");
  const std::optional<std::string> op_member = StringMember(req, "operator");
  if (!key_member || !op_member) return false;
  const std::string& key = *key_member;
  const std::string& op = *op_member;
  std::vector<std::string> set;
  if (auto v = req.find("values"); v != req.end() && v->is_array()) {
    for (const auto& e : *v) {
      if (!e.is_string()) return false;
      set.push_back(e.get<std::string>());
    }
  }
  auto it = values.find(key);
  const bool has = it != values.end();
  auto in_set = [&] { return has && std::find(set.begin(), set.end(), it->second) != set.end(); };
  if (op == "In") return !set.empty() && in_set();
  if (op == "NotIn") return !set.empty() && !in_set();
  if (op == "Exists") return set.empty() && has;
  if (op == "DoesNotExist") return set.empty() && !has;
  if (op == "Gt" || op == "Lt") {
    int64_t want = 0, have = 0;
    if (set.size() != 1 || !absl::SimpleAtoi(set[0], &want)) return false;
    if (!has || !absl::SimpleAtoi(it->second, &have)) return false;
    return op == "Gt" ? have > want : have < want;
  }
  return false;  // unknown operator: the term is invalid and matches nothing
}

// A node selector term: every expression and field requirement holds; an empty term matches
// nothing.
bool TermMatches(const nlohmann::json& term, const api::Node& node) {
  if (!term.is_object()) return false;
  const nlohmann::json empty = nlohmann::json::array();
  const nlohmann::json& exprs =
      term.contains("matchExpressions") ? term["matchExpressions"] : empty;
  const nlohmann::json& fields = term.contains("matchFields") ? term["matchFields"] : empty;
  if (!exprs.is_array() || !fields.is_array()) return false;
  if (exprs.empty() && fields.empty()) return false;
  for (const auto& e : exprs) {
    if (!RequirementMatches(e, node.metadata.labels)) return false;
  }
  const std::map<std::string, std::string> node_fields = {{"metadata.name", node.metadata.name}};
  for (const auto& f : fields) {
    // Only metadata.name with In / NotIn is a valid field requirement.
    if (!f.is_object()) return false;
    const std::optional<std::string> key = StringMember(f, "key");
    const std::optional<std::string> op = StringMember(f, "operator");
    if (key != "metadata.name" || (op != "In" && op != "NotIn")) return false;
    if (!RequirementMatches(f, node_fields)) return false;
  }
  return true;
}

// One resource the node is short of (upstream InsufficientResourceError).
struct Shortage {
  std::string resource;
  int64_t requested = 0, used = 0, capacity = 0;
};

}  // namespace

bool MatchesRequiredNodeAffinity(const api::Pod& pod, const api::Node& node) {
  for (const auto& [k, v] : pod.spec.node_selector) {
    auto it = node.metadata.labels.find(k);
    if (it == node.metadata.labels.end() || it->second != v) return false;
  }
  if (!pod.spec.affinity.has_value() || pod.spec.affinity->empty()) return true;
  nlohmann::json affinity = nlohmann::json::parse(pod.spec.affinity->json, nullptr, false);
  if (!affinity.is_object()) return false;
  auto na = affinity.find("nodeAffinity");
  if (na == affinity.end() || na->is_null()) return true;
  if (!na->is_object()) return false;
  auto required = na->find("requiredDuringSchedulingIgnoredDuringExecution");
  if (required == na->end() || required->is_null()) return true;
  if (!required->is_object()) return false;
  auto terms = required->find("nodeSelectorTerms");
  if (terms == required->end() || !terms->is_array()) return false;
  for (const auto& term : *terms) {
    if (TermMatches(term, node)) return true;
  }
  return false;
}

bool ToleratesTaint(const api::Toleration& t, const api::Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.operator_.empty() || t.operator_ == "Equal") return t.value == taint.value;
  return t.operator_ == "Exists";
}

AdmitResult AdmitPod(const api::Pod& pod, const std::vector<api::PodPtr>& admitted,
                     const NodeAllocatable& allocatable, const api::Node& node,
                     bool in_place_pod_vertical_scaling) {
  AdmitResult r;
  // Checks preemption cannot help with come first: the OS.
  {
    auto node_os = node.metadata.labels.find("kubernetes.io/os");
    const std::string os = node_os == node.metadata.labels.end() ? "linux" : node_os->second;
    auto pod_os = pod.metadata.labels.find("kubernetes.io/os");
    if (pod_os != pod.metadata.labels.end() && pod_os->second != os) {
      return {false, "PodOSSelectorNodeLabelDoesNotMatch",
              "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"};
    }
    if (pod.spec.os.has_value() && pod.spec.os->name != "linux") {
      return {false, "PodOSNotSupported",
              "Failed to admit pod as the OS field doesn't match node OS"};
    }
  }
  // The scheduler's resource fit, in its order: pods, cpu, memory, ephemeral-storage.
  std::vector<Shortage> short_of;
  int64_t used_pods = static_cast<int64_t>(admitted.size());
  if (used_pods + 1 > allocatable.pods)
    short_of.push_back({"pods", 1, used_pods, allocatable.pods});
  PodRequests want = ComputePodRequests(pod);
  PodRequests used;
  for (const api::PodPtr& p : admitted) {
    PodRequests q = ComputePodRequests(*p, in_place_pod_vertical_scaling);
    used.milli_cpu += q.milli_cpu;
    used.memory_bytes += q.memory_bytes;
  }
  if (want.milli_cpu > 0 && used.milli_cpu + want.milli_cpu > allocatable.milli_cpu) {
    short_of.push_back({"cpu", want.milli_cpu, used.milli_cpu, allocatable.milli_cpu});
  }
  if (want.memory_bytes > 0 && used.memory_bytes + want.memory_bytes > allocatable.memory_bytes) {
    short_of.push_back({"memory", want.memory_bytes, used.memory_bytes, allocatable.memory_bytes});
  }
  if (allocatable.ephemeral_storage_bytes > 0) {
    auto storage = [](const api::Pod& p) -> int64_t {
      const api::ResourceList reqs = api::PodRequests(p);
      auto it = reqs.find(api::kResourceEphemeralStorage);
      return it == reqs.end() ? 0 : it->second.Value();
    };
    int64_t want_storage = storage(pod), used_storage = 0;
    for (const api::PodPtr& p : admitted) used_storage += storage(*p);
    if (want_storage > 0 && used_storage + want_storage > allocatable.ephemeral_storage_bytes) {
      short_of.push_back(
          {"ephemeral-storage", want_storage, used_storage, allocatable.ephemeral_storage_bytes});
    }
  }
  // The other predicates, in upstream's order; the first failure is reported.
  std::string predicate;
  if (!MatchesRequiredNodeAffinity(pod, node)) predicate = "NodeAffinity";
  if (predicate.empty() && !pod.spec.node_name.empty() && !node.metadata.name.empty() &&
      pod.spec.node_name != node.metadata.name) {
    predicate = "NodeName";
  }
  if (predicate.empty()) {
    bool port_conflict = false;
    std::vector<Port> wanted_ports = HostPorts(pod);
    for (const api::PodPtr& p : admitted) {
      if (port_conflict) break;
      for (const Port& a : HostPorts(*p)) {
        for (const Port& b : wanted_ports) port_conflict = port_conflict || PortsConflict(a, b);
      }
    }
    if (port_conflict) predicate = "NodePorts";
  }
  if (predicate.empty() && !api::IsStaticPod(pod)) {
    // The kubelet only looks at NoExecute taints (NoSchedule is the scheduler's business).
    for (const api::Taint& taint : node.spec.taints) {
      if (taint.effect != "NoExecute") continue;
      bool tolerated = false;
      for (const api::Toleration& t : pod.spec.tolerations) tolerated |= ToleratesTaint(t, taint);
      if (!tolerated) {
        predicate = "TaintToleration";
        break;
      }
    }
  }
  auto predicate_failure = [&] {
    return AdmitResult{false, predicate, absl::StrCat("Predicate ", predicate, " failed")};
  };
  // Preemption only helps with resources: a critical pod failing another predicate fails.
  if (!short_of.empty() && api::IsCriticalPod(pod) && !predicate.empty()) {
    return predicate_failure();
  }
  if (!short_of.empty() && api::IsCriticalPod(pod)) {
    // Insufficient resources do not reject a critical pod: the kubelet tries to preempt
    // non-critical pods for it (upstream CriticalPodAdmissionHandler). Only non-critical pods
    // can be preempted; what they request is what preemption could reclaim.
    PodRequests reclaimable;
    int64_t preemptable_pods = 0;
    for (const api::PodPtr& p : admitted) {
      if (api::IsCriticalPod(*p)) continue;
      PodRequests q = ComputePodRequests(*p);
      reclaimable.milli_cpu += q.milli_cpu;
      reclaimable.memory_bytes += q.memory_bytes;
      ++preemptable_pods;
    }
    std::string unmet;
    for (const Shortage& sh : short_of) {
      int64_t need = sh.used + sh.requested - sh.capacity;
      int64_t can = sh.resource == "pods"     ? preemptable_pods
                    : sh.resource == "cpu"    ? reclaimable.milli_cpu
                    : sh.resource == "memory" ? reclaimable.memory_bytes
                                              : 0;
      if (can < need) absl::StrAppend(&unmet, "(res: ", sh.resource, ", q: ", need - can, "), ");
    }
    r.admit = false;
    r.reason = "UnexpectedAdmissionError";
    if (!unmet.empty()) {
      r.message = absl::StrCat(
          "Unexpected error while attempting to recover from admission failure: preemption: "
          "error finding a set of pods to preempt: no set of running pods found to reclaim "
          "resources: [",
          unmet, "]");
    } else {
      // Evicting non-critical pods needs API-server pods (a standalone node runs static pods
      // only, all critical), so this cannot happen yet; refuse rather than over-commit.
      r.message =
          "Unexpected error while attempting to recover from admission failure: preemption: "
          "evicting non-critical pods is not supported by this kubelet yet";
    }
    return r;
  }
  if (!short_of.empty()) {
    const Shortage& sh = short_of.front();
    r.admit = false;
    r.reason = "OutOf" + sh.resource;
    r.message = absl::StrCat("Node didn't have enough resource: ", sh.resource,
                             ", requested: ", sh.requested, ", used: ", sh.used,
                             ", capacity: ", sh.capacity);
    return r;
  }
  if (!predicate.empty()) return predicate_failure();
  return r;
}

NodeAllocatable MachineAllocatable(int64_t max_pods, int64_t reserved_milli_cpu,
                                   int64_t reserved_memory_bytes) {
  NodeAllocatable a;
  a.pods = max_pods;
  a.milli_cpu = static_cast<int64_t>(::sysconf(_SC_NPROCESSORS_ONLN)) * 1000 - reserved_milli_cpu;
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemTotal:", 0) == 0) {
      std::istringstream is(line.substr(9));
      int64_t kb = 0;
      is >> kb;
      a.memory_bytes = kb * 1024 - reserved_memory_bytes;
      break;
    }
  }
  return a;
}

namespace {

struct SafeSysctl {
  const char* name;
  int min_major = 0;  // kernel version it needs; 0: any
  int min_minor = 0;
};
constexpr SafeSysctl kSafeSysctls[] = {
    {"kernel.shm_rmid_forced"},
    {"net.ipv4.ip_local_port_range"},
    {"net.ipv4.tcp_syncookies"},
    {"net.ipv4.ping_group_range"},
    {"net.ipv4.ip_unprivileged_port_start"},
    {"net.ipv4.ip_local_reserved_ports", 3, 16},
    {"net.ipv4.tcp_keepalive_time", 4, 5},
};

}  // namespace

SysctlAllowlist::SysctlAllowlist() {
  for (const SafeSysctl& s : kSafeSysctls) names_[s.name] = api::SysctlNamespaceOf(s.name);
}

std::vector<std::string> SysctlAllowlist::SafeSysctls(std::string_view kernel_release) {
  int major = -1, minor = -1;
  std::vector<absl::string_view> parts =
      absl::StrSplit(AV(kernel_release), absl::MaxSplits('.', 2));
  if (parts.size() >= 2) {
    absl::string_view minor_digits = parts[1];
    minor_digits = minor_digits.substr(0, minor_digits.find_first_not_of("0123456789"));
    if (!absl::SimpleAtoi(parts[0], &major) || !absl::SimpleAtoi(minor_digits, &minor)) {
      major = minor = -1;
    }
  }
  std::vector<std::string> out;
  for (const SafeSysctl& s : kSafeSysctls) {
    if (s.min_major > 0 && (major < s.min_major || (major == s.min_major && minor < s.min_minor))) {
      continue;
    }
    out.push_back(s.name);
  }
  return out;
}

absl::Status SysctlAllowlist::Add(const std::string& pattern) {
  if (!api::IsValidSysctlPattern(pattern)) {
    return absl::InvalidArgumentError(
        absl::StrCat("sysctl \"", pattern,
                     "\" must have at most 253 characters and match regex "
                     "([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]"));
  }
  std::string s = api::NormalizeSysctlName(pattern);
  if (absl::EndsWith(s, "*")) {
    std::string prefix = s.substr(0, s.size() - 1);
    const api::SysctlNamespace ns = api::SysctlNamespaceOf(prefix);
    if (ns == api::SysctlNamespace::kUnknown) {
      return absl::InvalidArgumentError(
          absl::StrCat("the sysctls \"", s, "\" are not known to be namespaced"));
    }
    prefixes_[prefix] = ns;
  } else {
    const api::SysctlNamespace ns = api::SysctlNamespaceOf(s);
    if (ns == api::SysctlNamespace::kUnknown) {
      return absl::InvalidArgumentError(
          absl::StrCat("the sysctl \"", s, "\" are not known to be namespaced"));
    }
    names_[s] = ns;
  }
  return absl::OkStatus();
}

absl::StatusOr<SysctlAllowlist> SysctlAllowlist::Create(
    std::string_view kernel_release, const std::vector<std::string>& allowed_unsafe) {
  SysctlAllowlist w;
  w.names_.clear();
  for (const std::string& s : SafeSysctls(kernel_release)) {
    if (absl::Status st = w.Add(s); !st.ok()) return st;
  }
  for (const std::string& s : allowed_unsafe) {
    if (absl::Status st = w.Add(s); !st.ok()) return st;
  }
  return w;
}

AdmitResult SysctlAllowlist::Admit(const api::Pod& pod) const {
  if (!pod.spec.security_context) return {};
  for (const api::Sysctl& sysctl : pod.spec.security_context->sysctls) {
    const std::string name = api::NormalizeSysctlName(sysctl.name);
    std::optional<api::SysctlNamespace> ns;
    if (auto it = names_.find(name); it != names_.end()) {
      ns = it->second;
    } else {
      for (const auto& [prefix, pns] : prefixes_) {
        if (absl::StartsWith(name, prefix)) {
          ns = pns;
          break;
        }
      }
    }
    std::string why;
    if (!ns) {
      why = absl::StrCat("\"", name, "\" not allowlisted");
    } else if ((*ns == api::SysctlNamespace::kIPC && pod.spec.host_ipc) ||
               (*ns == api::SysctlNamespace::kNet && pod.spec.host_network)) {
      why = absl::StrCat("\"", name, "\" not allowed with host ", AV(api::SysctlNamespaceName(*ns)),
                         " enabled");
    }
    if (!why.empty()) return {false, "SysctlForbidden", "forbidden sysctl: " + why};
  }
  return {};
}

}  // namespace kubelet
