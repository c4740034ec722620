#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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

absl::StatusOr<FsInfo> StatFs(const std::string& path) {
  struct statvfs s {};
  if (::statvfs(path.c_str(), &s) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("statfs ", path));
  }
  FsInfo fs;
  const uint64_t frsize = s.f_frsize != 0 ? s.f_frsize : s.f_bsize;
  fs.capacity_bytes = static_cast<uint64_t>(s.f_blocks) * frsize;
  fs.available_bytes = static_cast<uint64_t>(s.f_bavail) * frsize;
  fs.used_bytes = static_cast<uint64_t>(s.f_blocks - s.f_bfree) * frsize;
  fs.inodes = s.f_files;
  fs.inodes_free = s.f_ffree;
  return fs;
}

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
