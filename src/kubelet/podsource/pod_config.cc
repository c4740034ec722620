#include "kubelet/podsource/pod_config.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <utility>

#include "api/static_pod.h"
#include "common/log.h"

namespace kubelet::podsource {
namespace {

// Annotations the kubelet itself adds to pods (config.go localAnnotations).
constexpr const char* kLocalAnnotations[] = {
    api::kConfigSourceAnnotationKey,
    api::kConfigMirrorAnnotationKey,
    api::kConfigFirstSeenAnnotationKey,
};

bool IsLocalAnnotationKey(const std::string& key) {
  for (const char* local : kLocalAnnotations) {
    if (key == local) return true;
  }
  return false;
}

// isAnnotationMapEqual: equal except for local annotations.
bool AnnotationsEqual(const api::StringMap& existing, const api::StringMap& candidate) {
  for (const auto& [k, v] : candidate) {
    if (IsLocalAnnotationKey(k)) continue;
    auto it = existing.find(k);
    if (it == existing.end() || it->second != v) return false;
  }
  for (const auto& [k, v] : existing) {
    if (IsLocalAnnotationKey(k)) continue;
    if (candidate.find(k) == candidate.end()) return false;
  }
  return true;
}

bool PodsDifferSemantically(const api::Pod& existing, const api::Pod& ref) {
  return !(existing.spec == ref.spec && existing.metadata.labels == ref.metadata.labels &&
           existing.metadata.deletion_timestamp == ref.metadata.deletion_timestamp &&
           existing.metadata.deletion_grace_period_seconds ==
               ref.metadata.deletion_grace_period_seconds &&
           AnnotationsEqual(existing.metadata.annotations, ref.metadata.annotations));
}

// updateAnnotations: ref's annotations plus the local annotations `existing` already has.
// `ref` is the source's pod as upstream sees it at this point: config.source stamped and
// config.seen overwritten with the stored one (checkAndUpdatePod), which only matters when
// `existing` lacks those keys.
api::StringMap UpdatedAnnotations(const api::Pod& existing, const api::Pod& ref,
                                  const std::string& source) {
  api::StringMap annotations = ref.metadata.annotations;
  annotations[api::kConfigSourceAnnotationKey] = source;
  auto seen = existing.metadata.annotations.find(api::kConfigFirstSeenAnnotationKey);
  annotations[api::kConfigFirstSeenAnnotationKey] =
      seen == existing.metadata.annotations.end() ? std::string() : seen->second;
  for (const char* k : kLocalAnnotations) {
    auto it = existing.metadata.annotations.find(k);
    if (it != existing.metadata.annotations.end()) annotations[k] = it->second;
  }
  return annotations;
}

enum class Change { kNone, kUpdate, kReconcile, kGracefulDelete };

// checkAndUpdatePod: what kind of change `ref` (the source's new version) is to `existing` (the
// stored one), and for a change the merged version (`*merged`, a new object built once). The
// source annotation upstream stamps on `ref` before comparing is a local annotation: the
// comparison ignores it and the merge keeps the stored one.
Change CheckAndUpdatePod(const api::Pod& existing, const api::Pod& ref, const std::string& source,
                         api::PodPtr* merged) {
  if (!PodsDifferSemantically(existing, ref)) {
    // Only a status change: the kubelet is the source of truth for status, so reconcile.
    if (existing.status == ref.status) return Change::kNone;
    auto pod = std::make_shared<api::Pod>();
    pod->kind = existing.kind;
    pod->api_version = existing.api_version;
    pod->metadata = existing.metadata;
    pod->spec = existing.spec;
    pod->status = ref.status;
    *merged = std::move(pod);
    return Change::kReconcile;
  }
  // The stored metadata (the first-seen time is ours; other metadata keeps its first value)
  // with the new spec, labels, deletion fields, annotations and status.
  auto pod = std::make_shared<api::Pod>();
  pod->kind = existing.kind;
  pod->api_version = existing.api_version;
  pod->metadata = existing.metadata;
  pod->metadata.labels = ref.metadata.labels;
  pod->metadata.deletion_timestamp = ref.metadata.deletion_timestamp;
  pod->metadata.deletion_grace_period_seconds = ref.metadata.deletion_grace_period_seconds;
  pod->metadata.annotations = UpdatedAnnotations(existing, ref, source);
  pod->spec = ref.spec;
  pod->status = ref.status;
  *merged = std::move(pod);
  return ref.metadata.deletion_timestamp.has_value() ? Change::kGracefulDelete : Change::kUpdate;
}

std::vector<std::string> PodKeys(const std::vector<api::PodPtr>& pods) {
  std::vector<std::string> keys;
  keys.reserve(pods.size());
  for (const auto& p : pods) {
    if (p != nullptr) keys.push_back(api::PodKey(*p));
  }
  return keys;
}

}  // namespace

namespace {
PodConfigOptions WithCapacity(PodConfigOptions o) {
  if (o.queue_capacity == 0) o.queue_capacity = 1;
  return o;
}
}  // namespace

PodConfig::PodConfig(Clock& clock, PodConfigOptions options)
    : clock_(clock),
      options_(WithCapacity(options)),
      bell_(options.bell),
      own_fd_(options.bell == nullptr),
      event_fd_(options.bell != nullptr ? options.bell->fd()
                                        : ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (own_fd_ && event_fd_ < 0) KLOG_WARNING("Failed to create eventfd for pod config updates");
}

PodConfig::~PodConfig() {
  Shutdown();
  if (own_fd_ && event_fd_ >= 0) ::close(event_fd_);
}

void PodConfig::AddSource(std::string_view source) {
  absl::MutexLock lock(&mu_);
  sources_.insert(std::string(source));
}

std::vector<std::string> PodConfig::Sources() const {
  absl::MutexLock lock(&mu_);
  return std::vector<std::string>(sources_.begin(), sources_.end());
}

bool PodConfig::SetSource(std::string_view source, std::vector<api::PodPtr> pods,
                          const std::atomic<bool>* cancel) {
  return Merge(PodUpdate{PodOperation::kSet, std::string(source), std::move(pods)}, cancel);
}

bool PodConfig::AcquireProducerLocked(const std::atomic<bool>* cancel) {
  auto free = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return shutdown_ || !producing_; };
  while (!free()) {
    if (cancel != nullptr && cancel->load()) return false;
    mu_.AwaitWithTimeout(absl::Condition(&free), absl::Milliseconds(50));
  }
  if (shutdown_) return false;
  producing_ = true;
  return true;
}

bool PodConfig::Merge(PodUpdate update, const std::atomic<bool>* cancel) {
  absl::MutexLock lock(&mu_);
  if (!AcquireProducerLocked(cancel)) return false;
  struct Release {
    PodConfig* self;
    ~Release() ABSL_NO_THREAD_SAFETY_ANALYSIS { self->producing_ = false; }
  } release{this};
  const std::string source = update.source;
  const bool seen_before = sources_seen_.count(source) > 0;
  MergeResult r = MergeLocked(source, update);
  const bool first_set = !seen_before && sources_seen_.count(source) > 0;

  auto push = [&](PodOperation op, std::vector<api::PodPtr>&& pods) {
    return PushLocked(PodUpdate{op, source, std::move(pods)}, cancel);
  };
  const bool no_changes = r.adds.empty() && r.updates.empty() && r.deletes.empty();
  if (!r.removes.empty() && !push(PodOperation::kRemove, std::move(r.removes))) return false;
  if (!r.adds.empty() && !push(PodOperation::kAdd, std::move(r.adds))) return false;
  if (!r.updates.empty() && !push(PodOperation::kUpdate, std::move(r.updates))) return false;
  if (!r.deletes.empty() && !push(PodOperation::kDelete, std::move(r.deletes))) return false;
  // An empty ADD tells the consumer the source is ready even when it brought no pods.
  if (first_set && no_changes && !push(PodOperation::kAdd, {})) return false;
  if (!r.reconciles.empty() && !push(PodOperation::kReconcile, std::move(r.reconciles))) {
    return false;
  }
  return true;
}

PodConfig::MergeResult PodConfig::MergeLocked(const std::string& source, PodUpdate& update) {
  MergeResult out;
  PodMap& pods = pods_[source];
  switch (update.op) {
    case PodOperation::kAdd:
    case PodOperation::kUpdate:
    case PodOperation::kDelete:
      if (update.op == PodOperation::kAdd) {
        KLOG_V(4, "Adding new pods from source", "source", source, "pods", PodKeys(update.pods));
      } else if (update.op == PodOperation::kDelete) {
        KLOG_V(4, "Gracefully deleting pods from source", "source", source, "pods",
               PodKeys(update.pods));
      } else {
        KLOG_V(4, "Updating pods from source", "source", source, "pods", PodKeys(update.pods));
      }
      UpdatePods(source, update.pods, pods, pods, out);
      break;
    case PodOperation::kRemove:
      KLOG_V(4, "Removing pods from source", "source", source, "pods", PodKeys(update.pods));
      for (const api::PodPtr& value : update.pods) {
        if (value == nullptr) continue;
        auto it = pods.find(value->metadata.uid);
        if (it == pods.end()) continue;  // not known: a no-op
        out.removes.push_back(std::move(it->second.pod));
        pods.erase(it);
      }
      break;
    case PodOperation::kSet: {
      KLOG_V(4, "Setting pods for source", "source", source);
      sources_seen_.insert(source);
      PodMap old_pods = std::move(pods);
      PodMap new_pods;
      UpdatePods(source, update.pods, old_pods, new_pods, out);
      for (auto& [uid, existing] : old_pods) {
        if (new_pods.find(uid) == new_pods.end()) out.removes.push_back(std::move(existing.pod));
      }
      pods = std::move(new_pods);
      break;
    }
    default:
      KLOG_INFO("Received invalid update type", "type", std::string(PodOperationName(update.op)),
                "source", source);
      break;
  }
  return out;
}

void PodConfig::UpdatePods(const std::string& source, const std::vector<api::PodPtr>& new_pods,
                           PodMap& old_pods, PodMap& pods, MergeResult& out) {
  // filterInvalidPods: names must be unique within the update (and so must UIDs).
  std::set<std::string> names;
  std::set<std::string> uids;
  for (size_t i = 0; i < new_pods.size(); ++i) {
    const api::PodPtr& ref = new_pods[i];
    if (ref == nullptr) continue;
    if (!names.insert(api::PodFullName(*ref)).second) {
      KLOG_INFO("Pod failed validation due to duplicate pod name, ignoring", "index", i, "pod",
                api::PodKey(*ref), "source", source);
      continue;
    }
    if (!uids.insert(ref->metadata.uid).second) {
      KLOG_INFO("Pod failed validation due to duplicate pod UID, ignoring", "index", i, "pod",
                api::PodKey(*ref), "podUID", ref->metadata.uid, "source", source);
      continue;
    }
    // Keep the source's object only while the source holds it too (this update's vector is the
    // other holder): then it costs nothing and spares the next comparison.
    api::PodPtr keep_ref = ref.use_count() > 1 ? ref : nullptr;
    auto it = old_pods.find(ref->metadata.uid);
    if (it != old_pods.end()) {
      StoredPod& existing = it->second;
      // The very object merged last time: nothing changed.
      if (existing.ref != ref) {
        api::PodPtr merged;
        switch (CheckAndUpdatePod(*existing.pod, *ref, source, &merged)) {
          case Change::kUpdate:
            out.updates.push_back(merged);
            break;
          case Change::kReconcile:
            out.reconciles.push_back(merged);
            break;
          case Change::kGracefulDelete:
            out.deletes.push_back(merged);
            break;
          case Change::kNone:
            break;
        }
        if (merged != nullptr) existing.pod = std::move(merged);
        existing.ref = std::move(keep_ref);
      }
      if (&old_pods != &pods) {
        pods[ref->metadata.uid] = std::move(existing);
        old_pods.erase(it);
      }
      continue;
    }
    // Annotate the pod with the source, and recordFirstSeenTime.
    KLOG_V(4, "Receiving a new pod", "pod", api::PodKey(*ref));
    auto added = std::make_shared<api::Pod>(*ref);
    added->metadata.annotations[api::kConfigSourceAnnotationKey] = source;
    added->metadata.annotations[api::kConfigFirstSeenAnnotationKey] =
        api::FormatRFC3339Nano(clock_.Now());
    api::PodPtr pod = std::move(added);
    out.adds.push_back(pod);
    pods[ref->metadata.uid] = StoredPod{std::move(pod), std::move(keep_ref)};
  }
}

bool PodConfig::SeenAllSources(const std::set<std::string>& seen_by_consumer) const {
  absl::MutexLock lock(&mu_);
  if (log::V(5)) {
    KLOG_V(5, "Looking for sources, have seen", "sources",
           std::vector<std::string>(sources_.begin(), sources_.end()), "seenSources",
           std::vector<std::string>(seen_by_consumer.begin(), seen_by_consumer.end()));
  }
  for (const auto& s : sources_) {
    if (seen_by_consumer.count(s) == 0 || sources_seen_.count(s) == 0) return false;
  }
  return true;
}

bool PodConfig::Sync(const std::atomic<bool>* cancel) {
  absl::MutexLock lock(&mu_);
  if (!AcquireProducerLocked(cancel)) return false;
  struct Release {
    PodConfig* self;
    ~Release() ABSL_NO_THREAD_SAFETY_ANALYSIS { self->producing_ = false; }
  } release{this};
  return PushLocked(PodUpdate{PodOperation::kSet, kAllSource, MergedStateLocked()}, cancel);
}

std::vector<api::PodPtr> PodConfig::MergedState() const {
  absl::MutexLock lock(&mu_);
  return MergedStateLocked();
}

std::vector<api::PodPtr> PodConfig::MergedStateLocked() const {
  std::vector<api::PodPtr> out;
  for (const auto& [source, pods] : pods_) {
    for (const auto& [uid, stored] : pods) out.push_back(stored.pod);
  }
  return out;
}

bool PodConfig::PushLocked(PodUpdate update, const std::atomic<bool>* cancel) {
  auto has_room = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return shutdown_ || queue_.size() < options_.queue_capacity;
  };
  while (!has_room()) {
    if (cancel != nullptr && cancel->load()) return false;
    mu_.AwaitWithTimeout(absl::Condition(&has_room), absl::Milliseconds(50));
  }
  if (shutdown_) return false;
  const bool was_empty = queue_.empty();
  queue_.push_back(std::move(update));
  if (bell_ != nullptr) {
    bell_->Ring();
  } else if (was_empty && event_fd_ >= 0) {
    uint64_t one = 1;
    ssize_t n = ::write(event_fd_, &one, sizeof(one));
    (void)n;
  }
  return true;
}

void PodConfig::ResetFdIfEmptyLocked() {
  if (own_fd_ && queue_.empty() && event_fd_ >= 0) {
    uint64_t v;
    ssize_t n = ::read(event_fd_, &v, sizeof(v));
    (void)n;
  }
}

std::vector<PodUpdate> PodConfig::Drain() {
  absl::MutexLock lock(&mu_);
  std::vector<PodUpdate> out(std::make_move_iterator(queue_.begin()),
                             std::make_move_iterator(queue_.end()));
  queue_.clear();
  ResetFdIfEmptyLocked();
  return out;
}

std::optional<PodUpdate> PodConfig::Next(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto pending = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty(); };
  if (!mu_.AwaitWithTimeout(absl::Condition(&pending), timeout)) return std::nullopt;
  PodUpdate u = std::move(queue_.front());
  queue_.pop_front();
  ResetFdIfEmptyLocked();
  return u;
}

size_t PodConfig::Pending() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void PodConfig::Shutdown() {
  absl::MutexLock lock(&mu_);
  shutdown_ = true;
}

}  // namespace kubelet::podsource
