#include "test/e2e/e2e_env.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace kubelet::e2e {
namespace {

bool RuntimeDescribed() {
  const char* sock = std::getenv("KUBELET_E2E_RUNTIME_SOCK");
  return sock != nullptr && *sock != '\0';
}

}  // namespace

bool LoadE2EEnvFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "e2e: cannot read env file " << path << "\n";
    return RuntimeDescribed();
  }
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const std::string::size_type eq = line.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string key = line.substr(0, eq);
    const std::string value = line.substr(eq + 1);
    // overwrite = 0: a variable the caller set explicitly wins over the file.
    ::setenv(key.c_str(), value.c_str(), /*overwrite=*/0);
  }
  return RuntimeDescribed();
}

std::string RuntimeUnavailableReason() {
  const char* endpoint = std::getenv("KUBELET_E2E_RUNTIME_ENDPOINT");
  if (endpoint != nullptr && *endpoint != '\0') return "";
  const char* skipped = std::getenv("KUBELET_E2E_SKIPPED");
  if (skipped != nullptr && *skipped != '\0') return skipped;
  const char* file = std::getenv("KUBELET_E2E_ENV_FILE");
  if (file == nullptr || *file == '\0') {
    return "no KUBELET_E2E_ENV_FILE and no KUBELET_E2E_RUNTIME_ENDPOINT (run through ctest)";
  }
  return std::string("no KUBELET_E2E_RUNTIME_ENDPOINT in ") + file;
}

std::string RuntimeName() {
  const char* rt = std::getenv("KUBELET_E2E_RUNTIME");
  return rt != nullptr && *rt != '\0' ? rt : "containerd";
}

std::string CriRuntimeName() { return RuntimeName() == "crio" ? "cri-o" : "containerd"; }

bool LoadE2EEnv() {
  const char* file = std::getenv("KUBELET_E2E_ENV_FILE");
  if (file == nullptr || *file == '\0') return RuntimeDescribed();
  return LoadE2EEnvFile(file);
}

std::map<std::string, std::string> CgroupMounts() {
  std::map<std::string, std::string> out;
  std::string unified;
  std::ifstream in("/proc/self/mounts");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string device, dir, type, options;
    if (!(fields >> device >> dir >> type >> options)) continue;
    if (type == "cgroup2" && unified.empty()) unified = dir;
    if (type != "cgroup") continue;
    std::istringstream opts(options);
    std::string o;
    while (std::getline(opts, o, ',')) {
      if (o.rfind("name=", 0) == 0) out[o] = dir;
      for (const char* c : {"cpu", "cpuacct", "cpuset", "memory", "pids", "hugetlb", "devices",
                            "freezer", "blkio"}) {
        if (o == c) out[c] = dir;
      }
    }
  }
  if (!out.empty() && !unified.empty()) out["unified"] = unified;
  if (out.empty() && !unified.empty()) out[""] = unified;
  return out;
}

void RemoveCgroupTree(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.is_directory() && !e.is_symlink()) RemoveCgroupTree(e.path().string());
  }
  ::rmdir(dir.c_str());
}

}  // namespace kubelet::e2e
