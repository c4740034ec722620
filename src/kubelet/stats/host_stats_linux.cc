#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "kubelet/stats/host_stats.h"

namespace kubelet::stats {
namespace {

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<uint64_t> ReadUint(const std::string& path) {
  auto text = ReadFile(path);
  if (!text) return std::nullopt;
  std::string s = *text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  uint64_t v = 0;
  if (!absl::SimpleAtoi(s, &v)) return std::nullopt;
  return v;
}

// "key value" lines (memory.stat, cpu.stat) into a map.
std::map<std::string, uint64_t> ReadKeyValues(const std::string& path) {
  std::map<std::string, uint64_t> out;
  std::ifstream in(path);
  std::string key;
  uint64_t value = 0;
  while (in >> key >> value) out[key] = value;
  return out;
}

std::optional<uint64_t> Lookup(const std::map<std::string, uint64_t>& m, const std::string& k) {
  auto it = m.find(k);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

// /proc/meminfo values in bytes.
std::map<std::string, uint64_t> ReadMeminfo(const std::string& path) {
  std::map<std::string, uint64_t> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::istringstream rest(line.substr(colon + 1));
    uint64_t v = 0;
    std::string unit;
    if (!(rest >> v)) continue;
    rest >> unit;
    out[line.substr(0, colon)] = unit == "kB" ? v * 1024 : v;
  }
  return out;
}

std::string ReadTrimmed(const std::string& path) {
  auto text = ReadFile(path);
  if (!text) return "";
  return std::string(absl::StripAsciiWhitespace(*text));
}

// /proc/self/mounts escapes space, tab, newline and backslash as octal (\040).
std::string UnescapeMountField(const std::string& in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '\\' && i + 3 < in.size()) {
      int v = 0;
      bool ok = true;
      for (size_t k = 1; k <= 3; ++k) {
        const char c = in[i + k];
        if (c < '0' || c > '7') ok = false;
        v = v * 8 + (c - '0');
      }
      if (ok) {
        out += static_cast<char>(v);
        i += 3;
        continue;
      }
    }
    out += in[i];
  }
  return out;
}

// Whether `path` is `mount` or below it.
bool Contains(const std::string& mount, const std::string& path) {
  if (mount == "/") return !path.empty() && path[0] == '/';
  if (path.compare(0, mount.size(), mount) != 0) return false;
  return path.size() == mount.size() || path[mount.size()] == '/';
}

bool IsDir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void Walk(int dirfd, dev_t dev, DiskUsage& out) {
  DIR* d = fdopendir(dirfd);
  if (d == nullptr) {
    ::close(dirfd);
    return;
  }
  while (dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    struct stat st {};
    if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (st.st_dev != dev) continue;
    out.bytes += static_cast<uint64_t>(st.st_blocks) * 512;
    out.inodes += 1;
    if (S_ISDIR(st.st_mode)) {
      int child = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child >= 0) Walk(child, dev, out);
    }
  }
  closedir(d);
}

}  // namespace

absl::StatusOr<DiskUsage> MeasureDiskUsage(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("du ", path));
  }
  DiskUsage out;
  out.bytes = static_cast<uint64_t>(st.st_blocks) * 512;
  out.inodes = 1;
  if (S_ISDIR(st.st_mode)) {
    int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) Walk(fd, st.st_dev, out);
  }
  return out;
}

uint64_t CpuWeightToShares(uint64_t weight) {
  weight = std::clamp<uint64_t>(weight, 1, 10000);
  return 2 + ((weight - 1) * 262142) / 9999;
}

HostReader::HostReader(std::string proc_root, std::string cgroup_root)
    : proc_root_(std::move(proc_root)), cgroup_root_(std::move(cgroup_root)) {
  struct stat st {};
  v2_ = ::stat((cgroup_root_ + "/cgroup.controllers").c_str(), &st) == 0;
}

std::string HostReader::ControllerDir(const std::string& controller,
                                      const std::string& cgroup) const {
  const std::string rel = cgroup == "/" ? "" : cgroup;
  if (v2_) {
    const std::string dir = cgroup_root_ + rel;
    return IsDir(dir) ? dir : "";
  }
  std::vector<std::string> candidates = {controller};
  if (controller == "cpuacct") candidates = {"cpuacct", "cpu,cpuacct", "cpuacct,cpu"};
  if (controller == "cpu") candidates = {"cpu", "cpu,cpuacct", "cpuacct,cpu"};
  for (const std::string& c : candidates) {
    const std::string dir = cgroup_root_ + "/" + c + rel;
    if (IsDir(dir)) return dir;
  }
  return "";
}

std::optional<uint64_t> HostReader::CgroupCpuNanos(const std::string& cgroup) const {
  const std::string dir = ControllerDir("cpuacct", cgroup);
  if (dir.empty()) return std::nullopt;
  if (v2_) {
    auto usec = Lookup(ReadKeyValues(dir + "/cpu.stat"), "usage_usec");
    if (!usec) return std::nullopt;
    return *usec * 1000;
  }
  return ReadUint(dir + "/cpuacct.usage");
}

std::optional<MemoryReading> HostReader::CgroupMemory(const std::string& cgroup) const {
  const std::string dir = ControllerDir("memory", cgroup);
  if (dir.empty()) return std::nullopt;
  MemoryReading m;
  const auto stat = ReadKeyValues(dir + "/memory.stat");
  std::optional<uint64_t> inactive;
  if (v2_) {
    auto usage = ReadUint(dir + "/memory.current");
    if (!usage) return std::nullopt;
    m.usage_bytes = *usage;
    inactive = Lookup(stat, "inactive_file");
    m.rss_bytes = Lookup(stat, "anon");
    m.page_faults = Lookup(stat, "pgfault");
    m.major_page_faults = Lookup(stat, "pgmajfault");
  } else {
    auto usage = ReadUint(dir + "/memory.usage_in_bytes");
    if (!usage) return std::nullopt;
    m.usage_bytes = *usage;
    inactive = Lookup(stat, "total_inactive_file");
    m.rss_bytes = Lookup(stat, "total_rss");
    m.page_faults = Lookup(stat, "total_pgfault");
    m.major_page_faults = Lookup(stat, "total_pgmajfault");
  }
  const uint64_t inactive_file = inactive.value_or(0);
  m.working_set_bytes = m.usage_bytes > inactive_file ? m.usage_bytes - inactive_file : 0;
  // v2 writes "max" (ReadUint fails) and v1 a page-rounded 2^63 when there is no limit.
  std::optional<uint64_t> limit = ReadUint(dir + (v2_ ? "/memory.max" : "/memory.limit_in_bytes"));
  if (limit && *limit < (uint64_t{1} << 62)) m.limit_bytes = limit;
  return m;
}

std::vector<pid_t> HostReader::CgroupPids(const std::string& cgroup) const {
  std::vector<pid_t> pids;
  std::string dir = v2_ ? ControllerDir("", cgroup) : ControllerDir("pids", cgroup);
  if (dir.empty() && !v2_) dir = ControllerDir("cpuacct", cgroup);
  if (dir.empty()) return pids;
  std::ifstream in(dir + "/cgroup.procs");
  for (pid_t p; in >> p;) pids.push_back(p);
  return pids;
}

bool HostReader::CgroupExists(const std::string& cgroup) const {
  return !ControllerDir("memory", cgroup).empty() || !ControllerDir("cpuacct", cgroup).empty();
}

std::optional<absl::Time> HostReader::CgroupCreated(const std::string& cgroup) const {
  std::string dir = ControllerDir("memory", cgroup);
  if (dir.empty()) dir = ControllerDir("cpuacct", cgroup);
  if (dir.empty()) return std::nullopt;
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return std::nullopt;
  return absl::TimeFromTimespec(st.st_ctim);
}

CgroupDetails HostReader::CgroupDetail(const std::string& cgroup) const {
  CgroupDetails d;
  if (v2_) {
    const std::string dir = ControllerDir("", cgroup);
    if (dir.empty()) return d;
    const auto cpu = ReadKeyValues(dir + "/cpu.stat");
    auto micros_to_nanos = [](std::optional<uint64_t> v) -> std::optional<uint64_t> {
      if (!v) return std::nullopt;
      return *v * 1000;
    };
    d.cpu_user_nanos = micros_to_nanos(Lookup(cpu, "user_usec"));
    d.cpu_system_nanos = micros_to_nanos(Lookup(cpu, "system_usec"));
    d.cfs_periods = Lookup(cpu, "nr_periods");
    d.cfs_throttled_periods = Lookup(cpu, "nr_throttled");
    d.cfs_throttled_nanos = micros_to_nanos(Lookup(cpu, "throttled_usec"));
    // cpu.max: "<quota|max> <period>".
    if (auto max = ReadFile(dir + "/cpu.max")) {
      std::istringstream in(*max);
      std::string quota;
      uint64_t period = 0;
      if (in >> quota >> period) {
        d.cpu_period_us = period;
        uint64_t q = 0;
        if (quota != "max" && absl::SimpleAtoi(quota, &q)) d.cpu_quota_us = q;
      }
    }
    if (auto weight = ReadUint(dir + "/cpu.weight")) d.cpu_shares = CpuWeightToShares(*weight);
    if (const auto mem = ReadKeyValues(dir + "/memory.stat"); !mem.empty()) {
      d.memory_cache_bytes = Lookup(mem, "file");
      // No swap controller reads as no swap, as cAdvisor reports it.
      d.memory_swap_bytes = ReadUint(dir + "/memory.swap.current").value_or(0);
    }
    if (ReadTrimmed(dir + "/memory.max") == "max") {
      d.memory_limit_bytes = std::numeric_limits<uint64_t>::max();
    } else {
      d.memory_limit_bytes = ReadUint(dir + "/memory.max");
    }
    d.oom_kills = Lookup(ReadKeyValues(dir + "/memory.events"), "oom_kill");
    return d;
  }
  if (const std::string dir = ControllerDir("cpuacct", cgroup); !dir.empty()) {
    // cpuacct.stat counts USER_HZ ticks.
    const auto stat = ReadKeyValues(dir + "/cpuacct.stat");
    const long ticks = sysconf(_SC_CLK_TCK);
    const uint64_t tick_ns = 1000000000ULL / static_cast<uint64_t>(ticks > 0 ? ticks : 100);
    if (auto v = Lookup(stat, "user")) d.cpu_user_nanos = *v * tick_ns;
    if (auto v = Lookup(stat, "system")) d.cpu_system_nanos = *v * tick_ns;
  }
  if (const std::string dir = ControllerDir("cpu", cgroup); !dir.empty()) {
    const auto stat = ReadKeyValues(dir + "/cpu.stat");
    d.cfs_periods = Lookup(stat, "nr_periods");
    d.cfs_throttled_periods = Lookup(stat, "nr_throttled");
    d.cfs_throttled_nanos = Lookup(stat, "throttled_time");
    d.cpu_period_us = ReadUint(dir + "/cpu.cfs_period_us");
    int64_t quota = 0;
    if (absl::SimpleAtoi(ReadTrimmed(dir + "/cpu.cfs_quota_us"), &quota) && quota > 0) {
      d.cpu_quota_us = static_cast<uint64_t>(quota);
    }
    d.cpu_shares = ReadUint(dir + "/cpu.shares");
  }
  if (const std::string dir = ControllerDir("memory", cgroup); !dir.empty()) {
    if (const auto stat = ReadKeyValues(dir + "/memory.stat"); !stat.empty()) {
      d.memory_cache_bytes = Lookup(stat, "total_cache");
      // total_swap is absent without swap accounting: no swap, as cAdvisor reports it.
      d.memory_swap_bytes = Lookup(stat, "total_swap").value_or(0);
    }
    d.memory_failcnt = ReadUint(dir + "/memory.failcnt");
    d.memory_max_usage_bytes = ReadUint(dir + "/memory.max_usage_in_bytes");
    d.memory_limit_bytes = ReadUint(dir + "/memory.limit_in_bytes");
    d.oom_kills = Lookup(ReadKeyValues(dir + "/memory.oom_control"), "oom_kill");
  }
  return d;
}

std::string HostReader::MountDevice(const std::string& path) const {
  std::ifstream in(proc_root_ + "/self/mounts");
  std::string best_mount, best_device;
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string device, mount;
    if (!(f >> device >> mount)) continue;
    mount = UnescapeMountField(mount);
    // Later mounts over the same point hide earlier ones: ">=" keeps the last.
    if (Contains(mount, path) && mount.size() >= best_mount.size()) {
      best_mount = mount;
      best_device = UnescapeMountField(device);
    }
  }
  return best_device;
}

std::optional<uint64_t> HostReader::NodeCpuNanos() const {
  if (auto v = CgroupCpuNanos("/")) return v;
  std::ifstream in(proc_root_ + "/stat");
  std::string label;
  if (!(in >> label) || label != "cpu") return std::nullopt;
  // user nice system idle iowait irq softirq steal: busy time leaves out idle and iowait.
  uint64_t f[8] = {};
  for (uint64_t& x : f) {
    if (!(in >> x)) return std::nullopt;
  }
  const uint64_t busy = f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
  const long ticks = sysconf(_SC_CLK_TCK);
  return busy * (1000000000ULL / static_cast<uint64_t>(ticks > 0 ? ticks : 100));
}

std::optional<MemoryReading> HostReader::NodeMemory() const {
  if (!v2_) {
    if (auto m = CgroupMemory("/")) return m;
  }
  const auto info = ReadMeminfo(proc_root_ + "/meminfo");
  auto total = Lookup(info, "MemTotal");
  auto free = Lookup(info, "MemFree");
  if (!total || !free) return std::nullopt;
  MemoryReading m;
  m.usage_bytes = *total > *free ? *total - *free : 0;
  const uint64_t inactive = Lookup(info, "Inactive(file)").value_or(0);
  m.working_set_bytes = m.usage_bytes > inactive ? m.usage_bytes - inactive : 0;
  m.rss_bytes = Lookup(info, "AnonPages");
  const auto vm = ReadKeyValues(proc_root_ + "/vmstat");
  m.page_faults = Lookup(vm, "pgfault");
  m.major_page_faults = Lookup(vm, "pgmajfault");
  return m;
}

std::optional<uint64_t> HostReader::MemTotalBytes() const {
  return Lookup(ReadMeminfo(proc_root_ + "/meminfo"), "MemTotal");
}

std::optional<absl::Time> HostReader::BootTime() const {
  std::ifstream in(proc_root_ + "/stat");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("btime ", 0) == 0) {
      int64_t secs = 0;
      if (absl::SimpleAtoi(line.substr(6), &secs)) return absl::FromUnixSeconds(secs);
    }
  }
  return std::nullopt;
}

std::vector<InterfaceStats> HostReader::NetDev(pid_t pid) const {
  std::vector<InterfaceStats> out;
  const std::string path =
      pid == 0 ? proc_root_ + "/net/dev" : absl::StrCat(proc_root_, "/", pid, "/net/dev");
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;  // the two header lines
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    if (name == "lo") continue;
    std::istringstream rest(line.substr(colon + 1));
    uint64_t f[16] = {};
    bool ok = true;
    for (uint64_t& x : f) {
      if (!(rest >> x)) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    InterfaceStats s;
    s.name = name;
    s.rx_bytes = f[0];
    s.rx_errors = f[2];
    s.tx_bytes = f[8];
    s.tx_errors = f[10];
    out.push_back(std::move(s));
  }
  return out;
}

std::string HostReader::DefaultInterface() const {
  std::ifstream in(proc_root_ + "/net/route");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string iface, dest;
    if (f >> iface >> dest && dest == "00000000") return iface;
  }
  return "";
}

std::optional<int64_t> HostReader::PidMax() const {
  auto v = ReadUint(proc_root_ + "/sys/kernel/pid_max");
  if (!v) return std::nullopt;
  return static_cast<int64_t>(*v);
}

std::optional<int64_t> HostReader::NumTasks() const {
  // "0.00 0.01 0.05 1/123 4567": the total after the slash.
  auto text = ReadFile(proc_root_ + "/loadavg");
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  std::string a, b, c, tasks;
  if (!(in >> a >> b >> c >> tasks)) return std::nullopt;
  const auto slash = tasks.find('/');
  int64_t n = 0;
  if (slash == std::string::npos || !absl::SimpleAtoi(tasks.substr(slash + 1), &n)) {
    return std::nullopt;
  }
  return n;
}

std::optional<std::string> HostReader::ProcessCgroup(pid_t pid) const {
  const std::string path =
      pid == 0 ? proc_root_ + "/self/cgroup" : absl::StrCat(proc_root_, "/", pid, "/cgroup");
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    // "<id>:<controllers>:<path>"
    const auto a = line.find(':');
    const auto b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string cg = line.substr(b + 1);
    if (v2_ && controllers.empty()) return cg;
    if (!v2_) {
      std::istringstream cs(controllers);
      for (std::string c; std::getline(cs, c, ',');) {
        if (c == "memory") return cg;
      }
    }
  }
  return std::nullopt;
}

}  // namespace kubelet::stats
