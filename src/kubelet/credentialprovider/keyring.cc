#include "kubelet/credentialprovider/keyring.h"

#include <fnmatch.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/pod_defaults.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::credentialprovider {
namespace {

constexpr std::string_view kDefaultRegistryHost = "index.docker.io";
constexpr std::string_view kDockerConfigJsonKey = ".dockerconfigjson";
constexpr std::string_view kDockerCfgKey = ".dockercfg";
constexpr std::string_view kSecretTypeDockerConfigJson = "kubernetes.io/dockerconfigjson";
constexpr std::string_view kSecretTypeDockercfg = "kubernetes.io/dockercfg";

// The parts of a Go url.URL the keyring uses.
struct Url {
  std::string host;  // as written, port and IPv6 brackets included
  std::string path;  // unescaped
};

// Characters Go's url.Parse accepts (unescaped) in a host.
bool HostCharAllowed(unsigned char c) {
  if (c >= 0x80 || absl::ascii_isalnum(c)) return true;
  return std::string_view("-_.~!$&'()*+,;=:[]<>\"").find(static_cast<char>(c)) !=
         std::string_view::npos;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool UnescapePath(std::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out->push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size()) return false;
    const int hi = HexValue(in[i + 1]);
    const int lo = HexValue(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

// ":" followed by digits, or nothing.
bool ValidOptionalPort(std::string_view port) {
  if (port.empty()) return true;
  if (port[0] != ':') return false;
  return std::all_of(port.begin() + 1, port.end(), [](char c) { return absl::ascii_isdigit(c); });
}

// An absolute URL ("<scheme>://...") parsed as Go's url.Parse would, or nullopt where it fails.
std::optional<Url> ParseUrl(std::string_view raw) {
  for (char c : raw) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return std::nullopt;
  }
  raw = raw.substr(0, raw.find('#'));
  const size_t scheme_end = raw.find("://");
  if (scheme_end == std::string_view::npos) return std::nullopt;
  std::string_view rest = raw.substr(scheme_end + 3);
  rest = rest.substr(0, rest.find('?'));
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  const std::string_view path =
      slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority = authority.substr(at + 1);
  }
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos || !ValidOptionalPort(authority.substr(close + 1))) {
      return std::nullopt;
    }
  } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    if (!ValidOptionalPort(authority.substr(colon))) return std::nullopt;
  }
  for (char c : authority) {
    if (!HostCharAllowed(static_cast<unsigned char>(c))) return std::nullopt;
  }
  Url url;
  url.host = std::string(authority);
  if (!UnescapePath(path, &url.path)) return std::nullopt;
  return url;
}

std::optional<Url> ParseSchemelessUrl(std::string_view s) {
  return ParseUrl(absl::StrCat("https://", AV(s)));
}

// Go's net.SplitHostPort, falling back to (host, "") where it fails, as upstream does.
void SplitHostPort(std::string_view hostport, std::string_view* host, std::string_view* port) {
  *host = hostport;
  *port = {};
  if (!hostport.empty() && hostport[0] == '[') {
    const size_t close = hostport.find(']');
    if (close == std::string_view::npos || close + 1 >= hostport.size() ||
        hostport[close + 1] != ':') {
      return;
    }
    const std::string_view inside = hostport.substr(1, close - 1);
    const std::string_view after = hostport.substr(close + 2);
    if (after.find_first_of("[]") != std::string_view::npos) return;
    *host = inside;
    *port = after;
    return;
  }
  const size_t colon = hostport.rfind(':');
  if (colon == std::string_view::npos) return;
  const std::string_view h = hostport.substr(0, colon);
  const std::string_view p = hostport.substr(colon + 1);
  if (h.find(':') != std::string_view::npos) return;  // too many colons
  if (hostport.find_first_of("[]") != std::string_view::npos) return;
  *host = h;
  *port = p;
}

bool GlobMatch(const std::string& pattern, const std::string& name) {
  return ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

bool UrlsMatch(const Url& glob, const Url& target) {
  std::string_view glob_host, glob_port, target_host, target_port;
  SplitHostPort(glob.host, &glob_host, &glob_port);
  SplitHostPort(target.host, &target_host, &target_port);
  if (glob_port != target_port) return false;
  const std::vector<std::string> glob_parts = absl::StrSplit(AV(glob_host), '.');
  const std::vector<std::string> target_parts = absl::StrSplit(AV(target_host), '.');
  if (glob_parts.size() != target_parts.size()) return false;
  if (!target.path.starts_with(glob.path)) return false;
  for (size_t i = 0; i < glob_parts.size(); ++i) {
    if (!GlobMatch(glob_parts[i], target_parts[i])) return false;
  }
  return true;
}

// The repository of an image reference as docker's ParseNormalizedNamed names it, without tag
// and digest: "busybox:1" -> "docker.io/library/busybox", "reg:5000/a@sha256:..." -> "reg:5000/a".
std::optional<std::string> RepositoryName(std::string_view image) {
  std::string tag, digest;
  if (!api::ParseImageReference(image, &tag, &digest)) return std::nullopt;
  std::string_view name = image.substr(0, image.find('@'));
  if (!tag.empty()) name.remove_suffix(tag.size() + 1);
  std::string_view domain = "docker.io";
  std::string_view remainder = name;
  if (const size_t slash = name.find('/'); slash != std::string_view::npos) {
    const std::string_view first = name.substr(0, slash);
    const bool is_domain =
        first.find_first_of(".:") != std::string_view::npos || first == "localhost" ||
        std::any_of(first.begin(), first.end(), [](char c) { return absl::ascii_isupper(c); });
    if (is_domain) {
      domain = first;
      remainder = name.substr(slash + 1);
    }
  }
  if (domain == "index.docker.io") domain = "docker.io";
  if (domain == "docker.io" && remainder.find('/') == std::string_view::npos) {
    return absl::StrCat(AV(domain), "/library/", AV(remainder));
  }
  return absl::StrCat(AV(domain), "/", AV(remainder));
}

// Whether a normalized repository is pulled from Docker Hub, judged by its first component.
bool IsDefaultRegistryMatch(std::string_view repo) {
  const size_t slash = repo.find('/');
  const std::string_view first = repo.substr(0, slash);
  if (first.empty()) return false;
  if (slash == std::string_view::npos) return true;
  if (first == "docker.io" || first == "index.docker.io") return true;
  return first.find_first_of(".:") == std::string_view::npos;
}

}  // namespace

bool URLsMatch(std::string_view glob, std::string_view target) {
  const std::optional<Url> g = ParseSchemelessUrl(glob);
  const std::optional<Url> t = ParseSchemelessUrl(target);
  return g.has_value() && t.has_value() && UrlsMatch(*g, *t);
}

void BasicDockerKeyring::Add(const DockerConfig& cfg) {
  for (const auto& [location, auth] : cfg) {
    std::string value = location;
    if (!value.starts_with("https://") && !value.starts_with("http://")) {
      value = absl::StrCat("https://", value);
    }
    const std::optional<Url> parsed = ParseUrl(value);
    if (!parsed.has_value()) {
      KLOG_WARNING("Entry in dockercfg invalid, ignoring", "entry", location);
      continue;
    }
    // Docker treats "host/v1/" and "host/v2/" as the host itself.
    std::string_view path = parsed->path;
    if (path.starts_with("/v1/") || path.starts_with("/v2/")) path.remove_prefix(3);
    std::string key = parsed->host;
    if (!path.empty() && path != "/") absl::StrAppend(&key, AV(path));
    std::vector<AuthConfig>& creds = creds_[key];
    if (creds.empty()) index_.push_back(key);
    creds.push_back(auth);
  }
  // More specific keys sort after their prefixes, so the reverse order tries them first.
  std::sort(index_.begin(), index_.end(), std::greater<>());
}

std::vector<AuthConfig> BasicDockerKeyring::Lookup(std::string_view image) const {
  std::vector<AuthConfig> out;
  const std::optional<std::string> repo = RepositoryName(image);
  if (!repo.has_value()) return out;
  const std::optional<Url> target = ParseSchemelessUrl(*repo);
  if (!target.has_value()) return out;
  for (const std::string& key : index_) {
    const std::optional<Url> glob = ParseSchemelessUrl(key);
    if (!glob.has_value() || !UrlsMatch(*glob, *target)) continue;
    const std::vector<AuthConfig>& creds = creds_.find(key)->second;
    out.insert(out.end(), creds.begin(), creds.end());
  }
  if (out.empty() && IsDefaultRegistryMatch(*repo)) {
    if (auto it = creds_.find(std::string(kDefaultRegistryHost)); it != creds_.end()) {
      out = it->second;
    }
  }
  return out;
}

void UnionDockerKeyring::Add(std::unique_ptr<DockerKeyring> keyring) {
  if (keyring == nullptr) return;
  members_.push_back(keyring.get());
  owned_.push_back(std::move(keyring));
}

void UnionDockerKeyring::AddBorrowed(const DockerKeyring* keyring) {
  if (keyring != nullptr) members_.push_back(keyring);
}

std::vector<AuthConfig> UnionDockerKeyring::Lookup(std::string_view image) const {
  std::vector<AuthConfig> out;
  for (const DockerKeyring* member : members_) {
    std::vector<AuthConfig> creds = member->Lookup(image);
    out.insert(out.end(), std::make_move_iterator(creds.begin()),
               std::make_move_iterator(creds.end()));
  }
  return out;
}

absl::StatusOr<std::unique_ptr<DockerKeyring>> MakeDockerKeyring(
    const std::vector<PullSecret>& secrets, const DockerKeyring* fallback) {
  auto from_secrets = std::make_unique<BasicDockerKeyring>();
  bool found = false;
  for (const PullSecret& secret : secrets) {
    std::string_view key;
    if (secret.type == kSecretTypeDockerConfigJson) {
      key = kDockerConfigJsonKey;
    } else if (secret.type == kSecretTypeDockercfg) {
      key = kDockerCfgKey;
    } else {
      continue;
    }
    const auto it = secret.data.find(std::string(key));
    if (it == secret.data.end() || it->second.empty()) continue;
    absl::StatusOr<DockerConfig> cfg = key == kDockerConfigJsonKey
                                           ? ParseDockerConfigJson(it->second)
                                           : ParseDockerCfg(it->second);
    if (!cfg.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("pull secret \"", secret.name, "\": key \"",
                                                     AV(key), "\": ", cfg.status().message()));
    }
    from_secrets->Add(*cfg);
    found = true;
  }
  auto keyring = std::make_unique<UnionDockerKeyring>();
  if (found) keyring->Add(std::move(from_secrets));
  keyring->AddBorrowed(fallback);
  return keyring;
}

}  // namespace kubelet::credentialprovider
