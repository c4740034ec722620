// Helpers shared by the macro benchmarks: environment, CRI observations of a test node's pods,
// and /proc figures of a process. Not thread-safe beyond what the CRI client is.
#ifndef KUBELET_BENCH_BENCH_UTIL_H_
#define KUBELET_BENCH_BENCH_UTIL_H_

#include <sys/types.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "cri/runtime_service.h"

namespace kubelet::bench {

// $k, or "" when unset.
std::string Env(const char* k);
// Running containers / ready sandboxes of pods whose name ends in `node`.
int RunningApp(kubelet::cri::RuntimeService& rt, const std::string& node);
int ReadySandboxes(kubelet::cri::RuntimeService& rt, const std::string& node);
// RssAnon (private memory, excluding shared library pages) in KiB.
long RssAnon(pid_t pid);
// (utime + stime) in seconds, and RSS in KiB, of `pid`.
std::pair<double, long> Usage(pid_t pid);
// Pids whose /proc/<pid>/comm is `comm`.
std::vector<pid_t> PidsByName(const std::string& comm);
// The raw CRI floor: N pods (sandbox + one busybox container each, labelled bench=floor, logs
// under `log_root`) run directly over CRI with `concurrency` workers; returns the wall time.
// CleanupFloor removes every such sandbox.
absl::Duration RawFloor(kubelet::cri::RuntimeService& rt, int n, int concurrency,
                        const std::string& tag, const std::string& log_root);
void CleanupFloor(kubelet::cri::RuntimeService& rt);
// Stops and removes every sandbox of pods whose name ends in `node` (a kubelet's static pods).
void RemoveSandboxes(kubelet::cri::RuntimeService& rt, const std::string& node);
// The best RawFloor over concurrency 4, 8, 16 and 32 (those <= n), cleaned up after each. Each
// level's time lands in `by_concurrency` when given.
absl::Duration BestRawFloor(kubelet::cri::RuntimeService& rt, int n, const std::string& log_root,
                            int* best_concurrency = nullptr,
                            std::map<int, absl::Duration>* by_concurrency = nullptr);

// Sorted copy's percentile p (0..100) of `v` (nearest rank); 0 for an empty vector.
double Percentile(std::vector<double> v, double p);

}  // namespace kubelet::bench

#endif  // KUBELET_BENCH_BENCH_UTIL_H_
