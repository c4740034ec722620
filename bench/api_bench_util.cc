#include "bench/api_bench_util.h"

#include <signal.h>

#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/bench_util.h"
#include "cri/remote/remote_runtime.h"
#include "nlohmann/json.hpp"

namespace kubelet::bench {
absl::StatusOr<ApiBenchEnv> LoadApiBenchEnv(const std::string& dir_prefix, int* exit_code) {
  ApiBenchEnv env;
  *exit_code = 2;
  env.endpoint = Env("KUBELET_E2E_CONTAINERD_ENDPOINT");
  if (env.endpoint.empty()) {
    std::fprintf(stderr, "KUBELET_E2E_CONTAINERD_ENDPOINT is not set (start the harness)\n");
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

bool NodeReady(const e2e::ControlPlane& cp, const std::string& node) {
  auto r = cp.Kubectl({"get", "node", node, "-o", "json"});
  if (!r.ok() || r->exit_code != 0) return false;
  nlohmann::json j = nlohmann::json::parse(r->out, nullptr, false);
  if (!j.is_object()) return false;
  for (const auto& c : j["status"].value("conditions", nlohmann::json::array())) {
    if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
  }
  return false;
}

absl::StatusOr<ApiKubelet> StartApiKubelet(const std::string& bin, const std::string& node,
                                           const e2e::ControlPlane& cp, const std::string& endpoint,
                                           const std::string& dir,
                                           const std::string& extra_config) {
  ApiKubelet k;
  k.node = node;
  absl::StatusOr<std::string> kubeconfig = cp.NodeKubeconfig(node);
  if (!kubeconfig.ok()) return kubeconfig.status();
  k.port = e2e::FreePort();
  k.root_dir = absl::StrCat(dir, "/root-", node);
  k.log = absl::StrCat(dir, "/", node, ".log");
  const std::string cfg = absl::StrCat(dir, "/", node, ".yaml");
  e2e::WriteFile(
      cfg, absl::StrCat("apiVersion: kubelet.config.k8s.io/v1beta1\n"
                        "kind: KubeletConfiguration\n"
                        "containerRuntimeEndpoint: ",
                        endpoint, "\ncgroupDriver: cgroupfs\nfailSwapOn: false\nhealthzPort: ",
                        e2e::FreePort(), "\nport: ", k.port,
                        "\nreadOnlyPort: 0\naddress: 127.0.0.1\nmaxPods: 250\n"
                        "authentication:\n  anonymous:\n    enabled: true\n"
                        "  webhook:\n    enabled: false\n"
                        "authorization:\n  mode: AlwaysAllow\n",
                        extra_config));
  auto p = e2e::KubeletProcess::Start(
      bin,
      {"--config", cfg, "--kubeconfig", *kubeconfig, "--hostname-override", node, "--root-dir",
       k.root_dir, "--cert-dir", absl::StrCat(dir, "/pki-", node), "--v=2"},
      {}, k.log);
  if (!p.ok()) return p.status();
  k.process = std::move(*p);
  const absl::Time started = absl::Now();
  while (!NodeReady(cp, node) && absl::Now() - started < absl::Minutes(2)) {
    absl::SleepFor(absl::Milliseconds(500));
  }
  if (!NodeReady(cp, node)) {
    k.process->Signal(SIGTERM);
    k.process->Wait(absl::Seconds(30));
    return absl::DeadlineExceededError(
        absl::StrCat("node ", node, " not Ready within 2 min (log: ", k.log, ")"));
  }
  return k;
}

void StopApiKubelet(ApiKubelet& k, const e2e::ControlPlane& cp, cri::RuntimeService& rt) {
  if (k.process != nullptr) {
    k.process->Signal(SIGTERM);
    k.process->Wait(absl::Seconds(30));
  }
  (void)cp.Kubectl({"delete", "pods", "-n", "default", "-l", "bench=" + k.node, "--force",
                    "--grace-period=0", "--wait=false"});
  (void)cp.Kubectl({"delete", "node", k.node, "--wait=false"});
  (void)cp.Kubectl({"delete", "lease", "-n", "kube-node-lease", k.node, "--wait=false"});
  RemoveSandboxes(rt, k.node);
}

}  // namespace kubelet::bench
