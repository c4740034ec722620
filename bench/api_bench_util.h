// Helpers of the API-server-mode macro benchmarks: their environment; the kubelet (ours or
// upstream's) started as a node of the harness's control plane is test/e2e/api_kubelet.h's.
// Blocking, polling; not thread-safe.
#ifndef KUBELET_BENCH_API_BENCH_UTIL_H_
#define KUBELET_BENCH_API_BENCH_UTIL_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cri/runtime_service.h"
#include "test/e2e/api_kubelet.h"
#include "test/e2e/controlplane.h"
#include "test/e2e/kubelet_process.h"

namespace kubelet::bench {

// The kubelet of a benchmark run (shared with the e2e tests that run both kubelets).
using e2e::ApiKubelet;
using e2e::NodeReady;
using e2e::StartApiKubelet;
using e2e::StopApiKubelet;

// What every API-server-mode benchmark runs against: the harness's containerd (endpoint and a
// CRI client), its control plane, and a fresh temporary folder for logs.
struct ApiBenchEnv {
  std::string endpoint;
  std::optional<e2e::ControlPlane> cp;
  std::unique_ptr<cri::RuntimeService> rt;
  std::string dir;
};
// The command line of the benchmarks comparing two kubelets on sizes:
//   <name> <our-kubelet> <upstream-kubelet> [N ...]
struct KubeletPairArgs {
  std::string ours, upstream;
  std::vector<int> sizes;  // `default_sizes` when none is given
};
// nullopt (after printing the usage) when the two binaries are missing.
std::optional<KubeletPairArgs> ParseKubeletPairArgs(int argc, char** argv,
                                                    std::vector<int> default_sizes);

// Reads KUBELET_E2E_RUNTIME_ENDPOINT and KUBELET_CP_ENV_FILE, connects to the runtime and
// makes the folder (`dir_prefix`, printed as "logs: <dir>"). On failure prints why and returns
// the process exit code to use (2: not set up, 1: runtime unreachable).
absl::StatusOr<ApiBenchEnv> LoadApiBenchEnv(const std::string& dir_prefix, int* exit_code);

}  // namespace kubelet::bench

#endif  // KUBELET_BENCH_API_BENCH_UTIL_H_
