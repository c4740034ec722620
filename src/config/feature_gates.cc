#include "config/feature_gates.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::config {
namespace {

constexpr FeatureStage kA = FeatureStage::kAlpha;
constexpr FeatureStage kB = FeatureStage::kBeta;
constexpr FeatureStage kGA = FeatureStage::kGA;
constexpr FeatureStage kDep = FeatureStage::kDeprecated;

constexpr char kAllAlpha[] = "AllAlpha";
constexpr char kAllBeta[] = "AllBeta";

std::map<std::string, FeatureSpec> BuildKubeletSpecs() {
  struct Row {
    const char* name;
    bool def;
    FeatureStage stage;
    bool lock;
  };
  // Every gate registered in the v1.28 kubelet binary's default feature gate.
  static constexpr Row kRows[] = {
      // k8s.io/kubernetes/pkg/features.
      {"APISelfSubjectReview", true, kGA, true},
      {"AnyVolumeDataSource", true, kB, false},
      {"AppArmor", true, kB, false},
      {"CPUManager", true, kGA, true},
      {"CPUManagerPolicyAlphaOptions", false, kA, false},
      {"CPUManagerPolicyBetaOptions", true, kB, false},
      {"CPUManagerPolicyOptions", true, kB, false},
      {"CSIMigrationAzureFile", true, kGA, true},
      {"CSIMigrationPortworx", false, kB, false},
      {"CSIMigrationRBD", false, kDep, false},
      {"CSIMigrationvSphere", true, kGA, true},
      {"CSINodeExpandSecret", true, kB, false},
      {"CSIVolumeHealth", false, kA, false},
      {"CloudControllerManagerWebhook", false, kA, false},
      {"CloudDualStackNodeIPs", false, kA, false},
      {"ClusterTrustBundle", false, kA, false},
      {"ConsistentHTTPGetHandlers", true, kGA, false},
      {"ContainerCheckpoint", false, kA, false},
      {"CronJobTimeZone", true, kGA, true},
      {"CronJobsScheduledAnnotation", true, kB, false},
      {"CrossNamespaceVolumeDataSource", false, kA, false},
      {"CustomCPUCFSQuotaPeriod", false, kA, false},
      {"DefaultHostNetworkHostPortsInPodTemplates", false, kDep, false},
      {"DevicePluginCDIDevices", false, kA, false},
      {"DisableCloudProviders", false, kA, false},
      {"DisableKubeletCloudCredentialProviders", false, kA, false},
      {"DownwardAPIHugePages", true, kGA, true},
      {"DynamicResourceAllocation", false, kA, false},
      {"ElasticIndexedJob", true, kB, false},
      {"EventedPLEG", false, kA, false},
      {"ExecProbeTimeout", true, kGA, false},
      {"ExpandedDNSConfig", true, kGA, true},
      {"ExperimentalHostUserNamespaceDefaulting", false, kDep, true},
      {"GRPCContainerProbe", true, kGA, true},
      {"GracefulNodeShutdown", true, kB, false},
      {"GracefulNodeShutdownBasedOnPodPriority", true, kB, false},
      {"HPAContainerMetrics", true, kB, false},
      {"HPAScaleToZero", false, kA, false},
      {"HonorPVReclaimPolicy", false, kA, false},
      {"IPTablesOwnershipCleanup", true, kGA, true},
      {"InPlacePodVerticalScaling", false, kA, false},
      {"InTreePluginAWSUnregister", false, kA, false},
      {"InTreePluginAzureDiskUnregister", false, kA, false},
      {"InTreePluginAzureFileUnregister", false, kA, false},
      {"InTreePluginGCEUnregister", false, kA, false},
      {"InTreePluginOpenStackUnregister", false, kA, false},
      {"InTreePluginPortworxUnregister", false, kA, false},
      {"InTreePluginRBDUnregister", false, kDep, false},
      {"InTreePluginvSphereUnregister", false, kA, false},
      {"JobBackoffLimitPerIndex", false, kA, false},
      {"JobMutableNodeSchedulingDirectives", true, kGA, true},
      {"JobPodFailurePolicy", true, kB, false},
      {"JobPodReplacementPolicy", false, kA, false},
      {"JobReadyPods", true, kB, false},
      {"JobTrackingWithFinalizers", true, kGA, true},
      {"KubeProxyDrainingTerminatingNodes", false, kA, false},
      {"KubeletCgroupDriverFromCRI", false, kA, false},
      {"KubeletInUserNamespace", false, kA, false},
      {"KubeletPodResources", true, kGA, true},
      {"KubeletPodResourcesDynamicResources", false, kA, false},
      {"KubeletPodResourcesGet", false, kA, false},
      {"KubeletPodResourcesGetAllocatable", true, kGA, true},
      {"KubeletTracing", true, kB, false},
      {"LegacyServiceAccountTokenCleanUp", false, kA, false},
      {"LegacyServiceAccountTokenNoAutoGeneration", true, kGA, true},
      {"LegacyServiceAccountTokenTracking", true, kGA, true},
      {"LocalStorageCapacityIsolationFSQuotaMonitoring", false, kA, false},
      {"LogarithmicScaleDown", true, kB, false},
      {"MatchLabelKeysInPodTopologySpread", true, kB, false},
      {"MaxUnavailableStatefulSet", false, kA, false},
      {"MemoryManager", true, kB, false},
      {"MemoryQoS", false, kA, false},
      {"MinDomainsInPodTopologySpread", true, kB, false},
      {"MinimizeIPTablesRestore", true, kGA, true},
      {"MultiCIDRRangeAllocator", false, kA, false},
      {"MultiCIDRServiceAllocator", false, kA, false},
      {"NewVolumeManagerReconstruction", true, kB, false},
      {"NodeInclusionPolicyInPodTopologySpread", true, kB, false},
      {"NodeLogQuery", false, kA, false},
      {"NodeOutOfServiceVolumeDetach", true, kGA, true},
      {"NodeSwap", false, kB, false},
      {"PDBUnhealthyPodEvictionPolicy", true, kB, false},
      {"PersistentVolumeLastPhaseTransitionTime", false, kA, false},
      {"PodAndContainerStatsFromCRI", false, kA, false},
      {"PodDeletionCost", true, kB, false},
      {"PodDisruptionConditions", true, kB, false},
      {"PodHostIPs", false, kA, false},
      {"PodIndexLabel", true, kB, false},
      {"PodReadyToStartContainersCondition", false, kA, false},
      {"PodSchedulingReadiness", true, kB, false},
      {"ProbeTerminationGracePeriod", true, kGA, true},
      {"ProcMountType", false, kA, false},
      {"ProxyTerminatingEndpoints", true, kGA, true},
      {"QOSReserved", false, kA, false},
      {"ReadWriteOncePod", true, kB, false},
      {"RecoverVolumeExpansionFailure", false, kA, false},
      {"RetroactiveDefaultStorageClass", true, kGA, true},
      {"RotateKubeletServerCertificate", true, kB, false},
      {"SELinuxMountReadWriteOncePod", true, kB, false},
      {"SchedulerQueueingHints", false, kB, false},
      {"SeccompDefault", true, kGA, true},
      {"SecurityContextDeny", false, kA, false},
      {"ServiceNodePortStaticSubrange", true, kB, false},
      {"SidecarContainers", false, kA, false},
      {"SizeMemoryBackedVolumes", true, kB, false},
      {"SkipReadOnlyValidationGCE", false, kA, false},
      {"StableLoadBalancerNodeSet", true, kB, false},
      {"StatefulSetAutoDeletePVC", true, kB, false},
      {"StatefulSetStartOrdinal", true, kB, false},
      {"TopologyAwareHints", true, kB, false},
      {"TopologyManager", true, kGA, true},
      {"TopologyManagerPolicyAlphaOptions", false, kA, false},
      {"TopologyManagerPolicyBetaOptions", true, kB, false},
      {"TopologyManagerPolicyOptions", true, kB, false},
      {"UnknownVersionInteroperabilityProxy", false, kA, false},
      {"UserNamespacesSupport", false, kA, false},
      {"VolumeCapacityPriority", false, kA, false},
      {"WinDSR", false, kA, false},
      {"WinOverlay", true, kB, false},
      {"WindowsHostNetwork", true, kA, false},
      // k8s.io/apiextensions-apiserver (relisted by pkg/features).
      {"CRDValidationRatcheting", false, kA, false},
      // k8s.io/apiserver/pkg/features.
      {"APIListChunking", true, kB, false},
      {"APIPriorityAndFairness", true, kB, false},
      {"APIResponseCompression", true, kB, false},
      {"APIServerIdentity", true, kB, false},
      {"APIServerTracing", true, kB, false},
      {"AdmissionWebhookMatchConditions", true, kB, false},
      {"AggregatedDiscoveryEndpoint", true, kB, false},
      {"ConsistentListFromCache", false, kA, false},
      {"CustomResourceValidationExpressions", true, kB, false},
      {"EfficientWatchResumption", true, kGA, true},
      {"KMSv1", true, kDep, false},
      {"KMSv2", true, kB, false},
      {"KMSv2KDF", false, kB, false},
      {"OpenAPIEnums", true, kB, false},
      {"OpenAPIV3", true, kGA, true},
      {"RemainingItemCount", true, kB, false},
      {"RemoveSelfLink", true, kGA, true},
      {"ServerSideApply", true, kGA, true},
      {"ServerSideFieldValidation", true, kGA, true},
      {"StorageVersionAPI", false, kA, false},
      {"StorageVersionHash", true, kB, false},
      {"UnauthenticatedHTTP2DOSMitigation", false, kB, false},
      {"ValidatingAdmissionPolicy", false, kB, false},
      {"WatchBookmark", true, kGA, true},
      {"WatchList", false, kA, false},
      // k8s.io/component-base/logs/api/v1 (registered by cmd/kubelet/app).
      {"ContextualLogging", false, kA, false},
      {"LoggingAlphaOptions", false, kA, false},
      {"LoggingBetaOptions", true, kB, false},
      // k8s.io/component-base/metrics/features (registered by pkg/kubelet/server).
      {"ComponentSLIs", true, kB, false},
  };
  std::map<std::string, FeatureSpec> out;
  for (const Row& r : kRows) out[r.name] = FeatureSpec{r.def, r.stage, r.lock};
  return out;
}

std::string GoBool(bool b) { return b ? "true" : "false"; }

// Go's fmt %v of a FeatureSpec: {Default LockToDefault PreRelease}.
std::string FormatSpec(const FeatureSpec& s) {
  return absl::StrCat("{", GoBool(s.default_value), " ", GoBool(s.lock_to_default), " ",
                      AV(FeatureStageName(s.stage)), "}");
}

bool SameSpec(const FeatureSpec& a, const FeatureSpec& b) {
  return a.default_value == b.default_value && a.stage == b.stage &&
         a.lock_to_default == b.lock_to_default;
}

// strconv.ParseBool.
bool ParseGoBool(std::string_view v, bool* out) {
  if (v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True") {
    *out = true;
    return true;
  }
  if (v == "0" || v == "f" || v == "F" || v == "false" || v == "FALSE" || v == "False") {
    *out = false;
    return true;
  }
  return false;
}

}  // namespace

std::string_view FeatureStageName(FeatureStage stage) {
  switch (stage) {
    case FeatureStage::kAlpha:
      return "ALPHA";
    case FeatureStage::kBeta:
      return "BETA";
    case FeatureStage::kGA:
      return "";
    case FeatureStage::kDeprecated:
      return "DEPRECATED";
  }
  return "";
}

const std::map<std::string, FeatureSpec>& KubeletFeatureSpecs() {
  static const auto* specs = new std::map<std::string, FeatureSpec>(BuildKubeletSpecs());
  return *specs;
}

FeatureGate::FeatureGate(EmptyTag) {
  known_[kAllAlpha] = FeatureSpec{false, FeatureStage::kAlpha, false};
  known_[kAllBeta] = FeatureSpec{false, FeatureStage::kBeta, false};
}

FeatureGate::FeatureGate() : FeatureGate(EmptyTag{}) {
  for (const auto& [name, spec] : KubeletFeatureSpecs()) known_[name] = spec;
}

FeatureGate FeatureGate::Empty() { return FeatureGate(EmptyTag{}); }

FeatureGate::FeatureGate(const FeatureGate& other) {
  absl::ReaderMutexLock l(&other.mu_);
  known_ = other.known_;
  enabled_ = other.enabled_;
}

FeatureGate& FeatureGate::operator=(const FeatureGate& other) {
  if (this == &other) return *this;
  std::map<std::string, FeatureSpec, std::less<>> known;
  std::map<std::string, bool, std::less<>> enabled;
  {
    absl::ReaderMutexLock l(&other.mu_);
    known = other.known_;
    enabled = other.enabled_;
  }
  absl::MutexLock l(&mu_);
  known_ = std::move(known);
  enabled_ = std::move(enabled);
  return *this;
}

absl::Status FeatureGate::Add(const std::map<std::string, FeatureSpec>& features) {
  absl::MutexLock l(&mu_);
  auto known = known_;
  for (const auto& [name, spec] : features) {
    auto it = known.find(name);
    if (it != known.end()) {
      if (SameSpec(it->second, spec)) continue;
      return absl::AlreadyExistsError(
          absl::StrCat("feature gate \"", name,
                       "\" with different spec already exists: ", FormatSpec(it->second)));
    }
    known[name] = spec;
  }
  known_ = std::move(known);
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, bool>> FeatureGate::Parse(std::string_view value) {
  std::map<std::string, bool> out;
  for (absl::string_view item : absl::StrSplit(AV(value), ',')) {
    if (item.empty()) continue;
    std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    std::string key(absl::StripAsciiWhitespace(kv[0]));
    if (kv.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("missing bool value for ", key));
    }
    std::string raw(absl::StripAsciiWhitespace(kv[1]));
    bool b = false;
    if (!ParseGoBool(raw, &b)) {
      return absl::InvalidArgumentError(absl::StrCat("invalid value of ", key, "=", raw,
                                                     ", err: strconv.ParseBool: parsing \"", raw,
                                                     "\": invalid syntax"));
    }
    out[key] = b;
  }
  return out;
}

absl::Status FeatureGate::Set(std::string_view value) {
  absl::StatusOr<std::map<std::string, bool>> m = Parse(value);
  if (!m.ok()) return m.status();
  return SetFromMap(*m);
}

absl::Status FeatureGate::SetFromMap(const std::map<std::string, bool>& values) {
  std::vector<std::string> warnings;
  {
    absl::MutexLock l(&mu_);
    auto enabled = enabled_;
    for (const auto& [name, value] : values) {
      auto it = known_.find(name);
      if (it == known_.end()) {
        return absl::InvalidArgumentError(absl::StrCat("unrecognized feature gate: ", name));
      }
      const FeatureSpec& spec = it->second;
      if (spec.lock_to_default && spec.default_value != value) {
        return absl::InvalidArgumentError(absl::StrCat("cannot set feature gate ", name, " to ",
                                                       GoBool(value), ", feature is locked to ",
                                                       GoBool(spec.default_value)));
      }
      enabled[name] = value;
      if (name == kAllAlpha || name == kAllBeta) {
        FeatureStage stage = name == kAllAlpha ? FeatureStage::kAlpha : FeatureStage::kBeta;
        for (const auto& [other, other_spec] : known_) {
          // Gates named explicitly in this map win regardless of iteration order.
          if (other_spec.stage != stage || values.count(other) > 0) continue;
          if (enabled.count(other) == 0) enabled[other] = value;
        }
      }
      if (spec.stage == FeatureStage::kDeprecated) {
        warnings.push_back(absl::StrCat("Setting deprecated feature gate ", name, "=",
                                        GoBool(value),
                                        ". It will be removed in a future release."));
      } else if (spec.stage == FeatureStage::kGA) {
        warnings.push_back(absl::StrCat("Setting GA feature gate ", name, "=", GoBool(value),
                                        ". It will be removed in a future release."));
      }
    }
    enabled_ = std::move(enabled);
  }
  for (const std::string& w : warnings) KLOG_WARNING(w);
  return absl::OkStatus();
}

bool FeatureGate::Enabled(std::string_view name) const {
  absl::ReaderMutexLock l(&mu_);
  if (auto it = enabled_.find(name); it != enabled_.end()) return it->second;
  if (auto it = known_.find(name); it != known_.end()) return it->second.default_value;
  return false;
}

bool FeatureGate::Known(std::string_view name) const {
  absl::ReaderMutexLock l(&mu_);
  return known_.find(name) != known_.end();
}

absl::StatusOr<FeatureSpec> FeatureGate::Spec(std::string_view name) const {
  absl::ReaderMutexLock l(&mu_);
  auto it = known_.find(name);
  if (it == known_.end()) {
    return absl::NotFoundError(absl::StrCat("unrecognized feature gate: ", AV(name)));
  }
  return it->second;
}

std::vector<std::string> FeatureGate::KnownFeatureList() const {
  std::vector<std::string> out;
  absl::ReaderMutexLock l(&mu_);
  for (const auto& [name, spec] : known_) {
    if (spec.stage == FeatureStage::kGA || spec.stage == FeatureStage::kDeprecated) continue;
    out.push_back(absl::StrCat(name, "=true|false (", AV(FeatureStageName(spec.stage)),
                               " - default=", GoBool(spec.default_value), ")"));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string FeatureGate::KnownFeatures() const { return absl::StrJoin(KnownFeatureList(), "\n"); }

std::map<std::string, bool> FeatureGate::Effective() const {
  std::map<std::string, bool> out;
  absl::ReaderMutexLock l(&mu_);
  for (const auto& [name, spec] : known_) {
    auto it = enabled_.find(name);
    out[name] = it != enabled_.end() ? it->second : spec.default_value;
  }
  return out;
}

std::map<std::string, bool> FeatureGate::Explicit() const {
  absl::ReaderMutexLock l(&mu_);
  return std::map<std::string, bool>(enabled_.begin(), enabled_.end());
}

}  // namespace kubelet::config
