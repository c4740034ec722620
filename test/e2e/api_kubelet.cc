#include "test/e2e/api_kubelet.h"

#include <signal.h>
#include <sys/mount.h>

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"

namespace kubelet::e2e {

bool NodeReady(const ControlPlane& cp, const std::string& node) {
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
                                           const ControlPlane& cp, const std::string& endpoint,
                                           const std::string& dir, const std::string& extra_config,
                                           const std::vector<std::string>& extra_args) {
  ApiKubelet k;
  k.node = node;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  absl::StatusOr<std::string> kubeconfig = cp.NodeKubeconfig(node);
  if (!kubeconfig.ok()) return kubeconfig.status();
  k.port = FreePort();
  k.root_dir = absl::StrCat(dir, "/root-", node);
  k.log = absl::StrCat(dir, "/", node, ".log");
  const std::string cfg = absl::StrCat(dir, "/", node, ".yaml");
  WriteFile(cfg,
            absl::StrCat("apiVersion: kubelet.config.k8s.io/v1beta1\n"
                         "kind: KubeletConfiguration\n"
                         "containerRuntimeEndpoint: ",
                         endpoint, "\ncgroupDriver: cgroupfs\nfailSwapOn: false\nhealthzPort: ",
                         FreePort(), "\nport: ", k.port,
                         "\nreadOnlyPort: 0\naddress: 127.0.0.1\nmaxPods: 250\n"
                         "authentication:\n  anonymous:\n    enabled: true\n"
                         "  webhook:\n    enabled: false\n"
                         "authorization:\n  mode: AlwaysAllow\n",
                         extra_config));
  std::vector<std::string> args = {
      "--config", cfg,          "--kubeconfig", *kubeconfig,  "--hostname-override",
      node,       "--root-dir", k.root_dir,     "--cert-dir", absl::StrCat(dir, "/pki-", node),
      "--v=2"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  auto p = KubeletProcess::Start(bin, args, {}, k.log);
  if (!p.ok()) return p.status();
  k.process = std::move(*p);
  const absl::Time started = absl::Now();
  while (!NodeReady(cp, node) && absl::Now() - started < absl::Minutes(2)) {
    if (k.process->Wait(absl::Milliseconds(500)).has_value()) break;  // it exited
  }
  if (!NodeReady(cp, node)) {
    k.process->Signal(SIGTERM);
    k.process->Wait(absl::Seconds(30));
    return absl::DeadlineExceededError(
        absl::StrCat("node ", node, " not Ready within 2 min (log: ", k.log, ")"));
  }
  return k;
}

void StopApiKubelet(ApiKubelet& k, const ControlPlane& cp, cri::RuntimeService& rt) {
  if (k.process != nullptr) {
    k.process->Signal(SIGTERM);
    k.process->Wait(absl::Seconds(30));
  }
  // The upstream kubelet bind-mounts its root dir onto itself (to make it rshared) and leaves
  // that mount behind when it exits.
  if (!k.root_dir.empty()) (void)::umount2(k.root_dir.c_str(), MNT_DETACH);
  (void)cp.Kubectl({"delete", "pods", "--all-namespaces", "--field-selector",
                    "spec.nodeName=" + k.node, "--force", "--grace-period=0", "--wait=false"});
  (void)cp.Kubectl({"delete", "node", k.node, "--wait=false"});
  (void)cp.Kubectl({"delete", "lease", "-n", "kube-node-lease", k.node, "--wait=false"});
  auto list = rt.ListPodSandbox(nullptr);
  if (!list.ok()) return;
  for (const auto& s : *list) {
    if (!absl::EndsWith(s.metadata().name(), k.node)) continue;
    (void)rt.StopPodSandbox(s.id());
    (void)rt.RemovePodSandbox(s.id());
  }
  // Their log directories (<namespace>_<pod>_<uid>): a later kubelet that starts a pod of the
  // same UID (a static pod's UID hashes its manifest) would otherwise count the old log files
  // as earlier attempts, as a kubelet rightly does after a runtime lost its containers.
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/var/log/pods", ec)) {
    const std::string name = e.path().filename().string();
    const size_t first = name.find('_');
    const size_t last = name.rfind('_');
    if (first == std::string::npos || last <= first) continue;
    if (absl::EndsWith(absl::string_view(name).substr(first + 1, last - first - 1), k.node)) {
      std::filesystem::remove_all(e.path(), ec);
    }
  }
}

}  // namespace kubelet::e2e
