#include "api/fieldpath.h"

#include <cmath>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/pod_validation.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::api {
namespace {

const Quantity* Find(const ResourceList& list, const std::string& name) {
  auto it = list.find(name);
  return it == list.end() ? nullptr : &it->second;
}

std::string CeilDiv(double value, double divisor) {
  if (divisor == 0) return "0";
  const double r = std::ceil(value / divisor);
  if (!(r < 9.2e18 && r > -9.2e18)) return "0";
  return std::to_string(static_cast<int64_t>(r));
}

absl::Status BadKey(const std::string& path, const std::vector<std::string>& errs) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid key subscript in ", path, ": ", absl::StrJoin(errs, ";")));
}

}  // namespace

bool SplitMaybeSubscriptedPath(std::string_view path, std::string* base, std::string* subscript) {
  if (!absl::EndsWith(AV(path), "']")) return false;
  const std::string_view s = path.substr(0, path.size() - 2);
  const size_t open = s.find("['");
  if (open == std::string_view::npos || open == 0) return false;
  *base = std::string(s.substr(0, open));
  *subscript = std::string(s.substr(open + 2));
  return true;
}

std::string FormatMap(const StringMap& m) {
  std::vector<std::string> lines;
  lines.reserve(m.size());
  for (const auto& [k, v] : m) lines.push_back(absl::StrCat(k, "=", log::Quote(v)));
  return absl::StrJoin(lines, "\n");
}

absl::StatusOr<std::string> ExtractFieldPathAsString(const Pod& pod,
                                                     const std::string& field_path) {
  std::string base, subscript;
  if (SplitMaybeSubscriptedPath(field_path, &base, &subscript)) {
    if (base == "metadata.annotations") {
      std::vector<std::string> errs = IsQualifiedName(absl::AsciiStrToLower(subscript));
      if (!errs.empty()) return BadKey(field_path, errs);
      auto it = pod.metadata.annotations.find(subscript);
      return it == pod.metadata.annotations.end() ? "" : it->second;
    }
    if (base == "metadata.labels") {
      std::vector<std::string> errs = IsQualifiedName(subscript);
      if (!errs.empty()) return BadKey(field_path, errs);
      auto it = pod.metadata.labels.find(subscript);
      return it == pod.metadata.labels.end() ? "" : it->second;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("fieldPath ", log::Quote(field_path), " does not support subscript"));
  }
  if (field_path == "metadata.annotations") return FormatMap(pod.metadata.annotations);
  if (field_path == "metadata.labels") return FormatMap(pod.metadata.labels);
  if (field_path == "metadata.name") return pod.metadata.name;
  if (field_path == "metadata.namespace") return pod.metadata.namespace_;
  if (field_path == "metadata.uid") return pod.metadata.uid;
  return absl::InvalidArgumentError(absl::StrCat("unsupported fieldPath: ", field_path));
}

Container MergeContainerResourceLimits(Container c, const ResourceList& allocatable) {
  for (const char* name : {kResourceCPU, kResourceMemory, kResourceEphemeralStorage}) {
    auto it = c.resources.limits.find(name);
    if (it != c.resources.limits.end() && !it->second.IsZero()) continue;
    if (const Quantity* cap = Find(allocatable, name); cap != nullptr) {
      c.resources.limits[name] = *cap;
    }
  }
  return c;
}

absl::StatusOr<std::string> ExtractContainerResourceValue(const ResourceFieldSelector& fs,
                                                          const Container& c) {
  Quantity divisor = fs.divisor;
  if (divisor.IsZero()) divisor = Quantity::FromValue(1);
  auto get = [](const ResourceList& list, const std::string& name) {
    const Quantity* q = Find(list, name);
    return q == nullptr ? Quantity() : *q;
  };
  auto cpu = [&](const Quantity& q) {
    return CeilDiv(static_cast<double>(q.MilliValue()), static_cast<double>(divisor.MilliValue()));
  };
  auto bytes = [&](const Quantity& q) {
    return CeilDiv(static_cast<double>(q.Value()), static_cast<double>(divisor.Value()));
  };
  const ResourceList& limits = c.resources.limits;
  const ResourceList& requests = c.resources.requests;
  const std::string& r = fs.resource;
  if (r == "limits.cpu") return cpu(get(limits, kResourceCPU));
  if (r == "limits.memory") return bytes(get(limits, kResourceMemory));
  if (r == "limits.ephemeral-storage") return bytes(get(limits, kResourceEphemeralStorage));
  if (r == "requests.cpu") return cpu(get(requests, kResourceCPU));
  if (r == "requests.memory") return bytes(get(requests, kResourceMemory));
  if (r == "requests.ephemeral-storage") return bytes(get(requests, kResourceEphemeralStorage));
  if (absl::StartsWith(r, "requests.hugepages-")) return bytes(get(requests, r.substr(9)));
  if (absl::StartsWith(r, "limits.hugepages-")) return bytes(get(limits, r.substr(7)));
  return absl::InvalidArgumentError(absl::StrCat("unsupported container resource : ", r));
}

}  // namespace kubelet::api
