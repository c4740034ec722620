#include "bench/api_bench_util.h"

#include <signal.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/bench_util.h"
#include "cri/remote/remote_runtime.h"
#include "nlohmann/json.hpp"

namespace kubelet::bench {

std::optional<KubeletPairArgs> ParseKubeletPairArgs(int argc, char** argv,
                                                    std::vector<int> default_sizes) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <our-kubelet> <upstream-kubelet> [N ...]\n", argv[0]);
    return std::nullopt;
  }
  KubeletPairArgs a{argv[1], argv[2], {}};
  for (int i = 3; i < argc; ++i) a.sizes.push_back(std::atoi(argv[i]));
  if (a.sizes.empty()) a.sizes = std::move(default_sizes);
  return a;
}

absl::StatusOr<ApiBenchEnv> LoadApiBenchEnv(const std::string& dir_prefix, int* exit_code) {
  ApiBenchEnv env;
  *exit_code = 2;
  env.endpoint = Env("KUBELET_E2E_RUNTIME_ENDPOINT");
  if (env.endpoint.empty()) {
    std::fprintf(stderr, "KUBELET_E2E_RUNTIME_ENDPOINT is not set (start the harness)\n");
    return absl::FailedPreconditionError("no runtime");
  }
  absl::StatusOr<e2e::ControlPlane> cp = e2e::ControlPlane::FromEnv();
  if (!cp.ok()) {
    std::fprintf(stderr, "control plane: %s\n", std::string(cp.status().message()).c_str());
    return cp.status();
  }
  env.cp = std::move(*cp);
  auto rt = cri::NewRemoteRuntimeService(env.endpoint, absl::Minutes(2));
  if (!rt.ok()) {
    *exit_code = 1;
    std::fprintf(stderr, "%s\n", std::string(rt.status().message()).c_str());
    return rt.status();
  }
  env.rt = std::move(*rt);
  env.dir = e2e::MakeTempDir(dir_prefix);
  std::printf("logs: %s\n", env.dir.c_str());
  *exit_code = 0;
  return env;
}

}  // namespace kubelet::bench
