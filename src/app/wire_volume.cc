// Volume manager wiring: builds volume::VolumeManager from --root-dir and the node's
// allocatable resources, hands the runtime manager its container_mounts hook, registers the
// manager as a pod lifecycle participant and, once the Kubelet runs, lets it see which pods are
// still desired. In API-server mode the configMap, secret and projected plugins read their
// objects and service account tokens, and claims their PVCs and PVs, from what
// WireClusterContent built
// (kubelet/clustercontent/api_content.h); standalone they fail with upstream's errors.
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "app/wiring.h"
#include "common/log.h"
#include "kubelet/kubelet.h"
#include "kubelet/kuberuntime/options.h"
#include "kubelet/volume/token_manager.h"
#include "kubelet/volume/volume_manager.h"

namespace kubelet::app {
namespace {

// MemTotal from /proc/meminfo in bytes; 0 when unreadable.
int64_t MemTotalBytes() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemTotal:", 0) != 0) continue;
    std::istringstream fields(line.substr(9));
    int64_t kb = 0;
    fields >> kb;
    return kb * 1024;
  }
  return 0;
}

}  // namespace

absl::Status WireVolumeManager(WiringStage stage, WiringContext& ctx) {
  switch (stage) {
    case WiringStage::kBeforeRuntimeManager: {
      volume::VolumeManagerOptions o;
      o.root_dir = ctx.settings->flags.root_directory;
      o.recorder = ctx.recorder;
      // Both option structs outlive the wiring context (app::Run owns them) and are no longer
      // written once start-up is over, which is when these are first called.
      const KubeletOptions* ko = ctx.kubelet_options;
      const kuberuntime::Options* ro = ctx.runtime_options;
      const int64_t mem_total = MemTotalBytes();
      o.node_allocatable_memory = [ko, mem_total]() -> int64_t {
        return ko->allocatable.memory_bytes > 0 ? ko->allocatable.memory_bytes : mem_total;
      };
      o.node_allocatable = [ko, ro, mem_total]() -> api::ResourceList {
        if (ro->node_allocatable) return ro->node_allocatable();
        api::ResourceList out;
        if (ko->allocatable.milli_cpu > 0) {
          out[api::kResourceCPU] = api::Quantity::FromMilli(ko->allocatable.milli_cpu);
        }
        const int64_t mem =
            ko->allocatable.memory_bytes > 0 ? ko->allocatable.memory_bytes : mem_total;
        if (mem > 0) {
          out[api::kResourceMemory] =
              api::Quantity::FromValue(mem, api::Quantity::Format::kBinarySI);
        }
        return out;
      };
      // A pod over an emptyDir sizeLimit is evicted (upstream's local storage eviction, which
      // sets no DisruptionTarget condition); the Kubelet exists from kAfterKubeletStart on and
      // is forgotten at shutdown.
      o.on_limit_exceeded = [late = ctx.late_kubelet](const std::string& uid,
                                                      const std::string& message) {
        Kubelet* k = late->load();
        if (k == nullptr || !k->EvictPod(uid, message, std::nullopt, false)) {
          KLOG_WARNING("Pod exceeds an emptyDir size limit and was not evicted", "podUID", uid,
                       "message", message);
        }
      };

      // Built by WireClusterContent (null standalone); the hook below keeps them alive.
      std::shared_ptr<volume::ObjectSource> objects = ctx.components.object_source;
      std::shared_ptr<volume::TokenManager> tokens = ctx.components.token_manager;
      std::shared_ptr<volume::ClaimSource> claims = ctx.components.claim_source;
      o.objects = objects.get();
      o.tokens = tokens.get();
      o.claims = claims.get();
      // Built by WirePlugins (CSI); kept alive by the components until shutdown.
      for (const auto& p : ctx.components.external_volume_plugins) {
        o.external_plugins.push_back(p.get());
      }
      auto vm = std::make_shared<volume::VolumeManager>(std::move(o), *ctx.clock);
      ctx.components.volume_manager = vm;
      // The hook holds its own reference, whatever the order of destruction in app::Run.
      ctx.runtime_options->container_mounts =
          [vm, objects, tokens, claims](const api::Pod& pod, const api::Container& container) {
            return vm->ContainerMounts(pod, container);
          };
      return absl::OkStatus();
    }
    case WiringStage::kBeforeKubelet:
      if (ctx.components.volume_manager != nullptr) {
        ctx.kubelet_options->participants.push_back(ctx.components.volume_manager.get());
      }
      return absl::OkStatus();
    case WiringStage::kAfterKubeletStart: {
      std::shared_ptr<volume::VolumeManager> vm = ctx.components.volume_manager;
      if (vm == nullptr || ctx.kubelet == nullptr) return absl::OkStatus();
      // A wait for the volumes of a pod whose source dropped it ends early (upstream cancels
      // the sync's context), so the pod's termination is not held up.
      const Kubelet* kubelet = ctx.kubelet;
      vm->SetPodDesired([kubelet](const std::string& uid) {
        return kubelet->pod_manager().GetPodByUID(uid) != nullptr;
      });
      // Shutdown runs before the Kubelet stops its pod workers: end their waits, and stop
      // asking a Kubelet that is about to go away.
      ctx.AtShutdown([vm] {
        vm->SetPodDesired(nullptr);
        vm->Stop();
      });
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

}  // namespace kubelet::app
