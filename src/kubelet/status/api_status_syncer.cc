#include "kubelet/status/api_status_syncer.h"

#include <algorithm>
#include <utility>

#include "api/pod_codec.h"
#include "api/static_pod.h"
#include "common/guarded.h"
#include "common/log.h"

namespace kubelet::status {
namespace {

// The status fields the kubelet owns: dropping one from the new status clears it in the API.
constexpr const char* kKubeletOwnedFields[] = {"phase",
                                               "message",
                                               "reason",
                                               "hostIP",
                                               "hostIPs",
                                               "podIP",
                                               "podIPs",
                                               "startTime",
                                               "initContainerStatuses",
                                               "containerStatuses",
                                               "ephemeralContainerStatuses",
                                               "qosClass"};

std::string ConditionType(const nlohmann::json& c) {
  if (!c.is_object()) return "";
  auto it = c.find("type");
  return it != c.end() && it->is_string() ? it->get<std::string>() : "";
}

// Whether a status says only that the pod is starting (see first_status_hold).
bool IsStartingStatus(const api::PodStatus& status) {
  if (status.phase != "Pending") return false;
  auto starting = [](const std::vector<api::ContainerStatus>& list) {
    for (const api::ContainerStatus& c : list) {
      if (c.state.running || c.state.terminated || c.last_state.terminated) return false;
      if (c.state.waiting && c.state.waiting->reason != "ContainerCreating" &&
          c.state.waiting->reason != "PodInitializing") {
        return false;
      }
    }
    return true;
  };
  return starting(status.init_container_statuses) && starting(status.container_statuses) &&
         starting(status.ephemeral_container_statuses);
}

}  // namespace

ApiStatusSyncer::ApiStatusSyncer(PodStatusClient& client, const StatusManager& statuses,
                                 ApiStatusSyncerDelegate delegate, ApiStatusSyncerOptions options,
                                 Clock& clock)
    : client_(client),
      statuses_(statuses),
      delegate_(std::move(delegate)),
      options_(options),
      clock_(clock) {}

ApiStatusSyncer::~ApiStatusSyncer() { Stop(); }

void ApiStatusSyncer::Start() {
  absl::MutexLock lock(&mu_);
  if (started_ || stopping_) return;
  started_ = true;
  KLOG_INFO("Starting to sync pod status with apiserver");
  // A Notify() before the start makes the first round immediate.
  const absl::Time first = pending_ ? absl::InfinitePast() : clock_.Now() + options_.sync_period;
  loop_ =
      LoopsOrOwn(options_.loops, own_loops_, clock_).Start("pod status sync", first, [this](bool) {
        return Round();
      });
}

void ApiStatusSyncer::Stop() {
  Loop* loop;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    loop = loop_.get();
  }
  if (loop != nullptr) loop->Stop();
}

void ApiStatusSyncer::Notify() {
  absl::MutexLock lock(&mu_);
  pending_ = true;
  if (loop_) loop_->Wake();
}

absl::Time ApiStatusSyncer::Round() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::InfiniteFuture();
    pending_ = false;
  }
  RunGuarded("pod status sync", [this] { SyncBatch(); });
  return std::min(clock_.Now() + options_.sync_period, next_hold_end_);
}

nlohmann::json ApiStatusSyncer::EncodeStatus(const api::PodStatus& status) {
  api::Pod pod;
  pod.status = status;
  nlohmann::json j = nlohmann::json::parse(api::EncodePodJson(pod), nullptr, false);
  if (j.is_object() && j.contains("status")) return j["status"];
  return nlohmann::json::object();
}

std::optional<std::string> ApiStatusSyncer::StatusPatch(const std::string& uid,
                                                        const nlohmann::json& old_status,
                                                        const nlohmann::json& new_status,
                                                        bool owns_resize) {
  nlohmann::json old_s = old_status.is_object() ? old_status : nlohmann::json::object();
  nlohmann::json diff = nlohmann::json::object();
  for (const auto& [key, value] : new_status.items()) {
    if (key == "conditions") continue;
    auto it = old_s.find(key);
    if (it == old_s.end() || *it != value) diff[key] = value;
  }
  for (const char* key : kKubeletOwnedFields) {
    if (old_s.contains(key) && !new_status.contains(key)) diff[key] = nullptr;
  }
  if (owns_resize && old_s.contains("resize") && !new_status.contains("resize")) {
    diff["resize"] = nullptr;
  }
  // Conditions merge by type: send ours that changed, and the order of the whole list.
  std::map<std::string, nlohmann::json> old_conditions;
  if (auto it = old_s.find("conditions"); it != old_s.end() && it->is_array()) {
    for (const auto& c : *it) old_conditions[ConditionType(c)] = c;
  }
  nlohmann::json changed = nlohmann::json::array();
  nlohmann::json order = nlohmann::json::array();
  if (auto it = new_status.find("conditions"); it != new_status.end() && it->is_array()) {
    for (const auto& c : *it) {
      std::string type = ConditionType(c);
      order.push_back({{"type", type}});
      auto o = old_conditions.find(type);
      if (o == old_conditions.end()) {
        changed.push_back(c);
      } else if (o->second != c) {
        // The merge keeps a condition's keys the patch leaves out: a reason or message that
        // went away (Ready turning True) is deleted with null, as a two-way merge patch does.
        nlohmann::json entry = c;
        if (o->second.is_object()) {
          for (const auto& [key, value] : o->second.items()) {
            if (!c.contains(key)) entry[key] = nullptr;
          }
        }
        changed.push_back(std::move(entry));
      }
      if (o != old_conditions.end()) old_conditions.erase(o);
    }
  }
  if (diff.empty() && changed.empty()) return std::nullopt;
  nlohmann::json status = nlohmann::json::object();
  if (!order.empty()) {
    // Conditions the kubelet does not own (other writers') keep their place after ours.
    if (auto it = old_s.find("conditions"); it != old_s.end() && it->is_array()) {
      for (const auto& c : *it) {
        if (old_conditions.count(ConditionType(c))) order.push_back({{"type", ConditionType(c)}});
      }
    }
    status["$setElementOrder/conditions"] = order;
  }
  if (!changed.empty()) status["conditions"] = changed;
  for (auto& [key, value] : diff.items()) status[key] = value;
  nlohmann::json patch = {{"metadata", {{"uid", uid}}}, {"status", status}};
  return patch.dump();
}

void ApiStatusSyncer::SyncBatch() {
  const std::vector<api::PodPtr> pods = delegate_.pods();
  const absl::Time now = clock_.Now();
  next_hold_end_ = absl::InfiniteFuture();
  std::set<std::string> live;
  for (const api::PodPtr& pod_ptr : pods) {
    const api::Pod& pod = *pod_ptr;
    const std::string& uid = pod.metadata.uid;
    live.insert(uid);
    if (deleted_.count(uid)) continue;
    auto st = statuses_.GetPodStatus(uid);
    auto synced = synced_versions_.find(uid);
    bool needs_status = st && (synced == synced_versions_.end() || synced->second != st->version);
    // Mirror pods belong to the mirror pod logic (upstream canBeDeleted).
    bool can_delete = pod.metadata.deletion_timestamp.has_value() && !api::IsMirrorPod(pod) &&
                      delegate_.terminated(pod);
    if (!needs_status && !can_delete) continue;
    if (!can_delete && synced == synced_versions_.end() &&
        options_.first_status_hold > absl::ZeroDuration() && delegate_.first_sync_hold_until &&
        IsStartingStatus(st->status)) {
      absl::Time end =
          std::min(held_since_.emplace(uid, now).first->second + options_.first_status_hold,
                   delegate_.first_sync_hold_until(uid));
      if (now < end) {
        next_hold_end_ = std::min(next_hold_end_, end);
        continue;
      }
    }
    held_since_.erase(uid);
    if (!SyncPod(pod, uid, needs_status, can_delete)) {
      synced_versions_.erase(uid);
      deleted_.insert(uid);
    }
  }
  if (delegate_.static_pods) {
    for (const MirroredPod& m : delegate_.static_pods()) {
      if (m.mirror_uid.empty()) {
        KLOG_V(5, "Static pod does not have a corresponding mirror pod; skipping", "podUID",
               m.pod->metadata.uid, "pod", api::PodKey(*m.pod));
        continue;
      }
      live.insert(m.mirror_uid);
      if (deleted_.count(m.mirror_uid)) continue;
      auto st = statuses_.GetPodStatus(m.pod->metadata.uid);
      auto synced = synced_versions_.find(m.mirror_uid);
      if (!st || (synced != synced_versions_.end() && synced->second == st->version)) continue;
      if (!SyncPod(*m.pod, m.mirror_uid, true, false)) {
        synced_versions_.erase(m.mirror_uid);
        deleted_.insert(m.mirror_uid);
      }
    }
  }
  // Pods the kubelet no longer holds need no more state.
  for (auto it = synced_versions_.begin(); it != synced_versions_.end();) {
    it = live.count(it->first) ? std::next(it) : synced_versions_.erase(it);
  }
  for (auto it = deleted_.begin(); it != deleted_.end();) {
    it = live.count(*it) ? std::next(it) : deleted_.erase(it);
  }
  for (auto it = held_since_.begin(); it != held_since_.end();) {
    it = live.count(it->first) ? std::next(it) : held_since_.erase(it);
  }
}

bool ApiStatusSyncer::SyncPod(const api::Pod& pod, const std::string& api_uid, bool needs_status,
                              bool can_delete) {
  const std::string& status_uid = pod.metadata.uid;
  const std::string& uid = api_uid;
  const std::string& ns = pod.metadata.namespace_;
  const std::string& name = pod.metadata.name;
  const std::string key = api::PodKey(pod);
  for (int attempt = 0; attempt < options_.conflict_retries; ++attempt) {
    absl::StatusOr<nlohmann::json> current = client_.GetPod(ns, name);
    if (absl::IsNotFound(current.status())) {
      KLOG_V(3, "Pod does not exist on the server", "podUID", uid, "pod", key);
      return false;
    }
    if (!current.ok()) {
      KLOG_INFO("Failed to get status for pod", "podUID", uid, "pod", key, "err",
                std::string(current.status().message()));
      return true;
    }
    std::string current_uid;
    if (auto m = current->find("metadata"); m != current->end() && m->is_object()) {
      if (auto u = m->find("uid"); u != m->end() && u->is_string()) current_uid = *u;
    }
    if (current_uid != uid) {
      KLOG_V(3, "Pod was deleted and then recreated, skipping status update", "pod", key,
             "oldPodUID", uid, "podUID", current_uid);
      return false;
    }
    auto st = statuses_.GetPodStatus(status_uid);
    if (st && (needs_status || can_delete)) {
      nlohmann::json old_status =
          current->contains("status") ? (*current)["status"] : nlohmann::json::object();
      std::optional<std::string> patch = StatusPatch(uid, old_status, EncodeStatus(st->status),
                                                     options_.in_place_pod_vertical_scaling);
      if (!patch) {
        KLOG_V(3, "Status for pod is up-to-date; skipping", "podUID", uid, "pod", key);
      } else {
        absl::Status r = client_.PatchPodStatus(ns, name, *patch);
        if (absl::IsAborted(r)) {
          KLOG_V(3, "Conflict updating status for pod, retrying", "pod", key, "err",
                 std::string(r.message()));
          continue;
        }
        if (absl::IsNotFound(r)) return false;
        if (!r.ok()) {
          KLOG_INFO("Failed to update status for pod", "podUID", uid, "pod", key, "err",
                    std::string(r.message()));
          return true;
        }
        KLOG_V(3, "Patch status for pod", "pod", key, "podUID", uid, "patch", *patch);
      }
      synced_versions_[uid] = st->version;
    }
    if (can_delete) {
      absl::Status r = client_.DeletePod(ns, name, uid);
      if (r.ok() || absl::IsNotFound(r)) {
        KLOG_V(3, "Pod fully terminated and removed from etcd", "pod", key);
        return false;
      }
      if (absl::IsAborted(r) || absl::IsFailedPrecondition(r)) {
        // The UID precondition failed: a new pod of the same name.
        KLOG_V(3, "Pod was deleted and then recreated, skipping status update", "pod", key);
        return false;
      }
      KLOG_INFO("Failed to delete status for pod", "pod", key, "err", std::string(r.message()));
    }
    return true;
  }
  return true;
}

}  // namespace kubelet::status
