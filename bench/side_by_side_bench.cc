// Macro benchmark: the footprint of our kubelet against the upstream v1.28.7 kubelet, both in
// standalone mode (static pods from staticPodPath, no API server), one after the other on the
// same containerd with the same static pods, and against the raw CRI floor. For each N:
//
//   all running     N manifests moved into staticPodPath at once -> N app containers running
//                   (CRI); the floor is the same pods issued directly over CRI at the best of
//                   several concurrency levels (each level's time is printed too). The CPU
//                   seconds the kubelet, and the runtime with its monitors, spent meanwhile;
//                   the kubelet's CRI calls per pod (in all and by operation) and the mean
//                   latency of RunPodSandbox, CreateContainer and StartContainer meanwhile (its
//                   runtime operation metrics).
//   cold start      exec -> first 200 from /healthz (empty staticPodPath, runtime up): once with
//                   an empty cert dir (the self-signed serving certificate is generated), then,
//                   after SIGTERM, again with it in place (the figure the goal is about).
//   memory          after the idle window: VmRSS, Pss, anonymous and file-backed pages, private
//                   (Private_Clean + Private_Dirty) and shared pages (smaps_rollup), VmHWM,
//                   threads.
//   idle            CPU (utime + stime, % of one core) and context switches (voluntary +
//                   involuntary, summed over the threads alive at each end of the window) with
//                   the N pods running, over IDLE_SECONDS (default 60) after SETTLE_SECONDS
//                   (default 10); containerd's CPU over the same window, alone and with its
//                   shims (what the kubelet's periodic CRI calls, stats included, cost there).
//   per relist      relists from kubelet_pleg_relist_duration_seconds_count in the window; the
//                   whole idle CPU and context switches divided by them (an upper bound for the
//                   relist alone: housekeeping and other periodic work is included), and the
//                   mean relist duration from the same histogram.
//   restart         RESTARTS (default 5) pods in turn: their container stopped over CRI (timeout 0)
//                   -> a new container of the pod running (CRI); p50 and max.
//   worker start    at start-up, kubelet_pod_worker_start_duration_seconds (both kubelets: the
//                   N pods added at once, first seen -> first SyncPod; the histogram when the
//                   idle window begins); during the restarts, ours alone,
//                   kubelet_pleg_event_to_pod_worker_seconds (the relist that found the exited
//                   container -> its pod worker starting the sync; its growth over that phase).
//                   Mean from _sum / _count, p50 and p99 as the bound (le) of the bucket that
//                   holds them.
//   /stats/summary, /pods
//                   REQUESTS (default 20) sequential GETs of each on the read-only port after one
//                   warm-up request; p50 and max.
//
// Both kubelets get the same KubeletConfiguration (cgroupfs, the read-only port, anonymous +
// AlwaysAllow on the API port) and a node name, root dir and cgroupRoot of their own (below the
// harness's KUBELET_E2E_CGROUP_ROOT); between runs every sandbox of the previous kubelet is
// removed from the runtime. After all N: the memory growth per extra pod between the smallest
// and the largest N. Figures are printed, never asserted; the goals are printed beside them.
// Without an upstream binary ("-") its column and the ratios say "missing".
//
// Usage: side_by_side_bench <our-kubelet> <upstream-kubelet|-> [N ...]
// Env: KUBELET_E2E_* (the containerd or the CRI-O harness: with KUBELET_E2E_RUNTIME=crio the
// runtime's CPU is crio's and its conmons'), IDLE_SECONDS, SETTLE_SECONDS, RESTARTS, REQUESTS.
#include <dirent.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "bench/bench_util.h"
#include "cri/remote/remote_runtime.h"
#include "test/e2e/e2e_env.h"
#include "test/e2e/kubelet_process.h"

namespace {

using kubelet::e2e::KubeletProcess;
using namespace kubelet::bench;  // NOLINT

int EnvInt(const char* k, int def) {
  int v = 0;
  return absl::SimpleAtoi(Env(k), &v) && v > 0 ? v : def;
}

std::string PodManifest(const std::string& name) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\nspec:\n  terminationGracePeriodSeconds: 5\n  containers:\n  - name: main\n"
         "    image: docker.io/library/busybox:1.36\n"
         "    command: [\"sh\", \"-c\", \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n";
}

// Memory and threads of a process, KiB.
struct Mem {
  long rss = 0, pss = 0, anon = 0, file = 0, private_kib = 0, shared = 0, hwm = 0;
  int threads = 0;
};

// "Key:   123 kB" lines of a /proc file.
std::map<std::string, long> KbFields(const std::string& path) {
  std::map<std::string, long> out;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    long v = 0;
    std::istringstream is(line.substr(colon + 1));
    if (is >> v) out[line.substr(0, colon)] = v;
  }
  return out;
}

Mem ReadMem(pid_t pid) {
  const std::string base = absl::StrCat("/proc/", pid, "/");
  std::map<std::string, long> r = KbFields(base + "smaps_rollup");
  std::map<std::string, long> s = KbFields(base + "status");
  Mem m;
  m.rss = r["Rss"];
  m.pss = r["Pss"];
  m.anon = r["Anonymous"];
  m.file = m.rss - m.anon;  // file-backed (and shmem) pages
  m.private_kib = r["Private_Clean"] + r["Private_Dirty"];
  m.shared = r["Shared_Clean"] + r["Shared_Dirty"];
  m.hwm = s["VmHWM"];
  m.threads = static_cast<int>(s["Threads"]);
  return m;
}

// Voluntary + involuntary context switches summed over the threads alive now.
long ContextSwitches(pid_t pid) {
  long total = 0;
  const std::string tasks = absl::StrCat("/proc/", pid, "/task");
  DIR* d = opendir(tasks.c_str());
  if (d == nullptr) return 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::map<std::string, long> s = KbFields(tasks + "/" + e->d_name + "/status");
    total += s["voluntary_ctxt_switches"] + s["nonvoluntary_ctxt_switches"];
  }
  closedir(d);
  return total;
}

// Value of the unlabelled sample `name` in a Prometheus text page; nullopt when absent.
std::optional<double> Sample(const std::string& text, const std::string& name) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, name) || line.empty() || (line[0] != ' ' && line[0] != '{')) {
      continue;
    }
    size_t sp = line.rfind(' ');
    double v = 0;
    if (sp != absl::string_view::npos &&
        absl::SimpleAtod(absl::StripAsciiWhitespace(line.substr(sp + 1)), &v)) {
      return v;
    }
  }
  return std::nullopt;
}

// Sum of every sample of `name` (any labels) whose line contains `filter`, in a Prometheus text
// page.
double SumSamples(const std::string& text, const std::string& name,
                  const std::string& filter = "") {
  double total = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, name) || rest.empty() || (rest[0] != ' ' && rest[0] != '{')) {
      continue;
    }
    if (!filter.empty() && !absl::StrContains(line, filter)) continue;
    size_t sp = line.rfind(' ');
    double v = 0;
    if (sp != absl::string_view::npos &&
        absl::SimpleAtod(absl::StripAsciiWhitespace(line.substr(sp + 1)), &v)) {
      total += v;
    }
  }
  return total;
}

// A histogram's growth between two scrapes: count, mean (ms), and the bucket bounds (ms) that
// hold the 50th and 99th percentiles (NAN when it did not grow or is absent).
struct HistDelta {
  double count = NAN, mean_ms = NAN, p50_le_ms = NAN, p99_le_ms = NAN;
};
HistDelta HistogramDelta(const std::string& before, const std::string& after,
                         const std::string& name) {
  HistDelta d;
  auto value = [&](const std::string& text, const std::string& series) {
    return Sample(text, series).value_or(0);
  };
  const double count = value(after, name + "_count") - value(before, name + "_count");
  if (!Sample(after, name + "_count") || count <= 0) return d;
  d.count = count;
  d.mean_ms = (value(after, name + "_sum") - value(before, name + "_sum")) * 1000.0 / count;
  // name_bucket{le="0.005"} 12 ... in increasing le order.
  std::vector<std::pair<double, double>> buckets;  // (le seconds, cumulative count delta)
  const std::string prefix = name + "_bucket{";
  for (absl::string_view line : absl::StrSplit(after, '\n')) {
    if (!absl::StartsWith(line, prefix)) continue;
    const size_t le = line.find("le=\"");
    const size_t end = le == absl::string_view::npos ? le : line.find('"', le + 4);
    if (end == absl::string_view::npos) continue;
    const std::string bound(line.substr(le + 4, end - le - 4));
    double le_s = INFINITY;
    if (bound != "+Inf" && !absl::SimpleAtod(bound, &le_s)) continue;
    const std::string series(line.substr(0, line.rfind(' ')));
    buckets.emplace_back(le_s, value(after, series) - value(before, series));
  }
  std::sort(buckets.begin(), buckets.end());
  auto bound_for = [&](double q) -> double {
    for (const auto& [le_s, cum] : buckets) {
      if (cum >= q * count) return le_s * 1000.0;
    }
    return NAN;
  };
  d.p50_le_ms = bound_for(0.5);
  d.p99_le_ms = bound_for(0.99);
  return d;
}

// The runtime's processes: its daemon (containerd or crio) and its per-container monitors
// (containerd-shim or conmon) whose command lines name `marker` (the socket of that containerd,
// the instance directory of that CRI-O).
struct RuntimeProcs {
  std::string name = "containerd";
  std::string monitor = "containerd-shim";
  pid_t daemon = 0;  // 0: none
  std::string marker;
};

// CPU seconds (utime + stime) of the daemon plus every monitor of it.
double RuntimeCpu(const RuntimeProcs& rp) {
  double cpu = rp.daemon > 0 ? Usage(rp.daemon).first : 0;
  if (rp.marker.empty()) return cpu;
  for (pid_t pid : PidsByName(rp.monitor)) {
    std::ifstream f(absl::StrCat("/proc/", pid, "/cmdline"));
    std::string cmdline((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (cmdline.find(rp.marker) != std::string::npos) cpu += Usage(pid).first;
  }
  return cpu;
}

struct Result {
  bool ran = false;  // started and reached /healthz
  bool all_running = false;
  double cold_first_ms = NAN, cold_ms = NAN, running_ms = NAN;
  // CPU seconds spent while the N pods started: the kubelet's, the runtime's (daemon + monitors).
  double start_cpu_s = NAN, start_runtime_cpu_s = NAN;
  // CRI calls per pod while the N pods started (kubelet_runtime_operations_total), and the mean
  // latency (ms) of the three that start a pod
  // (kubelet_runtime_operations_duration_seconds).
  double start_cri_calls_per_pod = NAN;
  std::map<std::string, double> start_op_ms;
  std::map<std::string, double> start_calls_by_op;  // operation_type -> calls per pod
  Mem mem;
  double idle_cpu_pct = NAN, cs_per_s = NAN, daemon_cpu_pct = NAN, runtime_cpu_pct = NAN;
  double relists = NAN, cpu_ms_per_relist = NAN, cs_per_relist = NAN, relist_mean_ms = NAN;
  double restart_p50 = NAN, restart_max = NAN;
  HistDelta start_workers, restart_workers;  // see "worker start" above
  int restarts_seen = 0;
  double summary_p50 = NAN, summary_max = NAN, pods_p50 = NAN, pods_max = NAN;
  size_t summary_bytes = 0, pods_bytes = 0;
};

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

// Running containers of pod `pod` (its io.kubernetes.pod.name).
std::vector<std::string> RunningContainersOf(kubelet::cri::RuntimeService& rt,
                                             const std::string& pod) {
  runtime::v1::ContainerFilter f;
  f.mutable_state()->set_state(runtime::v1::CONTAINER_RUNNING);
  (*f.mutable_label_selector())["io.kubernetes.pod.name"] = pod;
  std::vector<std::string> ids;
  auto list = rt.ListContainers(&f);
  if (list.ok()) {
    for (const auto& c : *list) ids.push_back(c.id());
  }
  return ids;
}

// p50 and max of `requests` sequential GETs of `path`, after one warm-up; the body size.
void Latency(int port, const std::string& path, int requests, double* p50, double* max,
             size_t* bytes) {
  (void)kubelet::e2e::HttpGet(port, path);
  std::vector<double> ms;
  for (int i = 0; i < requests; ++i) {
    absl::Time t = absl::Now();
    kubelet::e2e::HttpResult r = kubelet::e2e::HttpGet(port, path);
    double d = Ms(absl::Now() - t);
    if (r.status != 200) {
      std::fprintf(stderr, "GET %s: status %d\n", path.c_str(), r.status);
      continue;
    }
    *bytes = r.body.size();
    ms.push_back(d);
  }
  if (ms.empty()) return;
  *p50 = Percentile(ms, 50);
  *max = Percentile(ms, 100);
}

// Starts `bin` and waits up to a minute for /healthz on `healthz` to answer 200; the time from
// exec goes to `*ms`. nullptr (the process stopped) when it does not.
std::unique_ptr<KubeletProcess> StartHealthy(const std::string& bin,
                                             const std::vector<std::string>& args,
                                             const std::string& kind, int healthz,
                                             const std::string& log, double* ms) {
  const absl::Time exec = absl::Now();
  auto started = KubeletProcess::Start(bin, args, {}, log);
  if (!started.ok()) {
    std::fprintf(stderr, "%s: %s\n", kind.c_str(), std::string(started.status().message()).c_str());
    return nullptr;
  }
  std::unique_ptr<KubeletProcess> k = std::move(*started);
  while (absl::Now() - exec < absl::Minutes(1)) {
    if (kubelet::e2e::HttpGet(healthz, "/healthz").status == 200) {
      *ms = Ms(absl::Now() - exec);
      return k;
    }
    if (k->Wait(absl::ZeroDuration()).has_value()) break;
    absl::SleepFor(absl::Milliseconds(1));
  }
  std::fprintf(stderr, "%s: no healthy /healthz within 1 min (log: %s)\n", kind.c_str(),
               log.c_str());
  k->Signal(SIGTERM);
  k->Wait(absl::Seconds(30));
  return nullptr;
}

Result RunKubelet(const std::string& bin, const std::string& kind, int n,
                  kubelet::cri::RuntimeService& rt, const std::string& endpoint,
                  const std::string& dir, const RuntimeProcs& rp,
                  const std::string& cgroup_parent) {
  Result res;
  const std::string node = absl::StrCat("sbs", n, "-", kind);
  const std::string manifests = absl::StrCat(dir, "/manifests-", node);
  const std::string staging = absl::StrCat(dir, "/staging-", node);
  std::filesystem::create_directories(manifests);
  std::filesystem::create_directories(staging);
  const int healthz = kubelet::e2e::FreePort();
  const int ro = kubelet::e2e::FreePort();
  // A cgroupRoot of its own in every hierarchy: a kubelet takes the pod cgroups below its root
  // that it does not know for orphans and kills their processes, so two kubelets on one host
  // (the other kubelet here, or any other on the machine) must not share one.
  const std::string cgroup_root = absl::StrCat(cgroup_parent, "/", node);
  for (const auto& [controller, m] : kubelet::e2e::CgroupMounts()) {
    std::error_code ec;
    std::filesystem::create_directories(m + cgroup_root, ec);
  }
  const std::string cfg = absl::StrCat(dir, "/", node, ".yaml");
  kubelet::e2e::WriteFile(
      cfg, absl::StrCat("apiVersion: kubelet.config.k8s.io/v1beta1\n"
                        "kind: KubeletConfiguration\n"
                        "containerRuntimeEndpoint: ",
                        endpoint, "\ncgroupDriver: cgroupfs\ncgroupRoot: ", cgroup_root,
                        "\nfailSwapOn: false\nstaticPodPath: ", manifests, "\nhealthzPort: ",
                        healthz, "\nreadOnlyPort: ", ro, "\naddress: 127.0.0.1\nmaxPods: 250\n",
                        kubelet::e2e::StandaloneServingConfig()));
  const std::vector<std::string> args = {"--config",
                                         cfg,
                                         "--hostname-override",
                                         node,
                                         "--root-dir",
                                         absl::StrCat(dir, "/root-", node),
                                         "--cert-dir",
                                         absl::StrCat(dir, "/pki-", node),
                                         "--v=2"};
  // The upstream kubelet bind-mounts its root dir onto itself (to make it rshared) and leaves that
  // mount behind when it exits: undone on every way out of here, after the kubelet stopped.
  struct UnmountRootDir {
    std::string path;
    ~UnmountRootDir() { (void)::umount2(path.c_str(), MNT_DETACH); }
  } unmount_root_dir{absl::StrCat(dir, "/root-", node)};
  // The first start generates the self-signed serving certificate in the empty cert dir; the
  // second finds it (a restart of a node agent).
  std::unique_ptr<KubeletProcess> first = StartHealthy(
      bin, args, kind, healthz, absl::StrCat(dir, "/", node, "-first.log"), &res.cold_first_ms);
  if (first == nullptr) return res;
  first->Signal(SIGTERM);
  first->Wait(absl::Seconds(30));
  const std::string log = absl::StrCat(dir, "/", node, ".log");
  std::unique_ptr<KubeletProcess> started =
      StartHealthy(bin, args, kind, healthz, log, &res.cold_ms);
  if (started == nullptr) return res;
  res.ran = true;
  KubeletProcess& k = *started;

  // All N running.
  for (int i = 0; i < n; ++i) {
    kubelet::e2e::WriteFile(absl::StrCat(staging, "/p", i, ".yaml"),
                            PodManifest(absl::StrCat("p", i)));
  }
  const std::string start_m0 = kubelet::e2e::HttpGet(ro, "/metrics").body;
  const double start_cpu0 = Usage(k.pid()).first;
  const double start_rt_cpu0 = RuntimeCpu(rp);
  const absl::Time t0 = absl::Now();
  for (int i = 0; i < n; ++i) {
    std::filesystem::rename(absl::StrCat(staging, "/p", i, ".yaml"),
                            absl::StrCat(manifests, "/p", i, ".yaml"));
  }
  while (RunningApp(rt, node) < n && absl::Now() - t0 < absl::Minutes(10)) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  res.running_ms = Ms(absl::Now() - t0);
  res.start_cpu_s = Usage(k.pid()).first - start_cpu0;
  res.start_runtime_cpu_s = RuntimeCpu(rp) - start_rt_cpu0;
  {
    const std::string m1 = kubelet::e2e::HttpGet(ro, "/metrics").body;
    const std::string ops = "kubelet_runtime_operations_total";
    res.start_cri_calls_per_pod = (SumSamples(m1, ops) - SumSamples(start_m0, ops)) / n;
    for (absl::string_view line : absl::StrSplit(m1, '\n')) {
      if (!absl::StartsWith(line, ops + "{")) continue;
      const size_t at = line.find("operation_type=\"");
      if (at == absl::string_view::npos) continue;
      const size_t end = line.find('"', at + 16);
      const std::string op(line.substr(at + 16, end - at - 16));
      const std::string f = absl::StrCat("operation_type=\"", op, "\"");
      res.start_calls_by_op[op] = (SumSamples(m1, ops, f) - SumSamples(start_m0, ops, f)) / n;
    }
    const std::string dur = "kubelet_runtime_operations_duration_seconds";
    for (const char* op : {"run_podsandbox", "create_container", "start_container"}) {
      const std::string f = absl::StrCat("operation_type=\"", op, "\"");
      const double c = SumSamples(m1, dur + "_count", f) - SumSamples(start_m0, dur + "_count", f);
      const double sum = SumSamples(m1, dur + "_sum", f) - SumSamples(start_m0, dur + "_sum", f);
      res.start_op_ms[op] = c > 0 ? sum * 1000.0 / c : NAN;
    }
  }
  res.all_running = RunningApp(rt, node) >= n;
  if (!res.all_running) {
    std::fprintf(stderr, "%s: only %d of %d pods running after 10 min (log: %s)\n", kind.c_str(),
                 RunningApp(rt, node), n, log.c_str());
  }

  // Idle with the pods running.
  absl::SleepFor(absl::Seconds(EnvInt("SETTLE_SECONDS", 10)));
  const absl::Duration window = absl::Seconds(EnvInt("IDLE_SECONDS", 60));
  const std::string m0 = kubelet::e2e::HttpGet(ro, "/metrics").body;
  auto [cpu0, rss0] = Usage(k.pid());
  const long cs0 = ContextSwitches(k.pid());
  const double rt_cpu0 = rp.daemon > 0 ? Usage(rp.daemon).first : 0;
  const double all_cpu0 = RuntimeCpu(rp);
  absl::SleepFor(window);
  const double all_cpu1 = RuntimeCpu(rp);
  auto [cpu1, rss1] = Usage(k.pid());
  const long cs1 = ContextSwitches(k.pid());
  const double rt_cpu1 = rp.daemon > 0 ? Usage(rp.daemon).first : 0;
  const std::string m1 = kubelet::e2e::HttpGet(ro, "/metrics").body;
  const double secs = absl::ToDoubleSeconds(window);
  res.idle_cpu_pct = (cpu1 - cpu0) / secs * 100.0;
  res.cs_per_s = static_cast<double>(cs1 - cs0) / secs;
  if (rp.daemon > 0) res.daemon_cpu_pct = (rt_cpu1 - rt_cpu0) / secs * 100.0;
  if (!rp.marker.empty()) res.runtime_cpu_pct = (all_cpu1 - all_cpu0) / secs * 100.0;
  const std::string count = "kubelet_pleg_relist_duration_seconds_count";
  const std::string sum = "kubelet_pleg_relist_duration_seconds_sum";
  auto c0 = Sample(m0, count), c1 = Sample(m1, count), s0 = Sample(m0, sum), s1 = Sample(m1, sum);
  if (c0 && c1 && *c1 > *c0) {
    res.relists = *c1 - *c0;
    res.cpu_ms_per_relist = (cpu1 - cpu0) * 1000.0 / res.relists;
    res.cs_per_relist = static_cast<double>(cs1 - cs0) / res.relists;
    if (s0 && s1) res.relist_mean_ms = (*s1 - *s0) * 1000.0 / res.relists;
  }
  res.mem = ReadMem(k.pid());

  // API latency with the N pods.
  const int requests = EnvInt("REQUESTS", 20);
  Latency(ro, "/stats/summary", requests, &res.summary_p50, &res.summary_max, &res.summary_bytes);
  Latency(ro, "/pods", requests, &res.pods_p50, &res.pods_max, &res.pods_bytes);

  // Container exit -> restarted container running, one pod at a time (each restarted once, so
  // no crash-loop back-off applies).
  std::vector<double> restart_ms;
  res.start_workers = HistogramDelta("", m0, "kubelet_pod_worker_start_duration_seconds");
  const std::string before_restarts = kubelet::e2e::HttpGet(ro, "/metrics").body;
  const int restarts = std::min(n, EnvInt("RESTARTS", 5));
  for (int i = 0; i < restarts && res.all_running; ++i) {
    const std::string pod = absl::StrCat("p", i, "-", node);
    std::vector<std::string> before = RunningContainersOf(rt, pod);
    if (before.size() != 1) continue;
    if (!rt.StopContainer(before[0], 0).ok()) continue;
    const absl::Time exited = absl::Now();
    while (absl::Now() - exited < absl::Minutes(1)) {
      std::vector<std::string> now = RunningContainersOf(rt, pod);
      if (!now.empty() && now[0] != before[0]) {
        restart_ms.push_back(Ms(absl::Now() - exited));
        break;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    absl::SleepFor(absl::Milliseconds(700));  // another phase of the relist period next time
  }
  res.restarts_seen = static_cast<int>(restart_ms.size());
  res.restart_workers = HistogramDelta(before_restarts, kubelet::e2e::HttpGet(ro, "/metrics").body,
                                       "kubelet_pleg_event_to_pod_worker_seconds");
  if (!restart_ms.empty()) {
    res.restart_p50 = Percentile(restart_ms, 50);
    res.restart_max = Percentile(restart_ms, 100);
  }

  // Tear down: the kubelet stops its pods when their manifests go, then the runtime is cleaned
  // of anything left so the next kubelet starts from the same state.
  for (const auto& e : std::filesystem::directory_iterator(manifests)) {
    std::filesystem::remove(e.path());
  }
  const absl::Time td = absl::Now();
  while ((ReadySandboxes(rt, node) > 0 || RunningApp(rt, node) > 0) &&
         absl::Now() - td < absl::Minutes(3)) {
    absl::SleepFor(absl::Milliseconds(200));
  }
  k.Signal(SIGTERM);
  k.Wait(absl::Seconds(30));
  RemoveSandboxes(rt, node);
  for (const auto& [controller, m] : kubelet::e2e::CgroupMounts()) {
    kubelet::e2e::RemoveCgroupTree(m + cgroup_root);
  }
  return res;
}

// A figure with `prec` decimals, or "missing".
std::string F(double v, int prec = 0) {
  return std::isnan(v) ? "missing" : absl::StrFormat("%.*f", prec, v);
}
std::string Ratio(double ours, double up) {
  if (std::isnan(ours) || std::isnan(up)) return "missing";
  return up == 0 ? "-" : absl::StrFormat("%.2f", ours / up);
}
void Row(const std::string& name, const std::string& floor, const std::string& up,
         const std::string& us, const std::string& ratio) {
  std::printf("  %-36s %10s %10s %10s %9s\n", name.c_str(), floor.c_str(), up.c_str(), us.c_str(),
              ratio.c_str());
}
void Row(const std::string& name, double up, double us, int prec = 0) {
  Row(name, "", F(up, prec), F(us, prec), Ratio(us, up));
}
double Mib(long kib) { return static_cast<double>(kib) / 1024.0; }
std::string Goal(const std::string& what, double v, double limit, const std::string& unit = "") {
  if (std::isnan(v)) return absl::StrFormat("  goal %-44s missing\n", what);
  return absl::StrFormat("  goal %-44s %8.2f%s  %s\n", what, v, unit,
                         v <= limit ? "met" : "MISSED");
}
std::string LoadAvg() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <our-kubelet> <upstream-kubelet|-> [N ...]\n", argv[0]);
    return 2;
  }
  const std::string ours = argv[1];
  const std::string upstream = std::string(argv[2]) == "-" ? "" : argv[2];
  std::vector<int> sizes;
  for (int i = 3; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {30, 110};
  const std::string endpoint = Env("KUBELET_E2E_RUNTIME_ENDPOINT");
  if (endpoint.empty()) {
    std::fprintf(stderr, "KUBELET_E2E_RUNTIME_ENDPOINT is not set (start the harness)\n");
    return 2;
  }
  auto rt = kubelet::cri::NewRemoteRuntimeService(endpoint, absl::Minutes(2));
  if (!rt.ok()) {
    std::fprintf(stderr, "%s\n", std::string(rt.status().message()).c_str());
    return 1;
  }
  RuntimeProcs rp;
  if (Env("KUBELET_E2E_RUNTIME") == "crio") {
    rp = {"crio", "conmon", static_cast<pid_t>(std::atoi(Env("KUBELET_E2E_CRIO_PID").c_str())),
          Env("KUBELET_E2E_CRIO_DIR")};
  } else {
    rp.daemon = static_cast<pid_t>(std::atoi(Env("KUBELET_E2E_CONTAINERD_PID").c_str()));
    rp.marker = Env("KUBELET_E2E_RUNTIME_SOCK");
  }
  std::printf("runtime: %s (monitors: %s)\n", rp.name.c_str(), rp.monitor.c_str());
  // The harness's cgroup root for kubelets under test (its tear-down removes what is left below
  // it); each kubelet gets a folder of its own there.
  std::string cgroup_parent = Env("KUBELET_E2E_CGROUP_ROOT");
  if (cgroup_parent.empty()) cgroup_parent = absl::StrCat("/kubelet-side-by-side-", ::getpid());
  const std::string dir = kubelet::e2e::MakeTempDir("kubelet-side-by-side-bench-");
  std::printf("logs: %s\nidle window %d s after %d s settling; %d restarts; %d requests each\n",
              dir.c_str(), EnvInt("IDLE_SECONDS", 60), EnvInt("SETTLE_SECONDS", 10),
              EnvInt("RESTARTS", 5), EnvInt("REQUESTS", 20));
  if (upstream.empty()) {
    std::printf(
        "no upstream kubelet given: its figures, the ratios ours/upstream and the goals on them "
        "are missing\n");
  }
  std::map<int, std::pair<Result, Result>> all;  // N -> (upstream, ours)
  for (int n : sizes) {
    const std::string load_before = LoadAvg();
    int conc = 0;
    std::map<int, absl::Duration> floor_by_conc;
    const double floor_ms = Ms(BestRawFloor(**rt, n, dir + "/floor-logs", &conc, &floor_by_conc));
    Result up;
    if (!upstream.empty())
      up = RunKubelet(upstream, "up", n, **rt, endpoint, dir, rp, cgroup_parent);
    Result us = RunKubelet(ours, "ours", n, **rt, endpoint, dir, rp, cgroup_parent);
    all[n] = {up, us};

    std::printf("\nN = %d pods (load average before %s, after %s)\n", n, load_before.c_str(),
                LoadAvg().c_str());
    Row("", "floor", "upstream", "ours", "ours/up");
    Row(absl::StrFormat("all %d running (ms)", n), F(floor_ms), F(up.running_ms), F(us.running_ms),
        Ratio(us.running_ms, up.running_ms));
    Row("  / floor", "", F(up.running_ms / floor_ms, 2), F(us.running_ms / floor_ms, 2), "");
    Row("  kubelet CPU meanwhile (s)", up.start_cpu_s, us.start_cpu_s, 2);
    Row("  CRI calls per pod meanwhile", up.start_cri_calls_per_pod, us.start_cri_calls_per_pod, 1);
    {
      std::set<std::string> op_names;
      for (const Result* r : {&up, &us}) {
        for (const auto& [op, calls] : r->start_calls_by_op) {
          if (calls >= 0.05) op_names.insert(op);
        }
      }
      for (const std::string& op : op_names) {
        auto get = [&](const Result& r) {
          auto it = r.start_calls_by_op.find(op);
          return it == r.start_calls_by_op.end() ? 0.0 : it->second;
        };
        Row(absl::StrCat("    ", op), get(up), get(us), 2);
      }
    }
    for (const char* op : {"run_podsandbox", "create_container", "start_container"}) {
      auto get = [&](const Result& r) {
        auto it = r.start_op_ms.find(op);
        return it == r.start_op_ms.end() ? NAN : it->second;
      };
      Row(absl::StrCat("  mean ", op, " (ms)"), get(up), get(us), 0);
    }
    Row("  " + rp.name + " + " + rp.monitor + "s CPU meanwhile (s)", up.start_runtime_cpu_s,
        us.start_runtime_cpu_s, 2);
    Row("cold start -> /healthz 200, new cert (ms)", up.cold_first_ms, us.cold_first_ms, 1);
    Row("cold start -> /healthz 200 (ms)", up.cold_ms, us.cold_ms, 1);
    // Figures of a kubelet that did not run are missing, not zero.
    auto v = [](const Result& r, double x) { return r.ran ? x : NAN; };
    auto mib = [&](const Result& r, long Mem::*f) { return v(r, Mib(r.mem.*f)); };
    Row("RSS (MiB)", mib(up, &Mem::rss), mib(us, &Mem::rss), 1);
    Row("  Pss (MiB)", mib(up, &Mem::pss), mib(us, &Mem::pss), 1);
    Row("  anonymous (MiB)", mib(up, &Mem::anon), mib(us, &Mem::anon), 1);
    Row("  file-backed (MiB)", mib(up, &Mem::file), mib(us, &Mem::file), 1);
    Row("  private clean+dirty (MiB)", mib(up, &Mem::private_kib), mib(us, &Mem::private_kib), 1);
    Row("  shared (MiB)", mib(up, &Mem::shared), mib(us, &Mem::shared), 1);
    Row("peak RSS, VmHWM (MiB)", mib(up, &Mem::hwm), mib(us, &Mem::hwm), 1);
    Row("threads", v(up, up.mem.threads), v(us, us.mem.threads));
    Row("idle CPU (% of one core)", up.idle_cpu_pct, us.idle_cpu_pct, 3);
    Row("context switches / s", up.cs_per_s, us.cs_per_s, 1);
    Row(rp.name + " CPU meanwhile (%)", up.daemon_cpu_pct, us.daemon_cpu_pct, 3);
    Row("  with its " + rp.monitor + "s (%)", up.runtime_cpu_pct, us.runtime_cpu_pct, 3);
    Row("kubelet + " + rp.name + " + " + rp.monitor + "s (%)", up.idle_cpu_pct + up.runtime_cpu_pct,
        us.idle_cpu_pct + us.runtime_cpu_pct, 3);
    Row("relists in the window", up.relists, us.relists);
    Row("idle CPU / relist (ms)", up.cpu_ms_per_relist, us.cpu_ms_per_relist, 3);
    Row("context switches / relist", up.cs_per_relist, us.cs_per_relist, 1);
    Row("mean relist duration (ms)", up.relist_mean_ms, us.relist_mean_ms, 2);
    Row(absl::StrFormat("restart p50 (ms, %d|%d seen)", up.restarts_seen, us.restarts_seen),
        up.restart_p50, us.restart_p50, 0);
    Row("restart max (ms)", up.restart_max, us.restart_max, 0);
    for (const auto& [what, field] :
         {std::pair{"worker start, start-up", &Result::start_workers},
          std::pair{"PLEG event -> worker, restarts", &Result::restart_workers}}) {
      const HistDelta& a = up.*field;
      const HistDelta& b = us.*field;
      Row(absl::StrFormat("%s: count", what), a.count, b.count, 0);
      Row("  mean (ms)", a.mean_ms, b.mean_ms, 2);
      Row("  p50 <= (ms)", a.p50_le_ms, b.p50_le_ms, 0);
      Row("  p99 <= (ms)", a.p99_le_ms, b.p99_le_ms, 0);
    }
    Row(absl::StrFormat("/stats/summary p50 (ms)"), up.summary_p50, us.summary_p50, 2);
    Row("/stats/summary max (ms)", up.summary_max, us.summary_max, 2);
    Row("/stats/summary size (KiB)", v(up, up.summary_bytes / 1024.0),
        v(us, us.summary_bytes / 1024.0), 0);
    Row("/pods p50 (ms)", up.pods_p50, us.pods_p50, 2);
    Row("/pods max (ms)", up.pods_max, us.pods_max, 2);
    Row("/pods size (KiB)", v(up, up.pods_bytes / 1024.0), v(us, us.pods_bytes / 1024.0), 0);
    std::printf("  (floor concurrency %d; by concurrency:", conc);
    for (const auto& [c, d] : floor_by_conc) std::printf(" %d: %.0f ms", c, Ms(d));
    std::printf(")\n");
    if (!up.all_running && !upstream.empty()) std::printf("  upstream: not all pods ran\n");
    if (!us.all_running) std::printf("  ours: not all pods ran\n");
    auto r = [](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : a / b; };
    std::printf(
        "%s",
        Goal("RSS ours/upstream <= 0.25", r(mib(us, &Mem::rss), mib(up, &Mem::rss)), 0.25).c_str());
    std::printf("%s", Goal("RSS ours < 24 MiB", mib(us, &Mem::rss), 24, " MiB").c_str());
    std::printf("%s", Goal("kubelet CPU while starting ours/upstream <= 0.2",
                           r(us.start_cpu_s, up.start_cpu_s), 0.2)
                          .c_str());
    std::printf(
        "%s",
        Goal("idle CPU ours/upstream <= 0.10", r(us.idle_cpu_pct, up.idle_cpu_pct), 0.10).c_str());
    std::printf("%s",
                Goal("all running ours/floor <= 1.15", r(us.running_ms, floor_ms), 1.15).c_str());
    std::printf("%s", Goal("cold start ours <= 100 ms", us.cold_ms, 100, " ms").c_str());
    std::printf("%s", Goal("/stats/summary p50 ours/upstream <= 0.5",
                           r(us.summary_p50, up.summary_p50), 0.5)
                          .c_str());
    std::fflush(stdout);
  }
  if (all.size() >= 2) {
    const int lo = all.begin()->first, hi = all.rbegin()->first;
    auto per_pod = [&](const Result& a, const Result& b, long Mem::*f) {
      return a.ran && b.ran ? static_cast<double>(b.mem.*f - a.mem.*f) / (hi - lo) : NAN;
    };
    const auto& [up_lo, us_lo] = all[lo];
    const auto& [up_hi, us_hi] = all[hi];
    std::printf("\nmemory growth per extra pod, N = %d -> %d (KiB)\n", lo, hi);
    Row("", "", "upstream", "ours", "ours/up");
    Row("private clean+dirty", per_pod(up_lo, up_hi, &Mem::private_kib),
        per_pod(us_lo, us_hi, &Mem::private_kib), 1);
    Row("anonymous", per_pod(up_lo, up_hi, &Mem::anon), per_pod(us_lo, us_hi, &Mem::anon), 1);
    Row("RSS", per_pod(up_lo, up_hi, &Mem::rss), per_pod(us_lo, us_hi, &Mem::rss), 1);
    std::printf("%s", Goal("private growth per extra pod ours <= 20 KiB",
                           per_pod(us_lo, us_hi, &Mem::private_kib), 20, " KiB")
                          .c_str());
  }
  return 0;
}
