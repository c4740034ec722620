#include "kubelet/cm/container_manager.h"

#include <unistd.h>

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::cm {
namespace {

int64_t MilliOf(const api::ResourceList& l, const char* name) {
  auto it = l.find(name);
  return it == l.end() ? 0 : it->second.MilliValue();
}

}  // namespace

ContainerManager::ContainerManager(NodeConfig config, MachineInfo machine,
                                   api::ResourceList capacity,
                                   std::unique_ptr<CgroupManager> cgroups,
                                   std::unique_ptr<CgroupManager> cgroupfs)
    : config_(std::move(config)),
      machine_(std::move(machine)),
      capacity_(std::move(capacity)),
      root_(ParseCgroupfsToCgroupName(config_.cgroup_root)),
      cgroups_(std::move(cgroups)),
      cgroupfs_(std::move(cgroupfs)) {
  reservation_ = NodeAllocatableReservation(
      capacity_, config_.kube_reserved, config_.system_reserved, config_.hard_eviction_thresholds);
  allocatable_ = cm::Allocatable(capacity_, reservation_);
}

CgroupName ContainerManager::NodeAllocatableCgroupName() const {
  return NewCgroupName(root_, {kNodeAllocatableCgroupName});
}

CgroupName ContainerManager::QOSCgroupName(api::QOSClass qos) const {
  switch (qos) {
    case api::QOSClass::kBurstable:
      return NewCgroupName(NodeAllocatableCgroupName(), {kBurstableCgroupName});
    case api::QOSClass::kBestEffort:
      return NewCgroupName(NodeAllocatableCgroupName(), {kBestEffortCgroupName});
    case api::QOSClass::kGuaranteed:
      break;
  }
  return NodeAllocatableCgroupName();
}

std::optional<CgroupName> ContainerManager::PodCgroupName(const api::Pod& pod) const {
  if (!config_.cgroups_per_qos) return std::nullopt;
  return NewCgroupName(QOSCgroupName(api::GetPodQOS(pod)),
                       {kPodCgroupNamePrefix + pod.metadata.uid});
}

std::string ContainerManager::PodCgroupParent(const api::Pod& pod) const {
  std::optional<CgroupName> name = PodCgroupName(pod);
  return name ? cgroups_->Name(*name) : std::string();
}

void ContainerManager::FillHugePages(std::map<int64_t, int64_t>* limits, int64_t value) const {
  for (const HugePagePool& p : machine_.hugepages) limits->emplace(p.page_size_bytes, value);
}

ResourceConfig ContainerManager::NodeAllocatableConfig() const {
  // The kubepods cgroup is limited to what is left after the reservations, not counting the
  // eviction thresholds (evictions keep those free), as upstream's
  // getNodeAllocatableInternalAbsolute does; without enforcement, to capacity.
  api::ResourceList internal = capacity_;
  if (machine_.pid_max > 0) internal[kResourcePID] = api::Quantity::FromValue(machine_.pid_max);
  api::ResourceList limits = internal;
  if (config_.enforce_node_allocatable.count(kNodeAllocatableEnforcementKey)) {
    limits = AllocatableAbsolute(internal, config_.kube_reserved, config_.system_reserved);
  }
  ResourceConfig rc;
  for (const auto& [name, q] : limits) {
    if (name == api::kResourceCPU) {
      rc.cpu_shares = MilliCPUToShares(q.MilliValue());
    } else if (name == api::kResourceMemory) {
      rc.memory = q.Value();
    } else if (name == kResourcePID) {
      rc.pids_limit = q.Value();
    } else if (auto size = HugePageSizeFromResourceName(name)) {
      rc.hugepage_limits[*size] = q.Value();
    }
  }
  return rc;
}

absl::Status ContainerManager::EnforceNodeAllocatable() {
  CgroupConfig cc{NodeAllocatableCgroupName(), NodeAllocatableConfig()};
  absl::Status st = cgroups_->Update(cc);
  if (!st.ok()) {
    return absl::Status(st.code(), absl::StrCat("Failed to update Node Allocatable Limits \"",
                                                cgroups_->Name(cc.name), "\": ", st.message()));
  }
  KLOG_V(2, "Updated Node Allocatable limit across pods", "cgroup", cgroups_->Name(cc.name));
  RecordNodeEvent(events::kNormal, events::kSuccessfulNodeAllocatableEnforcement,
                  "Updated Node Allocatable limit across pods");
  return absl::OkStatus();
}

void ContainerManager::RecordNodeEvent(const char* type, const char* reason,
                                       const std::string& message) const {
  if (config_.recorder == nullptr || config_.node_name.empty()) return;
  config_.recorder->Record(events::NodeRef(config_.node_name), type, reason, message);
}

absl::Status ContainerManager::EnforceReservedCgroups() {
  struct Reserved {
    const char* key;
    const char* what;
    const std::string& cgroup;
    const api::ResourceList& resources;
  };
  const Reserved reserved[] = {{kSystemReservedEnforcementKey, "System Reserved",
                                config_.system_reserved_cgroup, config_.system_reserved},
                               {kKubeReservedEnforcementKey, "Kube Reserved",
                                config_.kube_reserved_cgroup, config_.kube_reserved}};
  for (const Reserved& r : reserved) {
    if (!config_.enforce_node_allocatable.count(r.key)) continue;
    if (r.cgroup.empty()) {
      // Validation requires the name; never limit the root cgroup.
      return absl::InvalidArgumentError(absl::StrCat("Failed to enforce ", r.what,
                                                     " Cgroup Limits: no cgroup configured for \"",
                                                     r.key, "\""));
    }
    // The configured name is in the driver's syntax.
    const CgroupName name = cgroups_->Driver() == kCgroupDriverSystemd
                                ? ParseSystemdToCgroupName(r.cgroup)
                                : ParseCgroupfsToCgroupName(r.cgroup);
    ResourceConfig rc;
    for (const auto& [resource, q] : r.resources) {
      if (resource == api::kResourceCPU) {
        rc.cpu_shares = MilliCPUToShares(q.MilliValue());
      } else if (resource == api::kResourceMemory) {
        rc.memory = q.Value();
      } else if (resource == kResourcePID) {
        rc.pids_limit = q.Value();
      } else if (auto size = HugePageSizeFromResourceName(resource)) {
        rc.hugepage_limits[*size] = q.Value();
      }
    }
    KLOG_V(2, "Enforcing reserved limits on cgroup", "cgroupName", r.cgroup, "cpuShares",
           rc.cpu_shares.value_or(0), "memory", rc.memory.value_or(0), "pidsLimit",
           rc.pids_limit.value_or(0));
    absl::Status st = cgroups_->Validate(name);
    if (st.ok()) st = cgroups_->Update({name, rc});
    if (!st.ok()) {
      st =
          absl::Status(st.code(), absl::StrCat("Failed to enforce ", r.what, " Cgroup Limits on \"",
                                               r.cgroup, "\": ", st.message()));
      RecordNodeEvent(events::kWarning, events::kFailedNodeAllocatableEnforcement,
                      std::string(st.message()));
      return st;
    }
    KLOG_INFO("Updated limits on reserved cgroup", "enforcement", r.key, "cgroup", r.cgroup);
    RecordNodeEvent(
        events::kNormal, events::kSuccessfulNodeAllocatableEnforcement,
        absl::StrCat("Updated limits on ", absl::AsciiStrToLower(r.what), " cgroup ", r.cgroup));
  }
  return absl::OkStatus();
}

absl::Status ContainerManager::Start() {
  KLOG_INFO(
      "Creating Container Manager object based on Node Config", "nodeConfig",
      absl::StrCat("{RuntimeCgroupsName:", config_.runtime_cgroups, " SystemCgroupsName:",
                   config_.system_cgroups, " KubeletCgroupsName:", config_.kubelet_cgroups,
                   " CgroupsPerQOS:", config_.cgroups_per_qos ? "true" : "false",
                   " CgroupRoot:", config_.cgroup_root, " CgroupDriver:", config_.cgroup_driver,
                   " EnforceCPULimits:", config_.cpu_cfs_quota ? "true" : "false",
                   " CPUCFSQuotaPeriod:", config_.cpu_cfs_quota_period_us, "us",
                   " PodPidsLimit:", config_.pod_pids_limit, "}"));
  if (config_.cgroups_per_qos) {
    if (absl::Status st = cgroups_->Validate(root_); !st.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("invalid configuration: ", st.message()));
    }
    KLOG_INFO("Container manager verified user specified cgroup-root exists", "cgroupRoot",
              config_.cgroup_root);
    // kubepods starts at capacity (default cpu shares would starve pods), then gets the
    // allocatable limits; a memory limit below current usage is retried from Housekeeping.
    CgroupConfig top{NodeAllocatableCgroupName(), {}};
    if (!cgroups_->Exists(top.name)) {
      top.resources.cpu_shares = MilliCPUToShares(MilliOf(capacity_, api::kResourceCPU));
      if (absl::Status st = cgroups_->Create(top); !st.ok()) {
        return absl::InternalError(absl::StrCat("failed to create top level cgroup ",
                                                cgroups_->Name(top.name), ": ", st.message()));
      }
    }
    if (absl::Status st = EnforceNodeAllocatable(); !st.ok()) {
      KLOG_ERROR(st, "Failed to enforce node allocatable, will retry");
      RecordNodeEvent(events::kWarning, events::kFailedNodeAllocatableEnforcement,
                      std::string(st.message()));
      absl::MutexLock lock(&mu_);
      node_allocatable_pending_ = true;
    }
    for (api::QOSClass qos : {api::QOSClass::kBurstable, api::QOSClass::kBestEffort}) {
      CgroupConfig cc{QOSCgroupName(qos), {}};
      if (qos == api::QOSClass::kBestEffort) cc.resources.cpu_shares = kMinShares;
      FillHugePages(&cc.resources.hugepage_limits, std::numeric_limits<int64_t>::max());
      absl::Status st = cgroups_->Exists(cc.name) ? cgroups_->Update(cc) : cgroups_->Create(cc);
      if (!st.ok()) {
        return absl::InternalError(absl::StrCat("failed to create top level ",
                                                AV(api::QOSClassName(qos)),
                                                " QOS cgroup : ", st.message()));
      }
    }
    if (absl::Status st = UpdateQOSCgroups(); !st.ok()) {
      KLOG_ERROR(st, "Failed to update QoS cgroups");
    }
  }
  // As upstream, before the system and kubelet cgroups are set up: a reserved cgroup must
  // exist already.
  if (absl::Status st = EnforceReservedCgroups(); !st.ok()) return st;
  SetupSystemCgroups();
  return absl::OkStatus();
}

void ContainerManager::SetupSystemCgroups() {
  CgroupManager& raw = cgroupfs_ ? *cgroupfs_ : *cgroups_;
  if (!config_.system_cgroups.empty()) {
    CgroupName name = ParseCgroupfsToCgroupName(config_.system_cgroups);
    absl::Status st = name.empty()
                          ? absl::InvalidArgumentError("system container cannot be root (\"/\")")
                      : raw.Exists(name) ? absl::OkStatus()
                                         : raw.Create({name, {}});
    if (!st.ok()) {
      KLOG_ERROR(st, "Failed to set up system container", "systemCgroups", config_.system_cgroups);
    } else {
      KLOG_INFO("System container set up", "systemCgroups", config_.system_cgroups);
    }
  }
  if (!config_.kubelet_cgroups.empty()) {
    CgroupName name = ParseCgroupfsToCgroupName(config_.kubelet_cgroups);
    absl::Status st = raw.Exists(name) ? absl::OkStatus() : raw.Create({name, {}});
    if (st.ok()) st = raw.AddProcess(name, static_cast<int>(::getpid()));
    if (!st.ok()) {
      KLOG_ERROR(st, "Failed to ensure the kubelet is in its cgroup", "kubeletCgroups",
                 config_.kubelet_cgroups);
    } else {
      KLOG_INFO("Moved the kubelet into its cgroup", "kubeletCgroups", config_.kubelet_cgroups);
    }
  }
  if (!config_.runtime_cgroups.empty()) {
    KLOG_INFO("Container runtime cgroups (reported only)", "runtimeCgroups",
              config_.runtime_cgroups);
  }
}

absl::Status ContainerManager::UpdateQOSCgroups() {
  if (!config_.cgroups_per_qos) return absl::OkStatus();
  absl::MutexLock qos_lock(&qos_mu_);
  int64_t burstable_milli = 0;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [uid, p] : pods_) {
      if (p.qos == api::QOSClass::kBurstable) burstable_milli += p.milli_cpu_request;
    }
  }
  CgroupConfig burstable{QOSCgroupName(api::QOSClass::kBurstable), {}};
  burstable.resources.cpu_shares = MilliCPUToShares(burstable_milli);
  CgroupConfig besteffort{QOSCgroupName(api::QOSClass::kBestEffort), {}};
  besteffort.resources.cpu_shares = kMinShares;
  absl::Status st = cgroups_->Update(burstable);
  absl::Status st2 = cgroups_->Update(besteffort);
  if (st.ok()) st = st2;
  if (st.ok()) KLOG_V(4, "Updated QoS cgroup configuration", "burstableMilliCPU", burstable_milli);
  return st;
}

absl::Status ContainerManager::PrepareForSync(const api::Pod& pod) {
  std::optional<CgroupName> name = PodCgroupName(pod);
  if (!name) return absl::OkStatus();
  TrackedPod tracked{api::GetPodQOS(pod), MilliOf(PodRequests(pod), api::kResourceCPU)};
  bool changed = false;
  {
    absl::MutexLock lock(&mu_);
    auto [it, inserted] = pods_.emplace(pod.metadata.uid, tracked);
    if (!inserted && !(it->second == tracked)) {
      it->second = tracked;
      inserted = true;
    }
    changed = inserted;
  }
  // The QoS cgroup's shares grow before the pod's cgroup appears, as upstream orders it.
  if (changed) {
    if (absl::Status st = UpdateQOSCgroups(); !st.ok()) {
      KLOG_ERROR(st, "Failed to update QoS cgroup configuration");
    }
  }
  CgroupConfig cc{
      *name, ResourceConfigForPod(pod, config_.cpu_cfs_quota, config_.cpu_cfs_quota_period_us)};
  if (config_.pod_pids_limit > 0) cc.resources.pids_limit = config_.pod_pids_limit;
  // Hugepage sizes the pod did not request are limited to 0.
  FillHugePages(&cc.resources.hugepage_limits, 0);
  if (!cgroups_->Exists(*name)) {
    if (absl::Status st = cgroups_->Create(cc); !st.ok()) {
      (config_.recorder != nullptr ? *config_.recorder : events::DiscardingRecorder())
          .Record(events::PodRef(pod), events::kWarning, events::kFailedToCreatePodContainer,
                  absl::StrCat("unable to ensure pod container exists: ", st.message()));
      return absl::InternalError(
          absl::StrCat("failed to ensure that the pod: ", pod.metadata.uid,
                       " cgroups exist and are correctly applied: ", st.message()));
    }
    KLOG_V(4, "Created pod cgroup", "pod", pod.metadata.namespace_ + "/" + pod.metadata.name,
           "cgroup", cgroups_->Name(*name));
    return absl::OkStatus();
  }
  // With in-place resize the pod cgroup's resources are the resize's to change.
  if (config_.in_place_pod_vertical_scaling) return absl::OkStatus();
  if (absl::Status st = cgroups_->Update(cc); !st.ok()) {
    KLOG_ERROR(st, "Failed to update pod cgroup", "pod",
               pod.metadata.namespace_ + "/" + pod.metadata.name, "cgroup", cgroups_->Name(*name));
  }
  return absl::OkStatus();
}

absl::StatusOr<ResourceConfig> ContainerManager::GetPodCgroupConfig(
    const api::Pod& pod, const std::string& resource) const {
  std::optional<CgroupName> name = PodCgroupName(pod);
  if (!name) return absl::FailedPreconditionError("pod cgroups are disabled (cgroupsPerQOS)");
  return cgroups_->GetResourceConfig(*name, resource);
}

absl::Status ContainerManager::SetPodCgroupConfig(const api::Pod& pod, const std::string& resource,
                                                  const ResourceConfig& config) {
  std::optional<CgroupName> name = PodCgroupName(pod);
  if (!name) return absl::FailedPreconditionError("pod cgroups are disabled (cgroupsPerQOS)");
  // Only the resource's own settings.
  CgroupConfig cc{*name, {}};
  if (resource == api::kResourceCPU) {
    cc.resources.cpu_shares = config.cpu_shares;
    cc.resources.cpu_quota = config.cpu_quota;
    cc.resources.cpu_period = config.cpu_period;
  } else if (resource == api::kResourceMemory) {
    if (!config.memory) return absl::InvalidArgumentError("no memory limit to set");
    cc.resources.memory = config.memory;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unsupported resource ", resource));
  }
  return cgroups_->Update(cc);
}

absl::StatusOr<int64_t> ContainerManager::GetPodCgroupMemoryUsage(const api::Pod& pod) const {
  std::optional<CgroupName> name = PodCgroupName(pod);
  if (!name) return absl::FailedPreconditionError("pod cgroups are disabled (cgroupsPerQOS)");
  return cgroups_->MemoryUsage(*name);
}

absl::Status ContainerManager::CleanupTerminatedPod(const api::Pod& pod) {
  std::optional<CgroupName> name = PodCgroupName(pod);
  if (!name) return absl::OkStatus();
  bool was_tracked = false;
  {
    absl::MutexLock lock(&mu_);
    was_tracked = pods_.erase(pod.metadata.uid) > 0;
  }
  if (was_tracked) {
    if (absl::Status st = UpdateQOSCgroups(); !st.ok()) {
      KLOG_ERROR(st, "Failed to update QoS cgroup configuration");
    }
  }
  if (absl::Status st = cgroups_->Destroy(*name); !st.ok()) {
    return absl::Status(st.code(), absl::StrCat("failed to remove pod cgroup ",
                                                cgroups_->Name(*name), ": ", st.message()));
  }
  KLOG_V(4, "Pod termination removed cgroups", "pod",
         pod.metadata.namespace_ + "/" + pod.metadata.name, "podUID", pod.metadata.uid);
  return absl::OkStatus();
}

std::map<std::string, CgroupName> ContainerManager::PodCgroups() const {
  std::map<std::string, CgroupName> out;
  if (!config_.cgroups_per_qos) return out;
  for (api::QOSClass qos :
       {api::QOSClass::kGuaranteed, api::QOSClass::kBurstable, api::QOSClass::kBestEffort}) {
    for (CgroupName& child : cgroups_->Children(QOSCgroupName(qos))) {
      if (child.empty() || !absl::StartsWith(child.back(), kPodCgroupNamePrefix)) continue;
      std::string uid = child.back().substr(sizeof(kPodCgroupNamePrefix) - 1);
      if (uid.empty()) continue;
      out.emplace(std::move(uid), std::move(child));
    }
  }
  return out;
}

void ContainerManager::Housekeeping(const std::set<std::string>& active) {
  if (!config_.cgroups_per_qos) return;
  bool retry_allocatable = false;
  bool changed = false;
  {
    absl::MutexLock lock(&mu_);
    retry_allocatable = node_allocatable_pending_;
    for (auto it = pods_.begin(); it != pods_.end();) {
      if (active.count(it->first)) {
        ++it;
      } else {
        it = pods_.erase(it);
        changed = true;
      }
    }
  }
  if (retry_allocatable && EnforceNodeAllocatable().ok()) {
    absl::MutexLock lock(&mu_);
    node_allocatable_pending_ = false;
  }
  for (const auto& [uid, name] : PodCgroups()) {
    if (active.count(uid)) continue;
    KLOG_V(3, "Orphaned pod found, removing pod cgroups", "podUID", uid);
    if (absl::Status st = cgroups_->Destroy(name); !st.ok()) {
      KLOG_V(2, "Failed to remove orphaned pod cgroup, will retry", "podUID", uid, "err", st);
    }
  }
  if (changed) {
    if (absl::Status st = UpdateQOSCgroups(); !st.ok()) {
      KLOG_ERROR(st, "Failed to update QoS cgroup configuration");
    }
  }
}

}  // namespace kubelet::cm
