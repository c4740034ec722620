#include "kubelet/eviction/eviction.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/quantity.h"
#include "api/resource_helpers.h"
#include "api/static_pod.h"
#include "common/duration.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::eviction {
namespace {

const std::set<std::string>& KnownSignals() {
  static const std::set<std::string>* s = new std::set<std::string>{
      kSignalMemoryAvailable,  kSignalAllocatableMemoryAvailable, kSignalNodeFsAvailable,
      kSignalNodeFsInodesFree, kSignalImageFsAvailable,           kSignalImageFsInodesFree,
      kSignalPIDAvailable};
  return *s;
}

std::string Bytes(int64_t v) {
  return api::Quantity::FromValue(v, api::Quantity::Format::kBinarySI).String();
}

bool IsMemorySignal(const std::string& s) {
  return s == kSignalMemoryAvailable || s == kSignalAllocatableMemoryAvailable;
}
bool IsDiskSignal(const std::string& s) {
  return s == kSignalNodeFsAvailable || s == kSignalNodeFsInodesFree ||
         s == kSignalImageFsAvailable || s == kSignalImageFsInodesFree;
}
bool IsInodeSignal(const std::string& s) {
  return s == kSignalNodeFsInodesFree || s == kSignalImageFsInodesFree;
}

// A signal's amount as upstream prints it: a binary-SI quantity for bytes, a number otherwise.
std::string Amount(const std::string& signal, int64_t v) {
  if (IsMemorySignal(signal) || (IsDiskSignal(signal) && !IsInodeSignal(signal))) return Bytes(v);
  return std::to_string(v);
}

std::string ConditionOf(const std::string& signal) {
  if (IsMemorySignal(signal)) return "MemoryPressure";
  if (signal == kSignalPIDAvailable) return "PIDPressure";
  return "DiskPressure";
}

// The resource a signal is about, as upstream names it in messages.
std::string ResourceOf(const std::string& signal) {
  if (IsMemorySignal(signal)) return "memory";
  if (signal == kSignalPIDAvailable) return "pids";
  if (IsInodeSignal(signal)) return "inodes";
  return "ephemeral-storage";
}

// "10%" -> 0.10; a quantity otherwise (inodes and pids are plain numbers too).
absl::Status ParseValue(const std::string& signal, const std::string& value,
                        std::optional<int64_t>* quantity, double* percentage) {
  if (absl::EndsWith(value, "%")) {
    double pct = 0;
    if (!absl::SimpleAtod(value.substr(0, value.size() - 1), &pct)) {
      return absl::InvalidArgumentError(absl::StrCat("invalid percentage: ", value));
    }
    if (pct < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("eviction percentage threshold ", signal, " must be >= 0%: ", value));
    }
    if (pct > 100) {
      return absl::InvalidArgumentError(
          absl::StrCat("eviction percentage threshold ", signal, " must be <= 100%: ", value));
    }
    *percentage = pct / 100.0;
    return absl::OkStatus();
  }
  absl::StatusOr<api::Quantity> q = api::Quantity::Parse(value);
  if (!q.ok()) return q.status();
  if (q->Sign() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("eviction threshold ", signal, " must be positive: ", value));
  }
  *quantity = q->Value();
  return absl::OkStatus();
}

std::optional<int64_t> U(const std::optional<uint64_t>& v) {
  if (!v) return std::nullopt;
  return static_cast<int64_t>(*v);
}

const stats::PodStats* FindPodStats(const stats::Summary& summary, const api::Pod& pod) {
  for (const stats::PodStats& p : summary.pods) {
    if (p.pod_ref.uid == pod.metadata.uid) return &p;
  }
  return nullptr;
}

std::optional<int64_t> PodMemoryUsage(const stats::PodStats* ps) {
  if (ps == nullptr) return std::nullopt;
  if (ps->memory && ps->memory->working_set_bytes) return U(ps->memory->working_set_bytes);
  int64_t sum = 0;
  bool any = false;
  for (const stats::ContainerStats& c : ps->containers) {
    if (c.memory && c.memory->working_set_bytes) {
      sum += static_cast<int64_t>(*c.memory->working_set_bytes);
      any = true;
    }
  }
  return any ? std::optional<int64_t>(sum) : std::nullopt;
}

std::optional<int64_t> PodDiskUsage(const stats::PodStats* ps, bool inodes) {
  if (ps == nullptr) return std::nullopt;
  if (!inodes && ps->ephemeral_storage && ps->ephemeral_storage->used_bytes) {
    return U(ps->ephemeral_storage->used_bytes);
  }
  if (inodes && ps->ephemeral_storage && ps->ephemeral_storage->inodes_used) {
    return U(ps->ephemeral_storage->inodes_used);
  }
  int64_t sum = 0;
  bool any = false;
  for (const stats::ContainerStats& c : ps->containers) {
    for (const std::optional<stats::FsStats>* fs : {&c.rootfs, &c.logs}) {
      if (!*fs) continue;
      const std::optional<uint64_t>& v = inodes ? (*fs)->inodes_used : (*fs)->used_bytes;
      if (v) {
        sum += static_cast<int64_t>(*v);
        any = true;
      }
    }
  }
  return any ? std::optional<int64_t>(sum) : std::nullopt;
}

int64_t PodRequest(const api::Pod& pod, const char* resource) {
  const api::ResourceList r = api::PodRequests(pod);
  auto it = r.find(resource);
  return it == r.end() ? 0 : it->second.Value();
}

int32_t Priority(const api::Pod& pod) { return pod.spec.priority.value_or(0); }

bool ToleratesMemoryPressure(const api::Pod& pod) {
  for (const api::Toleration& t : pod.spec.tolerations) {
    const bool key =
        t.key == "node.kubernetes.io/memory-pressure" || (t.key.empty() && t.operator_ == "Exists");
    const bool effect = t.effect.empty() || t.effect == "NoSchedule";
    const bool value = t.operator_ == "Exists" || t.value.empty();
    if (key && effect && value) return true;
  }
  return false;
}

}  // namespace

int64_t Threshold::Value(int64_t capacity) const {
  if (quantity) return *quantity;
  return static_cast<int64_t>(std::llround(static_cast<double>(capacity) * percentage));
}

int64_t Threshold::MinReclaim(int64_t capacity) const {
  if (min_reclaim_quantity) return *min_reclaim_quantity;
  return static_cast<int64_t>(std::llround(static_cast<double>(capacity) * min_reclaim_percentage));
}

std::string Threshold::String() const {
  if (quantity) return Amount(signal, *quantity);
  return absl::StrCat(percentage * 100, "%");
}

absl::StatusOr<std::vector<Threshold>> ParseThresholds(
    const std::map<std::string, std::string>& hard, const std::map<std::string, std::string>& soft,
    const std::map<std::string, std::string>& soft_grace_periods,
    const std::map<std::string, std::string>& min_reclaim,
    const std::set<std::string>& enforce_node_allocatable) {
  std::vector<Threshold> out;
  auto add = [&](const std::map<std::string, std::string>& m, bool is_soft) -> absl::Status {
    for (const auto& [signal, value] : m) {
      if (KnownSignals().count(signal) == 0) {
        return absl::InvalidArgumentError(absl::StrCat("unsupported eviction signal ", signal));
      }
      Threshold t;
      t.signal = signal;
      if (absl::Status st = ParseValue(signal, value, &t.quantity, &t.percentage); !st.ok()) {
        return st;
      }
      if (is_soft) {
        auto g = soft_grace_periods.find(signal);
        if (g == soft_grace_periods.end()) {
          return absl::InvalidArgumentError(
              absl::StrCat("no grace period specified for soft eviction threshold ", signal));
        }
        absl::StatusOr<absl::Duration> d = ParseGoDuration(g->second);
        if (!d.ok()) return d.status();
        if (*d < absl::ZeroDuration()) {
          return absl::InvalidArgumentError(
              absl::StrCat("invalid eviction grace period specified: ", g->second,
                           ", must be a positive value"));
        }
        t.grace_period = *d;
        // A zero grace period would make it a hard threshold: keep it soft.
        if (t.grace_period == absl::ZeroDuration()) t.grace_period = absl::Nanoseconds(1);
      }
      if (auto r = min_reclaim.find(signal); r != min_reclaim.end()) {
        double pct = 0;
        if (absl::Status st = ParseValue(signal, r->second, &t.min_reclaim_quantity, &pct);
            !st.ok()) {
          return st;
        }
        t.min_reclaim_percentage = pct;
      }
      // A 0 threshold never fires (upstream drops it).
      if ((t.quantity && *t.quantity == 0) || (!t.quantity && t.percentage == 0)) continue;
      out.push_back(t);
      if (signal == kSignalMemoryAvailable && !is_soft &&
          enforce_node_allocatable.count("pods") > 0) {
        Threshold a = t;
        a.signal = kSignalAllocatableMemoryAvailable;
        out.push_back(a);
      }
    }
    return absl::OkStatus();
  };
  for (const auto& [signal, unused] : soft_grace_periods) {
    if (KnownSignals().count(signal) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("unsupported eviction signal ", signal));
    }
  }
  if (absl::Status st = add(hard, false); !st.ok()) return st;
  if (absl::Status st = add(soft, true); !st.ok()) return st;
  return out;
}

Observations Observe(const stats::Summary& summary) {
  Observations o;
  const stats::NodeStats& n = summary.node;
  if (n.memory && n.memory->available_bytes && n.memory->working_set_bytes) {
    const int64_t avail = static_cast<int64_t>(*n.memory->available_bytes);
    o[kSignalMemoryAvailable] = {avail, avail + static_cast<int64_t>(*n.memory->working_set_bytes)};
  }
  // The "pods" cgroup's room under its limit (upstream reads the same system container).
  for (const stats::ContainerStats& c : n.system_containers) {
    if (c.name != "pods" || !c.memory || !c.memory->available_bytes ||
        !c.memory->working_set_bytes) {
      continue;
    }
    const int64_t avail = static_cast<int64_t>(*c.memory->available_bytes);
    o[kSignalAllocatableMemoryAvailable] = {
        avail, avail + static_cast<int64_t>(*c.memory->working_set_bytes)};
  }
  auto fs = [&](const std::optional<stats::FsStats>& f, const char* bytes, const char* inodes) {
    if (!f) return;
    if (f->available_bytes && f->capacity_bytes) {
      o[bytes] = {static_cast<int64_t>(*f->available_bytes),
                  static_cast<int64_t>(*f->capacity_bytes)};
    }
    if (f->inodes_free && f->inodes) {
      o[inodes] = {static_cast<int64_t>(*f->inodes_free), static_cast<int64_t>(*f->inodes)};
    }
  };
  fs(n.fs, kSignalNodeFsAvailable, kSignalNodeFsInodesFree);
  fs(n.image_fs, kSignalImageFsAvailable, kSignalImageFsInodesFree);
  if (n.rlimit && n.rlimit->max_pid && n.rlimit->num_of_running_processes) {
    o[kSignalPIDAvailable] = {*n.rlimit->max_pid - *n.rlimit->num_of_running_processes,
                              *n.rlimit->max_pid};
  }
  return o;
}

std::vector<api::Pod> RankForEviction(const std::string& signal, std::vector<api::Pod> pods,
                                      const stats::Summary& summary) {
  struct Key {
    bool no_stats;
    bool exceeds;
    int32_t priority;
    int64_t over;  // usage - request (or usage)
  };
  std::map<std::string, Key> keys;
  for (const api::Pod& p : pods) {
    const stats::PodStats* ps = FindPodStats(summary, p);
    Key k{};
    if (IsMemorySignal(signal)) {
      std::optional<int64_t> usage = PodMemoryUsage(ps);
      const int64_t req = PodRequest(p, api::kResourceMemory);
      k.no_stats = !usage.has_value();
      k.exceeds = usage.value_or(0) > req;
      k.over = usage.value_or(0) - req;
    } else if (signal == kSignalPIDAvailable) {
      k.no_stats = ps == nullptr || !ps->process_count;
      k.exceeds = true;  // not part of pid ranking
      k.over = ps != nullptr && ps->process_count ? static_cast<int64_t>(*ps->process_count) : 0;
    } else {
      const bool inodes = IsInodeSignal(signal);
      std::optional<int64_t> usage = PodDiskUsage(ps, inodes);
      const int64_t req = inodes ? 0 : PodRequest(p, api::kResourceEphemeralStorage);
      k.no_stats = !usage.has_value();
      k.exceeds = usage.value_or(0) > req;
      k.over = usage.value_or(0) - req;
    }
    k.priority = Priority(p);
    keys[p.metadata.uid] = k;
  }
  std::stable_sort(pods.begin(), pods.end(), [&](const api::Pod& a, const api::Pod& b) {
    const Key& x = keys[a.metadata.uid];
    const Key& y = keys[b.metadata.uid];
    if (x.no_stats != y.no_stats) return x.no_stats;  // pods without stats first, as upstream
    if (x.exceeds != y.exceeds) return x.exceeds;
    if (x.priority != y.priority) return x.priority < y.priority;
    return x.over > y.over;
  });
  return pods;
}

Manager::Manager(ManagerOptions options, const Clock& clock)
    : options_(std::move(options)), clock_(clock) {
  if (options_.kernel_memcg_notification) {
    for (size_t i = 0; i < options_.thresholds.size(); ++i) {
      const Threshold& t = options_.thresholds[i];
      if (!IsMemorySignal(t.signal)) continue;
      if (options_.memory_cgroup_root.empty()) {
        KLOG_INFO("Eviction manager: failed to create memory threshold notifier", "err",
                  "memory cgroup mount point not found");
        continue;
      }
      MemoryNotifier n;
      n.threshold = i;
      n.cgroup_path = options_.memory_cgroup_root;
      if (t.signal == kSignalAllocatableMemoryAvailable) n.cgroup_path += options_.pods_cgroup;
      n.description = NotifierDescription(t);
      KLOG_INFO("Eviction manager: created memoryThresholdNotifier", "notifier", n.description);
      notifiers_.push_back(std::move(n));
    }
  }
}

Manager::~Manager() { Stop(); }

void Manager::Start() {
  if (options_.thresholds.empty()) {
    KLOG_INFO("Eviction manager: no eviction thresholds, not monitoring");
    return;
  }
  KLOG_INFO("Eviction manager: starting control loop");
  // As upstream: a pass at once (which also arms the memcg notifiers), then one every interval
  // or as soon as a notifier fires.
  thread_ = std::thread([this] {
    for (;;) {
      std::optional<api::Pod> evicted = Synchronize();
      absl::MutexLock lock(&mu_);
      if (evicted) {
        // Upstream waits for the evicted pod's clean-up (up to 30 s) before the next pass, so
        // its freed resources are seen before another pod is chosen.
        auto stopped = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_; };
        mu_.AwaitWithTimeout(absl::Condition(&stopped), absl::Seconds(5));
      }
      auto woken = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_ || crossed_; };
      mu_.AwaitWithTimeout(absl::Condition(&woken), options_.monitoring_interval);
      if (stopping_) return;
      crossed_ = false;
    }
  });
}

void Manager::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  notifiers_.clear();
}

void Manager::UpdateNotifiers(const stats::Summary& summary, absl::Time now) {
  // As upstream (notifierRefreshInterval): re-arming on every pass would churn the kernel
  // registrations when passes come quickly.
  if (notifiers_.empty() || now - notifiers_updated_ <= absl::Seconds(10)) return;
  notifiers_updated_ = now;
  for (MemoryNotifier& n : notifiers_) {
    const Threshold& t = options_.thresholds[n.threshold];
    std::optional<stats::MemoryStats> mem = summary.node.memory;
    if (t.signal == kSignalAllocatableMemoryAvailable) {
      mem.reset();
      for (const stats::ContainerStats& c : summary.node.system_containers) {
        if (c.name == "pods") mem = c.memory;
      }
    }
    // Missing figures: MemcgThreshold says the summary was incomplete.
    absl::StatusOr<int64_t> value = MemcgThreshold(t, mem.value_or(stats::MemoryStats{}));
    if (!value.ok()) {
      KLOG_INFO("Eviction manager: failed to update notifier", "notifier", n.description, "err",
                value.status());
      continue;
    }
    KLOG_V(3, "Eviction manager: setting notifier to capacity", "notifier", n.description,
           "capacity", *value);
    n.active.reset();
    auto on_crossed = [this,
                       message = absl::StrCat("eviction manager: ", n.description, " crossed")] {
      KLOG_INFO(message);
      absl::MutexLock lock(&mu_);
      crossed_ = true;
    };
    const CgroupNotifierFactory& factory =
        options_.notifier_factory ? options_.notifier_factory : NewCgroupNotifier;
    absl::StatusOr<std::unique_ptr<CgroupNotifier>> created =
        factory(n.cgroup_path, "memory.usage_in_bytes", *value, std::move(on_crossed));
    if (!created.ok()) {
      KLOG_INFO("Eviction manager: failed to update notifier", "notifier", n.description, "err",
                created.status());
      continue;
    }
    n.active = *std::move(created);
  }
}

Pressure Manager::GetPressure() const {
  absl::MutexLock lock(&mu_);
  Pressure p;
  p.memory = conditions_.count("MemoryPressure") > 0;
  p.disk = conditions_.count("DiskPressure") > 0;
  p.pid = conditions_.count("PIDPressure") > 0;
  return p;
}

container::AdmitDecision Manager::Admit(const api::Pod& pod, const std::vector<api::PodPtr>&) {
  std::set<std::string> conditions;
  {
    absl::MutexLock lock(&mu_);
    conditions = conditions_;
  }
  if (conditions.empty() || api::IsCriticalPod(pod)) return {};
  if (conditions.size() == 1 && conditions.count("MemoryPressure") > 0) {
    if (api::ComputePodQOS(pod) != api::QOSClass::kBestEffort) return {};
    if (ToleratesMemoryPressure(pod)) return {};
  }
  // Upstream prints the condition list in its fixed order.
  std::vector<std::string> ordered;
  for (const char* c : {"MemoryPressure", "DiskPressure", "PIDPressure"}) {
    if (conditions.count(c) > 0) ordered.push_back(c);
  }
  KLOG_INFO("Failed to admit pod to node", "pod", api::PodKey(pod), "nodeCondition",
            absl::StrJoin(ordered, ","));
  return {false, "Evicted",
          absl::StrCat("The node had condition: [", absl::StrJoin(ordered, " "), "]. ")};
}

std::optional<api::Pod> Manager::Synchronize() {
  if (!options_.summary) return std::nullopt;
  // The signals are node-level: with node_summary, the pods are only read when one is met.
  const bool node_only = static_cast<bool>(options_.node_summary);
  absl::StatusOr<stats::Summary> summary = node_only ? options_.node_summary() : options_.summary();
  if (!summary.ok()) {
    KLOG_ERROR(summary.status(), "Eviction manager: failed to get summary stats");
    return std::nullopt;
  }
  Observations obs = Observe(*summary);
  const absl::Time now = clock_.Now();
  UpdateNotifiers(*summary, now);

  // Thresholds met now (minimum reclaim applies to those met last pass), their conditions, and
  // those past their grace period.
  std::vector<size_t> actionable;
  {
    absl::MutexLock lock(&mu_);
    std::set<size_t> met;
    for (size_t i = 0; i < options_.thresholds.size(); ++i) {
      const Threshold& t = options_.thresholds[i];
      auto o = obs.find(t.signal);
      if (o == obs.end()) continue;
      int64_t value = t.Value(o->second.capacity);
      if (met_last_pass_.count(i) > 0) value += t.MinReclaim(o->second.capacity);
      if (o->second.available < value) met.insert(i);
    }
    for (auto it = first_observed_.begin(); it != first_observed_.end();) {
      it = met.count(it->first) > 0 ? std::next(it) : first_observed_.erase(it);
    }
    for (size_t i : met) {
      first_observed_.try_emplace(i, now);
      condition_last_observed_[ConditionOf(options_.thresholds[i].signal)] = now;
      if (now - first_observed_[i] >= options_.thresholds[i].grace_period) actionable.push_back(i);
    }
    met_last_pass_ = met;
    std::set<std::string> conditions;
    for (const auto& [c, last] : condition_last_observed_) {
      if (now - last < options_.pressure_transition_period || now == last) conditions.insert(c);
    }
    if (conditions != conditions_) {
      KLOG_INFO("Eviction manager: node conditions changed", "conditions",
                absl::StrJoin(conditions, ","));
    }
    conditions_ = conditions;
  }
  if (actionable.empty()) return std::nullopt;

  // Memory first, then the others in configuration order (upstream byEvictionPriority).
  std::stable_sort(actionable.begin(), actionable.end(), [&](size_t a, size_t b) {
    return IsMemorySignal(options_.thresholds[a].signal) &&
           !IsMemorySignal(options_.thresholds[b].signal);
  });
  const Threshold& t = options_.thresholds[actionable.front()];
  const Observation observed = obs[t.signal];
  KLOG_INFO("Eviction manager: attempting to reclaim", "resourceName", ResourceOf(t.signal));

  if (IsDiskSignal(t.signal)) {
    if (options_.delete_dead_containers) options_.delete_dead_containers();
    if (options_.delete_unused_images) options_.delete_unused_images();
    absl::StatusOr<stats::Summary> again = node_only ? options_.node_summary() : options_.summary();
    if (again.ok()) {
      Observations after = Observe(*again);
      auto o = after.find(t.signal);
      if (o != after.end() &&
          o->second.available >= t.Value(o->second.capacity) + t.MinReclaim(o->second.capacity)) {
        KLOG_INFO("Eviction manager: able to reduce resource pressure without evicting pods.",
                  "resourceName", ResourceOf(t.signal));
        return std::nullopt;
      }
      if (!node_only) summary = std::move(again);
    }
  }
  if (node_only) {
    // The ranking needs each pod's usage.
    absl::StatusOr<stats::Summary> full = options_.summary();
    if (!full.ok()) {
      KLOG_ERROR(full.status(), "Eviction manager: failed to get summary stats");
      return std::nullopt;
    }
    summary = std::move(full);
  }

  std::vector<api::Pod> pods =
      options_.active_pods ? options_.active_pods() : std::vector<api::Pod>{};
  if (pods.empty()) {
    KLOG_ERROR(absl::NotFoundError("no pods"),
               "Eviction manager: eviction thresholds have been met, "
               "but no pods are active to evict");
    return std::nullopt;
  }
  pods = RankForEviction(t.signal, std::move(pods), *summary);
  std::vector<std::string> ranked;
  for (const api::Pod& p : pods) ranked.push_back(api::PodKey(p));
  KLOG_INFO("Eviction manager: pods ranked for eviction", "pods", absl::StrJoin(ranked, ","));

  const std::string resource = ResourceOf(t.signal);
  for (const api::Pod& p : pods) {
    if (api::IsCriticalPod(p)) continue;
    // upstream getEvictionMessage.
    std::string message =
        absl::StrCat("The node was low on resource: ", resource, ". Threshold quantity: ",
                     t.quantity ? t.String() : Amount(t.signal, t.Value(observed.capacity)),
                     ", available: ", Amount(t.signal, observed.available), ". ");
    if (IsMemorySignal(t.signal)) {
      const stats::PodStats* ps = FindPodStats(*summary, p);
      for (const api::Container& c : p.spec.containers) {
        int64_t usage = 0;
        if (ps != nullptr) {
          for (const stats::ContainerStats& cs : ps->containers) {
            if (cs.name == c.name && cs.memory && cs.memory->working_set_bytes) {
              usage = static_cast<int64_t>(*cs.memory->working_set_bytes);
            }
          }
        }
        int64_t request = 0;
        std::string request_text = "0";
        if (auto r = c.resources.requests.find(api::kResourceMemory);
            r != c.resources.requests.end()) {
          request = r->second.Value();
          request_text = r->second.String();
        }
        if (usage > request) {
          absl::StrAppend(&message, "Container ", c.name, " was using ", Bytes(usage),
                          ", request is ", request_text, ", has larger consumption of ", resource,
                          ". ");
        }
      }
    }
    int64_t grace = 1;  // upstream immediateEvictionGracePeriodSeconds
    if (!t.hard()) {
      grace = p.spec.termination_grace_period_seconds.value_or(30);
      if (options_.max_pod_grace_period_seconds > 0) {
        grace = std::min<int64_t>(grace, options_.max_pod_grace_period_seconds);
      }
    }
    if (options_.evict && options_.evict(p, message, grace)) return p;
  }
  KLOG_INFO("Eviction manager: unable to evict any pods from the node");
  return std::nullopt;
}

}  // namespace kubelet::eviction
