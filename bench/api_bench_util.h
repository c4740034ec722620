// Helpers of the API-server-mode macro benchmarks: a kubelet (ours or upstream's) started as a
// node of the harness's control plane on the harness's containerd, and its tear-down.
// Blocking, polling; not thread-safe.
#ifndef KUBELET_BENCH_API_BENCH_UTIL_H_
#define KUBELET_BENCH_API_BENCH_UTIL_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "cri/runtime_service.h"
#include "test/e2e/controlplane.h"
#include "test/e2e/kubelet_process.h"

namespace kubelet::bench {

struct ApiKubelet {
  std::string node;
  std::string root_dir;  // --root-dir (pods/<uid>/volumes/... below it)
  std::string log;       // its stdout and stderr
  int port = 0;          // the kubelet API (anonymous + AlwaysAllow: /metrics scrapable)
  std::unique_ptr<e2e::KubeletProcess> process;
};

// What every API-server-mode benchmark runs against: the harness's containerd (endpoint and a
// CRI client), its control plane, and a fresh temporary folder for logs.
struct ApiBenchEnv {
  std::string endpoint;
  std::optional<e2e::ControlPlane> cp;
  std::unique_ptr<cri::RuntimeService> rt;
  std::string dir;
};
// Reads KUBELET_E2E_CONTAINERD_ENDPOINT and KUBELET_CP_ENV_FILE, connects to the runtime and
// makes the folder (`dir_prefix`, printed as "logs: <dir>"). On failure prints why and returns
// the process exit code to use (2: not set up, 1: runtime unreachable).
absl::StatusOr<ApiBenchEnv> LoadApiBenchEnv(const std::string& dir_prefix, int* exit_code);

// Whether the Node reports Ready=True.
bool NodeReady(const e2e::ControlPlane& cp, const std::string& node);

// Starts `bin` as node `node` (identity from the control-plane harness) with the benchmarks'
// common KubeletConfiguration plus `extra_config` (YAML lines), files under `dir`, and waits up
// to 2 minutes for the Node to be Ready. On failure the process is stopped again.
absl::StatusOr<ApiKubelet> StartApiKubelet(const std::string& bin, const std::string& node,
                                           const e2e::ControlPlane& cp, const std::string& endpoint,
                                           const std::string& dir,
                                           const std::string& extra_config = "");

// Stops the kubelet (SIGTERM, 30 s), then force-deletes what is left of the node in the API
// (pods labelled bench=<node>, the Node, its Lease) and removes its sandboxes over CRI.
void StopApiKubelet(ApiKubelet& k, const e2e::ControlPlane& cp, cri::RuntimeService& rt);

}  // namespace kubelet::bench

#endif  // KUBELET_BENCH_API_BENCH_UTIL_H_
