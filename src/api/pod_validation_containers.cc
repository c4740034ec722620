// Containers, init containers and ephemeral containers: names, image, ports, env/envFrom, volume
// mounts and devices, pull policy, resizePolicy, probes, lifecycle handlers and host ports.
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/pod_validation_internal.h"

namespace kubelet::api::validation_internal {
namespace {

const Strs kEnvFieldPaths = {
    "metadata.name",           "metadata.namespace", "metadata.uid", "spec.nodeName",
    "spec.serviceAccountName", "status.hostIP",      "status.podIP", "status.podIPs"};

Errs ValidateContainerPorts(const std::vector<ContainerPort>& ports, const std::string& path) {
  Errs e;
  std::set<std::string> names;
  for (size_t i = 0; i < ports.size(); ++i) {
    const ContainerPort& p = ports[i];
    const std::string idx = Idx(path, i);
    if (!p.name.empty()) {
      Strs msgs = IsValidPortName(p.name);
      if (!msgs.empty()) {
        for (auto& m : msgs) e.push_back(InvalidS(Child(idx, "name"), p.name, m));
      } else if (!names.insert(p.name).second) {
        e.push_back(Duplicate(Child(idx, "name"), Q(p.name)));
      }
    }
    if (p.container_port == 0) {
      e.push_back(Required(Child(idx, "containerPort")));
    } else {
      for (auto& m : IsValidPortNum(p.container_port)) {
        e.push_back(InvalidI(Child(idx, "containerPort"), p.container_port, m));
      }
    }
    if (p.host_port != 0) {
      for (auto& m : IsValidPortNum(p.host_port)) {
        e.push_back(InvalidI(Child(idx, "hostPort"), p.host_port, m));
      }
    }
    if (p.protocol.empty()) {
      e.push_back(Required(Child(idx, "protocol")));
    } else if (p.protocol != kProtocolTCP && p.protocol != kProtocolUDP &&
               p.protocol != kProtocolSCTP) {
      e.push_back(NotSupported(Child(idx, "protocol"), Q(p.protocol), {"SCTP", "TCP", "UDP"}));
    }
  }
  return e;
}

Errs ValidateSecretOrConfigMapKeySelector(std::string_view name, std::string_view key,
                                          const std::string& path) {
  Errs e = NameErrs(NameIsDNSSubdomain(name, false), Child(path, "name"), name);
  if (key.empty()) {
    e.push_back(Required(Child(path, "key")));
  } else {
    for (auto& m : IsConfigMapKey(key)) e.push_back(InvalidS(Child(path, "key"), key, m));
  }
  return e;
}

Errs ValidateEnv(const std::vector<EnvVar>& vars, const std::string& path) {
  Errs e;
  for (size_t i = 0; i < vars.size(); ++i) {
    const EnvVar& ev = vars[i];
    const std::string idx = Idx(path, i);
    if (ev.name.empty()) {
      e.push_back(Required(Child(idx, "name")));
    } else {
      for (auto& m : IsEnvVarName(ev.name)) e.push_back(InvalidS(Child(idx, "name"), ev.name, m));
    }
    if (!ev.value_from.has_value()) continue;
    const EnvVarSource& vf = *ev.value_from;
    const std::string vp = Child(idx, "valueFrom");
    int num = 0;
    if (vf.field_ref.has_value()) {
      ++num;
      Append(&e, ValidateObjectFieldSelector(*vf.field_ref, kEnvFieldPaths, Child(vp, "fieldRef")));
    }
    if (vf.resource_field_ref.has_value()) {
      ++num;
      Append(&e, ValidateContainerResourceFieldSelector(*vf.resource_field_ref,
                                                        Child(vp, "resourceFieldRef"), false));
    }
    if (vf.config_map_key_ref.has_value()) {
      ++num;
      Append(&e, ValidateSecretOrConfigMapKeySelector(vf.config_map_key_ref->name,
                                                      vf.config_map_key_ref->key,
                                                      Child(vp, "configMapKeyRef")));
    }
    if (vf.secret_key_ref.has_value()) {
      ++num;
      Append(&e, ValidateSecretOrConfigMapKeySelector(
                     vf.secret_key_ref->name, vf.secret_key_ref->key, Child(vp, "secretKeyRef")));
    }
    if (num == 0) {
      e.push_back(Invalid(vp, Q(""),
                          "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` "
                          "or `secretKeyRef`"));
    } else if (!ev.value.empty()) {
      e.push_back(Invalid(vp, Q(""), "may not be specified when `value` is not empty"));
    } else if (num > 1) {
      e.push_back(Invalid(vp, Q(""), "may not have more than one field specified at a time"));
    }
  }
  return e;
}

Errs ValidateEnvFrom(const std::vector<EnvFromSource>& vars, const std::string& path) {
  Errs e;
  for (size_t i = 0; i < vars.size(); ++i) {
    const EnvFromSource& ev = vars[i];
    const std::string idx = Idx(path, i);
    if (!ev.prefix.empty()) {
      for (auto& m : IsEnvVarName(ev.prefix)) {
        e.push_back(InvalidS(Child(idx, "prefix"), ev.prefix, m));
      }
    }
    int num = 0;
    auto ref = [&](const std::string& name, const std::string& rp) {
      ++num;
      if (name.empty()) {
        e.push_back(Required(Child(rp, "name")));
      } else {
        Append(&e, NameErrs(NameIsDNSSubdomain(name, true), Child(rp, "name"), name));
      }
    };
    if (ev.config_map_ref.has_value()) ref(ev.config_map_ref->name, Child(idx, "configMapRef"));
    if (ev.secret_ref.has_value()) ref(ev.secret_ref->name, Child(idx, "secretRef"));
    if (num == 0) {
      e.push_back(Invalid(path, Q(""), "must specify one of: `configMapRef` or `secretRef`"));
    } else if (num > 1) {
      e.push_back(Invalid(path, Q(""), "may not have more than one field specified at a time"));
    }
  }
  return e;
}

Errs ValidateVolumeMounts(const Container& c, const std::map<std::string, const Volume*>& vols,
                          const std::string& path) {
  Errs e;
  std::map<std::string, std::string> devices;  // name -> devicePath
  for (const auto& d : c.volume_devices) devices[d.name] = d.device_path;
  std::set<std::string> mount_points;
  for (size_t i = 0; i < c.volume_mounts.size(); ++i) {
    const VolumeMount& m = c.volume_mounts[i];
    const std::string idx = Idx(path, i);
    if (m.name.empty()) e.push_back(Required(Child(idx, "name")));
    if (vols.count(m.name) == 0) e.push_back(NotFound(Child(idx, "name"), Q(m.name)));
    if (m.mount_path.empty()) e.push_back(Required(Child(idx, "mountPath")));
    if (!mount_points.insert(m.mount_path).second) {
      e.push_back(InvalidS(Child(idx, "mountPath"), m.mount_path, "must be unique"));
    }
    if (devices.count(m.name) > 0) {
      e.push_back(InvalidS(Child(idx, "name"), m.name, "must not already exist in volumeDevices"));
    }
    for (const auto& [dn, dp] : devices) {
      if (dp == m.mount_path) {
        e.push_back(InvalidS(Child(idx, "mountPath"), m.mount_path,
                             "must not already exist as a path in volumeDevices"));
        break;
      }
    }
    if (!m.sub_path.empty()) {
      Append(&e, ValidateLocalDescendingPath(m.sub_path, Child(path, "subPath")));
    }
    if (!m.sub_path_expr.empty()) {
      if (!m.sub_path.empty()) {
        e.push_back(InvalidS(Child(idx, "subPathExpr"), m.sub_path_expr,
                             "subPathExpr and subPath are mutually exclusive"));
      }
      Append(&e, ValidateLocalDescendingPath(m.sub_path_expr, Child(path, "subPathExpr")));
    }
    if (m.mount_propagation.has_value()) {
      const std::string pp = Child(path, "mountPropagation");
      const std::string& mp = *m.mount_propagation;
      if (mp != "Bidirectional" && mp != "HostToContainer" && mp != "None") {
        e.push_back(NotSupported(pp, Q(mp), {"Bidirectional", "HostToContainer", "None"}));
      }
      const bool privileged =
          c.security_context.has_value() && c.security_context->privileged.value_or(false);
      if (mp == "Bidirectional" && !privileged) {
        e.push_back(Forbidden(
            pp, "Bidirectional mount propagation is available only to privileged containers"));
      }
    }
  }
  return e;
}

Errs ValidateVolumeDevices(const Container& c, const std::map<std::string, const Volume*>& vols,
                           const std::string& path) {
  Errs e;
  std::map<std::string, std::string> mounts;  // name -> mountPath
  for (const auto& m : c.volume_mounts) mounts[m.name] = m.mount_path;
  std::set<std::string> device_paths, device_names;
  for (size_t i = 0; i < c.volume_devices.size(); ++i) {
    const VolumeDevice& d = c.volume_devices[i];
    const std::string idx = Idx(path, i);
    auto it = vols.find(d.name);
    const bool matched = it != vols.end();
    const bool is_pvc = matched && (it->second->persistent_volume_claim.has_value() ||
                                    it->second->other_sources.count("ephemeral") > 0);
    if (d.name.empty()) e.push_back(Required(Child(idx, "name")));
    if (device_names.count(d.name) > 0) {
      e.push_back(InvalidS(Child(idx, "name"), d.name, "must be unique"));
    }
    if (matched && !is_pvc) {
      e.push_back(InvalidS(Child(idx, "name"), d.name,
                           "can only use volume source type of PersistentVolumeClaim or "
                           "Ephemeral for block mode"));
    }
    if (!matched) e.push_back(NotFound(Child(idx, "name"), Q(d.name)));
    if (d.device_path.empty()) e.push_back(Required(Child(idx, "devicePath")));
    if (device_paths.count(d.device_path) > 0) {
      e.push_back(InvalidS(Child(idx, "devicePath"), d.device_path, "must be unique"));
    }
    if (!d.device_path.empty() && !ValidatePathNoBacksteps(d.device_path, path).empty()) {
      e.push_back(
          InvalidS(Child(idx, "devicePath"), d.device_path, "can not contain backsteps ('..')"));
    } else {
      device_paths.insert(d.device_path);
    }
    if (mounts.count(d.name) > 0) {
      e.push_back(InvalidS(Child(idx, "name"), d.name, "must not already exist in volumeMounts"));
    }
    for (const auto& [mn, mp] : mounts) {
      if (mp == d.device_path) {
        e.push_back(InvalidS(Child(idx, "devicePath"), d.device_path,
                             "must not already exist as a path in volumeMounts"));
        break;
      }
    }
    if (!d.name.empty()) device_names.insert(d.name);
  }
  return e;
}

Errs ValidateContainerCommon(const Container& c, const std::map<std::string, const Volume*>& vols,
                             const std::set<std::string>& claim_names, const std::string& path) {
  Errs e;
  const std::string name_path = Child(path, "name");
  if (c.name.empty()) {
    e.push_back(Required(name_path));
  } else {
    Append(&e, ValidateDNS1123Label(c.name, name_path));
  }
  if (c.image.empty()) e.push_back(Required(Child(path, "image")));
  const std::string& tmp = c.termination_message_policy;
  if (tmp.empty()) {
    e.push_back(Required(Child(path, "terminationMessagePolicy")));
  } else if (tmp != kTerminationMessageReadFile &&
             tmp != kTerminationMessageFallbackToLogsOnError) {
    e.push_back(NotSupported(Child(path, "terminationMessagePolicy"), Q(tmp),
                             {"File", "FallbackToLogsOnError"}));
  }
  Append(&e, ValidateContainerPorts(c.ports, Child(path, "ports")));
  Append(&e, ValidateEnv(c.env, Child(path, "env")));
  Append(&e, ValidateEnvFrom(c.env_from, Child(path, "envFrom")));
  Append(&e, ValidateVolumeMounts(c, vols, Child(path, "volumeMounts")));
  Append(&e, ValidateVolumeDevices(c, vols, Child(path, "volumeDevices")));
  const std::string& pp = c.image_pull_policy;
  if (pp.empty()) {
    e.push_back(Required(Child(path, "imagePullPolicy")));
  } else if (pp != kPullAlways && pp != kPullIfNotPresent && pp != kPullNever) {
    e.push_back(
        NotSupported(Child(path, "imagePullPolicy"), Q(pp), {"Always", "IfNotPresent", "Never"}));
  }
  Append(&e, ValidateResourceRequirements(c.resources, claim_names, Child(path, "resources")));
  // validateResizePolicy.
  const std::string rp = Child(path, "resizePolicy");
  std::set<std::string> resize_resources;
  for (size_t i = 0; i < c.resize_policy.size(); ++i) {
    const ContainerResizePolicy& p = c.resize_policy[i];
    if (!resize_resources.insert(p.resource_name).second) {
      e.push_back(Duplicate(Idx(rp, i), Q(p.resource_name)));
    }
    if (p.resource_name.empty()) {
      e.push_back(Required(rp));
    } else if (p.resource_name != kResourceCPU && p.resource_name != kResourceMemory) {
      e.push_back(NotSupported(rp, Q(p.resource_name), {"cpu", "memory"}));
    }
    if (p.restart_policy.empty()) {
      e.push_back(Required(rp));
    } else if (p.restart_policy != "NotRequired" && p.restart_policy != "RestartContainer") {
      e.push_back(NotSupported(rp, Q(p.restart_policy), {"NotRequired", "RestartContainer"}));
    }
  }
  Append(&e, ValidateSecurityContext(c.security_context, Child(path, "securityContext")));
  return e;
}

Errs ValidatePortNumOrName(const IntOrString& port, const std::string& path) {
  Errs e;
  if (port.is_string()) {
    for (auto& m : IsValidPortName(port.str_val)) e.push_back(InvalidS(path, port.str_val, m));
  } else {
    for (auto& m : IsValidPortNum(port.int_val)) e.push_back(InvalidI(path, port.int_val, m));
  }
  return e;
}

Errs ValidateHandler(const std::optional<ExecAction>& exec,
                     const std::optional<HTTPGetAction>& http_get,
                     const std::optional<TCPSocketAction>& tcp,
                     const std::optional<GRPCAction>* grpc, const std::string& path) {
  Errs e;
  int num = 0;
  if (exec.has_value()) {
    ++num;
    if (exec->command.empty()) e.push_back(Required(Child(Child(path, "exec"), "command")));
  }
  if (http_get.has_value()) {
    const std::string hp = Child(path, "httpGet");
    if (num > 0) {
      e.push_back(Forbidden(hp, "may not specify more than 1 handler type"));
    } else {
      ++num;
      if (http_get->path.empty()) e.push_back(Required(Child(hp, "path")));
      Append(&e, ValidatePortNumOrName(http_get->port, Child(hp, "port")));
      if (http_get->scheme != "HTTP" && http_get->scheme != "HTTPS") {
        e.push_back(NotSupported(Child(hp, "scheme"), Q(http_get->scheme), {"HTTP", "HTTPS"}));
      }
      for (const auto& h : http_get->http_headers) {
        for (auto& m : IsHTTPHeaderName(h.name)) {
          e.push_back(InvalidS(Child(hp, "httpHeaders"), h.name, m));
        }
      }
    }
  }
  if (tcp.has_value()) {
    const std::string tp = Child(path, "tcpSocket");
    if (num > 0) {
      e.push_back(Forbidden(tp, "may not specify more than 1 handler type"));
    } else {
      ++num;
      Append(&e, ValidatePortNumOrName(tcp->port, Child(tp, "port")));
    }
  }
  if (grpc != nullptr && grpc->has_value()) {
    const std::string gp = Child(path, "grpc");
    if (num > 0) {
      e.push_back(Forbidden(gp, "may not specify more than 1 handler type"));
    } else {
      ++num;
      Append(&e, ValidatePortNumOrName(IntOrString::FromInt((*grpc)->port), Child(gp, "port")));
    }
  }
  if (num == 0) e.push_back(Required(path, "must specify a handler type"));
  return e;
}

Errs ValidateProbe(const Probe& p, const std::string& path) {
  Errs e = ValidateHandler(p.exec, p.http_get, p.tcp_socket, &p.grpc, path);
  const std::pair<const char*, int32_t> fields[] = {
      {"initialDelaySeconds", p.initial_delay_seconds},
      {"timeoutSeconds", p.timeout_seconds},
      {"periodSeconds", p.period_seconds},
      {"successThreshold", p.success_threshold},
      {"failureThreshold", p.failure_threshold},
  };
  for (const auto& [name, v] : fields) {
    if (v < 0) e.push_back(InvalidI(Child(path, name), v, kIsNegativeErrorMsg));
  }
  if (p.termination_grace_period_seconds.has_value() && *p.termination_grace_period_seconds <= 0) {
    e.push_back(InvalidI(Child(path, "terminationGracePeriodSeconds"),
                         *p.termination_grace_period_seconds, "must be greater than 0"));
  }
  return e;
}

Errs ValidateLivenessOrStartupProbe(const Box<Probe>& p, const std::string& path) {
  if (!p.has_value()) return {};
  Errs e = ValidateProbe(*p, path);
  if (p->success_threshold != 1) {
    e.push_back(InvalidI(Child(path, "successThreshold"), p->success_threshold, "must be 1"));
  }
  return e;
}

Errs ValidateReadinessProbe(const Box<Probe>& p, const std::string& path) {
  if (!p.has_value()) return {};
  Errs e = ValidateProbe(*p, path);
  if (p->termination_grace_period_seconds.has_value()) {
    e.push_back(InvalidI(Child(path, "terminationGracePeriodSeconds"),
                         *p->termination_grace_period_seconds,
                         "must not be set for readinessProbes"));
  }
  return e;
}

Errs ValidateLifecycle(const Lifecycle& l, const std::string& path) {
  Errs e;
  if (l.post_start.has_value()) {
    Append(&e, ValidateHandler(l.post_start->exec, l.post_start->http_get, l.post_start->tcp_socket,
                               nullptr, Child(path, "postStart")));
  }
  if (l.pre_stop.has_value()) {
    Append(&e, ValidateHandler(l.pre_stop->exec, l.pre_stop->http_get, l.pre_stop->tcp_socket,
                               nullptr, Child(path, "preStop")));
  }
  return e;
}

// AccumulateUniqueHostPorts over `containers`, reported under `path` (as upstream, the init
// container check passes a one-element slice, so indices restart at 0).
Errs CheckHostPortConflicts(const std::vector<const Container*>& containers,
                            const std::string& path) {
  Errs e;
  std::set<std::string> seen;
  for (size_t ci = 0; ci < containers.size(); ++ci) {
    const Container& c = *containers[ci];
    for (size_t pi = 0; pi < c.ports.size(); ++pi) {
      const ContainerPort& p = c.ports[pi];
      if (p.host_port == 0) continue;
      const std::string key = absl::StrCat(p.protocol, "/", p.host_ip, "/", p.host_port);
      if (!seen.insert(key).second) {
        e.push_back(Duplicate(Child(Idx(Child(Idx(path, ci), "ports"), pi), "hostPort"), Q(key)));
      }
    }
  }
  return e;
}

}  // namespace

Errs ValidateContainers(const std::vector<Container>& containers,
                        const std::map<std::string, const Volume*>& vols,
                        const std::set<std::string>& claim_names, const std::string& path) {
  if (containers.empty()) return {Required(path)};
  Errs e;
  std::set<std::string> names;
  std::vector<const Container*> all;
  for (size_t i = 0; i < containers.size(); ++i) {
    const Container& c = containers[i];
    const std::string p = Idx(path, i);
    all.push_back(&c);
    Append(&e, ValidateContainerCommon(c, vols, claim_names, p));
    if (!names.insert(c.name).second) e.push_back(Duplicate(Child(p, "name"), Q(c.name)));
    if (c.lifecycle.has_value()) Append(&e, ValidateLifecycle(*c.lifecycle, Child(p, "lifecycle")));
    Append(&e, ValidateLivenessOrStartupProbe(c.liveness_probe, Child(p, "livenessProbe")));
    Append(&e, ValidateReadinessProbe(c.readiness_probe, Child(p, "readinessProbe")));
    Append(&e, ValidateLivenessOrStartupProbe(c.startup_probe, Child(p, "startupProbe")));
    if (c.restart_policy.has_value()) {
      e.push_back(Forbidden(Child(p, "restartPolicy"), "may not be set for non-init containers"));
    }
  }
  Append(&e, CheckHostPortConflicts(all, path));
  return e;
}

Errs ValidateInitContainers(const std::vector<Container>& containers,
                            const std::vector<Container>& regular,
                            const std::map<std::string, const Volume*>& vols,
                            const std::set<std::string>& claim_names, const std::string& path) {
  Errs e;
  std::set<std::string> names;
  for (const auto& c : regular) names.insert(c.name);
  for (size_t i = 0; i < containers.size(); ++i) {
    const Container& c = containers[i];
    const std::string p = Idx(path, i);
    Append(&e, ValidateContainerCommon(c, vols, claim_names, p));
    bool restart_always = false;
    if (c.restart_policy.has_value()) {
      if (*c.restart_policy != kContainerRestartPolicyAlways) {
        e.push_back(NotSupported(Child(p, "restartPolicy"), Q(*c.restart_policy), {"Always"}));
      }
      restart_always = *c.restart_policy == kContainerRestartPolicyAlways;
    }
    if (names.count(c.name) > 0) {
      e.push_back(Duplicate(Child(p, "name"), Q(c.name)));
    } else if (!c.name.empty()) {
      names.insert(c.name);
    }
    Append(&e, CheckHostPortConflicts({&c}, path));
    if (c.lifecycle.has_value()) {
      e.push_back(Forbidden(Child(p, "lifecycle"), "may not be set for init containers"));
    }
    if (c.readiness_probe.has_value()) {
      e.push_back(Forbidden(Child(p, "readinessProbe"), "may not be set for init containers"));
    }
    if (restart_always) {
      Append(&e, ValidateLivenessOrStartupProbe(c.liveness_probe, Child(p, "livenessProbe")));
      Append(&e, ValidateLivenessOrStartupProbe(c.startup_probe, Child(p, "startupProbe")));
    } else {
      if (c.liveness_probe.has_value()) {
        e.push_back(Forbidden(Child(p, "livenessProbe"), "may not be set for init containers"));
      }
      if (c.startup_probe.has_value()) {
        e.push_back(Forbidden(Child(p, "startupProbe"), "may not be set for init containers"));
      }
    }
    if (!c.resize_policy.empty()) {
      e.push_back(
          Invalid(Child(p, "resizePolicy"), "[...]", "must not be set for init containers"));
    }
  }
  return e;
}

Errs ValidateEphemeralContainers(const PodSpec& spec,
                                 const std::map<std::string, const Volume*>& vols,
                                 const std::set<std::string>& claim_names,
                                 const std::string& path) {
  Errs e;
  if (spec.ephemeral_containers.empty()) return e;
  std::set<std::string> other, all;
  for (const auto& c : spec.containers) other.insert(c.name);
  for (const auto& c : spec.init_containers) other.insert(c.name);
  all = other;
  for (size_t i = 0; i < spec.ephemeral_containers.size(); ++i) {
    const EphemeralContainer& ec = spec.ephemeral_containers[i];
    const Container& c = ec.common;
    const std::string p = Idx(path, i);
    Append(&e, ValidateContainerCommon(c, vols, claim_names, p));
    if (c.image.size() != std::string(absl::StripAsciiWhitespace(c.image)).size()) {
      e.push_back(
          InvalidS(Child(p, "image"), c.image, "must not have leading or trailing whitespace"));
    }
    if (!all.insert(c.name).second) e.push_back(Duplicate(Child(p, "name"), Q(c.name)));
    if (!ec.target_container_name.empty() && other.count(ec.target_container_name) == 0) {
      e.push_back(NotFound(Child(p, "targetContainerName"), Q(ec.target_container_name)));
    }
    const char* kForbidden = "cannot be set for an Ephemeral Container";
    if (!c.ports.empty()) e.push_back(Forbidden(Child(p, "ports"), kForbidden));
    if (!(c.resources == ResourceRequirements{})) {
      e.push_back(Forbidden(Child(p, "resources"), kForbidden));
    }
    if (!c.resize_policy.empty()) e.push_back(Forbidden(Child(p, "resizePolicy"), kForbidden));
    if (c.restart_policy.has_value()) e.push_back(Forbidden(Child(p, "restartPolicy"), kForbidden));
    if (c.liveness_probe.has_value()) e.push_back(Forbidden(Child(p, "livenessProbe"), kForbidden));
    if (c.readiness_probe.has_value()) {
      e.push_back(Forbidden(Child(p, "readinessProbe"), kForbidden));
    }
    if (c.startup_probe.has_value()) e.push_back(Forbidden(Child(p, "startupProbe"), kForbidden));
    if (c.lifecycle.has_value()) e.push_back(Forbidden(Child(p, "lifecycle"), kForbidden));
    for (size_t j = 0; j < c.volume_mounts.size(); ++j) {
      const std::string mp = Idx(Child(p, "volumeMounts"), j);
      if (!c.volume_mounts[j].sub_path.empty()) {
        e.push_back(Forbidden(Child(mp, "subPath"), kForbidden));
      }
      if (!c.volume_mounts[j].sub_path_expr.empty()) {
        e.push_back(Forbidden(Child(mp, "subPathExpr"), kForbidden));
      }
    }
  }
  return e;
}

}  // namespace kubelet::api::validation_internal
