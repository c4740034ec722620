// Feature gates of the v1.28 kubelet binary, with component-base/featuregate semantics.
//
// A default-constructed FeatureGate knows every gate the upstream kubelet binary registers: the
// Kubernetes gates (pkg/features), the generic apiserver gates, the component-base logging and
// metrics gates, and the special AllAlpha / AllBeta toggles. Each gate has a default, a stage
// (ALPHA, BETA, GA or DEPRECATED) and may be locked to its default.
//
// Behaviour carried over from upstream:
//   * SetFromMap fails on an unknown name ("unrecognized feature gate: Foo") or on setting a locked
//     gate away from its default ("cannot set feature gate Foo to false, feature is locked to
//     true"); on failure no change is made. Setting a GA or DEPRECATED gate logs a warning.
//   * AllAlpha=<b> / AllBeta=<b> set every ALPHA / BETA gate not explicitly named in the same map.
//   * KnownFeatures() lists "Name=true|false (STAGE - default=<b>)" lines, sorted, without GA and
//     DEPRECATED gates (they are hidden from --help upstream).
//   * Set("A=true,B=false") is the --feature-gates string form, with upstream error wording
//     ("missing bool value for X", "invalid value of X=maybe, err: strconv.ParseBool: ...").
//
// Thread-safety: all methods are safe to call concurrently; Enabled() is the hot path and takes a
// shared lock only. Copying snapshots the state (upstream DeepCopy).
#ifndef KUBELET_CONFIG_FEATURE_GATES_H_
#define KUBELET_CONFIG_FEATURE_GATES_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace kubelet::config {

enum class FeatureStage { kAlpha, kBeta, kGA, kDeprecated };

// "ALPHA", "BETA", "" (GA) or "DEPRECATED", as upstream's prerelease strings.
std::string_view FeatureStageName(FeatureStage stage);

struct FeatureSpec {
  bool default_value = false;
  FeatureStage stage = FeatureStage::kAlpha;
  bool lock_to_default = false;
};

class FeatureGate {
 public:
  // A gate preloaded with every feature the v1.28 kubelet binary knows.
  FeatureGate();
  // A gate that only knows AllAlpha and AllBeta; for tests and other components.
  static FeatureGate Empty();

  FeatureGate(const FeatureGate& other);
  FeatureGate& operator=(const FeatureGate& other);

  // Registers features. Re-adding a name with an identical spec is a no-op; with a different spec
  // it fails (`feature gate "X" with different spec already exists: ...`).
  absl::Status Add(const std::map<std::string, FeatureSpec>& features);

  // Parses the --feature-gates string form into a map without applying it.
  static absl::StatusOr<std::map<std::string, bool>> Parse(std::string_view value);
  // Parse + SetFromMap.
  absl::Status Set(std::string_view value);
  // Applies explicit settings. Keys are processed in sorted order, so with several bad keys the
  // reported one is deterministic (upstream iterates a Go map).
  absl::Status SetFromMap(const std::map<std::string, bool>& values);

  // Effective value of a gate. Unknown names report false (upstream panics).
  bool Enabled(std::string_view name) const;
  bool Known(std::string_view name) const;
  // Spec of a known gate, or NotFound.
  absl::StatusOr<FeatureSpec> Spec(std::string_view name) const;

  // Help lines, sorted, GA and DEPRECATED gates omitted.
  std::vector<std::string> KnownFeatureList() const;
  // KnownFeatureList() joined with "\n" (the text after "Options are:\n" in --help).
  std::string KnownFeatures() const;

  // Effective value of every known gate, including AllAlpha/AllBeta.
  std::map<std::string, bool> Effective() const;
  // Only the gates explicitly set (what upstream's /configz and "feature gates" log show).
  std::map<std::string, bool> Explicit() const;

 private:
  struct EmptyTag {};
  explicit FeatureGate(EmptyTag);

  mutable absl::Mutex mu_;
  std::map<std::string, FeatureSpec, std::less<>> known_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, bool, std::less<>> enabled_ ABSL_GUARDED_BY(mu_);
};

// The gate set of the v1.28 kubelet binary, name -> spec (without AllAlpha/AllBeta).
const std::map<std::string, FeatureSpec>& KubeletFeatureSpecs();

}  // namespace kubelet::config

#endif  // KUBELET_CONFIG_FEATURE_GATES_H_
