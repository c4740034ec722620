// Pod spec level fields: pod and container security contexts (seccompProfile, sysctls),
// tolerations, DNS policy/config, resource claims, and the rest of the PodSpec.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/pod_validation_internal.h"
#include "api/sysctl.h"

namespace kubelet::api::validation_internal {
namespace {

Errs ValidateSeccompProfileField(const std::optional<SeccompProfile>& sp, const std::string& path) {
  if (!sp.has_value()) return {};
  Errs e;
  const std::string& t = sp->type;
  if (t.empty()) {
    e.push_back(Required(Child(path, "type"), "type is required when seccompProfile is set"));
  } else if (t != "Localhost" && t != "RuntimeDefault" && t != "Unconfined") {
    e.push_back(
        NotSupported(Child(path, "type"), Q(t), {"Localhost", "RuntimeDefault", "Unconfined"}));
  }
  if (t == "Localhost") {
    if (!sp->localhost_profile.has_value()) {
      e.push_back(
          Required(Child(path, "localhostProfile"), "must be set when seccomp type is Localhost"));
    } else {
      Append(&e,
             ValidateLocalDescendingPath(*sp->localhost_profile, Child(path, "localhostProfile")));
    }
  } else if (sp->localhost_profile.has_value()) {
    e.push_back(Invalid(Child(path, "localhostProfile"), "{...}",
                        "can only be set when seccomp type is Localhost"));
  }
  return e;
}

Errs ValidatePodSecurityContext(const PodSpec& spec, const std::string& spec_path) {
  Errs e;
  const std::string path = Child(spec_path, "securityContext");
  const PodSecurityContext sc = spec.security_context.value_or(PodSecurityContext{});
  if (sc.fs_group.has_value()) {
    for (auto& m : IsValidUserID(*sc.fs_group))
      e.push_back(InvalidI(Child(path, "fsGroup"), *sc.fs_group, m));
  }
  if (sc.run_as_user.has_value()) {
    for (auto& m : IsValidUserID(*sc.run_as_user)) {
      e.push_back(InvalidI(Child(path, "runAsUser"), *sc.run_as_user, m));
    }
  }
  if (sc.run_as_group.has_value()) {
    for (auto& m : IsValidUserID(*sc.run_as_group)) {
      e.push_back(InvalidI(Child(path, "runAsGroup"), *sc.run_as_group, m));
    }
  }
  for (size_t g = 0; g < sc.supplemental_groups.size(); ++g) {
    for (auto& m : IsValidUserID(sc.supplemental_groups[g])) {
      e.push_back(
          InvalidI(Idx(Child(path, "supplementalGroups"), g), sc.supplemental_groups[g], m));
    }
  }
  if (spec.share_process_namespace.value_or(false) && spec.host_pid) {
    e.push_back(Invalid(Child(path, "shareProcessNamespace"), "true",
                        "ShareProcessNamespace and HostPID cannot both be enabled"));
  }
  if (!sc.sysctls.empty()) {
    const std::string sp = Child(path, "sysctls");
    std::set<std::string> names;
    for (size_t i = 0; i < sc.sysctls.size(); ++i) {
      const std::string& n = sc.sysctls[i].name;
      const std::string np = Child(Idx(sp, i), "name");
      if (n.empty()) {
        e.push_back(Required(np));
      } else if (!IsValidSysctlName(n)) {
        e.push_back(
            InvalidS(np, n,
                     "must have at most 253 characters and match regex "
                     "^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"));
      } else if (names.count(n) > 0) {
        e.push_back(Duplicate(np, Q(n)));
      }
      const SysctlNamespace ns = SysctlNamespaceOf(n);
      if (spec.host_network && ns == SysctlNamespace::kNet) {
        e.push_back(InvalidS(np, n, "may not be specified when 'hostNetwork' is true"));
      } else if (spec.host_ipc && ns == SysctlNamespace::kIPC) {
        e.push_back(InvalidS(np, n, "may not be specified when 'hostIPC' is true"));
      }
      names.insert(n);
    }
  }
  if (sc.fs_group_change_policy.has_value() && *sc.fs_group_change_policy != "OnRootMismatch" &&
      *sc.fs_group_change_policy != "Always") {
    e.push_back(NotSupported(Child(path, "fsGroupChangePolicy"), Q(*sc.fs_group_change_policy),
                             {"Always", "OnRootMismatch"}));
  }
  Append(&e, ValidateSeccompProfileField(sc.seccomp_profile, Child(path, "seccompProfile")));
  return e;
}

Errs ValidateTolerations(const std::vector<Toleration>& tols, const std::string& path) {
  Errs e;
  for (size_t i = 0; i < tols.size(); ++i) {
    const Toleration& t = tols[i];
    const std::string idx = Idx(path, i);
    if (!t.key.empty()) Append(&e, ValidateQualifiedName(t.key, Child(idx, "key")));
    if (t.key.empty() && t.operator_ != "Exists") {
      e.push_back(InvalidS(Child(idx, "operator"), t.operator_,
                           "operator must be Exists when `key` is empty, which means \"match all "
                           "values and all keys\""));
    }
    if (t.toleration_seconds.has_value() && t.effect != "NoExecute") {
      e.push_back(InvalidS(Child(idx, "effect"), t.effect,
                           "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (t.operator_ == "Equal" || t.operator_.empty()) {
      Strs msgs = IsValidLabelValue(t.value);
      if (!msgs.empty()) {
        e.push_back(InvalidS(Child(idx, "operator"), t.value, absl::StrJoin(msgs, ";")));
      }
    } else if (t.operator_ == "Exists") {
      if (!t.value.empty()) {
        e.push_back(InvalidS(Child(idx, "operator"), t.value,
                             "value must be empty when `operator` is 'Exists'"));
      }
    } else {
      e.push_back(NotSupported(Child(idx, "operator"), Q(t.operator_), {"Equal", "Exists"}));
    }
    if (!t.effect.empty() && t.effect != "NoSchedule" && t.effect != "PreferNoSchedule" &&
        t.effect != "NoExecute") {
      e.push_back(NotSupported(Child(idx, "effect"), Q(t.effect),
                               {"NoSchedule", "PreferNoSchedule", "NoExecute"}));
    }
  }
  return e;
}

Errs ValidateDNSConfig(const PodSpec& spec, const std::string& path) {
  Errs e;
  const auto& cfg = spec.dns_config;
  if (spec.dns_policy == kDNSNone) {
    if (!cfg.has_value()) {
      return {Required(path, "must provide `dnsConfig` when `dnsPolicy` is None")};
    }
    if (cfg->nameservers.empty()) {
      return {Required(Child(path, "nameservers"),
                       "must provide at least one DNS nameserver when `dnsPolicy` is None")};
    }
  }
  if (!cfg.has_value()) return e;
  if (cfg->nameservers.size() > 3) {
    e.push_back(
        Invalid(Child(path, "nameservers"), "[...]", "must not have more than 3 nameservers"));
  }
  for (size_t i = 0; i < cfg->nameservers.size(); ++i) {
    for (auto& m : IsValidIP(cfg->nameservers[i])) {
      e.push_back(InvalidS(Idx(Child(path, "nameservers"), i), cfg->nameservers[i], m));
    }
  }
  if (cfg->searches.size() > 32) {
    e.push_back(
        Invalid(Child(path, "searches"), "[...]", "must not have more than 32 search paths"));
  }
  if (absl::StrJoin(cfg->searches, " ").size() > 2048) {
    e.push_back(Invalid(Child(path, "searches"), "[...]",
                        "must not have more than 2048 characters (including spaces) in the search "
                        "list"));
  }
  for (size_t i = 0; i < cfg->searches.size(); ++i) {
    std::string s = cfg->searches[i];
    if (!s.empty() && s.back() == '.') s.pop_back();
    Append(&e, ValidateDNS1123Subdomain(s, Idx(Child(path, "searches"), i)));
  }
  for (size_t i = 0; i < cfg->options.size(); ++i) {
    if (cfg->options[i].name.empty()) {
      e.push_back(Required(Idx(Child(path, "options"), i), "must not be empty"));
    }
  }
  return e;
}

Errs ValidatePodResourceClaims(const PodSpec& spec, const ObjectMeta& meta,
                               const std::string& path) {
  Errs e;
  std::set<std::string> names;
  for (size_t i = 0; i < spec.resource_claims.size(); ++i) {
    const PodResourceClaim& c = spec.resource_claims[i];
    const std::string idx = Idx(path, i);
    const std::string np = Child(idx, "name");
    if (c.name.empty()) {
      e.push_back(Required(np));
    } else if (names.count(c.name) > 0) {
      e.push_back(Duplicate(np, Q(c.name)));
    } else {
      Errs ne = ValidateDNS1123Label(c.name, np);
      if (!ne.empty()) {
        Append(&e, std::move(ne));
      } else if (c.source.resource_claim_template_name.has_value()) {
        const std::string claim = meta.name + "-" + c.name;
        for (auto& m : IsDNS1123Subdomain(claim)) {
          e.push_back(InvalidS(np, claim, "final ResourceClaim name: " + m));
        }
      }
      names.insert(c.name);
    }
    const std::string sp = Child(idx, "source");
    const auto& src = c.source;
    if (src.resource_claim_name.has_value() && src.resource_claim_template_name.has_value()) {
      e.push_back(Invalid(sp, "{...}",
                          "at most one of `resourceClaimName` or `resourceClaimTemplateName` may "
                          "be specified"));
    }
    if (!src.resource_claim_name.has_value() && !src.resource_claim_template_name.has_value()) {
      e.push_back(Invalid(sp, "{...}",
                          "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"));
    }
    if (src.resource_claim_name.has_value()) {
      Append(&e, NameErrs(IsDNS1123Subdomain(*src.resource_claim_name),
                          Child(sp, "resourceClaimName"), *src.resource_claim_name));
    }
    if (src.resource_claim_template_name.has_value()) {
      Append(&e,
             NameErrs(IsDNS1123Subdomain(*src.resource_claim_template_name),
                      Child(sp, "resourceClaimTemplateName"), *src.resource_claim_template_name));
    }
  }
  return e;
}

}  // namespace

Errs ValidateSecurityContext(const Box<SecurityContext>& sc, const std::string& path) {
  if (!sc.has_value()) return {};
  Errs e;
  // The kubelet runs with capabilities.AllowPrivileged = true, so privileged is allowed.
  if (sc->run_as_user.has_value()) {
    for (auto& m : IsValidUserID(*sc->run_as_user)) {
      e.push_back(InvalidI(Child(path, "runAsUser"), *sc->run_as_user, m));
    }
  }
  if (sc->run_as_group.has_value()) {
    for (auto& m : IsValidUserID(*sc->run_as_group)) {
      e.push_back(InvalidI(Child(path, "runAsGroup"), *sc->run_as_group, m));
    }
  }
  if (sc->proc_mount.has_value() && *sc->proc_mount != "Default" && *sc->proc_mount != "Unmasked") {
    e.push_back(
        NotSupported(Child(path, "procMount"), Q(*sc->proc_mount), {"Default", "Unmasked"}));
  }
  Append(&e, ValidateSeccompProfileField(sc->seccomp_profile, Child(path, "seccompProfile")));
  if (sc->allow_privilege_escalation.has_value() && !*sc->allow_privilege_escalation) {
    if (sc->privileged.value_or(false)) {
      e.push_back(
          Invalid(path, "{...}",
                  "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"));
    }
    if (sc->capabilities.has_value()) {
      for (const auto& cap : sc->capabilities->add) {
        if (cap == "CAP_SYS_ADMIN") {
          e.push_back(Invalid(path, "{...}",
                              "cannot set `allowPrivilegeEscalation` to false and "
                              "`capabilities.Add` CAP_SYS_ADMIN"));
        }
      }
    }
  }
  return e;
}

Errs ValidatePodSpec(const PodSpec& spec, const ObjectMeta& meta, const std::string& path) {
  Errs e;
  if (!spec.termination_grace_period_seconds.has_value()) {
    e.push_back(Required(Child(path, "terminationGracePeriodSeconds")));
  }
  const auto vols = ValidateVolumes(spec.volumes, Child(path, "volumes"), &e);
  std::set<std::string> claim_names;
  for (const auto& c : spec.resource_claims) {
    if (!c.name.empty()) claim_names.insert(c.name);
  }
  Append(&e, ValidatePodResourceClaims(spec, meta, Child(path, "resourceClaims")));
  Append(&e, ValidateContainers(spec.containers, vols, claim_names, Child(path, "containers")));
  Append(&e, ValidateInitContainers(spec.init_containers, spec.containers, vols, claim_names,
                                    Child(path, "initContainers")));
  Append(&e,
         ValidateEphemeralContainers(spec, vols, claim_names, Child(path, "ephemeralContainers")));
  // validatePodHostNetworkDeps (ResourceIsPod is false in the kubelet's options).
  if (spec.host_network) {
    for (size_t i = 0; i < spec.containers.size(); ++i) {
      const auto& ports = spec.containers[i].ports;
      for (size_t j = 0; j < ports.size(); ++j) {
        if (ports[j].host_port != 0 && ports[j].host_port != ports[j].container_port) {
          e.push_back(InvalidI(
              Child(Idx(Child(Idx(Child(path, "containers"), i), "ports"), j), "hostPort"),
              ports[j].host_port, "must match `containerPort` when `hostNetwork` is true"));
        }
      }
    }
  }
  const std::string& rp = spec.restart_policy;
  if (rp.empty()) {
    e.push_back(Required(Child(path, "restartPolicy")));
  } else if (rp != kRestartPolicyAlways && rp != kRestartPolicyOnFailure &&
             rp != kRestartPolicyNever) {
    e.push_back(
        NotSupported(Child(path, "restartPolicy"), Q(rp), {"Always", "OnFailure", "Never"}));
  }
  const std::string& dp = spec.dns_policy;
  if (dp.empty()) {
    e.push_back(Required(Child(path, "dnsPolicy")));
  } else if (dp != kDNSClusterFirstWithHostNet && dp != kDNSClusterFirst && dp != kDNSDefault &&
             dp != kDNSNone) {
    e.push_back(NotSupported(Child(path, "dnsPolicy"), Q(dp),
                             {"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"}));
  }
  Append(&e, ValidateLabels(spec.node_selector, Child(path, "nodeSelector")));
  Append(&e, ValidatePodSecurityContext(spec, path));
  // validateImagePullSecrets: only name can be set, which our model enforces.
  Append(&e, ValidateDNSConfig(spec, Child(path, "dnsConfig")));
  for (size_t i = 0; i < spec.readiness_gates.size(); ++i) {
    Append(&e,
           ValidateQualifiedName(spec.readiness_gates[i].condition_type,
                                 Child(Idx(Child(path, "readinessGates"), i), "conditionType")));
  }
  std::set<std::string> gates;
  for (size_t i = 0; i < spec.scheduling_gates.size(); ++i) {
    const std::string gp = Idx(Child(path, "schedulingGates"), i);
    Append(&e, ValidateQualifiedName(spec.scheduling_gates[i].name, gp));
    if (!gates.insert(spec.scheduling_gates[i].name).second) {
      e.push_back(Duplicate(gp, Q(spec.scheduling_gates[i].name)));
    }
  }
  // validateHostUsers.
  if (spec.host_users.has_value() && !*spec.host_users) {
    const char* msg = "when `pod.Spec.HostUsers` is false";
    if (spec.host_network) e.push_back(Forbidden(Child(path, "hostNetwork"), msg));
    if (spec.host_pid) e.push_back(Forbidden(Child(path, "HostPID"), msg));
    if (spec.host_ipc) e.push_back(Forbidden(Child(path, "HostIPC"), msg));
  }
  if (!spec.service_account_name.empty()) {
    Append(&e, NameErrs(NameIsDNSSubdomain(spec.service_account_name, false),
                        Child(path, "serviceAccountName"), spec.service_account_name));
  }
  if (!spec.node_name.empty()) {
    Append(&e, NameErrs(NameIsDNSSubdomain(spec.node_name, false), Child(path, "nodeName"),
                        spec.node_name));
  }
  if (spec.active_deadline_seconds.has_value()) {
    const int64_t v = *spec.active_deadline_seconds;
    if (v < 1 || v > kMaxInt32) {
      e.push_back(InvalidI(Child(path, "activeDeadlineSeconds"), v,
                           absl::StrCat("must be between 1 and ", kMaxInt32, ", inclusive")));
    }
  }
  if (!spec.hostname.empty())
    Append(&e, ValidateDNS1123Label(spec.hostname, Child(path, "hostname")));
  if (!spec.subdomain.empty()) {
    Append(&e, ValidateDNS1123Label(spec.subdomain, Child(path, "subdomain")));
  }
  if (!spec.tolerations.empty()) {
    Append(&e, ValidateTolerations(spec.tolerations, Child(path, "tolerations")));
  }
  for (size_t i = 0; i < spec.host_aliases.size(); ++i) {
    const std::string hp = Idx(Child(path, "hostAliases"), i);
    for (auto& m : IsValidIP(spec.host_aliases[i].ip)) {
      e.push_back(InvalidS(Child(hp, "ip"), spec.host_aliases[i].ip, m));
    }
    for (size_t j = 0; j < spec.host_aliases[i].hostnames.size(); ++j) {
      Append(&e, ValidateDNS1123Subdomain(spec.host_aliases[i].hostnames[j],
                                          Idx(Child(hp, "hostnames"), j)));
    }
  }
  if (!spec.priority_class_name.empty()) {
    Append(&e, NameErrs(NameIsDNSSubdomain(spec.priority_class_name, false),
                        Child(path, "priorityClassName"), spec.priority_class_name));
  }
  if (spec.runtime_class_name.has_value()) {
    Append(&e, NameErrs(NameIsDNSSubdomain(*spec.runtime_class_name, false),
                        Child(path, "runtimeClassName"), *spec.runtime_class_name));
  }
  if (spec.preemption_policy.has_value()) {
    const std::string& pp = *spec.preemption_policy;
    if (pp.empty()) {
      e.push_back(Required(Child(path, "preemptionPolicy")));
    } else if (pp != "PreemptLowerPriority" && pp != "Never") {
      e.push_back(
          NotSupported(Child(path, "preemptionPolicy"), Q(pp), {"PreemptLowerPriority", "Never"}));
    }
  }
  if (!spec.overhead.empty()) {
    ResourceRequirements r;
    r.limits = spec.overhead;
    Append(&e, ValidateResourceRequirements(r, {}, Child(path, "overhead")));
  }
  if (spec.os.has_value()) {
    const std::string op = Child(path, "os");
    if (spec.os->name.empty()) {
      e.push_back(Required(Child(op, "name"), "cannot be empty"));
    } else if (spec.os->name != "linux" && spec.os->name != "windows") {
      e.push_back(NotSupported(op, Q(spec.os->name), {"linux", "windows"}));
    } else if (spec.os->name == "linux") {
      if (spec.security_context.has_value() && spec.security_context->windows_options.has_value()) {
        e.push_back(Forbidden(Child(Child(path, "securityContext"), "windowsOptions"),
                              "windows options cannot be set for a linux pod"));
      }
      auto visit = [&](const Container& c, const std::string& cp) {
        if (c.security_context.has_value() && c.security_context->windows_options.has_value()) {
          e.push_back(Forbidden(Child(Child(cp, "securityContext"), "windowsOptions"),
                                "windows options cannot be set for a linux pod"));
        }
      };
      for (size_t i = 0; i < spec.init_containers.size(); ++i) {
        visit(spec.init_containers[i], Idx(Child(path, "initContainers"), i));
      }
      for (size_t i = 0; i < spec.containers.size(); ++i) {
        visit(spec.containers[i], Idx(Child(path, "containers"), i));
      }
    }
  }
  return e;
}

}  // namespace kubelet::api::validation_internal
