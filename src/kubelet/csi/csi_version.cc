#include "kubelet/csi/csi_version.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kubelet::csi {

std::string Version::String() const { return absl::StrJoin(components, "."); }

int Compare(const Version& a, const Version& b) {
  const size_t n = std::max(a.components.size(), b.components.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned x = i < a.components.size() ? a.components[i] : 0;
    const unsigned y = i < b.components.size() ? b.components[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

absl::StatusOr<Version> ParseGenericVersion(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  if (i < s.size() && s[i] == 'v') ++i;
  Version v;
  for (;;) {
    const size_t start = i;
    unsigned long long n = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      n = n * 10 + static_cast<unsigned>(s[i] - '0');
      if (n > 0xffffffffULL)
        return absl::InvalidArgumentError(absl::StrCat("illegal version string \"", s, "\""));
      ++i;
    }
    if (i == start) break;
    if (v.components.empty() && i - start > 1 && s[start] == '0') {
      return absl::InvalidArgumentError(absl::StrCat("illegal zero-prefixed version component \"",
                                                     s.substr(start, i - start), "\" in \"", s,
                                                     "\""));
    }
    v.components.push_back(static_cast<unsigned>(n));
    if (i + 1 < s.size() && s[i] == '.' && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      ++i;
      continue;
    }
    break;
  }
  if (v.components.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat("could not parse \"", s, "\" as version"));
  }
  return v;
}

absl::StatusOr<Version> HighestSupportedVersion(const std::vector<std::string>& versions) {
  std::optional<Version> highest;
  std::string last_err;
  for (auto it = versions.rbegin(); it != versions.rend(); ++it) {
    absl::StatusOr<Version> v = ParseGenericVersion(*it);
    if (!v.ok()) {
      last_err = std::string(v.status().message());
      continue;
    }
    if (v->components[0] > 1) continue;
    if (!highest.has_value() || Compare(*v, *highest) > 0) highest = *v;
  }
  if (!highest.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "could not find a highest supported version from versions (", absl::StrJoin(versions, ","),
        ") reported by this driver: ", last_err.empty() ? "<nil>" : last_err));
  }
  if (highest->components[0] != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "highest supported version reported by driver is ", highest->String(), ", must be v1.x"));
  }
  return *highest;
}

}  // namespace kubelet::csi
