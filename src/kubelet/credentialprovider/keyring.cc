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

// What Go's url unescape checks, by the part of the URL being unescaped.
enum class UrlPart { kHost, kZone, kPath, kUserinfo, kFragment };

// Go's url.unescape: %XX sequences decoded; an incomplete or non-hex escape fails with
// `invalid URL escape "%.."`; in a host, only escapes of non-ASCII bytes (and "%25") are
// allowed and an ASCII byte outside HostCharAllowed fails with `invalid character "c" in host
// name`.
bool Unescape(std::string_view in, UrlPart part, std::string* out, std::string* err) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size() || HexValue(in[i + 1]) < 0 || HexValue(in[i + 2]) < 0) {
        *err = absl::StrCat("invalid URL escape ", log::Quote(in.substr(i, 3)));
        return false;
      }
      if (part == UrlPart::kHost && HexValue(in[i + 1]) < 8 && in.substr(i, 3) != "%25") {
        *err = absl::StrCat("invalid URL escape ", log::Quote(in.substr(i, 3)));
        return false;
      }
      out->push_back(static_cast<char>(HexValue(in[i + 1]) * 16 + HexValue(in[i + 2])));
      i += 2;
      continue;
    }
    if ((part == UrlPart::kHost || part == UrlPart::kZone) &&
        !HostCharAllowed(static_cast<unsigned char>(c))) {
      *err = absl::StrCat("invalid character ", log::Quote(in.substr(i, 1)), " in host name");
      return false;
    }
    out->push_back(c);
  }
  return true;
}

// ":" followed by digits, or nothing.
bool ValidOptionalPort(std::string_view port) {
  if (port.empty()) return true;
  if (port[0] != ':') return false;
  return std::all_of(port.begin() + 1, port.end(), [](char c) { return absl::ascii_isdigit(c); });
}

// Go's url.validUserinfo.
bool ValidUserinfo(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("-._:~!$&'()*+,;=%@").find(c) != std::string_view::npos;
  });
}

// Go's url parseHost: the unescaped host[:port], or false with Go's message in `err`.
bool ParseHost(std::string_view host, std::string* out, std::string* err) {
  if (!host.empty() && host[0] == '[') {
    const size_t close = host.rfind(']');
    if (close == std::string_view::npos) {
      *err = "missing ']' in host";
      return false;
    }
    const std::string_view port = host.substr(close + 1);
    if (!ValidOptionalPort(port)) {
      *err = absl::StrCat("invalid port ", log::Quote(port), " after host");
      return false;
    }
    if (const size_t zone = host.substr(0, close).find("%25"); zone != std::string_view::npos) {
      std::string a, b, c;
      if (!Unescape(host.substr(0, zone), UrlPart::kHost, &a, err) ||
          !Unescape(host.substr(zone, close - zone), UrlPart::kZone, &b, err) ||
          !Unescape(host.substr(close), UrlPart::kHost, &c, err)) {
        return false;
      }
      *out = absl::StrCat(a, b, c);
      return true;
    }
  } else if (const size_t colon = host.rfind(':'); colon != std::string_view::npos) {
    const std::string_view port = host.substr(colon);
    if (!ValidOptionalPort(port)) {
      *err = absl::StrCat("invalid port ", log::Quote(port), " after host");
      return false;
    }
  }
  return Unescape(host, UrlPart::kHost, out, err);
}

// An absolute URL ("<scheme>://...") parsed as Go's url.Parse would, or nullopt where it fails
// (with Go's reason in `err` when given: "invalid URL escape \"%zz\"", ...).
std::optional<Url> ParseUrl(std::string_view raw, std::string* err = nullptr) {
  std::string ignored;
  if (err == nullptr) err = &ignored;
  const size_t hash = raw.find('#');
  const std::string_view fragment =
      hash == std::string_view::npos ? std::string_view() : raw.substr(hash + 1);
  raw = raw.substr(0, hash);
  for (char c : raw) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      *err = "net/url: invalid control character in URL";
      return std::nullopt;
    }
  }
  const size_t scheme_end = raw.find("://");
  if (scheme_end == std::string_view::npos) {
    *err = "missing \"://\"";
    return std::nullopt;
  }
  std::string_view rest = raw.substr(scheme_end + 3);
  rest = rest.substr(0, rest.find('?'));
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  const std::string_view path =
      slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  std::string_view userinfo;
  bool has_userinfo = false;
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    userinfo = authority.substr(0, at);
    has_userinfo = true;
    authority = authority.substr(at + 1);
  }
  Url url;
  if (!ParseHost(authority, &url.host, err)) return std::nullopt;
  if (has_userinfo) {
    if (!ValidUserinfo(userinfo)) {
      *err = "net/url: invalid userinfo";
      return std::nullopt;
    }
    std::string decoded;
    const size_t colon = userinfo.find(':');
    if (!Unescape(userinfo.substr(0, colon), UrlPart::kUserinfo, &decoded, err)) {
      return std::nullopt;
    }
    if (colon != std::string_view::npos &&
        !Unescape(userinfo.substr(colon + 1), UrlPart::kUserinfo, &decoded, err)) {
      return std::nullopt;
    }
  }
  if (!Unescape(path, UrlPart::kPath, &url.path, err)) return std::nullopt;
  std::string decoded_fragment;
  if (!Unescape(fragment, UrlPart::kFragment, &decoded_fragment, err)) return std::nullopt;
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

absl::Status CheckSchemelessURL(std::string_view url) {
  const std::string full = absl::StrCat("https://", AV(url));
  std::string err;
  if (ParseUrl(full, &err).has_value()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("parse ", log::Quote(full), ": ", err));
}

std::optional<std::string> NormalizedRepository(std::string_view image) {
  return RepositoryName(image);
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
