// Macro benchmark: static pod start-up through the kubelet versus the raw CRI floor, plus the
// kubelet's idle footprint and reaction latency. Needs a running containerd (the e2e harness's;
// bench/run-pod-start.sh starts one) and prints ratios measured in the same run:
//
//   floor(N)    RunPodSandbox + CreateContainer + StartContainer for N pods issued directly, at
//               the best of several concurrency levels: the least any kubelet could take.
//   kubelet(N)  N manifests moved into staticPodPath at once -> every app container running.
//   ratio       kubelet(N) / floor(N).
//   idle        kubelet RSS and CPU (% of one core) over an idle window with N pods running.
//   reaction    manifest written -> the kubelet's RunPodSandbox call (from its own log line);
//               container exit -> the restart's CreateContainer call.
//
// Usage: pod_start_bench <kubelet-binary> [N ...]   (env as the e2e tests: KUBELET_E2E_*)
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/bench_util.h"
#include "cri/remote/remote_runtime.h"
#include "test/e2e/kubelet_process.h"

namespace {

using kubelet::e2e::KubeletProcess;
using namespace kubelet::bench;  // NOLINT

std::string PodManifest(const std::string& name) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\nspec:\n  terminationGracePeriodSeconds: 5\n  containers:\n  - name: main\n"
         "    image: docker.io/library/busybox:1.36\n"
         "    command: [\"sh\", \"-c\", \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n";
}

// Timestamp of the first klog line after `from` containing `text` (klog's MMDD HH:MM:SS.micro in
// local time, today).
std::optional<absl::Time> LogTime(const std::string& log, const std::string& text,
                                  size_t from = 0) {
  size_t p = log.find(text, from);
  if (p == std::string::npos) return std::nullopt;
  size_t line = log.rfind('\n', p);
  line = line == std::string::npos ? 0 : line + 1;
  std::string head = log.substr(line + 1, 20);  // "MMDD HH:MM:SS.uuuuuu"
  absl::Time now = absl::Now();
  absl::TimeZone tz = absl::LocalTimeZone();
  absl::CivilSecond today = absl::ToCivilSecond(now, tz);
  int mon = std::stoi(head.substr(0, 2)), day = std::stoi(head.substr(2, 2));
  int hh = std::stoi(head.substr(5, 2)), mm = std::stoi(head.substr(8, 2)),
      ss = std::stoi(head.substr(11, 2));
  int us = std::stoi(head.substr(14, 6));
  absl::CivilSecond cs(today.year(), mon, day, hh, mm, ss);
  return absl::FromCivil(cs, tz) + absl::Microseconds(us);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <kubelet-binary> [N ...]\n", argv[0]);
    return 2;
  }
  std::string kubelet_bin = argv[1];
  std::vector<int> sizes;
  for (int i = 2; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {30, 110};
  std::string endpoint = Env("KUBELET_E2E_RUNTIME_ENDPOINT");
  if (endpoint.empty()) {
    std::fprintf(stderr, "KUBELET_E2E_RUNTIME_ENDPOINT is not set (start the harness)\n");
    return 2;
  }
  auto rt = kubelet::cri::NewRemoteRuntimeService(endpoint, absl::Minutes(2));
  if (!rt.ok()) {
    std::fprintf(stderr, "%s\n", std::string(rt.status().message()).c_str());
    return 1;
  }
  std::string dir = kubelet::e2e::MakeTempDir("kubelet-bench-");
  std::printf("%-8s %-12s %-12s %-8s %-10s %-12s\n", "pods", "floor_ms", "kubelet_ms", "ratio",
              "idle_rss", "idle_cpu_%");
  for (int n : sizes) {
    int best_conc = 0;
    absl::Duration floor = BestRawFloor(**rt, n, dir + "/floor-logs", &best_conc);
    // The kubelet.
    std::string node = absl::StrCat("bench", n);
    std::string manifests = absl::StrCat(dir, "/manifests-", n);
    std::string staging = absl::StrCat(dir, "/staging-", n);
    std::filesystem::create_directories(manifests);
    std::filesystem::create_directories(staging);
    std::string cfg = absl::StrCat(dir, "/kubelet-", n, ".yaml");
    kubelet::e2e::WriteFile(cfg, absl::StrCat("apiVersion: kubelet.config.k8s.io/v1beta1\n"
                                              "kind: KubeletConfiguration\n"
                                              "containerRuntimeEndpoint: ",
                                              endpoint,
                                              "\n"
                                              "staticPodPath: ",
                                              manifests,
                                              "\n"
                                              "healthzPort: ",
                                              kubelet::e2e::FreePort(),
                                              "\n"
                                              "failSwapOn: false\nmaxPods: 250\n",
                                              kubelet::e2e::StandaloneServingConfig()));
    auto k = KubeletProcess::Start(
        kubelet_bin,
        {"--config", cfg, "--hostname-override", node, "--root-dir", absl::StrCat(dir, "/root-", n),
         "--cert-dir", absl::StrCat(dir, "/pki-", n), "--v=4"},
        {}, absl::StrCat(dir, "/kubelet-", n, ".log"));
    if (!k.ok() || !(*k)->WaitForLog("\"Started healthz server\"", absl::Seconds(60))) {
      std::fprintf(stderr, "kubelet did not start\n");
      return 1;
    }
    for (int i = 0; i < n; ++i) {
      kubelet::e2e::WriteFile(absl::StrCat(staging, "/p", i, ".yaml"),
                              PodManifest(absl::StrCat("p", i)));
    }
    absl::Time t0 = absl::Now();
    for (int i = 0; i < n; ++i) {
      std::filesystem::rename(absl::StrCat(staging, "/p", i, ".yaml"),
                              absl::StrCat(manifests, "/p", i, ".yaml"));
    }
    while (RunningApp(**rt, node) < n && absl::Now() - t0 < absl::Minutes(10)) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    absl::Duration kd = absl::Now() - t0;
    // Idle footprint.
    absl::SleepFor(absl::Seconds(5));
    auto [cpu0, rss0] = Usage((*k)->pid());
    absl::Duration window = absl::Seconds(30);
    absl::SleepFor(window);
    auto [cpu1, rss1] = Usage((*k)->pid());
    double cpu_pct = (cpu1 - cpu0) / absl::ToDoubleSeconds(window) * 100.0;
    std::printf(
        "%-8d %-12.0f %-12.0f %-8.2f %-10s %-12.3f   (floor concurrency %d, RssAnon %ld KiB)\n", n,
        absl::ToDoubleMilliseconds(floor), absl::ToDoubleMilliseconds(kd),
        absl::ToDoubleMilliseconds(kd) / absl::ToDoubleMilliseconds(floor),
        absl::StrCat(rss1 / 1024, "MiB").c_str(), cpu_pct, best_conc, RssAnon((*k)->pid()));
    std::fflush(stdout);

    // Reaction latency, once, on the smallest N: a new manifest -> its RunPodSandbox.
    if (n == sizes.front()) {
      std::string log_before = (*k)->Log();
      kubelet::e2e::WriteFile(staging + "/react.yaml", PodManifest("react"));
      absl::Time written = absl::Now();
      std::filesystem::rename(staging + "/react.yaml", manifests + "/react.yaml");
      std::string marker = "\"Creating PodSandbox for pod\" pod=\"react-" + node + "_default";
      (*k)->WaitForLog(marker, absl::Seconds(30));
      auto t = LogTime((*k)->Log(), marker, log_before.size());
      if (t) {
        std::printf("reaction: manifest written -> RunPodSandbox: %.2f ms\n",
                    absl::ToDoubleMilliseconds(*t - written));
      }
      // Container exit -> restart issued.
      while (RunningApp(**rt, "react-" + node) < 1) absl::SleepFor(absl::Milliseconds(20));
      runtime::v1::ContainerFilter f;
      (*f.mutable_label_selector())["io.kubernetes.pod.name"] = "react-" + node;
      auto cs = (**rt).ListContainers(&f);
      if (cs.ok() && !cs->empty()) {
        size_t before = (*k)->Log().size();
        absl::Time stop_at = absl::Now();
        (void)(**rt).StopContainer((*cs)[0].id(), 0);
        absl::Time exited = absl::Now();

        (*k)->WaitForLog("attempt=1", absl::Seconds(30));
        auto rt_time = LogTime((*k)->Log(), "attempt=1", before);
        if (rt_time) {
          std::printf(
              "reaction: container exit -> restart CreateContainer: %.2f ms "
              "(stop call took %.2f ms)\n",
              absl::ToDoubleMilliseconds(*rt_time - exited),
              absl::ToDoubleMilliseconds(exited - stop_at));
        }
      }
    }
    // Tear down: remove the manifests; the kubelet stops the pods.
    for (const auto& e : std::filesystem::directory_iterator(manifests)) {
      std::filesystem::remove(e.path());
    }
    absl::Time td = absl::Now();
    while (ReadySandboxes(**rt, node) > 0 && absl::Now() - td < absl::Minutes(5)) {
      absl::SleepFor(absl::Milliseconds(200));
    }
    (*k)->Signal(SIGTERM);
    (*k)->Wait(absl::Seconds(30));
  }
  return 0;
}
