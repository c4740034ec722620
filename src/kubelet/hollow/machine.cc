#include "kubelet/hollow/machine.h"

#include <sys/utsname.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/quantity.h"

namespace kubelet::hollow {
namespace {

// 128 stable bits of `s` (two FNV-1a passes with different offsets), as 32 hex digits.
std::string Hash128(const std::string& s) {
  std::string out;
  for (uint64_t h : {0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL}) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
    absl::StrAppendFormat(&out, "%016x", h);
  }
  return out;
}

std::string Uuid(const std::string& hex) {
  return absl::StrCat(hex.substr(0, 8), "-", hex.substr(8, 4), "-", hex.substr(12, 4), "-",
                      hex.substr(16, 4), "-", hex.substr(20, 12));
}

}  // namespace

absl::StatusOr<nodestatus::MachineFacts> SimulatedMachine(const MachineSpec& spec,
                                                          const std::string& node_name,
                                                          const std::string& boot_id) {
  nodestatus::MachineFacts f;
  for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"cpu", &spec.cpu},
                                    {"memory", &spec.memory},
                                    {"ephemeral-storage", &spec.ephemeral_storage}}) {
    absl::StatusOr<api::Quantity> q = api::Quantity::Parse(*value);
    if (!q.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("hollow node ", name, " \"", *value, "\": ", q.status().message()));
    }
    f.capacity[name] = *q;
  }
  f.capacity["pods"] = api::Quantity::FromValue(spec.max_pods);
  f.allocatable = f.capacity;
  for (const auto* reserved : {&spec.kube_reserved, &spec.system_reserved}) {
    for (const auto& [name, value] : *reserved) {
      auto it = f.allocatable.find(name);
      if (it == f.allocatable.end() || name == "pods") continue;
      absl::StatusOr<api::Quantity> q = api::Quantity::Parse(value);
      if (!q.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("reserved ", name, " \"", value, "\": ", q.status().message()));
      }
      api::Quantity left = it->second - *q;
      it->second = left.Sign() < 0 ? api::Quantity() : left;
    }
  }
  const std::string hex = Hash128(node_name);
  f.machine_id = hex;
  f.system_uuid = Uuid(hex);
  f.boot_id = boot_id;
  struct utsname u {};
  f.kernel_version = ::uname(&u) == 0 ? u.release : "";
  f.os_image = "Hollow Node";
  return f;
}

}  // namespace kubelet::hollow
