#include <memory>

#include "common/log.h"
#include "kubelet/memorymanager/policy.h"

namespace kubelet::memorymanager {
namespace {

class NonePolicy final : public Policy {
 public:
  std::string_view Name() const override { return kPolicyNone; }
  absl::Status Start(MemoryState*) override {
    KLOG_INFO("Start");
    return absl::OkStatus();
  }
  absl::Status Allocate(MemoryState*, const api::Pod&, const api::Container&) override {
    return absl::OkStatus();
  }
  void RemoveContainer(MemoryState*, const std::string&, const std::string&) override {}
  topologymanager::TopologyHints GetTopologyHints(const MemoryState&, const api::Pod&,
                                                  const api::Container&) override {
    return {};
  }
  topologymanager::TopologyHints GetPodTopologyHints(const MemoryState&, const api::Pod&) override {
    return {};
  }
  std::vector<Block> GetAllocatableMemory(const MemoryState&) const override { return {}; }
};

}  // namespace

std::unique_ptr<Policy> NewNonePolicy() { return std::make_unique<NonePolicy>(); }

const std::vector<Block>* MemoryState::GetBlocks(const std::string& pod_uid,
                                                 const std::string& container_name) const {
  auto pod = assignments.find(pod_uid);
  if (pod == assignments.end()) return nullptr;
  auto c = pod->second.find(container_name);
  return c == pod->second.end() ? nullptr : &c->second;
}

void MemoryState::SetBlocks(const std::string& pod_uid, const std::string& container_name,
                            std::vector<Block> blocks) {
  assignments[pod_uid][container_name] = std::move(blocks);
}

void MemoryState::Delete(const std::string& pod_uid, const std::string& container_name) {
  auto pod = assignments.find(pod_uid);
  if (pod == assignments.end()) return;
  pod->second.erase(container_name);
  if (pod->second.empty()) assignments.erase(pod);
}

}  // namespace kubelet::memorymanager
