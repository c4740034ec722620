// Test helpers: a temp dir laid out like /sys/fs/cgroup (cgroup v1 per-controller hierarchies
// or the v2 unified hierarchy) and a CgroupFs over it that behaves like cgroupfs where it
// matters: removing a cgroup removes its control files, and fails while cgroup.procs lists
// processes. Header-only; for tests only; not thread-safe.
#ifndef KUBELET_KUBELET_CM_TESTING_FAKE_CGROUP_TREE_H_
#define KUBELET_KUBELET_CM_TESTING_FAKE_CGROUP_TREE_H_

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/ascii.h"
#include "kubelet/cm/cgroup_fs.h"

namespace kubelet::cm::testing {

class FakeCgroupFs : public OsCgroupFs {
 public:
  absl::Status RemoveDir(const std::string& path) override {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return absl::OkStatus();
    auto procs = ReadFile(path + "/cgroup.procs");
    if (procs.ok() && !absl::StripAsciiWhitespace(*procs).empty()) {
      return absl::FailedPreconditionError("rmdir " + path + ": Device or resource busy");
    }
    for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
      if (e.is_directory()) {
        return absl::FailedPreconditionError("rmdir " + path + ": Directory not empty");
      }
    }
    std::filesystem::remove_all(path, ec);
    return absl::OkStatus();
  }
};

class FakeCgroupTree {
 public:
  // v1: cpu,cpuacct co-mounted (with cpu / cpuacct symlinks, as distributions do), cpuset,
  // memory, pids, hugetlb, devices, plus a name=systemd hierarchy. v2: one unified dir offering cpu
  // cpuset memory pids hugetlb io.
  explicit FakeCgroupTree(bool unified) {
    char tmpl[] = "/tmp/cm-cgroup-XXXXXX";
    root_ = ::mkdtemp(tmpl);
    if (unified) {
      layout_.unified = true;
      layout_.unified_root = root_;
      Write(root_ + "/cgroup.controllers", "cpuset cpu io memory hugetlb pids\n");
      Write(root_ + "/cgroup.subtree_control", "");
      return;
    }
    for (const char* h :
         {"cpu,cpuacct", "cpuset", "memory", "pids", "hugetlb", "devices", "systemd"}) {
      std::filesystem::create_directories(root_ + "/" + h);
    }
    std::filesystem::create_directory_symlink(root_ + "/cpu,cpuacct", root_ + "/cpu");
    std::filesystem::create_directory_symlink(root_ + "/cpu,cpuacct", root_ + "/cpuacct");
    layout_.controllers = {{"cpu", root_ + "/cpu,cpuacct"}, {"cpuacct", root_ + "/cpu,cpuacct"},
                           {"cpuset", root_ + "/cpuset"},   {"memory", root_ + "/memory"},
                           {"pids", root_ + "/pids"},       {"hugetlb", root_ + "/hugetlb"},
                           {"devices", root_ + "/devices"}};
    layout_.extra_hierarchies = {root_ + "/systemd"};
    Write(root_ + "/cpuset/cpuset.cpus", "0-3\n");
    Write(root_ + "/cpuset/cpuset.mems", "0\n");
  }
  ~FakeCgroupTree() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  const std::string& root() const { return root_; }
  const CgroupLayout& layout() const { return layout_; }
  FakeCgroupFs& fs() { return fs_; }

  static void Write(const std::string& path, const std::string& content) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << content;
  }
  // Contents of root()/rel, trimmed; "<missing>" when absent.
  std::string Read(const std::string& rel) const {
    std::ifstream in(root_ + "/" + rel);
    if (!in) return "<missing>";
    std::stringstream ss;
    ss << in.rdbuf();
    return std::string(absl::StripAsciiWhitespace(ss.str()));
  }
  bool Exists(const std::string& rel) const { return std::filesystem::exists(root_ + "/" + rel); }

 private:
  std::string root_;
  CgroupLayout layout_;
  FakeCgroupFs fs_;
};

}  // namespace kubelet::cm::testing

#endif  // KUBELET_KUBELET_CM_TESTING_FAKE_CGROUP_TREE_H_
