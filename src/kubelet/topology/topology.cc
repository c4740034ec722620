#include "kubelet/topology/topology.h"

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/files.h"
#include "common/strings.h"

namespace kubelet::topology {
namespace {

absl::StatusOr<std::string> ReadTrimmed(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        absl::StrCat("reading ", path, ": ", text.status().message()));
  }
  return std::string(absl::StripAsciiWhitespace(*text));
}

absl::StatusOr<CPUSet> ReadCPUSet(const std::string& path) {
  absl::StatusOr<std::string> text = ReadTrimmed(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<CPUSet> set = CPUSet::Parse(*text);
  if (!set.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", set.status().message()));
  }
  return set;
}

}  // namespace

CPUTopology CPUTopology::FromDetails(std::map<int, CPUInfo> details) {
  CPUTopology t;
  std::set<int> cores, sockets, nodes;
  for (const auto& [cpu, info] : details) {
    cores.insert(info.core);
    sockets.insert(info.socket);
    nodes.insert(info.numa_node);
  }
  t.num_cpus = static_cast<int>(details.size());
  t.num_cores = static_cast<int>(cores.size());
  t.num_sockets = static_cast<int>(sockets.size());
  t.num_numa_nodes = static_cast<int>(nodes.size());
  t.details = std::move(details);
  return t;
}

CPUSet CPUTopology::CPUs() const {
  std::set<int> out;
  for (const auto& [cpu, info] : details) out.insert(cpu);
  return CPUSet(std::move(out));
}

std::set<int> CPUTopology::NUMANodes() const {
  std::set<int> out;
  for (const auto& [cpu, info] : details) out.insert(info.numa_node);
  return out;
}

std::set<int> CPUTopology::Sockets() const {
  std::set<int> out;
  for (const auto& [cpu, info] : details) out.insert(info.socket);
  return out;
}

CPUSet CPUTopology::CPUsInNUMANodes(const std::set<int>& nodes) const {
  std::set<int> out;
  for (const auto& [cpu, info] : details) {
    if (nodes.count(info.numa_node)) out.insert(cpu);
  }
  return CPUSet(std::move(out));
}

CPUSet CPUTopology::CPUsInSockets(const std::set<int>& sockets) const {
  std::set<int> out;
  for (const auto& [cpu, info] : details) {
    if (sockets.count(info.socket)) out.insert(cpu);
  }
  return CPUSet(std::move(out));
}

CPUSet CPUTopology::CPUsInCores(const std::set<int>& cores) const {
  std::set<int> out;
  for (const auto& [cpu, info] : details) {
    if (cores.count(info.core)) out.insert(cpu);
  }
  return CPUSet(std::move(out));
}

CPUSet CPUTopology::SiblingsOf(const CPUSet& cpus) const {
  std::set<int> cores;
  for (int cpu : cpus.List()) {
    auto it = details.find(cpu);
    if (it != details.end()) cores.insert(it->second.core);
  }
  return CPUsInCores(cores);
}

absl::StatusOr<CPUTopology> DiscoverCPUTopology(const std::string& sysfs_root) {
  const std::string cpu_dir = absl::StrCat(sysfs_root, "/devices/system/cpu");
  absl::StatusOr<CPUSet> online = ReadCPUSet(cpu_dir + "/online");
  if (!online.ok()) return online.status();
  std::map<int, CPUInfo> details;
  for (int cpu : online->List()) {
    const std::string topo = absl::StrCat(cpu_dir, "/cpu", cpu, "/topology");
    absl::StatusOr<std::string> package = ReadTrimmed(topo + "/physical_package_id");
    if (!package.ok()) return package.status();
    CPUInfo info;
    if (!absl::SimpleAtoi(*package, &info.socket)) {
      return absl::InvalidArgumentError(
          absl::StrCat(topo, "/physical_package_id: not a number: ", *package));
    }
    absl::StatusOr<CPUSet> siblings = ReadCPUSet(topo + "/thread_siblings_list");
    if (!siblings.ok()) return siblings.status();
    // Offline siblings do not name the core: only online CPUs hold work.
    CPUSet online_siblings = siblings->Intersection(*online);
    info.core = online_siblings.IsEmpty() ? cpu : online_siblings.List().front();
    details[cpu] = info;
  }
  // NUMA nodes; without node directories (no NUMA support in the kernel) everything is node 0.
  const std::string node_dir = absl::StrCat(sysfs_root, "/devices/system/node");
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(node_dir, ec)) {
    const std::string name = entry.path().filename().string();
    int node = 0;
    if (name.rfind("node", 0) != 0 || !absl::SimpleAtoi(name.substr(4), &node)) continue;
    absl::StatusOr<CPUSet> cpus = ReadCPUSet(entry.path().string() + "/cpulist");
    if (!cpus.ok()) return cpus.status();
    for (int cpu : cpus->List()) {
      auto it = details.find(cpu);
      if (it != details.end()) it->second.numa_node = node;
    }
  }
  if (details.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("no online CPUs in ", cpu_dir, "/online"));
  }
  return CPUTopology::FromDetails(std::move(details));
}

CPUTopology FlatCPUTopology(int num_cpus) {
  std::map<int, CPUInfo> details;
  for (int i = 0; i < num_cpus; ++i) details[i] = CPUInfo{0, 0, i};
  return CPUTopology::FromDetails(std::move(details));
}

}  // namespace kubelet::topology
