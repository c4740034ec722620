// The CredentialProviderConfig file of --image-credential-provider-config (upstream v1.28
// pkg/credentialprovider/plugin/config.go): which credential provider plugins the kubelet runs,
// for which images, and how.
//
//   * Decoding as upstream's universal decoder does it (not strict): a document whose first
//     non-blank byte is '{' is JSON, anything else YAML (api/yaml.h). kind must be
//     CredentialProviderConfig and apiVersion kubelet.config.k8s.io/v1, v1beta1 or v1alpha1 (the
//     three have the same fields). Members are matched case-sensitively, unknown members are
//     ignored, null is absent, a value of the wrong type is Go's encoding/json error naming the
//     field ("json: cannot unmarshal number into Go struct field CredentialProvider.providers.name
//     of type string"); defaultCacheDuration is a Go duration string ("12h", "0").
//   * ReadCredentialProviderConfigFile prefixes errors as upstream: "error decoding config
//     <path>: ..." / "unable to read external registry credential provider configuration from
//     \"<path>\": ...". The file's content is never quoted in an error (env values may be secret).
//   * ValidateCredentialProviderConfig returns upstream's field errors in upstream's order and
//     words (field paths are "providers.<field>", without an index, as upstream writes them);
//     ValidationStatus joins them as upstream's aggregate ("failed to validate credential
//     provider config: [a, b]").
//
// Pure functions; thread-safe.
#ifndef KUBELET_KUBELET_CREDENTIALPROVIDER_PLUGIN_CONFIG_H_
#define KUBELET_KUBELET_CREDENTIALPROVIDER_PLUGIN_CONFIG_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kubelet::credentialprovider {

// The versions of the plugins' own API (CredentialProviderRequest / Response), sorted.
inline constexpr std::string_view kCredentialProviderAPIVersions[] = {
    "credentialprovider.kubelet.k8s.io/v1",
    "credentialprovider.kubelet.k8s.io/v1alpha1",
    "credentialprovider.kubelet.k8s.io/v1beta1",
};

struct ExecEnvVar {
  std::string name;
  std::string value;
};

// One plugin: the executable <bin-dir>/<name>, run for images matching one of match_images.
struct CredentialProvider {
  std::string name;
  std::vector<std::string> match_images;
  std::optional<absl::Duration> default_cache_duration;  // nullopt: absent
  std::string api_version;
  std::vector<std::string> args;
  std::vector<ExecEnvVar> env;
};

struct CredentialProviderConfig {
  std::vector<CredentialProvider> providers;
};

// Decodes a document (JSON or YAML). Errors carry no file name.
absl::StatusOr<CredentialProviderConfig> DecodeCredentialProviderConfig(std::string_view data);

// Reads and decodes `path` (at most 4 MiB). An empty path is "credential provider config path is
// empty".
absl::StatusOr<CredentialProviderConfig> ReadCredentialProviderConfigFile(const std::string& path);

// Upstream's validation, one message per error, e.g.
//   providers.name: Invalid value: "a/b": provider name cannot contain '/'
//   providers.defaultCacheDuration: Required value: defaultCacheDuration is required
std::vector<std::string> ValidateCredentialProviderConfig(const CredentialProviderConfig& config);

// OK for no errors, else InvalidArgument "failed to validate credential provider config: <agg>"
// with upstream's aggregate text (one message as is, several deduplicated in "[a, b]").
absl::Status ValidationStatus(const std::vector<std::string>& errors);

}  // namespace kubelet::credentialprovider

#endif  // KUBELET_KUBELET_CREDENTIALPROVIDER_PLUGIN_CONFIG_H_
