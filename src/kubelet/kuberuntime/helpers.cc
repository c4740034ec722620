#include "kubelet/kuberuntime/helpers.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/pod_codec.h"
#include "api/pod_defaults.h"
#include "api/static_pod.h"
#include "api/sysctl.h"
#include "common/strings.h"

namespace kubelet::kuberuntime {
namespace {

constexpr char kSystemNodeCritical[] = "system-node-critical";
constexpr int kGuaranteedOOMScoreAdj = -997;
constexpr int kBestEffortOOMScoreAdj = 1000;

}  // namespace

std::string FormatPod(const api::Pod& pod) {
  return FormatPod(pod.metadata.name, pod.metadata.namespace_, pod.metadata.uid);
}

std::string FormatPod(std::string_view name, std::string_view ns, std::string_view uid) {
  return absl::StrCat(AV(name), "_", AV(ns), "(", AV(uid), ")");
}

uint64_t HashContainerSpec(const api::Container& container) {
  return api::HashContainer(container);
}

uint64_t HashContainerSpecWithoutResources(const api::Container& container) {
  api::Container copy = container;
  copy.resources = api::ResourceRequirements{};
  return api::HashContainer(copy);
}

std::string HashToString(uint64_t hash) {
  static constexpr char kHex[] = "0123456789abcdef";
  if (hash == 0) return "0";
  std::string out;
  while (hash != 0) {
    out.push_back(kHex[hash & 0xf]);
    hash >>= 4;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::string GetStableKey(const api::Pod& pod, const api::Container& container) {
  return absl::StrCat(pod.metadata.name, "_", pod.metadata.namespace_, "_", pod.metadata.uid, "_",
                      container.name, "_", HashToString(HashContainerSpec(container)));
}

bool IsNodeCriticalPod(const api::Pod& pod) {
  return api::IsCriticalPod(pod) && pod.spec.priority_class_name == kSystemNodeCritical;
}

int GetContainerOOMScoreAdjust(const api::Pod& pod, const api::Container& container,
                               int64_t memory_capacity) {
  if (IsNodeCriticalPod(pod)) return kGuaranteedOOMScoreAdj;
  const api::QOSClass qos = api::GetPodQOS(pod);
  if (qos == api::QOSClass::kGuaranteed) return kGuaranteedOOMScoreAdj;
  if (qos == api::QOSClass::kBestEffort) return kBestEffortOOMScoreAdj;
  int64_t memory_request = 0;
  if (auto it = container.resources.requests.find(api::kResourceMemory);
      it != container.resources.requests.end()) {
    memory_request = it->second.Value();
  }
  if (memory_capacity <= 0) return kBestEffortOOMScoreAdj - 1;
  // 1000*request may overflow for absurd requests; clamp the request to the capacity first.
  memory_request = std::clamp<int64_t>(memory_request, 0, memory_capacity);
  const int64_t adjust =
      1000 - static_cast<int64_t>((static_cast<__int128>(1000) * memory_request) / memory_capacity);
  if (adjust < 1000 + kGuaranteedOOMScoreAdj) return 1000 + kGuaranteedOOMScoreAdj;
  if (adjust == kBestEffortOOMScoreAdj) return static_cast<int>(adjust - 1);
  return static_cast<int>(adjust);
}

std::string BuildPodLogsDirectory(std::string_view root, std::string_view ns, std::string_view name,
                                  std::string_view uid) {
  return absl::StrCat(AV(root), "/", AV(ns), "_", AV(name), "_", AV(uid));
}

std::string BuildContainerLogsDirectory(std::string_view root, std::string_view ns,
                                        std::string_view name, std::string_view uid,
                                        std::string_view container) {
  return absl::StrCat(BuildPodLogsDirectory(root, ns, name, uid), "/", AV(container));
}

std::string BuildContainerLogsPath(std::string_view container, int restart_count) {
  return absl::StrCat(AV(container), "/", restart_count, ".log");
}

std::string ParsePodUIDFromLogsDirectory(std::string_view name) {
  const size_t pos = name.rfind('_');
  return std::string(pos == std::string_view::npos ? name : name.substr(pos + 1));
}

int CalcRestartCountByLogDir(const std::string& path) {
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return 0;
  int restart_count = 0;
  while (struct dirent* ent = readdir(dir)) {
    const std::string_view name(ent->d_name);
    // ^(\d+)\.log(\..*)?  (a prefix match, as FindStringSubmatch does)
    size_t digits = 0;
    while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits]))) {
      ++digits;
    }
    if (digits == 0 || name.substr(digits, 4) != ".log") continue;
    std::string full = absl::StrCat(path, "/", AV(name));
    struct stat st;
    if (stat(full.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;
    int count = 0;
    if (!absl::SimpleAtoi(AV(name.substr(0, digits)), &count)) continue;
    if (count < 0 || count == INT32_MAX) continue;
    restart_count = std::max(restart_count, count + 1);
  }
  closedir(dir);
  return restart_count;
}

std::string Expand(std::string_view input,
                   const std::function<std::optional<std::string>(std::string_view)>& lookup) {
  std::string out;
  size_t checkpoint = 0;
  for (size_t cursor = 0; cursor < input.size(); ++cursor) {
    if (input[cursor] != '$' || cursor + 1 >= input.size()) continue;
    out.append(input.substr(checkpoint, cursor - checkpoint));
    const std::string_view rest = input.substr(cursor + 1);
    size_t advance = 1;
    if (rest[0] == '$') {
      out.push_back('$');  // escaped operator
    } else if (rest[0] == '(') {
      const size_t close = rest.find(')', 1);
      if (close == std::string_view::npos) {
        out.append("$(");  // incomplete reference
      } else {
        const std::string_view name = rest.substr(1, close - 1);
        std::optional<std::string> value = lookup ? lookup(name) : std::nullopt;
        if (value.has_value()) {
          out.append(*value);
        } else {
          absl::StrAppend(&out, "$(", AV(name), ")");
        }
        advance = close + 1;
      }
    } else {
      out.push_back('$');
      out.push_back(rest[0]);
    }
    cursor += advance;
    checkpoint = cursor + 1;
  }
  if (checkpoint < input.size()) out.append(input.substr(checkpoint));
  return out;
}

std::string ConvertSysctlVariableToDotsSeparator(std::string_view name) {
  return api::NormalizeSysctlName(name);
}

absl::StatusOr<std::string> ApplyDefaultImageTag(std::string_view image) {
  // The repository (after the registry) must be lowercase, checked first as docker's
  // ParseNormalizedNamed does: "Busybox" is not taken for a registry host.
  std::string_view remainder = image;
  if (size_t slash = image.find('/'); slash != std::string_view::npos) {
    const std::string_view first = image.substr(0, slash);
    const bool lower = std::none_of(first.begin(), first.end(), [](char c) {
      return std::isupper(static_cast<unsigned char>(c));
    });
    if (first.find_first_of(".:") != std::string_view::npos || first == "localhost" || !lower) {
      remainder = image.substr(slash + 1);
    }
  }
  const std::string_view remote = remainder.substr(0, remainder.find(':'));
  if (std::any_of(remote.begin(), remote.end(),
                  [](char c) { return std::isupper(static_cast<unsigned char>(c)); })) {
    return absl::InvalidArgumentError(
        absl::StrCat("couldn't parse image name \"", AV(image),
                     "\": invalid reference format: repository name must be lowercase"));
  }
  std::string tag, digest;
  if (!api::ParseImageReference(image, &tag, &digest)) {
    return absl::InvalidArgumentError(
        absl::StrCat("couldn't parse image name \"", AV(image), "\": invalid reference format"));
  }
  std::string out(image);
  if (tag.empty() && digest.empty()) absl::StrAppend(&out, ":latest");
  return out;
}

absl::StatusOr<std::string> NormalizeImageName(std::string_view image) {
  std::string tag, digest;
  if (!api::ParseImageReference(image, &tag, &digest)) {
    return absl::InvalidArgumentError(
        absl::StrCat("couldn't parse image name \"", AV(image), "\": invalid reference format"));
  }
  // Strip "@digest" and ":tag" to get the name.
  std::string_view name = image;
  if (size_t at = name.find('@'); at != std::string_view::npos) name = name.substr(0, at);
  if (!tag.empty()) name = name.substr(0, name.size() - tag.size() - 1);
  std::string domain = "docker.io";
  std::string remainder(name);
  if (size_t slash = name.find('/'); slash != std::string_view::npos) {
    const std::string_view first = name.substr(0, slash);
    const bool is_domain =
        first.find_first_of(".:") != std::string_view::npos || first == "localhost" ||
        std::any_of(first.begin(), first.end(),
                    [](char c) { return std::isupper(static_cast<unsigned char>(c)); });
    if (is_domain) {
      domain = std::string(first);
      remainder = std::string(name.substr(slash + 1));
    }
  }
  if (domain == "index.docker.io") domain = "docker.io";
  if (domain == "docker.io" && remainder.find('/') == std::string::npos) {
    remainder = absl::StrCat("library/", remainder);
  }
  std::string out = absl::StrCat(domain, "/", remainder);
  if (!tag.empty()) {
    absl::StrAppend(&out, ":", tag);
  } else if (digest.empty()) {
    absl::StrAppend(&out, ":latest");
  }
  if (!digest.empty()) absl::StrAppend(&out, "@", digest);
  return out;
}

}  // namespace kubelet::kuberuntime
