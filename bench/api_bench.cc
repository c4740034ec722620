// Macro benchmark: the kubelet HTTP API and the prober, each against a baseline measured in the
// same run. Needs a running containerd (bench/run-api.sh starts one with the e2e harness).
//
//   /pods         p50/p99 of GET /pods on the read-only port with N pods running, over the p50 of
//                 GET /healthz on the same server (the cost of the transport alone).
//   /stats        p50 of GET /stats/summary with N pods, over the p50 of the CRI calls it needs at
//                 the least (ListContainerStats + ListPodSandboxStats issued directly).
//   probes        kubelet CPU (% of one core) with P pods each probed by an httpGet liveness and
//                 readiness probe every second (2P probes/s), against the same P pods without
//                 probes; reported as extra CPU per 100 probes/s and as a ratio.
//
// Usage: api_bench <kubelet-binary> [N=110] [P=50]   (env as the e2e tests: KUBELET_E2E_*;
// N = 0 or P = 0 skips that part)
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/bench_util.h"
#include "cri/remote/remote_runtime.h"
#include "test/e2e/kubelet_process.h"

namespace {

using kubelet::e2e::HttpGet;
using kubelet::e2e::HttpResult;
using kubelet::e2e::KubeletProcess;
using namespace kubelet::bench;  // NOLINT

std::string Manifest(const std::string& name, bool probes) {
  std::string m = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
                  "\nspec:\n  terminationGracePeriodSeconds: 2\n  containers:\n  - name: main\n"
                  "    image: docker.io/library/busybox:1.36\n"
                  "    command: [\"sh\", \"-c\", \"mkdir -p /www && echo ok > /www/healthz && "
                  "exec httpd -f -p 8080 -h /www\"]\n";
  if (probes) {
    for (const char* kind : {"livenessProbe", "readinessProbe"}) {
      m += absl::StrCat("    ", kind,
                        ":\n      httpGet:\n        path: /healthz\n        port: 8080\n"
                        "      periodSeconds: 1\n      failureThreshold: 30\n");
    }
  }
  return m;
}

struct Run {
  std::string node, dir, manifests;
  int ro_port = 0;
  std::unique_ptr<KubeletProcess> kubelet;
};

// Starts a kubelet with `n` pods (named <i>-<node>) and waits until all run.
bool StartRun(const std::string& bin, const std::string& endpoint, const std::string& base,
              const std::string& node, int n, bool probes, kubelet::cri::RuntimeService& rt,
              Run* run) {
  run->node = node;
  run->dir = base + "/" + node;
  run->manifests = run->dir + "/manifests";
  std::filesystem::create_directories(run->manifests);
  run->ro_port = kubelet::e2e::FreePort();
  std::string cfg = run->dir + "/kubelet.yaml";
  kubelet::e2e::WriteFile(
      cfg,
      absl::StrCat("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                   "containerRuntimeEndpoint: ",
                   endpoint, "\nstaticPodPath: ", run->manifests,
                   "\nhealthzPort: ", kubelet::e2e::FreePort(), "\nreadOnlyPort: ", run->ro_port,
                   "\nfailSwapOn: false\nmaxPods: 250\n", kubelet::e2e::StandaloneServingConfig()));
  auto k = KubeletProcess::Start(bin,
                                 {"--config", cfg, "--hostname-override", node, "--root-dir",
                                  run->dir + "/root", "--cert-dir", run->dir + "/pki"},
                                 {}, run->dir + "/kubelet.log");
  if (!k.ok() || !(*k)->WaitForLog("\"Started healthz server\"", absl::Seconds(60))) {
    std::fprintf(stderr, "kubelet did not start (%s)\n", (run->dir + "/kubelet.log").c_str());
    return false;
  }
  run->kubelet = std::move(*k);
  std::string staging = run->dir + "/staging";
  std::filesystem::create_directories(staging);
  for (int i = 0; i < n; ++i) {
    std::string f = absl::StrCat("/p", i, ".yaml");
    kubelet::e2e::WriteFile(staging + f, Manifest(absl::StrCat("p", i), probes));
    std::filesystem::rename(staging + f, run->manifests + f);
  }
  absl::Time t0 = absl::Now();
  while (RunningApp(rt, node) < n && absl::Now() - t0 < absl::Minutes(10)) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  if (RunningApp(rt, node) < n) {
    std::fprintf(stderr, "only %d of %d pods running\n", RunningApp(rt, node), n);
    return false;
  }
  absl::SleepFor(absl::Seconds(5));  // settle: first syncs, first probes
  return true;
}

void StopRun(Run* run, kubelet::cri::RuntimeService& rt) {
  for (const auto& e : std::filesystem::directory_iterator(run->manifests)) {
    std::filesystem::remove(e.path());
  }
  absl::Time t0 = absl::Now();
  while (ReadySandboxes(rt, run->node) > 0 && absl::Now() - t0 < absl::Minutes(5)) {
    absl::SleepFor(absl::Milliseconds(200));
  }
  run->kubelet->Signal(SIGTERM);
  run->kubelet->Wait(absl::Seconds(30));
}

// Latencies (ms) of `count` sequential GETs of `path`; `ok` false when one failed.
std::vector<double> Times(int port, const std::string& path, int count, bool* ok,
                          size_t* bytes = nullptr) {
  std::vector<double> out;
  for (int i = 0; i < count; ++i) {
    absl::Time t = absl::Now();
    HttpResult r = HttpGet(port, path);
    out.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
    if (r.status != 200) *ok = false;
    if (bytes) *bytes = r.body.size();
  }
  return out;
}

double CpuPercent(pid_t pid, absl::Duration window) {
  double c0 = Usage(pid).first;
  absl::SleepFor(window);
  double c1 = Usage(pid).first;
  return (c1 - c0) / absl::ToDoubleSeconds(window) * 100.0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <kubelet-binary> [N] [P]\n", argv[0]);
    return 2;
  }
  const std::string bin = argv[1];
  const int n = argc > 2 ? std::atoi(argv[2]) : 110;
  const int p = argc > 3 ? std::atoi(argv[3]) : 50;
  const std::string endpoint = Env("KUBELET_E2E_RUNTIME_ENDPOINT");
  if (endpoint.empty()) {
    std::fprintf(stderr, "KUBELET_E2E_RUNTIME_ENDPOINT is not set\n");
    return 2;
  }
  auto rt = kubelet::cri::NewRemoteRuntimeService(endpoint, absl::Minutes(2));
  if (!rt.ok()) return 1;
  const std::string base = kubelet::e2e::MakeTempDir("kubelet-api-bench-");

  // --- /pods and /stats/summary with N pods (N = 0 skips) --------------------------------------
  if (n > 0) {
    Run run;
    if (!StartRun(bin, endpoint, base, absl::StrCat("apibench", n), n, false, **rt, &run)) {
      return 1;
    }
    bool ok = true;
    size_t pods_bytes = 0;
    std::vector<double> healthz = Times(run.ro_port, "/healthz", 200, &ok);
    std::vector<double> pods = Times(run.ro_port, "/pods", 200, &ok, &pods_bytes);
    std::printf(
        "/pods with %d pods: p50 %.2f ms, p99 %.2f ms (%zu bytes); /healthz p50 %.3f ms; "
        "ratio p50 %.1f%s\n",
        n, Percentile(pods, 50), Percentile(pods, 99), pods_bytes, Percentile(healthz, 50),
        Percentile(pods, 50) / Percentile(healthz, 50), ok ? "" : "  (some requests failed)");
    bool stats_ok = true;
    double cpu0 = Usage(run.kubelet->pid()).first;
    std::vector<double> stats = Times(run.ro_port, "/stats/summary", 30, &stats_ok);
    double cpu1 = Usage(run.kubelet->pid()).first;
    std::vector<double> floor;
    for (int i = 0; i < 30; ++i) {
      absl::Time t = absl::Now();
      (void)(**rt).ListContainerStats(nullptr);
      (void)(**rt).ListPodSandboxStats(nullptr);
      floor.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
    }
    if (stats_ok) {
      std::printf(
          "/stats/summary with %d pods: p50 %.2f ms, p99 %.2f ms, kubelet CPU %.2f ms per "
          "call; CRI stats floor p50 %.2f ms; ratio p50 %.2f\n",
          n, Percentile(stats, 50), Percentile(stats, 99), (cpu1 - cpu0) * 1000 / 30,
          Percentile(floor, 50), Percentile(stats, 50) / Percentile(floor, 50));
    } else {
      std::printf("/stats/summary: not served (skipped)\n");
    }
    std::fflush(stdout);
    StopRun(&run, **rt);
  }

  // --- probe overhead ----------------------------------------------------------------------------
  if (p <= 0) return 0;
  double cpu_plain = 0, cpu_probed = 0;
  const absl::Duration window = absl::Seconds(30);
  {
    Run run;
    if (!StartRun(bin, endpoint, base, absl::StrCat("plain", p), p, false, **rt, &run)) return 1;
    cpu_plain = CpuPercent(run.kubelet->pid(), window);
    StopRun(&run, **rt);
  }
  {
    Run run;
    if (!StartRun(bin, endpoint, base, absl::StrCat("probed", p), p, true, **rt, &run)) return 1;
    cpu_probed = CpuPercent(run.kubelet->pid(), window);
    StopRun(&run, **rt);
  }
  const double probes_per_s = 2.0 * p;
  std::printf(
      "probes: %d pods, %.0f httpGet probes/s: kubelet CPU %.2f%% of a core with probes, "
      "%.2f%% without; +%.2f%% per 100 probes/s; ratio %.2f\n",
      p, probes_per_s, cpu_probed, cpu_plain, (cpu_probed - cpu_plain) * 100.0 / probes_per_s,
      cpu_plain > 0 ? cpu_probed / cpu_plain : 0.0);
  return 0;
}
