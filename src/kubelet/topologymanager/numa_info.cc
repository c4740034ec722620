#include "kubelet/topologymanager/numa_info.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/files.h"
#include "common/strings.h"

namespace kubelet::topologymanager {

NUMAMask NUMAInfo::DefaultAffinityMask() const {
  NUMAMask m;
  for (int n : nodes) {
    if (n >= 0 && n < 64) m.Add(n);
  }
  return m;
}

NUMAMask NUMAInfo::Narrowest(NUMAMask a, NUMAMask b) const { return a.IsNarrowerThan(b) ? a : b; }

NUMAMask NUMAInfo::Closest(NUMAMask a, NUMAMask b) const {
  if (a.Count() != b.Count()) return Narrowest(a, b);
  const double da = AverageDistance(a);
  const double db = AverageDistance(b);
  if (da == db) return a.bits() < b.bits() ? a : b;
  return da < db ? a : b;
}

double NUMAInfo::AverageDistance(NUMAMask mask) const {
  const std::vector<int> ids = mask.Nodes();
  if (ids.empty()) return 0;
  double sum = 0;
  double count = 0;
  for (int from : ids) {
    auto row = distances.find(from);
    for (int to : ids) {
      if (row != distances.end() && to < static_cast<int>(row->second.size())) {
        sum += static_cast<double>(row->second[to]);
      }
      ++count;
    }
  }
  return sum / count;
}

absl::Status NUMAInfo::Validate(bool need_distances) const {
  for (int n : nodes) {
    if (n < 0 || n >= 64) {
      return absl::InvalidArgumentError(
          absl::StrCat("NUMA node ", n, ": bit number must be in range 0-63"));
    }
  }
  if (!need_distances) return absl::OkStatus();
  for (int from : nodes) {
    auto row = distances.find(from);
    if (row == distances.end()) {
      return absl::InvalidArgumentError(absl::StrCat("no NUMA distances for node ", from));
    }
    for (int to : nodes) {
      if (to >= static_cast<int>(row->second.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat("NUMA distances of node ", from, " do not include node ", to));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint64_t>> ReadNUMADistances(int node, const std::string& sysfs_root) {
  const std::string path = absl::StrCat(sysfs_root, "/devices/system/node/node", node, "/distance");
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        absl::StrCat("problem reading ", path, ": ", text.status().message()));
  }
  std::vector<uint64_t> out;
  // Split on single spaces, as upstream: a doubled space is an empty, unconvertible field.
  for (absl::string_view field : absl::StrSplit(absl::StripAsciiWhitespace(*text), ' ')) {
    uint64_t d = 0;
    if (field.empty() || field[0] == '+' || !absl::SimpleAtoi(field, &d)) {
      return absl::InvalidArgumentError(absl::StrCat("cannot convert ", field, " to int"));
    }
    out.push_back(d);
  }
  return out;
}

absl::StatusOr<NUMAInfo> NewNUMAInfo(std::vector<int> nodes, bool with_distances,
                                     const std::string& sysfs_root) {
  NUMAInfo info;
  info.nodes = std::move(nodes);
  if (!with_distances) return info;
  for (int n : info.nodes) {
    absl::StatusOr<std::vector<uint64_t>> d = ReadNUMADistances(n, sysfs_root);
    if (!d.ok()) {
      return absl::Status(d.status().code(),
                          absl::StrCat("cannot discover NUMA topology: error getting NUMA "
                                       "distances from sysfs: ",
                                       d.status().message()));
    }
    info.distances[n] = *std::move(d);
  }
  return info;
}

}  // namespace kubelet::topologymanager
