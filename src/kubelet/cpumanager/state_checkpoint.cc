#include "kubelet/cpumanager/state_checkpoint.h"

#include "absl/strings/str_cat.h"
#include "api/codec.h"
#include "common/checksum.h"

namespace kubelet::cpumanager {

std::string SpewChecksumText(const CPUManagerCheckpoint& cp) {
  // go-spew with SortKeys and DisableMethods: type prefixes on the top-level value and the
  // struct fields only, strings unquoted, map entries "k:v" joined by spaces in key order.
  std::string entries = "map[";
  bool first_pod = true;
  for (const auto& [pod, containers] : cp.entries) {
    if (!first_pod) entries += " ";
    first_pod = false;
    absl::StrAppend(&entries, pod, ":map[");
    bool first = true;
    for (const auto& [name, set] : containers) {
      if (!first) entries += " ";
      first = false;
      absl::StrAppend(&entries, name, ":", set);
    }
    entries += "]";
  }
  entries += "]";
  return absl::StrCat("(*state.CPUManagerCheckpoint){PolicyName:(string)", cp.policy_name,
                      " DefaultCPUSet:(string)", cp.default_cpu_set,
                      " Entries:(map[string]map[string]string)", entries,
                      " Checksum:(checksum.Checksum)0}");
}

uint64_t Checksum(const CPUManagerCheckpoint& cp) { return Fnv1a32(SpewChecksumText(cp)); }

std::string MarshalCheckpoint(CPUManagerCheckpoint cp) {
  cp.checksum = Checksum(cp);
  api::Json j = api::Json::object();
  j["policyName"] = cp.policy_name;
  j["defaultCpuSet"] = cp.default_cpu_set;
  if (!cp.entries.empty()) {
    api::Json entries = api::Json::object();
    for (const auto& [pod, containers] : cp.entries) {
      api::Json c = api::Json::object();
      for (const auto& [name, set] : containers) c[name] = set;
      entries[pod] = std::move(c);
    }
    j["entries"] = std::move(entries);
  }
  j["checksum"] = cp.checksum;
  return api::SerializeJson(j);
}

absl::StatusOr<CPUManagerCheckpoint> UnmarshalCheckpoint(std::string_view text) {
  absl::StatusOr<api::Json> parsed = api::ParseJson(text);
  if (!parsed.ok() || !parsed->is_object()) {
    return absl::InvalidArgumentError("cpu manager state is not a JSON object");
  }
  const api::Json& j = *parsed;
  CPUManagerCheckpoint cp;
  auto str = [&j](const char* key, std::string* out) -> absl::Status {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return absl::OkStatus();
    if (!it->is_string()) return absl::InvalidArgumentError(absl::StrCat(key, ": not a string"));
    *out = it->get<std::string>();
    return absl::OkStatus();
  };
  if (absl::Status st = str("policyName", &cp.policy_name); !st.ok()) return st;
  if (absl::Status st = str("defaultCpuSet", &cp.default_cpu_set); !st.ok()) return st;
  if (auto it = j.find("entries"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) return absl::InvalidArgumentError("entries: not an object");
    for (auto pod = it->begin(); pod != it->end(); ++pod) {
      if (!pod.value().is_object()) {
        return absl::InvalidArgumentError(absl::StrCat("entries[", pod.key(), "]: not an object"));
      }
      std::map<std::string, std::string>& containers = cp.entries[pod.key()];
      for (auto c = pod.value().begin(); c != pod.value().end(); ++c) {
        if (!c.value().is_string()) {
          return absl::InvalidArgumentError(
              absl::StrCat("entries[", pod.key(), "][", c.key(), "]: not a string"));
        }
        containers[c.key()] = c.value().get<std::string>();
      }
    }
  }
  if (auto it = j.find("checksum"); it != j.end() && !it->is_null()) {
    if (!it->is_number_unsigned()) return absl::InvalidArgumentError("checksum: not a number");
    cp.checksum = it->get<uint64_t>();
  }
  if (cp.checksum != 0 && cp.checksum != Checksum(cp)) {
    return absl::DataLossError("checkpoint is corrupted");
  }
  return cp;
}

}  // namespace kubelet::cpumanager
