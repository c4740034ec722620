// Validation of the kubelet's configuration, porting the v1.28 upstream rules
// (pkg/kubelet/apis/config/validation, Linux build) and the label-syntax helpers they rely on.
//
// ValidateKubeletConfiguration checks `kc` against the feature gate it will run with: a copy of
// `gates` with kc.feature_gates applied (an error applying those is returned as is). All rule
// violations are collected and aggregated as upstream's utilerrors.NewAggregate formats them:
// one message alone, or "[msg1, msg2, ...]" (duplicates dropped). Messages carry the upstream
// wording, e.g. "invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) 90
// must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) 80". Embedded logging
// and tracing checks use the field-path form ("logging.format: Invalid value: \"xml\": Unsupported
// log format").
//
// The Is* helpers return upstream's k8s.io/apimachinery validation messages (empty: valid).
// Pure functions; thread-safe.
#ifndef KUBELET_CONFIG_VALIDATION_H_
#define KUBELET_CONFIG_VALIDATION_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "api/pod_validation.h"
#include "config/cpuset.h"  // ValidateReservedSystemCPUs
#include "config/feature_gates.h"

namespace kubelet::config {

struct KubeletConfiguration;

absl::Status ValidateKubeletConfiguration(const KubeletConfiguration& kc, const FeatureGate& gates);

// Label / name syntax (k8s.io/apimachinery/pkg/util/validation): one implementation, in
// api/pod_validation.
using api::IsDNS1123Subdomain;
using api::IsQualifiedName;
using api::IsValidLabelValue;

// utilerrors.NewAggregate(...).Error() semantics over plain messages; OK when `errors` is empty.
absl::Status AggregateErrors(const std::vector<std::string>& errors);

}  // namespace kubelet::config

#endif  // KUBELET_CONFIG_VALIDATION_H_
