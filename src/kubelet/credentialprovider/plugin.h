// Image credential provider plugins (upstream v1.28 pkg/credentialprovider/plugin): the kubelet
// runs <bin-dir>/<name> for an image matching one of the plugin's matchImages and uses the
// registry credentials it answers with, cached as the plugin asks.
//
//   * Start-up (RegisterCredentialProviderPlugins, the kubelet's --image-credential-provider-
//     config / --image-credential-provider-bin-dir): the bin dir must exist, the config must read,
//     decode and validate (plugin_config.h), and every provider's executable must exist in the bin
//     dir; otherwise an error the kubelet refuses to start with (upstream logs it as "Failed to
//     register CRI auth plugins" and exits 1), e.g. "plugin binary directory /x did not exist",
//     "failed to validate credential provider config: ...", "plugin binary executable /x/p did not
//     exist".
//   * Matching: a plugin is asked about an image when URLsMatch(matchImage, repository) holds for
//     one of its matchImages, the repository being NormalizedRepository(image) (what upstream
//     hands to plugins: "busybox:1" -> "docker.io/library/busybox", tag and digest dropped).
//   * Exec: <bin-dir>/<name> <args...> in its own process group, environment = the kubelet's
//     environment plus the provider's env (a provider variable replaces the kubelet's of the same
//     name), stdin = {"kind":"CredentialProviderRequest","apiVersion":<provider apiVersion>,
//     "image":<repository>}\n, stdout read up to ExecOptions::max_stdout_bytes, stderr kept up to
//     max_stderr_bytes for the error text. After ExecOptions::timeout (upstream: 1 minute) on the
//     Clock, the process group is killed with SIGKILL. The child is always reaped. The response
//     must be JSON with the request's apiVersion and kind CredentialProviderResponse; its
//     cacheKeyType must be Image, Registry or Global; cacheDuration (a Go duration) is optional;
//     auth maps registry globs to {username, password}.
//   * Failures (start failure, non-zero exit, timeout, output over the bound, unparsable output,
//     another apiVersion or kind, a bad cacheKeyType) are logged with upstream's messages ("Failed
//     getting credential from external registry credential provider: ...") and give no
//     credentials for that lookup; nothing is cached. Log lines and errors never carry the
//     plugin's stdout (where the credentials are), only its stderr as upstream does.
//   * Cache per provider: an answer is stored under the image (Image), the image's registry = its
//     repository up to the first '/' (Registry), or one global key (Global), until now >
//     stored + cacheDuration (the response's, else the provider's defaultCacheDuration); a zero
//     duration is not stored, a negative one is stored already expired. A lookup tries the
//     image, its registry, then the global entry. Expired entries are dropped when read, and
//     all of them every 15 minutes (checked at lookups), as upstream.
//   * Concurrent lookups of one image on one provider share one run of the plugin (upstream's
//     singleflight); each then handles the shared answer.
//   * Metrics: kubelet_credential_provider_plugin_duration{plugin_name} for every run,
//     kubelet_credential_provider_plugin_errors{plugin_name} for runs that failed to start, exited
//     non-zero, timed out or wrote too much.
//   * ProvidersKeyring (upstream's providers keyring of NewDockerKeyring): providers ordered by
//     name, the node's docker config files taking part as the provider ".dockercfg"; a lookup
//     adds every provider's answer into one BasicDockerKeyring and looks the image up there (so
//     credentials come ordered by registry key, most specific first, then by provider name). Pull
//     secrets come ahead of it through MakeDockerKeyring.
//
// Thread-safety: Lookup / Provide may be called concurrently; a lookup blocks its caller while a
// plugin runs (at most the exec timeout). Ownership: providers and keyrings borrow the Clock (and
// the NodeDockerKeyring), which must outlive them.
#ifndef KUBELET_KUBELET_CREDENTIALPROVIDER_PLUGIN_H_
#define KUBELET_KUBELET_CREDENTIALPROVIDER_PLUGIN_H_

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "kubelet/credentialprovider/keyring.h"
#include "kubelet/credentialprovider/plugin_config.h"

namespace kubelet::credentialprovider {

// How long the kubelet keeps an expired entry in a provider's cache at most (upstream's
// cachePurgeInterval).
inline constexpr absl::Duration kCachePurgeInterval = absl::Minutes(15);
// The name under which the node's docker config files take part in ProvidersKeyring.
inline constexpr std::string_view kDockerConfigProviderName = ".dockercfg";

struct ExecOptions {
  // Upstream's catch-all exec timeout.
  absl::Duration timeout = absl::Minutes(1);
  // Larger output is an error (and the plugin is killed).
  size_t max_stdout_bytes = 1 << 20;
  // Stderr beyond this is read and dropped.
  size_t max_stderr_bytes = 4096;
};

// A decoded CredentialProviderResponse.
struct CredentialProviderResponse {
  std::string cache_key_type;                    // "Image", "Registry", "Global" (unchecked)
  std::optional<absl::Duration> cache_duration;  // nullopt: absent
  DockerConfig auth;                             // registry glob -> username / password
};

// Runs a plugin for one repository: the seam between the provider and the process.
class CredentialPlugin {
 public:
  virtual ~CredentialPlugin() = default;
  virtual absl::StatusOr<CredentialProviderResponse> Exec(std::string_view repository) = 0;
};

// The exec plugin for `provider` (validated), running <bin_dir>/<provider.name>. Errors read as
// upstream's: "error execing credential provider plugin <name> for image <repo>: exit status
// 1: <stderr>", "...: context deadline exceeded: <stderr>", "apiVersion from credential plugin
// response did not match expected apiVersion:<want>, actual apiVersion:<got>", "error decoding
// credential provider plugin response from stdout".
std::unique_ptr<CredentialPlugin> NewExecPlugin(std::string bin_dir,
                                                const CredentialProvider& provider, Clock& clock,
                                                ExecOptions options = {});

// Decodes a plugin's stdout against the request's apiVersion (exposed for tests). Errors never
// quote the output.
absl::StatusOr<CredentialProviderResponse> DecodeCredentialProviderResponse(
    std::string_view stdout_data, std::string_view api_version);

// Upstream's pluginProvider: matching, the cache, singleflight.
class PluginProvider {
 public:
  PluginProvider(const CredentialProvider& provider, std::unique_ptr<CredentialPlugin> plugin,
                 Clock& clock);

  const std::string& name() const { return name_; }
  // Whether one of matchImages covers `repository` (URLsMatch).
  bool IsImageAllowed(std::string_view repository) const;
  // The credentials for `repository` (a normalized repository, see NormalizedRepository): from
  // the cache or a run of the plugin; empty when the image does not match or the plugin failed.
  DockerConfig Provide(std::string_view repository);

  // Callers currently inside a run for `repository` (the one running it included); for tests.
  int InFlightCallers(std::string_view repository) const;

 private:
  struct CacheEntry {
    DockerConfig credentials;
    absl::Time expires_at;
  };
  struct Call {
    bool done = false;
    int callers = 0;
    absl::StatusOr<CredentialProviderResponse> result = absl::UnknownError("not run");
  };

  std::optional<DockerConfig> CachedLocked(std::string_view repository)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<CredentialProviderResponse> ExecShared(std::string_view repository);

  const std::string name_;
  const std::vector<std::string> match_images_;
  const absl::Duration default_cache_duration_;
  const std::unique_ptr<CredentialPlugin> plugin_;
  Clock& clock_;

  mutable absl::Mutex mu_;
  std::map<std::string, CacheEntry, std::less<>> cache_ ABSL_GUARDED_BY(mu_);
  absl::Time last_purge_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<Call>, std::less<>> in_flight_ ABSL_GUARDED_BY(mu_);
};

// Upstream's providers keyring: the plugins and the node's docker config files (`node`, may be
// null: plugins only), ordered by name.
class ProvidersKeyring final : public DockerKeyring {
 public:
  ProvidersKeyring(std::vector<std::unique_ptr<PluginProvider>> plugins,
                   const NodeDockerKeyring* node);

  std::vector<AuthConfig> Lookup(std::string_view image) const override;

 private:
  struct Member {
    std::string name;
    PluginProvider* plugin = nullptr;  // null: the node's docker config
  };
  std::vector<std::unique_ptr<PluginProvider>> plugins_;
  const NodeDockerKeyring* node_;
  std::vector<Member> members_;  // sorted by name
};

struct PluginKeyringOptions {
  ExecOptions exec;
};

// Upstream's RegisterCredentialProviderPlugins + NewDockerKeyring: the keyring of the plugins
// configured in `config_path` (binaries in `bin_dir`) and of `node` (the node's docker config
// files; may be null). Use it where NodeDockerKeyring was used, as MakeDockerKeyring's fallback.
// An error means the kubelet must not start. A plugin named ".dockercfg" is upstream's fatal
// `Credential provider ".dockercfg" was registered twice`.
absl::StatusOr<std::unique_ptr<ProvidersKeyring>> RegisterCredentialProviderPlugins(
    const std::string& config_path, const std::string& bin_dir, Clock& clock,
    const NodeDockerKeyring* node, PluginKeyringOptions options = {});

}  // namespace kubelet::credentialprovider

#endif  // KUBELET_KUBELET_CREDENTIALPROVIDER_PLUGIN_H_
