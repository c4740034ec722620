// Resource names and quantities (pkg/apis/core/helper) and ResourceRequirements validation
// (limits, requests, hugepages, resource claim names), for containers and pod overhead.
#include <set>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/pod_validation_internal.h"
#include "common/strings.h"

namespace kubelet::api::validation_internal {
namespace {

constexpr char kIsNotIntegerErrorMsg[] = "must be an integer";

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

}  // namespace

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

}  // namespace kubelet::api::validation_internal
