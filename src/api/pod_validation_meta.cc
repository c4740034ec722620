// Object metadata (names, namespace, labels, annotations, owner references, finalizers), the
// pod-specific annotations (mirror, deletion cost, seccomp, AppArmor) and ValidatePodCreate.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/pod_validation.h"
#include "api/pod_validation_internal.h"
#include "common/strings.h"

namespace kubelet::api::validation_internal {
namespace {

constexpr size_t kTotalAnnotationSizeLimitB = 256 * (1 << 10);

Errs ValidateAnnotations(const StringMap& annotations, const std::string& path) {
  Errs e;
  size_t total = 0;
  for (const auto& [k, v] : annotations) {
    for (auto& msg : IsQualifiedName(absl::AsciiStrToLower(k))) e.push_back(InvalidS(path, k, msg));
    total += k.size() + v.size();
  }
  if (total > kTotalAnnotationSizeLimitB) e.push_back(TooLong(path, kTotalAnnotationSizeLimitB));
  return e;
}

Errs ValidateOwnerReferences(const std::vector<OwnerReference>& refs, const std::string& path) {
  Errs e;
  std::string first_controller;
  for (const auto& ref : refs) {
    std::string_view version = ref.api_version;
    if (size_t slash = version.find('/'); slash != std::string_view::npos) {
      version = version.substr(slash + 1);
    }
    if (version.empty()) {
      e.push_back(
          InvalidS(Child(path, "apiVersion"), ref.api_version, "version must not be empty"));
    }
    if (ref.kind.empty())
      e.push_back(InvalidS(Child(path, "kind"), ref.kind, "kind must not be empty"));
    if (ref.name.empty())
      e.push_back(InvalidS(Child(path, "name"), ref.name, "name must not be empty"));
    if (ref.uid.empty())
      e.push_back(InvalidS(Child(path, "uid"), ref.uid, "uid must not be empty"));
    if (ref.api_version == "v1" && ref.kind == "Event") {
      e.push_back(Invalid(path, "{...}", "/v1, Kind=Event is disallowed from being an owner"));
    }
    if (ref.controller.value_or(false)) {
      const std::string cur = absl::StrCat(ref.kind, "/", ref.name);
      if (!first_controller.empty()) {
        e.push_back(Invalid(path, "[...]",
                            absl::StrCat("Only one reference can have Controller set to true. "
                                         "Found \"true\" in references for ",
                                         first_controller, " and ", cur)));
      } else {
        first_controller = cur;
      }
    }
  }
  return e;
}

Errs ValidateObjectMeta(const ObjectMeta& m, const std::string& path) {
  Errs e;
  if (!m.generate_name.empty()) {
    Append(&e, NameErrs(NameIsDNSSubdomain(m.generate_name, true), Child(path, "generateName"),
                        m.generate_name));
  }
  if (m.name.empty()) {
    e.push_back(Required(Child(path, "name"), "name or generateName is required"));
  } else {
    Append(&e, NameErrs(NameIsDNSSubdomain(m.name, false), Child(path, "name"), m.name));
  }
  if (m.namespace_.empty()) {
    e.push_back(Required(Child(path, "namespace")));
  } else {
    Append(&e,
           NameErrs(NameIsDNSLabel(m.namespace_, false), Child(path, "namespace"), m.namespace_));
  }
  if (m.generation < 0) {
    e.push_back(InvalidI(Child(path, "generation"), m.generation, kIsNegativeErrorMsg));
  }
  Append(&e, ValidateLabels(m.labels, Child(path, "labels")));
  Append(&e, ValidateAnnotations(m.annotations, Child(path, "annotations")));
  Append(&e, ValidateOwnerReferences(m.owner_references, Child(path, "ownerReferences")));
  // apimachinery ValidateFinalizers.
  const std::string fin_path = Child(path, "finalizers");
  bool orphan = false, foreground = false;
  for (const auto& f : m.finalizers) {
    Append(&e, ValidateQualifiedName(f, fin_path));
    orphan = orphan || f == "orphan";
    foreground = foreground || f == "foregroundDeletion";
  }
  if (orphan && foreground) {
    e.push_back(
        Invalid(fin_path, "[...]", "finalizer orphan and foregroundDeletion cannot be both set"));
  }
  // core validateKubeFinalizerName.
  for (size_t i = 0; i < m.finalizers.size(); ++i) {
    const std::string& f = m.finalizers[i];
    const std::string p = Idx(fin_path, i);
    Errs fe = ValidateQualifiedName(f, p);
    if (fe.empty() && f.find('/') == std::string::npos && f != "kubernetes" && f != "orphan" &&
        f != "foregroundDeletion") {
      fe.push_back(
          InvalidS(p, f, "name is neither a standard finalizer name nor is it fully qualified"));
    }
    Append(&e, std::move(fe));
  }
  return e;
}

bool PodSpecHasContainer(const PodSpec& spec, std::string_view name) {
  for (const auto& c : spec.init_containers) {
    if (c.name == name) return true;
  }
  for (const auto& c : spec.containers) {
    if (c.name == name) return true;
  }
  for (const auto& c : spec.ephemeral_containers) {
    if (c.common.name == name) return true;
  }
  return false;
}

Errs ValidateSeccompProfileAnnotation(std::string_view p, const std::string& path) {
  if (p == "runtime/default" || p == "docker/default" || p == "unconfined") return {};
  if (absl::StartsWith(AV(p), "localhost/")) {
    Errs e;
    std::string_view rest = p.substr(10);
    if (IsAbsPath(rest)) e.push_back(InvalidS(path, rest, "must be a relative path"));
    for (absl::string_view part : absl::StrSplit(AV(rest), '/')) {
      if (part == "..") {
        e.push_back(InvalidS(path, rest, "must not contain '..'"));
        break;
      }
    }
    return e;
  }
  return {InvalidS(path, p, "must be a valid seccomp profile")};
}

Errs ValidatePodSpecificAnnotations(const StringMap& annotations, const PodSpec& spec,
                                    const std::string& path) {
  Errs e;
  if (auto it = annotations.find("kubernetes.io/config.mirror"); it != annotations.end()) {
    if (spec.node_name.empty()) {
      e.push_back(InvalidS(Key(path, it->first), it->second,
                           "must set spec.nodeName if mirror pod annotation is set"));
    }
  }
  if (auto it = annotations.find("controller.kubernetes.io/pod-deletion-cost");
      it != annotations.end()) {
    const std::string& v = it->second;
    bool ok = !v.empty() && (v[0] == '-' || v == "0" || (v[0] >= '1' && v[0] <= '9'));
    if (ok) {
      int64_t parsed = 0;
      size_t i = v[0] == '-' ? 1 : 0;
      ok = i < v.size();
      for (; ok && i < v.size(); ++i) {
        ok = absl::ascii_isdigit(static_cast<unsigned char>(v[i])) && parsed < 1'000'000'000'000;
        parsed = parsed * 10 + (v[i] - '0');
      }
      if (v[0] == '-') parsed = -parsed;
      ok = ok && parsed >= -kMaxInt32 - 1 && parsed <= kMaxInt32;
    }
    if (!ok) e.push_back(InvalidS(Key(path, it->first), v, "must be a 32bit integer"));
  }
  // ValidateSeccompPodAnnotations.
  if (auto it = annotations.find("seccomp.security.alpha.kubernetes.io/pod");
      it != annotations.end()) {
    Append(&e, ValidateSeccompProfileAnnotation(it->second, Child(path, it->first)));
  }
  for (const auto& [k, v] : annotations) {
    if (absl::StartsWith(k, "container.seccomp.security.alpha.kubernetes.io/")) {
      Append(&e, ValidateSeccompProfileAnnotation(v, Child(path, k)));
    }
  }
  // ValidateAppArmorPodAnnotations.
  constexpr std::string_view kAppArmorPrefix = "container.apparmor.security.beta.kubernetes.io/";
  for (const auto& [k, v] : annotations) {
    if (!absl::StartsWith(k, AV(kAppArmorPrefix))) continue;
    const std::string container = k.substr(kAppArmorPrefix.size());
    if (!PodSpecHasContainer(spec, container)) {
      e.push_back(InvalidS(Key(path, k), container, "container not found"));
    }
    if (!(v.empty() || v == "runtime/default" || v == "unconfined" ||
          absl::StartsWith(v, "localhost/"))) {
      e.push_back(InvalidS(Key(path, k), v, absl::StrCat("invalid AppArmor profile name: ", Q(v))));
    }
  }
  return e;
}

}  // namespace

Errs ValidateLabels(const StringMap& labels, const std::string& path) {
  Errs e;
  for (const auto& [k, v] : labels) {
    Append(&e, ValidateQualifiedName(k, path));
    for (auto& msg : IsValidLabelValue(v)) e.push_back(InvalidS(path, v, msg));
  }
  return e;
}

}  // namespace kubelet::api::validation_internal

namespace kubelet::api {

using validation_internal::Append;
using validation_internal::Child;
using validation_internal::Errs;
using validation_internal::Forbidden;
using validation_internal::Idx;
using validation_internal::InvalidS;
using validation_internal::Q;
using validation_internal::ValidateObjectMeta;
using validation_internal::ValidatePodSpec;
using validation_internal::ValidatePodSpecificAnnotations;

// ---------------------------------------------------------------------------------------------
// Public.

FieldErrorList ValidatePodCreate(const Pod& pod) {
  Errs e;
  // validatePodMetadataAndSpec.
  Append(&e, ValidateObjectMeta(pod.metadata, "metadata"));
  Append(&e, ValidatePodSpecificAnnotations(pod.metadata.annotations, pod.spec,
                                            "metadata.annotations"));
  Append(&e, ValidatePodSpec(pod.spec, pod.metadata, "spec"));
  if (pod.spec.service_account_name.empty()) {
    for (size_t vi = 0; vi < pod.spec.volumes.size(); ++vi) {
      const auto& v = pod.spec.volumes[vi];
      if (!v.projected.has_value()) continue;
      for (size_t si = 0; si < v.projected->sources.size(); ++si) {
        if (v.projected->sources[si].service_account_token.has_value()) {
          e.push_back(Forbidden(
              Child(Idx(Child(Child(Idx("spec.volumes", vi), "projected"), "sources"), si),
                    "serviceAccountToken"),
              "must not be specified when serviceAccountName is not set"));
        }
      }
    }
  }
  auto only_for_pod = [&](const std::vector<Container>& cs, const std::string& path) {
    for (size_t i = 0; i < cs.size(); ++i) {
      const std::string& img = cs[i].image;
      if (img.size() != std::string(absl::StripAsciiWhitespace(img)).size()) {
        e.push_back(InvalidS(Child(Idx(path, i), "image"), img,
                             "must not have leading or trailing whitespace"));
      }
    }
  };
  only_for_pod(pod.spec.containers, "spec.containers");
  only_for_pod(pod.spec.init_containers, "spec.initContainers");
  // ValidatePodCreate.
  if (!pod.spec.ephemeral_containers.empty()) {
    e.push_back(Forbidden("spec.ephemeralContainers", "cannot be set on create"));
  }
  if (!pod.spec.node_name.empty() && !pod.spec.scheduling_gates.empty()) {
    e.push_back(
        Forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"));
  }
  // validateSeccompAnnotationsAndFields: annotation and field must agree when both are set.
  auto seccomp_match = [&](const std::string& annotation, const SeccompProfile& field,
                           const std::string& path) {
    if (field.type == "Unconfined") {
      if (annotation != "unconfined") {
        e.push_back(
            Forbidden(Child(path, "type"), "seccomp type in annotation and field must match"));
      }
    } else if (field.type == "RuntimeDefault") {
      if (annotation != "runtime/default" && annotation != "docker/default") {
        e.push_back(
            Forbidden(Child(path, "type"), "seccomp type in annotation and field must match"));
      }
    } else if (field.type == "Localhost") {
      if (!absl::StartsWith(annotation, "localhost/")) {
        e.push_back(
            Forbidden(Child(path, "type"), "seccomp type in annotation and field must match"));
      } else if (!field.localhost_profile.has_value() ||
                 annotation.substr(10) != *field.localhost_profile) {
        e.push_back(Forbidden(Child(path, "localhostProfile"),
                              "seccomp profile in annotation and field must match"));
      }
    }
  };
  const auto& ann = pod.metadata.annotations;
  if (pod.spec.security_context.has_value() &&
      pod.spec.security_context->seccomp_profile.has_value()) {
    if (auto it = ann.find("seccomp.security.alpha.kubernetes.io/pod"); it != ann.end()) {
      seccomp_match(it->second, *pod.spec.security_context->seccomp_profile,
                    "spec.securityContext.seccompProfile");
    }
  }
  auto visit = [&](const Container& c, const std::string& cp) {
    if (!c.security_context.has_value() || !c.security_context->seccomp_profile.has_value()) return;
    if (auto it = ann.find("container.seccomp.security.alpha.kubernetes.io/" + c.name);
        it != ann.end()) {
      seccomp_match(it->second, *c.security_context->seccomp_profile,
                    Child(Child(cp, "securityContext"), "seccompProfile"));
    }
  };
  for (size_t i = 0; i < pod.spec.init_containers.size(); ++i) {
    visit(pod.spec.init_containers[i], Idx("spec.initContainers", i));
  }
  for (size_t i = 0; i < pod.spec.containers.size(); ++i) {
    visit(pod.spec.containers[i], Idx("spec.containers", i));
  }
  for (size_t i = 0; i < pod.spec.ephemeral_containers.size(); ++i) {
    visit(pod.spec.ephemeral_containers[i].common, Idx("spec.ephemeralContainers", i));
  }
  return e;
}

absl::Status ValidatePodForKubelet(const Pod& pod) {
  FieldErrorList errs = ValidatePodCreate(pod);
  if (errs.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("Pod ", Q(pod.metadata.name), " is invalid: ", AggregateErrors(errs)));
}

}  // namespace kubelet::api
