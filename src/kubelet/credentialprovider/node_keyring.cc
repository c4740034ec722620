// The node's docker config files (upstream's default docker config provider behind its 5-minute
// caching provider).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/credentialprovider/keyring.h"

namespace kubelet::credentialprovider {
namespace {

constexpr std::string_view kConfigJsonFileName = "config.json";
constexpr std::string_view kDockerCfgFileName = ".dockercfg";
// Far above any real docker config; a bigger file is refused rather than read into memory.
constexpr size_t kMaxFileBytes = 4 << 20;

std::string JoinPath(std::string_view dir, std::string_view name) {
  if (!dir.empty() && dir.back() == '/') return absl::StrCat(AV(dir), AV(name));
  return absl::StrCat(AV(dir), "/", AV(name));
}

// Reads `path` whole. Returns 0 or an errno value (EFBIG past kMaxFileBytes).
int ReadFile(const std::string& path, std::string* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  out->clear();
  char buf[16384];
  int err = 0;
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    if (n == 0) break;
    if (out->size() + static_cast<size_t>(n) > kMaxFileBytes) {
      err = EFBIG;
      break;
    }
    out->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return err;
}

// The first file named `name` in `dirs` that reads and parses with `parse`.
template <typename Parse>
std::optional<DockerConfig> FindConfig(const std::vector<std::string>& dirs, std::string_view name,
                                       Parse parse) {
  for (const std::string& dir : dirs) {
    const std::string path = JoinPath(dir, name);
    std::string data;
    if (const int err = ReadFile(path, &data); err != 0) {
      if (err != ENOENT && err != ENOTDIR) {
        KLOG_WARNING("Ignoring unreadable docker config file", "path", path, "err",
                     std::error_code(err, std::generic_category()).message());
      }
      continue;
    }
    absl::StatusOr<DockerConfig> cfg = parse(data);
    if (!cfg.ok()) {
      KLOG_WARNING("Ignoring invalid docker config file", "path", path, "err", cfg.status());
      continue;
    }
    KLOG_V(4, "Found docker config file", "path", path);
    return *std::move(cfg);
  }
  return std::nullopt;
}

DockerConfig ReadNodeDockerConfig(const DockerConfigSearchPath& search_path) {
  if (auto cfg =
          FindConfig(search_path.config_json_dirs, kConfigJsonFileName, ParseDockerConfigJson)) {
    return *std::move(cfg);
  }
  if (auto cfg = FindConfig(search_path.dockercfg_dirs, kDockerCfgFileName, ParseDockerCfg)) {
    return *std::move(cfg);
  }
  return {};
}

}  // namespace

DockerConfigSearchPath DefaultDockerConfigSearchPath(std::string_view root_dir) {
  std::error_code ec;
  std::string cwd = std::filesystem::current_path(ec).string();
  if (ec) cwd.clear();
  const char* home_env = std::getenv("HOME");
  const std::string home = home_env != nullptr ? home_env : "";

  DockerConfigSearchPath sp;
  for (const std::string_view dir : {root_dir, std::string_view(cwd)}) {
    if (dir.empty()) continue;
    sp.config_json_dirs.emplace_back(dir);
    sp.dockercfg_dirs.emplace_back(dir);
  }
  if (!home.empty()) {
    sp.config_json_dirs.push_back(JoinPath(home, ".docker"));
    sp.dockercfg_dirs.push_back(home);
  }
  sp.config_json_dirs.emplace_back("/.docker");
  sp.dockercfg_dirs.emplace_back("/");
  return sp;
}

NodeDockerKeyring::NodeDockerKeyring(std::string root_dir, Clock& clock)
    : NodeDockerKeyring(DefaultDockerConfigSearchPath(root_dir), clock) {}

NodeDockerKeyring::NodeDockerKeyring(DockerConfigSearchPath search_path, Clock& clock)
    : search_path_(std::move(search_path)), clock_(clock) {}

void NodeDockerKeyring::RefreshLocked() const {
  if (expiry_.has_value() && clock_.Now() < *expiry_) return;
  config_ = ReadNodeDockerConfig(search_path_);
  BasicDockerKeyring fresh;
  fresh.Add(config_);
  keyring_ = std::move(fresh);
  expiry_ = clock_.Now() + kCacheLifetime;
}

std::vector<AuthConfig> NodeDockerKeyring::Lookup(std::string_view image) const {
  absl::MutexLock lock(&mu_);
  RefreshLocked();
  return keyring_.Lookup(image);
}

DockerConfig NodeDockerKeyring::Config() const {
  absl::MutexLock lock(&mu_);
  RefreshLocked();
  return config_;
}

}  // namespace kubelet::credentialprovider
