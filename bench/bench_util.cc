#include "bench/bench_util.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace kubelet::bench {

std::string Env(const char* k) {
  const char* v = std::getenv(k);
  return v ? v : "";
}

int RunningApp(kubelet::cri::RuntimeService& rt, const std::string& node) {
  runtime::v1::ContainerFilter f;
  f.mutable_state()->set_state(runtime::v1::CONTAINER_RUNNING);
  auto list = rt.ListContainers(&f);
  if (!list.ok()) return 0;
  int n = 0;
  for (const auto& c : *list) {
    auto it = c.labels().find("io.kubernetes.pod.name");
    if (it != c.labels().end() && it->second.size() >= node.size() &&
        it->second.compare(it->second.size() - node.size(), node.size(), node) == 0) {
      ++n;
    }
  }
  return n;
}

int ReadySandboxes(kubelet::cri::RuntimeService& rt, const std::string& node) {
  auto list = rt.ListPodSandbox(nullptr);
  if (!list.ok()) return 0;
  int n = 0;
  for (const auto& s : *list) {
    const std::string& name = s.metadata().name();
    if (s.state() == runtime::v1::SANDBOX_READY && name.size() >= node.size() &&
        name.compare(name.size() - node.size(), node.size(), node) == 0) {
      ++n;
    }
  }
  return n;
}

long RssAnon(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("RssAnon:", 0) == 0) return std::stol(line.substr(8));
  }
  return 0;
}

std::pair<double, long> Usage(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  size_t close = line.rfind(')');
  std::istringstream is(line.substr(close + 2));
  std::string tok;
  std::vector<std::string> f;
  while (is >> tok) f.push_back(tok);
  double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  double cpu = (std::stod(f[11]) + std::stod(f[12])) / ticks;
  long rss = 0;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) rss = std::stol(line.substr(6));
  }
  return {cpu, rss};
}

std::vector<pid_t> PidsByName(const std::string& comm) {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/comm");
    std::string name;
    if (std::getline(f, name) && name == comm) out.push_back(static_cast<pid_t>(pid));
  }
  closedir(d);
  return out;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

namespace {
runtime::v1::PodSandboxConfig SandboxConfig(const std::string& name, const std::string& uid,
                                            const std::string& log_dir) {
  runtime::v1::PodSandboxConfig c;
  c.mutable_metadata()->set_name(name);
  c.mutable_metadata()->set_namespace_("bench");
  c.mutable_metadata()->set_uid(uid);
  c.set_log_directory(log_dir);
  c.set_hostname(name);
  auto* ns = c.mutable_linux()->mutable_security_context()->mutable_namespace_options();
  ns->set_pid(runtime::v1::CONTAINER);
  (*c.mutable_labels())["bench"] = "floor";
  return c;
}

}  // namespace

absl::Duration RawFloor(kubelet::cri::RuntimeService& rt, int n, int concurrency,
                        const std::string& tag, const std::string& log_root) {
  std::atomic<int> next{0};
  std::atomic<int> failures{0};
  absl::Time start = absl::Now();
  std::vector<std::thread> workers;
  for (int w = 0; w < concurrency; ++w) {
    workers.emplace_back([&] {
      for (int i = next++; i < n; i = next++) {
        std::string name = absl::StrCat("floor-", tag, "-", i);
        std::string log_dir = log_root + "/" + name;
        std::filesystem::create_directories(log_dir);
        auto sc = SandboxConfig(name, name, log_dir);
        auto sb = rt.RunPodSandbox(sc, "");
        if (!sb.ok()) {
          ++failures;
          continue;
        }
        runtime::v1::ContainerConfig cc;
        cc.mutable_metadata()->set_name("main");
        cc.mutable_image()->set_image("docker.io/library/busybox:1.36");
        cc.add_command("sh");
        cc.add_args("-c");
        cc.add_args("trap 'exit 0' TERM; while true; do sleep 1; done");
        cc.set_log_path("main.log");
        auto* ns = cc.mutable_linux()->mutable_security_context()->mutable_namespace_options();
        ns->set_pid(runtime::v1::CONTAINER);
        auto id = rt.CreateContainer(*sb, cc, sc);
        if (!id.ok() || !rt.StartContainer(*id).ok()) ++failures;
      }
    });
  }
  for (auto& t : workers) t.join();
  absl::Duration d = absl::Now() - start;
  if (failures > 0) std::fprintf(stderr, "floor: %d failures\n", failures.load());
  return d;
}

void CleanupFloor(kubelet::cri::RuntimeService& rt) {
  runtime::v1::PodSandboxFilter f;
  (*f.mutable_label_selector())["bench"] = "floor";
  auto list = rt.ListPodSandbox(&f);
  if (!list.ok()) return;
  std::vector<std::thread> ts;
  std::atomic<size_t> next{0};
  for (int w = 0; w < 8; ++w) {
    ts.emplace_back([&] {
      for (size_t i = next++; i < list->size(); i = next++) {
        (void)rt.StopPodSandbox((*list)[i].id());
        (void)rt.RemovePodSandbox((*list)[i].id());
      }
    });
  }
  for (auto& t : ts) t.join();
}

absl::Duration BestRawFloor(kubelet::cri::RuntimeService& rt, int n, const std::string& log_root,
                            int* best_concurrency, std::map<int, absl::Duration>* by_concurrency) {
  absl::Duration best = absl::InfiniteDuration();
  for (int conc : {4, 8, 16, 32}) {
    if (conc > n && conc != 4) continue;
    absl::Duration d = RawFloor(rt, n, conc, absl::StrCat(n, "-", conc), log_root);
    CleanupFloor(rt);
    if (by_concurrency != nullptr) (*by_concurrency)[conc] = d;
    if (d < best) {
      best = d;
      if (best_concurrency != nullptr) *best_concurrency = conc;
    }
  }
  return best;
}

void RemoveSandboxes(kubelet::cri::RuntimeService& rt, const std::string& node) {
  auto list = rt.ListPodSandbox(nullptr);
  if (!list.ok()) return;
  for (const auto& s : *list) {
    if (!absl::EndsWith(s.metadata().name(), node)) continue;
    (void)rt.StopPodSandbox(s.id());
    (void)rt.RemovePodSandbox(s.id());
  }
}

}  // namespace kubelet::bench
