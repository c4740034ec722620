// A kubelet binary (ours or upstream's) run as a node of the "controlplane" fixture's API server
// on a harness runtime, for the tests and benchmarks that run both side by side.
// Blocking, polling; not thread-safe.
#ifndef KUBELET_TEST_E2E_API_KUBELET_H_
#define KUBELET_TEST_E2E_API_KUBELET_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cri/runtime_service.h"
#include "test/e2e/controlplane.h"
#include "test/e2e/kubelet_process.h"

namespace kubelet::e2e {

struct ApiKubelet {
  std::string node;
  std::string root_dir;  // --root-dir (pods/<uid>/volumes/... below it)
  std::string log;       // its stdout and stderr
  int port = 0;          // the kubelet API (anonymous + AlwaysAllow: /metrics scrapable)
  std::unique_ptr<KubeletProcess> process;
};

// Whether the Node reports Ready=True.
bool NodeReady(const ControlPlane& cp, const std::string& node);

// Starts `bin` as node `node` (identity from the control-plane harness) on the runtime at
// `endpoint` (cgroupfs driver), with anonymous AlwaysAllow serving on 127.0.0.1, maxPods 250,
// `extra_config` (KubeletConfiguration YAML lines) and `extra_args`; files under `dir`. Waits
// up to 2 minutes for the Node to be Ready; on failure the process is stopped again.
absl::StatusOr<ApiKubelet> StartApiKubelet(const std::string& bin, const std::string& node,
                                           const ControlPlane& cp, const std::string& endpoint,
                                           const std::string& dir,
                                           const std::string& extra_config = "",
                                           const std::vector<std::string>& extra_args = {});

// Stops the kubelet (SIGTERM, 30 s), then force-deletes what is left of the node in the API
// (its pods in every namespace, the Node, its Lease) and removes its sandboxes (those whose
// name ends in the node's name) over CRI, and their log directories under /var/log/pods.
void StopApiKubelet(ApiKubelet& k, const ControlPlane& cp, cri::RuntimeService& rt);

}  // namespace kubelet::e2e

#endif  // KUBELET_TEST_E2E_API_KUBELET_H_
