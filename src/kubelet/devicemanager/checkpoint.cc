#include "kubelet/devicemanager/checkpoint.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/codec.h"
#include "common/checksum.h"
#include "common/strings.h"

namespace kubelet::devicemanager {

namespace {

// go-spew's "[a b c]" for a slice element or map value (no type prefix).
std::string SpewList(const std::vector<std::string>& v) {
  return absl::StrCat("[", absl::StrJoin(v, " "), "]");
}

}  // namespace

std::string SpewChecksumText(const DeviceCheckpoint& cp) {
  std::string out = "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)";
  if (cp.entries.empty()) {
    out += "<nil>";
  } else {
    out += "[";
    for (size_t i = 0; i < cp.entries.size(); ++i) {
      const PodDevicesEntry& e = cp.entries[i];
      if (i > 0) out += " ";
      absl::StrAppend(&out, "{PodUID:(string)", e.pod_uid, " ContainerName:(string)",
                      e.container_name, " ResourceName:(string)", e.resource_name,
                      " DeviceIDs:(checkpoint.DevicesPerNUMA)map[");
      bool first = true;
      for (const auto& [numa, ids] : e.device_ids) {
        if (!first) out += " ";
        first = false;
        absl::StrAppend(&out, numa, ":", SpewList(ids));
      }
      out += "] AllocResp:([]uint8)";
      if (e.alloc_resp.empty()) {
        out += "[]";
      } else {
        out += "[";
        for (size_t b = 0; b < e.alloc_resp.size(); ++b) {
          if (b > 0) out += " ";
          absl::StrAppend(&out, static_cast<unsigned>(static_cast<unsigned char>(e.alloc_resp[b])));
        }
        out += "]";
      }
      out += "}";
    }
    out += "]";
  }
  out += " RegisteredDevices:(map[string][]string)map[";
  bool first = true;
  for (const auto& [resource, ids] : cp.registered_devices) {
    if (!first) out += " ";
    first = false;
    absl::StrAppend(&out, resource, ":", SpewList(ids));
  }
  out += "]}";
  return out;
}

uint32_t Checksum(const DeviceCheckpoint& cp) { return Fnv1a32(SpewChecksumText(cp)); }

std::string MarshalCheckpoint(const DeviceCheckpoint& cp) {
  api::Json entries = nullptr;
  if (!cp.entries.empty()) {
    entries = api::Json::array();
    for (const PodDevicesEntry& e : cp.entries) {
      api::Json ids = api::Json::object();
      for (const auto& [numa, list] : e.device_ids) ids[std::to_string(numa)] = list;
      entries.push_back({{"PodUID", e.pod_uid},
                         {"ContainerName", e.container_name},
                         {"ResourceName", e.resource_name},
                         {"DeviceIDs", std::move(ids)},
                         {"AllocResp", absl::Base64Escape(AV(e.alloc_resp))}});
    }
  }
  api::Json registered = api::Json::object();
  for (const auto& [resource, ids] : cp.registered_devices) registered[resource] = ids;
  api::Json j = {
      {"Data",
       {{"PodDeviceEntries", std::move(entries)}, {"RegisteredDevices", std::move(registered)}}},
      {"Checksum", Checksum(cp)}};
  return api::SerializeJson(j);
}

namespace {

absl::Status StringList(const api::Json& j, const std::string& where,
                        std::vector<std::string>* out) {
  if (j.is_null()) return absl::OkStatus();
  if (!j.is_array()) return absl::InvalidArgumentError(absl::StrCat(where, ": not a list"));
  for (const api::Json& s : j) {
    if (!s.is_string()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": not a list of strings"));
    }
    out->push_back(s.get<std::string>());
  }
  return absl::OkStatus();
}

absl::Status Str(const api::Json& obj, const char* key, const std::string& where,
                 std::string* out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ".", key, ": not a string"));
  }
  *out = it->get<std::string>();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DeviceCheckpoint> UnmarshalCheckpoint(std::string_view text) {
  absl::StatusOr<api::Json> parsed = api::ParseJson(text);
  if (!parsed.ok() || !parsed->is_object()) {
    return absl::InvalidArgumentError("device manager checkpoint is not a JSON object");
  }
  DeviceCheckpoint cp;
  const api::Json& root = *parsed;
  auto data = root.find("Data");
  if (data != root.end() && !data->is_null()) {
    if (!data->is_object()) return absl::InvalidArgumentError("Data: not an object");
    if (auto it = data->find("PodDeviceEntries"); it != data->end() && !it->is_null()) {
      if (!it->is_array()) return absl::InvalidArgumentError("Data.PodDeviceEntries: not a list");
      for (size_t i = 0; i < it->size(); ++i) {
        const api::Json& je = (*it)[i];
        const std::string where = absl::StrCat("Data.PodDeviceEntries[", i, "]");
        if (!je.is_object()) return absl::InvalidArgumentError(where + ": not an object");
        PodDevicesEntry e;
        for (auto [key, field] :
             {std::pair{"PodUID", &e.pod_uid}, std::pair{"ContainerName", &e.container_name},
              std::pair{"ResourceName", &e.resource_name}}) {
          if (absl::Status st = Str(je, key, where, field); !st.ok()) return st;
        }
        if (auto ids = je.find("DeviceIDs"); ids != je.end() && !ids->is_null()) {
          if (!ids->is_object()) {
            return absl::InvalidArgumentError(where + ".DeviceIDs: not an object");
          }
          for (auto n = ids->begin(); n != ids->end(); ++n) {
            int64_t numa = 0;
            if (!absl::SimpleAtoi(AV(n.key()), &numa)) {
              return absl::InvalidArgumentError(
                  absl::StrCat(where, ".DeviceIDs: key ", n.key(), " is not a number"));
            }
            if (absl::Status st =
                    StringList(n.value(), where + ".DeviceIDs." + n.key(), &e.device_ids[numa]);
                !st.ok()) {
              return st;
            }
          }
        }
        std::string b64;
        if (absl::Status st = Str(je, "AllocResp", where, &b64); !st.ok()) return st;
        if (!absl::Base64Unescape(AV(b64), &e.alloc_resp)) {
          return absl::InvalidArgumentError(where + ".AllocResp: not base64");
        }
        cp.entries.push_back(std::move(e));
      }
    }
    if (auto it = data->find("RegisteredDevices"); it != data->end() && !it->is_null()) {
      if (!it->is_object()) {
        return absl::InvalidArgumentError("Data.RegisteredDevices: not an object");
      }
      for (auto r = it->begin(); r != it->end(); ++r) {
        if (absl::Status st = StringList(r.value(), "Data.RegisteredDevices." + r.key(),
                                         &cp.registered_devices[r.key()]);
            !st.ok()) {
          return st;
        }
      }
    }
  }
  uint64_t checksum = 0;
  if (auto it = root.find("Checksum"); it != root.end() && !it->is_null()) {
    if (!it->is_number_unsigned()) return absl::InvalidArgumentError("Checksum: not a number");
    checksum = it->get<uint64_t>();
  }
  if (checksum != Checksum(cp)) return absl::DataLossError("checkpoint is corrupted");
  return cp;
}

}  // namespace kubelet::devicemanager
