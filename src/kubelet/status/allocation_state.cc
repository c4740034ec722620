#include "kubelet/status/allocation_state.h"

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/codec.h"
#include "api/quantity.h"
#include "common/checksum.h"
#include "common/files.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::status {
namespace {

// A ResourceList as Go writes a v1.ResourceList (nil when empty: the kubelet records a container
// without requests as null, as upstream's SetPodAllocation does).
api::Json ResourceListJson(const api::ResourceList& list) {
  if (list.empty()) return api::Json(nullptr);
  api::Json j = api::Json::object();
  for (const auto& [name, q] : list) j[name] = q.String();
  return j;
}

absl::StatusOr<api::ResourceList> ParseResourceList(const api::Json& j, const std::string& path) {
  api::ResourceList out;
  if (j.is_null()) return out;
  if (!j.is_object()) return absl::InvalidArgumentError(absl::StrCat(path, ": not an object"));
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, "[", it.key(), "]: quantity is not a string"));
    }
    absl::StatusOr<api::Quantity> q = api::ParseQuantity(it.value().get<std::string>());
    if (!q.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, "[", it.key(), "]: ", q.status().message()));
    }
    out.emplace(it.key(), *q);
  }
  return out;
}

absl::StatusOr<PodResourceAllocationInfo> DecodeAllocationData(std::string_view data) {
  absl::StatusOr<api::Json> parsed = api::ParseJson(data);
  if (!parsed.ok()) return parsed.status();
  PodResourceAllocationInfo info;
  if (parsed->is_null()) return info;
  if (!parsed->is_object()) return absl::InvalidArgumentError("data: not a JSON object");
  if (auto it = parsed->find("allocationEntries"); it != parsed->end() && !it->is_null()) {
    if (!it->is_object()) {
      return absl::InvalidArgumentError("data.allocationEntries: not an object");
    }
    for (auto pod = it->begin(); pod != it->end(); ++pod) {
      const std::string pod_path = absl::StrCat("data.allocationEntries[", pod.key(), "]");
      auto& containers = info.allocation_entries[pod.key()];
      if (pod.value().is_null()) continue;
      if (!pod.value().is_object()) {
        return absl::InvalidArgumentError(absl::StrCat(pod_path, ": not an object"));
      }
      for (auto c = pod.value().begin(); c != pod.value().end(); ++c) {
        absl::StatusOr<api::ResourceList> list =
            ParseResourceList(c.value(), absl::StrCat(pod_path, "[", c.key(), "]"));
        if (!list.ok()) return list.status();
        containers[c.key()] = *std::move(list);
      }
    }
  }
  if (auto it = parsed->find("resizeStatusEntries"); it != parsed->end() && !it->is_null()) {
    if (!it->is_object()) {
      return absl::InvalidArgumentError("data.resizeStatusEntries: not an object");
    }
    for (auto pod = it->begin(); pod != it->end(); ++pod) {
      if (!pod.value().is_string()) {
        return absl::InvalidArgumentError(
            absl::StrCat("data.resizeStatusEntries[", pod.key(), "]: not a string"));
      }
      info.resize_status_entries[pod.key()] = pod.value().get<std::string>();
    }
  }
  return info;
}

}  // namespace

std::string EncodeAllocationData(const PodResourceAllocationInfo& info) {
  api::Json j = api::Json::object();
  if (!info.allocation_entries.empty()) {
    api::Json pods = api::Json::object();
    for (const auto& [uid, containers] : info.allocation_entries) {
      // A pod entry without containers is an empty (non-nil) map in Go.
      api::Json c = api::Json::object();
      for (const auto& [name, list] : containers) c[name] = ResourceListJson(list);
      pods[uid] = std::move(c);
    }
    j["allocationEntries"] = std::move(pods);
  }
  if (!info.resize_status_entries.empty()) {
    api::Json statuses = api::Json::object();
    for (const auto& [uid, st] : info.resize_status_entries) statuses[uid] = st;
    j["resizeStatusEntries"] = std::move(statuses);
  }
  return api::SerializeJson(j);
}

uint64_t AllocationChecksum(std::string_view data) {
  // go-spew's "%#v" of a string: its type in parentheses, then the text unquoted.
  return Fnv1a32(absl::StrCat("(string)", AV(data)));
}

std::string MarshalAllocationCheckpoint(const PodResourceAllocationInfo& info) {
  const std::string data = EncodeAllocationData(info);
  api::Json j = api::Json::object();
  j["data"] = data;
  j["checksum"] = AllocationChecksum(data);
  return api::SerializeJson(j);
}

absl::StatusOr<PodResourceAllocationInfo> UnmarshalAllocationCheckpoint(std::string_view text) {
  absl::StatusOr<api::Json> parsed = api::ParseJson(text);
  if (!parsed.ok()) return parsed.status();
  if (!parsed->is_object()) return absl::InvalidArgumentError("checkpoint is not a JSON object");
  std::string data;
  if (auto it = parsed->find("data"); it != parsed->end() && !it->is_null()) {
    if (!it->is_string()) return absl::InvalidArgumentError("data: not a string");
    data = it->get<std::string>();
  }
  uint64_t checksum = 0;
  if (auto it = parsed->find("checksum"); it != parsed->end() && !it->is_null()) {
    if (!it->is_number_unsigned()) return absl::InvalidArgumentError("checksum: not a number");
    checksum = it->get<uint64_t>();
  }
  if (checksum != AllocationChecksum(data)) {
    return absl::DataLossError("checkpoint is corrupted");
  }
  absl::StatusOr<PodResourceAllocationInfo> info = DecodeAllocationData(data);
  if (!info.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("failed to get pod resource allocation info: ", info.status().message()));
  }
  return info;
}

AllocationState::AllocationState() {
  KLOG_V(2, "Initialized new in-memory state store for pod resource allocation tracking");
}

absl::StatusOr<std::unique_ptr<AllocationState>> AllocationState::Open(
    const std::string& state_dir) {
  std::unique_ptr<AllocationState> s(new AllocationState());
  s->path_ = (std::filesystem::path(state_dir) / kPodStatusManagerStateFile).string();
  auto fail = [&](const absl::Status& st) {
    return absl::Status(
        st.code(), absl::StrCat("could not restore state from checkpoint: ", st.message(),
                                ", please drain this node and delete pod allocation checkpoint "
                                "file \"",
                                s->path_, "\" before restarting Kubelet"));
  };
  absl::StatusOr<std::string> text = ReadFileToString(s->path_);
  absl::MutexLock lock(&s->mu_);
  if (absl::IsNotFound(text.status())) {
    if (absl::Status st = s->StoreLocked(); !st.ok()) return fail(st);
    return s;
  }
  if (!text.ok()) return fail(text.status());
  absl::StatusOr<PodResourceAllocationInfo> info = UnmarshalAllocationCheckpoint(*text);
  if (!info.ok()) return fail(info.status());
  s->info_ = *std::move(info);
  KLOG_V(2, "State checkpoint: restored pod resource allocation state from checkpoint");
  return s;
}

absl::Status AllocationState::StoreLocked() {
  if (path_.empty()) return absl::OkStatus();
  absl::Status st = WriteFileAtomically(path_, MarshalAllocationCheckpoint(info_), 0644);
  if (!st.ok()) KLOG_ERROR(st, "Failed to save pod allocation checkpoint");
  return st;
}

std::optional<api::ResourceList> AllocationState::GetContainerResourceAllocation(
    const std::string& uid, const std::string& container) const {
  absl::MutexLock lock(&mu_);
  auto pod = info_.allocation_entries.find(uid);
  if (pod == info_.allocation_entries.end()) return std::nullopt;
  auto c = pod->second.find(container);
  if (c == pod->second.end()) return std::nullopt;
  return c->second;
}

absl::Status AllocationState::SetPodAllocation(const api::Pod& pod) {
  absl::MutexLock lock(&mu_);
  const std::string& uid = pod.metadata.uid;
  // One checkpoint write per container, as upstream's state (SetContainerResourceAllocation).
  for (const api::Container& c : pod.spec.containers) {
    info_.allocation_entries[uid][c.name] = c.resources.requests;
    KLOG_V(3, "Updated container resource allocation", "podUID", uid, "containerName", c.name,
           "alloc", api::SerializeJson(ResourceListJson(c.resources.requests)));
    if (absl::Status st = StoreLocked(); !st.ok()) return st;
  }
  return absl::OkStatus();
}

std::optional<std::string> AllocationState::GetPodResizeStatus(const std::string& uid) const {
  absl::MutexLock lock(&mu_);
  auto it = info_.resize_status_entries.find(uid);
  if (it == info_.resize_status_entries.end()) return std::nullopt;
  return it->second;
}

absl::Status AllocationState::SetPodResizeStatus(const std::string& uid,
                                                 const std::string& resize_status) {
  absl::MutexLock lock(&mu_);
  auto it = info_.resize_status_entries.find(uid);
  if (resize_status.empty()) {
    if (it == info_.resize_status_entries.end()) return absl::OkStatus();
    info_.resize_status_entries.erase(it);
  } else {
    if (it != info_.resize_status_entries.end() && it->second == resize_status) {
      return absl::OkStatus();
    }
    info_.resize_status_entries[uid] = resize_status;
  }
  KLOG_V(3, "Updated pod resize state", "podUID", uid, "resizeStatus", resize_status);
  return StoreLocked();
}

absl::Status AllocationState::Delete(const std::string& uid, const std::string& container) {
  absl::MutexLock lock(&mu_);
  if (container.empty()) {
    info_.allocation_entries.erase(uid);
    info_.resize_status_entries.erase(uid);
    KLOG_V(3, "Deleted pod resource allocation and resize state", "podUID", uid);
    return StoreLocked();
  }
  auto pod = info_.allocation_entries.find(uid);
  if (pod != info_.allocation_entries.end()) {
    pod->second.erase(container);
    if (pod->second.empty()) {
      info_.allocation_entries.erase(pod);
      info_.resize_status_entries.erase(uid);
    }
  }
  KLOG_V(3, "Deleted pod resource allocation", "podUID", uid, "containerName", container);
  return StoreLocked();
}

std::set<std::string> AllocationState::PodUIDs() const {
  absl::MutexLock lock(&mu_);
  std::set<std::string> out;
  for (const auto& [uid, unused] : info_.allocation_entries) out.insert(uid);
  for (const auto& [uid, unused] : info_.resize_status_entries) out.insert(uid);
  return out;
}

PodResourceAllocationInfo AllocationState::Snapshot() const {
  absl::MutexLock lock(&mu_);
  return info_;
}

}  // namespace kubelet::status
