#include "app/node_agent.h"

#include <sys/utsname.h>

#include <utility>

#include "common/log.h"
#include "kubelet/events/event_recorder.h"

namespace kubelet::app {
namespace {

// The runtime manager's options from the settings (its hooks are set by the wiring).
kuberuntime::Options RuntimeOptions(const NodeAgentConfig& c, events::EventRecorder* recorder) {
  const Settings& s = *c.settings;
  kuberuntime::Options ro = kuberuntime::RuntimeOptionsFromConfig(s.config, s.gates);
  ro.recorder = recorder;
  ro.root_dir = s.flags.root_directory;
  ro.node_name = c.node_name;
  if (!c.node_ip.empty()) ro.node_ips.push_back(c.node_ip);
  // The deprecated --seccomp-default flag turns seccompDefault on too.
  if (s.flags.seccomp_default) ro.seccomp_default = true;
  ro.pod_host_ips = s.gates.Enabled("PodHostIPs");
  // A simulated node's runtime writes no logs; the directories the manager makes and collects
  // stay below the node's own root directory.
  if (c.simulated) ro.pod_logs_dir = s.flags.root_directory + "/pod-logs";
  return ro;
}

// The Kubelet's options from the settings (its hooks are set by the wiring). A bad
// allowedUnsafeSysctls entry is an error.
absl::StatusOr<KubeletOptions> MakeKubeletOptions(const NodeAgentConfig& c,
                                                  events::EventRecorder* recorder) {
  const Settings& s = *c.settings;
  struct utsname uts {};
  (void)uname(&uts);
  absl::StatusOr<KubeletOptions> options = KubeletOptionsFromConfig(s.config, uts.release);
  if (!options.ok()) return options.status();
  KubeletOptions& ko = *options;
  ko.node_name = c.node_name;
  ko.recorder = recorder;
  ko.host_ip = c.node_ip;
  ko.root_dir = s.flags.root_directory;
  ko.pod_disruption_conditions = s.gates.Enabled("PodDisruptionConditions");
  ko.pod_ready_to_start_containers_condition =
      s.gates.Enabled("PodReadyToStartContainersCondition");
  ko.pod_host_ips = s.gates.Enabled("PodHostIPs");
  ko.in_place_pod_vertical_scaling = s.gates.Enabled("InPlacePodVerticalScaling");
  ko.gc_policy.max_per_pod_container = s.flags.max_per_pod_container_count;
  ko.gc_policy.max_containers = s.flags.max_container_count;
  ko.gc_policy.min_age = s.flags.minimum_gc_age;
  return options;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NodeAgent>> NodeAgent::Start(NodeAgentConfig config) {
  std::unique_ptr<NodeAgent> agent(new NodeAgent(std::move(config)));
  if (absl::Status st = agent->StartAll(); !st.ok()) {
    agent->Stop();
    return st;
  }
  return agent;
}

NodeAgent::~NodeAgent() { Stop(); }

absl::Status NodeAgent::StartAll() {
  const NodeAgentConfig& c = config_;
  // makeEventRecorder: events go to the log (--v=3), and to the API server in API-server mode.
  recording_ = MakeEventRecorder(c.events, c.node_name, *c.clock);
  events::EventRecorder* recorder = recording_.recorder.get();
  runtime_options_ = RuntimeOptions(c, recorder);
  absl::StatusOr<KubeletOptions> ko = MakeKubeletOptions(c, recorder);
  if (!ko.ok()) return ko.status();
  kubelet_options_ = *std::move(ko);
  kubelet_options_->loops = c.loops;
  // A simulated runtime answers at once: two workers keep a hollow node's pods moving, and a
  // thousand nodes do not hold sixteen idle threads each (nor two: none stay while idle).
  if (c.simulated) {
    kubelet_options_->pod_worker_threads = 2;
    kubelet_options_->pod_worker_idle_threads = 0;
  }

  wiring_.settings = c.settings;
  wiring_.node_name = c.node_name;
  wiring_.node_ip = c.node_ip;
  wiring_.runtime = c.runtime;
  wiring_.images = c.images;
  wiring_.clock = c.clock;
  wiring_.configz = c.configz;
  wiring_.recorder = recorder;
  wiring_.runtime_options = &runtime_options_;
  wiring_.kubelet_options = &*kubelet_options_;
  wiring_.api_client = c.api;
  wiring_.simulated = c.simulated ? &*config_.simulated : nullptr;
  wiring_.shared_services = c.shared_services;
  wiring_.loops = c.loops;
  // Registered first, so it runs last: what the subsystems record while stopping is still sent.
  wiring_.AtShutdown(recording_.stop);
  if (absl::Status st = WireAll(WiringStage::kBeforeRuntimeManager, wiring_); !st.ok()) return st;

  manager_ = std::make_unique<kuberuntime::KubeGenericRuntimeManager>(
      *c.runtime, *c.images, *c.clock, runtime_options_, &pod_state_);
  wiring_.runtime_manager = manager_.get();
  if (absl::Status st = WireAll(WiringStage::kBeforeKubelet, wiring_); !st.ok()) return st;

  kubelet_ = std::make_unique<Kubelet>(*kubelet_options_, *c.runtime, *manager_, *c.clock);
  pod_state_.Set(kubelet_.get());
  // BirthCry.
  recorder->Record(events::NodeRef(c.node_name), events::kNormal, events::kStartingKubelet,
                   "Starting kubelet.");
  if (absl::Status st = kubelet_->Start(); !st.ok()) return st;
  wiring_.kubelet = kubelet_.get();
  wiring_.late_kubelet->store(kubelet_.get());
  return WireAll(WiringStage::kAfterKubeletStart, wiring_);
}

void NodeAgent::Stop() {
  if (stopped_) return;
  stopped_ = true;
  // Subsystems first: some call back into the Kubelet (probe results -> TriggerPodSync).
  wiring_.late_kubelet->store(nullptr);
  wiring_.Shutdown();
  if (kubelet_) kubelet_->Stop();
  pod_state_.Set(nullptr);
}

}  // namespace kubelet::app
