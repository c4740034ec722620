#include <sys/stat.h>

#include <limits>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/cm/cgroup_manager.h"

namespace kubelet::cm {
namespace {

// v1 hierarchies Exists/Validate look at (upstream's allowlist; hugetlb when mounted).
const std::vector<std::string>& CheckedControllers() {
  static const auto* k =
      new std::vector<std::string>{"cpu", "cpuacct", "cpuset", "memory", "pids", "hugetlb"};
  return *k;
}

// v2 controllers enabled for the kubelet's cgroups, when the kernel offers them.
const std::vector<std::string>& UnifiedControllers() {
  static const auto* k =
      new std::vector<std::string>{"cpu", "cpuset", "hugetlb", "io", "memory", "pids"};
  return *k;
}

std::string Join(const std::string& mount, const std::string& rel) {
  if (rel == "/" || rel.empty()) return mount;
  return mount + rel;
}

// Go's %q of a []string: ["a" "b"].
std::string QuoteName(const CgroupName& name) {
  std::vector<std::string> q;
  for (const std::string& c : name) q.push_back("\"" + c + "\"");
  return "[" + absl::StrJoin(q, " ") + "]";
}

std::string Num(int64_t v) { return absl::StrCat(v); }

class CgroupManagerImpl final : public CgroupManager {
 public:
  CgroupManagerImpl(CgroupFs& fs, CgroupLayout layout, bool systemd,
                    std::unique_ptr<SystemdUnits> units)
      : fs_(fs), layout_(std::move(layout)), systemd_(systemd), units_(std::move(units)) {}

  std::string Driver() const override {
    return systemd_ ? kCgroupDriverSystemd : kCgroupDriverCgroupfs;
  }
  bool Unified() const override { return layout_.unified; }

  std::string Name(const CgroupName& name) const override {
    return systemd_ ? ToSystemd(name) : ToCgroupfs(name);
  }

  bool Exists(const CgroupName& name) const override { return Validate(name).ok(); }

  absl::Status Validate(const CgroupName& name) const override {
    const std::string rel = Name(name);
    if (layout_.unified) {
      const std::string dir = Join(layout_.unified_root, rel);
      auto enabled = fs_.ReadFile(dir + "/cgroup.controllers");
      if (!enabled.ok()) {
        return absl::NotFoundError(absl::StrCat("could not read controllers for cgroup ",
                                                QuoteName(name), ": ", enabled.status().message()));
      }
      std::set<std::string> have;
      for (absl::string_view c :
           absl::StrSplit(*enabled, absl::ByAnyChar(" \n"), absl::SkipEmpty())) {
        have.insert(std::string(c));
      }
      std::vector<std::string> missing;
      for (const std::string& c : NeededUnifiedControllers()) {
        if (!have.count(c)) missing.push_back(c);
      }
      if (!missing.empty()) {
        return absl::NotFoundError(
            absl::StrCat("cgroup ", QuoteName(name),
                         " has some missing controllers: ", absl::StrJoin(missing, ", ")));
      }
      return absl::OkStatus();
    }
    std::vector<std::string> missing;
    std::set<std::string> seen;
    for (const std::string& c : CheckedControllers()) {
      auto it = layout_.controllers.find(c);
      if (it == layout_.controllers.end()) continue;
      const std::string path = Join(it->second, rel);
      if (!seen.insert(path).second) continue;
      if (!fs_.Exists(path)) missing.push_back(path);
    }
    if (!missing.empty()) {
      return absl::NotFoundError(absl::StrCat(
          "cgroup ", QuoteName(name), " has some missing paths: ", absl::StrJoin(missing, ", ")));
    }
    return absl::OkStatus();
  }

  absl::Status Create(const CgroupConfig& config) override {
    if (systemd_ && units_ != nullptr) {
      for (size_t i = 1; i <= config.name.size(); ++i) {
        CgroupName level(config.name.begin(), config.name.begin() + i);
        CgroupName parent(config.name.begin(), config.name.begin() + i - 1);
        if (absl::Status st = units_->StartSlice(SystemdSliceName(level), SystemdSliceName(parent));
            !st.ok()) {
          return st;
        }
      }
    }
    if (layout_.unified) {
      if (absl::Status st = MakeUnified(config.name); !st.ok()) return st;
    } else {
      for (const std::string& mount : layout_.Hierarchies()) {
        if (absl::Status st = MakeV1(mount, config.name); !st.ok()) return st;
      }
    }
    return Update(config);
  }

  absl::Status Update(const CgroupConfig& config) override {
    const std::string rel = Name(config.name);
    const ResourceConfig& r = config.resources;
    absl::Status first;
    auto write = [&](const std::string& dir, const std::string& file, const std::string& v) {
      absl::Status st = fs_.WriteFile(dir + "/" + file, v);
      if (!st.ok() && first.ok()) first = st;
    };
    if (layout_.unified) {
      const std::string dir = Join(layout_.unified_root, rel);
      if (r.cpu_shares) write(dir, "cpu.weight", Num(SharesToWeight(*r.cpu_shares)));
      if ((r.cpu_quota && *r.cpu_quota != 0) || (r.cpu_period && *r.cpu_period != 0)) {
        std::string v = r.cpu_quota && *r.cpu_quota > 0 ? Num(*r.cpu_quota) : "max";
        v += " " + Num(r.cpu_period && *r.cpu_period > 0 ? *r.cpu_period : kQuotaPeriodUs);
        write(dir, "cpu.max", v);
      }
      if (r.memory && *r.memory != 0) {
        write(dir, "memory.max", *r.memory > 0 ? Num(*r.memory) : "max");
      }
      if (r.pids_limit && *r.pids_limit != 0) {
        write(dir, "pids.max", *r.pids_limit > 0 ? Num(*r.pids_limit) : "max");
      }
      for (const auto& [size, limit] : r.hugepage_limits) {
        write(dir, "hugetlb." + HugePageSizeSuffix(size) + ".max",
              limit == std::numeric_limits<int64_t>::max() ? "max" : Num(limit));
      }
      return first;
    }
    if (auto cpu = Hierarchy("cpu")) {
      const std::string dir = Join(*cpu, rel);
      if (r.cpu_shares) write(dir, "cpu.shares", Num(*r.cpu_shares));
      if (r.cpu_period && *r.cpu_period != 0) write(dir, "cpu.cfs_period_us", Num(*r.cpu_period));
      if (r.cpu_quota && *r.cpu_quota != 0) {
        absl::Status st = fs_.WriteFile(dir + "/cpu.cfs_quota_us", Num(*r.cpu_quota));
        // A quota above the new period's bounds can be refused until the period is written;
        // the period went first, so a second attempt settles it.
        if (!st.ok()) st = fs_.WriteFile(dir + "/cpu.cfs_quota_us", Num(*r.cpu_quota));
        if (!st.ok() && first.ok()) first = st;
      }
    }
    if (auto mem = Hierarchy("memory"); mem && r.memory && *r.memory != 0) {
      write(Join(*mem, rel), "memory.limit_in_bytes", Num(*r.memory));
    }
    if (auto pids = Hierarchy("pids"); pids && r.pids_limit && *r.pids_limit != 0) {
      write(Join(*pids, rel), "pids.max", *r.pids_limit > 0 ? Num(*r.pids_limit) : "max");
    }
    if (auto hugetlb = Hierarchy("hugetlb")) {
      for (const auto& [size, limit] : r.hugepage_limits) {
        write(Join(*hugetlb, rel), "hugetlb." + HugePageSizeSuffix(size) + ".limit_in_bytes",
              Num(limit));
      }
    }
    return first;
  }

  absl::Status Destroy(const CgroupName& name) override {
    if (name.empty()) return absl::InvalidArgumentError("refusing to remove the root cgroup");
    const std::string rel = Name(name);
    absl::Status first;
    if (systemd_ && units_ != nullptr) {
      // systemd removes the slice's directories when the unit stops.
      if (absl::Status st = units_->StopUnit(SystemdSliceName(name)); !st.ok()) first = st;
    }
    std::vector<std::string> dirs;
    if (layout_.unified) {
      dirs.push_back(Join(layout_.unified_root, rel));
    } else {
      for (const std::string& mount : layout_.Hierarchies()) dirs.push_back(Join(mount, rel));
    }
    for (const std::string& dir : dirs) {
      absl::Status st = RemoveTree(dir, 0);
      if (!st.ok() && first.ok()) first = st;
    }
    return first;
  }

  std::vector<CgroupName> Children(const CgroupName& parent) const override {
    std::vector<CgroupName> out;
    std::optional<std::string> mount =
        layout_.unified ? std::optional<std::string>(layout_.unified_root) : PrimaryHierarchy();
    if (!mount) return out;
    for (const std::string& d : fs_.ListDirs(Join(*mount, Name(parent)))) {
      if (systemd_) {
        if (!absl::EndsWith(d, ".slice")) continue;
        out.push_back(ParseSystemdToCgroupName(d));
      } else {
        out.push_back(NewCgroupName(parent, {d}));
      }
    }
    return out;
  }

  std::vector<int> Pids(const CgroupName& name) const override {
    std::vector<int> out;
    std::optional<std::string> mount =
        layout_.unified ? std::optional<std::string>(layout_.unified_root) : PrimaryHierarchy();
    if (!mount) return out;
    auto procs = fs_.ReadFile(Join(*mount, Name(name)) + "/cgroup.procs");
    if (!procs.ok()) return out;
    for (absl::string_view l : absl::StrSplit(*procs, '\n', absl::SkipWhitespace())) {
      int pid = 0;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(l), &pid)) out.push_back(pid);
    }
    return out;
  }

  absl::StatusOr<ResourceConfig> GetResourceConfig(const CgroupName& name,
                                                   const std::string& resource) const override {
    const std::string rel = Name(name);
    auto read_int = [&](const std::string& dir, const char* file) -> absl::StatusOr<int64_t> {
      absl::StatusOr<std::string> text = fs_.ReadFile(dir + "/" + file);
      if (!text.ok()) return text.status();
      const std::string v(absl::StripAsciiWhitespace(*text));
      if (v == "max") return std::numeric_limits<int64_t>::max();
      int64_t out = 0;
      if (!absl::SimpleAtoi(v, &out)) {
        return absl::InvalidArgumentError(
            absl::StrCat("failed to parse ", dir, "/", file, ": \"", v, "\""));
      }
      return out;
    };
    ResourceConfig rc;
    if (resource == "cpu") {
      if (layout_.unified) {
        const std::string dir = Join(layout_.unified_root, rel);
        absl::StatusOr<std::string> max = fs_.ReadFile(dir + "/cpu.max");
        if (!max.ok()) return max.status();
        std::vector<std::string> parts =
            absl::StrSplit(absl::StripAsciiWhitespace(*max), ' ', absl::SkipEmpty());
        int64_t quota = -1, period = 0;
        if (parts.size() != 2 || (parts[0] != "max" && !absl::SimpleAtoi(parts[0], &quota)) ||
            !absl::SimpleAtoi(parts[1], &period)) {
          return absl::InvalidArgumentError(
              absl::StrCat("failed to parse ", dir, "/cpu.max: \"", *max, "\""));
        }
        absl::StatusOr<int64_t> weight = read_int(dir, "cpu.weight");
        if (!weight.ok()) return weight.status();
        rc.cpu_quota = quota;
        rc.cpu_period = period;
        // The inverse of SharesToWeight.
        rc.cpu_shares = *weight <= 0 ? 0 : 2 + ((*weight - 1) * 262142) / 9999;
        return rc;
      }
      auto cpu = Hierarchy("cpu");
      if (!cpu) return absl::NotFoundError("the cpu cgroup hierarchy is not mounted");
      const std::string dir = Join(*cpu, rel);
      absl::StatusOr<int64_t> quota = read_int(dir, "cpu.cfs_quota_us");
      if (!quota.ok()) return quota.status();
      absl::StatusOr<int64_t> period = read_int(dir, "cpu.cfs_period_us");
      if (!period.ok()) return period.status();
      absl::StatusOr<int64_t> shares = read_int(dir, "cpu.shares");
      if (!shares.ok()) return shares.status();
      rc.cpu_quota = *quota;
      rc.cpu_period = *period;
      rc.cpu_shares = *shares;
      return rc;
    }
    if (resource == "memory") {
      std::string dir;
      const char* file = "memory.max";
      if (layout_.unified) {
        dir = Join(layout_.unified_root, rel);
      } else {
        auto mem = Hierarchy("memory");
        if (!mem) return absl::NotFoundError("the memory cgroup hierarchy is not mounted");
        dir = Join(*mem, rel);
        file = "memory.limit_in_bytes";
      }
      absl::StatusOr<int64_t> limit = read_int(dir, file);
      if (!limit.ok()) return limit.status();
      rc.memory = *limit;
      return rc;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported resource ", resource, " for cgroup ", QuoteName(name)));
  }

  absl::StatusOr<int64_t> MemoryUsage(const CgroupName& name) const override {
    std::string path;
    if (layout_.unified) {
      path = Join(layout_.unified_root, Name(name)) + "/memory.current";
    } else {
      auto mem = Hierarchy("memory");
      if (!mem) return absl::NotFoundError("the memory cgroup hierarchy is not mounted");
      path = Join(*mem, Name(name)) + "/memory.usage_in_bytes";
    }
    absl::StatusOr<std::string> text = fs_.ReadFile(path);
    if (!text.ok()) return text.status();
    int64_t usage = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &usage)) {
      return absl::InvalidArgumentError(absl::StrCat("failed to parse ", path));
    }
    return usage;
  }

  absl::Status AddProcess(const CgroupName& name, int pid) override {
    const std::string rel = Name(name);
    std::vector<std::string> dirs;
    if (layout_.unified) {
      dirs.push_back(Join(layout_.unified_root, rel));
    } else {
      for (const std::string& mount : layout_.Hierarchies()) dirs.push_back(Join(mount, rel));
    }
    absl::Status first;
    for (const std::string& dir : dirs) {
      absl::Status st = fs_.WriteFile(dir + "/cgroup.procs", Num(pid));
      if (!st.ok() && first.ok()) first = st;
    }
    return first;
  }

 private:
  std::optional<std::string> Hierarchy(const std::string& controller) const {
    auto it = layout_.controllers.find(controller);
    if (it == layout_.controllers.end()) return std::nullopt;
    return it->second;
  }
  std::optional<std::string> PrimaryHierarchy() const {
    for (const char* c : {"memory", "cpu", "pids"}) {
      if (auto h = Hierarchy(c)) return h;
    }
    auto all = layout_.Hierarchies();
    if (all.empty()) return std::nullopt;
    return all.front();
  }

  std::set<std::string> AvailableUnifiedControllers() const {
    std::set<std::string> have;
    auto avail = fs_.ReadFile(layout_.unified_root + "/cgroup.controllers");
    if (!avail.ok()) return have;
    for (absl::string_view c : absl::StrSplit(*avail, absl::ByAnyChar(" \n"), absl::SkipEmpty())) {
      have.insert(std::string(c));
    }
    return have;
  }
  // Controllers a kubelet cgroup must have (Validate): upstream's supported set.
  std::vector<std::string> NeededUnifiedControllers() const {
    std::set<std::string> have = AvailableUnifiedControllers();
    std::vector<std::string> out;
    for (const std::string& c : UnifiedControllers()) {
      if (c != "io" && have.count(c)) out.push_back(c);
    }
    return out;
  }

  // The cgroup's directory and its missing ancestors in one v1 hierarchy; a new cpuset
  // cgroup copies cpuset.cpus / cpuset.mems from its parent (they start empty).
  absl::Status MakeV1(const std::string& mount, const CgroupName& name) {
    const bool cpuset = Hierarchy("cpuset") == mount;
    std::string parent = mount;
    std::string rel = Name(name);
    // Walk the path components of the driver-form name.
    std::vector<std::string> parts = absl::StrSplit(rel, '/', absl::SkipEmpty());
    for (const std::string& p : parts) {
      const std::string dir = parent + "/" + p;
      if (!fs_.Exists(dir)) {
        if (absl::Status st = fs_.MakeDirs(dir); !st.ok()) return st;
        if (cpuset) {
          for (const char* f : {"cpuset.cpus", "cpuset.mems"}) {
            auto mine = fs_.ReadFile(dir + "/" + f);
            if (mine.ok() && !absl::StripAsciiWhitespace(*mine).empty()) continue;
            auto theirs = fs_.ReadFile(parent + "/" + f);
            if (!theirs.ok()) continue;
            std::string v(absl::StripAsciiWhitespace(*theirs));
            if (v.empty()) continue;
            if (absl::Status st = fs_.WriteFile(dir + "/" + f, v); !st.ok()) {
              KLOG_WARNING("Failed to initialize cpuset of cgroup", "path", dir, "err", st);
            }
          }
        }
      }
      parent = dir;
    }
    return absl::OkStatus();
  }

  // The cgroup and its ancestors in the unified hierarchy, each parent's subtree_control
  // enabling the controllers first.
  absl::Status MakeUnified(const CgroupName& name) {
    std::vector<std::string> wanted;
    std::set<std::string> have = AvailableUnifiedControllers();
    for (const std::string& c : UnifiedControllers()) {
      if (have.count(c)) wanted.push_back(c);
    }
    std::string dir = layout_.unified_root;
    std::vector<std::string> parts = absl::StrSplit(Name(name), '/', absl::SkipEmpty());
    for (const std::string& p : parts) {
      EnableControllers(dir, wanted);
      dir += "/" + p;
      if (!fs_.Exists(dir)) {
        if (absl::Status st = fs_.MakeDirs(dir); !st.ok()) return st;
      }
    }
    return absl::OkStatus();
  }

  void EnableControllers(const std::string& dir, const std::vector<std::string>& wanted) {
    std::set<std::string> enabled;
    if (auto cur = fs_.ReadFile(dir + "/cgroup.subtree_control"); cur.ok()) {
      for (absl::string_view c : absl::StrSplit(*cur, absl::ByAnyChar(" \n"), absl::SkipEmpty())) {
        enabled.insert(std::string(c));
      }
    }
    std::vector<std::string> add;
    for (const std::string& c : wanted) {
      if (!enabled.count(c)) add.push_back("+" + c);
    }
    if (add.empty()) return;
    if (fs_.WriteFile(dir + "/cgroup.subtree_control", absl::StrJoin(add, " ")).ok()) return;
    // One refused controller fails the whole write; enable them one at a time.
    for (const std::string& c : add) {
      if (absl::Status st = fs_.WriteFile(dir + "/cgroup.subtree_control", c); !st.ok()) {
        KLOG_V(2, "Failed to enable cgroup controller", "path", dir, "controller", c, "err", st);
      }
    }
  }

  absl::Status RemoveTree(const std::string& dir, int depth) {
    if (depth > 32) return absl::InternalError("cgroup tree too deep at " + dir);
    absl::Status first;
    for (const std::string& child : fs_.ListDirs(dir)) {
      absl::Status st = RemoveTree(dir + "/" + child, depth + 1);
      if (!st.ok() && first.ok()) first = st;
    }
    if (!first.ok()) return first;
    return fs_.RemoveDir(dir);
  }

  CgroupFs& fs_;
  const CgroupLayout layout_;
  const bool systemd_;
  const std::unique_ptr<SystemdUnits> units_;
};

}  // namespace

bool IsRunningSystemd() {
  struct stat st;
  return ::lstat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode);
}

absl::StatusOr<std::unique_ptr<CgroupManager>> NewCgroupManager(
    CgroupFs& fs, CgroupLayout layout, const std::string& driver,
    std::unique_ptr<SystemdUnits> units) {
  if (driver != kCgroupDriverCgroupfs && driver != kCgroupDriverSystemd) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown cgroup driver \"", driver, "\": must be cgroupfs or systemd"));
  }
  return std::make_unique<CgroupManagerImpl>(fs, std::move(layout), driver == kCgroupDriverSystemd,
                                             std::move(units));
}

}  // namespace kubelet::cm
