// Macro benchmark: pods created through the API server, our kubelet against the upstream v1.28.7
// kubelet on the same containerd and the same control plane, in the same run, against the raw
// CRI floor. For each N:
//
//   floor(N)     RunPodSandbox + CreateContainer + StartContainer for N pods issued directly
//                over CRI at the best of several concurrency levels.
//   <kubelet>(N) N pods (spec.nodeName set) created with one `kubectl create` -> every one
//                reports phase Running in the API server (what a user waits for).
//   writes/pod   the kubelet's POST/PUT/PATCH/DELETE requests to the API server (its
//                rest_client_requests_total) from just before the create until all Running,
//                divided by N (status patches, events, node status and Lease in that window);
//                reqs/pod counts every method.
//   idle         RSS (VmRSS and RssAnon) and CPU (% of one core over 30 s) with the N pods
//                running.
//
// Both kubelets get the same KubeletConfiguration (cgroupfs, anonymous + AlwaysAllow on their
// port so /metrics can be scraped, clusterDNS 10.96.0.10 as kubeadm sets it) and a node identity of
// their own from the control-plane harness; they run one after the other, never together. Figures
// are printed, never asserted.
//
// Usage: api_pods_bench <our-kubelet> <upstream-kubelet> [N ...]
// Env: KUBELET_E2E_* (the containerd harness) and KUBELET_CP_ENV_FILE (the control plane).
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "bench/api_bench_util.h"
#include "bench/bench_util.h"
#include "nlohmann/json.hpp"
#include "test/e2e/controlplane.h"
#include "test/e2e/kubelet_process.h"

namespace {

using kubelet::e2e::ControlPlane;
using kubelet::e2e::KubeletProcess;
using namespace kubelet::bench;  // NOLINT

struct Result {
  bool ok = false;
  absl::Duration to_running;
  double writes_per_pod = 0, requests_per_pod = 0;
  long rss_kib = 0, rss_anon_kib = 0;
  double idle_cpu_pct = 0;
  std::string by_method;  // "POST=n PATCH=n ..." over the same window
};

// Sum of rest_client_requests_total by method, from a /metrics text.
// The cluster DNS a kubeadm node is configured with. Without it every sync of a pod records a
// MissingClusterDNS warning (a POST, then a PATCH per repeat) on both kubelets, which is a
// misconfigured node's noise, not the cost of a pod start.
constexpr char kClusterDns[] = "clusterDNS:\n- 10.96.0.10\nclusterDomain: cluster.local\n";

std::map<std::string, double> RequestsByMethod(const std::string& metrics) {
  std::map<std::string, double> out;
  for (absl::string_view line : absl::StrSplit(metrics, '\n')) {
    if (!absl::StartsWith(line, "rest_client_requests_total{")) continue;
    size_t m = line.find("method=\"");
    size_t close = line.rfind('}');
    if (m == absl::string_view::npos || close == absl::string_view::npos) continue;
    size_t end = line.find('"', m + 8);
    std::string method(line.substr(m + 8, end - m - 8));
    double v = 0;
    if (absl::SimpleAtod(absl::StripAsciiWhitespace(line.substr(close + 1)), &v)) out[method] += v;
  }
  return out;
}

std::map<std::string, double> Scrape(int port) {
  auto r = kubelet::e2e::RunCommand(
      {"curl", "-sk", "--max-time", "10", absl::StrCat("https://127.0.0.1:", port, "/metrics")});
  if (!r.ok() || r->exit_code != 0) return {};
  return RequestsByMethod(r->out);
}

std::string PodList(const std::string& node, int n) {
  nlohmann::json items = nlohmann::json::array();
  for (int i = 0; i < n; ++i) {
    items.push_back(
        {{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata",
          {{"name", absl::StrCat("p", i, "-", node)},
           {"namespace", "default"},
           {"labels", {{"bench", node}}}}},
         {"spec",
          {{"nodeName", node},
           {"automountServiceAccountToken", false},
           {"terminationGracePeriodSeconds", 5},
           {"containers",
            {{{"name", "main"},
              {"image", "docker.io/library/busybox:1.36"},
              {"command", {"sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"}}}}}}}});
  }
  return nlohmann::json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump();
}

// Pods of `node` in phase Running, per the API server; -1 when the list failed. One GET of the
// pod list with curl as admin: a kubectl run per poll costs about a tenth of a second of CPU,
// which polling in a loop takes from the runtime and the kubelet being measured.
int RunningInApi(const ControlPlane& cp, const std::string& node) {
  const std::string pki = cp.dir() + "/pki/";
  auto r = kubelet::e2e::RunCommand(
      {"curl", "-s", "--max-time", "10", "--cacert", cp.ca_file(), "--cert", pki + "admin.crt",
       "--key", pki + "admin.key",
       absl::StrCat(cp.server(), "/api/v1/namespaces/default/pods?labelSelector=bench%3D", node)});
  if (!r.ok() || r->exit_code != 0) return -1;
  nlohmann::json j = nlohmann::json::parse(r->out, nullptr, false);
  if (!j.is_object()) return -1;
  int running = 0;
  for (const auto& p : j.value("items", nlohmann::json::array())) {
    if (p["status"].value("phase", "") == "Running") ++running;
  }
  return running;
}

Result RunKubelet(const std::string& bin, const std::string& kind, int n, const ControlPlane& cp,
                  kubelet::cri::RuntimeService& rt, const std::string& endpoint,
                  const std::string& dir) {
  Result res;
  absl::StatusOr<ApiKubelet> started =
      StartApiKubelet(bin, absl::StrCat("bench-", kind, "-", n), cp, endpoint, dir, kClusterDns);
  if (!started.ok()) {
    std::fprintf(stderr, "%s: %s\n", kind.c_str(), std::string(started.status().message()).c_str());
    return res;
  }
  ApiKubelet& k = *started;
  const std::string& node = k.node;
  const int port = k.port;
  absl::SleepFor(absl::Seconds(5));  // settle: first status rounds, image list
  std::map<std::string, double> before = Scrape(port);

  const std::string list = PodList(node, n);
  absl::Time t0 = absl::Now();
  auto created = cp.Kubectl({"create", "-f", "-"}, list, absl::Minutes(2));
  if (!created.ok() || created->exit_code != 0) {
    std::fprintf(stderr, "%s: kubectl create failed: %s\n", kind.c_str(),
                 created.ok() ? created->err.c_str() : "");
  } else {
    while (RunningInApi(cp, node) < n && absl::Now() - t0 < absl::Minutes(10)) {
      absl::SleepFor(absl::Milliseconds(100));
    }
    res.to_running = absl::Now() - t0;
    res.ok = RunningInApi(cp, node) == n;
    std::map<std::string, double> after = Scrape(port);
    double writes = 0, all = 0;
    for (const auto& [method, v] : after) {
      double d = v - (before.count(method) ? before[method] : 0);
      all += d;
      if (d > 0) absl::StrAppend(&res.by_method, method, "=", d, " ");
      if (method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE") {
        writes += d;
      }
    }
    res.writes_per_pod = writes / n;
    res.requests_per_pod = all / n;
    // Idle with the pods running.
    absl::SleepFor(absl::Seconds(5));
    auto [cpu0, rss0] = Usage(k.process->pid());
    const absl::Duration window = absl::Seconds(30);
    absl::SleepFor(window);
    auto [cpu1, rss1] = Usage(k.process->pid());
    res.idle_cpu_pct = (cpu1 - cpu0) / absl::ToDoubleSeconds(window) * 100.0;
    res.rss_kib = rss1;
    res.rss_anon_kib = RssAnon(k.process->pid());
  }

  // Tear down: delete the pods through the API, let the kubelet stop them, then stop it.
  (void)cp.Kubectl({"delete", "pods", "-n", "default", "-l", "bench=" + node, "--wait=false"});
  absl::Time td = absl::Now();
  while ((RunningApp(rt, node) > 0 || RunningInApi(cp, node) > 0) &&
         absl::Now() - td < absl::Minutes(3)) {
    absl::SleepFor(absl::Milliseconds(500));
  }
  StopApiKubelet(k, cp, rt);
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<KubeletPairArgs> args = ParseKubeletPairArgs(argc, argv, {30, 110});
  if (!args) return 2;
  const std::string &ours = args->ours, &upstream = args->upstream;
  const std::vector<int>& sizes = args->sizes;
  int exit_code = 0;
  absl::StatusOr<ApiBenchEnv> env = LoadApiBenchEnv("kubelet-api-pods-bench-", &exit_code);
  if (!env.ok()) return exit_code;
  const ControlPlane& cp = *env->cp;
  kubelet::cri::RuntimeService& rt = *env->rt;
  const std::string& endpoint = env->endpoint;
  const std::string& dir = env->dir;
  std::printf("%-5s %-9s %-12s %-9s %-9s %-10s %-16s %-16s %-18s %-14s\n", "pods", "floor_ms",
              "upstream_ms", "ours_ms", "ours/up", "ours/floor", "writes/pod up|us",
              "reqs/pod up|us", "rss_MiB up|us (%)", "idle_cpu% up|us");
  for (int n : sizes) {
    absl::Duration floor = BestRawFloor(rt, n, dir + "/floor-logs");
    Result up = RunKubelet(upstream, "upstream", n, cp, rt, endpoint, dir);
    Result us = RunKubelet(ours, "ours", n, cp, rt, endpoint, dir);
    auto ms = [](absl::Duration d) { return absl::ToDoubleMilliseconds(d); };
    std::printf("%-5d %-9.0f %-12.0f %-9.0f %-9.2f %-10.2f %-16s %-16s %-18s %-14s%s\n", n,
                ms(floor), ms(up.to_running), ms(us.to_running),
                ms(us.to_running) / ms(up.to_running), ms(us.to_running) / ms(floor),
                absl::StrFormat("%.2f|%.2f", up.writes_per_pod, us.writes_per_pod).c_str(),
                absl::StrFormat("%.2f|%.2f", up.requests_per_pod, us.requests_per_pod).c_str(),
                absl::StrFormat("%ld|%ld (%.0f%%)", up.rss_kib / 1024, us.rss_kib / 1024,
                                up.rss_kib > 0 ? 100.0 * us.rss_kib / up.rss_kib : 0.0)
                    .c_str(),
                absl::StrFormat("%.2f|%.2f", up.idle_cpu_pct, us.idle_cpu_pct).c_str(),
                up.ok && us.ok ? "" : "   (a run did not reach all Running: see the logs)");
    std::printf("      RssAnon KiB: upstream %ld, ours %ld\n", up.rss_anon_kib, us.rss_anon_kib);
    std::printf("      requests by method: upstream %s; ours %s\n", up.by_method.c_str(),
                us.by_method.c_str());
    std::fflush(stdout);
  }
  return 0;
}
