#include "apiclient/proxy.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/strings.h"

namespace kubelet::apiclient {
namespace {

// An IP address in the 16-byte form of Go's net.IP (IPv4 as ::ffff:a.b.c.d).
struct Ip {
  std::array<unsigned char, 16> b{};
  bool v4() const {
    static constexpr unsigned char kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return std::memcmp(b.data(), kPrefix, sizeof(kPrefix)) == 0;
  }
  bool Loopback() const {
    if (v4()) return b[12] == 127;
    static constexpr unsigned char kLoopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    return std::memcmp(b.data(), kLoopback, sizeof(kLoopback)) == 0;
  }
  bool operator==(const Ip& o) const { return b == o.b; }
};

std::optional<Ip> ParseIp(std::string_view s) {
  const std::string text(s);
  Ip ip;
  unsigned char v4[4];
  if (inet_pton(AF_INET, text.c_str(), v4) == 1) {
    ip.b[10] = ip.b[11] = 0xff;
    std::memcpy(ip.b.data() + 12, v4, 4);
    return ip;
  }
  if (inet_pton(AF_INET6, text.c_str(), ip.b.data()) == 1) return ip;
  return std::nullopt;
}

struct Cidr {
  Ip network;
  bool v4 = false;
  int bits = 0;  // of the 16-byte form
  bool Contains(const Ip& ip) const {
    if (ip.v4() != v4) return false;
    for (int i = 0; i < 16; ++i) {
      const int keep = std::min(8, std::max(0, bits - 8 * i));
      const unsigned char mask = static_cast<unsigned char>(0xff00 >> keep);
      if ((ip.b[i] & mask) != (network.b[i] & mask)) return false;
    }
    return true;
  }
};

std::optional<Cidr> ParseCidr(std::string_view s) {
  const size_t slash = s.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::optional<Ip> ip = ParseIp(s.substr(0, slash));
  std::string_view len = s.substr(slash + 1);
  if (!ip || len.empty() || len.size() > 3) return std::nullopt;
  int n = 0;
  for (char c : len) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  // As Go's ParseCIDR: a network written in IPv6 syntax (::ffff:a.b.c.d/n included) is an IPv6
  // one, which contains no IPv4 address.
  Cidr c;
  c.network = *ip;
  c.v4 = ip->v4() && s.substr(0, slash).find(':') == std::string_view::npos;
  if (n > (c.v4 ? 32 : 128)) return std::nullopt;
  c.bits = c.v4 ? n + 96 : n;
  return c;
}

// Go's net.SplitHostPort: "host:port" or "[v6]:port"; false when there is no port or the
// form is wrong.
bool SplitHostPort(std::string_view s, std::string_view* host, std::string_view* port) {
  if (!s.empty() && s[0] == '[') {
    const size_t end = s.find(']');
    if (end == std::string_view::npos || end + 1 >= s.size() || s[end + 1] != ':') return false;
    *host = s.substr(1, end - 1);
    *port = s.substr(end + 2);
  } else {
    const size_t colon = s.rfind(':');
    if (colon == std::string_view::npos) return false;
    *host = s.substr(0, colon);
    *port = s.substr(colon + 1);
    if (host->find(':') != std::string_view::npos) return false;  // too many colons
  }
  if (host->find_first_of("[]") != std::string_view::npos ||
      port->find_first_of("[]") != std::string_view::npos) {
    return false;
  }
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int hi = HexValue(s[i + 1]), lo = HexValue(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

bool IsScheme(std::string_view s) {
  return s == "http" || s == "https" || s == "socks5" || s == "socks5h";
}

}  // namespace

ProxyEnvironment ProxyEnvironmentFrom(const std::function<std::string(const char*)>& lookup) {
  auto any = [&](const char* upper, const char* lower) {
    std::string v = lookup(upper);
    return v.empty() ? lookup(lower) : v;
  };
  ProxyEnvironment env;
  env.http_proxy = any("HTTP_PROXY", "http_proxy");
  env.https_proxy = any("HTTPS_PROXY", "https_proxy");
  env.no_proxy = any("NO_PROXY", "no_proxy");
  return env;
}

ProxyEnvironment ProxyEnvironmentFromProcess() {
  return ProxyEnvironmentFrom([](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v != nullptr ? v : "");
  });
}

std::string ProxyUrl::Address() const {
  if (host.find(':') != std::string::npos) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

absl::StatusOr<ProxyUrl> ParseProxyUrl(std::string_view value) {
  auto invalid = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid proxy address \"", AV(value), "\": ", AV(why)));
  };
  ProxyUrl u;
  std::string_view rest = value;
  const size_t sep = value.find("://");
  if (sep != std::string_view::npos && IsScheme(absl::AsciiStrToLower(AV(value.substr(0, sep))))) {
    u.scheme = absl::AsciiStrToLower(AV(value.substr(0, sep)));
    rest = value.substr(sep + 3);
  } else {
    u.scheme = "http";  // Go prepends "http://" to a value it cannot take as a proxy URL
  }
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    std::string_view user = authority.substr(0, at);
    authority = authority.substr(at + 1);
    const size_t colon = user.find(':');
    std::optional<std::string> name = PercentDecode(user.substr(0, colon));
    std::optional<std::string> pass =
        PercentDecode(colon == std::string_view::npos ? "" : user.substr(colon + 1));
    if (!name || !pass) return invalid("bad escape in the user information");
    u.username = *std::move(name);
    u.password = *std::move(pass);
    u.has_user = true;
  }
  std::string_view host = authority, port;
  if (!authority.empty() && authority[0] == '[') {
    const size_t end = authority.find(']');
    if (end == std::string_view::npos) return invalid("missing ']' in the host");
    host = authority.substr(1, end - 1);
    std::string_view after = authority.substr(end + 1);
    if (!after.empty()) {
      if (after[0] != ':') return invalid("bad host");
      port = after.substr(1);
    }
  } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return invalid("no host");
  for (char c : host) {
    if (static_cast<unsigned char>(c) <= ' ' || c == '%' || c == '"' || c == '<' || c == '>' ||
        c == '\\' || c == '^' || c == '`' || c == '{' || c == '|' || c == '}' || c == 0x7f) {
      return invalid("bad host");
    }
  }
  int n = 0;
  for (char c : port) {
    if (c < '0' || c > '9' || n > 65535) return invalid("bad port");
    n = n * 10 + (c - '0');
  }
  if (n > 65535) return invalid("bad port");
  u.host = std::string(host);
  if (!port.empty()) {
    u.port = std::string(port);
  } else {
    u.port = u.scheme == "https" ? "443" : u.scheme == "http" ? "80" : "1080";
  }
  return u;
}

bool ProxyBypassed(std::string_view no_proxy, std::string_view request_host,
                   std::string_view port) {
  const std::string host = absl::AsciiStrToLower(absl::StripAsciiWhitespace(AV(request_host)));
  if (host == "localhost") return true;
  const std::optional<Ip> ip = ParseIp(host);
  if (ip && ip->Loopback()) return true;

  for (absl::string_view part : absl::StrSplit(AV(no_proxy), ',')) {
    const std::string entry = absl::AsciiStrToLower(absl::StripAsciiWhitespace(part));
    if (entry.empty()) continue;
    if (entry == "*") return true;
    if (std::optional<Cidr> cidr = ParseCidr(entry)) {
      if (ip && cidr->Contains(*ip)) return true;
      continue;
    }
    std::string_view ehost, eport;
    if (!SplitHostPort(entry, &ehost, &eport)) {
      ehost = entry;
      eport = {};
    }
    if (ehost.empty()) continue;  // malformed
    const bool port_ok = eport.empty() || eport == port;
    if (std::optional<Ip> eip = ParseIp(ehost)) {
      if (ip && *eip == *ip && port_ok) return true;
      continue;
    }
    // A host name: "foo.com" matches itself and its subdomains, ".foo.com" and "*.foo.com" the
    // subdomains only.
    std::string suffix(ehost);
    if (suffix.rfind("*.", 0) == 0) suffix.erase(0, 1);
    const bool match_host = suffix[0] != '.';
    if (match_host) suffix.insert(0, ".");
    const bool matched = (host.size() >= suffix.size() &&
                          host.compare(host.size() - suffix.size(), suffix.size(), suffix) == 0) ||
                         (match_host && host == std::string_view(suffix).substr(1));
    if (matched && port_ok) return true;
  }
  return false;
}

std::optional<ProxyUrl> ProxyFor(const ProxyEnvironment& env, std::string_view scheme,
                                 std::string_view host, std::string_view port) {
  std::string value;
  if (scheme == "https") {
    value = env.https_proxy;
  } else if (scheme == "http") {
    value = env.http_proxy;
  }
  if (value.empty()) return std::nullopt;
  absl::StatusOr<ProxyUrl> proxy = ParseProxyUrl(value);
  if (!proxy.ok()) return std::nullopt;
  if (ProxyBypassed(env.no_proxy, host, port)) return std::nullopt;
  return *std::move(proxy);
}

}  // namespace kubelet::apiclient
