#include "kubelet/memorymanager/state.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/codec.h"
#include "common/checksum.h"
#include "common/strings.h"

namespace kubelet::memorymanager {
namespace {

// go-spew (SortKeys, DisableMethods, "%#v"): the top-level pointer and struct fields carry a
// "(type)" prefix; map keys, map values and slice elements do not; pointer map values are
// "<*>" followed by the pointee; slices are "[a b]", maps "map[k:v k:v]" in key order.
std::string SpewInts(const std::vector<int>& v) {
  return absl::StrCat("[", absl::StrJoin(v, " "), "]");
}

std::string SpewMemoryTable(const MemoryTable& t) {
  return absl::StrCat("<*>{TotalMemSize:(uint64)", t.total, " SystemReserved:(uint64)",
                      t.system_reserved, " Allocatable:(uint64)", t.allocatable,
                      " Reserved:(uint64)", t.reserved, " Free:(uint64)", t.free, "}");
}

std::string SpewNodeState(const NUMANodeState& s) {
  std::string out = absl::StrCat("<*>{NumberOfAssignments:(int)", s.number_of_assignments,
                                 " MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[");
  bool first = true;
  for (const auto& [name, table] : s.memory_map) {
    if (!first) out += " ";
    first = false;
    absl::StrAppend(&out, name, ":", SpewMemoryTable(table));
  }
  absl::StrAppend(&out, "] Cells:([]int)", SpewInts(s.cells), "}");
  return out;
}

std::string SpewBlocks(const std::vector<Block>& blocks) {
  std::string out = "[";
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i > 0) out += " ";
    absl::StrAppend(&out, "{NUMAAffinity:([]int)", SpewInts(blocks[i].numa_affinity),
                    " Type:(v1.ResourceName)", blocks[i].type, " Size:(uint64)", blocks[i].size,
                    "}");
  }
  return out + "]";
}

// encoding/json writes map[int]... keys as decimal strings sorted as strings.
std::vector<int> GoJsonKeyOrder(const NUMANodeMap& m) {
  std::vector<int> ids;
  for (const auto& [id, s] : m) ids.push_back(id);
  std::sort(ids.begin(), ids.end(),
            [](int a, int b) { return std::to_string(a) < std::to_string(b); });
  return ids;
}

api::Json BlocksJson(const std::vector<Block>& blocks) {
  api::Json arr = api::Json::array();
  for (const Block& b : blocks) {
    api::Json j = api::Json::object();
    j["numaAffinity"] = b.numa_affinity;
    j["type"] = b.type;
    j["size"] = b.size;
    arr.push_back(std::move(j));
  }
  return arr;
}

absl::Status Invalid(std::string_view where, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(AV(where), ": ", AV(what)));
}

absl::Status ReadUint(const api::Json& obj, const char* key, const std::string& where,
                      uint64_t* out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_number_unsigned()) return Invalid(absl::StrCat(where, ".", key), "not a uint64");
  *out = it->get<uint64_t>();
  return absl::OkStatus();
}

absl::Status ReadInts(const api::Json& j, const std::string& where, std::vector<int>* out) {
  if (j.is_null()) return absl::OkStatus();
  if (!j.is_array()) return Invalid(where, "not an array");
  for (const api::Json& e : j) {
    if (!e.is_number_integer()) return Invalid(where, "not an int");
    out->push_back(e.get<int>());
  }
  return absl::OkStatus();
}

absl::Status ReadNodeState(const api::Json& j, const std::string& where, NUMANodeState* out) {
  if (j.is_null()) return absl::OkStatus();
  if (!j.is_object()) return Invalid(where, "not an object");
  if (auto it = j.find("numberOfAssignments"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer()) return Invalid(where + ".numberOfAssignments", "not an int");
    out->number_of_assignments = it->get<int>();
  }
  if (auto it = j.find("memoryMap"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) return Invalid(where + ".memoryMap", "not an object");
    for (auto m = it->begin(); m != it->end(); ++m) {
      const std::string w = absl::StrCat(where, ".memoryMap[", m.key(), "]");
      if (!m.value().is_object()) return Invalid(w, "not an object");
      MemoryTable& t = out->memory_map[m.key()];
      if (absl::Status st = ReadUint(m.value(), "total", w, &t.total); !st.ok()) return st;
      if (absl::Status st = ReadUint(m.value(), "systemReserved", w, &t.system_reserved);
          !st.ok()) {
        return st;
      }
      if (absl::Status st = ReadUint(m.value(), "allocatable", w, &t.allocatable); !st.ok()) {
        return st;
      }
      if (absl::Status st = ReadUint(m.value(), "reserved", w, &t.reserved); !st.ok()) return st;
      if (absl::Status st = ReadUint(m.value(), "free", w, &t.free); !st.ok()) return st;
    }
  }
  if (auto it = j.find("cells"); it != j.end()) {
    if (absl::Status st = ReadInts(*it, where + ".cells", &out->cells); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status ReadBlock(const api::Json& j, const std::string& where, Block* out) {
  if (!j.is_object()) return Invalid(where, "not an object");
  if (auto it = j.find("numaAffinity"); it != j.end()) {
    if (absl::Status st = ReadInts(*it, where + ".numaAffinity", &out->numa_affinity); !st.ok()) {
      return st;
    }
  }
  if (auto it = j.find("type"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return Invalid(where + ".type", "not a string");
    out->type = it->get<std::string>();
  }
  return ReadUint(j, "size", where, &out->size);
}

}  // namespace

std::string SpewChecksumText(const MemoryManagerCheckpoint& cp) {
  std::string machine = "map[";
  bool first = true;
  for (const auto& [id, node] : cp.machine_state) {
    if (!first) machine += " ";
    first = false;
    absl::StrAppend(&machine, id, ":", SpewNodeState(node));
  }
  machine += "]";
  std::string entries = "map[";
  first = true;
  for (const auto& [pod, containers] : cp.entries) {
    if (!first) entries += " ";
    first = false;
    absl::StrAppend(&entries, pod, ":map[");
    bool first_container = true;
    for (const auto& [name, blocks] : containers) {
      if (!first_container) entries += " ";
      first_container = false;
      absl::StrAppend(&entries, name, ":", SpewBlocks(blocks));
    }
    entries += "]";
  }
  entries += "]";
  return absl::StrCat("(*state.MemoryManagerCheckpoint){PolicyName:(string)", cp.policy_name,
                      " MachineState:(state.NUMANodeMap)", machine,
                      " Entries:(state.ContainerMemoryAssignments)", entries,
                      " Checksum:(checksum.Checksum)0}");
}

uint64_t Checksum(const MemoryManagerCheckpoint& cp) { return Fnv1a32(SpewChecksumText(cp)); }

std::string MarshalCheckpoint(MemoryManagerCheckpoint cp) {
  cp.checksum = Checksum(cp);
  api::Json j = api::Json::object();
  j["policyName"] = cp.policy_name;
  api::Json machine = api::Json::object();
  for (int id : GoJsonKeyOrder(cp.machine_state)) {
    const NUMANodeState& node = cp.machine_state.at(id);
    api::Json n = api::Json::object();
    n["numberOfAssignments"] = node.number_of_assignments;
    api::Json memory_map = api::Json::object();
    for (const auto& [name, t] : node.memory_map) {
      api::Json table = api::Json::object();
      table["total"] = t.total;
      table["systemReserved"] = t.system_reserved;
      table["allocatable"] = t.allocatable;
      table["reserved"] = t.reserved;
      table["free"] = t.free;
      memory_map[name] = std::move(table);
    }
    n["memoryMap"] = std::move(memory_map);
    n["cells"] = node.cells;
    machine[std::to_string(id)] = std::move(n);
  }
  j["machineState"] = std::move(machine);
  if (!cp.entries.empty()) {
    api::Json entries = api::Json::object();
    for (const auto& [pod, containers] : cp.entries) {
      api::Json c = api::Json::object();
      for (const auto& [name, blocks] : containers) c[name] = BlocksJson(blocks);
      entries[pod] = std::move(c);
    }
    j["entries"] = std::move(entries);
  }
  j["checksum"] = cp.checksum;
  return api::SerializeJson(j);
}

absl::StatusOr<MemoryManagerCheckpoint> UnmarshalCheckpoint(std::string_view text) {
  absl::StatusOr<api::Json> parsed = api::ParseJson(text);
  if (!parsed.ok() || !parsed->is_object()) {
    return absl::InvalidArgumentError("memory manager state is not a JSON object");
  }
  const api::Json& j = *parsed;
  MemoryManagerCheckpoint cp;
  if (auto it = j.find("policyName"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return Invalid("policyName", "not a string");
    cp.policy_name = it->get<std::string>();
  }
  if (auto it = j.find("machineState"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) return Invalid("machineState", "not an object");
    for (auto n = it->begin(); n != it->end(); ++n) {
      const std::string where = absl::StrCat("machineState[", n.key(), "]");
      int id = 0;
      if (!absl::SimpleAtoi(n.key(), &id)) return Invalid(where, "not a NUMA node id");
      if (absl::Status st = ReadNodeState(n.value(), where, &cp.machine_state[id]); !st.ok()) {
        return st;
      }
    }
  }
  if (auto it = j.find("entries"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) return Invalid("entries", "not an object");
    for (auto pod = it->begin(); pod != it->end(); ++pod) {
      if (!pod.value().is_object()) {
        return Invalid(absl::StrCat("entries[", pod.key(), "]"), "not an object");
      }
      std::map<std::string, std::vector<Block>>& containers = cp.entries[pod.key()];
      for (auto c = pod.value().begin(); c != pod.value().end(); ++c) {
        const std::string where = absl::StrCat("entries[", pod.key(), "][", c.key(), "]");
        std::vector<Block>& blocks = containers[c.key()];
        if (c.value().is_null()) continue;
        if (!c.value().is_array()) return Invalid(where, "not an array");
        for (size_t i = 0; i < c.value().size(); ++i) {
          Block b;
          if (absl::Status st = ReadBlock(c.value()[i], absl::StrCat(where, "[", i, "]"), &b);
              !st.ok()) {
            return st;
          }
          blocks.push_back(std::move(b));
        }
      }
    }
  }
  if (absl::Status st = ReadUint(j, "checksum", "checkpoint", &cp.checksum); !st.ok()) {
    return Invalid("checksum", "not a number");
  }
  if (cp.checksum != Checksum(cp)) return absl::DataLossError("checkpoint is corrupted");
  return cp;
}

}  // namespace kubelet::memorymanager
