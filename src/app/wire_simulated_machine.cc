// A simulated node's machine (hollow nodes): what the container manager sets from the real
// machine on a real node, from WiringContext::simulated instead: the Kubelet's allocatable (pod
// admission) and the runtime manager's view of it. Nothing is read from the host.
#include "api/quantity.h"
#include "app/wiring.h"
#include "kubelet/kubelet.h"
#include "kubelet/kuberuntime/options.h"
#include "kubelet/nodestatus/node_status.h"

namespace kubelet::app {

absl::Status WireSimulatedMachine(WiringStage stage, WiringContext& ctx) {
  if (ctx.simulated == nullptr || stage != WiringStage::kBeforeRuntimeManager) {
    return absl::OkStatus();
  }
  const api::ResourceList alloc = ctx.simulated->allocatable;
  auto get = [&](const char* name) -> const api::Quantity* {
    auto it = alloc.find(name);
    return it == alloc.end() ? nullptr : &it->second;
  };
  NodeAllocatable& a = ctx.kubelet_options->allocatable;
  if (const api::Quantity* q = get(api::kResourceCPU)) a.milli_cpu = q->MilliValue();
  if (const api::Quantity* q = get(api::kResourceMemory)) a.memory_bytes = q->Value();
  if (const api::Quantity* q = get("pods")) a.pods = q->Value();
  if (const api::Quantity* q = get(api::kResourceEphemeralStorage)) {
    a.ephemeral_storage_bytes = q->Value();
  }
  if (auto it = ctx.simulated->capacity.find(api::kResourceMemory);
      it != ctx.simulated->capacity.end()) {
    ctx.runtime_options->memory_capacity_bytes = it->second.Value();
  }
  ctx.runtime_options->node_allocatable = [alloc]() { return alloc; };
  return absl::OkStatus();
}

}  // namespace kubelet::app
