#include "api/pod_validation.h"

#include <arpa/inet.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/sysctl.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::api {
namespace {

using Errs = FieldErrorList;
using Strs = std::vector<std::string>;

constexpr char kIsNegativeErrorMsg[] = "must be greater than or equal to 0";
constexpr char kIsNotIntegerErrorMsg[] = "must be an integer";
constexpr char kFileModeErrorMsg[] = "must be a number between 0 and 0777 (octal), both inclusive";
constexpr int64_t kMaxInt32 = 2147483647;
constexpr size_t kTotalAnnotationSizeLimitB = 256 * (1 << 10);

// ---------------------------------------------------------------------------------------------
// Paths and error constructors (k8s.io/apimachinery/pkg/util/validation/field).

std::string Child(const std::string& p, std::string_view c) {
  return p.empty() ? std::string(c) : absl::StrCat(p, ".", AV(c));
}
std::string Idx(const std::string& p, size_t i) { return absl::StrCat(p, "[", i, "]"); }
std::string Key(const std::string& p, std::string_view k) {
  return absl::StrCat(p, "[", AV(k), "]");
}

std::string Q(std::string_view s) { return ::kubelet::log::Quote(s); }
std::string N(int64_t v) { return std::to_string(v); }

FieldError Make(FieldErrorType t, std::string field, std::string value, std::string detail) {
  FieldError e;
  e.type = t;
  e.field = std::move(field);
  e.bad_value = std::move(value);
  e.detail = std::move(detail);
  return e;
}
FieldError Required(std::string f, std::string detail = "") {
  return Make(FieldErrorType::kRequired, std::move(f), "", std::move(detail));
}
FieldError Forbidden(std::string f, std::string detail) {
  return Make(FieldErrorType::kForbidden, std::move(f), "", std::move(detail));
}
FieldError Invalid(std::string f, std::string rendered, std::string detail) {
  return Make(FieldErrorType::kInvalid, std::move(f), std::move(rendered), std::move(detail));
}
FieldError InvalidS(std::string f, std::string_view v, std::string detail) {
  return Invalid(std::move(f), Q(v), std::move(detail));
}
FieldError InvalidI(std::string f, int64_t v, std::string detail) {
  return Invalid(std::move(f), N(v), std::move(detail));
}
FieldError Duplicate(std::string f, std::string rendered) {
  return Make(FieldErrorType::kDuplicate, std::move(f), std::move(rendered), "");
}
FieldError NotFound(std::string f, std::string rendered) {
  return Make(FieldErrorType::kNotFound, std::move(f), std::move(rendered), "");
}
FieldError NotSupported(std::string f, std::string rendered, const Strs& valid) {
  std::string detail;
  if (!valid.empty()) {
    Strs quoted;
    for (const auto& v : valid) quoted.push_back(Q(v));
    detail = absl::StrCat("supported values: ", absl::StrJoin(quoted, ", "));
  }
  return Make(FieldErrorType::kNotSupported, std::move(f), std::move(rendered), std::move(detail));
}
FieldError TooLong(std::string f, int64_t max) {
  return Make(FieldErrorType::kTooLong, std::move(f), "",
              absl::StrCat("must have at most ", max, " bytes"));
}

void Append(Errs* e, Errs more) {
  for (auto& x : more) e->push_back(std::move(x));
}
void Append(Strs* e, Strs more) {
  for (auto& x : more) e->push_back(std::move(x));
}

// ---------------------------------------------------------------------------------------------
// String format checks (k8s.io/apimachinery/pkg/util/validation).

std::string MaxLenError(size_t n) {
  return absl::StrCat("must be no more than ", n, " characters");
}

std::string RegexError(std::string_view msg, std::string_view fmt, const Strs& examples) {
  std::string out(msg);
  if (examples.empty()) {
    return absl::StrCat(out, " (regex used for validation is '", AV(fmt), "')");
  }
  out += " (e.g. ";
  for (size_t i = 0; i < examples.size(); ++i) {
    if (i > 0) out += " or ";
    absl::StrAppend(&out, "'", examples[i], "', ");
  }
  absl::StrAppend(&out, "regex used for validation is '", AV(fmt), "')");
  return out;
}

bool LowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool Alnum(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool MatchesLabel(std::string_view s) {
  if (s.empty() || !LowerAlnum(s.front()) || !LowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!LowerAlnum(c) && c != '-') return false;
  }
  return true;
}

bool MatchesSubdomain(std::string_view s) {
  for (absl::string_view part : absl::StrSplit(AV(s), '.')) {
    if (!MatchesLabel(SV(part))) return false;
  }
  return true;
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool MatchesQualifiedNamePart(std::string_view s) {
  if (s.empty() || !Alnum(s.front()) || !Alnum(s.back())) return false;
  for (char c : s) {
    if (!Alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

constexpr char kDNS1123LabelFmt[] = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
constexpr char kDNS1123LabelErrMsg[] =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character";
constexpr char kDNS1123SubdomainFmt[] =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr char kDNS1123SubdomainErrMsg[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character";
constexpr char kQualifiedNameFmt[] = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr char kQualifiedNameErrMsg[] =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";

Strs HasChDirPrefix(std::string_view v) {
  if (v == ".") return {"must not be '.'"};
  if (v == "..") return {"must not be '..'"};
  if (absl::StartsWith(AV(v), "..")) return {"must not start with '..'"};
  return {};
}

// apimachinery NameIsDNSSubdomain / NameIsDNSLabel with the prefix (generateName) masking.
std::string MaskTrailingDash(std::string_view name) {
  if (name.size() > 1 && name.back() == '-') {
    return absl::StrCat(AV(name.substr(0, name.size() - 2)), "a");
  }
  return std::string(name);
}
Strs NameIsDNSSubdomain(std::string_view name, bool prefix) {
  return prefix ? IsDNS1123Subdomain(MaskTrailingDash(name)) : IsDNS1123Subdomain(name);
}
Strs NameIsDNSLabel(std::string_view name, bool prefix) {
  return prefix ? IsDNS1123Label(MaskTrailingDash(name)) : IsDNS1123Label(name);
}

Errs ValidateDNS1123Label(std::string_view v, const std::string& path) {
  Errs e;
  for (auto& msg : IsDNS1123Label(v)) e.push_back(InvalidS(path, v, msg));
  return e;
}
Errs ValidateDNS1123Subdomain(std::string_view v, const std::string& path) {
  Errs e;
  for (auto& msg : IsDNS1123Subdomain(v)) e.push_back(InvalidS(path, v, msg));
  return e;
}
Errs ValidateQualifiedName(std::string_view v, const std::string& path) {
  Errs e;
  for (auto& msg : IsQualifiedName(v)) e.push_back(InvalidS(path, v, msg));
  return e;
}
// A "name" check (ValidateNameFunc style) reported as Invalid(path, value, msg).
Errs NameErrs(const Strs& msgs, const std::string& path, std::string_view value) {
  Errs e;
  for (const auto& msg : msgs) e.push_back(InvalidS(path, value, msg));
  return e;
}

Strs IsValidUserID(int64_t id) {
  if (id >= 0 && id <= kMaxInt32) return {};
  return {absl::StrCat("must be between 0 and ", kMaxInt32, ", inclusive")};
}

Strs IsHTTPHeaderName(std::string_view v) {
  bool ok = !v.empty();
  for (char c : v) ok = ok && (Alnum(c) || c == '-');
  if (ok) return {};
  return {RegexError("a valid HTTP header must consist of alphanumeric characters or '-'",
                     "[-A-Za-z0-9]+", {"X-Header-Name"})};
}

bool IsAbsPath(std::string_view p) { return !p.empty() && p.front() == '/'; }

// ---------------------------------------------------------------------------------------------
// Resource helpers (pkg/apis/core/helper).

bool IsHugePageResourceName(std::string_view n) { return absl::StartsWith(AV(n), "hugepages-"); }
bool IsNativeResource(std::string_view n) {
  return n.find('/') == std::string_view::npos ||
         n.find("kubernetes.io/") != std::string_view::npos;
}
bool IsExtendedResourceName(std::string_view n) {
  if (IsNativeResource(n) || absl::StartsWith(AV(n), "requests.")) return false;
  return IsQualifiedName(absl::StrCat("requests.", AV(n))).empty();
}
bool IsOvercommitAllowed(std::string_view n) {
  return IsNativeResource(n) && !IsHugePageResourceName(n);
}
bool IsStandardContainerResourceName(std::string_view n) {
  return n == kResourceCPU || n == kResourceMemory || n == kResourceEphemeralStorage ||
         IsHugePageResourceName(n);
}
bool IsStandardResourceName(std::string_view n) {
  static const std::set<std::string, std::less<>> kStd = {
      "cpu",
      "memory",
      "ephemeral-storage",
      "requests.cpu",
      "requests.memory",
      "requests.ephemeral-storage",
      "limits.cpu",
      "limits.memory",
      "limits.ephemeral-storage",
      "pods",
      "services",
      "replicationcontrollers",
      "resourcequotas",
      "secrets",
      "configmaps",
      "persistentvolumeclaims",
      "storage",
      "requests.storage",
      "services.nodeports",
      "services.loadbalancers",
  };
  return kStd.count(n) > 0 || IsHugePageResourceName(n) ||
         absl::StartsWith(AV(n), "requests.hugepages-");
}
bool IsIntegerResourceName(std::string_view n) {
  static const std::set<std::string, std::less<>> kInt = {
      "pods",
      "services",
      "replicationcontrollers",
      "resourcequotas",
      "secrets",
      "configmaps",
      "persistentvolumeclaims",
      "services.nodeports",
      "services.loadbalancers",
  };
  return kInt.count(n) > 0 || IsExtendedResourceName(n);
}

Errs ValidateResourceName(std::string_view value, const std::string& path) {
  Errs e;
  for (auto& msg : IsQualifiedName(value)) e.push_back(InvalidS(path, value, msg));
  if (!e.empty()) return e;
  if (value.find('/') == std::string_view::npos && !IsStandardResourceName(value)) {
    e.push_back(InvalidS(path, value, "must be a standard resource type or fully qualified"));
  }
  return e;
}

Errs ValidateContainerResourceName(std::string_view value, const std::string& path) {
  Errs e = ValidateResourceName(value, path);
  if (value.find('/') == std::string_view::npos) {
    if (!IsStandardContainerResourceName(value)) {
      e.push_back(InvalidS(path, value, "must be a standard resource for containers"));
    }
  } else if (!IsNativeResource(value) && !IsExtendedResourceName(value)) {
    e.push_back(InvalidS(path, value, "doesn't follow extended resource name standard"));
  }
  return e;
}

Errs ValidateResourceQuantityValue(std::string_view name, const Quantity& q,
                                   const std::string& path) {
  Errs e;
  if (q.Sign() < 0) e.push_back(InvalidS(path, q.String(), kIsNegativeErrorMsg));
  if (IsIntegerResourceName(name) && q.MilliValue() % 1000 != 0) {
    e.push_back(InvalidS(path, q.String(), kIsNotIntegerErrorMsg));
  }
  return e;
}

bool HugePageValueDivisible(std::string_view name, const Quantity& q) {
  auto size = Quantity::Parse(name.substr(std::string_view("hugepages-").size()));
  if (!size.ok() || size->Sign() <= 0 || size->MilliValue() % 1000 != 0) return false;
  return q.Value() % size->Value() == 0;
}

// ---------------------------------------------------------------------------------------------
// Metadata.

Errs ValidateLabels(const StringMap& labels, const std::string& path) {
  Errs e;
  for (const auto& [k, v] : labels) {
    Append(&e, ValidateQualifiedName(k, path));
    for (auto& msg : IsValidLabelValue(v)) e.push_back(InvalidS(path, v, msg));
  }
  return e;
}

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

// ---------------------------------------------------------------------------------------------
// Volumes.

Errs ValidatePathNoBacksteps(std::string_view target, const std::string& path) {
  for (absl::string_view part : absl::StrSplit(AV(target), '/')) {
    if (part == "..") return {InvalidS(path, target, "must not contain '..'")};
  }
  return {};
}

Errs ValidateLocalDescendingPath(std::string_view target, const std::string& path) {
  Errs e;
  if (IsAbsPath(target)) e.push_back(InvalidS(path, target, "must be a relative path"));
  Append(&e, ValidatePathNoBacksteps(target, path));
  return e;
}

Errs ValidateLocalNonReservedPath(std::string_view target, const std::string& path) {
  Errs e = ValidateLocalDescendingPath(target, path);
  if (absl::StartsWith(AV(target), "..") && !absl::StartsWith(AV(target), "../")) {
    e.push_back(InvalidS(path, target, "must not start with '..'"));
  }
  return e;
}

void ValidateMode(const std::optional<int32_t>& mode, const std::string& path, Errs* e) {
  if (mode.has_value() && (*mode > 0777 || *mode < 0)) {
    e->push_back(InvalidI(path, *mode, kFileModeErrorMsg));
  }
}

Errs ValidateKeyToPath(const KeyToPath& kp, const std::string& path) {
  Errs e;
  if (kp.key.empty()) e.push_back(Required(Child(path, "key")));
  if (kp.path.empty()) e.push_back(Required(Child(path, "path")));
  Append(&e, ValidateLocalNonReservedPath(kp.path, Child(path, "path")));
  ValidateMode(kp.mode, Child(path, "mode"), &e);
  return e;
}

// Downward API field paths.
bool SplitMaybeSubscriptedPath(std::string_view fp, std::string* path, std::string* subscript) {
  if (!absl::EndsWith(AV(fp), "']")) return false;
  std::string_view s = fp.substr(0, fp.size() - 2);
  size_t open = s.find("['");
  if (open == std::string_view::npos || open == 0) return false;
  *path = std::string(s.substr(0, open));
  *subscript = std::string(s.substr(open + 2));
  return true;
}

// pods.ConvertDownwardAPIFieldLabel for v1.
absl::Status ConvertDownwardAPIFieldLabel(std::string_view version, std::string_view label,
                                          std::string* internal) {
  if (version != "v1") {
    return absl::InvalidArgumentError(absl::StrCat("unsupported pod version: ", AV(version)));
  }
  std::string path, sub;
  if (SplitMaybeSubscriptedPath(label, &path, &sub)) {
    if (path == "metadata.annotations" || path == "metadata.labels") {
      *internal = std::string(label);
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(
        absl::StrCat("field label does not support subscript: ", AV(label)));
  }
  static const std::set<std::string, std::less<>> kSupported = {
      "metadata.annotations", "metadata.labels", "metadata.name",      "metadata.namespace",
      "metadata.uid",         "spec.nodeName",   "spec.restartPolicy", "spec.serviceAccountName",
      "spec.schedulerName",   "status.phase",    "status.hostIP",      "status.hostIPs",
      "status.podIP",         "status.podIPs",
  };
  if (kSupported.count(label) > 0) {
    *internal = std::string(label);
    return absl::OkStatus();
  }
  if (label == "spec.host") {
    *internal = "spec.nodeName";
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("field label not supported: ", AV(label)));
}

const Strs kVolumeFieldPaths = {"metadata.annotations", "metadata.labels", "metadata.name",
                                "metadata.namespace", "metadata.uid"};
const Strs kEnvFieldPaths = {
    "metadata.name",           "metadata.namespace", "metadata.uid", "spec.nodeName",
    "spec.serviceAccountName", "status.hostIP",      "status.podIP", "status.podIPs"};
const Strs kResourceFieldPaths = {"limits.cpu",   "limits.ephemeral-storage",   "limits.memory",
                                  "requests.cpu", "requests.ephemeral-storage", "requests.memory"};

Errs ValidateObjectFieldSelector(const ObjectFieldSelector& fs, const Strs& expressions,
                                 const std::string& path) {
  if (fs.api_version.empty()) return {Required(Child(path, "apiVersion"))};
  if (fs.field_path.empty()) return {Required(Child(path, "fieldPath"))};
  std::string internal;
  if (absl::Status st = ConvertDownwardAPIFieldLabel(fs.api_version, fs.field_path, &internal);
      !st.ok()) {
    return {InvalidS(Child(path, "fieldPath"), fs.field_path,
                     absl::StrCat("error converting fieldPath: ", st.message()))};
  }
  std::string p, sub;
  if (SplitMaybeSubscriptedPath(internal, &p, &sub)) {
    if (p == "metadata.annotations") return ValidateQualifiedName(absl::AsciiStrToLower(sub), path);
    if (p == "metadata.labels") return ValidateQualifiedName(sub, path);
    return {InvalidS(path, p, "does not support subscript")};
  }
  if (std::find(expressions.begin(), expressions.end(), internal) == expressions.end()) {
    return {NotSupported(Child(path, "fieldPath"), Q(internal), expressions)};
  }
  return {};
}

Errs ValidateContainerResourceDivisor(std::string_view r, const Quantity& divisor,
                                      const std::string& path) {
  if (divisor.IsZero()) return {};
  const std::string d = divisor.String();
  static const std::set<std::string, std::less<>> kBytes = {
      "1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"};
  Errs e;
  if (r == "limits.cpu" || r == "requests.cpu") {
    if (d != "1m" && d != "1") {
      e.push_back(InvalidS(Child(path, "divisor"), r,
                           "only divisor's values 1m and 1 are supported with the cpu resource"));
    }
  } else if (r == "limits.memory" || r == "requests.memory") {
    if (kBytes.count(d) == 0) {
      e.push_back(InvalidS(Child(path, "divisor"), r,
                           "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, "
                           "1Ti, 1Pi, 1Ei are supported with the memory resource"));
    }
  } else if (r == "limits.ephemeral-storage" || r == "requests.ephemeral-storage") {
    if (kBytes.count(d) == 0) {
      e.push_back(InvalidS(Child(path, "divisor"), r,
                           "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, "
                           "1Ti, 1Pi, 1Ei are supported with the local ephemeral storage "
                           "resource"));
    }
  }
  if (absl::StartsWith(AV(r), "requests.hugepages-") ||
      absl::StartsWith(AV(r), "limits.hugepages-")) {
    if (kBytes.count(d) == 0) {
      e.push_back(InvalidS(Child(path, "divisor"), r,
                           "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, "
                           "1Ti, 1Pi, 1Ei are supported with the hugepages resource"));
    }
  }
  return e;
}

Errs ValidateContainerResourceFieldSelector(const ResourceFieldSelector& fs,
                                            const std::string& path, bool volume) {
  Errs e;
  if (volume && fs.container_name.empty()) {
    e.push_back(Required(Child(path, "containerName")));
  } else if (fs.resource.empty()) {
    e.push_back(Required(Child(path, "resource")));
  } else if (std::find(kResourceFieldPaths.begin(), kResourceFieldPaths.end(), fs.resource) ==
                 kResourceFieldPaths.end() &&
             !absl::StartsWith(fs.resource, "requests.hugepages-") &&
             !absl::StartsWith(fs.resource, "limits.hugepages-")) {
    e.push_back(NotSupported(Child(path, "resource"), Q(fs.resource), kResourceFieldPaths));
  }
  Append(&e, ValidateContainerResourceDivisor(fs.resource, fs.divisor, path));
  return e;
}

Errs ValidateDownwardAPIVolumeFile(const DownwardAPIVolumeFile& f, const std::string& path) {
  Errs e;
  if (f.path.empty()) e.push_back(Required(Child(path, "path")));
  Append(&e, ValidateLocalNonReservedPath(f.path, Child(path, "path")));
  if (f.field_ref.has_value()) {
    Append(&e,
           ValidateObjectFieldSelector(*f.field_ref, kVolumeFieldPaths, Child(path, "fieldRef")));
    if (f.resource_field_ref.has_value()) {
      e.push_back(InvalidS(path, "resource",
                           "fieldRef and resourceFieldRef can not be specified simultaneously"));
    }
  } else if (f.resource_field_ref.has_value()) {
    Append(&e, ValidateContainerResourceFieldSelector(*f.resource_field_ref,
                                                      Child(path, "resourceFieldRef"), true));
  } else {
    e.push_back(Required(path, "one of fieldRef and resourceFieldRef is required"));
  }
  ValidateMode(f.mode, Child(path, "mode"), &e);
  return e;
}

Errs ValidateProjectedVolumeSource(const ProjectedVolumeSource& pv, const std::string& path) {
  Errs e;
  ValidateMode(pv.default_mode, Child(path, "defaultMode"), &e);
  std::set<std::string> all_paths;
  for (size_t i = 0; i < pv.sources.size(); ++i) {
    const VolumeProjection& src = pv.sources[i];
    const std::string src_path = Idx(Child(path, "sources"), i);
    int num = 0;
    auto key_paths = [&](const std::vector<KeyToPath>& items, const std::string& proj_path,
                         const std::string& owner) {
      const std::string items_path = Child(proj_path, "items");
      for (size_t j = 0; j < items.size(); ++j) {
        Append(&e, ValidateKeyToPath(items[j], Idx(items_path, j)));
        if (!items[j].path.empty() && !all_paths.insert(items[j].path).second) {
          e.push_back(InvalidS(path, owner, "conflicting duplicate paths"));
        }
      }
    };
    if (src.secret.has_value()) {
      ++num;
      const std::string pp = Child(src_path, "secret");
      if (src.secret->name.empty()) e.push_back(Required(Child(pp, "name")));
      key_paths(src.secret->items, pp, src.secret->name);
    }
    if (src.config_map.has_value()) {
      ++num;
      const std::string pp = Child(src_path, "configMap");
      if (src.config_map->name.empty()) e.push_back(Required(Child(pp, "name")));
      key_paths(src.config_map->items, pp, src.config_map->name);
    }
    if (src.downward_api.has_value()) {
      ++num;
      const std::string pp = Child(src_path, "downwardAPI");
      for (const auto& f : src.downward_api->items) {
        Append(&e, ValidateDownwardAPIVolumeFile(f, pp));
        if (!f.path.empty() && !all_paths.insert(f.path).second) {
          e.push_back(InvalidS(path, f.path, "conflicting duplicate paths"));
        }
      }
    }
    if (src.service_account_token.has_value()) {
      ++num;
      const std::string pp = Child(src_path, "serviceAccountToken");
      const int64_t exp = src.service_account_token->expiration_seconds.value_or(0);
      if (exp < 10 * 60) {
        e.push_back(InvalidI(Child(pp, "expirationSeconds"), exp,
                             "may not specify a duration less than 10 minutes"));
      }
      if (exp > (int64_t{1} << 32)) {
        e.push_back(InvalidI(Child(pp, "expirationSeconds"), exp,
                             "may not specify a duration larger than 2^32 seconds"));
      }
      if (src.service_account_token->path.empty()) {
        e.push_back(Required(Child(path, "path")));
      } else {
        Append(&e,
               ValidateLocalNonReservedPath(src.service_account_token->path, Child(path, "path")));
      }
    }
    if (num > 1) {
      e.push_back(Forbidden(src_path, "may not specify more than 1 volume type per source"));
    }
  }
  return e;
}

Errs ValidateVolumeSource(const Volume& v, const std::string& path) {
  Errs e;
  int num = 0;
  // One entry per upstream VolumeSource member in validateVolumeSource's order; `forbidden_name`
  // is the child name upstream reports (including its "downwarAPI" and "cephFS" spellings).
  struct Src {
    const char* json_name;
    const char* forbidden_name;
  };
  static constexpr Src kOrder[] = {
      {"emptyDir", "emptyDir"},
      {"hostPath", "hostPath"},
      {"gitRepo", "gitRepo"},
      {"gcePersistentDisk", "gcePersistentDisk"},
      {"awsElasticBlockStore", "awsElasticBlockStore"},
      {"secret", "secret"},
      {"nfs", "nfs"},
      {"iscsi", "iscsi"},
      {"glusterfs", "glusterfs"},
      {"flocker", "flocker"},
      {"persistentVolumeClaim", "persistentVolumeClaim"},
      {"rbd", "rbd"},
      {"cinder", "cinder"},
      {"cephfs", "cephFS"},
      {"quobyte", "quobyte"},
      {"downwardAPI", "downwarAPI"},
      {"fc", "fc"},
      {"flexVolume", "flexVolume"},
      {"configMap", "configMap"},
      {"azureFile", "azureFile"},
      {"vsphereVolume", "vsphereVolume"},
      {"photonPersistentDisk", "photonPersistentDisk"},
      {"portworxVolume", "portworxVolume"},
      {"azureDisk", "azureDisk"},
      {"storageos", "storageos"},
      {"projected", "projected"},
      {"scaleIO", "scaleIO"},
      {"csi", "csi"},
      {"ephemeral", "ephemeral"},
  };
  for (const Src& s : kOrder) {
    const std::string_view n = s.json_name;
    bool present;
    if (n == "emptyDir") {
      present = v.empty_dir.has_value();
    } else if (n == "hostPath") {
      present = v.host_path.has_value();
    } else if (n == "secret") {
      present = v.secret.has_value();
    } else if (n == "persistentVolumeClaim") {
      present = v.persistent_volume_claim.has_value();
    } else if (n == "downwardAPI") {
      present = v.downward_api.has_value();
    } else if (n == "configMap") {
      present = v.config_map.has_value();
    } else if (n == "projected") {
      present = v.projected.has_value();
    } else {
      present = v.other_sources.count(s.json_name) > 0;
    }
    if (!present) continue;
    if (n == "emptyDir") {
      // EmptyDir is first; no "more than 1" check possible yet.
      ++num;
      if (v.empty_dir->size_limit.has_value() && v.empty_dir->size_limit->Sign() < 0) {
        e.push_back(Forbidden(Child(Child(path, "emptyDir"), "sizeLimit"),
                              "SizeLimit field must be a valid resource quantity"));
      }
      continue;
    }
    if (num > 0) {
      e.push_back(
          Forbidden(Child(path, s.forbidden_name), "may not specify more than 1 volume type"));
      continue;
    }
    ++num;
    const std::string sp = Child(path, s.json_name);
    if (n == "hostPath") {
      const auto& hp = *v.host_path;
      if (hp.path.empty()) {
        e.push_back(Required(Child(sp, "path")));
        continue;
      }
      Append(&e, ValidatePathNoBacksteps(hp.path, Child(sp, "path")));
      static const Strs kTypes = {
          "",     "BlockDevice",  "CharDevice", "Directory", "DirectoryOrCreate",
          "File", "FileOrCreate", "Socket"};
      if (hp.type.has_value() &&
          std::find(kTypes.begin(), kTypes.end(), *hp.type) == kTypes.end()) {
        e.push_back(NotSupported(Child(sp, "type"), Q(*hp.type), kTypes));
      }
    } else if (n == "secret") {
      const auto& s2 = *v.secret;
      if (s2.secret_name.empty()) e.push_back(Required(Child(sp, "secretName")));
      ValidateMode(s2.default_mode, Child(sp, "defaultMode"), &e);
      for (size_t i = 0; i < s2.items.size(); ++i) {
        Append(&e, ValidateKeyToPath(s2.items[i], Idx(Child(sp, "items"), i)));
      }
    } else if (n == "persistentVolumeClaim") {
      if (v.persistent_volume_claim->claim_name.empty()) {
        e.push_back(Required(Child(sp, "claimName")));
      }
    } else if (n == "downwardAPI") {
      ValidateMode(v.downward_api->default_mode, Child(sp, "defaultMode"), &e);
      for (const auto& f : v.downward_api->items) {
        Append(&e, ValidateDownwardAPIVolumeFile(f, sp));
      }
    } else if (n == "configMap") {
      const auto& cm = *v.config_map;
      if (cm.name.empty()) e.push_back(Required(Child(sp, "name")));
      ValidateMode(cm.default_mode, Child(sp, "defaultMode"), &e);
      for (size_t i = 0; i < cm.items.size(); ++i) {
        Append(&e, ValidateKeyToPath(cm.items[i], Idx(Child(sp, "items"), i)));
      }
    } else if (n == "projected") {
      Append(&e, ValidateProjectedVolumeSource(*v.projected, sp));
    }
  }
  if (num == 0) e.push_back(Required(path, "must specify a volume type"));
  return e;
}

// Returns the valid volumes by name.
std::map<std::string, const Volume*> ValidateVolumes(const std::vector<Volume>& volumes,
                                                     const std::string& path, Errs* e) {
  std::map<std::string, const Volume*> vols;
  for (size_t i = 0; i < volumes.size(); ++i) {
    const Volume& v = volumes[i];
    const std::string idx = Idx(path, i);
    const std::string name_path = Child(idx, "name");
    Errs el = ValidateVolumeSource(v, idx);
    if (v.name.empty()) {
      el.push_back(Required(name_path));
    } else {
      Append(&el, ValidateDNS1123Label(v.name, name_path));
    }
    if (vols.count(v.name) > 0) el.push_back(Duplicate(name_path, Q(v.name)));
    if (el.empty()) {
      vols[v.name] = &v;
    } else {
      Append(e, std::move(el));
    }
  }
  return vols;
}

// ---------------------------------------------------------------------------------------------
// Containers.

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

Errs ValidateResourceRequirements(const ResourceRequirements& r,
                                  const std::set<std::string>& pod_claim_names,
                                  const std::string& path) {
  Errs e;
  const std::string lim_path = Child(path, "limits");
  const std::string req_path = Child(path, "requests");
  bool lim_cpu_mem = false, req_cpu_mem = false, lim_huge = false, req_huge = false;
  for (const auto& [name, q] : r.limits) {
    const std::string fp = Key(lim_path, name);
    Append(&e, ValidateContainerResourceName(name, fp));
    Append(&e, ValidateResourceQuantityValue(name, q, fp));
    if (IsHugePageResourceName(name)) {
      lim_huge = true;
      if (!HugePageValueDivisible(name, q)) {
        e.push_back(
            InvalidS(fp, q.String(),
                     absl::StrCat(q.String(), " is not positive integer multiple of ", name)));
      }
    }
    if (name == kResourceCPU || name == kResourceMemory) lim_cpu_mem = true;
  }
  for (const auto& [name, q] : r.requests) {
    const std::string fp = Key(req_path, name);
    Append(&e, ValidateContainerResourceName(name, fp));
    Append(&e, ValidateResourceQuantityValue(name, q, fp));
    if (auto it = r.limits.find(name); it != r.limits.end()) {
      const Quantity& limit = it->second;
      if (!(q == limit) && !IsOvercommitAllowed(name)) {
        e.push_back(
            InvalidS(req_path, q.String(), absl::StrCat("must be equal to ", name, " limit")));
      } else if (q > limit) {
        e.push_back(InvalidS(req_path, q.String(),
                             absl::StrCat("must be less than or equal to ", name, " limit")));
      }
    } else if (!IsOvercommitAllowed(name)) {
      e.push_back(Required(lim_path, "Limit must be set for non overcommitable resources"));
    }
    if (IsHugePageResourceName(name)) {
      req_huge = true;
      if (!HugePageValueDivisible(name, q)) {
        e.push_back(
            InvalidS(fp, q.String(),
                     absl::StrCat(q.String(), " is not positive integer multiple of ", name)));
      }
    }
    if (name == kResourceCPU || name == kResourceMemory) req_cpu_mem = true;
  }
  if (!lim_cpu_mem && !req_cpu_mem && (req_huge || lim_huge)) {
    e.push_back(Forbidden(path, "HugePages require cpu or memory"));
  }
  // validateResourceClaimNames.
  const std::string claims_path = Child(path, "claims");
  std::set<std::string> names;
  for (size_t i = 0; i < r.claims.size(); ++i) {
    const std::string& name = r.claims[i].name;
    const std::string ip = Idx(claims_path, i);
    if (name.empty()) {
      e.push_back(Required(ip));
      continue;
    }
    if (!names.insert(name).second) e.push_back(Duplicate(ip, Q(name)));
    if (pod_claim_names.count(name) == 0) {
      FieldError nf = NotFound(ip, Q(name));
      nf.detail = "must be one of the names in pod.spec.resourceClaims";
      if (pod_claim_names.empty()) {
        nf.detail += " which is empty";
      } else {
        nf.detail += ": " + absl::StrJoin(pod_claim_names, ", ");
      }
      e.push_back(std::move(nf));
    }
  }
  return e;
}

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

// ---------------------------------------------------------------------------------------------
// Pod spec.

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

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public.

std::string FieldError::ToString() const {
  const char* type_str = "Invalid value";
  bool show_value = true;
  switch (type) {
    case FieldErrorType::kNotFound:
      type_str = "Not found";
      break;
    case FieldErrorType::kRequired:
      type_str = "Required value";
      show_value = false;
      break;
    case FieldErrorType::kDuplicate:
      type_str = "Duplicate value";
      break;
    case FieldErrorType::kInvalid:
      type_str = "Invalid value";
      break;
    case FieldErrorType::kNotSupported:
      type_str = "Unsupported value";
      break;
    case FieldErrorType::kForbidden:
      type_str = "Forbidden";
      show_value = false;
      break;
    case FieldErrorType::kTooLong:
      type_str = "Too long";
      show_value = false;
      break;
    case FieldErrorType::kTooMany:
      type_str = "Too many";
      break;
    case FieldErrorType::kInternal:
      type_str = "Internal error";
      show_value = false;
      break;
  }
  std::string s = absl::StrCat(field, ": ", type_str);
  if (show_value) absl::StrAppend(&s, ": ", bad_value.empty() ? "null" : bad_value);
  if (!detail.empty()) absl::StrAppend(&s, ": ", detail);
  return s;
}

std::vector<std::string> IsDNS1123Label(std::string_view value) {
  Strs e;
  if (value.size() > 63) e.push_back(MaxLenError(63));
  if (!MatchesLabel(value)) {
    e.push_back(RegexError(kDNS1123LabelErrMsg, kDNS1123LabelFmt, {"my-name", "123-abc"}));
  }
  return e;
}

std::vector<std::string> IsDNS1123Subdomain(std::string_view value) {
  Strs e;
  if (value.size() > 253) e.push_back(MaxLenError(253));
  if (!MatchesSubdomain(value)) {
    e.push_back(RegexError(kDNS1123SubdomainErrMsg, kDNS1123SubdomainFmt, {"example.com"}));
  }
  return e;
}

std::vector<std::string> IsQualifiedName(std::string_view value) {
  Strs e;
  std::vector<absl::string_view> parts = absl::StrSplit(AV(value), '/');
  std::string_view name;
  if (parts.size() == 1) {
    name = SV(parts[0]);
  } else if (parts.size() == 2) {
    std::string_view prefix = SV(parts[0]);
    name = SV(parts[1]);
    if (prefix.empty()) {
      e.push_back("prefix part must be non-empty");
    } else {
      for (auto& m : IsDNS1123Subdomain(prefix)) e.push_back("prefix part " + m);
    }
  } else {
    e.push_back(
        "a qualified name " +
        RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt, {"MyName", "my.name", "123-abc"}) +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
    return e;
  }
  if (name.empty()) {
    e.push_back("name part must be non-empty");
  } else if (name.size() > 63) {
    e.push_back("name part " + MaxLenError(63));
  }
  if (!MatchesQualifiedNamePart(name)) {
    e.push_back("name part " + RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt,
                                          {"MyName", "my.name", "123-abc"}));
  }
  return e;
}

std::vector<std::string> IsValidLabelValue(std::string_view value) {
  Strs e;
  if (value.size() > 63) e.push_back(MaxLenError(63));
  if (!value.empty() && !MatchesQualifiedNamePart(value)) {
    e.push_back(RegexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
        "or '.', and must start and end with an alphanumeric character",
        "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", {"MyValue", "my_value", "12345"}));
  }
  return e;
}

std::vector<std::string> IsEnvVarName(std::string_view value) {
  Strs e;
  bool ok = !value.empty() && !absl::ascii_isdigit(static_cast<unsigned char>(value[0]));
  for (char c : value) ok = ok && (Alnum(c) || c == '-' || c == '.' || c == '_');
  if (!ok) {
    e.push_back(RegexError(
        "a valid environment variable name must consist of alphabetic characters, digits, '_', "
        "'-', or '.', and must not start with a digit",
        "[-._a-zA-Z][-._a-zA-Z0-9]*", {"my.env-name", "MY_ENV.NAME", "MyEnvName1"}));
  }
  Append(&e, HasChDirPrefix(value));
  return e;
}

std::vector<std::string> IsConfigMapKey(std::string_view value) {
  Strs e;
  if (value.size() > 253) e.push_back(MaxLenError(253));
  bool ok = !value.empty();
  for (char c : value) ok = ok && (Alnum(c) || c == '-' || c == '.' || c == '_');
  if (!ok) {
    e.push_back(
        RegexError("a valid config key must consist of alphanumeric characters, '-', '_' "
                   "or '.'",
                   "[-._a-zA-Z0-9]+", {"key.name", "KEY_NAME", "key-name"}));
  }
  Append(&e, HasChDirPrefix(value));
  return e;
}

std::vector<std::string> IsValidPortName(std::string_view port) {
  Strs e;
  if (port.size() > 15) e.push_back(MaxLenError(15));
  bool charset = !port.empty();
  bool letter = false;
  for (char c : port) {
    charset = charset && (LowerAlnum(c) || c == '-');
    letter = letter || (c >= 'a' && c <= 'z');
  }
  if (!charset) {
    e.push_back("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  }
  if (!letter) e.push_back("must contain at least one letter (a-z)");
  if (port.find("--") != std::string_view::npos) {
    e.push_back("must not contain consecutive hyphens");
  }
  if (!port.empty() && (port.front() == '-' || port.back() == '-')) {
    e.push_back("must not begin or end with a hyphen");
  }
  return e;
}

std::vector<std::string> IsValidPortNum(int64_t port) {
  if (port >= 1 && port <= 65535) return {};
  return {"must be between 1 and 65535, inclusive"};
}

std::vector<std::string> IsValidIP(std::string_view value) {
  const std::string s(value);
  unsigned char buf[16];
  if (inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1) {
    return {};
  }
  return {"must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"};
}

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

std::string AggregateErrors(const FieldErrorList& errs) {
  std::vector<std::string> msgs;
  std::set<std::string> seen;
  for (const auto& err : errs) {
    std::string m = err.ToString();
    if (seen.insert(m).second) msgs.push_back(std::move(m));
  }
  if (msgs.empty()) return "";
  if (msgs.size() == 1) return msgs[0];
  return absl::StrCat("[", absl::StrJoin(msgs, ", "), "]");
}

std::string FormatErrorListGo(const FieldErrorList& errs) {
  std::vector<std::string> msgs;
  for (const auto& err : errs) msgs.push_back(err.ToString());
  return absl::StrCat("[", absl::StrJoin(msgs, " "), "]");
}

absl::Status ValidatePodForKubelet(const Pod& pod) {
  FieldErrorList errs = ValidatePodCreate(pod);
  if (errs.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("Pod ", Q(pod.metadata.name), " is invalid: ", AggregateErrors(errs)));
}

}  // namespace kubelet::api
