// Macro benchmark: how long a configMap update takes to reach the file in a running pod's
// volume, against the arrival of the same update on a watch, for our kubelet and the upstream
// v1.28.7 kubelet on the same containerd and control plane, in the same run.
//
// For each kubelet: one pod (spec.nodeName set) with a configMap volume runs; then, R times,
// the configMap's value is patched (`kubectl patch`, t0 taken just before) while
//   watch   a `kubectl get configmap --watch-only` started beforehand prints the new value
//           (what any watcher of the API server sees: the floor of the kubelet's reaction);
//   file    <root-dir>/pods/<uid>/volumes/kubernetes.io~configmap/cfg/k, polled every 2 ms on
//           the host, holds the new value.
// Printed per kubelet: p50 and max of watch - t0, file - t0, and file - watch (the kubelet's
// own delay); then ours / upstream. Both use the default configMapAndSecretChangeDetectionStrategy
// (Watch) and syncFrequency (1 m): upstream republishes a volume at the pod's next periodic sync;
// ours syncs the pods that reference an object when its watch sees it change. Figures are
// printed, never asserted.
//
// Usage: configmap_update_bench <our-kubelet> <upstream-kubelet> [rounds (default 5)]
// Env: KUBELET_E2E_* (the containerd harness) and KUBELET_CP_ENV_FILE (the control plane).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "bench/api_bench_util.h"
#include "bench/bench_util.h"
#include "nlohmann/json.hpp"

namespace {

using kubelet::e2e::ControlPlane;
using namespace kubelet::bench;  // NOLINT

struct Figures {
  bool ok = false;
  std::vector<double> watch_ms, file_ms, delay_ms;
};

// Lines a `kubectl get --watch-only` prints, with their arrival times.
class WatchReader {
 public:
  WatchReader(const ControlPlane& cp, const std::string& cm) {
    int fds[2];
    if (pipe(fds) != 0) return;
    const std::vector<std::string> args = {cp.kubectl(),
                                           "--kubeconfig",
                                           cp.admin_kubeconfig(),
                                           "get",
                                           "configmap",
                                           cm,
                                           "-n",
                                           "default",
                                           "--watch-only",
                                           "-o",
                                           "jsonpath={.data.k}{\"\\n\"}"};
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
      std::vector<char*> argv;
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    if (pid_ < 0) {
      close(fds[0]);
      return;
    }
    fd_ = fds[0];
    thread_ = std::thread([this] {
      std::string pending;
      char buf[4096];
      ssize_t n;
      while ((n = read(fd_, buf, sizeof(buf))) > 0) {
        const absl::Time now = absl::Now();
        pending.append(buf, static_cast<size_t>(n));
        size_t nl;
        while ((nl = pending.find('\n')) != std::string::npos) {
          absl::MutexLock lock(&mu_);
          seen_.emplace(pending.substr(0, nl), now);
          pending.erase(0, nl + 1);
        }
      }
    });
  }
  ~WatchReader() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) close(fd_);
  }
  // When `value` arrived (InfinitePast when not yet).
  absl::Time Seen(const std::string& value) {
    absl::MutexLock lock(&mu_);
    auto it = seen_.find(value);
    return it == seen_.end() ? absl::InfinitePast() : it->second;
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::thread thread_;
  absl::Mutex mu_;
  std::map<std::string, absl::Time> seen_ ABSL_GUARDED_BY(mu_);
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Figures Run(const std::string& bin, const std::string& kind, int rounds, const ControlPlane& cp,
            kubelet::cri::RuntimeService& rt, const std::string& endpoint, const std::string& dir) {
  Figures f;
  absl::StatusOr<ApiKubelet> started =
      StartApiKubelet(bin, absl::StrCat("bench-cm-", kind), cp, endpoint, dir);
  if (!started.ok()) {
    std::fprintf(stderr, "%s: %s\n", kind.c_str(), std::string(started.status().message()).c_str());
    return f;
  }
  ApiKubelet& k = *started;
  const std::string cm = absl::StrCat("cm-", k.node);
  const std::string pod = absl::StrCat("p-", k.node);
  nlohmann::json objects = {
      {"apiVersion", "v1"},
      {"kind", "List"},
      {"items",
       {{{"apiVersion", "v1"},
         {"kind", "ConfigMap"},
         {"metadata", {{"name", cm}, {"namespace", "default"}}},
         {"data", {{"k", "v0"}}}},
        {{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata", {{"name", pod}, {"namespace", "default"}, {"labels", {{"bench", k.node}}}}},
         {"spec",
          {{"nodeName", k.node},
           {"automountServiceAccountToken", false},
           {"terminationGracePeriodSeconds", 2},
           {"volumes", {{{"name", "cfg"}, {"configMap", {{"name", cm}}}}}},
           {"containers",
            {{{"name", "main"},
              {"image", "docker.io/library/busybox:1.36"},
              {"command", {"sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"}},
              {"volumeMounts", {{{"name", "cfg"}, {"mountPath", "/cfg"}}}}}}}}}}}}};
  auto created = cp.Kubectl({"create", "-f", "-"}, objects.dump());
  std::string uid;
  if (!created.ok() || created->exit_code != 0) {
    std::fprintf(stderr, "%s: create failed\n", kind.c_str());
  } else {
    const absl::Time t = absl::Now();
    while (absl::Now() - t < absl::Minutes(3)) {
      auto r = cp.Kubectl({"get", "pod", pod, "-n", "default", "-o", "json"});
      nlohmann::json j = r.ok() && r->exit_code == 0 ? nlohmann::json::parse(r->out, nullptr, false)
                                                     : nlohmann::json();
      if (j.is_object() && j["status"].value("phase", "") == "Running") {
        uid = j["metadata"].value("uid", "");
        break;
      }
      absl::SleepFor(absl::Milliseconds(200));
    }
  }
  const std::string file =
      absl::StrCat(k.root_dir, "/pods/", uid, "/volumes/kubernetes.io~configmap/cfg/k");
  if (uid.empty() || ReadAll(file) != "v0") {
    std::fprintf(stderr, "%s: pod not running with its volume (log: %s)\n", kind.c_str(),
                 k.log.c_str());
  } else {
    WatchReader watch(cp, cm);
    absl::SleepFor(absl::Seconds(2));  // the watch is established
    f.ok = true;
    for (int i = 1; i <= rounds; ++i) {
      const std::string value = absl::StrCat("v", i);
      const absl::Time t0 = absl::Now();
      auto patched = cp.Kubectl({"patch", "configmap", cm, "-n", "default", "--type=merge", "-p",
                                 nlohmann::json{{"data", {{"k", value}}}}.dump()});
      if (!patched.ok() || patched->exit_code != 0) {
        f.ok = false;
        break;
      }
      absl::Time file_at = absl::InfinitePast();
      while (absl::Now() - t0 < absl::Minutes(3)) {
        if (ReadAll(file) == value) {
          file_at = absl::Now();
          break;
        }
        absl::SleepFor(absl::Milliseconds(2));
      }
      absl::Time watch_at = watch.Seen(value);
      for (int w = 0; w < 500 && watch_at == absl::InfinitePast(); ++w) {
        absl::SleepFor(absl::Milliseconds(10));
        watch_at = watch.Seen(value);
      }
      if (file_at == absl::InfinitePast() || watch_at == absl::InfinitePast()) {
        std::fprintf(stderr, "%s: round %d: update not seen (file %s, watch %s)\n", kind.c_str(), i,
                     file_at == absl::InfinitePast() ? "no" : "yes",
                     watch_at == absl::InfinitePast() ? "no" : "yes");
        f.ok = false;
        break;
      }
      const double watch_ms = absl::ToDoubleMilliseconds(watch_at - t0);
      const double file_ms = absl::ToDoubleMilliseconds(file_at - t0);
      f.watch_ms.push_back(watch_ms);
      f.file_ms.push_back(file_ms);
      f.delay_ms.push_back(file_ms - watch_ms);
      std::printf("  %-8s round %d: watch %.0f ms, file %.0f ms\n", kind.c_str(), i, watch_ms,
                  file_ms);
      std::fflush(stdout);
    }
  }
  (void)cp.Kubectl({"delete", "pod", pod, "-n", "default", "--wait=false"});
  const absl::Time td = absl::Now();
  while (RunningApp(rt, k.node) > 0 && absl::Now() - td < absl::Minutes(2)) {
    absl::SleepFor(absl::Milliseconds(500));
  }
  StopApiKubelet(k, cp, rt);
  (void)cp.Kubectl({"delete", "configmap", cm, "-n", "default", "--wait=false"});
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <our-kubelet> <upstream-kubelet> [rounds]\n", argv[0]);
    return 2;
  }
  const std::string ours = argv[1], upstream = argv[2];
  const int rounds = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  int exit_code = 0;
  absl::StatusOr<ApiBenchEnv> env = LoadApiBenchEnv("kubelet-cm-bench-", &exit_code);
  if (!env.ok()) return exit_code;
  const ControlPlane& cp = *env->cp;
  kubelet::cri::RuntimeService& rt = *env->rt;
  const std::string& endpoint = env->endpoint;
  const std::string& dir = env->dir;
  Figures us = Run(ours, "ours", rounds, cp, rt, endpoint, dir);
  Figures up = Run(upstream, "upstream", rounds, cp, rt, endpoint, dir);
  std::printf("\n%-9s %-16s %-16s %-22s\n", "kubelet", "watch p50|max", "file p50|max",
              "file-watch p50|max");
  for (const auto& [name, fig] : {std::pair<const char*, const Figures*>{"upstream", &up},
                                  std::pair<const char*, const Figures*>{"ours", &us}}) {
    std::printf(
        "%-9s %-16s %-16s %-22s%s\n", name,
        absl::StrFormat("%.0f|%.0f ms", Percentile(fig->watch_ms, 50),
                        Percentile(fig->watch_ms, 100))
            .c_str(),
        absl::StrFormat("%.0f|%.0f ms", Percentile(fig->file_ms, 50), Percentile(fig->file_ms, 100))
            .c_str(),
        absl::StrFormat("%.0f|%.0f ms", Percentile(fig->delay_ms, 50),
                        Percentile(fig->delay_ms, 100))
            .c_str(),
        fig->ok ? "" : "   (incomplete: see the logs)");
  }
  const double up50 = Percentile(up.file_ms, 50), us50 = Percentile(us.file_ms, 50);
  if (up50 > 0 && us50 > 0) {
    std::printf("update -> file p50, ours / upstream: %.3f\n", us50 / up50);
  } else {
    std::printf("update -> file p50, ours / upstream: n/a (a run is missing)\n");
  }
  return 0;
}
