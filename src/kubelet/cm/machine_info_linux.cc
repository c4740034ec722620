#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/strings.h"
#include "kubelet/cm/machine_info.h"

namespace kubelet::cm {
namespace {

std::optional<std::string> ReadAll(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Trimmed(const std::optional<std::string>& s) {
  return s ? std::string(absl::StripAsciiWhitespace(*s)) : std::string();
}

// Unquotes an os-release value ("Debian GNU/Linux 12 (bookworm)").
std::string Unquote(std::string v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    v = v.substr(1, v.size() - 2);
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] == '\\' && i + 1 < v.size()) ++i;
      out += v[i];
    }
    return out;
  }
  return v;
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseCPUList(std::string_view list) {
  std::set<int> cpus;
  for (absl::string_view part : absl::StrSplit(AV(list), ',', absl::SkipWhitespace())) {
    part = absl::StripAsciiWhitespace(part);
    std::vector<absl::string_view> ends = absl::StrSplit(part, absl::MaxSplits('-', 1));
    int lo = 0, hi = 0;
    if (!absl::SimpleAtoi(ends[0], &lo) || lo < 0) {
      return absl::InvalidArgumentError(absl::StrCat("invalid CPU list \"", AV(list), "\""));
    }
    hi = lo;
    if (ends.size() == 2 && (!absl::SimpleAtoi(ends[1], &hi) || hi < lo)) {
      return absl::InvalidArgumentError(absl::StrCat("invalid CPU list \"", AV(list), "\""));
    }
    for (int c = lo; c <= hi; ++c) cpus.insert(c);
  }
  return std::vector<int>(cpus.begin(), cpus.end());
}

absl::StatusOr<MachineInfo> ReadMachineInfo(const std::string& root) {
  MachineInfo info;
  if (auto online = ReadAll(root + "/sys/devices/system/cpu/online")) {
    auto cpus = ParseCPUList(SV(absl::StripAsciiWhitespace(*online)));
    if (!cpus.ok()) return cpus.status();
    info.online_cpus = *cpus;
  } else if (root.empty()) {
    long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    for (long i = 0; i < n; ++i) info.online_cpus.push_back(static_cast<int>(i));
  }
  info.num_cores = static_cast<int>(info.online_cpus.size());
  if (info.num_cores == 0) return absl::InternalError("unable to determine the number of CPUs");

  auto meminfo = ReadAll(root + "/proc/meminfo");
  if (!meminfo) return absl::InternalError("failed to read " + root + "/proc/meminfo");
  for (absl::string_view line : absl::StrSplit(*meminfo, '\n')) {
    if (!absl::ConsumePrefix(&line, "MemTotal:")) continue;
    line = absl::StripAsciiWhitespace(line);
    absl::ConsumeSuffix(&line, "kB");
    int64_t kb = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &kb)) {
      info.memory_capacity_bytes = kb * 1024;
    }
  }
  if (info.memory_capacity_bytes <= 0) {
    return absl::InternalError("MemTotal not found in " + root + "/proc/meminfo");
  }

  std::error_code ec;
  // Advanced with increment(ec): the range-for's operator++ throws on a read error.
  for (auto it = std::filesystem::directory_iterator(root + "/sys/kernel/mm/hugepages", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::filesystem::directory_entry& e = *it;
    // hugepages-2048kB
    std::string name = e.path().filename().string();
    absl::string_view v(name);
    int64_t kb = 0;
    if (!absl::ConsumePrefix(&v, "hugepages-") || !absl::ConsumeSuffix(&v, "kB") ||
        !absl::SimpleAtoi(v, &kb)) {
      continue;
    }
    HugePagePool pool;
    pool.page_size_bytes = kb * 1024;
    (void)absl::SimpleAtoi(Trimmed(ReadAll(e.path().string() + "/nr_hugepages")), &pool.num_pages);
    info.hugepages.push_back(pool);
  }
  std::sort(info.hugepages.begin(), info.hugepages.end(),
            [](const HugePagePool& a, const HugePagePool& b) {
              return a.page_size_bytes < b.page_size_bytes;
            });

  info.machine_id = Trimmed(ReadAll(root + "/etc/machine-id"));
  if (info.machine_id.empty())
    info.machine_id = Trimmed(ReadAll(root + "/var/lib/dbus/machine-id"));
  info.boot_id = Trimmed(ReadAll(root + "/proc/sys/kernel/random/boot_id"));
  // cadvisor's GetSystemUUID: DMI, then the PowerPC device tree, then (its s390x case)
  // /etc/machine-id, the first that can be read.
  for (const char* path : {"/sys/class/dmi/id/product_uuid", "/proc/device-tree/system-id",
                           "/proc/device-tree/vm,uuid", "/etc/machine-id"}) {
    std::optional<std::string> id = ReadAll(root + path);
    if (!id) continue;
    std::string v = Trimmed(id);
    while (!v.empty() && v.back() == '\0') v.pop_back();
    info.system_uuid = std::move(v);
    break;
  }
  info.kernel_version = Trimmed(ReadAll(root + "/proc/sys/kernel/osrelease"));
  if (info.kernel_version.empty() && root.empty()) {
    struct utsname u;
    if (::uname(&u) == 0) info.kernel_version = u.release;
  }
  (void)absl::SimpleAtoi(Trimmed(ReadAll(root + "/proc/sys/kernel/pid_max")), &info.pid_max);
  auto os_release = ReadAll(root + "/etc/os-release");
  if (!os_release) os_release = ReadAll(root + "/usr/lib/os-release");
  info.os_image = "Linux";
  if (os_release) {
    for (absl::string_view line : absl::StrSplit(*os_release, '\n')) {
      if (absl::ConsumePrefix(&line, "PRETTY_NAME=")) {
        info.os_image = Unquote(std::string(absl::StripAsciiWhitespace(line)));
      }
    }
  }
  return info;
}

absl::StatusOr<FsInfo> GetFsInfo(const std::string& path) {
  struct statfs st;
  if (::statfs(path.c_str(), &st) != 0) {
    return absl::InternalError(absl::StrCat("statfs ", path, ": ", std::strerror(errno)));
  }
  FsInfo fs;
  fs.capacity_bytes = static_cast<uint64_t>(st.f_blocks) * st.f_bsize;
  fs.available_bytes = static_cast<uint64_t>(st.f_bavail) * st.f_bsize;
  fs.inodes = st.f_files;
  fs.inodes_free = st.f_ffree;
  std::error_code ec;
  std::string real = std::filesystem::weakly_canonical(path, ec).string();
  if (ec) real = path;
  if (auto mounts = ReadAll("/proc/self/mounts")) {
    for (absl::string_view line : absl::StrSplit(*mounts, '\n', absl::SkipEmpty())) {
      std::vector<std::string> f = absl::StrSplit(line, ' ');
      if (f.size() < 2) continue;
      const std::string& mp = f[1];
      bool prefix = real == mp || mp == "/" ||
                    (real.size() > mp.size() && real.compare(0, mp.size(), mp) == 0 &&
                     real[mp.size()] == '/');
      // Later mounts over the same point win, so >=.
      if (prefix && mp.size() >= fs.mountpoint.size()) {
        fs.mountpoint = mp;
        fs.device = f[0];
      }
    }
  }
  return fs;
}

absl::StatusOr<std::vector<std::string>> ReadSwapLines(const std::string& root) {
  auto data = ReadAll(root + "/proc/swaps");
  if (!data) return absl::NotFoundError(root + "/proc/swaps does not exist");
  std::vector<std::string> lines =
      absl::StrSplit(absl::StripAsciiWhitespace(*data), '\n', absl::SkipEmpty());
  return lines;
}

}  // namespace kubelet::cm
