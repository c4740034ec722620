// `kubelet hollow`: many hollow nodes in one process, for scale tests of a control plane. Each
// node is this kubelet's own node agent (node_agent.h) in API-server mode: Node registration,
// status and Lease, the API pod source, admission, pod workers, PLEG, status manager, mirror
// pods, events, probes the simulated runtime can answer (exec). Below the CRI each has an
// in-process simulated runtime (cri/sim/sim_runtime.h) and a simulated machine
// (kubelet/hollow/machine.h): nothing touches the host's cgroups, mounts, logs or ports.
//
// Flags: every kubelet flag and --config (the same configuration for every node), plus
//   --nodes N                 how many (required, 1..16384)
//   --name-prefix P           node i is named P<i> (default "hollow-node-")
//   --node-cpu, --node-memory, --node-ephemeral-storage
//                             each node's capacity (default 4, 16Gi, 100Gi; pods: maxPods)
//   --start-concurrency K     nodes starting at once (default 8)
//   --runtime-start-delay, --runtime-pull-delay
//                             how long the simulated RunPodSandbox / StartContainer and a pull
//                             take (default 0)
// Per node i: root directory <root-dir>/P<i>, hostname override P<i>, InternalIP and pod CIDR
// from kubelet/hollow/fleet.h. Credentials: with --bootstrap-kubeconfig each node bootstraps
// its own client certificate (one CSR per node, as real nodes do), kept in
// <root-dir>/P<i>/kubelet.conf and <root-dir>/P<i>/pki, so each has its own identity
// system:node:P<i>; otherwise every node uses --kubeconfig as given.
//
// The process: malloc arenas and the memory trimmer, the open-files limit, one metrics
// registry (the kubelet's, plus kubelet_hollow_nodes, kubelet_hollow_nodes_started,
// kubelet_hollow_running_containers, kubelet_hollow_api_requests_total{verb,resource,
// subresource} and kubelet_hollow_heap_bytes_per_node), one HTTP server on healthzBindAddress:
// healthzPort with /healthz and /metrics. SIGTERM/SIGINT stop every node and exit 0.
#ifndef KUBELET_APP_HOLLOW_H_
#define KUBELET_APP_HOLLOW_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "app/options.h"
#include "config/flagset.h"

namespace kubelet::app {

struct HollowOptions {
  int32_t nodes = 0;
  std::string name_prefix = "hollow-node-";
  std::string node_cpu = "4";
  std::string node_memory = "16Gi";
  std::string node_ephemeral_storage = "100Gi";
  int32_t start_concurrency = 8;
  absl::Duration runtime_start_delay = absl::ZeroDuration();
  absl::Duration runtime_pull_delay = absl::ZeroDuration();
};

// The `hollow` command for ParseCommandLine: its help and its flags into `options`.
SubCommand HollowCommand(HollowOptions* options);

// Runs the hollow nodes until SIGTERM/SIGINT. Exit code 0 on a clean stop, 1 when start-up
// fails (bad flags; each node's own start failures are retried, not fatal).
int RunHollow(Settings& settings, const HollowOptions& options);

}  // namespace kubelet::app

#endif  // KUBELET_APP_HOLLOW_H_
