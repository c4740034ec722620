// Image pull credentials (upstream v1.28 pkg/credentialprovider and
// pkg/credentialprovider/secrets): docker config documents and pull secrets turned into the
// AuthConfigs the kubelet hands to the CRI's PullImage, one pull attempt per AuthConfig, in order.
//
//   * Parsing: ParseDockerConfigJson reads {"auths": {...}} (.dockerconfigjson secrets,
//     ~/.docker/config.json), ParseDockerCfg the legacy {"<registry>": {...}} (.dockercfg). Entry
//     members are read as Go's encoding/json reads them: names match case-insensitively, null is
//     absent, a value of another type is an error, unknown members are ignored. A non-empty
//     "auth" (base64 of "user:pass", padded or not) replaces username and password.
//   * BasicDockerKeyring indexes each registry location by host[:port][/path] (scheme dropped, a
//     leading "/v1/" or "/v2/" path reduced to "/") and answers a lookup with the credentials of
//     every key that URLsMatch the image's repository, keys in reverse lexicographic order (so
//     "reg.io/team" comes before "reg.io"); when none matches, a Docker Hub image gets the
//     credentials stored for "index.docker.io" (e.g. from "https://index.docker.io/v1/").
//   * MakeDockerKeyring: a pod's pull secrets ahead of the node's own keyring.
//   * NodeDockerKeyring: the node's docker config files, re-read at most every 5 minutes.
//
// Lookup takes a full image reference ("busybox", "reg.io:5000/a/b:tag", "x@sha256:...") and
// matches its repository normalized like docker's ParseNormalizedNamed ("busybox" ->
// "docker.io/library/busybox"; tag and digest dropped). An unparsable reference has no
// credentials. An empty result means "pull anonymously".
//
// Thread-safety: Lookup may be called concurrently on every keyring. BasicDockerKeyring::Add and
// UnionDockerKeyring::Add/AddBorrowed must not run concurrently with anything else on the same
// object. The free functions are pure.
#ifndef KUBELET_KUBELET_CREDENTIALPROVIDER_KEYRING_H_
#define KUBELET_KUBELET_CREDENTIALPROVIDER_KEYRING_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace kubelet::credentialprovider {

// What the CRI's AuthConfig carries. Credentials read from docker config documents set username,
// password, email and the tokens; auth and server_address stay empty (as upstream).
struct AuthConfig {
  std::string username;
  std::string password;
  std::string auth;
  std::string server_address;
  std::string identity_token;
  std::string registry_token;
  std::string email;

  bool operator==(const AuthConfig&) const = default;
};

// One docker config document: registry location as written ("https://index.docker.io/v1/",
// "127.0.0.1:5000", "*.example.com/ns") -> credentials, in document order.
using DockerConfig = std::vector<std::pair<std::string, AuthConfig>>;

// {"auths": {"<location>": {entry}}, "HttpHeaders": {...}}; other top-level members are ignored,
// a null document or "auths" is an empty config.
absl::StatusOr<DockerConfig> ParseDockerConfigJson(std::string_view json);
// {"<location>": {entry}}; a null document is an empty config.
absl::StatusOr<DockerConfig> ParseDockerCfg(std::string_view json);

// Whether `target` (a schemeless URL: host[:port][/path]) is covered by `glob`: same port (absent
// on both counts as equal), same number of '.'-separated host labels each matching its glob label
// (* ? [...]), and glob's path a string prefix of target's. Unparsable input never matches.
bool URLsMatch(std::string_view glob, std::string_view target);

// Whether Go's url.Parse accepts "https://" + `url` (upstream's ParseSchemelessURL); the error
// is Go's, e.g. `parse "https://reg.io:x": invalid port ":x" after host`.
absl::Status CheckSchemelessURL(std::string_view url);

// The repository `image` is pulled from, as upstream's ParseImageName names it (what the
// kubelet hands to its keyring and to credential provider plugins): "busybox:1" ->
// "docker.io/library/busybox", "reg.io:5000/a/b@sha256:..." -> "reg.io:5000/a/b". nullopt when
// the reference does not parse.
std::optional<std::string> NormalizedRepository(std::string_view image);

class DockerKeyring {
 public:
  virtual ~DockerKeyring() = default;
  // Credentials to try, in order, for `image`. Empty: none match (pull anonymously).
  virtual std::vector<AuthConfig> Lookup(std::string_view image) const = 0;
};

class BasicDockerKeyring final : public DockerKeyring {
 public:
  // Indexes every entry of `cfg`; a location that does not parse as a URL is logged and skipped.
  // Entries reaching the same key keep the order in which they were added.
  void Add(const DockerConfig& cfg);
  std::vector<AuthConfig> Lookup(std::string_view image) const override;

 private:
  std::vector<std::string> index_;  // distinct keys, reverse lexicographic order
  std::map<std::string, std::vector<AuthConfig>> creds_;
};

// Concatenates the lookups of its members, in the order they were added.
class UnionDockerKeyring final : public DockerKeyring {
 public:
  void Add(std::unique_ptr<DockerKeyring> keyring);
  // `keyring` (null is ignored) is borrowed and must outlive this union.
  void AddBorrowed(const DockerKeyring* keyring);
  std::vector<AuthConfig> Lookup(std::string_view image) const override;

 private:
  std::vector<std::unique_ptr<DockerKeyring>> owned_;
  std::vector<const DockerKeyring*> members_;
};

// One pull secret: its name, its type and its data (decoded bytes by key).
struct PullSecret {
  std::string name;
  std::string type;
  std::map<std::string, std::string> data;
};

// The pod's pull secrets ahead of `fallback` (may be null; borrowed, must outlive the result).
// As upstream: a secret of type kubernetes.io/dockerconfigjson contributes its non-empty
// ".dockerconfigjson", one of type kubernetes.io/dockercfg its non-empty ".dockercfg"; other
// secrets nothing. All of them go into one BasicDockerKeyring. Data that does not parse is an
// InvalidArgument error naming the secret and the key.
absl::StatusOr<std::unique_ptr<DockerKeyring>> MakeDockerKeyring(
    const std::vector<PullSecret>& secrets, const DockerKeyring* fallback);

// Where the node's docker config files are looked for: "config.json" in each of
// `config_json_dirs` (the first that reads and parses wins), else ".dockercfg" in each of
// `dockercfg_dirs`.
struct DockerConfigSearchPath {
  std::vector<std::string> config_json_dirs;
  std::vector<std::string> dockercfg_dirs;
};

// Upstream's default search path: config.json in `root_dir`, the working directory,
// $HOME/.docker and /.docker; .dockercfg in `root_dir`, the working directory, $HOME and /.
// Empty `root_dir`, working directory or $HOME are left out. Reads the environment: call at
// start-up.
DockerConfigSearchPath DefaultDockerConfigSearchPath(std::string_view root_dir);

// The node's own credentials from its docker config files (upstream's default keyring). The files
// are read at the first Lookup and again at the first Lookup kCacheLifetime or more after the
// previous read; a missing file is skipped silently, an unreadable or invalid one is logged and
// skipped. Lookups wait while a re-read is in progress.
// Ownership: borrows `clock`, which must outlive the keyring.
class NodeDockerKeyring final : public DockerKeyring {
 public:
  static constexpr absl::Duration kCacheLifetime = absl::Minutes(5);

  // DefaultDockerConfigSearchPath(root_dir), with root_dir the kubelet's --root-dir.
  NodeDockerKeyring(std::string root_dir, Clock& clock);
  NodeDockerKeyring(DockerConfigSearchPath search_path, Clock& clock);

  std::vector<AuthConfig> Lookup(std::string_view image) const override;
  // The docker config document Lookup answers from (re-read under the same rule): upstream's
  // ".dockercfg" provider, which ProvidersKeyring (plugin.h) merges with the plugins' answers.
  DockerConfig Config() const;

 private:
  // Re-reads the files when due.
  void RefreshLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const DockerConfigSearchPath search_path_;
  Clock& clock_;
  mutable absl::Mutex mu_;
  mutable std::optional<absl::Time> expiry_ ABSL_GUARDED_BY(mu_);  // unset: never read
  mutable DockerConfig config_ ABSL_GUARDED_BY(mu_);
  mutable BasicDockerKeyring keyring_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet::credentialprovider

#endif  // KUBELET_KUBELET_CREDENTIALPROVIDER_KEYRING_H_
