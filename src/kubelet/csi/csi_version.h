// CSI driver versions as the kubelet judges them at registration (upstream's
// highestSupportedVersion / utilversion.ParseGeneric): "1.0.0", "v1.2", "1.5.0-foo" parse; at
// least two numeric components, no leading zero on the first; components compare numerically
// (missing ones are 0). Majors above 1 are ignored; the highest left must be 1.x.
// Pure functions; thread-safe.
#ifndef KUBELET_KUBELET_CSI_CSI_VERSION_H_
#define KUBELET_KUBELET_CSI_CSI_VERSION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kubelet::csi {

struct Version {
  std::vector<unsigned> components;
  std::string String() const;  // "1.0.0"
};

// -1, 0, 1 as a < b, a == b, a > b.
int Compare(const Version& a, const Version& b);

absl::StatusOr<Version> ParseGenericVersion(const std::string& s);

// The highest supported 1.x version of `versions`, with upstream's errors: "could not find a
// highest supported version from versions ([...]) reported by this driver: <err>", "highest
// supported version reported by driver is <v>, must be v1.x".
absl::StatusOr<Version> HighestSupportedVersion(const std::vector<std::string>& versions);

}  // namespace kubelet::csi

#endif  // KUBELET_KUBELET_CSI_CSI_VERSION_H_
