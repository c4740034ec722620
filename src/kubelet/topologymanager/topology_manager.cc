#include "kubelet/topologymanager/topology_manager.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/static_pod.h"
#include "common/log.h"
#include "metrics/metrics.h"

namespace kubelet::topologymanager {
namespace {

// The pod's init containers, then its app containers (upstream's append(InitContainers,
// Containers...)).
std::vector<const api::Container*> AdmissionOrder(const api::Pod& pod) {
  std::vector<const api::Container*> out;
  out.reserve(pod.spec.init_containers.size() + pod.spec.containers.size());
  for (const api::Container& c : pod.spec.init_containers) out.push_back(&c);
  for (const api::Container& c : pod.spec.containers) out.push_back(&c);
  return out;
}

container::AdmitDecision TopologyAffinityRejection() {
  return container::AdmitDecision{false, kErrorTopologyAffinity, kTopologyAffinityErrorMessage};
}

// The providers' answers, rendered for the verbosity-4 "TopologyHints" line.
std::string HintsString(const TopologyHints& hints) {
  std::string out = "{";
  bool first_resource = true;
  for (const auto& [resource, list] : hints) {
    absl::StrAppend(&out, first_resource ? "" : ",", "\"", resource, "\":");
    first_resource = false;
    if (!list.has_value()) {
      out += "null";
      continue;
    }
    out += "[";
    for (size_t i = 0; i < list->size(); ++i) {
      absl::StrAppend(&out, i == 0 ? "" : ",", HintString((*list)[i]));
    }
    out += "]";
  }
  return out + "}";
}

void CountAdmissionError() {
  metrics::Kubelet().topology_manager_admission_errors.Add({}).Increment();
}

}  // namespace

absl::StatusOr<std::unique_ptr<TopologyManager>> TopologyManager::Create(
    const TopologyManagerOptions& options, NUMAInfo numa) {
  if (options.policy == kPolicyNone) {
    KLOG_INFO("Creating topology manager with none policy");
    return std::unique_ptr<TopologyManager>(new TopologyManager("none", std::nullopt));
  }
  KLOG_INFO("Creating topology manager with policy per scope", "topologyPolicyName", options.policy,
            "topologyScopeName", options.scope, "topologyPolicyOptions",
            absl::StrCat("{\"PreferClosestNUMA\":",
                         options.policy_options.prefer_closest_numa ? "true" : "false", "}"));
  if (static_cast<int>(numa.nodes.size()) > kMaxAllowableNUMANodes) {
    return absl::FailedPreconditionError(absl::StrCat("unsupported on machines with more than ",
                                                      kMaxAllowableNUMANodes, " NUMA Nodes"));
  }
  if (absl::Status s = numa.Validate(options.policy_options.prefer_closest_numa); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot discover NUMA topology: ", s.message()));
  }
  absl::StatusOr<Policy> policy =
      Policy::New(options.policy, std::move(numa), options.policy_options);
  if (!policy.ok()) return policy.status();
  if (options.scope != kScopeContainer && options.scope != kScopePod) {
    return absl::InvalidArgumentError(absl::StrCat("unknown scope: ", log::Quote(options.scope)));
  }
  return std::unique_ptr<TopologyManager>(new TopologyManager(options.scope, *std::move(policy)));
}

TopologyManager::TopologyManager(std::string scope_name, std::optional<Policy> policy)
    : scope_name_(std::move(scope_name)),
      policy_name_(policy.has_value() ? policy->name() : std::string(kPolicyNone)),
      policy_(std::move(policy)) {}

void TopologyManager::AddHintProvider(HintProvider* provider) {
  absl::MutexLock lock(&mu_);
  providers_.push_back(provider);
}

container::AdmitDecision TopologyManager::Admit(const api::Pod& pod,
                                                const std::vector<api::PodPtr>& admitted) {
  (void)admitted;
  KLOG_INFO("Topology Admit Handler", "podUID", pod.metadata.uid, "podNamespace",
            pod.metadata.namespace_, "podName", pod.metadata.name);
  metrics::Kubelet().topology_manager_admission_requests.Add({}).Increment();
  const absl::Time start = absl::Now();

  std::vector<HintProvider*> providers;
  {
    absl::MutexLock lock(&mu_);
    providers = providers_;
  }
  container::AdmitDecision decision;
  if (!policy_.has_value()) {
    decision = AdmitNone(pod, providers);
  } else if (scope_name_ == kScopePod) {
    decision = AdmitPodScope(pod, providers);
  } else {
    decision = AdmitContainerScope(pod, providers);
  }
  if (!decision.admit) DropPod(pod.metadata.uid);

  metrics::ObserveTopologyManagerAdmission(
      static_cast<double>(absl::ToInt64Milliseconds(absl::Now() - start)));
  return decision;
}

container::AdmitDecision TopologyManager::AdmitNone(const api::Pod& pod,
                                                    const std::vector<HintProvider*>& providers) {
  for (const api::Container* c : AdmissionOrder(pod)) {
    if (auto rejected = Allocate(pod, *c, providers)) return *rejected;
  }
  return {};
}

container::AdmitDecision TopologyManager::AdmitContainerScope(
    const api::Pod& pod, const std::vector<HintProvider*>& providers) {
  const std::string key = api::PodKey(pod);
  for (const api::Container* c : AdmissionOrder(pod)) {
    std::vector<TopologyHints> providers_hints;
    providers_hints.reserve(providers.size());
    for (HintProvider* p : providers) {
      providers_hints.push_back(p->GetTopologyHints(pod, *c));
      KLOG_V(4, "TopologyHints", "hints", HintsString(providers_hints.back()), "pod", key,
             "containerName", c->name);
    }
    const Policy::Result result = policy_->Merge(providers_hints);
    KLOG_INFO("Best TopologyHint", "bestHint", HintString(result.hint), "pod", key, "containerName",
              c->name);
    if (!result.admit) {
      CountAdmissionError();
      return TopologyAffinityRejection();
    }
    KLOG_INFO("Topology Affinity", "bestHint", HintString(result.hint), "pod", key, "containerName",
              c->name);
    SetAffinity(pod.metadata.uid, c->name, result.hint);
    if (auto rejected = Allocate(pod, *c, providers)) {
      CountAdmissionError();
      return *rejected;
    }
  }
  return {};
}

container::AdmitDecision TopologyManager::AdmitPodScope(
    const api::Pod& pod, const std::vector<HintProvider*>& providers) {
  const std::string key = api::PodKey(pod);
  std::vector<TopologyHints> providers_hints;
  providers_hints.reserve(providers.size());
  for (HintProvider* p : providers) {
    providers_hints.push_back(p->GetPodTopologyHints(pod));
    KLOG_V(4, "TopologyHints", "hints", HintsString(providers_hints.back()), "pod", key);
  }
  const Policy::Result result = policy_->Merge(providers_hints);
  KLOG_INFO("Best TopologyHint", "bestHint", HintString(result.hint), "pod", key);
  if (!result.admit) {
    CountAdmissionError();
    return TopologyAffinityRejection();
  }
  for (const api::Container* c : AdmissionOrder(pod)) {
    KLOG_INFO("Topology Affinity", "bestHint", HintString(result.hint), "pod", key, "containerName",
              c->name);
    SetAffinity(pod.metadata.uid, c->name, result.hint);
    if (auto rejected = Allocate(pod, *c, providers)) {
      CountAdmissionError();
      return *rejected;
    }
  }
  return {};
}

std::optional<container::AdmitDecision> TopologyManager::Allocate(
    const api::Pod& pod, const api::Container& c, const std::vector<HintProvider*>& providers) {
  for (HintProvider* p : providers) {
    absl::Status s = p->Allocate(pod, c);
    if (s.ok()) continue;
    std::string reason = AdmissionErrorReason(s);
    if (!reason.empty()) {
      return container::AdmitDecision{false, std::move(reason), std::string(s.message())};
    }
    return container::AdmitDecision{
        false, kErrorReasonUnexpected,
        absl::StrCat("Allocate failed due to ", s.message(), ", which is unexpected")};
  }
  return std::nullopt;
}

void TopologyManager::SetAffinity(const std::string& pod_uid, const std::string& container,
                                  const TopologyHint& hint) {
  absl::MutexLock lock(&mu_);
  affinities_[pod_uid][container] = hint;
}

void TopologyManager::DropPod(const std::string& pod_uid) {
  absl::MutexLock lock(&mu_);
  affinities_.erase(pod_uid);
}

absl::Status TopologyManager::CleanupTerminatedPod(const api::Pod& pod) {
  DropPod(pod.metadata.uid);
  std::vector<HintProvider*> providers;
  {
    absl::MutexLock lock(&mu_);
    providers = providers_;
  }
  for (HintProvider* p : providers) p->RemovePod(pod.metadata.uid);
  return absl::OkStatus();
}

void TopologyManager::Housekeeping(const std::set<std::string>& active) {
  absl::MutexLock lock(&mu_);
  for (auto it = affinities_.begin(); it != affinities_.end();) {
    if (active.count(it->first) == 0) {
      KLOG_V(2, "Removing topology affinities of a pod that is gone", "podUID", it->first);
      it = affinities_.erase(it);
    } else {
      ++it;
    }
  }
}

TopologyHint TopologyManager::GetAffinity(const std::string& pod_uid,
                                          const std::string& container_name) const {
  absl::MutexLock lock(&mu_);
  auto pod = affinities_.find(pod_uid);
  if (pod != affinities_.end()) {
    auto c = pod->second.find(container_name);
    if (c != pod->second.end()) return c->second;
  }
  return TopologyHint{std::nullopt, true};
}

std::vector<std::string> TopologyManager::PodsWithAffinity() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  out.reserve(affinities_.size());
  for (const auto& [uid, containers] : affinities_) out.push_back(uid);
  return out;
}

absl::StatusOr<std::unique_ptr<TopologyManager>> NewTopologyManager(
    const TopologyManagerOptions& options, std::vector<int> numa_nodes,
    const std::string& sysfs_root) {
  NUMAInfo numa;
  if (options.policy != kPolicyNone) {
    absl::StatusOr<NUMAInfo> discovered =
        NewNUMAInfo(std::move(numa_nodes), options.policy_options.prefer_closest_numa, sysfs_root);
    if (!discovered.ok()) return discovered.status();
    numa = *std::move(discovered);
  }
  return TopologyManager::Create(options, std::move(numa));
}

}  // namespace kubelet::topologymanager
