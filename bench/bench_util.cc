#include "bench/bench_util.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

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

}  // namespace kubelet::bench
