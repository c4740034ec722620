// Credential provider plugins: the per-provider cache and singleflight, the providers keyring and
// the start-up registration.
#include "kubelet/credentialprovider/plugin.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/go_compat.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/credentialprovider/plugin_internal.h"

namespace kubelet::credentialprovider {
namespace {

constexpr std::string_view kGlobalCacheKey = "global";

// Upstream's parseRegistry: the repository up to its first '/'.
std::string_view RegistryOf(std::string_view repository) {
  return repository.substr(0, repository.find('/'));
}

std::string JoinPath(std::string_view dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  if (dir.back() == '/') return absl::StrCat(AV(dir), AV(name));
  return absl::StrCat(AV(dir), "/", AV(name));
}

// Go's exec.LookPath for a path with a slash: an existing, non-directory, executable file.
absl::Status CheckExecutable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(absl::StrCat("plugin binary executable ", path, " did not exist"));
    }
    return absl::InvalidArgumentError(absl::StrCat("error inspecting binary executable ", path,
                                                   ": exec: ", log::Quote(path), ": stat ", path,
                                                   ": ", GoErrnoText(err)));
  }
  int err = 0;
  if (S_ISDIR(st.st_mode)) {
    err = EISDIR;
  } else if (::faccessat(AT_FDCWD, path.c_str(), X_OK, AT_EACCESS) != 0) {
    err = errno;
    // Where the check itself is unavailable, Go falls back to the permission bits.
    if (err == ENOSYS || err == EPERM) err = (st.st_mode & 0111) != 0 ? 0 : EACCES;
  }
  if (err == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("error inspecting binary executable ", path,
                                                 ": exec: ", log::Quote(path), ": ",
                                                 GoErrnoText(err)));
}

}  // namespace

// ---- PluginProvider ----

PluginProvider::PluginProvider(const CredentialProvider& provider,
                               std::unique_ptr<CredentialPlugin> plugin, Clock& clock)
    : name_(provider.name),
      match_images_(provider.match_images),
      default_cache_duration_(provider.default_cache_duration.value_or(absl::ZeroDuration())),
      plugin_(std::move(plugin)),
      clock_(clock),
      last_purge_(clock.Now()) {}

bool PluginProvider::IsImageAllowed(std::string_view repository) const {
  return std::any_of(match_images_.begin(), match_images_.end(),
                     [&](const std::string& m) { return URLsMatch(m, repository); });
}

std::optional<DockerConfig> PluginProvider::CachedLocked(std::string_view repository) {
  const absl::Time now = clock_.Now();
  if (now > last_purge_ + kCachePurgeInterval) {
    for (auto it = cache_.begin(); it != cache_.end();) {
      it = now > it->second.expires_at ? cache_.erase(it) : std::next(it);
    }
    last_purge_ = now;
  }
  for (std::string_view key : {repository, RegistryOf(repository), kGlobalCacheKey}) {
    auto it = cache_.find(key);
    if (it == cache_.end()) continue;
    if (now > it->second.expires_at) {
      cache_.erase(it);
      continue;
    }
    return it->second.credentials;
  }
  return std::nullopt;
}

absl::StatusOr<CredentialProviderResponse> PluginProvider::ExecShared(std::string_view repository) {
  std::shared_ptr<Call> call;
  bool leader = false;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = in_flight_.find(repository); it != in_flight_.end()) {
      call = it->second;
    } else {
      call = std::make_shared<Call>();
      in_flight_.emplace(std::string(repository), call);
      leader = true;
    }
    ++call->callers;
  }
  if (leader) {
    absl::StatusOr<CredentialProviderResponse> result;
    try {
      result = plugin_->Exec(repository);
    } catch (const std::exception& e) {
      result =
          absl::InternalError(absl::StrCat("credential provider plugin ", name_, ": ", e.what()));
    }
    absl::MutexLock lock(&mu_);
    call->result = std::move(result);
    call->done = true;
    in_flight_.erase(in_flight_.find(repository));
    --call->callers;
    return call->result;
  }
  absl::MutexLock lock(&mu_);
  // Bounded by the leader's run, itself bounded by the exec timeout.
  mu_.Await(absl::Condition(&call->done));
  --call->callers;
  return call->result;
}

int PluginProvider::InFlightCallers(std::string_view repository) const {
  absl::MutexLock lock(&mu_);
  auto it = in_flight_.find(repository);
  return it == in_flight_.end() ? 0 : it->second->callers;
}

DockerConfig PluginProvider::Provide(std::string_view repository) {
  if (!IsImageAllowed(repository)) return {};
  {
    absl::MutexLock lock(&mu_);
    if (std::optional<DockerConfig> cached = CachedLocked(repository)) return *std::move(cached);
  }
  absl::StatusOr<CredentialProviderResponse> response = ExecShared(repository);
  if (!response.ok()) {
    KLOG_ERROR(absl::OkStatus(),
               absl::StrCat("Failed getting credential from external registry credential "
                            "provider: ",
                            response.status().message()));
    return {};
  }
  std::string key;
  if (response->cache_key_type == "Image") {
    key = std::string(repository);
  } else if (response->cache_key_type == "Registry") {
    key = std::string(RegistryOf(repository));
  } else if (response->cache_key_type == "Global") {
    key = std::string(kGlobalCacheKey);
  } else {
    KLOG_ERROR(absl::OkStatus(),
               absl::StrCat("credential provider plugin did not return a valid cacheKeyType: ",
                            log::Quote(internal::EchoCacheKeyType(response->cache_key_type))));
    return {};
  }
  DockerConfig config = std::move(response->auth);
  // An explicit zero: not cached at all; absent: the provider's default (zero: not cached).
  absl::Duration lifetime = default_cache_duration_;
  if (response->cache_duration.has_value()) lifetime = *response->cache_duration;
  if (lifetime == absl::ZeroDuration()) return config;
  absl::MutexLock lock(&mu_);
  cache_[key] = CacheEntry{config, clock_.Now() + lifetime};
  return config;
}

// ---- ProvidersKeyring ----

ProvidersKeyring::ProvidersKeyring(std::vector<std::unique_ptr<PluginProvider>> plugins,
                                   const NodeDockerKeyring* node)
    : plugins_(std::move(plugins)), node_(node) {
  if (node_ != nullptr) members_.push_back(Member{std::string(kDockerConfigProviderName), nullptr});
  for (const auto& p : plugins_) members_.push_back(Member{p->name(), p.get()});
  std::stable_sort(members_.begin(), members_.end(),
                   [](const Member& a, const Member& b) { return a.name < b.name; });
  for (const Member& m : members_)
    KLOG_V(4, absl::StrCat("Registering credential provider: ", m.name));
}

std::vector<AuthConfig> ProvidersKeyring::Lookup(std::string_view image) const {
  const std::optional<std::string> repository = NormalizedRepository(image);
  if (!repository.has_value()) return {};
  BasicDockerKeyring keyring;
  for (const Member& m : members_) {
    if (m.plugin != nullptr) {
      keyring.Add(m.plugin->Provide(*repository));
    } else {
      keyring.Add(node_->Config());
    }
  }
  return keyring.Lookup(*repository);
}

// ---- start-up ----

absl::StatusOr<std::unique_ptr<ProvidersKeyring>> RegisterCredentialProviderPlugins(
    const std::string& config_path, const std::string& bin_dir, Clock& clock,
    const NodeDockerKeyring* node, PluginKeyringOptions options) {
  struct stat st {};
  if (::stat(bin_dir.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(
          absl::StrCat("plugin binary directory ", bin_dir, " did not exist"));
    }
    return absl::InvalidArgumentError(absl::StrCat("error inspecting binary directory ", bin_dir,
                                                   ": stat ", bin_dir, ": ", GoErrnoText(err)));
  }
  absl::StatusOr<CredentialProviderConfig> config = ReadCredentialProviderConfigFile(config_path);
  if (!config.ok()) return config.status();
  if (absl::Status s = ValidationStatus(ValidateCredentialProviderConfig(*config)); !s.ok()) {
    return s;
  }
  std::vector<std::unique_ptr<PluginProvider>> plugins;
  for (const CredentialProvider& provider : config->providers) {
    if (absl::Status s = CheckExecutable(JoinPath(bin_dir, provider.name)); !s.ok()) return s;
    if (provider.name == kDockerConfigProviderName) {
      return absl::InvalidArgumentError(
          absl::StrCat("Credential provider ", log::Quote(provider.name), " was registered twice"));
    }
    plugins.push_back(std::make_unique<PluginProvider>(
        provider, NewExecPlugin(bin_dir, provider, clock, options.exec), clock));
    KLOG_V(4, absl::StrCat("Registered credential provider ", log::Quote(provider.name)));
  }
  return std::make_unique<ProvidersKeyring>(std::move(plugins), node);
}

}  // namespace kubelet::credentialprovider
