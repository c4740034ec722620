// Macro benchmark: streaming through the kubelet (exec and port-forward proxied to the runtime's
// streaming server), for our kubelet and the upstream v1.28.7 kubelet on the same containerd
// and control plane, one after the other, each against the runtime's streaming server used
// directly in the same phase.
//
// For each kubelet: one busybox pod (spec.nodeName set) writes a file of M MiB from /dev/zero
// and serves it with `httpd -p 8080 -h /www`. Then
//   exec          R rounds, each timing (wall clock around the client process) both
//                   kubelet   `kubectl exec <pod> -- true`   (kubectl -> API server -> kubelet
//                             -> runtime streaming server)
//                   direct    `crictl exec <container> true` (CRI Exec -> streaming server)
//                 in alternating order;
//   port-forward  `kubectl port-forward <pod> L1:8080` and `crictl port-forward <sandbox>
//                 L2:8080` run side by side; D times each, alternating, curl downloads the file
//                 through one of them (throughput from curl's size_download / time_total). A
//                 download whose byte count is not exactly M MiB is a failure, not a figure.
// Printed: exec p50 and max per path, port-forward MiB/s (p50 and best) per path, and the
// ratios ours / direct, upstream / direct (each against the direct figure of its own phase)
// and ours / upstream. Figures are printed, never asserted.
//
// Usage: streaming_bench <our-kubelet> <upstream-kubelet> [rounds (default 20)]
//                        [MiB (default 64)] [downloads (default 3)]
// Env: KUBELET_E2E_* (the containerd harness), KUBELET_CP_ENV_FILE (the control plane) and
// KUBEBUILDER_ASSETS (holds crictl).
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "bench/api_bench_util.h"
#include "bench/bench_util.h"
#include "nlohmann/json.hpp"

namespace {

using kubelet::e2e::CommandResult;
using kubelet::e2e::ControlPlane;
using kubelet::e2e::KubeletProcess;
using namespace kubelet::bench;  // NOLINT

struct Options {
  int rounds = 20;
  int mib = 64;
  int downloads = 3;
  std::string crictl;
};

// One kubelet's phase: milliseconds per exec, MiB/s per download.
struct Phase {
  bool ok = false;
  std::vector<double> exec_kubelet_ms, exec_direct_ms;
  std::vector<double> pf_kubelet_mibs, pf_direct_mibs;
};

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

// The pod's ready sandbox and running container ids over CRI; false when either is missing.
bool FindIds(kubelet::cri::RuntimeService& rt, const std::string& pod, std::string* sandbox,
             std::string* container) {
  runtime::v1::PodSandboxFilter sf;
  sf.mutable_state()->set_state(runtime::v1::SANDBOX_READY);
  auto sandboxes = rt.ListPodSandbox(&sf);
  if (!sandboxes.ok()) return false;
  for (const auto& s : *sandboxes) {
    if (s.metadata().name() == pod && s.metadata().namespace_() == "default") *sandbox = s.id();
  }
  if (sandbox->empty()) return false;
  runtime::v1::ContainerFilter cf;
  cf.set_pod_sandbox_id(*sandbox);
  cf.mutable_state()->set_state(runtime::v1::CONTAINER_RUNNING);
  auto containers = rt.ListContainers(&cf);
  if (!containers.ok() || containers->empty()) return false;
  *container = containers->front().id();
  return true;
}

// Times one client process; false (and why on stderr) unless it exits 0.
bool TimeCommand(const std::vector<std::string>& argv, const std::string& what,
                 std::vector<double>* ms) {
  const absl::Time t0 = absl::Now();
  absl::StatusOr<CommandResult> r = kubelet::e2e::RunCommand(argv, {}, absl::Seconds(60));
  const absl::Duration took = absl::Now() - t0;
  if (!r.ok() || r->exit_code != 0) {
    std::fprintf(stderr, "%s failed: %s\n", what.c_str(),
                 r.ok() ? r->err.c_str() : std::string(r.status().message()).c_str());
    return false;
  }
  ms->push_back(Ms(took));
  return true;
}

// Downloads /big through 127.0.0.1:`port`; false unless exactly `bytes` arrived.
bool Download(int port, long long bytes, const std::string& what, std::vector<double>* mibs) {
  absl::StatusOr<CommandResult> r = kubelet::e2e::RunCommand(
      {"curl", "-sS", "--fail", "--max-time", "300", "-o", "/dev/null", "-w",
       "%{size_download} %{time_total}", absl::StrCat("http://127.0.0.1:", port, "/big")},
      {}, absl::Seconds(310));
  long long got = -1;
  double seconds = 0;
  if (r.ok() && r->exit_code == 0) std::sscanf(r->out.c_str(), "%lld %lf", &got, &seconds);
  if (got != bytes || seconds <= 0) {
    std::fprintf(stderr, "%s: download failed: %lld of %lld bytes (%s)\n", what.c_str(), got, bytes,
                 r.ok() ? r->err.c_str() : std::string(r.status().message()).c_str());
    return false;
  }
  mibs->push_back(static_cast<double>(bytes) / (1024.0 * 1024.0) / seconds);
  return true;
}

// Waits until the forwarder logs that it listens and /index.html comes through it.
bool ForwardReady(KubeletProcess& pf, int port) {
  if (!pf.WaitForLog("Forwarding from", absl::Seconds(60))) return false;
  absl::Status ok = kubelet::e2e::WaitFor(
      [&]() -> absl::Status {
        auto c = kubelet::e2e::RunCommand({"curl", "-s", "--max-time", "5",
                                           absl::StrCat("http://127.0.0.1:", port, "/index.html")},
                                          {}, absl::Seconds(10));
        if (c.ok() && c->out == "ok\n") return absl::OkStatus();
        return absl::UnavailableError("not yet");
      },
      absl::Seconds(60), absl::Seconds(1));
  return ok.ok();
}

void StopProcess(std::unique_ptr<KubeletProcess>& p) {
  if (p == nullptr) return;
  p->Signal(SIGTERM);
  p->Wait(absl::Seconds(10));
}

// The measurements against a running pod; fills `f` and returns whether all of them succeeded.
bool Measure(const Options& o, const std::string& kind, const std::string& pod,
             const ControlPlane& cp, kubelet::cri::RuntimeService& rt, const std::string& endpoint,
             const std::string& dir, Phase& f) {
  std::string sandbox, container;
  if (!FindIds(rt, pod, &sandbox, &container)) {
    std::fprintf(stderr, "%s: no ready sandbox / running container over CRI\n", kind.c_str());
    return false;
  }
  const std::vector<std::string> kubectl_exec = {
      cp.kubectl(), "--kubeconfig", cp.admin_kubeconfig(), "exec", pod, "-n", "default",
      "--",         "true"};
  const std::vector<std::string> crictl_exec = {
      o.crictl, "--runtime-endpoint", endpoint, "exec", container, "true"};
  // The API server finds the node by its name (an /etc/hosts line the harness adds), which its
  // resolver may take a moment to see: the first exec is retried until it goes through.
  std::vector<double> warm;
  absl::Status reached = kubelet::e2e::WaitFor(
      [&]() -> absl::Status {
        auto r = cp.Kubectl({"exec", pod, "-n", "default", "--", "test", "-f", "/www/big"});
        if (r.ok() && r->exit_code == 0) return absl::OkStatus();
        return absl::UnavailableError(r.ok() ? r->err : std::string(r.status().message()));
      },
      absl::Seconds(120), absl::Seconds(2));
  if (!reached.ok()) {
    std::fprintf(stderr, "%s: exec never went through: %s\n", kind.c_str(),
                 std::string(reached.message()).c_str());
    return false;
  }
  if (!TimeCommand(crictl_exec, kind + ": crictl exec (warm-up)", &warm)) return false;

  for (int i = 0; i < o.rounds; ++i) {
    const bool direct_first = i % 2 == 0;
    for (int j = 0; j < 2; ++j) {
      const bool direct = (j == 0) == direct_first;
      if (!TimeCommand(
              direct ? crictl_exec : kubectl_exec,
              absl::StrCat(kind, ": round ", i + 1, ": ", direct ? "crictl" : "kubectl", " exec"),
              direct ? &f.exec_direct_ms : &f.exec_kubelet_ms)) {
        return false;
      }
    }
  }
  std::printf("  %-8s exec p50: kubectl %.1f ms, crictl %.1f ms\n", kind.c_str(),
              Percentile(f.exec_kubelet_ms, 50), Percentile(f.exec_direct_ms, 50));
  std::fflush(stdout);

  const int kubelet_port = kubelet::e2e::FreePort(), direct_port = kubelet::e2e::FreePort();
  auto kpf = KubeletProcess::Start(cp.kubectl(),
                                   {"--kubeconfig", cp.admin_kubeconfig(), "port-forward", pod,
                                    "-n", "default", absl::StrCat(kubelet_port, ":8080")},
                                   {}, absl::StrCat(dir, "/", kind, "-kubectl-port-forward.log"));
  auto dpf = KubeletProcess::Start(
      o.crictl,
      {"--runtime-endpoint", endpoint, "port-forward", sandbox, absl::StrCat(direct_port, ":8080")},
      {}, absl::StrCat(dir, "/", kind, "-crictl-port-forward.log"));
  if (!kpf.ok() || !dpf.ok()) {
    std::fprintf(stderr, "%s: port-forward did not start\n", kind.c_str());
    return false;
  }
  bool ok = true;
  if (!ForwardReady(**kpf, kubelet_port) || !ForwardReady(**dpf, direct_port)) {
    std::fprintf(stderr, "%s: port-forward not serving (logs under %s)\n", kind.c_str(),
                 dir.c_str());
    ok = false;
  }
  const long long bytes = static_cast<long long>(o.mib) * 1024 * 1024;
  for (int i = 0; ok && i < o.downloads; ++i) {
    const bool direct_first = i % 2 == 0;
    for (int j = 0; ok && j < 2; ++j) {
      const bool direct = (j == 0) == direct_first;
      ok = Download(direct ? direct_port : kubelet_port, bytes,
                    absl::StrCat(kind, ": ", direct ? "crictl" : "kubectl", " port-forward"),
                    direct ? &f.pf_direct_mibs : &f.pf_kubelet_mibs);
    }
  }
  if (ok) {
    std::printf("  %-8s port-forward p50: kubectl %.1f MiB/s, crictl %.1f MiB/s\n", kind.c_str(),
                Percentile(f.pf_kubelet_mibs, 50), Percentile(f.pf_direct_mibs, 50));
    std::fflush(stdout);
  }
  StopProcess(*kpf);
  StopProcess(*dpf);
  return ok;
}

Phase Run(const Options& o, const std::string& bin, const std::string& kind, const ControlPlane& cp,
          kubelet::cri::RuntimeService& rt, const std::string& endpoint, const std::string& dir) {
  Phase f;
  absl::StatusOr<ApiKubelet> started =
      StartApiKubelet(bin, absl::StrCat("bench-stream-", kind), cp, endpoint, dir);
  if (!started.ok()) {
    std::fprintf(stderr, "%s: %s\n", kind.c_str(), std::string(started.status().message()).c_str());
    return f;
  }
  ApiKubelet& k = *started;
  const std::string pod = absl::StrCat("p-", k.node);
  const std::string script = absl::StrCat(
      "mkdir -p /www && echo ok > /www/index.html && head -c ", o.mib * 1024LL * 1024LL,
      " /dev/zero > /www/big.tmp && mv /www/big.tmp /www/big && httpd -p 8080 -h /www; "
      "trap 'exit 0' TERM; while true; do sleep 1; done");
  nlohmann::json object = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", pod}, {"namespace", "default"}, {"labels", {{"bench", k.node}}}}},
      {"spec",
       {{"nodeName", k.node},
        {"automountServiceAccountToken", false},
        {"terminationGracePeriodSeconds", 2},
        {"containers",
         {{{"name", "main"},
           {"image", "docker.io/library/busybox:1.36"},
           {"command", {"sh", "-c", script}}}}}}}};
  auto created = cp.Kubectl({"create", "-f", "-"}, object.dump());
  bool running = false;
  if (!created.ok() || created->exit_code != 0) {
    std::fprintf(stderr, "%s: create failed\n", kind.c_str());
  } else {
    const absl::Time t = absl::Now();
    while (!running && absl::Now() - t < absl::Minutes(3)) {
      auto r = cp.Kubectl({"get", "pod", pod, "-n", "default", "-o", "jsonpath={.status.phase}"});
      running = r.ok() && r->exit_code == 0 && r->out == "Running";
      if (!running) absl::SleepFor(absl::Milliseconds(200));
    }
    if (!running)
      std::fprintf(stderr, "%s: pod not Running (log: %s)\n", kind.c_str(), k.log.c_str());
  }
  if (running) {
    f.ok = Measure(o, kind, pod, cp, rt, endpoint, dir, f);
    if (!f.ok)
      std::fprintf(stderr, "%s: incomplete (kubelet log: %s)\n", kind.c_str(), k.log.c_str());
  }
  (void)cp.Kubectl({"delete", "pod", pod, "-n", "default", "--wait=false"});
  const absl::Time td = absl::Now();
  while (RunningApp(rt, k.node) > 0 && absl::Now() - td < absl::Minutes(2)) {
    absl::SleepFor(absl::Milliseconds(500));
  }
  StopApiKubelet(k, cp, rt);
  return f;
}

std::string Ratio(double a, double b) {
  return a > 0 && b > 0 ? absl::StrFormat("%.3f", a / b) : std::string("n/a");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <our-kubelet> <upstream-kubelet> [rounds] [MiB] [downloads]\n",
                 argv[0]);
    return 2;
  }
  const std::string ours = argv[1], upstream = argv[2];
  Options o;
  if (argc > 3) o.rounds = std::max(1, std::atoi(argv[3]));
  if (argc > 4) o.mib = std::max(1, std::atoi(argv[4]));
  if (argc > 5) o.downloads = std::max(1, std::atoi(argv[5]));
  const std::string assets = Env("KUBEBUILDER_ASSETS");
  if (assets.empty()) {
    std::fprintf(stderr, "KUBEBUILDER_ASSETS is not set (it holds crictl)\n");
    return 2;
  }
  o.crictl = assets + "/crictl";
  int exit_code = 0;
  absl::StatusOr<ApiBenchEnv> env = LoadApiBenchEnv("kubelet-stream-bench-", &exit_code);
  if (!env.ok()) return exit_code;
  const ControlPlane& cp = *env->cp;
  kubelet::cri::RuntimeService& rt = *env->rt;
  Phase us = Run(o, ours, "ours", cp, rt, env->endpoint, env->dir);
  Phase up = Run(o, upstream, "upstream", cp, rt, env->endpoint, env->dir);

  std::printf("\nexec `true` round trip, %d rounds (client process wall time)\n", o.rounds);
  std::printf("%-10s %-26s %-26s\n", "phase", "kubectl exec p50|max", "crictl exec p50|max");
  for (const auto& [name, p] : {std::pair<const char*, const Phase*>{"upstream", &up},
                                std::pair<const char*, const Phase*>{"ours", &us}}) {
    std::printf("%-10s %-26s %-26s%s\n", name,
                absl::StrFormat("%.1f|%.1f ms", Percentile(p->exec_kubelet_ms, 50),
                                Percentile(p->exec_kubelet_ms, 100))
                    .c_str(),
                absl::StrFormat("%.1f|%.1f ms", Percentile(p->exec_direct_ms, 50),
                                Percentile(p->exec_direct_ms, 100))
                    .c_str(),
                p->ok ? "" : "   (incomplete: see the logs)");
  }
  const double us_e = Percentile(us.exec_kubelet_ms, 50), up_e = Percentile(up.exec_kubelet_ms, 50);
  std::printf("exec p50 (lower is faster): ours/direct %s, upstream/direct %s, ours/upstream %s\n",
              Ratio(us_e, Percentile(us.exec_direct_ms, 50)).c_str(),
              Ratio(up_e, Percentile(up.exec_direct_ms, 50)).c_str(), Ratio(us_e, up_e).c_str());

  std::printf("\nport-forward download, %d MiB x %d (curl size_download / time_total)\n", o.mib,
              o.downloads);
  std::printf("%-10s %-30s %-30s\n", "phase", "kubectl port-forward p50|best",
              "crictl port-forward p50|best");
  for (const auto& [name, p] : {std::pair<const char*, const Phase*>{"upstream", &up},
                                std::pair<const char*, const Phase*>{"ours", &us}}) {
    std::printf("%-10s %-30s %-30s%s\n", name,
                absl::StrFormat("%.1f|%.1f MiB/s", Percentile(p->pf_kubelet_mibs, 50),
                                Percentile(p->pf_kubelet_mibs, 100))
                    .c_str(),
                absl::StrFormat("%.1f|%.1f MiB/s", Percentile(p->pf_direct_mibs, 50),
                                Percentile(p->pf_direct_mibs, 100))
                    .c_str(),
                p->ok ? "" : "   (incomplete: see the logs)");
  }
  const double us_t = Percentile(us.pf_kubelet_mibs, 50), up_t = Percentile(up.pf_kubelet_mibs, 50);
  std::printf(
      "port-forward p50 (higher is faster): ours/direct %s, upstream/direct %s, ours/upstream %s\n",
      Ratio(us_t, Percentile(us.pf_direct_mibs, 50)).c_str(),
      Ratio(up_t, Percentile(up.pf_direct_mibs, 50)).c_str(), Ratio(us_t, up_t).c_str());
  return us.ok && up.ok ? 0 : 1;
}
