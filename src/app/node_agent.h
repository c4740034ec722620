// One node's kubelet, below what belongs to the process: the event recorder, the runtime
// manager and the Kubelet with the subsystems wired around them (wiring.h), from start to stop.
// app::Run builds one for the machine it runs on, after the process-wide steps of upstream's
// start-up (lock file, configz, API clients, OOM score, CRI connection, open-files limit);
// the hollow mode (hollow.h) builds many in one process, each on a simulated runtime.
//
// A simulated node (NodeAgentConfig::simulated) wires only the subsystems that need no machine
// of their own (cluster content, prober, API pods, services, node status; see
// WiringContext::simulated): no cgroups, resource managers, plugins, volumes, log rotation,
// image GC, stats, eviction, node shutdown, HTTP servers or memory trimmer. Its capacity and
// allocatable, and what its Node reports about the machine, come from the config.
//
// Thread-safety: Start and Stop from one thread; kubelet() is safe between them.
#ifndef KUBELET_APP_NODE_AGENT_H_
#define KUBELET_APP_NODE_AGENT_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "app/options.h"
#include "app/wiring.h"
#include "common/clock.h"
#include "cri/runtime_service.h"
#include "kubelet/kubelet.h"
#include "kubelet/kuberuntime/kuberuntime_manager.h"
#include "kubelet/kuberuntime/options.h"
#include "kubelet/nodestatus/node_status.h"

namespace kubelet::app {

struct NodeAgentConfig {
  const Settings* settings = nullptr;  // this node's flags, configuration, feature gates
  std::string node_name;
  std::string node_ip;
  // API-server mode: the shared client and upstream's separate event client. Null standalone.
  std::shared_ptr<apiclient::RestClient> api;
  std::shared_ptr<apiclient::RestClient> events;
  // The CRI services; outlive the agent.
  cri::RuntimeService* runtime = nullptr;
  cri::ImageManagerService* images = nullptr;
  Clock* clock = nullptr;
  server::Configz* configz = nullptr;  // null: nothing registered
  // A simulated node: the machine its Node reports (capacity, allocatable, ids, kernel, OS).
  std::optional<nodestatus::MachineFacts> simulated;
  // A services watch shared with the other nodes of the process (WiringContext::
  // shared_services); null: its own.
  std::shared_ptr<ServiceWatch> shared_services;
  // The runner of the node's loops (WiringContext::loops); null: a thread per loop. Must
  // outlive the agent.
  Loops* loops = nullptr;
};

class NodeAgent {
 public:
  // Builds and starts the node: the subsystems in their three stages around the runtime
  // manager and the Kubelet (BirthCry event recorded before Kubelet::Start). On error what was
  // started is stopped again and the error returned (start-up's message).
  static absl::StatusOr<std::unique_ptr<NodeAgent>> Start(NodeAgentConfig config);
  ~NodeAgent();
  NodeAgent(const NodeAgent&) = delete;
  NodeAgent& operator=(const NodeAgent&) = delete;

  Kubelet& kubelet() { return *kubelet_; }
  const std::string& node_name() const { return config_.node_name; }

  // Subsystems stopped in reverse order of their start, then the Kubelet. Idempotent.
  void Stop();

 private:
  explicit NodeAgent(NodeAgentConfig config) : config_(std::move(config)) {}
  absl::Status StartAll();

  // Forwards to the Kubelet once it exists (the runtime manager, built first, asks it which
  // pods are gone).
  class LatePodStateProvider final : public container::PodStateProvider {
   public:
    void Set(const container::PodStateProvider* target) { target_.store(target); }
    bool ShouldPodContentBeRemoved(const std::string& uid) const override {
      const auto* t = target_.load();
      return t != nullptr && t->ShouldPodContentBeRemoved(uid);
    }
    bool ShouldPodRuntimeBeRemoved(const std::string& uid) const override {
      const auto* t = target_.load();
      return t != nullptr && t->ShouldPodRuntimeBeRemoved(uid);
    }

   private:
    std::atomic<const container::PodStateProvider*> target_{nullptr};
  };

  // Declaration order is destruction order reversed: the wiring's components outlive the
  // Kubelet and the runtime manager, which use their hooks.
  NodeAgentConfig config_;
  EventRecording recording_;
  kuberuntime::Options runtime_options_;
  std::optional<KubeletOptions> kubelet_options_;
  WiringContext wiring_;
  LatePodStateProvider pod_state_;
  std::unique_ptr<kuberuntime::KubeGenericRuntimeManager> manager_;
  std::unique_ptr<Kubelet> kubelet_;
  bool stopped_ = false;
};

}  // namespace kubelet::app

#endif  // KUBELET_APP_NODE_AGENT_H_
