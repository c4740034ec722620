// Pod validation, a port of the rules in upstream v1.28 pkg/apis/core/validation that the kubelet
// applies to pods it reads from static sources (ValidatePodCreate with PodValidationOptions{}),
// with upstream error wording and aggregation:
//   ValidatePodForKubelet -> `Pod "web" is invalid: [spec.containers[0].image: Required value,
//   spec.containers[1].name: Duplicate value: "a"]` (errors.NewInvalid + ErrorList.ToAggregate:
//   one error is printed bare, several in brackets joined by ", ", duplicates dropped).
// Covered: object meta (name DNS-1123 subdomain, namespace DNS-1123 label, generateName, labels,
// annotations incl. size, owner references, finalizers), pod-specific annotations (mirror,
// deletion cost, seccomp, AppArmor), volumes (names, exactly one source, hostPath/emptyDir/
// secret/configMap/downwardAPI/projected/PVC details), containers/init containers/ephemeral
// containers (names, image, ports, env/envFrom, mounts, devices, pull policy, resources,
// resizePolicy, security context, probes, lifecycle, sidecar restartPolicy), restartPolicy,
// dnsPolicy/dnsConfig, nodeSelector, pod security context, sysctls, tolerations, hostAliases,
// readiness/scheduling gates, hostUsers, OS, overhead, names of service account / node /
// priority class / runtime class, activeDeadlineSeconds, hostNetwork port rules.
// Not covered (fields kept opaque): affinity, topologySpreadConstraints, windowsOptions,
// opaque volume sources' contents, the tolerations annotation.
// Pure functions; thread-safe.
#ifndef KUBELET_API_POD_VALIDATION_H_
#define KUBELET_API_POD_VALIDATION_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "api/pod.h"

namespace kubelet::api {

// field.ErrorType.
enum class FieldErrorType {
  kNotFound,      // "Not found"
  kRequired,      // "Required value"
  kDuplicate,     // "Duplicate value"
  kInvalid,       // "Invalid value"
  kNotSupported,  // "Unsupported value"
  kForbidden,     // "Forbidden"
  kTooLong,       // "Too long"
  kTooMany,       // "Too many"
  kInternal,      // "Internal error"
};

// field.Error. `bad_value` is already rendered the way Go's ErrorBody prints it (strings
// quoted, numbers bare); it is not printed for Required/Forbidden/TooLong/Internal.
struct FieldError {
  FieldErrorType type = FieldErrorType::kInvalid;
  std::string field;  // e.g. "spec.containers[0].ports[1].containerPort"
  std::string bad_value;
  std::string detail;

  // "<field>: <Type>[: <value>][: <detail>]", as field.Error.Error().
  std::string ToString() const;
  bool operator==(const FieldError&) const = default;
};

using FieldErrorList = std::vector<FieldError>;

// ValidatePodCreate(pod, PodValidationOptions{}): every error, in upstream order.
FieldErrorList ValidatePodCreate(const Pod& pod);

// OK, or InvalidArgument with `Pod "<name>" is invalid: <aggregate>`.
absl::Status ValidatePodForKubelet(const Pod& pod);

// field.ErrorList.ToAggregate().Error(): "" for none, the message for one, else "[a, b]".
std::string AggregateErrors(const FieldErrorList& errs);

// fmt.Sprintf("%v", errs) of a field.ErrorList, as in the kubelet's "invalid pod: %v":
// "[a b]" (space separated, no de-duplication).
std::string FormatErrorListGo(const FieldErrorList& errs);

// k8s.io/apimachinery/pkg/util/validation helpers: each returns the list of problems (empty when
// valid), with upstream wording.
std::vector<std::string> IsDNS1123Label(std::string_view value);
std::vector<std::string> IsDNS1123Subdomain(std::string_view value);
std::vector<std::string> IsQualifiedName(std::string_view value);
std::vector<std::string> IsValidLabelValue(std::string_view value);
std::vector<std::string> IsEnvVarName(std::string_view value);
std::vector<std::string> IsConfigMapKey(std::string_view value);
std::vector<std::string> IsValidPortName(std::string_view value);
std::vector<std::string> IsValidPortNum(int64_t port);
std::vector<std::string> IsValidIP(std::string_view value);

}  // namespace kubelet::api

#endif  // KUBELET_API_POD_VALIDATION_H_
